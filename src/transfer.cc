#include "transfer.hh"

#include <glib.h>

#include <algorithm>

namespace mimeuri::transfer {

std::string base64_lines(std::string_view bytes)
{
    // Encoded in blocks of 57 octets, each 76 characters and a line end: no copy of the
    // unbroken text, no per-line allocation.
    std::string out;
    const std::size_t lines = (bytes.size() + 56) / 57;
    out.resize(lines * 77 + 8); // + g_base64_encode_step's slack
    char *o = out.data();
    const auto *in = reinterpret_cast<const guchar *>(bytes.data());
    for (std::size_t at = 0; at < bytes.size(); at += 57) {
        const std::size_t n = std::min<std::size_t>(57, bytes.size() - at);
        gint state = 0, save = 0;
        gsize w = g_base64_encode_step(in + at, n, FALSE, o, &state, &save);
        w += g_base64_encode_close(FALSE, o + w, &state, &save);
        o += w;
        *o++ = '\n';
    }
    out.resize(static_cast<std::size_t>(o - out.data()));
    return out;
}

void append_base64(std::string &out, std::string_view bytes)
{
    const std::size_t at = out.size();
    out.resize(at + (bytes.size() / 3 + 1) * 4 + 4); // g_base64_encode_step's bound, unbroken
    gint state = 0, save = 0;
    char *o = out.data() + at;
    gsize w = g_base64_encode_step(reinterpret_cast<const guchar *>(bytes.data()), bytes.size(), FALSE, o, &state, &save);
    w += g_base64_encode_close(FALSE, o + w, &state, &save);
    out.resize(at + w);
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

} // namespace

std::string quoted_printable(std::string_view text, bool crlf)
{
    static const char hex[] = "0123456789ABCDEF";
    const char *t = text.data();
    const std::size_t size = text.size();
    std::string out;
    out.reserve(size + size / 8 + 16);
    std::size_t col = 0; // octets on the current encoded line: at most 75 and a soft "="
    auto hard_break = [&](std::size_t at) {
        return crlf ? t[at] == '\r' && at + 1 < size && t[at + 1] == '\n' : t[at] == '\n';
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
        return c == '-' || c == '.' || (c == 'F' && text.compare(at, 5, "From ") == 0);
    };
    std::size_t i = 0;
    while (i < size) {
        // A run of octets written as they are, but for its last when it is a space or tab
        // that ends a line.
        std::size_t run = i;
        while (run < size && qp_table.literal[static_cast<unsigned char>(t[run])]) ++run;
        std::size_t plain = run;
        if (plain > i && (t[plain - 1] == ' ' || t[plain - 1] == '\t') && (plain == size || hard_break(plain))) --plain;
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
        if (i == size) break;
        if (hard_break(i)) {
            i += crlf ? 2 : 1;
            out += '\n';
            col = 0;
        } else {
            escape(static_cast<unsigned char>(t[i++]));
        }
    }
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
