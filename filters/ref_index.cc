// The reference pass, step 1: the message's index and the run's (see ref_index.hh).
#include "ref_index.hh"

#include "cturi.hh"
#include "text.hh"
#include "wire.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <tuple>

namespace mimeuri::refs {

std::string trim(std::string_view s)
{
    std::size_t b = 0, e = s.size();
    while (b < e && g_ascii_isspace(s[b])) ++b;
    while (e > b && g_ascii_isspace(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
}

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

bool same_id_ci_domain(const std::string &a, const std::string &b)
{
    auto at_a = a.rfind('@'), at_b = b.rfind('@');
    if (at_a == std::string::npos || at_b == std::string::npos) return false;
    return a.compare(0, at_a, b, 0, at_b) == 0 && cturi::iequals(a.substr(at_a), b.substr(at_b));
}

std::string mime_type(const Node &n)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    if (!ct) return "text/plain";
    const char *type = g_mime_content_type_get_media_type(ct), *sub = g_mime_content_type_get_media_subtype(ct);
    return text::ascii_lower(std::string(type ? type : "") + "/" + (sub ? sub : ""));
}

std::string sniff_image(std::string_view head)
{
    // A fixed table, as browsers have it, not GLib's g_content_type_guess: that answers from
    // the machine's shared-mime-info database, which need not be installed, and guesses
    // more than the image types a browser shows whatever the part's declared type.
    using namespace std::string_view_literals;
    if (head.substr(0, 8) == "\x89PNG\r\n\x1a\n"sv) return "image/png";
    if (head.substr(0, 3) == "\xff\xd8\xff"sv) return "image/jpeg";
    if (head.substr(0, 6) == "GIF87a"sv || head.substr(0, 6) == "GIF89a"sv) return "image/gif";
    if (head.size() >= 14 && head.substr(0, 4) == "RIFF"sv && head.substr(8, 6) == "WEBPVP"sv) return "image/webp";
    return {};
}

bool MessageIndex::is_descendant(int node, int ancestor) const
{
    for (int p = node; p >= 0; p = parts[static_cast<std::size_t>(p)].parent)
        if (p == ancestor) return true;
    return false;
}

std::vector<std::string> answered_ids(const char *in_reply_to, const char *references,
                                      const std::function<bool(const std::string &)> &skip)
{
    std::vector<std::string> out;
    // RFC 5322 3.6.4: In-Reply-To names the parent(s); References the thread, the parent last.
    for (const char *raw : {in_reply_to, references}) {
        GMimeReferences *refs = raw ? g_mime_references_parse(nullptr, raw) : nullptr;
        if (!refs) continue;
        std::vector<std::string> ids;
        for (int i = 0; i < g_mime_references_length(refs); ++i) ids.emplace_back(g_mime_references_get_message_id(refs, i));
        g_mime_references_free(refs);
        if (raw == references) std::reverse(ids.begin(), ids.end());
        for (std::string &id : ids)
            if (out.size() < kMaxAnswered && !id.empty() && !skip(id) && std::find(out.begin(), out.end(), id) == out.end())
                out.push_back(std::move(id));
    }
    return out;
}

std::vector<std::string> MessageIndex::answers(int k) const
{
    const IndexedMessage &m = messages[static_cast<std::size_t>(k)];
    auto own = [&](const std::string &id) {
        return std::any_of(messages.begin(), messages.end(), [&](const IndexedMessage &o) { return o.has_id && o.message_id == id; });
    };
    auto field = [&](const char *name) { return m.gmime ? g_mime_object_get_header(GMIME_OBJECT(m.gmime), name) : nullptr; };
    return answered_ids(field("In-Reply-To"), field("References"), own);
}

int MessageIndex::related_of(int node) const
{
    for (int p = parts[static_cast<std::size_t>(node)].parent; p >= 0; p = parts[static_cast<std::size_t>(p)].parent)
        if (parts[static_cast<std::size_t>(p)].related) return p;
    return -1;
}

namespace {

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

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

IndexedMessage indexed_message(GMimeMessage *m, const std::string &section, const std::vector<Node> &nodes)
{
    IndexedMessage im;
    const char *id = g_mime_message_get_message_id(m);
    im.has_id = id != nullptr;
    if (id) im.message_id = id;
    im.section = section;
    // The entity mid:ID names: the last one with the message's section (0 for the top).
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].section == section && !section.empty()) im.node = static_cast<int>(i);
    im.gmime = m;
    return im;
}

} // namespace

MessageIndex index_message(const MessageContext &ctx)
{
    const auto &nodes = ctx.nodes();
    MessageIndex ix;
    std::vector<GMimeMessage *> owners{ctx.message()};
    ix.messages.push_back(indexed_message(ctx.message(), "", nodes));
    for (const Node &n : nodes)
        if (n.kind == Node::Kind::MessagePart)
            if (GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(n.object))) {
                owners.push_back(m);
                ix.messages.push_back(indexed_message(m, n.section, nodes));
            }
    ix.parts.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        IndexedPart &p = ix.parts[i];
        p.parent = n.parent;
        p.section = n.section;
        p.related = is_type(n, "multipart", "related");
        p.alternative = is_type(n, "multipart", "alternative");
        p.message = -1;
        for (std::size_t k = 0; k < owners.size() && p.message < 0; ++k)
            if (owners[k] == n.message) p.message = static_cast<int>(k);
        if (const char *c = g_mime_object_get_content_id(n.object)) p.cid_clean = c;
        p.cid_raw = strip_brackets(header_raw(n, "Content-ID"));
        if ((!p.cid_clean.empty() || !p.cid_raw.empty()) && ix.related_of(static_cast<int>(i)) >= 0) ix.any_related_id = true;
        if (n.kind == Node::Kind::Leaf) {
            if (const char *f = g_mime_object_get_content_disposition_parameter(n.object, "filename")) p.filename = f;
            if (const char *f = g_mime_object_get_content_type_parameter(n.object, "name")) p.name = f;
        }
        // RFC 2557 5: Content-Base, else the enclosing entity's base; a Content-Location is
        // resolved against it and is the base for what it contains.
        std::string parent_base = n.parent >= 0 ? ix.parts[static_cast<std::size_t>(n.parent)].base : "thismessage:/";
        std::string cb = header_raw(n, "Content-Base");
        p.base = cb.empty() ? parent_base : resolve(parent_base, cb);
        if (p.base.empty()) p.base = parent_base;
        std::string cl = header_raw(n, "Content-Location");
        if (!cl.empty()) {
            std::string loc = resolve(p.base, cl);
            p.location = loc.empty() ? cl : loc;
            p.location_unescaped = unescape(p.location);
            p.base = p.location;
            ix.any_location = true;
        }
    }
    return ix;
}

RunIndex::RunIndex() : bytes_(g_string_chunk_new(64 * 1024)) {}
RunIndex::~RunIndex() { g_string_chunk_free(bytes_); }

std::string_view RunIndex::keep(std::string_view s)
{
    return {g_string_chunk_insert_len(bytes_, s.data(), static_cast<gssize>(s.size())), s.size()};
}

RunIndex::Slot RunIndex::slot_of(Entry &&e)
{
    Slot s{};
    s.index = e.index;
    s.html = e.html ? 1 : 0;
    s.offset = e.offset;
    s.input_no = static_cast<std::uint32_t>(e.input_no);
    s.count = e.count;
    // The inputs' names: a run has a few, and the last one asked for is nearly always it.
    auto it = std::find(sources_.rbegin(), sources_.rend(), e.source);
    if (it == sources_.rend()) {
        sources_.push_back(std::move(e.source));
        s.source = static_cast<std::uint32_t>(sources_.size() - 1);
    } else {
        s.source = static_cast<std::uint32_t>(sources_.rend() - it - 1);
    }
    if (!e.section.empty() || !e.cids.empty()) {
        extras_.push_back({std::move(e.section), std::move(e.cids)});
        s.extra = static_cast<std::uint32_t>(extras_.size());
    }
    return s;
}

RunIndex::Entry RunIndex::entry_at(const Slot &s) const
{
    Entry e;
    e.index = s.index;
    e.offset = s.offset;
    e.input_no = s.input_no;
    e.html = s.html != 0;
    e.count = s.count;
    e.source = sources_[s.source];
    if (s.extra) {
        e.section = extras_[s.extra - 1].section;
        e.cids = extras_[s.extra - 1].cids;
    }
    return e;
}

void RunIndex::add(const std::string &id, Entry e)
{
    auto found = by_id_.find(id);
    if (found != by_id_.end()) {
        // The message first in run order keeps the place; the others count as duplicates.
        Slot &s = found->second;
        const int count = s.count + e.count;
        if (std::make_tuple(e.input_no, e.index) < std::make_tuple(std::size_t{s.input_no}, std::size_t{s.index}))
            s = slot_of(std::move(e)); // (the replaced one's extra, if any, stays unused: duplicates are rare)
        s.count = count;
        return;
    }
    const std::string_view kept = keep(id);
    by_id_.emplace(kept, slot_of(std::move(e)));
    if (auto key = mid_ci_key(id); !key.empty()) {
        // Of several ids differing only in the domain's case, the first in order answers.
        auto c = ci_.find(key);
        if (c == ci_.end()) ci_.emplace(key == id ? kept : keep(key), kept);
        else if (kept < c->second) c->second = kept;
    }
}

RunIndex::Entry RunIndex::entry_of(StoredMessage m, int count)
{
    Entry e;
    e.count = count;
    e.index = m.number;
    e.section = std::move(m.section);
    e.source = std::move(m.source);
    e.offset = m.offset;
    e.page = std::move(m.page);
    for (auto &[cid, section] : m.cids) e.cids.emplace(std::move(cid), std::move(section));
    return e;
}

int page_node(const MessageContext &ctx)
{
    const auto &nodes = ctx.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == Node::Kind::Leaf && mime_type(nodes[i]) == "text/html") return static_cast<int>(i);
    return -1;
}

void RunIndex::add_message(const MessageContext &ctx, bool pages)
{
    const bool html = pages; // --cid=extract: every message gets a page
    for (const StoredMessage &m : messages_of(ctx)) {
        Entry e = entry_of(m, 1);
        e.input_no = ctx.at().input_no;
        e.html = html && m.section.empty();
        add(m.message_id, std::move(e));
    }
}

RunIndex::Found RunIndex::find(const std::string &id, bool ci) const
{
    auto found = by_id_.end();
    if (!ci) {
        found = by_id_.find(id);
    } else if (auto key = mid_ci_key(id); !key.empty()) {
        if (auto c = ci_.find(key); c != ci_.end()) found = by_id_.find(c->second);
    }
    if (found == by_id_.end()) return std::nullopt;
    return std::make_pair(std::string(found->first), entry_at(found->second));
}

// The entries one by one (no copy of the whole index), each by Entry's field list.
std::string RunIndex::save() const
{
    Record r;
    wire::Put put(r);
    put(by_id_.size());
    for (const auto &[id, slot] : by_id_) put(std::string(id), entry_at(slot));
    return r.take();
}

void RunIndex::merge(const std::string &bytes)
{
    Record r(bytes);
    wire::Get get(r);
    std::size_t n = 0;
    get(n);
    for (; n > 0; --n) {
        std::string id;
        Entry e;
        get(id, e);
        add(id, std::move(e));
    }
}

} // namespace mimeuri::refs
