#include "external_body.hh"

#include "cturi.hh"
#include "header_lines.hh"
#include "text.hh"

#include <algorithm>
#include <optional>

namespace mimeuri {

namespace rfc2017 {

std::string extract(std::string_view value)
{
    std::string out = text::without_space(value);
    if (out.size() >= 2 && out.front() == '"' && out.back() == '"') out = out.substr(1, out.size() - 2);
    return out;
}

std::string encode(std::string_view url)
{
    return text::percent_encode(url, [](unsigned char c) { return c <= 32 || c >= 127 || c == '"' || c == '\\'; });
}

std::vector<std::string> words(std::string_view encoded)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < encoded.size()) {
        std::size_t len = std::min(max_word, encoded.size() - pos);
        if (pos + len < encoded.size()) {
            // Prefer breaking after a "/" late in the window, as RFC 2017's example does.
            auto slash = encoded.substr(pos, len).find_last_of('/');
            if (slash != std::string_view::npos && slash + 1 >= max_word / 2) len = slash + 1;
        }
        // Do not cut a %XX escape: back up to before a '%' in the last two characters.
        if (pos + len < encoded.size()) {
            for (std::size_t k = 1; k <= 2 && k < len; ++k)
                if (encoded[pos + len - k] == '%') {
                    len -= k;
                    break;
                }
        }
        out.emplace_back(encoded.substr(pos, len));
        pos += len;
    }
    return out;
}

std::string parameter(std::string_view url)
{
    std::string out = "URL=\"";
    bool first = true;
    for (const auto &w : words(encode(url))) {
        if (!first) out += "\n\t";
        out += w;
        first = false;
    }
    return out + "\"";
}

} // namespace rfc2017

namespace {

using text::ascii_lower;
std::string lower(std::string_view s) { return ascii_lower(s); }

// The parameter's name without RFC 2231 "*N" / "*" suffixes.
std::string base_name(const std::string &name) { return lower(name.substr(0, name.find('*'))); }

const cturi::Param *param(const cturi::ContentType &ct, std::string_view name)
{
    for (const auto &p : ct.params)
        if (cturi::iequals(p.name, name)) return &p;
    return nullptr;
}

std::string scheme_of(const std::string &url)
{
    auto colon = url.find(':');
    if (colon == std::string::npos || colon == 0 || !g_ascii_isalpha(url[0])) return {};
    for (std::size_t i = 1; i < colon; ++i)
        if (!g_ascii_isalnum(url[i]) && url[i] != '+' && url[i] != '-' && url[i] != '.') return {};
    return lower(url.substr(0, colon));
}

// RFC 1738 3.2: an FTP path segment, %-encoding what a segment cannot hold.
std::string segment(std::string_view s)
{
    return text::percent_encode(s, [](unsigned char c) {
        return !g_ascii_isalnum(c) && std::string_view("$-_.+!*'(),&=:@").find(static_cast<char>(c)) == std::string_view::npos;
    });
}

// The phantom header block of an external-body part (RFC 2046 5.2.3), read raw.
struct Phantom {
    std::vector<std::pair<std::string, std::string>> headers; // name, unfolded value
    std::vector<std::string> notes;
    bool body_blank{true};
};

Phantom read_phantom(const MessageContext &ctx, const Node &n)
{
    Phantom ph;
    if (!g_mime_part_get_content(GMIME_PART(n.object))) {
        ph.notes.push_back("no inner header block");
        return ph;
    }
    auto span = ctx.content_span(n);
    if (!span) {
        ph.notes.push_back("phantom body unreadable: " + span.error().message);
        return ph;
    }
    auto [begin, end] = *span;
    auto bytes = ctx.source().slice(begin, std::min(end, begin + 65536));
    if (!bytes) {
        ph.notes.push_back("phantom body unreadable: " + bytes.error().message);
        return ph;
    }
    std::string text;
    for (char c : *bytes)
        if (c != '\r') text += c;
    HeaderFields fields(text);
    for (Field f; fields.next(f);) {
        // Its first line (a folded one too, when the block starts with one), then its folds
        // appended as they are, without their line breaks.
        const std::string line(f.first.text);
        auto colon = line.find(':');
        if (colon == std::string::npos || colon == 0 || line.find(' ') < colon) {
            ph.headers.clear();
            ph.notes.push_back("no inner header block");
            return ph;
        }
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t") + 1);
        ph.headers.emplace_back(line.substr(0, colon), v);
        for (char c : f.raw.substr(f.first.next - f.begin))
            if (c != '\n') ph.headers.back().second += c;
    }
    const bool blank = fields.ended_by_empty_line();
    const std::size_t pos = fields.end();
    if (ph.headers.empty()) ph.notes.push_back("no inner header block");
    if (!ph.headers.empty() && !blank && pos >= text.size() && text.back() != '\n')
        ph.notes.push_back("inner header block not terminated by an empty line");
    std::string_view body = std::string_view(text).substr(std::min(pos, text.size()));
    ph.body_blank = body.find_first_not_of(" \t\n") == std::string_view::npos;
    return ph;
}

using BodyStatus = ExternalBodyEntry::Status;

// The report entry of one external-body part, and the reasons that finish() joins into
// its reason when it sets the status.
struct Entry {
    MessageReport &report;
    std::size_t at; // in report.external_bodies
    std::vector<std::string> reasons;

    Entry(MessageContext &ctx, const Node &n) : report(ctx.report()), at(report.external_bodies.size())
    {
        ExternalBodyEntry e;
        e.part = n.section;
        report.external_bodies.push_back(std::move(e));
    }

    ExternalBodyEntry &get() { return report.external_bodies[at]; }

    void finish(BodyStatus status)
    {
        std::string reason;
        for (const auto &r : reasons) reason += (reason.empty() ? "" : "; ") + r;
        get().status = status;
        get().reason = std::move(reason);
    }
};

// One external-body part with a parseable Content-Type: the value both as written
// (scanned, with the spans of its parameters) and decoded (parsed), and its phantom
// header block.
struct Part {
    const Node &node;
    GMimeHeader *header;
    std::string value; // " message/external-body; ...\n"
    cturi::ScannedContentType scanned;
    cturi::ContentType parsed;
    Phantom phantom;
};

// The URL to write, and the spans of the header value it replaces.
struct Rewrite {
    std::string url;
    std::vector<const cturi::ParamSpan *> remove;   // parameter spans to drop
    const cturi::ParamSpan *insert_after = nullptr; // write URL after this span
    BodyStatus status = BodyStatus::Ok;
};

// The inner header block's Content-* fields, into the report entry's "inner" object,
// and the phantom's notes as reasons.
void report_inner(const Phantom &ph, Entry &entry)
{
    ExternalBodyEntry::Fields inner;
    for (const auto &[name, v] : ph.headers)
        for (const char *want : {"Content-Type", "Content-ID", "Content-MD5", "Content-Transfer-Encoding"})
            if (cturi::iequals(name, want)) ExternalBodyEntry::set_field(inner, lower(want), v);
    entry.get().inner = std::move(inner);
    entry.reasons.insert(entry.reasons.end(), ph.notes.begin(), ph.notes.end());
}

// Rewrites url by the first --external-body-map prefix it starts with; says whether one did.
bool map_url(const ExternalBodyOptions &opts, std::string &url)
{
    for (const auto &[from, to] : opts.url_map)
        if (url.compare(0, from.size(), from) == 0) {
            url = to + url.substr(from.size());
            return true;
        }
    return false;
}

// Whether the encoded URL is absolute with a scheme allowed by --external-body-schemes;
// if not, the entry is finished.
bool retrievable(const ExternalBodyOptions &opts, const std::string &encoded, Entry &entry)
{
    std::string scheme = scheme_of(encoded);
    if (scheme.empty()) {
        entry.reasons.push_back("not an absolute URL");
        entry.finish(BodyStatus::Invalid);
        return false;
    }
    if (std::find(opts.schemes.begin(), opts.schemes.end(), scheme) == opts.schemes.end()) {
        entry.reasons.push_back("scheme " + scheme + ": is not a retrieval scheme allowed by --external-body-schemes"
                                " (RFC 2017 2)");
        entry.finish(BodyStatus::Disallowed);
        return false;
    }
    return true;
}

// Whether a URL parameter as written (its raw span) holds a URL-word of more than 40
// characters (RFC 2017 3.1).
bool has_long_word(const std::string &raw)
{
    auto q = raw.find('"');
    std::string inside = raw.substr(q + 1);
    std::size_t word = 0;
    for (char c : inside) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"') word = 0;
        else if (++word > rfc2017::max_word) return true;
    }
    return false;
}

// What keeps the URL parameter from being written as RFC 2017 3.1 wants it.
std::vector<std::string> url_problems(const Part &part, const std::vector<const cturi::ParamSpan *> &url_spans,
                                      bool rfc2231, const std::string &before, const std::string &encoded)
{
    // Conforming: one plain quoted URL parameter, words of at most 40, nothing to encode.
    std::vector<std::string> problems;
    if (url_spans.size() != 1 || rfc2231)
        problems.push_back("URL written in RFC 2231 form");
    else if (!url_spans[0]->quoted)
        problems.push_back("URL parameter not quoted");
    if (encoded != before) problems.push_back("URL has characters that must be %-encoded (RFC 2017 3.1 (1))");
    if (problems.empty()) {
        std::string raw(part.value.substr(url_spans[0]->begin, url_spans[0]->end - url_spans[0]->begin));
        if (has_long_word(raw)) problems.push_back("URL-word longer than 40 characters (RFC 2017 3.1)");
    }
    return problems;
}

// access-type=URL (RFC 2017): checks the URL parameter and plans its rewrite when it is
// not conforming or is mapped (and the mode writes). Without a plan the entry is finished.
std::optional<Rewrite> url_access(const ExternalBodyOptions &opts, bool write, const Part &part, Entry &entry)
{
    if (!part.phantom.body_blank)
        entry.reasons.push_back("phantom body not empty (RFC 2017 3 (3): should be left blank)");
    const cturi::Param *p = param(part.parsed, "URL");
    if (!p) {
        entry.reasons.push_back("the URL parameter is mandatory for access-type=URL (RFC 2017 3 (2))");
        entry.finish(BodyStatus::Invalid);
        return std::nullopt;
    }
    std::vector<const cturi::ParamSpan *> url_spans;
    for (const auto &sp : part.scanned.params)
        if (base_name(sp.name) == "url") url_spans.push_back(&sp);
    const bool rfc2231 = std::any_of(url_spans.begin(), url_spans.end(),
                                     [](auto *sp) { return sp->name.find('*') != std::string::npos; });
    // RFC 2017 3.1: quotes and linear white space go. An RFC 2231 value is already
    // decoded data: its spaces are part of the URL (and get encoded below).
    const std::string before = rfc2231 ? p->value : rfc2017::extract(p->value);
    entry.get().url_before = before;
    Rewrite rw;
    rw.url = before;
    const bool mapped = map_url(opts, rw.url);
    std::string encoded = rfc2017::encode(rw.url);
    entry.get().url = encoded;
    if (!retrievable(opts, encoded, entry)) return std::nullopt;
    std::vector<std::string> problems = url_problems(part, url_spans, rfc2231, before, encoded);
    if (problems.empty() && !mapped) {
        entry.finish(BodyStatus::Ok);
        return std::nullopt;
    }
    entry.reasons.insert(entry.reasons.end(), problems.begin(), problems.end());
    if (!write) {
        entry.finish(problems.empty() ? BodyStatus::Ok : BodyStatus::Invalid);
        return std::nullopt;
    }
    rw.status = mapped ? BodyStatus::Mapped : BodyStatus::Normalized;
    rw.remove = url_spans;
    return rw;
}

// RFC 1738 3.2: the path of ftp://site/dir/segments/name from the directory and name
// parameters; an absolute directory's leading "/" is the %2F the login directory
// cannot express otherwise.
std::string ftp_path(const cturi::ContentType &parsed, const cturi::Param &name)
{
    std::string path;
    if (const cturi::Param *dir = param(parsed, "directory")) {
        std::string d = dir->value;
        if (!d.empty() && d[0] == '/') path += "%2F";
        std::size_t pos = d.empty() || d[0] != '/' ? 0 : 1;
        while (pos <= d.size() && !d.empty()) {
            auto slash = d.find('/', pos);
            std::string seg = d.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
            if (!seg.empty()) path += segment(seg) + "/";
            if (slash == std::string::npos) break;
            pos = slash + 1;
        }
    }
    return path + segment(name.value);
}

// The URL of a legacy reference: ftp://site/path;type=X (RFC 1738 3.2) or
// tftp://site/path;mode=X (RFC 3617), before --external-body-map.
std::string legacy_url(const cturi::ContentType &parsed, const std::string &access_type, const cturi::Param &site,
                       const cturi::Param &name)
{
    std::string path = ftp_path(parsed, name);
    std::string mode;
    if (const cturi::Param *m = param(parsed, "mode")) mode = lower(m->value);
    bool is_tftp = access_type == "tftp";
    std::string url = std::string(is_tftp ? "tftp://" : "ftp://") + site.value + "/" + path;
    if (is_tftp) { // RFC 3617
        if (mode == "netascii" || mode == "octet") url += ";mode=" + mode;
    } else if (mode == "image" || mode == "ascii") {
        url += std::string(";type=") + (mode == "image" ? "i" : "a");
    }
    return url;
}

// access-type=anon-ftp, ftp or tftp (RFC 2046 5.2.3.1): reports the original parameters
// and, with --legacy-to-url in a mode that writes, plans the conversion to access-type=URL.
// Without a plan the entry is finished.
std::optional<Rewrite> legacy_access(const ExternalBodyOptions &opts, bool write, const Part &part,
                                     const std::string &access_type, Entry &entry)
{
    const cturi::Param *site = param(part.parsed, "site"), *name = param(part.parsed, "name");
    if (!site || !name) {
        entry.reasons.push_back(access_type + " needs site and name parameters (RFC 2046 5.2.3.1)");
        entry.finish(BodyStatus::Invalid);
        return std::nullopt;
    }
    ExternalBodyEntry::Fields orig;
    for (const auto &p : part.parsed.params) ExternalBodyEntry::set_field(orig, lower(p.name), p.value);
    entry.get().original = std::move(orig);
    if (!opts.legacy_to_url || !write) {
        if (!opts.legacy_to_url) entry.reasons.push_back("legacy access type; --legacy-to-url converts it");
        entry.finish(BodyStatus::Ok);
        return std::nullopt;
    }
    Rewrite rw;
    rw.url = legacy_url(part.parsed, access_type, *site, *name);
    map_url(opts, rw.url);
    entry.get().url = rfc2017::encode(rw.url);
    for (const auto &sp : part.scanned.params) {
        std::string b = base_name(sp.name);
        if (b == "site" || b == "directory" || b == "name" || b == "mode") rw.remove.push_back(&sp);
        if (b == "access-type") rw.insert_after = &sp;
    }
    rw.status = BodyStatus::Converted;
    return rw;
}

// access-type=content-id: reports which part it resolves to and finishes the entry.
void content_id_access(const MessageContext &ctx, const Part &part, Entry &entry)
{
    // RFC 1873: the body is the part elsewhere in the message with this Content-ID.
    std::string id;
    for (const auto &[name, v] : part.phantom.headers)
        if (cturi::iequals(name, "Content-ID")) id = v;
    GCharPtr clean(id.empty() ? nullptr : g_mime_utils_decode_message_id(id.c_str()));
    std::string target;
    for (const Node &o : ctx.nodes()) {
        const char *cid = g_mime_object_get_content_id(o.object);
        if (&o != &part.node && cid && clean && std::string(cid) == clean.get()) target = o.section;
    }
    if (clean) entry.get().url = std::string("cid:") + cturi::encode(clean.get());
    if (target.empty()) {
        entry.reasons.push_back(clean ? "no part has Content-ID <" + std::string(clean.get()) + ">"
                                      : "no Content-ID in the inner header block");
        entry.finish(BodyStatus::Invalid);
    } else {
        entry.reasons.push_back("resolves to part " + target);
        entry.finish(BodyStatus::Ok);
    }
}

// Rewrite the header value: drop the spans in `remove`, write the URL parameter
// where the first of them was (or after access-type), keep everything else.
std::string rewritten_value(const std::string &value, const Rewrite &rw)
{
    std::string out;
    std::size_t pos = 0;
    std::vector<const cturi::ParamSpan *> spans = rw.remove;
    std::sort(spans.begin(), spans.end(), [](auto *a, auto *b) { return a->begin < b->begin; });
    const std::string url_param = ";\n\t" + rfc2017::parameter(rw.url);
    bool written = false;
    for (const cturi::ParamSpan *sp : spans) {
        out += value.substr(pos, sp->begin - pos);
        if (!written && !rw.insert_after) {
            out += url_param;
            written = true;
        }
        pos = sp->end;
    }
    out += value.substr(pos);
    if (rw.insert_after) {
        // access-type=<legacy> becomes access-type=URL, followed by the URL parameter.
        std::size_t shift = 0;
        for (const cturi::ParamSpan *sp : spans)
            if (sp->end <= rw.insert_after->begin) shift += sp->end - sp->begin;
        std::size_t at = rw.insert_after->begin - shift, len = rw.insert_after->end - rw.insert_after->begin;
        out.replace(at, len, "; access-type=URL" + url_param);
    }
    return out;
}

// Carries out a planned rewrite and finishes the entry. Only a Code::Software error
// is returned (it fails the message); any other is reported as the part's reason.
Status write_rewrite(MessageContext &ctx, const Part &part, const Rewrite &rw, Entry &entry)
{
    std::string out = rewritten_value(part.value, rw);
    if (auto why = ctx.kept(part.node, "Content-Type")) { // signed content: reported, not changed
        entry.get().kept = *why;
        entry.finish(BodyStatus::Kept);
        return ok();
    }
    Status s = ctx.replace_header(part.header, out);
    if (!s) {
        if (s.error().code == Code::Software) return s;
        entry.reasons.push_back(s.error().message);
        entry.finish(BodyStatus::Invalid);
        return ok();
    }
    entry.finish(rw.status);
    return ok();
}

// One message/external-body part: reports it, checks it by its access type and, where
// the access type's step plans a rewrite, writes it.
Status process_part(MessageContext &ctx, const ExternalBodyOptions &opts, const Node &n, GMimeHeader *h)
{
    const bool write = opts.mode == ExternalBodyOptions::Mode::Normalize;
    Entry entry(ctx, n);
    std::string value = ctx.header_value(h); // " message/external-body; ...\n"
    auto scanned = cturi::scan_content_type(value);
    auto parsed = cturi::parse_content_type(value);
    if (!scanned || !parsed) {
        entry.reasons.push_back("Content-Type not parseable: " +
                                (scanned ? parsed.error().message : scanned.error().message));
        entry.finish(BodyStatus::Invalid);
        return ok();
    }
    const Part part{n, h, std::move(value), std::move(*scanned), std::move(*parsed), read_phantom(ctx, n)};
    report_inner(part.phantom, entry);

    const cturi::Param *access = param(part.parsed, "access-type");
    if (!access) {
        entry.reasons.push_back("no access-type parameter (RFC 2046 5.2.3)");
        entry.finish(BodyStatus::Invalid);
        return ok();
    }
    const std::string access_type = lower(access->value);
    entry.get().access_type = access_type;

    std::optional<Rewrite> rw;
    if (access_type == "url") {
        rw = url_access(opts, write, part, entry);
    } else if (access_type == "anon-ftp" || access_type == "ftp" || access_type == "tftp") {
        rw = legacy_access(opts, write, part, access_type, entry);
    } else if (access_type == "content-id") {
        content_id_access(ctx, part, entry);
    } else {
        entry.finish(BodyStatus::Ok); // local-file, mail-server, afs, ...: reported, left alone
    }
    if (!rw) return ok();
    return write_rewrite(ctx, part, *rw, entry);
}

} // namespace

Status ExternalBodyPass::apply(MessageContext &ctx)
{
    if (opts_.mode == ExternalBodyOptions::Mode::Off) return ok();
    for (const Node &n : ctx.nodes()) {
        if (n.kind != Node::Kind::Leaf) continue;
        if (auto t = ctx.check_time(); !t) return t;
        GMimeContentType *gct = g_mime_object_get_content_type(n.object);
        if (!gct || !g_mime_content_type_is_type(gct, "message", "external-body")) continue;
        GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Type");
        if (!h) continue;
        if (Status s = process_part(ctx, opts_, n, h); !s) return s;
    }
    return ok();
}

} // namespace mimeuri
