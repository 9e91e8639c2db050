// The Message-ID GMime gives a message, read without GMime's parse (src/input/message_id.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// The Message-ID GMime gives m when m's header block is plain; nullopt when it is not.
std::optional<std::string> plain_message_id(std::string_view m);

// What plain_message_id reads of a plain header block (its offsets from the message's
// start), read once where the block is first walked: the mbox split, which reads every
// message's block for a Content-Length (mbox.hh), hands it on with the message (Segment::
// head), and the inert copy does not read the block again (issue 53).
struct PlainHead {
    std::int64_t at{-1};       // the source offset of the message it was read at
    std::int64_t end{0};       // after the LF of the empty line that ends the block
    std::int64_t id_begin{-1}; // the last Message-ID field's raw value; -1: no such field
    std::int64_t id_end{-1};
};
// One reading of the header block at the start of b, line by line: whether a line of it may
// start "Content-Length:" (false only when b holds the whole block, to its empty line, and
// none does) and, when the block is plain (plain_message_id's rules) and ends inside b, what
// plain_message_id reads of it (`at` left for the caller).
struct HeadRead {
    bool content_length{true};
    std::optional<PlainHead> plain{};
};
HeadRead read_head(std::string_view b);
// plain_message_id(m) for the message m that starts at source offset at: from `read` where it
// was read there and its block lies inside m (m's first bytes are then the ones it read),
// else read from m.
std::optional<std::string> plain_message_id(std::string_view m, std::int64_t at, const std::optional<PlainHead> &read);
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
