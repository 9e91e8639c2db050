// The Message-ID GMime gives a message, read without GMime's parse (src/input/message_id.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// The Message-ID GMime gives m when m's header block is plain; nullopt when it is not.
std::optional<std::string> plain_message_id(std::string_view m);
// No NUL, and a CR only right before an LF: the bytes plain_message_id reads as GMime does.
bool plain_bytes(std::string_view v);
// GMime's reading (g_mime_utils_decode_message_id, after decode_text and unfold) of an id
// field's value of the plain form "<id>" on one line, blanks around, id atext and dots (RFC
// 5322 3.2.3) with at most one '@' and, where it has one, dot-atoms on either side: id.
// Else nothing (GMime's reading may differ). Checked against GMime 3.2 on this machine.
std::optional<std::string> plain_angle_id(std::string_view value);
// The Message-ID GMime makes of a Message-ID field's raw value (the bytes after its colon
// through its last line's end): decode_message_id(decode_text(unfold(raw))); "" for none.
std::string message_id_of_value(std::string_view raw_value);

} // namespace mimeuri
