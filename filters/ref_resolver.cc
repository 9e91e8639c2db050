// The reference pass, step 2: matching references to their targets (see ref_resolver.hh).
#include "ref_resolver.hh"

#include "cturi.hh"

#include "text.hh"

#include <algorithm>
#include <optional>

namespace mimeuri::refs {

const char *status_name(RefStatus s)
{
    switch (s) {
    case RefStatus::Resolved: return "resolved";
    case RefStatus::Ambiguous: return "ambiguous";
    case RefStatus::Dangling: break;
    }
    return "dangling";
}

const char *match_name(Match m)
{
    switch (m) {
    case Match::ContentLocation: return "content-location";
    case Match::ContentIdWithoutScheme: return "content-id-without-scheme";
    case Match::Filename: return "filename";
    case Match::Thread: return "thread";
    case Match::AsWritten: break;
    }
    return "";
}

namespace {

// Whether unescape() can give back anything but s itself: GLib's unescaping copies every octet
// but a '%' escape, and stops at a NUL (checked over every octet).
bool escaped(std::string_view s)
{
    for (char c : s)
        if (c == '%' || c == '\0') return true;
    return false;
}

using Map = std::unordered_map<std::string, std::vector<int>>; // Resolver::Lookup's

// local@domain with the domain in ASCII lower case: two ids are the same by same_id_ci_domain
// when their keys are equal; "" for an id without '@', which matches nothing that way.
std::string ci_key(const std::string &id)
{
    const auto at = id.rfind('@');
    if (at == std::string::npos) return {};
    return id.substr(0, at) + text::ascii_lower(id.substr(at));
}

void add(Map &m, const std::string &key, int i)
{
    auto &v = m[key];
    if (v.empty() || v.back() != i) v.push_back(i); // a part under two equal keys once
}

const std::vector<int> &find(const Map &m, const std::string &key)
{
    static const std::vector<int> none;
    auto it = m.find(key);
    return it == m.end() ? none : it->second;
}

// The parts under any of keys, in document order, each once.
std::vector<int> find_any(const Map &m, std::initializer_list<const std::string *> keys)
{
    std::vector<int> out;
    for (const std::string *k : keys) {
        const auto &v = find(m, *k);
        out.insert(out.end(), v.begin(), v.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace

Resolver::Resolver(const MessageIndex &message, const RunIndex &run, const ExternalIndexes *externals)
    : ix_(message), run_(run), externals_(externals)
{
}

Resolver::~Resolver() = default;

const Resolver::Lookup &Resolver::lookup() const
{
    if (lookup_) return *lookup_;
    auto l = std::make_unique<Lookup>();
    for (std::size_t n = 0; n < ix_.parts.size(); ++n) {
        const IndexedPart &p = ix_.parts[n];
        const int i = static_cast<int>(n);
        if (!p.cid_clean.empty() || !p.cid_raw.empty())
            for (const std::string *id : {&p.cid_clean, &p.cid_raw}) {
                add(l->id, *id, i);
                if (std::string k = ci_key(*id); !k.empty()) add(l->id_ci, k, i);
            }
        if (!p.location.empty()) {
            add(l->location, p.location, i);
            add(l->location_unescaped, p.location_unescaped, i);
            add(l->location_ci, text::ascii_lower(p.location), i);
        }
        for (const std::string *f : {&p.filename, &p.name})
            if (!f->empty()) add(l->file, *f, i);
    }
    for (std::size_t k = 0; k < ix_.messages.size(); ++k) {
        const IndexedMessage &m = ix_.messages[k];
        if (!m.has_id) continue;
        add(l->message, m.message_id, static_cast<int>(k));
        if (std::string key = ci_key(m.message_id); !key.empty()) add(l->message_ci, key, static_cast<int>(k));
    }
    lookup_ = std::move(l);
    return *lookup_;
}

int Resolver::unique_in_related(int from, const std::vector<int> &candidates) const
{
    const int related = ix_.related_of(from);
    if (related < 0) return -1;
    int found = -1;
    for (int i : candidates) {
        if (i == from || ix_.related_of(i) != related) continue;
        if (found >= 0) return -1; // not unique: never a guess
        found = i;
    }
    return found;
}

void Resolver::choose(std::vector<int> matches, int from, Target &t) const
{
    const auto &parts = ix_.parts;
    auto at = [&](int i) -> const IndexedPart & { return parts[static_cast<std::size_t>(i)]; };
    if (matches.empty()) {
        t.status = RefStatus::Dangling;
        return;
    }
    int related = -1;
    for (int p = at(from).parent; p >= 0; p = at(p).parent)
        if (at(p).related) {
            related = p;
            break;
        }
    if (related >= 0) {
        std::vector<int> inside;
        for (int m : matches)
            if (ix_.is_descendant(m, related)) inside.push_back(m);
        if (!inside.empty()) matches = inside;
    }
    if (matches.size() > 1) {
        int parent = at(matches[0]).parent;
        bool same_alt = parent >= 0 && at(parent).alternative;
        for (int m : matches) same_alt = same_alt && at(m).parent == parent;
        if (!same_alt) {
            t.status = RefStatus::Ambiguous;
            return;
        }
    }
    t.status = RefStatus::Resolved;
    t.node = *std::max_element(matches.begin(), matches.end());
}

Target Resolver::cid(const std::string &url, int from, bool padded) const
{
    Target t;
    // RFC 2392: the addr-spec, %-encoded (unescape asked only where it may change it).
    std::string addr = escaped(std::string_view(url).substr(4)) ? unescape(url.substr(4)) : url.substr(4);
    std::string clean = strip_brackets(addr);
    // Common broken forms: cid:<x>, surrounding spaces, an escape that does not decode.
    t.broken = padded || clean != addr || addr.find(' ') != std::string::npos;
    const Lookup &l = lookup();
    const std::vector<int> &exact = find(l.id, clean);
    const std::string key = ci_key(clean);
    const std::vector<int> &ci = find(l.id_ci, key); // none for an id without '@'
    if (exact.empty() && !ci.empty()) t.broken = true; // a differently-cased domain
    if (exact.empty() && ci.empty()) {
        // Chrome's MHTML names parts "Content-Location: cid:...", without a Content-ID: the
        // URL is that part's Content-Location, so it resolves to it (RFC 2557 8.2, as any
        // URL); via_location says how, and repair can add the Content-ID it names.
        const std::vector<int> &by_location = find(l.location_ci, text::ascii_lower(url));
        if (!by_location.empty()) {
            choose(by_location, from, t);
            if (t.status == RefStatus::Resolved) {
                t.match = Match::ContentLocation;
                t.named_id = clean;
            }
            return t;
        }
        // Last: the one part of the related set named so (cid:logo.png for a part with
        // filename="logo.png" and no such Content-ID). Repair gives a target without a
        // Content-ID the one the URL names (no part has it: none matched above), and
        // rewrites the URL to the Content-ID of a target that has one.
        if (clean.empty()) return t;
        int n = unique_in_related(from, find(l.file, clean));
        if (n < 0) {
            // Named by no part of its message: a reply's, whose part stayed in the message it answers.
            const int k = ix_.parts[static_cast<std::size_t>(from)].message;
            Target th = in_thread(clean, k < 0 ? 0 : k);
            th.broken = t.broken;
            return th;
        }
        const IndexedPart &tp = ix_.parts[static_cast<std::size_t>(n)];
        t.status = RefStatus::Resolved;
        t.node = n;
        t.match = Match::Filename;
        t.named_id = clean;
        t.broken = t.broken || !tp.cid_clean.empty() || !tp.cid_raw.empty();
        return t;
    }
    choose(exact.empty() ? ci : exact, from, t);
    return t;
}

// mid: in this message and its embedded messages, exactly or (ci) with the domain in any case.
std::optional<Target> Resolver::mid_here(const std::string &id, const std::string &content_id, int from, bool ci) const
{
    Target t;
    const Lookup &l = lookup();
    const std::string key = ci ? ci_key(id) : id;
    if (ci && key.empty()) return std::nullopt;
    const std::vector<int> &found = find(ci ? l.message_ci : l.message, key);
    if (found.empty()) return std::nullopt;
    const int k = found.front(); // the first in document order, as a scan finds it
    const IndexedMessage &m = ix_.messages[static_cast<std::size_t>(k)];
    t.mid = m.message_id;
    if (content_id.empty()) {
        t.status = RefStatus::Resolved;
        t.node = m.node;
        return t;
    }
    std::vector<int> matches;
    for (int i : find(l.id, content_id))
        if (ix_.parts[static_cast<std::size_t>(i)].message == k) matches.push_back(i);
    choose(matches, from, t);
    t.mid_cid = content_id;
    return t;
}

// mid: in another message: e is its entry (in the run's index or an external one).
Target Resolver::in_message(const std::string &found_id, const RunIndex::Entry &e, int count,
                            const std::string &content_id) const
{
    Target t;
    t.message_id = found_id;
    t.mid = found_id;
    if (count > 1) {
        t.status = RefStatus::Ambiguous;
        return t;
    }
    t.source = e.source;
    t.offset = e.offset;
    t.input_no = e.input_no;
    t.number = e.index;
    t.html = e.html && e.section.empty();
    t.page = e.page;
    if (content_id.empty()) {
        t.status = RefStatus::Resolved;
        t.section = e.section;
        return t;
    }
    auto it = e.cids.find(content_id);
    t.mid_cid = content_id;
    t.status = it == e.cids.end() ? RefStatus::Dangling : RefStatus::Resolved;
    if (it != e.cids.end()) t.section = it->second;
    return t;
}

std::optional<Resolver::Other> Resolver::other_message(const std::string &id, bool ci, bool cids) const
{
    if (RunIndex::Found found = run_.find(id, ci)) {
        // The run's own message wins over an index; but an index of the whole archive
        // that holds the id more than once makes it ambiguous, as one run over the
        // archive would find it (a sharded run gives one run's answers).
        int count = found->second.count;
        if (externals_)
            for (const auto &x : *externals_)
                if (count < 2)
                    if (auto other = x->find(found->first, false); other && other->count > 1) count = other->count;
        return Other{found->first, std::move(found->second), count, true};
    }
    if (externals_)
        for (const auto &x : *externals_) {
            std::string key = id;
            if (ci) {
                auto k = x->find_ci(id);
                if (!k) continue;
                key = *k;
            }
            if (const RunIndex::Entry *e = x->find(key, cids)) return Other{key, *e, e->count, false};
        }
    return std::nullopt;
}

Target Resolver::in_thread(const std::string &content_id, int k) const
{
    auto at = answered_.find(k);
    if (at == answered_.end()) {
        std::vector<std::optional<Other>> found;
        std::vector<std::string> ids = ix_.answers(k);
        for (const std::string &id : ids) found.push_back(other_message(id, false, true));
        at = answered_.emplace(k, std::make_pair(std::move(ids), std::move(found))).first;
    }
    const auto &[ids, others] = at->second;
    Target none;
    for (std::size_t i = 0; i < others.size(); ++i) {
        const std::optional<Other> &o = others[i];
        if (!o && none.unknown_id.empty()) none.unknown_id = ids[i];
        // One of several messages with that id: which one the reply answers is not known.
        if (!o || o->count > 1 || !o->entry.cids.count(content_id)) continue;
        Target t = in_message(o->id, o->entry, o->count, content_id);
        t.in_run = o->in_run;
        t.match = Match::Thread;
        return t;
    }
    return none;
}

Target Resolver::mid(const std::string &url, int from) const
{
    std::string rest = url.substr(4);
    std::string id_part = rest, cid_part;
    if (auto slash = rest.find('/'); slash != std::string::npos) { // RFC 2392: mid:message-id/content-id
        id_part = rest.substr(0, slash);
        cid_part = rest.substr(slash + 1);
    }
    std::string id_raw = unescape(id_part), id = strip_brackets(id_raw);
    std::string content_id = strip_brackets(unescape(cid_part));
    const bool broken = id != id_raw || id.find(' ') != std::string::npos;
    // Exactly first, then with the domain compared case-insensitively; each time this
    // message and its embedded messages first, then the other messages of the run.
    for (bool ci : {false, true}) {
        if (auto here = mid_here(id, content_id, from, ci)) {
            here->broken = broken || ci;
            return *here;
        }
        if (auto other = other_message(id, ci, !content_id.empty())) {
            Target t = in_message(other->id, other->entry, other->count, content_id);
            t.broken = broken || ci;
            t.in_run = other->in_run;
            return t;
        }
    }
    Target none;
    none.unknown_id = id;
    return none;
}

const std::string &Resolver::resolved(const std::string &base, const std::string &url) const
{
    std::string key = std::to_string(base.size()) + ':'; // the base's length first: no two pairs one key
    key.append(base).append(url);
    auto it = resolved_.find(key);
    if (it == resolved_.end()) it = resolved_.emplace(std::move(key), resolve(base, url)).first;
    return it->second;
}

Target Resolver::location(const std::string &url, const std::string &base, int from) const
{
    Target t;
    if (ix_.any_location) {
        const std::string &abs = resolved(base, url); // RFC 2557 5: both sides absolute
        // (each part's: in the index; unescape asked only where it may change it)
        const std::string abs_unescaped = abs.empty() || !escaped(abs) ? abs : unescape(abs);
        const Lookup &l = lookup();
        // A part whose location (as written or decoded) is the URL, absolute or as written.
        std::vector<int> matches = find_any(l.location, {&abs, &url});
        if (!abs.empty())
            for (int i : find(l.location_unescaped, abs_unescaped)) matches.push_back(i);
        std::sort(matches.begin(), matches.end());
        matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
        matches.erase(std::remove(matches.begin(), matches.end(), from), matches.end());
        if (!matches.empty()) {
            choose(matches, from, t);
            return t;
        }
    }
    // Last: a relative URL that is, as written, the Content-ID of one part of the related
    // set (<img src="image001.png"> for Content-ID: <image001.png>). Never a URL with a
    // scheme, nor one that is only a path, a query or a fragment.
    if (!ix_.any_related_id || url.empty() || url[0] == '/' || url[0] == '#' || url[0] == '?' ||
        g_uri_peek_scheme(url.c_str()))
        return t;
    const std::string plain = unescape(url);
    const Lookup &l = lookup();
    int n = unique_in_related(from, find_any(l.id, {&url, &plain}));
    if (n < 0) return t;
    t.status = RefStatus::Resolved;
    t.node = n;
    t.match = Match::ContentIdWithoutScheme;
    t.broken = true; // repair writes the cid: URL
    return t;
}

} // namespace mimeuri::refs
