// The inert check: what MessageContext::parse reads from a message's bytes before (or instead
// of) GMime's parse (src/mime/inert.cc).
#pragma once

#include "message.hh"
#include "message_id.hh"

#include <cstddef>
#include <string>
#include <string_view>

namespace mimeuri {

// Where the header block at the start of m ends: after its first empty line, or at m's end.
std::size_t header_block_size(std::string_view m);
// Whether no pass can change the message m (InertCheck; MessageContext::parse).
bool provably_inert(std::string_view m, const InertCheck &check, const Limits &limits);
} // namespace mimeuri
