// Content-Transfer-Encodings written by passes (RFC 2045 6.7, 6.8), in LF line ends: the
// message's own line ends are restored when the body is spliced in. And writing a leaf's
// new content back in the transfer encoding it had (or the one it needs).
#pragma once

#include "message.hh"
#include "result.hh"
#include "streamed_body.hh"

#include <gmime/gmime.h>

#include <string>
#include <string_view>

namespace mimeuri::transfer {

// Base64 in lines of 76 characters, each ending in LF.
std::string base64_lines(std::string_view bytes);

// The same, from pieces: what feed() and finish() append to out, end to end, is
// base64_lines() of the pieces joined, wherever they were cut.
class Base64Lines {
public:
    Base64Lines();
    void feed(std::string_view in, std::string &out);
    void finish(std::string &out);
    // Lines of in (the last one short when in's size is no multiple of 57) appended to out.
    static void lines(const char *in, std::size_t size, std::string &out);

private:
    std::string carry_; // a line's octets not yet complete
};

// Appends base64 of bytes to out, in one line (a data: URL's payload).
void append_base64(std::string &out, std::string_view bytes);

// Quoted-printable of text, written with LF line ends. The message's own line break (CRLF
// when crlf, else LF) is a hard line break; any other CR or LF is encoded (=0D, =0A), so the
// text decodes back byte for byte in a message of that convention. Lines are at most 76
// characters. No encoded line starts with "-", "." or "From " (that octet is =XX-encoded),
// so nothing, whatever it decodes to, can read as a MIME delimiter line or an mbox From_
// line: the structure around the part stays the same.
std::string quoted_printable(std::string_view text, bool crlf);

// The same, from pieces: what feed() and finish() append to out, end to end, is
// quoted_printable() of the pieces joined, wherever they were cut (a few octets are held
// back until the octets after them decide how they are written).
class QuotedPrintable {
public:
    explicit QuotedPrintable(bool crlf) : crlf_(crlf) {}
    void feed(std::string_view in, std::string &out);
    void finish(std::string &out);
    // Encodes t[0, size), final: the text ends there; returns how far it got.
    std::size_t encode(const char *t, std::size_t size, bool final, std::string &out);

private:
    bool crlf_;
    std::size_t col_{0};
    std::string carry_;
};

// Whether some line of s is longer than limit octets (LF ends a line).
bool longest_line_over(std::string_view s, std::size_t limit);

// Whether write_back() can write content in this encoding: identity encodings, base64 and
// quoted-printable; not one GMime does not know (x-uuencode and the like).
bool can_write_back(GMimeContentEncoding enc);

// Replaces leaf n's body with decoded content, encoded in the part's own transfer encoding:
// base64 and quoted-printable are encoded again; 7bit, 8bit and binary text is spliced as it
// is, unless (7bit, 8bit) a line would pass 998 octets (RFC 5322 2.1.1), which only
// quoted-printable can carry: then the part becomes quoted-printable, its
// Content-Transfer-Encoding replaced or added. The part's edits stand or fall together: on
// an error none of them is kept. Needs can_write_back() of the part's encoding.
Status write_back(MessageContext &ctx, const Node &n, std::string_view content);
// The same for content made as the output is written (--cid=inline's data: URLs): the same
// bytes, decided the same way, but base64 and quoted-printable are written streamed, so the
// encoded part is never held; content written as it is (binary, or 7bit and 8bit within
// 998-octet lines) is held, as above.
Status write_back(MessageContext &ctx, const Node &n, StreamedBody body);

} // namespace mimeuri::transfer
