// message_edit: the edit API of MessageContext, and the protections that guard it.
//
// SYNOPSIS  replace_header, add_header, set_sole_header, replace_body, remove_part record
//           byte-range edits on the original input (Edit); finish() makes the edits that
//           follow from the others; protect(), kept() and touched() keep signed content.
// Edits are spliced into the input's bytes by the writer (src/run/output.cc); nothing is
// re-serialised (docs/design.md, "Edits are splices on the original bytes").
#include "message.hh"

#include "streamed_body.hh"
#include "text.hh"

#include <algorithm>
#include <cstring>

namespace mimeuri {

namespace {

constexpr std::size_t max_line = 998; // RFC 5322 2.1.1

// Whether an edit of [b, e) meets [pb, pe); an insertion (b == e) meets what it lands inside.
bool overlaps(std::int64_t b, std::int64_t e, std::int64_t pb, std::int64_t pe)
{
    if (b == e) return pb < b && b < pe;
    if (pb == pe) return b < pb && pb < e;
    return b < pe && pb < e;
}

} // namespace

Status check_header_value(std::string_view name, std::string_view raw_value)
{
    if (name.empty()) return Error{Code::Software, "empty header name"};
    for (char c : name) {
        auto u = static_cast<unsigned char>(c);
        if (u < 33 || u > 126 || c == ':') return Error{Code::Software, "invalid header name"};
    }
    std::size_t line_len = name.size() + 1;
    for (std::size_t i = 0; i < raw_value.size(); ++i) {
        char c = raw_value[i];
        if (c == '\r' || c == '\0')
            return Error{Code::DataErr, std::string(name) + ": CR or NUL refused in a header value"};
        if (c == '\n') {
            bool last = i + 1 == raw_value.size();
            if (!last && raw_value[i + 1] != ' ' && raw_value[i + 1] != '\t')
                return Error{Code::DataErr, std::string(name) + ": line break would start a new header; refused"};
            // A folded line of white space only is not a valid continuation (RFC 5322
            // 3.2.2 obs-FWS aside); readers end the header block at it or treat it as blank.
            if (!last) {
                std::size_t j = i + 1;
                while (j < raw_value.size() && (raw_value[j] == ' ' || raw_value[j] == '\t')) ++j;
                if (j == raw_value.size() || raw_value[j] == '\n')
                    return Error{Code::DataErr, std::string(name) + ": a folded line of white space only; refused"};
            }
            line_len = 0;
            continue;
        }
        if (++line_len > max_line)
            return Error{Code::DataErr, std::string(name) + ": header line longer than 998 octets"};
    }
    return ok();
}

std::string MessageContext::to_eol(std::string_view lf_text) const
{
    if (eol_ != Eol::CRLF) return std::string(lf_text);
    std::string out;
    out.reserve(lf_text.size() + lf_text.size() / 32);
    for (std::size_t at = 0; at < lf_text.size();) { // a line at a time
        std::size_t nl = lf_text.find('\n', at);
        if (nl == std::string_view::npos) {
            out.append(lf_text.substr(at));
            break;
        }
        out.append(lf_text.substr(at, nl - at)).append("\r\n", 2);
        at = nl + 1;
    }
    return out;
}

Status MessageContext::add_edit(std::int64_t begin, std::int64_t end, std::string text)
{
    if (eol_ == Eol::CR)
        return Error{Code::DataErr, "CR-only line endings: GMime cannot parse this message reliably; not rewritten"};
    protections_ready();
    if (begin < seg_.msg_begin || end > seg_.msg_end || end < begin)
        return Error{Code::Software, "edit outside its message"};
    for (const Edit &e : edits_)
        if (overlaps(begin, end, e.begin, e.end)) return Error{Code::Software, "overlapping edits"};
    // The safety net under the passes' own questions (kept()): signed content is never changed.
    if (const Protection *p = protection_for(begin, end, edited_field(begin, text), true))
        return Error{Code::DataErr, "refused: the edit would break a " + p->reason + " signature"};
    edits_.push_back({begin, end, std::move(text)});
    report_.changed = true;
    return ok();
}

Status MessageContext::replace_header(GMimeHeader *h, std::string_view raw_value)
{
    // The field is written under the name readers give it: RFC 5322 4.5.3 (obs-optional)
    // allows white space before the colon, which GMime keeps in the raw name ("Mimeuri-Refs :")
    // and every reader drops. Written as it came, it would be refused as no valid name.
    const char *raw_name = g_mime_header_get_raw_name(h);
    std::string name = raw_name ? raw_name : "";
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    std::string value(raw_value);
    if (value.empty() || value.back() != '\n') value += '\n';
    if (auto s = check_header_value(name, value); !s) return s;
    auto raw = raw_header(h);
    if (!raw) return raw.error();
    std::int64_t off = g_mime_header_get_offset(h);
    // A field that ends the input with no line break keeps having none: a break written
    // there, before a field another pass adds after the block ("\nName: ..."), would make
    // an empty line and push that field into the body.
    std::string field = to_eol(name + ":" + value);
    if (raw->empty() || raw->back() != '\n')
        while (!field.empty() && (field.back() == '\n' || field.back() == '\r')) field.pop_back();
    if (auto s = add_edit(off, off + static_cast<std::int64_t>(raw->size()), field); !s)
        return s;
    replaced_.emplace_back(h, value);
    return ok();
}

std::string MessageContext::header_value(GMimeHeader *h) const
{
    for (auto it = replaced_.rbegin(); it != replaced_.rend(); ++it)
        if (it->first == h) return it->second;
    const char *raw = g_mime_header_get_raw_value(h);
    std::string out;
    for (const char *p = raw ? raw : ""; *p; ++p)
        if (*p != '\r') out += *p;
    return out;
}

Status MessageContext::add_header(const Node &n, std::string_view name, std::string_view raw_value)
{
    std::string value(raw_value);
    if (value.empty() || value.back() != '\n') value += '\n';
    if (auto s = check_header_value(name, value); !s) return s;
    auto at = header_block_end(n);
    if (!at) return at.error();
    // A header block that ends the input with no line break: the new field goes on a line of
    // its own, and the block still ends as it did (several additions stay separate lines).
    if (*at > seg_.msg_begin) {
        char before;
        auto r = src_->read_at(*at - 1, &before, 1);
        if (!r) return r.error();
        // A bare CR there: the block is not in any line-ending convention an insertion could
        // follow (readers differ on whether a CR ends a line). Nothing is added.
        if (before == '\r')
            return Error{Code::DataErr, "the header block ends in a bare CR; " + std::string(name) + " not added"};
        if (before != '\n') {
            value.pop_back();
            return add_edit(*at, *at, to_eol(std::string("\n").append(name).append(":").append(value)));
        }
    }
    return add_edit(*at, *at, to_eol(std::string(name) + ":" + value));
}

Status MessageContext::set_sole_header(const Node &n, std::string_view name, std::string_view raw_value)
{
    std::vector<GMimeHeader *> found;
    std::vector<std::int64_t> offsets; // a top-level header may be on both lists
    auto collect = [&](GMimeHeaderList *list) {
        for (int i = 0; list && i < g_mime_header_list_get_count(list); ++i) {
            GMimeHeader *h = g_mime_header_list_get_header_at(list, i);
            const char *hn = g_mime_header_get_name(h);
            if (!hn || g_ascii_strncasecmp(hn, name.data(), name.size()) != 0 || hn[name.size()] != '\0') continue;
            std::int64_t off = g_mime_header_get_offset(h);
            if (std::find(offsets.begin(), offsets.end(), off) != offsets.end()) continue;
            offsets.push_back(off);
            found.push_back(h);
        }
    };
    collect(headers_of(n));
    if (n.top_level() && message_) collect(g_mime_object_get_header_list(GMIME_OBJECT(message_.get())));
    if (found.empty()) return add_header(n, name, raw_value);
    std::sort(found.begin(), found.end(),
              [](GMimeHeader *a, GMimeHeader *b) { return g_mime_header_get_offset(a) < g_mime_header_get_offset(b); });
    const std::string want = text::without_space(raw_value);
    for (std::size_t i = 0; i < found.size(); ++i) {
        if (i > 0) {
            auto raw = raw_header(found[i]);
            if (!raw) return raw.error();
            std::int64_t off = g_mime_header_get_offset(found[i]);
            if (auto s = add_edit(off, off + static_cast<std::int64_t>(raw->size()), ""); !s) return s;
        } else if (text::without_space(header_value(found[i])) != want) {
            if (auto s = replace_header(found[i], raw_value); !s) return s;
        }
    }
    return ok();
}

Status MessageContext::replace_body(const Node &n, std::string encoded, bool convert_eol)
{
    auto span = content_span(n);
    if (!span) return span.error();
    auto [begin, end] = *span;
    // Keep whether the content ended with a line break: that break may belong to the
    // structure around it.
    bool had_nl = false;
    if (end > begin) {
        char c;
        auto r = src_->read_at(end - 1, &c, 1);
        if (!r) return r.error();
        had_nl = c == '\n';
    }
    std::string text = std::move(encoded);
    if (had_nl && (text.empty() || text.back() != '\n')) text += '\n';
    while (!had_nl && !text.empty() && text.back() == '\n') text.pop_back();
    if (in_mbox_ && !length_split_) {
        // A new line starting "From " would open a message in an mbox: quote it. Not where a
        // Content-Length splits the message (mboxcl2): readers of it do not unquote, and
        // finish() keeps that length true.
        // Found with memmem, not line by line: encoded text has short lines and no such line.
        auto next_from = [&](std::size_t at) -> std::size_t {
            if (at == 0 && text.compare(0, 5, "From ") == 0) return 0;
            const void *hit = at >= text.size() ? nullptr : ::memmem(text.data() + at, text.size() - at, "\nFrom ", 6);
            return hit ? static_cast<std::size_t>(static_cast<const char *>(hit) - text.data()) + 1 : std::string::npos;
        };
        if (std::size_t at = next_from(0); at != std::string::npos) {
            std::string quoted;
            quoted.reserve(text.size() + 64);
            std::size_t done = 0;
            for (; at != std::string::npos; at = next_from(at)) {
                quoted.append(text, done, at - done).append(1, '>');
                done = at;
            }
            quoted.append(text, done, std::string::npos);
            text = std::move(quoted);
        }
    }
    // RFC 2046 5.1.1: a line starting "--" and an enclosing multipart's boundary is a
    // delimiter, whatever follows. None may be written inside a body.
    std::vector<std::string> boundaries;
    for (int p = n.parent; p >= 0; p = nodes_[static_cast<std::size_t>(p)].parent) {
        const Node &pn = nodes_[static_cast<std::size_t>(p)];
        if (pn.kind != Node::Kind::Multipart) continue;
        if (const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(pn.object))) boundaries.emplace_back(b);
    }
    // A line starts at 0 and after each LF (and CR, when the text keeps its own line ends).
    // Found from the dashes (memchr), not line by line: encoded text has short lines, and
    // none starting with "-".
    bool delimiter = false;
    for (const char *p = text.data(), *stop = p + text.size(); !delimiter && p < stop;) {
        p = static_cast<const char *>(std::memchr(p, '-', static_cast<std::size_t>(stop - p)));
        if (!p) break;
        const bool line_start = p == text.data() || p[-1] == '\n' || (!convert_eol && p[-1] == '\r');
        if (line_start && p + 1 < stop && p[1] == '-') {
            const std::size_t line = static_cast<std::size_t>(p - text.data());
            for (const auto &b : boundaries) delimiter = delimiter || text.compare(line + 2, b.size(), b) == 0;
        }
        ++p;
    }
    if (delimiter)
        return Error{Code::DataErr, "part " + n.section + ": the new content holds a delimiter line of an enclosing multipart; not rewritten"};
    if (convert_eol && eol_ == Eol::CRLF) return add_edit(begin, end, to_eol(text));
    return add_edit(begin, end, std::move(text));
}

Status MessageContext::replace_body(const Node &n, StreamedBody body)
{
    auto span = content_span(n);
    if (!span) return span.error();
    auto [begin, end] = *span;
    if (end > begin) {
        char c;
        auto r = src_->read_at(end - 1, &c, 1);
        if (!r) return r.error();
        body.had_nl = c == '\n';
    }
    body.crlf = eol_ == Eol::CRLF;
    // No From_ quoting and no delimiter check to make: quoted-printable writes no line
    // starting with '-' or "From " (that octet is encoded), base64 neither '-' nor ' '.
    return replace_span(begin, end, std::move(body));
}

Status MessageContext::replace_span(std::int64_t begin, std::int64_t end, StreamedBody body)
{
    if (Status s = add_edit(begin, end, std::string()); !s) return s;
    edits_.back().streamed = std::make_shared<const StreamedBody>(std::move(body));
    return ok();
}

char MessageContext::output_byte_before(std::size_t insertion) const
{
    // The output holds, before an insertion at p: the insertions at p made before it, else the
    // text of an edit ending at p (an empty one: look before it), else the input's byte.
    std::int64_t pos = edits_[insertion].begin;
    std::size_t upto = insertion; // insertions at pos that count: edits_[0, upto)
    for (;;) {
        for (std::size_t i = upto; i-- > 0;)
            if (edits_[i].begin == pos && edits_[i].end == pos && !edits_[i].text.empty()) return edits_[i].text.back();
        const Edit *span = nullptr;
        for (const Edit &e : edits_)
            if (e.end == pos && e.begin < pos) span = &e;
        if (!span) break;
        if (!span->text.empty()) return span->text.back();
        pos = span->begin;
        upto = edits_.size();
    }
    if (pos <= seg_.msg_begin) return '\0';
    char c = '\0';
    (void)src_->read_at(pos - 1, &c, 1);
    return c;
}

Status MessageContext::finish()
{
    // add_header starts a field added to a header block that ended with no line break with
    // one. Where a copy removed since (set_sole_header) or before was that block's last field,
    // the output already has a line break there: a second would make an empty line and push
    // the added field into the body.
    const std::string eol = to_eol("\n");
    // A streamed body becomes text where its length or last byte is needed: a Content-Length
    // counts it, or a field is added right after it.
    for (Edit &e : edits_) {
        if (!e.streamed) continue;
        bool needed = length_split_.has_value();
        for (const Edit &o : edits_) needed = needed || (o.begin == o.end && o.begin == e.end);
        if (!needed) continue;
        auto text = edit_text(e, reader_of(*src_));
        if (!text) return text.error();
        e.text = std::move(*text);
        e.streamed.reset();
    }
    for (std::size_t i = 0; i < edits_.size(); ++i) {
        Edit &e = edits_[i];
        if (e.begin == e.end && e.text.compare(0, eol.size(), eol) == 0 && output_byte_before(i) == '\n')
            e.text.erase(0, eol.size());
    }
    // No Content-Length that split the input: readers go by From_ lines.
    if (!length_split_ || edits_.empty() || !message_) return ok();
    const auto &cl = length_split_;
    std::int64_t delta = 0;
    for (const Edit &e : edits_)
        if (e.begin >= cl->body_begin) delta += static_cast<std::int64_t>(e.text.size()) - (e.end - e.begin);
    if (delta == 0) return ok();
    const std::string value = std::string(" ").append(std::to_string(cl->length + delta)).append("\n");
    // GMime files Content-* headers with the top-level part, the rest with the message.
    std::vector<std::int64_t> replaced; // a header may be on both lists
    for (GMimeObject *o : {GMIME_OBJECT(message_.get()), g_mime_message_get_mime_part(message_.get())}) {
        GMimeHeaderList *list = o ? g_mime_object_get_header_list(o) : nullptr;
        for (int i = 0; list && i < g_mime_header_list_get_count(list); ++i) {
            GMimeHeader *h = g_mime_header_list_get_header_at(list, i);
            if (g_ascii_strcasecmp(g_mime_header_get_name(h), "Content-Length") != 0) continue;
            std::int64_t off = g_mime_header_get_offset(h);
            if (std::find(replaced.begin(), replaced.end(), off) != replaced.end()) continue;
            if (auto s = replace_header(h, value); !s) return s;
            replaced.push_back(off);
        }
    }
    if (replaced.empty()) return Error{Code::DataErr, "the Content-Length that split this message was not found to update"};
    return ok();
}

Result<std::int64_t> MessageContext::part_start(const Node &n) const
{
    if (n.parent < 0 || nodes_[static_cast<std::size_t>(n.parent)].kind != Node::Kind::Multipart)
        return Error{Code::Software, "part_start on a part outside a multipart"};
    // Where the part starts: its first header, or the blank line of an empty header block.
    std::int64_t start = -1;
    GMimeHeaderList *hl = headers_of(n);
    for (int i = 0; i < g_mime_header_list_get_count(hl); ++i) {
        std::int64_t off = g_mime_header_get_offset(g_mime_header_list_get_header_at(hl, i));
        if (off >= seg_.msg_begin && (start < 0 || off < start)) start = off;
    }
    if (start < 0) {
        auto blank = header_block_end(n);
        if (!blank) return blank.error();
        start = *blank;
    }
    return start;
}

Status MessageContext::remove_part(const Node &n)
{
    if (n.parent < 0 || nodes_[static_cast<std::size_t>(n.parent)].kind != Node::Kind::Multipart)
        return Error{Code::Software, "remove_part on a part outside a multipart"};
    if (n.kind != Node::Kind::Leaf) return Error{Code::DataErr, "only leaf parts are removed"};
    GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
    GMimeStream *s = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
    if (!s) return Error{Code::DataErr, "part " + n.section + " has no content"};
    auto first = part_start(n);
    if (!first) return first.error();
    const std::int64_t start = *first;
    // The delimiter line before it, and the line break before that, which RFC 2046 5.1.1
    // makes part of the delimiter.
    auto before = src_->slice(std::max(seg_.msg_begin, start - 4096), start);
    if (!before) return before.error();
    const std::string &b = *before;
    if (b.empty() || b.back() != '\n') return Error{Code::DataErr, "no delimiter line before part " + n.section};
    auto prev_nl = b.find_last_of('\n', b.size() - 2);
    if (prev_nl == std::string::npos) return Error{Code::DataErr, "no delimiter line before part " + n.section};
    std::size_t line = prev_nl + 1;
    if (b.compare(line, 2, "--") != 0) return Error{Code::DataErr, "no delimiter line before part " + n.section};
    std::size_t cut = prev_nl;
    if (cut > 0 && b[cut - 1] == '\r') --cut;
    std::int64_t begin = start - static_cast<std::int64_t>(b.size()) + static_cast<std::int64_t>(cut);
    auto span = content_span(n);
    if (!span) return span.error();
    return add_edit(begin, span->second, "");
}

// The name of the field an edit in a header block adds or replaces (its text starts with
// it, after a line break for a block that ended the input) or removes (read from the input).
std::string MessageContext::edited_field(std::int64_t begin, std::string_view text) const
{
    std::string head(text.substr(0, 256));
    if (head.empty()) {
        auto r = src_->slice(begin, std::min(seg_.msg_end, begin + 256));
        if (r) head = std::move(*r);
    }
    std::size_t b = head.find_first_not_of("\r\n");
    std::size_t colon = head.find(':', b == std::string::npos ? 0 : b);
    if (b == std::string::npos || colon == std::string::npos) return {};
    // White space before the colon is no part of the name (RFC 5322 4.5.3; DKIM's relaxed
    // canonicalisation, RFC 6376 3.4.2, drops it too).
    std::size_t e = colon;
    while (e > b && (head[e - 1] == ' ' || head[e - 1] == '\t')) --e;
    return text::ascii_lower(std::string_view(head).substr(b, e - b));
}

std::size_t MessageContext::protect(Protection p)
{
    for (auto &n : p.names) n = text::ascii_lower(n);
    protections_.push_back(std::move(p));
    return protections_.size() - 1;
}

const MessageContext::Protection *MessageContext::protection_for(std::int64_t begin, std::int64_t end,
                                                                 const std::string &field, bool enforced_only) const
{
    for (const Protection &p : protections_) {
        if (enforced_only && !p.enforce) continue;
        if (p.names.empty() ? overlaps(begin, end, p.begin, p.end)
                            : (begin >= p.begin && end <= p.end && !field.empty() &&
                               std::find(p.names.begin(), p.names.end(), field) != p.names.end()))
            return &p;
    }
    return nullptr;
}

bool MessageContext::touched(std::size_t i) const
{
    protections_ready();
    const Protection &p = protections_.at(i);
    for (const Edit &e : edits_) {
        if (p.names.empty() ? overlaps(e.begin, e.end, p.begin, p.end)
                            : (e.begin >= p.begin && e.end <= p.end &&
                               std::find(p.names.begin(), p.names.end(), edited_field(e.begin, e.text)) != p.names.end()))
            return true;
    }
    return false;
}

std::optional<std::string> MessageContext::kept(const Node &n, std::string_view header) const
{
    protections_ready();
    if (protections_.empty()) return std::nullopt;
    const Protection *p = nullptr;
    if (header.empty()) {
        // A leaf's content, and its header block (a part removed takes both).
        auto span = content_span(n);
        if (!span) return std::nullopt; // the edit itself will fail, and say why
        std::int64_t begin = span->first;
        GMimeHeaderList *hl = headers_of(n);
        for (int i = 0; hl && i < g_mime_header_list_get_count(hl); ++i) {
            std::int64_t off = g_mime_header_get_offset(g_mime_header_list_get_header_at(hl, i));
            if (off >= seg_.msg_begin) begin = std::min(begin, off);
        }
        p = protection_for(begin, std::max(span->second, begin + 1), {}, true);
    } else {
        const std::string field = text::ascii_lower(header);
        if (auto at = header_block_end(n)) p = protection_for(*at, *at, field, true);
        for (GMimeHeaderList *hl : {headers_of(n), n.top_level() && message_ ? g_mime_object_get_header_list(GMIME_OBJECT(message_.get())) : nullptr}) {
            for (int i = 0; !p && hl && i < g_mime_header_list_get_count(hl); ++i) {
                GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
                const char *hn = g_mime_header_get_name(h);
                if (!hn || g_ascii_strcasecmp(hn, field.c_str()) != 0) continue;
                std::int64_t off = g_mime_header_get_offset(h);
                if (auto raw = raw_header(h)) p = protection_for(off, off + static_cast<std::int64_t>(raw->size()), field, true);
            }
        }
    }
    if (!p) return std::nullopt;
    return p->reason;
}


} // namespace mimeuri
