// --cid=extract: the pages themselves (see page_writer.hh).
#include "page_writer.hh"

#include "contents_row.hh"

#include <gmime/gmime.h>

#include <optional>

namespace mimeuri::refs {

std::string page_policy(bool allow_remote_images)
{
    // 'self' and relative names: the archive's own files (file: pages too, in Chromium);
    // 'unsafe-inline' for styles only (mail is styled inline); no script source at all.
    return std::string("default-src 'none'; img-src 'self' data:") + (allow_remote_images ? " http: https:" : "") +
           "; style-src 'self' 'unsafe-inline' data:; font-src 'self' data:; media-src 'self' data:; "
           "form-action 'none'; base-uri 'none'";
}

std::string to_utf8(std::string_view bytes, const char *label)
{
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
    auto convert = [&](const char *from) -> std::optional<std::string> {
        gsize written = 0;
        GError *err = nullptr;
        char *out = g_convert(bytes.data(), static_cast<gssize>(bytes.size()), "UTF-8", from, nullptr, &written, &err);
        if (!out) {
            if (err) g_error_free(err);
            return std::nullopt;
        }
        std::string s(out, written);
        g_free(out);
        return s;
    };
    std::string lab = label ? label : "";
    for (char &c : lab) c = static_cast<char>(g_ascii_tolower(c));
    const bool utf8_label = lab.empty() || lab == "utf-8" || lab == "utf8" || lab == "us-ascii" || lab == "ascii";
    std::optional<std::string> text;
    if (!utf8_label) text = convert(g_mime_charset_iconv_name(label));
    if (!text && g_utf8_validate(bytes.data(), static_cast<gssize>(bytes.size()), nullptr)) text = std::string(bytes);
    if (!text) text = convert("WINDOWS-1252");
    if (!text) text = convert("ISO-8859-1");
    if (!text) text = std::string(bytes);
    // A NUL is U+FFFD, as gumbo and a browser read it in HTML, so that no C string made of
    // the text ends early (g_utf8_make_valid replaces it so too, given the length).
    std::string out;
    for (std::size_t at = 0;;) {
        const std::size_t nul = text->find('\0', at);
        out.append(*text, at, nul == std::string::npos ? std::string::npos : nul - at);
        if (nul == std::string::npos) break;
        out += "\xEF\xBF\xBD";
        at = nul + 1;
    }
    GCharPtr valid(g_utf8_make_valid(out.data(), static_cast<gssize>(out.size())));
    return valid.get();
}

Shown shown_fields(const MessageContext &ctx)
{
    Shown s;
    if (GMimeMessage *m = ctx.message()) {
        if (GDateTime *dt = g_mime_message_get_date(m)) {
            if (GDateTime *utc = g_date_time_to_utc(dt)) {
                GCharPtr d(g_date_time_format(utc, "%Y-%m-%d %H:%M UTC"));
                if (d) s.date = d.get();
                s.epoch = g_date_time_to_unix(utc);
                g_date_time_unref(utc);
            }
        }
        if (InternetAddressList *list = g_mime_message_get_from(m)) {
            GCharPtr f(internet_address_list_to_string(list, nullptr, FALSE));
            if (f) s.from = f.get();
        }
        if (const char *subject = g_mime_message_get_subject(m)) s.subject = subject;
    }
    if (s.subject.empty()) s.subject = "(no subject)";
    return s;
}

std::string make_page(const MessageContext &ctx, const std::string &body, const PageParts &parts, bool allow_remote)
{
    const Shown f = shown_fields(ctx);
    const std::string subject = html_text(f.subject);
    std::string p;
    p.reserve(body.size() + 2048);
    p += "<!DOCTYPE html>\n<html><head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"";
    p += page_policy(allow_remote);
    p += "\">\n<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<title>";
    p += subject;
    p += "</title>\n<link class=\"mimeuri\" rel=\"stylesheet\" href=\"../mimeuri.css\">\n</head>\n<body>\n"
         "<header class=\"mimeuri-header\">\n<nav class=\"mimeuri-nav\"><a href=\"../index.html\">index</a>";
    if (!parts.message_page) p += " <a href=\"index.html\">message</a>";
    p += ' ';
    p += kNavMarker;
    p.append(kNavRoom, ' ');
    p += "</nav>\n<h1>";
    p += subject;
    p += "</h1>\n<p class=\"mimeuri-fields\"><span>From: ";
    p += html_text(f.from);
    p += "</span> <span>Date: ";
    p += f.date.empty() ? std::string("(none)") : html_text(f.date);
    p += "</span></p>\n";
    if (!parts.parts.empty()) {
        p += "<ul class=\"mimeuri-parts\">";
        for (const PageLink &l : parts.parts) {
            p += "<li>";
            if (!l.url.empty()) p += "<a href=\"" + html_text(l.url) + "\">" + l.text + "</a>";
            else p += l.text;
            p += "</li>";
        }
        p += "</ul>\n";
    }
    if (const std::string removed = parts.removed.describe(); !removed.empty())
        p += "<p class=\"mimeuri-removed\">Removed from this page: " + removed + "</p>\n";
    p += "</header>\n<main class=\"mimeuri-mail\">\n";
    p += body;
    p += "\n</main>\n</body></html>\n";
    return p;
}

std::string plain_text_body(std::string_view text, bool flowed, bool delsp)
{
    std::string out = "<pre class=\"mimeuri-text\">";
    std::string para;
    std::size_t para_depth = 0;
    bool open = false;
    auto flush = [&] {
        if (!open) return;
        out += html::escape_text(std::string(para_depth, '>') + (para_depth ? " " : "") + para);
        out += '\n';
        para.clear();
        open = false;
    };
    for (std::size_t at = 0; at <= text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!flowed) {
            out += html::escape_text(line);
            if (at <= text.size()) out += '\n';
            continue;
        }
        // RFC 3676 4.5: quote depth, then space-stuffing; 4.2: a line ending in a space
        // (not the signature separator) flows into the next of the same depth.
        std::size_t depth = 0;
        while (depth < line.size() && line[depth] == '>') ++depth;
        line.remove_prefix(depth);
        if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
        if (open && depth != para_depth) flush();
        const bool soft = !line.empty() && line.back() == ' ' && line != "-- ";
        if (!open) para_depth = depth, open = true;
        if (soft && delsp) line.remove_suffix(1);
        para.append(line);
        if (!soft) flush();
    }
    flush();
    out += "</pre>";
    return out;
}

} // namespace mimeuri::refs
