// --cid=extract: the pages themselves. Every page is mimeuri's own document with the mail
// inside it: mimeuri writes the doctype, a <head> whose first element is a
// Content-Security-Policy (default-src 'none'; images, styles and fonts from the archive and
// data: only; no form action, no base), the charset (UTF-8: the mail's text is converted),
// the archive's stylesheet (../mimeuri.css) and a header (Subject, From, Date in UTC, the
// message's parts, links to the index and, patched in when the run ends, to the previous and
// next message of its thread), all before any byte of the mail; then the mail's HTML as
// html::sanitize wrote it again. A CSP spliced at a <head> found in the sender's markup could
// be bypassed by that markup; this one cannot be preceded by it.
#pragma once

#include "archive_contents.hh" // kNavMarker, kNavRoom: the thread links
#include "html_sanitize.hh"
#include "message.hh"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::refs {

// The Content-Security-Policy every page carries (remote images allowed: img-src adds http:
// and https:).
std::string page_policy(bool allow_remote_images);

// A link in a page's header: the URL (relative, already escaped) and its text (HTML).
struct PageLink {
    std::string url;
    std::string text;
};

struct PageParts {
    bool message_page{false};       // the folder's index.html: gets the thread links
    std::vector<PageLink> parts;    // the message's parts, linked where a file holds them
    html::SanitizeCounts removed;   // said in the header
};

// A part's text as UTF-8: from its charset label (GMime's iconv names), else UTF-8 when it
// is valid, else windows-1252 (what a browser assumes); a byte-order mark dropped, a NUL as U+FFFD.
std::string to_utf8(std::string_view bytes, const char *label);

// The page around body (sanitised HTML, UTF-8) for the message in ctx.
std::string make_page(const MessageContext &ctx, const std::string &body, const PageParts &parts, bool allow_remote);

// A text/plain part's text (UTF-8) as page content: escaped in a <pre>, format=flowed lines
// joined (RFC 3676 4.2, space-stuffing undone, DelSp honoured).
std::string plain_text_body(std::string_view text, bool flowed, bool delsp);

// The message's header fields as the archive shows them: UTC date ("2026-11-27 01:48 UTC",
// "" without one), its seconds since the epoch (0 without), From and Subject as text.
struct Shown {
    std::string date;
    long long epoch{0};
    std::string from;
    std::string subject;
};
Shown shown_fields(const MessageContext &ctx);

} // namespace mimeuri::refs
