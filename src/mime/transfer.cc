#include "transfer.hh"

#include "base64.hh"

#include <glib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mimeuri::transfer {

Base64Lines::Base64Lines() { carry_.reserve(57); }

void Base64Lines::lines(const char *in, std::size_t size, std::string &out)
{
    // Encoded in blocks of 57 octets, each 76 characters and a line end: no copy of the
    // unbroken text, no per-line allocation.
    const std::size_t at0 = out.size();
    out.resize(at0 + (size + 56) / 57 * 77);
    char *o = out.data() + at0;
    const auto *u = reinterpret_cast<const unsigned char *>(in);
    for (std::size_t at = 0; at < size; at += 57) {
        o += base64::encode(u + at, std::min<std::size_t>(57, size - at), o);
        *o++ = '\n';
    }
    out.resize(static_cast<std::size_t>(o - out.data()));
}

void Base64Lines::feed(std::string_view in, std::string &out)
{
    if (!carry_.empty()) { // a line begun by the last piece: completed first
        const std::size_t take = std::min(in.size(), 57 - carry_.size());
        carry_.append(in.substr(0, take));
        in.remove_prefix(take);
        if (carry_.size() < 57) return;
        lines(carry_.data(), 57, out);
        carry_.clear();
    }
    const std::size_t whole = in.size() / 57 * 57;
    lines(in.data(), whole, out);
    carry_.assign(in.substr(whole));
}

void Base64Lines::finish(std::string &out)
{
    lines(carry_.data(), carry_.size(), out);
    carry_.clear();
}

std::string base64_lines(std::string_view bytes)
{
    std::string out;
    Base64Lines::lines(bytes.data(), bytes.size(), out);
    return out;
}

void append_base64(std::string &out, std::string_view bytes)
{
    const std::size_t at = out.size();
    out.resize(at + (bytes.size() + 2) / 3 * 4);
    out.resize(at + base64::encode(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), out.data() + at));
}

namespace {

// Octets quoted-printable may write as they are anywhere but at the end of a line (space,
// tab) or at its start ('-', '.', "From "): printable ASCII but '=', and space and tab.
// RFC 2045 6.7 rules (1) to (3).
struct QpTable {
    bool literal[256]{};
    constexpr QpTable()
    {
        for (int c = 33; c <= 126; ++c) literal[c] = c != '=';
        literal[static_cast<unsigned char>(' ')] = literal[static_cast<unsigned char>('\t')] = true;
    }
};
constexpr QpTable qp_table;

// Whether p's first 16 octets are all literal (qp_table), sixteen at once (GCC's vector
// extensions: SSE2 here, plain code elsewhere): long runs are found at memory speed.
typedef unsigned char V16 __attribute__((vector_size(16)));
inline bool literal16(const char *p)
{
    V16 v;
    std::memcpy(&v, p, 16);
    const auto in = (((V16)(v - 33) < 94) & (v != '=')) | (v == ' ') | (v == '\t');
    std::uint64_t half[2];
    std::memcpy(half, &in, 16);
    return (half[0] & half[1]) == ~std::uint64_t{0};
}

} // namespace

// Encodes t[0, size) from col_ on, up to where a decision needs octets not yet given: when
// not final, octets from size - kLookahead on are left (returned: where it stopped). Every
// decision looks at most 4 octets ahead ("From "), so an octet before size - 5 is written
// as the whole text would have it written, wherever the text is cut into pieces.
std::size_t QuotedPrintable::encode(const char *t, std::size_t size, bool final, std::string &out)
{
    static const char hex[] = "0123456789ABCDEF";
    constexpr std::size_t kLookahead = 5;
    const std::size_t limit = final ? size : size > kLookahead ? size - kLookahead : 0;
    std::size_t col = col_; // octets on the current encoded line: at most 75 and a soft "="
    auto hard_break = [&](std::size_t at) {
        return crlf_ ? t[at] == '\r' && at + 1 < size && t[at + 1] == '\n' : t[at] == '\n';
    };
    auto escape = [&](unsigned char u) {
        if (col + 3 > 75) { // room for the "=" of a soft line break (76 in all)
            out.append("=\n", 2);
            col = 0;
        }
        const char e[3] = {'=', hex[u >> 4], hex[u & 15]};
        out.append(e, 3);
        col += 3;
    };
    // The line-start rule is decided where an octet lands: after a soft line break too.
    auto starts_line = [&](std::size_t at) {
        const char c = t[at];
        return c == '-' || c == '.' || (c == 'F' && std::string_view(t + at, size - at).compare(0, 5, "From ") == 0);
    };
    std::size_t i = 0;
    while (i < limit) {
        // A run of octets written as they are, but for its last when it is a space or tab
        // that ends a line (known only once the octet after it is given, or the text ends).
        std::size_t run = i;
        while (size - run >= 16 && literal16(t + run)) run += 16;
        while (run < size && qp_table.literal[static_cast<unsigned char>(t[run])]) ++run;
        std::size_t plain = run;
        if (plain > i && (t[plain - 1] == ' ' || t[plain - 1] == '\t') && (plain == size ? final : hard_break(plain)))
            --plain;
        plain = std::min(plain, limit);
        while (i < plain) {
            if (col == 75) {
                out.append("=\n", 2);
                col = 0;
            }
            if (col == 0 && starts_line(i)) {
                escape(static_cast<unsigned char>(t[i++]));
                continue;
            }
            const std::size_t n = std::min(plain - i, 75 - col);
            out.append(t + i, n);
            col += n;
            i += n;
        }
        if (i >= limit) break;
        if (hard_break(i)) {
            i += crlf_ ? 2 : 1;
            out += '\n';
            col = 0;
        } else {
            escape(static_cast<unsigned char>(t[i++]));
        }
    }
    col_ = col;
    return i;
}

void QuotedPrintable::feed(std::string_view in, std::string &out)
{
    if (carry_.empty()) {
        const std::size_t done = encode(in.data(), in.size(), false, out);
        carry_.assign(in.substr(done));
        return;
    }
    carry_.append(in);
    const std::size_t done = encode(carry_.data(), carry_.size(), false, out);
    carry_.erase(0, done);
}

void QuotedPrintable::finish(std::string &out)
{
    encode(carry_.data(), carry_.size(), true, out);
    carry_.clear();
}

std::string quoted_printable(std::string_view text, bool crlf)
{
    std::string out;
    out.reserve(text.size() + text.size() / 8 + 16);
    QuotedPrintable(crlf).encode(text.data(), text.size(), true, out);
    return out;
}

bool longest_line_over(std::string_view s, std::size_t limit)
{
    std::size_t len = 0;
    for (char c : s) {
        if (c == '\n') len = 0;
        else if (++len > limit) return true;
    }
    return false;
}

bool can_write_back(GMimeContentEncoding enc)
{
    switch (enc) {
    case GMIME_CONTENT_ENCODING_BASE64:
    case GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE:
    case GMIME_CONTENT_ENCODING_BINARY:
    case GMIME_CONTENT_ENCODING_DEFAULT:
    case GMIME_CONTENT_ENCODING_7BIT:
    case GMIME_CONTENT_ENCODING_8BIT: return true;
    default: return false;
    }
}

Status write_back(MessageContext &ctx, const Node &n, StreamedBody body)
{
    const auto enc = g_mime_part_get_content_encoding(GMIME_PART(n.object));
    const bool seven_bit = enc == GMIME_CONTENT_ENCODING_DEFAULT || enc == GMIME_CONTENT_ENCODING_7BIT ||
                           enc == GMIME_CONTENT_ENCODING_8BIT;
    if (enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE ||
        (seven_bit && body.line_over(998))) {
        body.cte = enc == GMIME_CONTENT_ENCODING_BASE64 ? StreamedBody::Cte::Base64 : StreamedBody::Cte::QuotedPrintable;
        const auto mark = ctx.edit_mark();
        Status s = ctx.replace_body(n, std::move(body));
        if (s && seven_bit) {
            GMimeHeader *cte = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Transfer-Encoding");
            s = cte ? ctx.replace_header(cte, " quoted-printable\n")
                    : ctx.add_header(n, "Content-Transfer-Encoding", " quoted-printable\n");
        }
        if (!s) ctx.rollback(mark);
        return s;
    }
    auto text = body.content_text(reader_of(ctx.source()));
    if (!text) return text.error();
    return write_back(ctx, n, *text);
}

Status write_back(MessageContext &ctx, const Node &n, std::string_view content)
{
    const bool crlf = ctx.eol() == Eol::CRLF;
    const auto mark = ctx.edit_mark();
    Status s = ok();
    switch (g_mime_part_get_content_encoding(GMIME_PART(n.object))) {
    case GMIME_CONTENT_ENCODING_BASE64:
        s = ctx.replace_body(n, base64_lines(content));
        break;
    case GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE:
        s = ctx.replace_body(n, quoted_printable(content, crlf));
        break;
    case GMIME_CONTENT_ENCODING_BINARY: // no line limit: spliced as it is
        s = ctx.replace_body(n, std::string(content), false);
        break;
    case GMIME_CONTENT_ENCODING_DEFAULT:
    case GMIME_CONTENT_ENCODING_7BIT:
    case GMIME_CONTENT_ENCODING_8BIT:
        if (longest_line_over(content, 998)) {
            GMimeHeader *cte = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Transfer-Encoding");
            s = ctx.replace_body(n, quoted_printable(content, crlf));
            if (s)
                s = cte ? ctx.replace_header(cte, " quoted-printable\n")
                        : ctx.add_header(n, "Content-Transfer-Encoding", " quoted-printable\n");
        } else {
            s = ctx.replace_body(n, std::string(content), false);
        }
        break;
    default:
        return Error{Code::Software, "write_back: transfer encoding not rewritable"};
    }
    if (!s) ctx.rollback(mark);
    return s;
}

} // namespace mimeuri::transfer
