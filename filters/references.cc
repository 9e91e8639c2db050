// The reference pass over one message: the steps (see references.hh) in order, and what is
// left for the whole message once every HTML part is done.
#include "references.hh"

#include "charsets.hh"
#include "html_refs.hh"
#include "html_tokenizer.hh"
#include "ref_index.hh"
#include "ref_pages.hh"
#include "ref_part.hh"
#include "ref_resolver.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <map>
#include <optional>

namespace mimeuri {

namespace {

using refs::Tally;

// Generated Content-IDs for targets that had none (a location made cid:, a cid: that named
// a Content-Location).
Status add_content_ids(MessageContext &ctx, const Tally &tally)
{
    const auto &nodes = ctx.nodes();
    for (auto &[node, id] : tally.new_content_ids) {
        const Node &n = nodes[static_cast<std::size_t>(node)];
        if (auto why = ctx.kept(n, "Content-ID")) {
            ctx.report().add_kept(n.section, "content-id", *why);
            continue;
        }
        Status s = ctx.add_header(n, "Content-ID", " <" + id + ">\n");
        if (!s) {
            if (s.error().code == Code::Software) return s;
            ctx.report().add_error(n.section, ErrorCode::Rewrite, s.error().message);
        }
    }
    return ok();
}

// Text as loosely as any reader may read a name in it, for --drop-inlined's count of what
// names a part: character references (numeric, and the named ones for ASCII punctuation),
// CSS escapes and %XX decoded, ASCII tabs and newlines removed, ASCII letters in lower case;
// twice over (an <iframe srcdoc> holds HTML escaped once more). Decoding more than a reader
// does only finds more names, which keeps more parts.
std::string loosened(std::string_view text)
{
    static const std::pair<std::string_view, char> named[] = {
        {"amp", '&'},     {"lt", '<'},       {"gt", '>'},       {"quot", '"'},    {"apos", '\''},  {"colon", ':'},
        {"commat", '@'},  {"period", '.'},   {"sol", '/'},      {"percnt", '%'},  {"num", '#'},     {"lowbar", '_'},
        {"hyphen", '-'},  {"dash", '-'},     {"equals", '='},   {"semi", ';'},    {"comma", ','},   {"excl", '!'},
        {"dollar", '$'},  {"plus", '+'},     {"quest", '?'},    {"ast", '*'},     {"lpar", '('},    {"rpar", ')'},
        {"lsqb", '['},    {"rsqb", ']'},     {"lbrack", '['},   {"rbrack", ']'},  {"lcub", '{'},    {"rcub", '}'},
        {"bsol", '\\'}, {"verbar", '|'},   {"grave", '`'},    {"hat", '^'},     {"tilde", '~'},   {"tab", '\t'},
        {"newline", '\n'}, {"underbar", '_'}, {"midast", '*'}, {"nbsp", ' '}};
    std::string cur(text), out;
    for (int round = 0; round < 2; ++round) {
        out.clear();
        out.reserve(cur.size());
        for (std::size_t i = 0; i < cur.size();) {
            const char c = cur[i];
            if (c == '&' && i + 1 < cur.size()) {
                std::size_t j = i + 1;
                if (cur[j] == '#') {
                    ++j;
                    const bool hex = j < cur.size() && (cur[j] == 'x' || cur[j] == 'X');
                    if (hex) ++j;
                    const std::size_t first = j;
                    unsigned long cp = 0;
                    for (; j < cur.size() && (hex ? g_ascii_isxdigit(cur[j]) : g_ascii_isdigit(cur[j])); ++j)
                        cp = std::min(0x110000ul, cp * (hex ? 16 : 10) + static_cast<unsigned long>(g_ascii_xdigit_value(cur[j])));
                    if (j > first) {
                        if (j < cur.size() && cur[j] == ';') ++j;
                        out += cp > 0 && cp < 0x80 ? static_cast<char>(cp) : '\x80';
                        i = j;
                        continue;
                    }
                } else {
                    bool done = false;
                    for (const auto &[name, ch] : named)
                        if (cur.size() - j >= name.size() && g_ascii_strncasecmp(cur.data() + j, name.data(), name.size()) == 0) {
                            j += name.size();
                            if (j < cur.size() && cur[j] == ';') ++j;
                            out += ch;
                            i = j;
                            done = true;
                            break;
                        }
                    if (done) continue;
                }
            }
            if (c == '\\' && i + 1 < cur.size()) { // CSS Syntax 4.3.7
                std::size_t j = i + 1;
                unsigned long cp = 0;
                std::size_t n = 0;
                for (; j < cur.size() && n < 6 && g_ascii_isxdigit(cur[j]); ++j, ++n)
                    cp = cp * 16 + static_cast<unsigned long>(g_ascii_xdigit_value(cur[j]));
                if (n > 0) {
                    if (j < cur.size() && (cur[j] == ' ' || cur[j] == '\t' || cur[j] == '\n')) ++j;
                    out += cp > 0 && cp < 0x80 ? static_cast<char>(cp) : '\x80';
                    i = j;
                } else {
                    out += cur[i + 1];
                    i += 2;
                }
                continue;
            }
            if (c == '%' && i + 2 < cur.size() && g_ascii_isxdigit(cur[i + 1]) && g_ascii_isxdigit(cur[i + 2])) {
                out += static_cast<char>(g_ascii_xdigit_value(cur[i + 1]) * 16 + g_ascii_xdigit_value(cur[i + 2]));
                i += 3;
                continue;
            }
            out += c;
            ++i;
        }
        cur.swap(out);
    }
    out.clear();
    for (char c : cur)
        if (c != '\t' && c != '\n' && c != '\r') out += static_cast<char>(g_ascii_tolower(c));
    return out;
}

std::size_t occurrences(std::string_view text, std::string_view needle)
{
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// --drop-inlined drops a part only where nothing the scans did not read may name it: every
// HTML and stylesheet part was read whole (tally.unread), and the part's names (its
// Content-ID as decoded and as written, its Content-Location's last segment) occur no more
// often in those parts' texts, loosened, than in the URLs of the references read, loosened
// alike. What the scanner skips (CSS image-set(), <iframe srcdoc>, an attribute it does not
// read) and names the part keeps it. nullopt: droppable; else why not.
std::optional<std::string> named_unread(const MessageContext &ctx, const refs::MessageIndex &ix, const Tally &tally,
                                        const RefOptions &opts, const std::vector<int> &targets,
                                        std::map<int, std::string> &why)
{
    if (!tally.unread.empty()) return tally.unread + "; an unread part may name it";
    // The names of each target, and how often the references read hold each.
    struct Name {
        int node;
        std::string text;
        std::size_t in_refs{0}, in_text{0};
    };
    std::vector<Name> names;
    for (int t : targets) {
        const refs::IndexedPart &p = ix.parts[static_cast<std::size_t>(t)];
        std::vector<std::string> own;
        for (const std::string *id : {&p.cid_clean, &p.cid_raw})
            if (!id->empty()) own.push_back(loosened(*id));
        if (!p.location_unescaped.empty()) {
            std::string loc = p.location_unescaped;
            while (!loc.empty() && loc.back() == '/') loc.pop_back();
            own.push_back(loosened(loc.substr(loc.rfind('/') == std::string::npos ? 0 : loc.rfind('/') + 1)));
        }
        for (std::string &n : own)
            if (!n.empty()) names.push_back({t, std::move(n)});
    }
    for (const std::string &url : tally.read_urls) {
        const std::string l = loosened(url);
        for (Name &n : names) n.in_refs += occurrences(l, n.text);
    }
    const auto &nodes = ctx.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (n.kind != Node::Kind::Leaf) continue;
        GMimeContentType *ct = g_mime_object_get_content_type(n.object);
        if (!ct || !(g_mime_content_type_is_type(ct, "text", "html") || g_mime_content_type_is_type(ct, "text", "css"))) continue;
        auto bytes = ctx.decoded_content(n, opts.html_max);
        if (!bytes) return "part " + n.section + ": " + bytes.error().message + "; it may name it";
        const std::string l = loosened(bytes->view());
        for (Name &nm : names) nm.in_text += occurrences(l, nm.text);
    }
    for (const Name &n : names)
        if (n.in_text > n.in_refs)
            why.emplace(n.node, "a part names it where no reference was read (" + std::to_string(n.in_text - n.in_refs) +
                                    " time(s)); kept");
    return std::nullopt;
}

// --drop-inlined: parts every reference of which was inlined, that nothing unread may name.
Status drop_inlined(MessageContext &ctx, const refs::MessageIndex &ix, const Tally &tally, const RefOptions &opts)
{
    const auto &nodes = ctx.nodes();
    std::vector<int> candidates;
    for (int node : tally.inlined_targets)
        if (!tally.kept_targets.count(node)) candidates.push_back(node);
    if (candidates.empty()) return ok();
    std::map<int, std::string> named;
    if (auto all = named_unread(ctx, ix, tally, opts, candidates, named)) {
        for (int node : candidates)
            ctx.report().add_error(nodes[static_cast<std::size_t>(node)].section, ErrorCode::Drop, "not dropped: " + *all);
        return ok();
    }
    std::map<int, std::vector<int>> by_parent;
    for (int node : candidates) {
        if (auto w = named.find(node); w != named.end()) {
            ctx.report().add_error(nodes[static_cast<std::size_t>(node)].section, ErrorCode::Drop, "not dropped: " + w->second);
            continue;
        }
        by_parent[nodes[static_cast<std::size_t>(node)].parent].push_back(node);
    }
    for (auto &group : by_parent) {
        const int parent = group.first; // not a structured binding: clang 14 cannot capture one
        auto &drops = group.second;
        // RFC 2046 5.1.1: a multipart has at least one body part. One that would lose
        // every part keeps its first (readers report a multipart with none as broken).
        auto children = std::count_if(nodes.begin(), nodes.end(), [&](const Node &c) { return c.parent == parent; });
        if (static_cast<std::ptrdiff_t>(drops.size()) >= children) drops.erase(drops.begin());
        for (int node : drops) {
            const Node &n = nodes[static_cast<std::size_t>(node)];
            if (auto why = ctx.kept(n)) {
                ctx.report().add_kept(n.section, "drop", *why);
                continue;
            }
            Status s = ctx.remove_part(n);
            if (!s) {
                if (s.error().code == Code::Software) return s;
                ctx.report().add_error(n.section, ErrorCode::Drop, s.error().message);
            }
        }
    }
    return ok();
}

// Parts of a multipart/related that nothing references (the root aside, RFC 2387 3.2).
void report_unreferenced(MessageContext &ctx, const refs::MessageIndex &ix, const Tally &tally)
{
    const auto &nodes = ctx.nodes();
    std::vector<UnreferencedEntry> unref;
    // Each node's children, and whether a referenced part is it or inside it: one walk up
    // from each reference and one over the nodes, not a scan per part (issue 48 item 6).
    std::vector<std::vector<int>> children_of(nodes.size());
    bool any_related = false;
    for (std::size_t c = 0; c < nodes.size(); ++c) {
        if (nodes[c].parent >= 0) children_of[static_cast<std::size_t>(nodes[c].parent)].push_back(static_cast<int>(c));
        any_related = any_related || (nodes[c].kind == Node::Kind::Multipart && ix.parts[c].related);
    }
    if (!any_related) {
        ctx.report().set_unreferenced(std::move(unref));
        return;
    }
    std::vector<char> holds_referenced(nodes.size(), 0);
    for (int t : tally.referenced)
        for (int p = t; p >= 0 && !holds_referenced[static_cast<std::size_t>(p)]; p = ix.parts[static_cast<std::size_t>(p)].parent)
            holds_referenced[static_cast<std::size_t>(p)] = 1;
    for (std::size_t ri = 0; ri < nodes.size(); ++ri) {
        const Node &r = nodes[ri];
        if (r.kind != Node::Kind::Multipart || !ix.parts[ri].related) continue;
        const std::vector<int> &children = children_of[ri];
        if (children.empty()) continue;
        int root = children[0];
        if (const char *start = g_mime_object_get_content_type_parameter(r.object, "start")) {
            GCharPtr want(g_mime_utils_decode_message_id(start)); // compared as a msg-id
            for (int c : children)
                if (want && ix.parts[static_cast<std::size_t>(c)].cid_clean == want.get()) root = c;
        }
        for (int c : children)
            if (c != root && !holds_referenced[static_cast<std::size_t>(c)])
                unref.push_back({nodes[static_cast<std::size_t>(c)].section, r.section});
    }
    ctx.report().set_unreferenced(std::move(unref));
}

// --summary-header: the only Mimeuri-Refs of the message (a copy a sender planted is removed).
std::string summary_value(const Tally &tally)
{
    return " resolved=" + std::to_string(tally.resolved) + " dangling=" + std::to_string(tally.dangling) +
           " ambiguous=" + std::to_string(tally.ambiguous);
}

Status set_summary(MessageContext &ctx, const Tally &tally)
{
    std::string value = summary_value(tally) + "\n";
    if (auto why = ctx.kept(ctx.nodes().front(), "Mimeuri-Refs")) {
        ctx.report().add_kept("", "summary-header", *why);
        return ok();
    }
    const std::size_t before = ctx.edits().size();
    Status s = ctx.set_sole_header(ctx.nodes().front(), "Mimeuri-Refs", value);
    if (!s && s.error().code == Code::Software) return s;
    if (ctx.edits().size() > before) ctx.report().summary_header_set = true; // (none: there as it is)
    return ok();
}

// Once every pass has run (MessageContext::after_passes): what the later passes did (their
// report sections' words: --data's attached=, --related's moved= and marked=) is counted in
// the field set_summary wrote (edits [from, to) are its own: the one holding its value),
// where they did anything; the field stays where it was.
Status count_later_passes(MessageContext &ctx, std::size_t from, std::size_t to, const std::string &value)
{
    std::string more;
    ctx.report().summary_words(more);
    if (more.empty()) return ok();
    for (std::size_t i = from; i < to && i < ctx.edits().size(); ++i) {
        std::string text = ctx.edits()[i].text;
        auto at = text.find(value);
        if (at == std::string::npos) continue;
        text.insert(at + value.size(), more);
        ctx.amend_edit_text(i, std::move(text));
        return ok();
    }
    return ok(); // not written (a signature keeps the header block): nothing to count in
}

} // namespace

std::string canonical_cid_url(const std::string &content_id)
{
    // RFC 2392: the addr-spec, URL-encoded; "/" encoded too, as mid: requires.
    GCharPtr e(g_uri_escape_string(content_id.c_str(), "!$&'()*+,;=:@", FALSE));
    return std::string("cid:") + e.get();
}

ReferencesPass::ReferencesPass(RefOptions opts) : opts_(std::move(opts))
{
    for (const std::string &path : opts_.mid_indexes) externals_.push_back(refs::open_mid_index(path));
    if (!opts_.notmuch.empty())
        if (auto nm = refs::open_notmuch(opts_.notmuch)) externals_.push_back(std::move(nm));
    if (extracting() && opts_.pages) pages_ = opts_.pages(opts_.extract_dir, opts_.extract_remote_images);
}

void ReferencesPass::add(const MessageContext &ctx)
{
    if (pages_) pages_->saw(ctx.at().input_no, ctx.at().number);
    run_index_.add_message(ctx, extracting());
}

std::string ReferencesPass::save() const { return run_index_.save(); }

void ReferencesPass::merge(const std::string &bytes) { run_index_.merge(bytes); }

namespace {

bool starts_ci(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && g_ascii_strncasecmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// Whether a decoded HTML part, in a message whose Content-IDs are ids.ids (InertCheck), is
// certain to give the pass nothing to edit, to report as not found or to wait for, with
// --cid=repair or check and --mid=check: read as PartRewriter reads it (as it is, in an
// ASCII-compatible encoding, at most --html-max bytes), every reference is a cid:
// URL that is, as written, exactly one part's Content-ID (Resolver::cid: resolved, not
// broken), or where a Content-ID is inside a multipart/related, a URL that names no
// Content-ID as written or unescaped (Resolver::location). A mid: one may wait: no.
bool nothing_to_edit(std::string_view html, std::string_view charset, const InertIds &ids, const RefOptions &opts)
{
    if (html.size() > opts.html_max) return false; // (read in pieces, the scan is the same: find_in_pieces)
    const HtmlEncoding enc = sniff_html_encoding(charset, html);
    if (!enc.ascii_compatible || !enc.convert_from.empty()) return false;
    html::ParseLimits limits;
    limits.max_refs = opts.max_refs;
    limits.max_bytes = html::memory_cap(html.size(), opts.html_max);
    auto scan = html::scan_refs(html, limits);
    if (!scan || scan->stop != html::Stop::None || scan->truncated) return false;
    auto count = [&](const std::string &id) { return std::count(ids.ids.begin(), ids.ids.end(), id); };
    for (const html::Ref &ref : scan->refs) {
        const std::string &url = ref.url;
        if (starts_ci(url, "cid:")) {
            const std::string addr = refs::unescape(url.substr(4));
            if (ref.padded || refs::strip_brackets(addr) != addr || addr.find(' ') != std::string::npos || count(addr) != 1)
                return false;
        } else if (starts_ci(url, "mid:")) {
            return false;
        } else if (ids.related && !url.empty() && url[0] != '/' && url[0] != '#' && url[0] != '?' &&
                   !g_uri_peek_scheme(url.c_str())) {
            if (count(url) || count(refs::unescape(url))) return false;
        }
    }
    return true;
}

} // namespace

// HTML parts, and the stylesheets of a multipart/related (ref_part.cc, rewrite_css_part),
// unless --summary-header (a field on every message) or --cid=extract (every message gets a
// page). What it edits in an HTML part follows from references html::may_hold_reference finds (ref_part.cc,
// PartRewriter::find), or from Content-Location; beyond --html-max a part is reported
// instead. With --cid=extract every message with an HTML part gets a page: none is inert.
InertHint ReferencesPass::inert_hint() const
{
    InertHint h;
    if (!opts_.summary_header && !extracting()) h.edited_types = {"text/html", "text/css"};
    h.references_up_to = extracting() ? 0 : opts_.html_max;
    h.may_hold_reference = [](std::string_view bytes) { return html::may_hold_reference(bytes); };
    // Only where a reference resolved changes nothing and a mid: waits for nothing.
    if ((opts_.cid == RefOptions::Cid::Repair || opts_.cid == RefOptions::Cid::Check) &&
        opts_.mid == RefOptions::Mid::Check && opts_.mid_url.empty() && !opts_.location_to_cid && !opts_.drop_inlined)
        h.nothing_to_edit = [opts = opts_](std::string_view html, std::string_view charset, const InertIds &ids) {
            return nothing_to_edit(html, charset, ids, opts);
        };
    return h;
}

Status ReferencesPass::apply(MessageContext &ctx)
{
    if (opts_.cid == RefOptions::Cid::Off && opts_.mid == RefOptions::Mid::Off) return ok();
    const refs::MessageIndex ix = refs::index_message(ctx);
    const refs::Resolver resolver(ix, run_index_, &externals_);
    // The indexes' read transactions end with the message, however it ends; the message's
    // deadline holds inside their lookups.
    for (auto &e : externals_) e->set_deadline([&ctx] { return ctx.out_of_time(); });
    struct Done {
        refs::ExternalIndexes &x;
        ~Done()
        {
            for (auto &e : x) {
                e->set_deadline({});
                e->done();
            }
        }
    } done{externals_};
    Tally tally;
    if (extracting()) {
        if (!pages_) return Error{Code::Software, "--cid=extract: the references pass was given no pages"};
        tally.pages = pages_.get();
        tally.page_node = refs::page_node(ctx);
        tally.folder = pages_->folder(ctx.at().input_no, ctx.at().number);
        GCharPtr top(g_canonicalize_filename(opts_.extract_dir.c_str(), nullptr));
        tally.folder_path = std::string(top.get()) + "/" + std::to_string(tally.folder);
    }
    try {
        // Stylesheets first: a page that inlines one inlines it with its own references inlined.
        for (std::size_t i = 0; i < ctx.nodes().size(); ++i)
            if (Status s = refs::rewrite_css_part(ctx, opts_, ix, resolver, static_cast<int>(i), tally); !s) return s;
        for (std::size_t i = 0; i < ctx.nodes().size(); ++i)
            if (Status s = refs::rewrite_html_part(ctx, opts_, ix, resolver, static_cast<int>(i), tally); !s) return s;
    } catch (const refs::TimeLimit &e) { // a lookup stopped at the deadline
        if (Status t = ctx.check_time(); !t) return t;
        return Error::limit(e.what());
    }
    if (Status s = add_content_ids(ctx, tally); !s) return s;
    if (opts_.drop_inlined)
        if (Status s = drop_inlined(ctx, ix, tally, opts_); !s) return s;
    report_unreferenced(ctx, ix, tally);
    if (opts_.summary_header) {
        const std::size_t from = ctx.edits().size();
        if (Status s = set_summary(ctx, tally); !s) return s;
        ctx.after_passes([&ctx, from, to = ctx.edits().size(), value = summary_value(tally)] {
            return count_later_passes(ctx, from, to, value);
        });
    }
    // --- extract: the receiving agent of RFC 2387 section 6. Every message gets its folder
    // and its page (index.html), listed in the archive's index, planned by the pages the
    // pass was given (ref_pages.hh) and written when the run takes the message, never while
    // it is planned.
    if (extracting()) pages_->plan(ctx, ix, tally.extracts, tally.page_node, tally.folder);
    return ok();
}

bool ReferencesPass::now_known(const std::string &key) const
{
    return key.empty() || run_index_.find(key, false) || run_index_.find(key, true);
}

} // namespace mimeuri
