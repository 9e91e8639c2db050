// inert: whether a message can be copied without a full parse, from its bytes alone.
//
// SYNOPSIS  provably_inert(m, check, limits): no pass can change message m (InertCheck);
//           plain_message_id(m): the Message-ID GMime would give m, when its header block is
//           plain; header_block_size(m): where m's header block ends.
// MessageContext::parse asks these before it hands a message to GMime (docs/design.md,
// "The inert copy").
#include "inert.hh"

#include "decode.hh"
#include "header_lines.hh"
#include "structure.hh"
#include "text.hh"

#include <algorithm>
#include <cstring>

namespace mimeuri {

// Where the header block ends: after the first empty line, or at the end.
std::size_t header_block_size(std::string_view m) { return HeaderFields(m).skip(); }

namespace {

// A field's value after its name's colon, without white space or line breaks, in lower case.
std::string field_value(std::string_view field)
{
    auto colon = field.find(':');
    std::string v;
    if (colon == std::string_view::npos) return v;
    for (char c : field.substr(colon + 1))
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') v += c;
    return text::ascii_lower(v);
}

// Charsets whose bytes do not keep ASCII's meaning (the passes convert those first).
constexpr const char *kNotAsciiCharsets[] = {"utf-16", "utf-32", "ucs-2", "ucs-4", "utf-7", "iso-2022", "hz-gb",
                                             "ebcdic", "cp037", "ibm037", "cp500", "ibm500", "cp1026", "cp875"};

// Whether no HTML part of m can hold what the scanning passes look for (InertCheck::
// may_hold_reference, for the references pass html::may_hold_reference): m's bytes as they
// are, and where a part may be quoted-printable, m decoded as quoted-printable whole
// (decoding is local: a part's decoded content is a run of the whole's decoding, but for its
// last two bytes, which only lose what they would show).
bool nothing_to_reference(std::string_view m, bool quoted_printable, const InertCheck &check)
{
    if (!check.may_hold_reference || check.may_hold_reference(m)) return false;
    if (!quoted_printable) return true;
    GMimeEncoding st;
    g_mime_encoding_init_decode(&st, GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
    std::string out(g_mime_encoding_outlen(&st, m.size()) + 16, '\0');
    out.resize(decode::flush(&st, m.data(), m.size(), out.data()));
    return !check.may_hold_reference(out);
}

// Whether an HTML part of m, copied without a full parse, is certain to give the references
// pass nothing to edit or report (see InertCheck): m is at most scan_max bytes (beyond, the
// pass reports a part); every Content-Transfer-Encoding field says 7bit, 8bit, binary or
// quoted-printable and nothing else (no base64, no uuencode, no comment); no Content-Type
// field names a charset whose bytes do not keep ASCII's meaning (the pass converts those
// first; a backslash, an RFC 2231 or 2047 form counts as one); no line starts
// "content-location" or "content-base"; every header block is plain, and a leaf's ends with
// content, not a delimiter line (GMime's reading of those is the full parse's to report,
// MessageContext::content_span); and nothing_to_reference(m's body). What may be a header
// block: from the top and from each line starting "--" (every delimiter line, and then
// some) to the next empty line.
bool nothing_to_edit_in_html(std::string_view m, const InertCheck &check)
{
    if (m.size() > check.scan_max) return false;
    bool quoted_printable = false, in_header = true, multipart = false;
    Lines lines(m);
    for (Line l; lines.next(l);) {
        const std::size_t line = l.begin, next = l.next;
        if (in_header && l.empty()) {
            in_header = false;
            if (m.compare(next, 2, "--") == 0 && !multipart) return false;
        } else if (in_header && m[line] != ' ' && m[line] != '\t') {
            std::size_t k = line;
            while (k < next && m[k] != ':' && static_cast<unsigned char>(m[k]) > 32 && static_cast<unsigned char>(m[k]) < 127) ++k;
            if (k == line || k == next || m[k] != ':') return false;
        }
        if (m.compare(line, 2, "--") == 0) {
            in_header = true;
            multipart = false;
        }
        if (text::ci_at(m, line, "content-type")) {
            const std::string field = text::ascii_lower(std::string(m.substr(line, field_end(m, line) - line)));
            if (in_header && field_value(field).rfind("multipart/", 0) == 0) multipart = true;
            if (field.find_first_of("\\*") != std::string::npos || field.find("=?") != std::string::npos) return false;
            for (const char *bad : kNotAsciiCharsets)
                if (field.find(bad) != std::string::npos) return false;
        } else if (text::ci_at(m, line, "content-transfer-encoding")) {
            const std::string v = field_value(m.substr(line, field_end(m, line) - line));
            if (v == "quoted-printable") quoted_printable = true;
            else if (v != "7bit" && v != "8bit" && v != "binary") return false;
        } else if (text::ci_at(m, line, "content-location") || text::ci_at(m, line, "content-base")) {
            return false;
        }
    }
    // The message's own header block holds no part's content (and has a Message-ID field).
    return nothing_to_reference(m.substr(header_block_size(m)), quoted_printable, check);
}

// Whether the decoded content of a leaf the walk found gives the scanning passes nothing to
// edit: their prefilter clears it, or for an HTML part, each proves it
// (InertCheck::nothing_to_edit, where every Content-ID in ids.ids was plain).
bool nothing_in(std::string_view decoded, const WalkEntity &e, const InertCheck &check, const InertIds &ids, bool plain)
{
    if (!ids.related && !check.may_hold_reference(decoded)) return true;
    return plain && e.type == "text" && e.subtype == "html" && check.nothing_to_edit && check.nothing_to_edit(decoded, e.charset, ids);
}

// Whether a text/html or text/css leaf the walk found is certain to give the scanning passes
// nothing to edit: the conditions of nothing_to_edit_in_html, for its own content (decoded
// as GMime decodes it for the passes) and its own Content-Type field.
bool nothing_to_edit_in_leaf(std::string_view m, const WalkEntity &e, const InertCheck &check, const InertIds &ids, bool plain)
{
    const std::string_view raw = m.substr(e.content_begin, e.content_end - e.content_begin);
    // An empty one: where GMime puts its content is MessageContext::content_span's to tell.
    if (raw.empty() || raw.size() > check.scan_max || !check.may_hold_reference) return false;
    const std::string field = text::ascii_lower(e.content_type);
    if (field.find_first_of("\\*") != std::string::npos || field.find("=?") != std::string::npos) return false;
    for (const char *bad : kNotAsciiCharsets)
        if (field.find(bad) != std::string::npos) return false;
    GMimeContentEncoding enc;
    if (e.encoding.empty() || e.encoding == "7bit" || e.encoding == "8bit" || e.encoding == "binary")
        return nothing_in(raw, e, check, ids, plain);
    if (e.encoding == "quoted-printable") enc = GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
    else if (e.encoding == "base64") enc = GMIME_CONTENT_ENCODING_BASE64;
    else return false;
    GMimeEncoding st;
    g_mime_encoding_init_decode(&st, enc);
    std::string out(g_mime_encoding_outlen(&st, raw.size()) + 16, '\0');
    out.resize(decode::flush(&st, raw.data(), raw.size(), out.data()));
    return nothing_in(out, e, check, ids, plain);
}

// GMime's reading of a Content-ID field (name and value) of the plain form "<id>" on one
// line (plain_angle_id; checked against GMime 3.2 on this machine, "<ii_1507>" and
// "<a.b@c.d>" alike); else nothing.
std::optional<std::string> plain_content_id(std::string_view field)
{
    return plain_angle_id(field.substr(field.find(':') + 1));
}

// The walk's verdict (src/mime/structure.cc): true when no pass can change m, false when one
// may, nothing when the walk is not sure of m's structure (the line check below decides).
// Every entity is within the limits (the walk's depth below --max-depth, as a Content-Type
// field per level gives provably_inert's count); of the leaves, those of an edited type
// must all be scanned ones that nothing_to_edit_in_leaf clears, in a message with no
// Content-Location or Content-Base field (a relative URL may then name a part). Where a
// Content-ID is inside a multipart/related, a URL may name a part without "cid:" (the
// references pass reads every URL then, MessageIndex::any_related_id): the passes' own
// proof (nothing_in) decides then.
std::optional<bool> inert_by_walk(std::string_view m, const InertCheck &check, const Limits &limits)
{
    if (limits.max_parts < 3 || limits.max_depth < 1) return std::nullopt;
    // One vector for every message this thread walks (its growth and its frees were 1.4% of
    // the default job's instructions on the corpus mbox, issue 53).
    thread_local std::vector<WalkEntity> walked;
    if (!walk_structure(m, limits.max_parts - 2, limits.max_depth - 1, walked)) return std::nullopt;
    bool location = false;
    std::vector<bool> related; // related[d]: the entity at depth d or one above it is multipart/related
    InertIds ids;
    bool plain = true; // every Content-ID plain_content_id reads
    std::vector<const WalkEntity *> scanned;
    for (const WalkEntity &e : walked) {
        if (check.index && (e.content_id || e.kind == WalkEntity::Kind::Message)) return false;
        const auto d = static_cast<std::size_t>(e.depth);
        const bool below_related = d > 0 && related[d - 1];
        related.resize(d + 1);
        related[d] = below_related || (e.kind == WalkEntity::Kind::Multipart && e.subtype == "related");
        location = location || e.location;
        if (e.content_id) {
            ids.related = ids.related || below_related;
            auto id = e.content_ids ? std::nullopt : plain_content_id(e.content_id_field);
            if (id) ids.ids.push_back(std::move(*id));
            plain = plain && id;
        }
        if (e.kind != WalkEntity::Kind::Leaf) continue;
        const std::string type = e.type + "/" + e.subtype;
        if (std::find(check.types.begin(), check.types.end(), type) == check.types.end()) continue;
        if (std::find(check.scanned_types.begin(), check.scanned_types.end(), type) == check.scanned_types.end()) return false;
        scanned.push_back(&e);
    }
    if (!scanned.empty() && location) return false;
    return std::all_of(scanned.begin(), scanned.end(), [&](const WalkEntity *e) { return nothing_to_edit_in_leaf(m, *e, check, ids, plain); });
}

} // namespace

namespace {

std::size_t skip_blanks(std::string_view s, std::size_t at)
{
    while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\r' || s[at] == '\n')) ++at;
    return at;
}

enum class MessageSubtype { Leaf, Embedded, Other };

// What GMime makes of the subtype after "message/" at `at` (blanks first allowed); GMime
// registers only rfc822, rfc2822, news and global as embedded messages and partial as
// GMimeMessagePartial (gmime.c; checked on this machine). Leaf: one of the report types
// below, which it reads as a leaf part (GMimePart), whole, ended by the field's end, ';', a
// blank or a comment. Delivery and disposition reports are a third of the corpus mbox's
// messages that GMime parsed. Embedded: one of the four, so ended. Other: anything else.
MessageSubtype message_subtype(std::string_view field, std::size_t at)
{
    at = skip_blanks(field, at);
    std::size_t end = at;
    while (end < field.size() && (g_ascii_isalnum(field[end]) || field[end] == '-' || field[end] == '.' || field[end] == '+'))
        ++end;
    if (end < field.size() && !(field[end] == ';' || field[end] == '(' || field[end] == ' ' || field[end] == '\t' ||
                                field[end] == '\r' || field[end] == '\n'))
        return MessageSubtype::Other;
    const std::string subtype = text::ascii_lower(field.substr(at, end - at));
    for (const char *leaf : {"delivery-status", "disposition-notification", "feedback-report", "rfc822-headers",
                             "global-headers", "global-delivery-status", "global-disposition-notification",
                             "tracking-status"})
        if (subtype == leaf) return MessageSubtype::Leaf;
    for (const char *embedded : {"rfc822", "rfc2822", "news", "global"})
        if (subtype == embedded) return MessageSubtype::Embedded;
    return MessageSubtype::Other;
}

} // namespace

// Whether no pass can change the message m (see MessageContext::parse, InertCheck). GMime
// gives an entity a media type only from a Content-Type field (a line starting with the
// name, and its folded continuations), else text/plain (message/rfc822 in a multipart/digest);
// it reads a Content-ID only from a line starting with that name; a header block never spans
// an empty line. So, line starts only:
// - no line starts "content-id" (the index would list it), where the run keeps an index;
// - between two lines starting "content-type" lies an empty line (never two fields in one
//   block, which could disagree: src/mime/signatures.cc), and no such field holds, in any case, a
//   subtype of the types passes edit, "digest" (whose parts default to message/rfc822), or
//   "message" followed by white space and '/' or '(' (a comment may stand before the '/'),
//   unless what follows the '/' is a report type GMime reads as a leaf (message_subtype:
//   message/delivery-status) or, where the run keeps no index, an embedded message (the
//   index would list its Message-ID and Content-IDs; the Content-Type fields inside it are
//   lines like any other here);
// - the limits cannot bind: an entity lies below at most one multipart or embedded message
//   per Content-Type field, and each but the first starts after a delimiter line or is the
//   body of an embedded message (counted as if each message/ field named one).
// A field that names only scanned types (text/html for the references pass) is allowed when
// nothing_to_edit_in_html(m) holds besides.
bool provably_inert(std::string_view m, const InertCheck &check, const Limits &limits)
{
    if (auto verdict = inert_by_walk(m, check, limits)) return *verdict;
    struct Needle {
        std::string word;
        bool scanned;
    };
    std::vector<Needle> needles{{"digest", false}};
    for (const std::string &t : check.types) {
        auto slash = t.find('/');
        if (slash == std::string::npos || slash + 1 == t.size()) return false;
        const bool scanned = std::find(check.scanned_types.begin(), check.scanned_types.end(), t) != check.scanned_types.end();
        needles.push_back({text::ascii_lower(t.substr(slash + 1)), scanned});
    }
    bool scan = false;
    std::size_t embedded = 0; // at most the embedded messages (each body an entity of its own)
    // The bytes a needle or "message" can start with (ci_at folds A-Z only): other positions
    // are passed over at once (the needles at every byte were half of this check's cost).
    bool starts[256] = {};
    auto may_start = [&](char first) {
        starts[static_cast<unsigned char>(first)] = true;
        if (first >= 'a' && first <= 'z') starts[static_cast<unsigned char>(first - 'a' + 'A')] = true;
    };
    may_start('m');
    for (const Needle &n : needles) may_start(n.word[0]);
    auto harmless = [&](std::string_view field) {
        for (std::size_t i = 0; i < field.size(); ++i) {
            if (!starts[static_cast<unsigned char>(field[i])]) continue;
            for (const Needle &n : needles)
                if (text::ci_at(field, i, n.word)) {
                    if (!n.scanned) return false;
                    scan = true;
                }
            if (text::ci_at(field, i, "message")) {
                const std::size_t j = skip_blanks(field, i + 7);
                if (j < field.size() && field[j] == '(') return false;
                if (j < field.size() && field[j] == '/') {
                    const MessageSubtype sub = message_subtype(field, j + 1);
                    if (sub == MessageSubtype::Other || (sub == MessageSubtype::Embedded && check.index)) return false;
                    if (sub == MessageSubtype::Embedded) ++embedded;
                }
            }
        }
        return true;
    };
    std::size_t delimiters = 0, content_types = 0;
    bool empty_line_since = true; // since the last Content-Type field
    Lines lines(m);
    for (Line l; lines.next(l);) {
        const std::size_t line = l.begin;
        if (l.empty()) empty_line_since = true;
        if (m.compare(line, 2, "--") == 0) ++delimiters;
        if (check.index && text::ci_at(m, line, "content-id")) return false;
        if (text::ci_at(m, line, "content-type")) {
            if (!empty_line_since) return false;
            empty_line_since = false;
            ++content_types;
            if (!harmless(m.substr(line, field_end(m, line) - line))) return false;
        }
    }
    if (delimiters + embedded + 2 > limits.max_parts ||
        content_types > static_cast<std::size_t>(std::max(0, limits.max_depth)))
        return false;
    return !scan || nothing_to_edit_in_html(m, check);
}

} // namespace mimeuri
