// A GMime stream over one message's bytes held in memory, whose positions are the input's
// offsets: the bytes stand at [base, base + size) of the input. GMime parses a message from
// it with every header offset and content window where it would be in the input, without
// the block-by-block reads and seeks of a file stream (src/input/source.cc reads the message once).
#pragma once

#include <gmime/gmime.h>

#include <cstdint>

namespace mimeuri {

// (transfer full) A stream over bytes (referenced, not copied) whose first byte is at
// position base. Substreams share the bytes; each holds a reference, so the bytes live as
// long as any GMime object that parsed from them.
GMimeStream *input_stream_new(GBytes *bytes, std::int64_t base);

} // namespace mimeuri
