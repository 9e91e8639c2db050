#include "external_body.hh"

#include "cturi.hh"
#include "text.hh"

#include <algorithm>

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
    std::size_t pos = 0;
    bool blank = false;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (line.empty()) {
            blank = true;
            break;
        }
        if ((line[0] == ' ' || line[0] == '\t') && !ph.headers.empty()) {
            ph.headers.back().second += line;
            continue;
        }
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
    }
    if (ph.headers.empty()) ph.notes.push_back("no inner header block");
    if (!ph.headers.empty() && !blank && pos >= text.size() && text.back() != '\n')
        ph.notes.push_back("inner header block not terminated by an empty line");
    std::string_view body = std::string_view(text).substr(std::min(pos, text.size()));
    ph.body_blank = body.find_first_not_of(" \t\n") == std::string_view::npos;
    return ph;
}

} // namespace

Status ExternalBodyPass::apply(MessageContext &ctx)
{
    if (opts_.mode == ExternalBodyOptions::Mode::Off) return ok();
    const bool write = opts_.mode == ExternalBodyOptions::Mode::Normalize;
    for (const Node &n : ctx.nodes()) {
        if (n.kind != Node::Kind::Leaf) continue;
        if (auto t = ctx.check_time(); !t) return t;
        GMimeContentType *gct = g_mime_object_get_content_type(n.object);
        if (!gct || !g_mime_content_type_is_type(gct, "message", "external-body")) continue;
        GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Type");
        if (!h) continue;

        JsonObject *entry = json_object_new();
        json_array_add_object_element(ctx.report().external_bodies.get(), entry);
        json_set_string(entry, "part", n.section);
        json_object_set_null_member(entry, "access_type");
        json_object_set_null_member(entry, "url");
        json_object_set_null_member(entry, "url_before");
        std::vector<std::string> reasons;
        auto finish = [&](const char *status) {
            json_set_string(entry, "status", status);
            std::string reason;
            for (const auto &r : reasons) reason += (reason.empty() ? "" : "; ") + r;
            if (reason.empty()) json_object_set_null_member(entry, "reason");
            else json_set_string(entry, "reason", reason);
        };

        const std::string value = ctx.header_value(h); // " message/external-body; ...\n"
        auto scanned = cturi::scan_content_type(value);
        auto parsed = cturi::parse_content_type(value);
        if (!scanned || !parsed) {
            reasons.push_back("Content-Type not parseable: " +
                              (scanned ? parsed.error().message : scanned.error().message));
            finish("invalid");
            continue;
        }
        Phantom ph = read_phantom(ctx, n);
        JsonObject *inner = json_object_new();
        for (const auto &[name, v] : ph.headers)
            for (const char *want : {"Content-Type", "Content-ID", "Content-MD5", "Content-Transfer-Encoding"})
                if (cturi::iequals(name, want)) json_set_string(inner, lower(want).c_str(), v);
        json_object_set_object_member(entry, "inner", inner);
        reasons.insert(reasons.end(), ph.notes.begin(), ph.notes.end());

        const cturi::Param *access = param(*parsed, "access-type");
        if (!access) {
            reasons.push_back("no access-type parameter (RFC 2046 5.2.3)");
            finish("invalid");
            continue;
        }
        const std::string access_type = lower(access->value);
        json_set_string(entry, "access_type", access_type);

        // The URL to write, and the spans of the header value it replaces.
        std::string url;
        std::vector<const cturi::ParamSpan *> remove;   // parameter spans to drop
        const cturi::ParamSpan *insert_after = nullptr; // write URL after this span
        const char *status = "ok";

        if (access_type == "url") {
            if (!ph.body_blank) reasons.push_back("phantom body not empty (RFC 2017 3 (3): should be left blank)");
            const cturi::Param *p = param(*parsed, "URL");
            if (!p) {
                reasons.push_back("the URL parameter is mandatory for access-type=URL (RFC 2017 3 (2))");
                finish("invalid");
                continue;
            }
            std::vector<const cturi::ParamSpan *> url_spans;
            for (const auto &sp : scanned->params)
                if (base_name(sp.name) == "url") url_spans.push_back(&sp);
            const bool rfc2231 = std::any_of(url_spans.begin(), url_spans.end(),
                                             [](auto *sp) { return sp->name.find('*') != std::string::npos; });
            // RFC 2017 3.1: quotes and linear white space go. An RFC 2231 value is already
            // decoded data: its spaces are part of the URL (and get encoded below).
            const std::string before = rfc2231 ? p->value : rfc2017::extract(p->value);
            json_set_string(entry, "url_before", before);
            url = before;
            bool mapped = false;
            for (const auto &[from, to] : opts_.url_map)
                if (url.compare(0, from.size(), from) == 0) {
                    url = to + url.substr(from.size());
                    mapped = true;
                    break;
                }
            std::string encoded = rfc2017::encode(url);
            json_set_string(entry, "url", encoded);
            std::string scheme = scheme_of(encoded);
            if (scheme.empty()) {
                reasons.push_back("not an absolute URL");
                finish("invalid");
                continue;
            }
            if (std::find(opts_.schemes.begin(), opts_.schemes.end(), scheme) == opts_.schemes.end()) {
                reasons.push_back("scheme " + scheme + ": is not a retrieval scheme allowed by --external-body-schemes"
                                  " (RFC 2017 2)");
                finish("disallowed");
                continue;
            }
            // Conforming: one plain quoted URL parameter, words of at most 40, nothing to encode.
            std::vector<std::string> problems;
            if (url_spans.size() != 1 || rfc2231)
                problems.push_back("URL written in RFC 2231 form");
            else if (!url_spans[0]->quoted)
                problems.push_back("URL parameter not quoted");
            if (encoded != before) problems.push_back("URL has characters that must be %-encoded (RFC 2017 3.1 (1))");
            if (problems.empty()) {
                std::string raw(value.substr(url_spans[0]->begin, url_spans[0]->end - url_spans[0]->begin));
                auto q = raw.find('"');
                std::string inside = raw.substr(q + 1);
                std::size_t word = 0;
                for (char c : inside) {
                    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"') word = 0;
                    else if (++word > rfc2017::max_word) {
                        problems.push_back("URL-word longer than 40 characters (RFC 2017 3.1)");
                        break;
                    }
                }
            }
            if (problems.empty() && !mapped) {
                finish("ok");
                continue;
            }
            reasons.insert(reasons.end(), problems.begin(), problems.end());
            if (!write) {
                finish(problems.empty() ? "ok" : "invalid");
                continue;
            }
            status = mapped ? "mapped" : "normalized";
            remove = url_spans;
        } else if (access_type == "anon-ftp" || access_type == "ftp" || access_type == "tftp") {
            const cturi::Param *site = param(*parsed, "site"), *name = param(*parsed, "name");
            if (!site || !name) {
                reasons.push_back(access_type + " needs site and name parameters (RFC 2046 5.2.3.1)");
                finish("invalid");
                continue;
            }
            JsonObject *orig = json_object_new();
            for (const auto &p : parsed->params) json_set_string(orig, lower(p.name).c_str(), p.value);
            json_object_set_object_member(entry, "original", orig);
            if (!opts_.legacy_to_url || !write) {
                if (!opts_.legacy_to_url) reasons.push_back("legacy access type; --legacy-to-url converts it");
                finish("ok");
                continue;
            }
            // RFC 1738 3.2: ftp://site/dir/segments/name;type=X; an absolute directory's
            // leading "/" is the %2F the login directory cannot express otherwise.
            std::string path;
            if (const cturi::Param *dir = param(*parsed, "directory")) {
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
            path += segment(name->value);
            std::string mode;
            if (const cturi::Param *m = param(*parsed, "mode")) mode = lower(m->value);
            bool is_tftp = access_type == "tftp";
            url = std::string(is_tftp ? "tftp://" : "ftp://") + site->value + "/" + path;
            if (is_tftp) { // RFC 3617
                if (mode == "netascii" || mode == "octet") url += ";mode=" + mode;
            } else if (mode == "image" || mode == "ascii") {
                url += std::string(";type=") + (mode == "image" ? "i" : "a");
            }
            for (const auto &[from, to] : opts_.url_map)
                if (url.compare(0, from.size(), from) == 0) {
                    url = to + url.substr(from.size());
                    break;
                }
            json_set_string(entry, "url", rfc2017::encode(url));
            for (const auto &sp : scanned->params) {
                std::string b = base_name(sp.name);
                if (b == "site" || b == "directory" || b == "name" || b == "mode") remove.push_back(&sp);
                if (b == "access-type") insert_after = &sp;
            }
            status = "converted";
        } else if (access_type == "content-id") {
            // RFC 1873: the body is the part elsewhere in the message with this Content-ID.
            std::string id;
            for (const auto &[name, v] : ph.headers)
                if (cturi::iequals(name, "Content-ID")) id = v;
            GCharPtr clean(id.empty() ? nullptr : g_mime_utils_decode_message_id(id.c_str()));
            std::string target;
            for (const Node &o : ctx.nodes()) {
                const char *cid = g_mime_object_get_content_id(o.object);
                if (&o != &n && cid && clean && std::string(cid) == clean.get()) target = o.section;
            }
            if (clean) json_set_string(entry, "url", std::string("cid:") + cturi::encode(clean.get()));
            if (target.empty()) {
                reasons.push_back(clean ? "no part has Content-ID <" + std::string(clean.get()) + ">"
                                        : "no Content-ID in the inner header block");
                finish("invalid");
            } else {
                reasons.push_back("resolves to part " + target);
                finish("ok");
            }
            continue;
        } else {
            finish("ok"); // local-file, mail-server, afs, ...: reported, left alone
            continue;
        }

        // Rewrite the header value: drop the spans in `remove`, write the URL parameter
        // where the first of them was (or after access-type), keep everything else.
        std::string out;
        std::size_t pos = 0;
        std::vector<const cturi::ParamSpan *> spans = remove;
        std::sort(spans.begin(), spans.end(), [](auto *a, auto *b) { return a->begin < b->begin; });
        const std::string url_param = ";\n\t" + rfc2017::parameter(url);
        bool written = false;
        for (const cturi::ParamSpan *sp : spans) {
            out += value.substr(pos, sp->begin - pos);
            if (!written && !insert_after) {
                out += url_param;
                written = true;
            }
            pos = sp->end;
        }
        out += value.substr(pos);
        if (insert_after) {
            // access-type=<legacy> becomes access-type=URL, followed by the URL parameter.
            std::size_t shift = 0;
            for (const cturi::ParamSpan *sp : spans)
                if (sp->end <= insert_after->begin) shift += sp->end - sp->begin;
            std::size_t at = insert_after->begin - shift, len = insert_after->end - insert_after->begin;
            out.replace(at, len, "; access-type=URL" + url_param);
        }
        if (auto why = ctx.kept(n, "Content-Type")) { // signed content: reported, not changed
            json_set_string(entry, "kept", *why);
            finish("kept");
            continue;
        }
        Status s = ctx.replace_header(h, out);
        if (!s) {
            if (s.error().code == Code::Software) return s;
            reasons.push_back(s.error().message);
            finish("invalid");
            continue;
        }
        finish(status);
    }
    return ok();
}

} // namespace mimeuri
