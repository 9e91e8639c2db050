// The byte-at-a-time DKIM body hash, kept as a test oracle (see dkim_oracle.hh).
#include "dkim_oracle.hh"

#include <algorithm>

namespace mimeuri::dkim_oracle {

BodyHash::BodyHash(GChecksumType type, dkim::Canon canon, std::optional<std::uint64_t> limit, bool unquote_from)
    : sum_(g_checksum_new(type)), canon_(canon), limit_(limit), unquote_(unquote_from)
{
}

BodyHash::~BodyHash() { g_checksum_free(sum_); }

void BodyHash::update(std::string_view bytes)
{
    for (char c : bytes) byte(c);
}

// mboxrd: a line ">From ", ">>From ", ... lost one ">" on its way out of the mailbox.
void BodyHash::byte(char c)
{
    if (!unquote_ || !line_start_) {
        canon(c);
        line_start_ = c == '\n';
        return;
    }
    prefix_ += c;
    std::size_t gt = prefix_.find_first_not_of('>');
    if (gt == std::string::npos) return; // ">>>" so far
    if (gt > 0) {
        std::string_view rest = std::string_view(prefix_).substr(gt);
        if (std::string_view("From ").substr(0, rest.size()) == rest) {
            if (rest.size() < 5) return; // may still be
            for (char p : std::string_view(prefix_).substr(1)) canon(p);
            prefix_.clear();
            line_start_ = false;
            return;
        }
    }
    std::string pending = std::move(prefix_);
    prefix_.clear();
    for (char p : pending) canon(p);
    line_start_ = pending.back() == '\n';
}

// Line ends: CRLF, or a bare LF read as one (RFC 6376 3.4.3 / 3.4.4 work on CRLF lines).
void BodyHash::canon(char c)
{
    if (cr_) {
        cr_ = false;
        if (c == '\n') return newline();
        content('\r'); // a bare CR is content
    }
    if (c == '\r') cr_ = true;
    else if (c == '\n') newline();
    else content(c);
}

void BodyHash::newline()
{
    wsp_ = false; // relaxed: white space at the end of a line is ignored
    ++crlfs_;     // both: empty lines at the end of the body are ignored
}

void BodyHash::content(char c)
{
    if (canon_ == dkim::Canon::Relaxed && (c == ' ' || c == '\t')) { // relaxed: a run of WSP is one SP
        wsp_ = true;
        return;
    }
    for (; crlfs_ > 0; --crlfs_) out("\r\n");
    if (wsp_) out(" ");
    wsp_ = false;
    out(std::string_view(&c, 1));
    any_ = true;
}

void BodyHash::out(std::string_view s)
{
    buf_.append(s);
    total_ += s.size();
    if (buf_.size() >= 65536) flush();
}

// Hands the canonical bytes to the checksum, the first l= of them only.
void BodyHash::flush()
{
    std::uint64_t flushed = total_ - buf_.size(); // canonical bytes before buf_
    std::size_t take = buf_.size();
    if (limit_) take = flushed >= *limit_ ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(take, *limit_ - flushed));
    if (take) g_checksum_update(sum_, reinterpret_cast<const guchar *>(buf_.data()), static_cast<gssize>(take));
    buf_.clear();
}

std::string BodyHash::digest(GChecksum *sum)
{
    guint8 d[64];
    gsize len = sizeof d;
    g_checksum_get_digest(sum, d, &len);
    return std::string(reinterpret_cast<const char *>(d), len);
}

std::vector<std::string> BodyHash::finish()
{
    std::string pending = std::move(prefix_);
    prefix_.clear();
    unquote_ = false;
    for (char p : pending) byte(p);
    if (cr_) {
        cr_ = false;
        content('\r');
    }
    std::vector<std::string> digests;
    // Relaxed, a last line with no line break that ends in white space: RFC 6376 3.4.4
    // ignores that white space, some signers (python3-dkim) keep one SP. Both are readings.
    std::optional<std::string> kept_space;
    if (canon_ == dkim::Canon::Relaxed && wsp_) {
        flush();
        GChecksum *before = g_checksum_copy(sum_);
        const std::uint64_t total = total_;
        for (; crlfs_ > 0; --crlfs_) out("\r\n");
        out(" \r\n");
        flush();
        if (!limit_ || *limit_ <= total_) kept_space = digest(sum_);
        g_checksum_free(sum_);
        sum_ = before;
        total_ = total;
    }
    // The last non-empty line keeps (or gets) its CRLF; an empty body is CRLF in simple and
    // nothing in relaxed (RFC 6376 3.4.3, 3.4.4).
    if (any_ || canon_ == dkim::Canon::Simple) out("\r\n");
    flush();
    if (!limit_ || *limit_ <= total_) digests.push_back(digest(sum_)); // l= past the end: no match (3.5)
    if (kept_space) digests.push_back(*kept_space);
    return digests;
}

} // namespace mimeuri::dkim_oracle
