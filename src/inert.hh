// The inert check: what MessageContext::parse reads from a message's bytes before (or instead
// of) GMime's parse (src/inert.cc).
#pragma once

#include "message.hh"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// Where the header block at the start of m ends: after its first empty line, or at m's end.
std::size_t header_block_size(std::string_view m);
// Whether no pass can change the message m (InertCheck; MessageContext::parse).
bool provably_inert(std::string_view m, const InertCheck &check, const Limits &limits);
// The Message-ID GMime gives m when m's header block is plain; nullopt when it is not.
std::optional<std::string> plain_message_id(std::string_view m);
// No NUL, and a CR only right before an LF: the bytes plain_message_id reads as GMime does.
bool plain_bytes(std::string_view v);
// The Message-ID GMime makes of a Message-ID field's raw value (the bytes after its colon
// through its last line's end): decode_message_id(decode_text(unfold(raw))); "" for none.
std::string message_id_of_value(std::string_view raw_value);

} // namespace mimeuri
