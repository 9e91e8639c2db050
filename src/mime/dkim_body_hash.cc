// The DKIM and ARC body hash over runs: see dkim_body_hash.hh and docs/design.md.
#include "dkim_body_hash.hh"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mimeuri::dkim {

namespace {

constexpr std::string_view kFrom = "From ";
// Pieces to write repeated bytes from: a run of ">" or of CRLF.
constexpr std::string_view kGts = ">>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>";
constexpr std::string_view kCrlfs = "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
                                    "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n";
// Pieces at least this long are hashed where they lie; shorter ones are gathered in buf_.
constexpr std::size_t kDirect = 512;

bool wsp(char c) { return c == ' ' || c == '\t'; }

// The first SP or HTAB in [p, e), or e: eight bytes at a time while none of them is one (a
// byte of x ^ 0x20... is zero where x has an SP; (v - 0x01...) & ~v & 0x80... is non-zero
// exactly when some byte of v is zero), then byte by byte within the eight that hold one.
const char *find_wsp(const char *p, const char *e)
{
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    for (; e - p >= 8; p += 8) {
        std::uint64_t x;
        std::memcpy(&x, p, 8);
        const std::uint64_t sp = x ^ (ones * ' '), tab = x ^ (ones * '\t');
        if ((((sp - ones) & ~sp) | ((tab - ones) & ~tab)) & highs) break;
    }
    while (p < e && !wsp(*p)) ++p;
    return p;
}

} // namespace

BodyHash::BodyHash(GChecksumType type, Canon canon, std::optional<std::uint64_t> limit, bool unquote_from)
    : canon_(canon), limit_(limit), unquote_(unquote_from)
{
    if (type == G_CHECKSUM_SHA256 && Sha256::available()) fast_.emplace();
    else sum_ = g_checksum_new(type);
}

BodyHash::~BodyHash()
{
    if (sum_) g_checksum_free(sum_);
}

void BodyHash::update(std::string_view bytes)
{
    const char *p = bytes.data();
    const char *const end = p + bytes.size();
    if (p == end) return;
    if (quoting_) {
        p = quote(p, end);
    } else if (cr_) { // the last update ended in a CR
        cr_ = false;
        if (*p == '\n') {
            newline(nullptr);
            line_start_ = true;
            ++p;
        } else {
            before_content(); // a bare CR is content
            literal("\r");
        }
    }
    while (p < end) {
        if (line_start_ && unquote_) {
            line_start_ = false;
            p = quote(p, end);
            if (p == end) break;
        }
        const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
        if (!nl) {
            const char *e = end;
            if (e[-1] == '\r') { // a line end, or content: the next update tells
                --e;
                cr_ = true;
            }
            line(p, e);
            break;
        }
        const char *e = nl;
        const char *crlf = nullptr;
        if (e > p && e[-1] == '\r') crlf = --e;
        line(p, e);
        newline(crlf);
        line_start_ = true;
        p = nl + 1;
    }
    // Nothing may point into these bytes after this call.
    flush_span();
    wsp_at_ = nullptr;
    crlf_run_ = nullptr;
}

// mboxrd: a line ">From ", ">>From ", ... lost one ">" on its way out of the mailbox. Reads
// what decides it and returns where the ordinary reading goes on: at the line's start, or
// past its first ">". A prefix cut by the end of an update is counted (gts_, from_) and
// written once the next update decides (quoted_prefix).
const char *BodyHash::quote(const char *p, const char *end)
{
    const char *const start = p;
    const bool carried = quoting_;
    quoting_ = true;
    while (p < end) {
        if (from_ == 0 && *p == '>') {
            ++gts_;
            ++p;
            continue;
        }
        const bool from = gts_ > 0 && *p == kFrom[from_];
        if (from) {
            ++p;
            if (++from_ < kFrom.size()) continue;
        }
        quoting_ = false;
        if (!carried) {
            gts_ = 0;
            from_ = 0;
            return from ? start + 1 : start; // read again, as content
        }
        quoted_prefix(from);
        return p;
    }
    return end;
}

// The prefix quote() read over more than one update, written as content: its ">"s (one fewer
// when "From " followed) and what of "From " it had.
void BodyHash::quoted_prefix(bool from)
{
    for (std::uint64_t n = gts_ - (from ? 1 : 0); n > 0;) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, kGts.size()));
        line(kGts.data(), kGts.data() + k);
        n -= k;
    }
    line(kFrom.data(), kFrom.data() + from_);
    gts_ = 0;
    from_ = 0;
}

// The bytes of one line (or of its part in this update), without its line end; a CR among
// them is content. RFC 6376 3.4.3: as they are; 3.4.4: a run of WSP is one SP, WSP at the
// line's end goes (newline() forgets it).
void BodyHash::line(const char *a, const char *b)
{
    if (canon_ == Canon::Simple) {
        if (a < b) {
            before_content();
            span(a, b);
        }
        return;
    }
    for (const char *q = a; q < b;) {
        const char *r = find_wsp(q, b);
        if (r > q) {
            before_content();
            span(q, r);
        }
        if (r == b) return;
        q = r + 1;
        while (q < b && wsp(*q)) ++q;
        wsp_ = true;
        // The run's last byte, when an SP, stands for it: it joins the content after it.
        wsp_at_ = q[-1] == ' ' ? q - 1 : nullptr;
    }
}

// A line end: CRLF (crlf: where it lies in the input, nullptr if it is not all in this update),
// or a bare LF read as one (RFC 6376 3.4.3 / 3.4.4 work on CRLF lines).
void BodyHash::newline(const char *crlf)
{
    wsp_ = false; // relaxed: white space at the end of a line is ignored
    wsp_at_ = nullptr;
    if (crlfs_ == 0) crlf_run_ = crlf;
    else if (!crlf || !crlf_run_ || crlf_run_ + 2 * crlfs_ != crlf) crlf_run_ = nullptr;
    ++crlfs_; // both: empty lines at the end of the body are ignored
}

// Content follows: the line ends and the white space held back are written first.
void BodyHash::before_content()
{
    if (crlfs_ > 0) pending_crlfs();
    if (wsp_) {
        if (wsp_at_) span(wsp_at_, wsp_at_ + 1);
        else literal(" ");
        wsp_ = false;
        wsp_at_ = nullptr;
    }
    any_ = true;
}

void BodyHash::pending_crlfs()
{
    if (crlf_run_) {
        span(crlf_run_, crlf_run_ + 2 * crlfs_);
    } else {
        for (std::uint64_t n = crlfs_; n > 0;) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, kCrlfs.size() / 2));
            literal(kCrlfs.substr(0, 2 * k));
            n -= k;
        }
    }
    crlfs_ = 0;
    crlf_run_ = nullptr;
}

void BodyHash::span(const char *a, const char *b)
{
    if (a == span_b_) {
        span_b_ = b; // right after the last: one span
        return;
    }
    flush_span();
    span_a_ = a;
    span_b_ = b;
}

void BodyHash::literal(std::string_view s)
{
    flush_span();
    write(s.data(), s.size());
}

void BodyHash::flush_span()
{
    if (!span_a_) return;
    write(span_a_, static_cast<std::size_t>(span_b_ - span_a_));
    span_a_ = span_b_ = nullptr;
}

// Canonical bytes, in order: the first l= of them are hashed.
void BodyHash::write(const char *d, std::size_t n)
{
    const std::uint64_t before = total_;
    total_ += n;
    if (limit_) {
        if (before >= *limit_) return;
        n = static_cast<std::size_t>(std::min<std::uint64_t>(n, *limit_ - before));
    }
    if (n >= kDirect) {
        flush();
        hash(d, n);
        return;
    }
    if (used_ + n > sizeof buf_) flush();
    std::memcpy(buf_ + used_, d, n);
    used_ += n;
}

void BodyHash::flush()
{
    if (used_ == 0) return;
    hash(buf_, used_);
    used_ = 0;
}

void BodyHash::hash(const char *d, std::size_t n)
{
    if (fast_) fast_->update(d, n);
    else g_checksum_update(sum_, reinterpret_cast<const guchar *>(d), static_cast<gssize>(n));
}

// The digest of what was hashed so far; the hash may go on.
std::string BodyHash::digest() const
{
    if (fast_) return fast_->digest();
    GChecksum *copy = g_checksum_copy(sum_);
    guint8 d[64];
    gsize len = sizeof d;
    g_checksum_get_digest(copy, d, &len);
    g_checksum_free(copy);
    return std::string(reinterpret_cast<const char *>(d), len);
}

std::vector<std::string> BodyHash::finish()
{
    if (quoting_) { // the body ends in ">" or ">From" on a line start: content
        quoting_ = false;
        quoted_prefix(false);
    }
    unquote_ = false;
    if (cr_) {
        cr_ = false;
        before_content();
        literal("\r");
    }
    flush_span();
    std::vector<std::string> digests;
    // Relaxed, a last line with no line break that ends in white space: RFC 6376 3.4.4
    // ignores that white space, some signers (python3-dkim) keep one SP. Both are readings.
    std::optional<std::string> kept_space;
    if (canon_ == Canon::Relaxed && wsp_) {
        flush();
        GChecksum *before = sum_ ? g_checksum_copy(sum_) : nullptr;
        const std::optional<Sha256> fast_before = fast_;
        const std::uint64_t total = total_;
        if (crlfs_ > 0) pending_crlfs();
        literal(" \r\n");
        flush();
        if (!limit_ || *limit_ <= total_) kept_space = digest();
        if (sum_) {
            g_checksum_free(sum_);
            sum_ = before;
        }
        fast_ = fast_before;
        total_ = total;
    }
    // The last non-empty line keeps (or gets) its CRLF; an empty body is CRLF in simple and
    // nothing in relaxed (RFC 6376 3.4.3, 3.4.4).
    if (any_ || canon_ == Canon::Simple) literal("\r\n");
    flush();
    if (!limit_ || *limit_ <= total_) digests.push_back(digest()); // l= past the end: no match (3.5)
    if (kept_space) digests.push_back(*kept_space);
    return digests;
}

} // namespace mimeuri::dkim
