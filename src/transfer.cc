#include "transfer.hh"

#include <glib.h>

#include <memory>

namespace mimeuri::transfer {

std::string base64_lines(std::string_view bytes)
{
    std::unique_ptr<gchar, decltype(&g_free)> b(
        g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size()), g_free);
    std::string_view flat = b.get();
    std::string out;
    out.reserve(flat.size() + flat.size() / 76 + 1);
    for (std::size_t i = 0; i < flat.size(); i += 76) {
        out += flat.substr(i, 76);
        out += '\n';
    }
    return out;
}

std::string quoted_printable(std::string_view text, bool crlf)
{
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    std::size_t col = 0; // octets on the current encoded line
    auto put = [&](std::string_view piece) {
        if (col + piece.size() > 75) { // room for the "=" of a soft line break (76 in all)
            out += "=\n";
            col = 0;
        }
        out += piece;
        col += piece.size();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        auto hard_break = [&](std::size_t at) {
            if (at >= text.size()) return false;
            return crlf ? text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n' : text[at] == '\n';
        };
        if (hard_break(i)) {
            if (crlf) ++i;
            out += '\n';
            col = 0;
            continue;
        }
        const auto u = static_cast<unsigned char>(c);
        const bool line_end = i + 1 == text.size() || hard_break(i + 1);
        bool encode = c == '=' || u > 126 || (u < 32 && c != '\t') || ((c == ' ' || c == '\t') && line_end);
        char literal[1] = {c};
        char escaped[3] = {'=', hex[u >> 4], hex[u & 15]};
        // The line-start rule is decided where the octet lands: a soft line break before it
        // makes it a line start too.
        auto starts_line = [&](std::size_t at_col) {
            return at_col == 0 && (c == '-' || (c == 'F' && text.compare(i, 5, "From ") == 0) || c == '.');
        };
        if (!encode && col + 1 > 75) {
            out += "=\n";
            col = 0;
        }
        if (!encode && starts_line(col)) encode = true;
        put(encode ? std::string_view(escaped, 3) : std::string_view(literal, 1));
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
        s = ctx.replace_body(n, content, false);
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
            s = ctx.replace_body(n, content, false);
        }
        break;
    default:
        return Error{Code::Software, "write_back: transfer encoding not rewritable"};
    }
    if (!s) ctx.rollback(mark);
    return s;
}

} // namespace mimeuri::transfer
