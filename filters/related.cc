// The related pass (see related.hh): each HTML part's references resolved as the references
// pass resolves them (ref_resolver.hh), the parts they name that sit outside its related
// set or are not marked inline reported, and with --related=repair moved and marked, as
// splices on the input (docs/design.md): a moved part's bytes are copied as read.
#include "related.hh"
#include "related_report.hh"

#include "charsets.hh"
#include "gobj.hh"
#include "html_refs.hh"
#include "html_share.hh"
#include "html_tokenizer.hh"
#include "new_related.hh"
#include "ref_resolver.hh"
#include "text.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <map>
#include <set>

namespace mimeuri {

namespace related {

std::string inline_disposition(std::string_view raw_value)
{
    std::size_t b = 0;
    while (b < raw_value.size() && (raw_value[b] == ' ' || raw_value[b] == '\t' || raw_value[b] == '\n' || raw_value[b] == '\r'))
        ++b;
    std::size_t e = b;
    while (e < raw_value.size() && raw_value[e] != ';' && raw_value[e] != ' ' && raw_value[e] != '\t' &&
           raw_value[e] != '\n' && raw_value[e] != '\r' && raw_value[e] != '(')
        ++e;
    std::string out(raw_value.substr(0, b));
    if (out.empty()) out = " ";
    out += "inline";
    out += raw_value.substr(e);
    if (out.back() != '\n') out += '\n';
    return out;
}

std::string related_content_type(std::string_view raw_value, std::string_view root_type)
{
    std::string lower = text::ascii_lower(raw_value);
    // A type parameter already there: not ours to change.
    for (std::size_t at = lower.find("type"); at != std::string::npos; at = lower.find("type", at + 1)) {
        std::size_t before = at;
        while (before > 0 && (lower[before - 1] == ' ' || lower[before - 1] == '\t' || lower[before - 1] == '\n')) --before;
        std::size_t after = at + 4;
        while (after < lower.size() && (lower[after] == ' ' || lower[after] == '\t')) ++after;
        if (before > 0 && lower[before - 1] == ';' && after < lower.size() && lower[after] == '=') return "";
    }
    const std::size_t slash = lower.find('/');
    if (slash == std::string::npos) return "";
    std::size_t e = slash + 1;
    while (e < lower.size() && (g_ascii_isalnum(lower[e]) || lower[e] == '-' || lower[e] == '.' || lower[e] == '_')) ++e;
    std::string out = std::string(raw_value.substr(0, slash)) + "/related" + std::string(raw_value.substr(e));
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t')) out.pop_back();
    out += out.back() == ';' ? " " : "; ";
    out += "type=\"" + std::string(root_type) + "\"\n";
    return out;
}

std::optional<std::string> to_lf(std::string_view bytes, bool crlf)
{
    if (!crlf) return std::string(bytes);
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == '\n') return std::nullopt; // a bare LF: would come back as CRLF
        if (bytes[i] == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') {
            out += '\n';
            ++i;
            continue;
        }
        out += bytes[i];
    }
    return out;
}

} // namespace related

namespace {

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

bool starts_ci(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && g_ascii_strncasecmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// A part one HTML part references, that sits outside its related set or is not inline.
struct Finding {
    int html{-1};
    int target{-1};
    std::size_t entry{0}; // its report entry
};

class Related {
public:
    Related(MessageContext &ctx, const refs::MessageIndex &ix, const refs::Resolver &res) : ctx_(ctx), ix_(ix), res_(res) {}
    Status find(int html);
    void mark_shared();
    Status repair();

private:
    const Node &node(int i) const { return ctx_.nodes()[static_cast<std::size_t>(i)]; }
    std::optional<const html::Scan *> shared_scan(int html);
    Result<const html::Scan *> own_scan(int html, std::optional<html::Scan> &own);
    int related_of(int n) const;
    int set_of(int html) const;
    bool inside(int n, int ancestor) const { return ix_.is_descendant(n, ancestor); }
    std::vector<int> children(int parent) const;
    std::optional<std::string> disposition(const Node &n) const;
    RelatedEntry &entry(const Finding &f) { return ctx_.report().section<RelatedReport>().entries[f.entry]; }
    Result<std::int64_t> part_start(int n) const;
    Result<std::int64_t> line_after(int n) const;
    Result<std::string> moved_text(int n) const;
    bool clear(std::int64_t lo, std::int64_t hi) const;
    Status mark_inline(int t);
    bool markable(int t) const;
    Status repair_set(int set, std::vector<Finding *> &found);
    Status move_into(int rel, const std::vector<int> &movers);
    Status wrap(int root, const std::vector<int> &movers);

    MessageContext &ctx_;
    const refs::MessageIndex &ix_;
    const refs::Resolver &res_;
    std::vector<Finding> found_;
    std::map<int, std::set<int>> sets_of_target_; // every part referenced -> the sets that reference it
};

int Related::related_of(int n) const
{
    for (int p = node(n).parent; p >= 0 && node(p).kind == Node::Kind::Multipart; p = node(p).parent)
        if (is_type(node(p), "multipart", "related")) return p;
    return -1;
}

// The related set an HTML part belongs to: its multipart/related, else the entity that would
// become one (its multipart/alternative, or itself).
int Related::set_of(int html) const
{
    if (int r = related_of(html); r >= 0) return r;
    const int p = node(html).parent;
    if (p >= 0 && node(p).kind == Node::Kind::Multipart && is_type(node(p), "multipart", "alternative")) return p;
    return html;
}

std::vector<int> Related::children(int parent) const
{
    std::vector<int> out;
    for (std::size_t i = static_cast<std::size_t>(parent) + 1; i < ctx_.nodes().size(); ++i) {
        if (ctx_.nodes()[i].depth <= node(parent).depth) break;
        if (ctx_.nodes()[i].parent == parent) out.push_back(static_cast<int>(i));
    }
    return out;
}

std::optional<std::string> Related::disposition(const Node &n) const
{
    GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Disposition");
    if (!h) return std::nullopt;
    std::string v = ctx_.header_value(h);
    std::size_t b = v.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return std::string();
    std::size_t e = v.find_first_of("; \t\r\n(", b);
    return text::ascii_lower(std::string_view(v).substr(b, e == std::string::npos ? std::string::npos : e - b));
}

// Each reference of one HTML part resolved; the parts it names that are out of place reported.
// The references pass's scan of an HTML part as it is (HtmlShare), where this pass would make
// the same one (its first 1024 bytes sniffed as own_scan sniffs them: no conversion): the scan,
// or null where may_hold_reference finds nothing (own_scan reads nothing further then). That
// is true where a reference of the scan is a cid: or mid: URL (what it is the test for), and
// only else asked of the text. nullopt: own_scan decides.
std::optional<const html::Scan *> Related::shared_scan(int html)
{
    HtmlShare &share = HtmlShare::of(ctx_);
    const Node &h = node(html);
    const html::Scan *kept = share.scan(html, html::kDefaultHtmlMax);
    const std::string *head = kept ? share.head(ctx_, h, html::kDefaultHtmlMax) : nullptr;
    if (!head) return std::nullopt;
    const char *cs = g_mime_object_get_content_type_parameter(h.object, "charset");
    const HtmlEncoding enc = sniff_html_encoding(cs ? cs : "", *head);
    if (!enc.ascii_compatible && !enc.convert_from.empty()) return std::nullopt;
    const bool named = std::any_of(kept->refs.begin(), kept->refs.end(), [](const html::Ref &r) {
        return starts_ci(r.url, "cid:") || starts_ci(r.url, "mid:");
    });
    if (!named) {
        Result<Content> &content = share.decoded(ctx_, h, html::kDefaultHtmlMax);
        if (!content) return std::nullopt;
        if (!html::may_hold_reference(content->view())) return nullptr;
    }
    return kept;
}

// The part's scan made here: its text (read once with the data pass, HtmlShare) converted
// where its charset is not ASCII-compatible. Null: nothing to look at (not read, nothing
// may_hold_reference finds, a limit).
Result<const html::Scan *> Related::own_scan(int html, std::optional<html::Scan> &own)
{
    const Node &h = node(html);
    Result<Content> &content = HtmlShare::of(ctx_).decoded(ctx_, h, html::kDefaultHtmlMax);
    if (!content) return nullptr; // the references pass reports what cannot be read
    if (!html::may_hold_reference(content->view())) return nullptr;
    const char *cs = g_mime_object_get_content_type_parameter(h.object, "charset");
    std::string_view view = content->view();
    std::string converted;
    const HtmlEncoding enc = sniff_html_encoding(cs ? cs : "", view.substr(0, 1024));
    if (!enc.ascii_compatible && !enc.convert_from.empty()) {
        gsize written = 0;
        GCharPtr conv(g_convert(view.data(), static_cast<gssize>(view.size()), "UTF-8", enc.convert_from.c_str(), nullptr,
                                &written, nullptr));
        if (!conv) return nullptr;
        converted.assign(conv.get(), written);
        view = converted;
    }
    html::ParseLimits limits;
    limits.max_bytes = html::memory_cap(view.size(), html::kDefaultHtmlMax);
    limits.out_of_time = [this] { return ctx_.out_of_time(); };
    auto made = html::scan_refs(view, limits);
    if (!made) return made.error().code == Code::TempFail ? Result<const html::Scan *>(made.error()) : nullptr;
    if (made->stop != html::Stop::None) return nullptr;
    return &own.emplace(std::move(*made));
}

// Each reference of one HTML part resolved; the parts it names that are out of place reported.
Status Related::find(int html)
{
    const Node &h = node(html);
    HtmlShare &share = HtmlShare::of(ctx_);
    std::optional<html::Scan> own;
    const html::Scan *scan = nullptr;
    if (auto shared = shared_scan(html)) {
        scan = *shared;
    } else {
        auto made = own_scan(html, own);
        if (!made) return made.error();
        scan = *made;
    }
    if (!scan) return ok();
    std::string base = ix_.parts[static_cast<std::size_t>(html)].base;
    if (scan->base_href)
        if (std::string b = refs::resolve(base, *scan->base_href); !b.empty()) base = b;
    const int set = set_of(html);
    const int rel = related_of(html);
    std::set<int> seen;
    // Where the references pass resolved these references already: its answers for cid: URLs
    // (a cid: resolves to a part of this message whatever run index the resolver has; only
    // what is not found here is looked for in other messages).
    static const std::vector<int> none;
    const std::vector<int> &known = own ? none : share.cid_nodes(html); // (for the scan kept, not one made here)
    for (std::size_t ri = 0; ri < scan->refs.size(); ++ri) {
        const html::Ref &ref = scan->refs[ri];
        refs::Target t;
        if (starts_ci(ref.url, "cid:") && ri < known.size() && known[ri] != HtmlShare::kUnresolved) {
            if (known[ri] < 0) continue;
            t.status = refs::RefStatus::Resolved;
            t.node = known[ri];
        } else if (starts_ci(ref.url, "cid:")) t = res_.cid(ref.url, html, ref.padded);
        else if (ref.url.empty() || starts_ci(ref.url, "mid:") || starts_ci(ref.url, "data:") ||
                 starts_ci(ref.url, "javascript:") || starts_ci(ref.url, "mailto:") || ref.url[0] == '#')
            continue;
        else if (ix_.any_location || ix_.any_related_id) t = res_.location(ref.url, base, html);
        else continue;
        if (t.status != refs::RefStatus::Resolved || t.node < 0 || t.node == html || !t.message_id.empty()) continue;
        if (node(t.node).kind != Node::Kind::Leaf || !seen.insert(t.node).second) continue;
        const Node &tn = node(t.node);
        RelatedEntry e;
        e.part = h.section;
        e.url = ref.url;
        e.target = tn.section;
        if (rel >= 0) e.related = node(rel).section;
        e.outside = rel < 0 || !inside(t.node, rel);
        e.disposition = disposition(tn);
        if (tn.message != h.message) e.reason = "message"; // message/rfc822 is a world of its own
        else sets_of_target_[t.node].insert(set);
        // An attached message is a document the user received: read and reported, never
        // edited (as signed content is not).
        if (e.reason.empty() && h.message != ctx_.message()) e.reason = "attached-message";
        if (!e.outside && e.disposition == "inline") continue;
        if (e.reason.empty() && is_type(tn, "text", "html")) e.reason = "html"; // a page of its own
        found_.push_back({html, t.node, ctx_.report().section<RelatedReport>().entries.size()});
        ctx_.report().section<RelatedReport>().entries.push_back(std::move(e));
    }
    return ok();
}

// A part two related sets reference stays where it is: moving it breaks the other.
void Related::mark_shared()
{
    for (Finding &f : found_)
        if (entry(f).reason.empty() && sets_of_target_[f.target].size() > 1) entry(f).reason = "shared";
}

Status Related::repair()
{
    std::map<int, std::vector<Finding *>> by_set;
    for (Finding &f : found_)
        if (entry(f).reason.empty()) by_set[set_of(f.html)].push_back(&f);
    for (auto &[set, found] : by_set)
        if (Status s = repair_set(set, found); !s) return s;
    return ok();
}

// Where an entity starts: its first header field.
Result<std::int64_t> Related::part_start(int n) const
{
    std::int64_t start = -1;
    GMimeHeaderList *hl = MessageContext::headers_of(node(n));
    for (int i = 0; i < g_mime_header_list_get_count(hl); ++i) {
        std::int64_t off = g_mime_header_get_offset(g_mime_header_list_get_header_at(hl, i));
        if (off >= ctx_.segment().msg_begin && off < ctx_.segment().msg_end && (start < 0 || off < start)) start = off;
    }
    if (start < 0) return Error{Code::DataErr, "part " + node(n).section + " has no header field"};
    return start;
}

// The start of the delimiter line of n's multipart that follows n (the next part's, or the
// closing one): the first line "--boundary" after n's last leaf, alone on its line or closing.
Result<std::int64_t> Related::line_after(int n) const
{
    const Node &p = node(node(n).parent);
    const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(p.object));
    if (!b || !*b) return Error{Code::DataErr, "no boundary"};
    std::int64_t from = -1;
    for (std::size_t j = static_cast<std::size_t>(n); j < ctx_.nodes().size(); ++j) {
        if (j > static_cast<std::size_t>(n) && ctx_.nodes()[j].depth <= node(n).depth) break;
        if (ctx_.nodes()[j].kind == Node::Kind::Leaf)
            if (auto span = ctx_.content_span(ctx_.nodes()[j])) from = std::max(from, span->second);
    }
    const std::string delim = std::string("\n--") + b;
    const std::int64_t end = ctx_.segment().msg_end;
    constexpr std::int64_t kChunk = 64 << 10;
    for (std::int64_t at = from; from >= 0 && at < end; at += kChunk) {
        auto bytes = ctx_.source().slice(at, std::min(end, at + kChunk + static_cast<std::int64_t>(delim.size()) + 4));
        if (!bytes) return bytes.error();
        for (std::size_t k = bytes->find(delim); k != std::string::npos; k = bytes->find(delim, k + 1)) {
            if (static_cast<std::int64_t>(k) >= kChunk) break; // the next chunk looks again
            std::size_t e = k + delim.size();
            if (bytes->compare(e, 2, "--") == 0) e += 2;
            while (e < bytes->size() && ((*bytes)[e] == ' ' || (*bytes)[e] == '\t')) ++e;
            if (e < bytes->size() && (*bytes)[e] != '\n' && (*bytes)[e] != '\r') continue;
            return at + static_cast<std::int64_t>(k) + 1;
        }
    }
    return Error{Code::DataErr, "no delimiter after part " + node(n).section};
}

// A part to move: its header block and content as read, in LF for insert_lines (which gives
// back exactly these bytes), its disposition made inline.
Result<std::string> Related::moved_text(int n) const
{
    const Node &t = node(n);
    auto start = part_start(n);
    if (!start) return start.error();
    auto span = ctx_.content_span(t);
    if (!span) return span.error();
    auto raw = ctx_.source().slice(*start, span->second);
    if (!raw) return raw.error();
    const bool crlf = ctx_.eol() == Eol::CRLF;
    std::string out;
    GMimeHeader *cd = g_mime_header_list_get_header(MessageContext::headers_of(t), "Content-Disposition");
    if (!cd) {
        out = "Content-Disposition: inline\n";
        auto lf = related::to_lf(*raw, crlf);
        if (!lf) return Error{Code::DataErr, "line ends"};
        return out + *lf;
    }
    auto field = ctx_.raw_header(cd);
    if (!field) return field.error();
    const std::size_t at = static_cast<std::size_t>(g_mime_header_get_offset(cd) - *start);
    if (raw->compare(at, field->size(), *field) != 0) return Error{Code::DataErr, "Content-Disposition not where read"};
    auto before = related::to_lf(std::string_view(*raw).substr(0, at), crlf);
    auto after = related::to_lf(std::string_view(*raw).substr(at + field->size()), crlf);
    if (!before || !after) return Error{Code::DataErr, "line ends"};
    std::string value = related::inline_disposition(ctx_.header_value(cd));
    if (field->empty() || field->back() != '\n') value.pop_back();
    return *before + g_mime_header_get_raw_name(cd) + ":" + value + *after;
}

// Whether no edit made so far touches [lo, hi].
bool Related::clear(std::int64_t lo, std::int64_t hi) const
{
    for (const Edit &e : ctx_.edits()) {
        if (lo == hi && e.begin == e.end && lo == e.begin) return false; // two insertions at one place
        if (lo == hi ? e.begin < lo && lo < e.end : e.begin == e.end ? lo < e.begin && e.begin < hi : lo < e.end && e.begin < hi)
            return false;
    }
    return true;
}

// A part marked inline where it is: its Content-Disposition edited, or one put first in its
// header block (as a moved part gets it), not at the end, where another pass adds its fields
// (a Content-ID the references pass gives a target).
Status Related::mark_inline(int t)
{
    const Node &n = node(t);
    GMimeHeader *cd = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Disposition");
    if (cd) return ctx_.replace_header(cd, related::inline_disposition(ctx_.header_value(cd)));
    auto start = part_start(t);
    if (!start) return start.error();
    return ctx_.insert_lines(*start, "Content-Disposition: inline\n");
}

// Whether what mark_inline edits is untouched so far.
bool Related::markable(int t) const
{
    GMimeHeader *cd = g_mime_header_list_get_header(MessageContext::headers_of(node(t)), "Content-Disposition");
    if (cd) {
        auto field = ctx_.raw_header(cd);
        const std::int64_t off = g_mime_header_get_offset(cd);
        return field && clear(off, off + static_cast<std::int64_t>(field->size()));
    }
    auto start = part_start(t);
    return start && clear(*start, *start);
}

// An HTML part in a related set: the parts it names from outside go before its closing delimiter.
Status Related::move_into(int rel, const std::vector<int> &movers)
{
    const auto kids = children(rel);
    if (kids.empty()) return Error{Code::DataErr, "an empty multipart/related"};
    auto close = line_after(kids.back());
    if (!close) return close.error();
    if (!clear(*close, *close)) return Error{Code::DataErr, "edited"};
    const std::string b = g_mime_multipart_get_boundary(GMIME_MULTIPART(node(rel).object));
    std::string parts;
    for (int t : movers) {
        auto text = moved_text(t);
        if (!text) return text.error();
        parts += "--" + b + "\n" + *text + "\n";
    }
    for (int t : movers)
        if (Status s = ctx_.remove_part(node(t)); !s) return s;
    return ctx_.insert_lines(*close, parts);
}

// An HTML part in no related set: a multipart/mixed of it and the parts it names alone
// becomes the multipart/related; else a new one is spliced around it (or its alternative)
// and the parts, which move there.
Status Related::wrap(int root, const std::vector<int> &movers)
{
    const int m = node(root).parent;
    if (m < 0 || node(m).kind != Node::Kind::Multipart || node(m).message != node(root).message)
        return Error{Code::DataErr, "no multipart around the HTML"};
    const std::string root_type = is_type(node(root), "text", "html") ? "text/html" : "multipart/alternative";
    const auto kids = children(m);
    const std::set<int> moving(movers.begin(), movers.end());
    bool alone = is_type(node(m), "multipart", "mixed") && kids.front() == root;
    for (int k : kids) alone = alone && (k == root || moving.count(k));
    for (int t : movers) alone = alone && node(t).parent == m; // none to bring in from elsewhere
    if (alone) {
        GMimeHeader *ct = g_mime_header_list_get_header(MessageContext::headers_of(node(m)), "Content-Type");
        std::string v = ct ? related::related_content_type(ctx_.header_value(ct), root_type) : "";
        if (ct && !clear(g_mime_header_get_offset(ct), g_mime_header_get_offset(ct) + 1)) return Error{Code::DataErr, "edited"};
        if (!v.empty() && !ctx_.kept(node(m), "content-type")) {
            if (Status s = ctx_.replace_header(ct, v); !s) return s;
            for (int t : movers)
                if (Status s = mark_inline(t); !s) return s;
            return ok();
        }
    }
    // The parts that follow the root and move are removed with their delimiter lines: the new
    // parts go before the first delimiter line after them that stays.
    auto it = std::find(kids.begin(), kids.end(), root);
    int last = root;
    for (++it; it != kids.end() && moving.count(*it); ++it) last = *it;
    auto start = part_start(root);
    if (!start) return start.error();
    auto after = line_after(last);
    if (!after) return after.error();
    std::vector<std::string> texts;
    std::string all;
    for (int t : movers) {
        auto text = moved_text(t);
        if (!text) return text.error();
        all += *text;
        texts.push_back(std::move(*text));
    }
    auto root_bytes = ctx_.source().slice(*start, *after);
    if (!root_bytes) return root_bytes.error();
    // A boundary no line of the new parts holds, nor an enclosing boundary's prefix.
    const NewRelated nr = NewRelated::around(ctx_, node(root), "=_mimeuri_rel_", {*root_bytes, all}, {*root_bytes, all});
    std::string head = "Content-Type:" + nr.content_type(root_type) + "\n\n" + nr.delimiter();
    std::string tail;
    for (const std::string &t : texts) tail += nr.delimiter() + t + "\n";
    tail += nr.close() + "\n";
    if (!clear(*start, *start) || !clear(*after, *after)) return Error{Code::DataErr, "edited"};
    if (Status s = ctx_.insert_lines(*start, head); !s) return s;
    for (int t : movers)
        if (Status s = ctx_.remove_part(node(t)); !s) return s;
    return ctx_.insert_lines(*after, tail);
}

// One related set's findings: the parts to move and those to mark, each checked first
// (signed content, structure, another pass's edits); then all of the set's edits or none.
Status Related::repair_set(int set, std::vector<Finding *> &found)
{
    const int rel = related_of(found.front()->html);
    // An HTML entity another pass made something else (--data=attach's new related set):
    // the structure read is no longer the output's.
    for (Finding *f : found) {
        GMimeHeader *ct = g_mime_header_list_get_header(MessageContext::headers_of(node(f->html)), "Content-Type");
        if (ct && !clear(g_mime_header_get_offset(ct), g_mime_header_get_offset(ct) + 1)) {
            for (Finding *g : found) entry(*g).reason = "edited";
            return ok();
        }
    }
    std::vector<Finding *> todo;
    for (Finding *f : found) {
        const Node &t = node(f->target);
        RelatedEntry &e = entry(*f);
        std::optional<std::string> why = ctx_.kept(node(f->html));
        if (!why && e.outside) why = ctx_.kept(t);
        if (!why) why = ctx_.kept(t, "content-disposition");
        if (why) {
            e.action = RelatedEntry::Action::Kept;
            e.kept = *why;
            continue;
        }
        const int p = t.parent;
        if (e.outside && (p < 0 || node(p).kind != Node::Kind::Multipart || (rel < 0 && inside(f->target, set)))) {
            e.reason = "structure";
            continue;
        }
        auto start = part_start(f->target);
        auto span = ctx_.content_span(t);
        if (!start || !span) {
            e.reason = "structure";
            continue;
        }
        if (!(e.outside ? clear(*start - 1, span->second) : markable(f->target))) {
            e.reason = "edited";
            continue;
        }
        todo.push_back(f);
    }
    // A multipart every part of which would move out would be left with none (RFC 2046 5.1.1).
    std::set<int> movers_set, marks;
    for (Finding *f : todo) (entry(*f).outside ? movers_set : marks).insert(f->target);
    std::map<int, std::size_t> leaving;
    for (int t : movers_set) ++leaving[node(t).parent];
    for (auto &[p, n] : leaving)
        if (n >= children(p).size() && (rel >= 0 || p != node(set).parent))
            for (Finding *f : todo)
                if (node(f->target).parent == p && entry(*f).outside) entry(*f).reason = "structure";
    std::erase_if(todo, [this](Finding *f) { return !entry(*f).reason.empty(); });
    if (todo.empty()) return ok();
    std::set<int> movers_left, marks_left;
    for (Finding *f : todo) (entry(*f).outside ? movers_left : marks_left).insert(f->target);
    const std::vector<int> movers(movers_left.begin(), movers_left.end());
    const auto mark = ctx_.edit_mark();
    Status s = ok();
    if (!movers.empty()) s = rel >= 0 ? move_into(rel, movers) : wrap(set, movers);
    for (auto it = marks_left.begin(); s && it != marks_left.end(); ++it) s = mark_inline(*it);
    if (!s) {
        ctx_.rollback(mark);
        if (s.error().code == Code::Software || s.error().code == Code::TempFail) return s;
        const bool edited = s.error().message == "edited";
        if (!edited)
            ctx_.report().add_error(node(found.front()->html).section, ErrorCode::Rewrite,
                                    s.error().message + "; referenced parts not moved");
        for (Finding *f : todo) entry(*f).reason = edited ? "edited" : "rewrite";
        return ok();
    }
    for (Finding *f : todo) entry(*f).action = entry(*f).outside ? RelatedEntry::Action::Moved : RelatedEntry::Action::Marked;
    return ok();
}

} // namespace

InertHint RelatedPass::inert_hint() const
{
    const bool repair = opts_.mode == RelatedOptions::Mode::Repair;
    InertHint h;
    h.edited_types = {"text/html"};
    h.references_up_to = repair ? html::kDefaultHtmlMax : SIZE_MAX;
    h.may_hold_reference = [repair](std::string_view bytes) { return repair && html::may_hold_reference(bytes); };
    h.reports_only = !repair;
    return h;
}

Status RelatedPass::apply(MessageContext &ctx)
{
    if (opts_.mode == RelatedOptions::Mode::Off || !ctx.message()) return ok();
    const auto &nodes = ctx.nodes();
    // Nothing to find without a multipart, an HTML part and a part it can name.
    const refs::MessageIndex ix = refs::index_message(ctx);
    bool html = false, named = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].kind != Node::Kind::Leaf) continue;
        html = html || is_type(nodes[i], "text", "html");
        named = named || !ix.parts[i].cid_clean.empty() || !ix.parts[i].location.empty();
    }
    if (!html || !named || nodes.front().kind != Node::Kind::Multipart) return ok();
    const refs::Resolver resolver(ix, none_);
    Related r(ctx, ix, resolver);
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == Node::Kind::Leaf && GMIME_IS_PART(nodes[i].object) && is_type(nodes[i], "text", "html"))
            if (Status s = r.find(static_cast<int>(i)); !s) return s;
    r.mark_shared();
    return opts_.mode == RelatedOptions::Mode::Repair ? r.repair() : ok();
}

} // namespace mimeuri
