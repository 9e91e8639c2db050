// The new bytes of a plan's edits, kept out of the plan the front holds (issue 43): a worker
// writes them into the message's own file, past its end, and the plan says where; the front
// hands them to the MTA from there a piece at a time, as it does the body's unchanged bytes.
// So the front's memory does not grow with the size of a changed part, nor with the number
// of connections that hand one over at once.
#pragma once

#include "engine.hh"
#include "milter_edit.hh"
#include "result.hh"

#include <cstdint>
#include <string>
#include <vector>

namespace mimeuri::milter {

// At most this many bytes of edit text (a text, a streamed body's text and its inlined parts'
// held bytes) stay in a plan sent to the front; a plan with more has all of them written to
// the file.
constexpr std::size_t kPlanTextMax = std::size_t{64} << 10;

// Where the text of the plan's edit number `edit` is: the file's bytes [at, at + size). The
// plan's edit itself then has an empty text.
struct SpooledText {
    std::uint64_t edit{0};
    std::uint64_t at{0};
    std::uint64_t size{0};
    template <class Io, class Self> static void fields(Io &io, Self &t) { io(t.edit, t.at, t.size); } // wire.hh
};

// The worker's side: when the plan's edit texts (and its streamed bodies' texts and held
// inlined parts) come to more than kPlanTextMax, writes each of them into fd (the message,
// `size` bytes, which stay as they are) from its end on, and leaves it out of the plan: texts
// are listed in the result, a streamed body's text and held parts become spans of the file
// (StreamedBody::text_at, Blob::begin). Fails when the file cannot take them (the plan is
// then unchanged).
Result<std::vector<SpooledText>> spool_texts(Plan &plan, int fd, std::int64_t size);

// The list on the wire (after the plan), and read back: throws on bytes it cannot read.
std::string serialize_texts(const std::vector<SpooledText> &texts);
std::vector<SpooledText> deserialize_texts(const std::string &bytes);

// The front's side: where the text of each of the plan's edits is, in the order of its edits
// (size 0: in the edit). Fails when the list names an edit the plan has not or one with a
// text of its own, twice the same edit, or a text that is not past the message's `size` bytes.
Result<std::vector<TextAt>> text_places(const Plan &plan, const std::vector<SpooledText> &texts, std::int64_t size);

} // namespace mimeuri::milter
