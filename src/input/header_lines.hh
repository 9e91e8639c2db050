// header_lines: one reader for the lines of a message and the header fields they make.
//
// SYNOPSIS  Lines lines(m, at); Line l; while (lines.next(l)) ...    each line of m from at on
//           HeaderFields fields(m, at); Field f; while (fields.next(f)) ...; fields.end()
//                                          each field of the header block at m[at], then its end
//           field_end(m, at)               the end of the field whose first line starts at at
//
// A line ends after its LF; a CR right before the LF is part of its line break (CRLF), any
// other CR (a bare CR) is a byte of the line, as GMime's parser reads it, and so is a NUL.
// The last line may have no LF. An empty line is an LF or a CRLF alone. A field is a line
// and the folded lines after it (each starting with a space or a tab, RFC 5322 2.2.3); its
// name is what its first line holds before the first colon, as written (white space before
// the colon, RFC 5322 4.5.3 obs-optional, is kept: callers decide). A header block is the
// fields up to the first empty line, or up to the end of the input (a lone CR as the last
// line, with no LF, ends no block: nothing after it, and it ends the input).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

namespace mimeuri {

// The bytes of a field's name, printable ASCII but the colon (RFC 5322 2.2): a table (three
// compares a byte were most of a header block's reading, issue 53).
inline constexpr auto kFieldNameByte = [] {
    std::array<bool, 256> t{};
    for (int c = 33; c < 127; ++c) t[static_cast<std::size_t>(c)] = c != ':';
    return t;
}();

// The length of the field name that starts line, a field's first line ("name:"), or 0 when
// line does not start so. A name longer than a line may be (RFC 5322: 998 octets) gives 0
// too: GMime fails one past its 4 KiB read buffer, so such a block is left to GMime.
inline std::size_t field_name_length(std::string_view line)
{
    const std::size_t n = std::min<std::size_t>(line.size(), 999);
    std::size_t k = 0;
    while (k < n && kFieldNameByte[static_cast<unsigned char>(line[k])]) ++k;
    return k < n && line[k] == ':' ? k : 0;
}

struct Line {
    std::size_t begin{0};  // its first byte
    std::size_t next{0};   // after its LF, or the input's end when it has none
    std::string_view text; // its bytes without the LF (a CR before the LF is kept)
    bool lf{false};        // it ends in an LF

    // An LF or a CRLF alone (a last line of a lone CR counts as one too).
    bool empty() const { return text.empty() || (text.size() == 1 && text[0] == '\r'); }
    // It starts with a space or a tab: a continuation of the field before it.
    bool folded() const { return !text.empty() && (text[0] == ' ' || text[0] == '\t'); }
    // Its bytes without its line break: the CR right before its LF dropped too.
    std::string_view content() const
    {
        return lf && !text.empty() && text.back() == '\r' ? text.substr(0, text.size() - 1) : text;
    }
};

class Lines {
public:
    explicit Lines(std::string_view m, std::size_t at = 0) : m_(m), at_(at) {}
    // The next line; false at the end of the input.
    bool next(Line &l);
    std::size_t at() const { return at_; } // where the next line starts

private:
    std::string_view m_;
    std::size_t at_;
};

struct Field {
    static constexpr std::size_t npos = std::string_view::npos;
    std::size_t begin{0};   // its first byte
    std::size_t end{0};     // after its last line's LF (or the input's end)
    std::size_t colon{npos}; // offset of the first ':' in its first line; npos: none
    std::string_view raw;   // [begin, end): the field as read, folds and line breaks kept
    std::string_view name;  // before the colon, as written; empty with no colon
    std::string_view value; // after the colon through end (GMime's raw value); empty with no colon
    Line first;             // its first line

    bool has_colon() const { return colon != npos; }
    // Its first line is itself folded: white space with no field before it to continue.
    bool orphan() const { return first.folded(); }
};

class HeaderFields {
public:
    explicit HeaderFields(std::string_view m, std::size_t at = 0) : m_(m), lines_(m, at), end_(m.size()) {}
    // The next field of the block; false once an empty line or the end of the input ends it.
    bool next(Field &f);
    // Reads the rest of the block; returns end().
    std::size_t skip();
    // Once next() returned false: after the empty line that ended the block, or the input's end.
    std::size_t end() const { return end_; }
    // Once next() returned false: whether an empty line ended the block (else the input did).
    bool ended_by_empty_line() const { return by_empty_line_; }

private:
    std::string_view m_;
    Lines lines_;
    Line pending_;
    bool have_pending_{false};
    bool done_{false};
    bool by_empty_line_{false};
    std::size_t end_;
};

// After the line that starts at `at` and the folded lines that follow it, whatever the
// first line holds (where a field at `at` ends).
std::size_t field_end(std::string_view m, std::size_t at);

} // namespace mimeuri
