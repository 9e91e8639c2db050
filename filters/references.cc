#include "references.hh"

#include "cturi.hh"
#include "html_refs.hh"
#include "text.hh"
#include "transfer.hh"
#include "workers.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

std::string lower(std::string_view s) { return text::ascii_lower(s); }

std::string trim(std::string_view s)
{
    std::size_t b = 0, e = s.size();
    while (b < e && g_ascii_isspace(s[b])) ++b;
    while (e > b && g_ascii_isspace(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
}

bool starts_ci(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && g_ascii_strncasecmp(s.data(), p.data(), p.size()) == 0;
}

// The unfolded, trimmed raw value of a node's header, or "".
std::string header_raw(const Node &n, const char *name)
{
    GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), name);
    const char *raw = h ? g_mime_header_get_raw_value(h) : nullptr;
    if (!raw) return {};
    std::string out;
    for (const char *p = raw; *p; ++p)
        if (*p != '\r' && *p != '\n') out += *p;
    return trim(out);
}

// A msg-id without its angle brackets and surrounding white space.
std::string strip_brackets(std::string s)
{
    s = trim(s);
    if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = trim(s.substr(1, s.size() - 2));
    return s;
}

std::string unescape(const std::string &s)
{
    GCharPtr u(g_uri_unescape_string(s.c_str(), nullptr));
    return u ? std::string(u.get()) : s;
}

std::string resolve(const std::string &base, const std::string &ref)
{
    GError *err = nullptr;
    GCharPtr r(g_uri_resolve_relative(base.c_str(), ref.c_str(), G_URI_FLAGS_ENCODED, &err));
    if (err) g_error_free(err);
    return r ? std::string(r.get()) : std::string();
}

// local@domain with the domain compared case-insensitively (RFC 5322 msg-id).
bool same_id_ci_domain(const std::string &a, const std::string &b)
{
    auto at_a = a.rfind('@'), at_b = b.rfind('@');
    if (at_a == std::string::npos || at_b == std::string::npos) return false;
    return a.compare(0, at_a, b, 0, at_b) == 0 && cturi::iequals(a.substr(at_a), b.substr(at_b));
}

bool is_descendant(const MessageContext &ctx, int node, int ancestor)
{
    for (int p = node; p >= 0; p = ctx.nodes()[static_cast<std::size_t>(p)].parent)
        if (p == ancestor) return true;
    return false;
}

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

std::string mime_type(const Node &n)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    if (!ct) return "text/plain";
    return lower(std::string(g_mime_content_type_get_media_type(ct) ? g_mime_content_type_get_media_type(ct) : "") +
                 "/" + (g_mime_content_type_get_media_subtype(ct) ? g_mime_content_type_get_media_subtype(ct) : ""));
}

// Charsets whose bytes do not keep ASCII's meaning: references are checked after a
// conversion, never rewritten in place.
bool ascii_compatible(const std::string &charset)
{
    std::string c = lower(charset);
    for (const char *bad : {"utf-16", "utf-32", "ucs-2", "ucs-4", "utf-7", "iso-2022", "hz-gb", "ebcdic", "cp037",
                            "ibm037", "cp500", "ibm500", "cp1026", "cp875"})
        if (c.rfind(bad, 0) == 0) return false;
    return true;
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

bool inline_allowed(const std::string &type, const std::vector<std::string> &allow)
{
    // Never markup or scripts, whatever the allow-list says (SVG can carry scripts).
    if (type == "text/html" || type == "application/xhtml+xml" || type == "image/svg+xml" ||
        type.find("javascript") != std::string::npos || type.find("ecmascript") != std::string::npos)
        return false;
    for (const auto &a : allow) {
        if (a == type) return true;
        if (a.size() > 2 && a.compare(a.size() - 2, 2, "/*") == 0 && type.compare(0, a.size() - 1, a, 0, a.size() - 1) == 0)
            return true;
    }
    return false;
}

// A file name that cannot escape its folder: no separators, no "..", no control
// characters, no leading dot, at most 100 bytes of valid UTF-8. Unicode controls (C0, C1),
// format characters (bidirectional controls such as U+202E, which make "evil\u202Egnp.exe"
// display as "evilexe.png"; zero-width ones; U+FEFF), line and paragraph separators,
// surrogates and unassigned code points are each replaced with '_'.
std::string safe_name(std::string name, const std::string &fallback)
{
    if (auto slash = name.find_last_of("/\\"); slash != std::string::npos) name = name.substr(slash + 1);
    if (!g_utf8_validate(name.data(), static_cast<gssize>(name.size()), nullptr)) {
        GCharPtr v(g_utf8_make_valid(name.data(), static_cast<gssize>(name.size())));
        name = v.get();
    }
    std::string out;
    for (const char *p = name.c_str(); *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        switch (g_unichar_type(c)) {
        case G_UNICODE_CONTROL:
        case G_UNICODE_FORMAT:
        case G_UNICODE_LINE_SEPARATOR:
        case G_UNICODE_PARAGRAPH_SEPARATOR:
        case G_UNICODE_SURROGATE:
        case G_UNICODE_UNASSIGNED: out += '_'; continue;
        default: break;
        }
        if (c == ':' || c == '*' || c == '?' || c == '"' || c == '<' || c == '>' || c == '|') out += '_';
        else out.append(p, static_cast<std::size_t>(g_utf8_next_char(p) - p));
    }
    while (!out.empty() && (out[0] == '.' || out[0] == ' ' || out[0] == '-')) out.erase(0, 1);
    while (out.find("..") != std::string::npos) out.replace(out.find(".."), 2, "_");
    if (out.size() > 100) {
        const char *end = out.data() + 100;
        const char *prev = g_utf8_find_prev_char(out.data(), end + 1);
        out.resize(static_cast<std::size_t>((prev ? prev : end) - out.data()));
    }
    if (out.empty() || out == "index.html") out = fallback;
    return out;
}

std::string extension_for(const std::string &type)
{
    static const std::pair<const char *, const char *> table[] = {
        {"image/png", ".png"},   {"image/jpeg", ".jpg"}, {"image/gif", ".gif"},       {"image/webp", ".webp"},
        {"image/bmp", ".bmp"},   {"image/x-icon", ".ico"}, {"image/svg+xml", ".svg"}, {"text/css", ".css"},
        {"text/html", ".html"},  {"text/plain", ".txt"}, {"font/woff", ".woff"},      {"font/woff2", ".woff2"},
        {"audio/mpeg", ".mp3"},  {"video/mp4", ".mp4"},  {"application/pdf", ".pdf"}};
    for (auto &[t, e] : table)
        if (type == t) return e;
    return ".bin";
}

// Whether an id can stand between the brackets of a Content-ID header as it is: printable
// ASCII, no white space, no brackets or quotes (RFC 5322 3.6.4 msg-id), so that nothing a
// URL decodes to can fold or end the header. Other ids get a generated Content-ID instead.
bool msg_id_text(std::string_view id)
{
    if (id.empty()) return false;
    for (char c : id) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u >= 127 || c == '<' || c == '>' || c == '"' || c == '\\') return false;
    }
    return true;
}

struct Target {
    std::string status; // resolved | dangling | ambiguous
    int node{-1};
    bool broken{false};
    std::string message_id; // when the target is another message of the run
    std::string section;    // target section in that message
    std::string mid;        // mid: the Message-ID matched, as the message has it
    std::string mid_cid;    // mid: the Content-ID matched inside it
    bool via_location{false}; // a cid: matched through a Content-Location
    std::string location_id;  // ... and the Content-ID it names
};

} // namespace

std::string canonical_cid_url(const std::string &content_id)
{
    // RFC 2392: the addr-spec, URL-encoded; "/" encoded too, as mid: requires.
    GCharPtr e(g_uri_escape_string(content_id.c_str(), "!$&'()*+,;=:@", FALSE));
    return std::string("cid:") + e.get();
}

std::string ReferencesPass::ci_key(const std::string &id)
{
    auto at = id.rfind('@');
    return at == std::string::npos ? std::string() : id.substr(0, at) + lower(id.substr(at));
}

void ReferencesPass::add_indexed(const std::string &id, Indexed e)
{
    if (auto key = ci_key(id); !key.empty()) {
        // Of several ids differing only in the domain's case, the first in order answers.
        auto [ci, fresh] = ci_index_.try_emplace(key, id);
        if (!fresh && id < ci->second) ci->second = id;
    }
    auto [it, inserted] = run_index_.try_emplace(id, e);
    if (inserted) return;
    // The message first in run order keeps the place; the others count as duplicates.
    int count = it->second.count + e.count;
    if (std::tie(e.input_no, e.index) < std::tie(it->second.input_no, it->second.index)) it->second = std::move(e);
    it->second.count = count;
}

Status ReferencesPass::index(const MessageContext &ctx)
{
    auto add = [&](GMimeMessage *m, const std::string &section) {
        const char *id = g_mime_message_get_message_id(m);
        if (!id || !*id) return;
        Indexed e;
        e.count = 1;
        e.index = ctx.report().index;
        e.input_no = ctx.report().input_no;
        e.section = section;
        for (const Node &n : ctx.nodes()) {
            if (n.message != m) continue;
            if (const char *cid = g_mime_object_get_content_id(n.object)) e.cids.emplace(cid, n.section);
        }
        add_indexed(id, std::move(e));
    };
    add(ctx.message(), "");
    for (const Node &n : ctx.nodes())
        if (n.kind == Node::Kind::MessagePart)
            if (GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(n.object))) add(inner, n.section);
    return ok();
}

std::string ReferencesPass::save_index() const
{
    Record r;
    r.put(run_index_.size());
    for (const auto &[id, e] : run_index_) {
        r.put(id);
        r.put(e.index);
        r.put(e.section);
        r.put(static_cast<std::size_t>(e.count));
        r.put(e.input_no);
        r.put(e.cids.size());
        for (const auto &[cid, section] : e.cids) {
            r.put(cid);
            r.put(section);
        }
    }
    return r.take();
}

void ReferencesPass::merge_index(const std::string &bytes)
{
    Record r(bytes);
    std::size_t n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        std::string id = r.get();
        Indexed e;
        e.index = r.get_size();
        e.section = r.get();
        e.count = static_cast<int>(r.get_size());
        e.input_no = r.get_size();
        std::size_t cids = r.get_size();
        for (std::size_t k = 0; k < cids; ++k) {
            std::string cid = r.get();
            e.cids.emplace(cid, r.get());
        }
        add_indexed(id, std::move(e));
    }
}

Status ReferencesPass::apply(MessageContext &ctx)
{
    if (opts_.cid == RefOptions::Cid::Off && opts_.mid == RefOptions::Mid::Off) return ok();
    const auto &nodes = ctx.nodes();

    // --- The message's own index: Content-IDs, locations (RFC 2557), Message-IDs.
    struct PartInfo {
        std::string cid_clean, cid_raw, location, base;
    };
    std::vector<PartInfo> parts(nodes.size());
    bool any_location = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        PartInfo &p = parts[i];
        if (const char *c = g_mime_object_get_content_id(n.object)) p.cid_clean = c;
        p.cid_raw = strip_brackets(header_raw(n, "Content-ID"));
        std::string parent_base = n.parent >= 0 ? parts[static_cast<std::size_t>(n.parent)].base : "thismessage:/";
        std::string cb = header_raw(n, "Content-Base");
        p.base = cb.empty() ? parent_base : resolve(parent_base, cb);
        if (p.base.empty()) p.base = parent_base;
        std::string cl = header_raw(n, "Content-Location");
        if (!cl.empty()) {
            std::string loc = resolve(p.base, cl);
            p.location = loc.empty() ? cl : loc;
            p.base = p.location;
            any_location = true;
        }
    }

    // Picks among the nodes that match: the nearest enclosing multipart/related first, then
    // the whole message; several in one multipart/alternative resolve to the last (RFC 2046
    // 5.1.4); several anywhere else are ambiguous.
    auto choose = [&](std::vector<int> matches, int html_node, Target &t) {
        if (matches.empty()) {
            t.status = "dangling";
            return;
        }
        int related = -1;
        for (int p = nodes[static_cast<std::size_t>(html_node)].parent; p >= 0; p = nodes[static_cast<std::size_t>(p)].parent)
            if (is_type(nodes[static_cast<std::size_t>(p)], "multipart", "related")) {
                related = p;
                break;
            }
        if (related >= 0) {
            std::vector<int> inside;
            for (int m : matches)
                if (is_descendant(ctx, m, related)) inside.push_back(m);
            if (!inside.empty()) matches = inside;
        }
        if (matches.size() > 1) {
            int parent = nodes[static_cast<std::size_t>(matches[0])].parent;
            bool same_alt = parent >= 0 && is_type(nodes[static_cast<std::size_t>(parent)], "multipart", "alternative");
            for (int m : matches) same_alt = same_alt && nodes[static_cast<std::size_t>(m)].parent == parent;
            if (!same_alt) {
                t.status = "ambiguous";
                return;
            }
        }
        t.status = "resolved";
        t.node = *std::max_element(matches.begin(), matches.end());
    };

    auto match_cid = [&](const std::string &url, int html_node, bool padded) {
        Target t;
        std::string rest = url.substr(4);
        std::string addr = unescape(rest);
        std::string clean = strip_brackets(addr);
        // Common broken forms: cid:<x>, surrounding spaces, an escape that does not decode.
        t.broken = padded || clean != addr || addr.find(' ') != std::string::npos;
        std::vector<int> exact, ci;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const PartInfo &p = parts[i];
            if (p.cid_clean.empty() && p.cid_raw.empty()) continue;
            if (clean == p.cid_clean || clean == p.cid_raw) exact.push_back(static_cast<int>(i));
            else if (same_id_ci_domain(clean, p.cid_clean) || same_id_ci_domain(clean, p.cid_raw))
                ci.push_back(static_cast<int>(i));
        }
        if (exact.empty() && !ci.empty()) t.broken = true; // a differently-cased domain
        if (exact.empty() && ci.empty()) {
            // RFC 2557: any URL, cid: included, also matches a Content-Location (Chrome's
            // MHTML names parts "Content-Location: cid:...", without a Content-ID).
            std::vector<int> by_location;
            for (std::size_t i = 0; i < nodes.size(); ++i)
                if (!parts[i].location.empty() && cturi::iequals(parts[i].location, url)) by_location.push_back(static_cast<int>(i));
            choose(by_location, html_node, t);
            t.via_location = t.status == "resolved";
            if (t.via_location) t.location_id = clean;
            return t;
        }
        choose(exact.empty() ? ci : exact, html_node, t);
        return t;
    };

    auto match_mid = [&](const std::string &url, int html_node) {
        Target t;
        std::string rest = url.substr(4);
        std::string id_part = rest, cid_part;
        if (auto slash = rest.find('/'); slash != std::string::npos) {
            id_part = rest.substr(0, slash);
            cid_part = rest.substr(slash + 1);
        }
        std::string id_raw = unescape(id_part), id = strip_brackets(id_raw);
        std::string cid = strip_brackets(unescape(cid_part));
        t.broken = id != id_raw || id.find(' ') != std::string::npos;
        // This message and its embedded messages first.
        std::vector<std::pair<GMimeMessage *, std::string>> here{{ctx.message(), ""}};
        for (const Node &n : nodes)
            if (n.kind == Node::Kind::MessagePart)
                if (GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(n.object))) here.emplace_back(m, n.section);
        for (int pass = 0; pass < 2; ++pass) {
            for (auto &[m, section] : here) {
                const char *mid = g_mime_message_get_message_id(m);
                if (!mid) continue;
                bool same = pass == 0 ? id == mid : same_id_ci_domain(id, mid);
                if (!same) continue;
                if (pass == 1) t.broken = true;
                t.mid = mid;
                if (cid.empty()) {
                    t.status = "resolved";
                    for (std::size_t i = 0; i < nodes.size(); ++i)
                        if (nodes[i].section == section && !section.empty()) t.node = static_cast<int>(i);
                    if (section.empty()) t.node = 0;
                    return t;
                }
                std::vector<int> matches;
                for (std::size_t i = 0; i < nodes.size(); ++i)
                    if (nodes[i].message == m && (parts[i].cid_clean == cid || parts[i].cid_raw == cid))
                        matches.push_back(static_cast<int>(i));
                choose(matches, html_node, t);
                t.mid_cid = cid;
                return t;
            }
            // Then the other messages of the run: a lookup, not a scan (exact, then with the
            // domain compared case-insensitively).
            auto found = run_index_.end();
            if (pass == 0) {
                found = run_index_.find(id);
            } else if (auto key = ci_key(id); !key.empty()) {
                if (auto ci = ci_index_.find(key); ci != ci_index_.end()) found = run_index_.find(ci->second);
            }
            if (found != run_index_.end()) {
                const auto &[mid, e] = *found;
                if (pass == 1) t.broken = true;
                t.message_id = mid;
                t.mid = mid;
                if (e.count > 1) {
                    t.status = "ambiguous";
                    return t;
                }
                if (cid.empty()) {
                    t.status = "resolved";
                    t.section = e.section;
                    return t;
                }
                auto it = e.cids.find(cid);
                t.mid_cid = cid;
                t.status = it == e.cids.end() ? "dangling" : "resolved";
                if (it != e.cids.end()) t.section = it->second;
                return t;
            }
        }
        t.status = "dangling";
        return t;
    };

    auto match_location = [&](const std::string &url, const std::string &base, int html_node) {
        Target t;
        std::string abs = resolve(base, url);
        std::vector<int> matches;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const std::string &loc = parts[i].location;
            if (loc.empty() || static_cast<int>(i) == html_node) continue;
            if (loc == abs || loc == url || (!abs.empty() && unescape(loc) == unescape(abs)))
                matches.push_back(static_cast<int>(i));
        }
        choose(matches, html_node, t);
        return t;
    };

    // --- Every HTML part.
    std::size_t resolved = 0, dangling = 0, ambiguous = 0;
    std::set<int> referenced, inlined_targets, kept_targets;
    struct PendingExtract {
        int html_node;
        std::string html;
        html::Scan scan;
        std::vector<std::pair<std::size_t, int>> refs; // ref index -> target node
    };
    std::vector<PendingExtract> extracts;
    std::vector<std::pair<int, std::string>> new_content_ids; // node -> generated id

    for (std::size_t hi = 0; hi < nodes.size(); ++hi) {
        const Node &hn = nodes[hi];
        if (hn.kind != Node::Kind::Leaf || !is_type(hn, "text", "html")) continue;
        if (auto t = ctx.check_time(); !t) return t;
        auto html_bytes = ctx.decoded_content(hn, opts_.html_max);
        if (!html_bytes) {
            ctx.report().add_error(hn.section, "html-limit",
                                   html_bytes.error().message + " (--html-max " + std::to_string(opts_.html_max) +
                                       "); references not looked at");
            continue;
        }
        std::string charset;
        if (const char *cs = g_mime_object_get_content_type_parameter(hn.object, "charset")) charset = cs;
        const bool rewritable = ascii_compatible(charset);
        std::string html_text = *html_bytes;
        if (!rewritable) {
            gsize written = 0;
            GCharPtr conv(g_convert(html_text.data(), static_cast<gssize>(html_text.size()), "UTF-8", charset.c_str(),
                                    nullptr, &written, nullptr));
            if (conv) html_text.assign(conv.get(), written);
        }
        // No reference can be in a part without "id:" (cid:, mid:, any case), a numeric
        // character reference for c, i, d, m or ':', &colon;, or a backslash (a CSS escape):
        // skip the HTML5 parse then, unless locations are in play.
        if (!any_location && !html::may_hold_reference(html_text)) continue;
        html::ParseLimits limits;
        limits.max_refs = opts_.max_refs;
        limits.max_bytes = html::memory_cap(html_text.size(), opts_.html_max);
        limits.out_of_time = [&ctx] { return ctx.out_of_time(); };
        auto scan = html::find_refs(html_text, limits);
        if (!scan) {
            if (scan.error().code == Code::TempFail) return scan.error(); // out of memory: --on-error decides
            ctx.report().add_error(hn.section, "html", scan.error().message);
            continue;
        }
        if (scan->stop != html::Stop::None) { // a limit: the message passes as it came
            ctx.report().add_error(hn.section, html::stop_kind(scan->stop), scan->stop_message);
            return Error{Code::DataErr, scan->stop_message};
        }
        if (scan->truncated)
            ctx.report().add_error(hn.section, "ref-limit",
                                   "more than " + std::to_string(opts_.max_refs) + " references; the rest not looked at");
        std::string base = parts[hi].base;
        if (scan->base_href) {
            std::string b = resolve(base, *scan->base_href);
            if (!b.empty()) base = b;
        }

        const auto html_kept = ctx.kept(hn); // signed content: references found and reported, not changed
        std::vector<html::Replacement> reps;
        std::vector<std::pair<guint, int>> rep_refs; // per replacement: its report entry, its target
        PendingExtract pending{static_cast<int>(hi), {}, {}, {}};
        for (std::size_t ri = 0; ri < scan->refs.size(); ++ri) {
            if (ri % 1024 == 1023)
                if (auto t = ctx.check_time(); !t) return t;
            const html::Ref &ref = scan->refs[ri];
            const html::Holder &holder = scan->holders[ref.holder];
            std::string kind;
            Target t;
            if (starts_ci(ref.url, "cid:")) {
                if (opts_.cid == RefOptions::Cid::Off) continue;
                kind = "cid";
                t = match_cid(ref.url, static_cast<int>(hi), ref.padded);
            } else if (starts_ci(ref.url, "mid:")) {
                if (opts_.mid == RefOptions::Mid::Off) continue;
                kind = "mid";
                t = match_mid(ref.url, static_cast<int>(hi));
            } else {
                if (!any_location || opts_.cid == RefOptions::Cid::Off) continue;
                if (starts_ci(ref.url, "data:") || starts_ci(ref.url, "javascript:") || starts_ci(ref.url, "mailto:") ||
                    ref.url[0] == '#')
                    continue;
                t = match_location(ref.url, base, static_cast<int>(hi));
                if (t.status == "dangling") continue; // an ordinary link, not a reference into the message
                kind = "location";
            }
            if (t.node >= 0 && t.message_id.empty()) referenced.insert(t.node);

            std::string action = "none", new_url;
            const bool local_target = t.status == "resolved" && t.node >= 0 && t.message_id.empty();
            if (kind == "mid") {
                if (opts_.mid == RefOptions::Mid::Repair) {
                    if (!opts_.mid_url.empty()) {
                        std::string id = strip_brackets(unescape(ref.url.substr(4, ref.url.find('/', 4) == std::string::npos ? std::string::npos : ref.url.find('/', 4) - 4)));
                        GCharPtr enc(g_uri_escape_string(id.c_str(), nullptr, FALSE));
                        new_url = opts_.mid_url;
                        for (auto at = new_url.find("{id}"); at != std::string::npos; at = new_url.find("{id}", at + std::strlen(enc.get())))
                            new_url.replace(at, 4, enc.get());
                        action = "rewritten";
                    } else if (t.status == "resolved" && t.broken) {
                        // RFC 2392: mid:message-id[/content-id], "/" inside an id encoded.
                        GCharPtr e1(g_uri_escape_string(t.mid.c_str(), "!$&'()*+,;=:@", FALSE));
                        new_url = std::string("mid:") + e1.get();
                        if (!t.mid_cid.empty()) {
                            GCharPtr e2(g_uri_escape_string(t.mid_cid.c_str(), "!$&'()*+,;=:@", FALSE));
                            new_url += std::string("/") + e2.get();
                        }
                        action = "repaired";
                    }
                }
            } else if (local_target) {
                const Node &target = nodes[static_cast<std::size_t>(t.node)];
                const PartInfo &tp = parts[static_cast<std::size_t>(t.node)];
                std::string ttype = mime_type(target);
                auto canonical = [&]() -> std::string {
                    std::string id = !tp.cid_raw.empty() ? tp.cid_raw : tp.cid_clean;
                    if (id.empty()) {
                        for (auto &[node, gen] : new_content_ids)
                            if (node == t.node) id = gen;
                    }
                    if (id.empty()) {
                        // A unique, stable Content-ID for a part that has none (RFC 2392 needs one).
                        std::string seed = ctx.report().message_id + "|" + target.section + "|" + tp.location;
                        GCharPtr sum(g_compute_checksum_for_string(G_CHECKSUM_SHA1, seed.c_str(), -1));
                        id = std::string("mimeuri.") + std::string(sum.get()).substr(0, 16) + "@mimeuri.invalid";
                        new_content_ids.emplace_back(t.node, id);
                    }
                    return canonical_cid_url(id);
                };
                if (opts_.cid == RefOptions::Cid::Inline && inline_allowed(ttype, opts_.inline_types)) {
                    auto bytes = ctx.decoded_content(target, opts_.inline_max);
                    if (bytes) {
                        GCharPtr b64(g_base64_encode(reinterpret_cast<const guchar *>(bytes->data()), bytes->size()));
                        new_url = "data:" + ttype + ";base64," + b64.get();
                        action = "inlined";
                        inlined_targets.insert(t.node);
                    } else {
                        kept_targets.insert(t.node);
                    }
                } else if (opts_.cid == RefOptions::Cid::Extract && !opts_.extract_dir.empty()) {
                    pending.refs.emplace_back(ri, t.node);
                    action = "extracted";
                } else {
                    kept_targets.insert(t.node);
                }
                if (action == "none" && opts_.cid != RefOptions::Cid::Check && kind == "cid" && t.via_location &&
                    tp.cid_clean.empty() && tp.cid_raw.empty() && msg_id_text(t.location_id)) {
                    // The reference is well-formed; the target lacks the Content-ID it names.
                    bool known = false;
                    for (auto &[node, gen] : new_content_ids) known = known || node == t.node;
                    if (!known) new_content_ids.emplace_back(t.node, t.location_id);
                    action = "repaired";
                }
                if (action == "none" && opts_.cid != RefOptions::Cid::Check) {
                    if (kind == "cid" && t.broken) {
                        new_url = canonical();
                        action = "repaired";
                    } else if (kind == "location" && opts_.location_to_cid) {
                        // Valid as written (RFC 2557): rewritten only when asked.
                        new_url = canonical();
                        action = "rewritten";
                    }
                }
            }
            if (html_kept && action != "none" && action != "extracted") {
                action = "kept";
                new_url.clear();
                if (t.node >= 0) kept_targets.insert(t.node);
            }
            if (!new_url.empty()) {
                reps.push_back({ri, new_url});
                rep_refs.push_back({json_array_get_length(ctx.report().refs.get()), t.node});
            }

            JsonObject *o = json_object_new();
            json_set_string(o, "part", hn.section);
            json_set_string(o, "attr", holder.attribute ? holder.element + "@" + holder.attr : "style");
            json_set_string(o, "url", ref.url);
            json_set_string(o, "kind", kind);
            // RFC 2557 8.3: a cid: URL never matches a Content-Location. Such a reference
            // (Blink's MHTML names parts "Content-Location: cid:...") is dangling as written;
            // repair gives the part the Content-ID it names, after which it resolves.
            const std::string status = t.via_location ? "dangling" : t.status;
            const bool resolves_now = status == "resolved" || (t.via_location && action == "repaired");
            if (resolves_now) ++resolved;
            else if (status == "dangling") ++dangling;
            else ++ambiguous;
            json_set_string(o, "status", status);
            if (t.via_location) json_set_string(o, "matched", "content-location");
            json_set_string(o, "action", action);
            if (action == "kept") json_set_string(o, "kept", *html_kept);
            if (t.node >= 0 && t.message_id.empty()) json_set_string(o, "target", nodes[static_cast<std::size_t>(t.node)].section);
            else if (!t.message_id.empty() && t.status == "resolved") json_set_string(o, "target", t.section);
            else json_object_set_null_member(o, "target");
            if (t.message_id.empty()) json_object_set_null_member(o, "target_message");
            else json_set_string(o, "target_message", t.message_id);
            json_array_add_object_element(ctx.report().refs.get(), o);
        }

        if (!pending.refs.empty()) {
            pending.html = html_text;
            pending.scan = std::move(*scan);
            extracts.push_back(std::move(pending));
            continue;
        }
        if (reps.empty()) continue;
        // The report claims no change that is not in the output: a replacement that is not
        // made goes back to "none", and its target stays (--drop-inlined keeps it).
        auto unclaim = [&](std::size_t k) {
            auto [entry, target] = rep_refs[k];
            json_set_string(json_array_get_object_element(ctx.report().refs.get(), entry), "action", "none");
            if (target >= 0) kept_targets.insert(target);
        };
        auto unclaim_all = [&] {
            for (std::size_t k = 0; k < reps.size(); ++k) unclaim(k);
        };
        if (!rewritable) {
            unclaim_all();
            ctx.report().add_error(hn.section, "charset",
                                   "charset " + charset + " is not ASCII-compatible: references checked, not rewritten");
            continue;
        }
        auto rewritten = html::rewrite(html_text, *scan, reps);
        for (std::size_t k : rewritten.skipped) {
            unclaim(k);
            ctx.report().add_error(hn.section, "html-rewrite",
                                   "reference " + scan->refs[reps[k].ref].url + " not rewritten: its bytes cannot be replaced alone");
        }
        std::string new_html = std::move(rewritten.html);
        if (new_html == html_text) continue; // nothing actually changed: no edit
        // Re-encode in the part's own transfer encoding; 7bit/8bit text is spliced as is,
        // unless a line would pass 998 octets, which only quoted-printable can carry.
        GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(hn.object));
        const auto mark = ctx.edit_mark(); // the part's edits stand or fall together
        Status s = ok();
        switch (enc) {
        case GMIME_CONTENT_ENCODING_BASE64:
            s = ctx.replace_body(hn, transfer::base64_lines(new_html));
            break;
        case GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE:
            s = ctx.replace_body(hn, transfer::quoted_printable(new_html, ctx.eol() == Eol::CRLF));
            break;
        case GMIME_CONTENT_ENCODING_BINARY: // no line limit: spliced as it is
            s = ctx.replace_body(hn, new_html, false);
            break;
        case GMIME_CONTENT_ENCODING_DEFAULT:
        case GMIME_CONTENT_ENCODING_7BIT:
        case GMIME_CONTENT_ENCODING_8BIT:
            if (longest_line_over(new_html, 998)) {
                GMimeHeader *cte = g_mime_header_list_get_header(MessageContext::headers_of(hn), "Content-Transfer-Encoding");
                s = ctx.replace_body(hn, transfer::quoted_printable(new_html, ctx.eol() == Eol::CRLF));
                if (s)
                    s = cte ? ctx.replace_header(cte, " quoted-printable\n")
                            : ctx.add_header(hn, "Content-Transfer-Encoding", " quoted-printable\n");
            } else {
                s = ctx.replace_body(hn, new_html, false);
            }
            break;
        default:
            unclaim_all();
            ctx.report().add_error(hn.section, "encoding", "transfer encoding not rewritable: references checked only");
            continue;
        }
        if (!s) {
            if (s.error().code == Code::Software) return s;
            ctx.rollback(mark);
            unclaim_all();
            ctx.report().add_error(hn.section, "rewrite", s.error().message + "; references not rewritten");
        }
    }

    // Generated Content-IDs for location targets that had none.
    for (auto &[node, id] : new_content_ids) {
        if (auto why = ctx.kept(nodes[static_cast<std::size_t>(node)], "Content-ID")) {
            ctx.report().add_kept(nodes[static_cast<std::size_t>(node)].section, "content-id", *why);
            continue;
        }
        Status s = ctx.add_header(nodes[static_cast<std::size_t>(node)], "Content-ID", " <" + id + ">\n");
        if (!s) {
            if (s.error().code == Code::Software) return s;
            ctx.report().add_error(nodes[static_cast<std::size_t>(node)].section, "rewrite", s.error().message);
        }
    }

    // --drop-inlined: parts every reference of which was inlined.
    if (opts_.drop_inlined) {
        std::map<int, std::vector<int>> by_parent;
        for (int node : inlined_targets)
            if (!kept_targets.count(node)) by_parent[nodes[static_cast<std::size_t>(node)].parent].push_back(node);
        for (auto &group : by_parent) {
            const int parent = group.first; // not a structured binding: clang 14 cannot capture one
            auto &drops = group.second;
            // RFC 2046 5.1.1: a multipart has at least one body part. One that would lose
            // every part keeps its first (readers report a multipart with none as broken).
            auto children = std::count_if(nodes.begin(), nodes.end(), [&](const Node &c) { return c.parent == parent; });
            if (static_cast<std::ptrdiff_t>(drops.size()) >= children) drops.erase(drops.begin());
            for (int node : drops) {
                if (auto why = ctx.kept(nodes[static_cast<std::size_t>(node)])) {
                    ctx.report().add_kept(nodes[static_cast<std::size_t>(node)].section, "drop", *why);
                    continue;
                }
                Status s = ctx.remove_part(nodes[static_cast<std::size_t>(node)]);
                if (!s) {
                    if (s.error().code == Code::Software) return s;
                    ctx.report().add_error(nodes[static_cast<std::size_t>(node)].section, "drop", s.error().message);
                }
            }
        }
    }

    // Parts of a multipart/related that nothing references (the root aside, RFC 2387 3.2).
    JsonArray *unref = json_array_new();
    for (std::size_t ri = 0; ri < nodes.size(); ++ri) {
        const Node &r = nodes[ri];
        if (r.kind != Node::Kind::Multipart || !is_type(r, "multipart", "related")) continue;
        std::vector<int> children;
        for (std::size_t c = ri + 1; c < nodes.size(); ++c)
            if (nodes[c].parent == static_cast<int>(ri)) children.push_back(static_cast<int>(c));
        if (children.empty()) continue;
        int root = children[0];
        if (const char *start = g_mime_object_get_content_type_parameter(r.object, "start")) {
            GCharPtr want(g_mime_utils_decode_message_id(start)); // compared as a msg-id
            for (int c : children)
                if (want && parts[static_cast<std::size_t>(c)].cid_clean == want.get()) root = c;
        }
        for (int c : children) {
            if (c == root) continue;
            bool used = false;
            for (int t : referenced) used = used || is_descendant(ctx, t, c);
            if (used) continue;
            JsonObject *o = json_object_new();
            json_set_string(o, "part", nodes[static_cast<std::size_t>(c)].section);
            json_set_string(o, "related", r.section);
            json_array_add_object_element(unref, o);
        }
    }
    ctx.report().set_extra("unreferenced", unref);

    if (opts_.summary_header) {
        std::string value = " resolved=" + std::to_string(resolved) + " dangling=" + std::to_string(dangling) +
                            " ambiguous=" + std::to_string(ambiguous) + "\n";
        // The only Mimeuri-Refs of the message: a copy a sender planted is removed.
        if (auto why = ctx.kept(nodes.front(), "Mimeuri-Refs")) {
            ctx.report().add_kept("", "summary-header", *why);
        } else {
            Status s = ctx.set_sole_header(nodes.front(), "Mimeuri-Refs", value);
            if (!s && s.error().code == Code::Software) return s;
        }
    }

    // --- extract: the receiving agent of RFC 2387 section 6.
    // Everything is opened relative to directory descriptors, never by path, and nothing is
    // followed: a symbolic link planted in a shared extract folder (at DIR/N, or at a file
    // name inside it) cannot send a file outside DIR. A refusal removes what this message
    // wrote and is an error (the --on-error policy applies).
    if (!extracts.empty()) {
        const std::string number = std::to_string(++extracted_messages_);
        const std::string dir = opts_.extract_dir + "/" + number;
        auto failure = [](const std::string &what, int err) {
            return Error{err == ENOSPC || err == EDQUOT ? Code::TempFail : Code::CantCreate, what + ": " + g_strerror(err)};
        };
        // Why openat(..., O_DIRECTORY | O_NOFOLLOW) failed on an existing entry, in words.
        auto refused = [&](int at, const std::string &name, const std::string &path, int err) {
            struct stat st {};
            if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                return Error{Code::CantCreate, "refusing " + path + ": it is a symbolic link"};
            if (err == ENOTDIR) return Error{Code::CantCreate, "refusing " + path + ": not a directory"};
            return failure("cannot open " + path, err);
        };
        if (g_mkdir_with_parents(opts_.extract_dir.c_str(), 0755) != 0)
            return failure("cannot create " + opts_.extract_dir, errno);
        struct Fd {
            int fd;
            ~Fd() { if (fd >= 0) ::close(fd); }
        };
        Fd top{::open(opts_.extract_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
        if (top.fd < 0) return refused(AT_FDCWD, opts_.extract_dir, opts_.extract_dir, errno);
        bool made_dir = ::mkdirat(top.fd, number.c_str(), 0755) == 0;
        if (!made_dir && errno != EEXIST) return failure("cannot create " + dir, errno);
        Fd at{::openat(top.fd, number.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
        if (at.fd < 0) return refused(top.fd, number, dir, errno);
        if (struct stat st {}; ::fstat(at.fd, &st) != 0 || st.st_uid != ::geteuid())
            return Error{Code::CantCreate, "refusing " + dir + ": it belongs to another user"};
        std::vector<std::string> created; // removed again if the message fails
        auto undo = [&](Error e) {
            for (const auto &name : created) ::unlinkat(at.fd, name.c_str(), 0);
            if (made_dir) ::unlinkat(top.fd, number.c_str(), AT_REMOVEDIR);
            return e;
        };
        std::set<std::string> used{"index.html"};
        std::map<int, std::string> file_of;
        auto write_file = [&](const std::string &name, const std::string *bytes, const Node *part) -> Status {
            std::string path = dir + "/" + name;
            int fd = ::openat(at.fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0) return failure("cannot create " + path, errno);
            created.push_back(name);
            auto out = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new(fd));
            bool okw = true;
            if (bytes) okw = g_mime_stream_write(out.get(), bytes->data(), bytes->size()) == static_cast<ssize_t>(bytes->size());
            else if (GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(part->object)))
                okw = g_mime_data_wrapper_write_to_stream(w, out.get()) >= 0; // streamed: no size in memory
            if (!okw || g_mime_stream_flush(out.get()) != 0) return Error{Code::IoErr, "cannot write " + path};
            return ok();
        };
        bool first_html = true;
        for (auto &pe : extracts) {
            std::vector<html::Replacement> reps;
            for (auto &[ri, node] : pe.refs) {
                if (!file_of.count(node)) {
                    const Node &tn = nodes[static_cast<std::size_t>(node)];
                    std::string fallback = "part-" + tn.section + extension_for(mime_type(tn));
                    const char *fn = GMIME_IS_PART(tn.object) ? g_mime_part_get_filename(GMIME_PART(tn.object)) : nullptr;
                    std::string name = fn ? fn : "";
                    if (name.empty() && !parts[static_cast<std::size_t>(node)].location.empty()) {
                        std::string loc = parts[static_cast<std::size_t>(node)].location;
                        name = unescape(loc.substr(loc.find_last_of('/') + 1));
                        if (auto q = name.find_first_of("?#"); q != std::string::npos) name.resize(q);
                    }
                    name = safe_name(name, fallback);
                    std::string stem = name, ext;
                    if (auto dot = name.rfind('.'); dot != std::string::npos && dot > 0) {
                        stem = name.substr(0, dot);
                        ext = name.substr(dot);
                    }
                    for (int k = 2; used.count(name); ++k) name = stem + "-" + std::to_string(k) + ext;
                    used.insert(name);
                    if (auto s = write_file(name, nullptr, &tn); !s) return undo(s.error());
                    file_of[node] = name;
                }
                GCharPtr rel(g_uri_escape_string(file_of[node].c_str(), nullptr, FALSE));
                reps.push_back({ri, rel.get()});
            }
            std::string html_name = first_html ? "index.html" : "part-" + nodes[static_cast<std::size_t>(pe.html_node)].section + ".html";
            first_html = false;
            used.insert(html_name);
            std::string page = html::rewrite(pe.html, pe.scan, reps).html; // a file of our own: kept as far as it goes
            if (auto s = write_file(html_name, &page, nullptr); !s) return undo(s.error());
        }
    }
    return ok();
}

} // namespace mimeuri
