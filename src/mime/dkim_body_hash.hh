// The DKIM and ARC body hash (RFC 6376 3.7), read a run at a time (docs/design.md, "The
// DKIM body hash"). src/mime/signatures.cc asks it whether a signature's bh= still holds.
#pragma once

#include "sha256.hh"

#include <glib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::dkim {

enum class Canon { Simple, Relaxed };

// The body hash of RFC 6376 3.7 over a body given in pieces: bare LF ends a line as CRLF does
// (3.4.3/3.4.4 work on CRLF lines), the body canonicalised, at most `limit` octets (l=) hashed.
// With unquote_from, one ">" is taken off each line that starts with ">+From " first (the
// quoting an mbox adds, mboxrd).
// It reads runs, not bytes: memchr finds each line's end, and the canonical form is handed on
// as spans of the input wherever it equals the input (simple: a whole line; relaxed: from
// white space to white space, a single SP included), so that most bytes are read once by the
// scan and once by SHA (docs/design.md, "The DKIM body hash"). tests/dkim_oracle.cc keeps the
// byte-at-a-time version it is checked against.
class BodyHash {
public:
    BodyHash(GChecksumType type, Canon canon, std::optional<std::uint64_t> limit, bool unquote_from);
    ~BodyHash();
    BodyHash(const BodyHash &) = delete;
    BodyHash &operator=(const BodyHash &) = delete;
    void update(std::string_view bytes);
    // The digests the body may have been signed with: the RFC's reading, then any other that
    // signers are known to use; none when l= is longer than the canonical body (3.5).
    std::vector<std::string> finish();

private:
    const char *quote(const char *p, const char *end); // ">From " at a line start
    void quoted_prefix(bool from);                      // a prefix read over two updates
    void line(const char *a, const char *b);           // bytes of a line, no LF: 3.4.3 / 3.4.4
    void newline(const char *crlf);
    void before_content();
    void pending_crlfs();
    void span(const char *a, const char *b); // canonical bytes that lie in the input
    void literal(std::string_view s);        // canonical bytes that do not
    void flush_span();
    void write(const char *d, std::size_t n);
    void flush();
    void hash(const char *d, std::size_t n);
    std::string digest() const;
    // The hash: SHA-256 with the CPU's SHA instructions where it has them (src/util/sha256.hh),
    // else GChecksum (SHA-1 always).
    GChecksum *sum_{nullptr};
    std::optional<Sha256> fast_;
    Canon canon_;
    std::optional<std::uint64_t> limit_;
    bool unquote_;
    std::uint64_t total_{0};             // canonical bytes so far
    std::uint64_t crlfs_{0};             // line ends after the last content, not yet written
    const char *crlf_run_{nullptr};      // where those lie in this update's input, as crlfs_ CRLFs
    bool wsp_{false};                    // relaxed: white space not yet written
    const char *wsp_at_{nullptr};        // an SP of this update's input just before the next content
    bool cr_{false};                     // a CR (the last byte) not yet known to end a line
    bool any_{false};                    // content written
    bool line_start_{true};
    bool quoting_{false};                // a line start read so far as ">+" or ">+From"
    std::uint64_t gts_{0};               // its ">"s
    std::size_t from_{0};                // and how much of "From " follows
    const char *span_a_{nullptr};        // canonical bytes in the input, not yet written
    const char *span_b_{nullptr};
    std::size_t used_{0};
    char buf_[8192];                     // short canonical pieces, not yet hashed
};

} // namespace mimeuri::dkim
