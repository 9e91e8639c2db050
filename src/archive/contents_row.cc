// --cid=extract: a message's row in the top index.html (see contents_row.hh).
#include "contents_row.hh"

#include "archive_contents.hh"
#include "page_writer.hh"

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

std::string contents_row(const MessageContext &ctx, std::size_t folder)
{
    const Shown f = shown_fields(ctx);
    ArchiveEntry e;
    e.folder = folder;
    e.epoch = f.epoch;
    e.date = html_text(f.date);
    e.from = html_text(f.from);
    e.subject = html_text(f.subject);
    if (GMimeMessage *m = ctx.message()) {
        if (const char *id = g_mime_message_get_message_id(m)) e.message_id = id;
        // RFC 5322 3.6.4: the parent is the last of References, else In-Reply-To. Of References
        // the last kMaxParentIds - 1 are kept, so that In-Reply-To keeps a place.
        for (const char *field : {"References", "In-Reply-To"}) {
            const std::size_t room = kMaxParentIds - (field[0] == 'R' ? 1 : 0);
            const char *raw = g_mime_object_get_header(GMIME_OBJECT(m), field);
            if (!raw) continue;
            GMimeReferences *refs = g_mime_references_parse(nullptr, raw);
            if (!refs) continue;
            std::vector<std::string> ids;
            for (int k = 0; k < g_mime_references_length(refs); ++k) ids.emplace_back(g_mime_references_get_message_id(refs, k));
            g_mime_references_free(refs);
            for (auto id = ids.rbegin(); id != ids.rend() && e.parents.size() < room; ++id) e.parents.push_back(std::move(*id));
        }
    }
    return archive_record(e);
}

} // namespace mimeuri::refs
