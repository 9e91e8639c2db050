// --cid=extract: a message's row in the top index.html (see extract_index.hh).
#include "extract_index.hh"

#include <gmime/gmime.h>

namespace mimeuri::refs {

std::string html_text(std::string_view text)
{
    GCharPtr valid(g_utf8_make_valid(text.data(), static_cast<gssize>(text.size())));
    std::string plain;
    for (const char *p = valid.get(); *p; p = g_utf8_next_char(p)) {
        const gunichar c = g_utf8_get_char(p);
        if (g_unichar_iscntrl(c)) plain += ' '; // a line break or tab in a folded header too
        else plain.append(p, static_cast<std::size_t>(g_utf8_next_char(p) - p));
    }
    GCharPtr escaped(g_markup_escape_text(plain.c_str(), static_cast<gssize>(plain.size())));
    return escaped.get();
}

std::string index_row(const MessageContext &ctx, std::size_t folder)
{
    std::string date, from, subject;
    if (GMimeMessage *m = ctx.message()) {
        if (GDateTime *dt = g_mime_message_get_date(m)) {
            GCharPtr d(g_date_time_format(dt, "%Y-%m-%d %H:%M"));
            if (d) date = d.get();
        }
        if (InternetAddressList *list = g_mime_message_get_from(m)) {
            GCharPtr f(internet_address_list_to_string(list, nullptr, FALSE));
            if (f) from = f.get();
        }
        if (const char *s = g_mime_message_get_subject(m)) subject = s;
    }
    if (subject.empty()) subject = "(no subject)";
    return "<tr><td>" + html_text(date) + "</td><td>" + html_text(from) + "</td><td><a href=\"" +
           std::to_string(folder) + "/index.html\">" + html_text(subject) + "</a></td></tr>\n";
}

} // namespace mimeuri::refs
