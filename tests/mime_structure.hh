// An independent reader of MIME structure, for checking mimeuri's output against its input.
//
// It does not use GMime: GMime is what mimeuri parses with, and a check built on the same
// parser would share its blind spots. Plain C++ over bytes, per RFC 5322 (header blocks) and
// RFC 2046 5.1.1 (multipart delimiters); message/rfc822 (and message/global, message/news)
// is descended into. Bounded: a depth limit and a part limit; each nesting level scans its
// span once, so the work is at most (depth limit) x (input size).
//
// Used by fuzz/fuzz_filter.cc and tests/test_mime_structure.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mimestructure {

// One header field: [begin, end) runs from the first byte of its name to the end of its
// last (folded) line, line end excluded.
struct Field {
    std::size_t begin{0};
    std::size_t end{0};
    std::string name;  // as written (not lower-cased), without white space before the ':'
    bool valid{false}; // name of printable ASCII but ':', then ':' (white space between: RFC 5322 4.5.8)
    std::size_t colon{0}; // where the ':' is
};

// One line of a header block that is not a valid field line or continuation line: a line
// with no field name, a white-space-only continuation, one holding a bare CR or a NUL.
struct BadLine {
    std::size_t begin{0};
    std::string text; // the line, line end excluded
    std::string why;
};

struct Entity {
    std::string type{"text/plain"}; // type/subtype, lower case (the RFC 2045 default if none)
    std::string boundary;            // multipart only (empty: no boundary parameter)
    std::size_t header_begin{0}, header_end{0}; // the header block, its empty line excluded
    std::size_t body_begin{0}, body_end{0};     // the body
    std::vector<Field> fields;
    std::vector<BadLine> bad_lines;
    std::vector<Entity> children; // multipart parts, or the one message of message/rfc822
    bool multipart{false};         // split at its boundary
    bool message{false};           // an encapsulated message
    bool closed{false};            // multipart: a close delimiter was found
    bool truncated{false};         // a limit stopped the reader here
    bool leaf() const { return !multipart && !message; }
};

struct Limits {
    int max_depth{24};
    std::size_t max_parts{4000};
};

// The tree of a message (bytes of one message, not an mbox).
Entity read(std::string_view msg, const Limits &limits = {});

// Every entity in document order (pre-order), with its depth.
void flatten(const Entity &root, std::vector<const Entity *> &out);

// "" when the two trees have the same shape: same types, boundaries, multipart/message
// kinds, close delimiters found, number and nesting of parts; else where they first differ.
std::string compare(const Entity &a, const Entity &b);

// A one-line-per-entity outline, for messages.
std::string outline(const Entity &root);

// The invalid header lines of every header block in the tree, in document order.
std::vector<BadLine> bad_header_lines(const Entity &root);

} // namespace mimestructure
