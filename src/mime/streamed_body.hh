// A leaf's new content made while the output is written, never held whole (issue 32): the
// text of an HTML part --cid=inline rewrote, between the data: URLs, and the parts those
// URLs carry, encoded in the part's transfer encoding with the message's line ends. The
// parts are held decoded while they are small, else read from the input and decoded again
// as the output is written. So a message's plan holds the part's text and a bounded amount
// of inlined bytes, not the encoded part, whatever it inlines.
#pragma once

#include "message.hh"
#include "result.hh"
#include "source.hh"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

// The input's bytes [begin, end): a view of them where they are in memory, else read into
// buf. Offsets are the input's (a Source's, a message's held by a service).
using SpanReader = std::function<Result<std::string_view>(std::int64_t begin, std::int64_t end, std::string &buf)>;
SpanReader reader_of(const Source &src);
SpanReader reader_of(std::string_view bytes); // offsets into bytes
// Where made bytes go, a piece at a time; an error stops the making.
using ByteSink = std::function<Status(std::string_view)>;
// The input's bytes [begin, end), read `block` at a time and decoded from enc (base64 and
// quoted-printable; any other encoding passed as read), each decoded piece that is not
// empty handed to piece: an error ends it with that error, false ends it early.
Status decode_span(const SpanReader &read, std::int64_t begin, std::int64_t end, GMimeContentEncoding enc,
                   std::size_t block, const std::function<Result<bool>(std::string_view)> &piece);

struct StreamedBody {
    enum class Cte : std::uint8_t { Base64, QuotedPrintable };
    // An inlined part: its decoded bytes held, or its content's span in the input and the
    // transfer encoding (a GMimeContentEncoding) that decodes it; size: decoded. copied: the
    // span is canonical base64 (base64.hh), copied with its line breaks removed, not decoded
    // and encoded again (checked again as it is read). Last, so that a Blob made field by
    // field in order ({held, bytes, begin, end, encoding, size}) is not copied.
    struct Blob {
        bool held{true};
        std::string bytes;
        std::int64_t begin{0}, end{0};
        int encoding{0};
        std::size_t size{0};
        bool copied{false};
    };
    // The text up to text_end, then (blob >= 0) the base64 of that blob's bytes.
    struct Piece {
        std::size_t text_end{0};
        int blob{-1};
    };
    std::string text;          // the content but for the inlined bytes
    std::vector<Piece> pieces; // in order; the text after the last one follows them
    std::vector<Blob> blobs;
    Cte cte{Cte::QuotedPrintable};
    bool crlf{false};   // the message's line ends are CRLF
    bool had_nl{false}; // the content it replaces ended with a line break (kept so)
    // Or, text_size > 0 (text then empty): the text is not held but is the input's bytes
    // [text_at, text_at + text_size), read as the content is made (the milter's workers
    // leave it in the message's file: src/app/milter_texts.hh). line_over reads held text only.
    std::int64_t text_at{0};
    std::size_t text_size{0};
    // Or (file.path not empty): the text written as it is, then a file's bytes (the offload
    // pass's restore gives a part back from its store, filters/offload_restore.cc): as they
    // are, or (b64_line > 0) in base64 lines of b64_line characters, each ended by the
    // message's line end, b64_trail line ends after the last. Read only as the output is
    // written, and checked as they are read against the size and SHA-256 the pass took when
    // it checked the file: other bytes fail the write (TempFail), never make a wrong message.
    struct File {
        std::string path;
        std::size_t size{0};
        std::string sha256; // the 32-octet digest
        std::size_t b64_line{0}, b64_trail{0};
    };
    File file;

    // The content itself, unencoded (the HTML with its data: URLs), a piece at a time.
    Status content(const SpanReader &read, const ByteSink &sink) const;
    // The content held whole (a part that is written as it is, a stylesheet).
    Result<std::string> content_text(const SpanReader &read) const;
    // Whether a line of the content (LF ends one) is longer than limit octets.
    bool line_over(std::size_t limit) const;
    // The edit's bytes, as MessageContext::replace_body would have made them of the content
    // held whole: encoded in cte (base64 in 76-character lines, or quoted-printable), the
    // last line break kept or dropped as had_nl says, LF made CRLF where crlf; in pieces of
    // about 64 KiB. Encoded so, no line can start with "--" or "From " (no delimiter line,
    // no From_ line), which replace_body checks for in text it is given.
    Status write(const SpanReader &read, const ByteSink &sink) const;

    std::string serialize() const;
    static StreamedBody deserialize(std::string bytes); // throws on bytes it cannot read
};

// Base64 of bytes fed a piece at a time, in lines of `line` characters ended by eol, `trail`
// line ends after the last line (StreamedBody::File; the offload pass's forms).
class Base64InLines {
public:
    Base64InLines(std::size_t line, std::size_t trail, std::string_view eol) : line_(line), trail_(trail), eol_(eol) {}
    void feed(std::string_view piece, std::string &out);
    void end(std::string &out);

private:
    void put(std::string_view text, std::string &out);
    std::size_t line_, trail_;
    std::string eol_;
    std::string carry_;
    std::size_t col_{0};
};

// An edit's bytes: its text, or its streamed body made from the input.
Status write_edit(const Edit &e, const SpanReader &read, const ByteSink &sink);
// The same, held (for edits applied to bytes in memory).
Result<std::string> edit_text(const Edit &e, const SpanReader &read);

} // namespace mimeuri
