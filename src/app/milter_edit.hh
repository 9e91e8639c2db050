// What the milter service hands back to the MTA for a plan: the top-level header block's
// changes as libmilter header requests, and the body with the edits applied, in chunks.
// Pure functions (no libmilter here), so that they are tested on their own.
#pragma once

#include "message.hh"
#include "result.hh"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

// One field of a header block as the MTA gives it to a milter: the name before the colon and
// the raw value after it (its leading white space and inner line breaks kept, no final one).
struct HeaderField {
    std::string name;
    std::string value;
    bool operator==(const HeaderField &o) const { return name == o.name && value == o.value; }
};

// The fields of a header block (each field ending in CRLF or LF; no empty line). A line
// that starts with white space continues the field before it.
std::vector<HeaderField> parse_fields(std::string_view block);

// A header request, in the order it is to be made.
struct HeaderOp {
    enum class Kind {
        Append, // smfi_addheader(name, value): after the last field
        Insert, // smfi_insheader(index, name, value): index fields above it (0: the first)
        Change, // smfi_chgheader(name, index, value): the index-th field of that name (from 1)
        Delete, // smfi_chgheader(name, index, NULL)
    } kind;
    std::string name;
    std::string value; // with LF line breaks inside, as libmilter takes folded values
    int index{0};
};

// The requests that turn the fields `before` into `after`. Appends come first, in order;
// then every other request from the bottom of the block up, so that each one's index counts
// only fields no earlier request has touched (right whether the MTA counts indices in the
// block as it was or as it is). Names compare without regard to case, as MTAs do. Fails
// (rather than guess) when the two lists differ in too many places to align cheaply.
Result<std::vector<HeaderOp>> header_ops(const std::vector<HeaderField> &before, const std::vector<HeaderField> &after);

// Where a message's header block ends (the offset of its empty line) and its body begins.
struct MessageSplit {
    std::int64_t header_end{0};
    std::int64_t body_begin{0};
};

// Where an edit's new bytes are when they are not in the edit: the bytes [at, at + size) of
// the file the message is read from (milter_texts.hh). size 0: in the edit.
struct TextAt {
    std::int64_t at{0};
    std::int64_t size{0};
};

// Reads the message's bytes at off into buf: how many (0 at its end).
using ReadAt = std::function<Result<std::size_t>(std::int64_t off, char *buf, std::size_t len)>;

// The edits of a plan, split at the empty line: those inside the header block and those in
// the body (offsets kept). Fails when an edit touches the empty line itself.
struct SplitEdits {
    std::vector<Edit> header;
    std::vector<Edit> body;
    std::vector<TextAt> body_text; // where each body edit's bytes are (empty: all in the edits)
};
Result<SplitEdits> split_edits(const std::vector<Edit> &edits, MessageSplit at);
// The same where texts[i] says where edit i's bytes are: a body edit keeps its place
// (body_text), a header edit's bytes are read back with read_at (the header block is held
// whole anyway, to align its fields).
Result<SplitEdits> split_edits(const std::vector<Edit> &edits, MessageSplit at, const std::vector<TextAt> &texts,
                               const ReadAt &read_at);

// Calls sink with the bytes [from, size) of the message with the edits applied, in chunks of
// at most chunk bytes (original bytes read with read_at); stops early when sink returns false.
// Edits must lie in [from, size) and not overlap. texts[i], when given, says where edit i's
// bytes are, read with read_at a chunk at a time.
Status stream_edited(const ReadAt &read_at, std::int64_t from, std::int64_t size, const std::vector<Edit> &edits,
                     const std::function<bool(std::string_view)> &sink, std::size_t chunk = 65536);
Status stream_edited(const ReadAt &read_at, std::int64_t from, std::int64_t size, const std::vector<Edit> &edits,
                     const std::vector<TextAt> &texts, const std::function<bool(std::string_view)> &sink,
                     std::size_t chunk = 65536);

} // namespace mimeuri
