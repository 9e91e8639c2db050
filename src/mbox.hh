// Splitting an input into messages: one message, or an mbox (mboxo/mboxrd).
#pragma once

#include "result.hh"
#include "source.hh"

#include <cstdint>
#include <vector>

namespace mimeuri {

enum class Format { Auto, Message, Mbox };

// One message of an input. Bytes outside [msg_begin, msg_end) — the "From " line and the
// blank separator line of an mbox — belong to the container and are copied as read.
struct Segment {
    std::int64_t begin{0};     // start of the "From " line, or of the message
    std::int64_t msg_begin{0}; // first byte of the message itself
    std::int64_t msg_end{0};   // one past its last byte
};

// True when the input starts with an mbox "From " line.
Result<bool> looks_like_mbox(const Source &src);

// With Format::Mbox, a message starts at a line beginning "From " at the start of the
// input or right after an empty line (the mboxo/mboxrd rule; ">From " quoting is left as
// read). The empty line before each "From " line is the separator and not part of the
// preceding message. Data before the first "From " line becomes a message of its own.
Result<std::vector<Segment>> split(const Source &src, Format format);

} // namespace mimeuri
