// Content-Type <-> URI labels (cturi.hh); the Content-Type syntax is content_type.cc.
#include "cturi.hh"

#include "text.hh"

#include <glib.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace mimeuri::cturi {

namespace {

using text::ascii_lower;
std::string lower(std::string_view s) { return ascii_lower(s); }

// scheme ":" ... (RFC 3986 3.1); draft 1.2 (2): only absolute URIs are mappable.
bool absolute_uri(std::string_view s)
{
    std::size_t colon = s.find(':');
    if (colon == std::string_view::npos || colon == 0 || !g_ascii_isalpha(s[0])) return false;
    for (std::size_t i = 1; i < colon; ++i)
        if (!g_ascii_isalnum(s[i]) && s[i] != '+' && s[i] != '-' && s[i] != '.') return false;
    return true;
}

// Section 6, for what goes into a URI: one level of decoding that must not produce a
// control character or a space (a URI cannot hold them raw, and re-encoding them would not
// map back to the same value).
Result<std::string> uri_decode(std::string_view what, std::string_view s)
{
    std::string out = decode(s);
    for (char c : out) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u == 127)
            return fail(std::string(what) + " decodes to a control character or a space, which a URI cannot hold (section 6)");
    }
    return out;
}

std::string unquote(std::string_view v)
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return std::string(v.substr(1, v.size() - 2));
    return std::string(v);
}

const Param *find_param(const ContentType &ct, std::string_view name)
{
    for (const auto &p : ct.params)
        if (iequals(p.name, name)) return &p;
    return nullptr;
}

Result<ContentType> parse_urc(std::string_view text)
{
    // "/" type "/" subtype *("/" attribute ":" value)
    std::string s = text::without_space(text);
    std::vector<std::string> fields;
    std::size_t pos = 1;
    while (pos <= s.size()) {
        auto slash = s.find('/', pos);
        std::size_t end = slash == std::string::npos ? s.size() : slash;
        fields.push_back(s.substr(pos, end - pos));
        if (slash == std::string::npos) break;
        pos = slash + 1;
    }
    if (fields.size() < 2) return fail("URC representation tag needs /type/subtype");
    ContentType ct;
    ct.type = decode(fields[0]);
    ct.subtype = decode(fields[1]);
    if (auto st = type_safe("type", ct.type); !st) return st.error();
    if (auto st = type_safe("subtype", ct.subtype); !st) return st.error();
    for (std::size_t i = 2; i < fields.size(); ++i) {
        auto colon = fields[i].find(':');
        if (colon == std::string::npos || colon == 0)
            return fail("URC representation tag attribute '" + fields[i] + "' needs attribute:value");
        Param p{decode(fields[i].substr(0, colon)), decode(fields[i].substr(colon + 1))};
        if (auto st = header_safe("URC attribute", p.name + p.value); !st) return st.error();
        if (!is_param_name(p.name)) return fail("URC attribute '" + p.name + "' is not a token (RFC 2045 5.1)");
        ct.params.push_back(std::move(p));
    }
    if (auto st = distinct_names(ct); !st) return st.error();
    return ct;
}

} // namespace

bool troublesome(unsigned char c) { return c <= 32 || c == 127 || std::strchr("()<>@,;:\\/[]?%#\"=", c); }

std::string encode(std::string_view s, bool in_query)
{
    return text::percent_encode(s, [&](unsigned char c) { return troublesome(c) || c >= 128 || (in_query && c == '&'); });
}

Result<ContentType> parse_content_type(std::string_view text)
{
    {
        std::size_t i = 0;
        while (i < text.size() && is_ws(text[i])) ++i;
        std::string_view t = text.substr(i);
        if (istarts(t, "content-type:")) t.remove_prefix(13);
        i = 0;
        while (i < t.size() && is_ws(t[i])) ++i;
        if (i < t.size() && t[i] == '/') return parse_urc(t.substr(i));
    }
    return parse_mime_content_type(text);
}

// A URI query read as distinct name=value pairs (3.1), or false: no pairs, a name that is
// not a parameter name, a name twice, or a name of the mapping's own (URI-fragment, URI-body).
static bool query_pairs(const std::string &query, std::vector<std::pair<std::string, std::string>> &items)
{
    items.clear();
    if (query.empty()) return false;
    std::size_t pos = 0;
    while (pos <= query.size()) {
        auto amp = query.find('&', pos);
        std::string item = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
        auto eq = item.find('=');
        if (eq == std::string::npos || !is_param_name(item.substr(0, eq))) return items.clear(), false;
        std::string name = item.substr(0, eq);
        if (iequals(name, "URI-fragment") || iequals(name, "URI-body") ||
            std::any_of(items.begin(), items.end(), [&](auto &it) { return iequals(it.first, name); }))
            return items.clear(), false;
        items.emplace_back(name, unquote(item.substr(eq + 1)));
        if (amp == std::string::npos) break;
        pos = amp + 1;
    }
    return true;
}

// --- Section 2 ------------------------------------------------------------------------

namespace {

// 2.3: the URI a uri. subtype names, checked for what the way back could not read the same;
// has_params: the Content-Type has parameters besides URI-fragment and URI-body.
Result<std::string> subtype_uri(const ContentType &ct, bool has_params, bool has_uri_body)
{
    // 2.3: the URI is the subtype after "uri.", decoded once; the top-level type is
    // ignored; parameters become the query (values decoded once), URI-fragment the
    // fragment.
    auto body = uri_decode("the uri. subtype", ct.subtype.substr(4));
    if (!body) return body.error();
    std::string uri = std::move(*body);
    if (!absolute_uri(uri)) return fail("the uri. subtype '" + ct.subtype + "' does not hold an absolute URI (1.2 (2))");
    if (istarts(uri, "contenttype:"))
        return fail("the uri. subtype holds a ContentType: URI, which maps back by 3.2 instead: circular");
    // The mapping never writes these, and they cannot come back: a fragment belongs in
    // URI-fragment, and a URI with its own query cannot take parameters as well.
    if (uri.find('#') != std::string::npos)
        return fail("the uri. subtype holds a fragment ('#'); it belongs in URI-fragment (2.3)");
    if (auto q = uri.find('?'); q != std::string::npos) {
        std::vector<std::pair<std::string, std::string>> pairs;
        if (has_params)
            return fail("the uri. subtype holds a query and the Content-Type has parameters too: ambiguous (2.3)");
        if (query_pairs(uri.substr(q + 1), pairs))
            return fail("the uri. subtype holds a name=value query, which would come back as parameters: "
                        "write those as parameters (2.3)");
    }
    // URI-body names the URI of 2.4; beside a uri. subtype it would name a query value the
    // way back reads as the mapping's own (3.1): ambiguous.
    if (has_uri_body) return fail("a uri. subtype and a URI-body parameter together are ambiguous (2.3, 2.4)");
    return uri;
}

} // namespace

Result<std::string> ct2uri(const ContentType &ct)
{
    std::optional<std::string> fragment;
    std::vector<Param> rest;
    const Param *uri_body = nullptr;
    for (const auto &p : ct.params) {
        if (iequals(p.name, "URI-fragment") && !fragment) fragment = p.value;
        else if (iequals(p.name, "URI-body") && !uri_body) uri_body = &p;
        else rest.push_back(p);
    }
    std::string uri;
    std::vector<std::pair<std::string, std::string>> query; // name, value as written
    const bool uri_tree = istarts(ct.subtype, "uri.");
    // Parameters of a URI-form Content-Type (2.3, 2.4) are URL-encoded query values.
    auto uri_values = [&](std::vector<Param> &params) -> Status {
        for (const auto &p : params) {
            // Names go into the query as they are (3.1 reads them so): "&" or "#" would split it.
            if (p.name.find_first_of("&#") != std::string::npos)
                return fail("parameter name '" + p.name + "' holds '&' or '#' and cannot name a URI query value");
            auto v = uri_decode("parameter " + p.name, p.value);
            if (!v) return v.error();
            if (v->find_first_of("&#") != std::string::npos)
                return fail("parameter " + p.name + " decodes to '&' or '#', which would split the URI query");
            query.emplace_back(p.name, std::move(*v));
        }
        return ok();
    };
    if (uri_tree) {
        auto u = subtype_uri(ct, !rest.empty(), uri_body != nullptr);
        if (!u) return u.error();
        uri = std::move(*u);
        if (auto st = uri_values(rest); !st) return st.error();
    } else if (uri_body) {
        // 2.4: URI-body decoded is the URI; the MIME type goes into MIME-type, type and
        // subtype encoded each (as in 2.1).
        auto body = uri_decode("URI-body", uri_body->value);
        if (!body) return body.error();
        uri = std::move(*body);
        if (!absolute_uri(uri)) return fail("URI-body '" + uri_body->value + "' is not an absolute URI (1.2 (2))");
        if (istarts(uri, "contenttype:"))
            return fail("URI-body holds a ContentType: URI, which maps back by 3.2 instead: circular");
        if (uri.find_first_of("?#") != std::string::npos)
            return fail("URI-body holds a query or a fragment: the MIME-type query and URI-fragment would be ambiguous (2.4)");
        query.emplace_back("MIME-type", encode(lower(ct.type), true) + "/" + encode(lower(ct.subtype), true));
        if (auto st = uri_values(rest); !st) return st.error();
    } else {
        // 2.1 and 2.2
        uri = "ContentType:" + encode(lower(ct.type)) + "/" + encode(lower(ct.subtype));
        for (const auto &p : rest) query.emplace_back(encode(p.name, true), encode(p.value, true));
    }
    if (auto st = header_safe("URI", uri); !st) return st.error();
    char sep = uri.find('?') == std::string::npos ? '?' : '&';
    for (const auto &[name, value] : query) {
        uri += sep;
        uri += name + "=\"" + value + "\"";
        sep = '&';
    }
    if (fragment) {
        auto f = uri_decode("URI-fragment", *fragment);
        if (!f) return f.error();
        uri += "#" + *f;
    }
    return uri;
}

Result<std::string> ct2uri(std::string_view content_type)
{
    auto ct = parse_content_type(content_type);
    if (!ct) return ct.error();
    return ct2uri(*ct);
}

// --- Section 3 ------------------------------------------------------------------------

Result<ContentType> uri2ct(std::string_view text)
{
    std::string s = text::without_space(text); // white space is not part of a URI
    if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = s.substr(1, s.size() - 2);
    if (!s.empty() && s.front() == '/') return parse_urc(s);
    // 1.2 (2): only absolute URIs are mappable.
    std::size_t colon = s.find(':');
    if (!absolute_uri(s)) return fail("'" + s + "' is not an absolute URI (relative URIs are not mappable, 1.2 (2))");
    std::string scheme = lower(s.substr(0, colon));
    std::string rest = s.substr(colon + 1);
    std::optional<std::string> fragment;
    if (auto hash = rest.find('#'); hash != std::string::npos) {
        fragment = rest.substr(hash + 1);
        rest.resize(hash);
    }
    std::string main = rest;
    std::optional<std::string> query;
    if (auto q = rest.find('?'); q != std::string::npos) {
        main = rest.substr(0, q);
        query = rest.substr(q + 1);
    }
    // The query as name=value pairs; if it is not that, it stays part of the URI body.
    std::vector<std::pair<std::string, std::string>> items;
    bool pairs = query.has_value() && query_pairs(*query, items);

    ContentType ct;
    auto add_fragment = [&]() {
        if (fragment) ct.params.push_back({"URI-fragment", encode(*fragment)});
    };
    auto split_type = [&](const std::string &mt) -> Status {
        auto slash = mt.find('/');
        if (slash == std::string::npos) return fail("'" + mt + "' is not a type/subtype");
        ct.type = mt.substr(0, slash);
        ct.subtype = mt.substr(slash + 1);
        if (auto st = type_safe("type", ct.type); !st) return st;
        return type_safe("subtype", ct.subtype);
    };

    if (scheme == "contenttype") {
        // 3.2: the scheme-specific part, "?" and "&" read as "; ", decoded once.
        if (query && !pairs) return fail("ContentType: URI query is not name=value pairs");
        if (auto st = split_type(decode(main)); !st) return st.error();
        for (auto &[n, v] : items) {
            Param p{decode(n), decode(v)};
            if (auto st = header_safe("parameter " + p.name, p.value); !st) return st.error();
            if (!is_param_name(p.name)) return fail("parameter name '" + p.name + "' is not a token");
            ct.params.push_back(std::move(p));
        }
        add_fragment();
        if (auto st = distinct_names(ct); !st) return st.error();
        return ct;
    }
    auto mime = std::find_if(items.begin(), items.end(), [](auto &it) { return iequals(it.first, "MIME-type"); });
    if (mime != items.end()) {
        // 3.3: the MIME type from MIME-type, the URI body into URI-body.
        if (auto st = split_type(decode(mime->second)); !st) return st.error();
        ct.params.push_back({"URI-body", encode(scheme + ":" + main)});
        items.erase(mime);
    } else {
        // 3.1
        ct.type = "application";
        ct.subtype = "uri." + encode(scheme + ":" + main + (query && !pairs ? "?" + *query : ""));
    }
    for (auto &[n, v] : items) ct.params.push_back({n, encode(v)});
    add_fragment();
    return ct;
}

Result<std::string> uri2ct_string(std::string_view uri)
{
    auto ct = uri2ct(uri);
    if (!ct) return ct.error();
    return format_content_type(*ct);
}

std::string to_urc(const ContentType &ct)
{
    std::string out = "/" + encode(lower(ct.type)) + "/" + encode(lower(ct.subtype));
    for (const auto &p : ct.params) out += "/" + encode(p.name) + ":" + encode(p.value);
    return out;
}

// --- Closure relations --------------------------------------------------------------

bool equivalent(const ContentType &a, const ContentType &b)
{
    auto uri_ish = [](const ContentType &c) { return istarts(c.subtype, "uri.") || find_param(c, "URI-body"); };
    bool a_tree = istarts(a.subtype, "uri."), b_tree = istarts(b.subtype, "uri.");
    if (a_tree != b_tree) return false;
    if (a_tree) {
        if (decode(a.subtype.substr(4)) != decode(b.subtype.substr(4)) &&
            !iequals(decode(a.subtype.substr(4)), decode(b.subtype.substr(4))))
            return false;
    } else if (!iequals(a.type, b.type) || !iequals(a.subtype, b.subtype)) {
        return false;
    }
    if (a.params.size() != b.params.size()) return false;
    bool decoded_values = uri_ish(a) || uri_ish(b);
    std::vector<bool> matched(b.params.size(), false);
    for (const auto &pa : a.params) {
        bool url_field = iequals(pa.name, "URI-body") || iequals(pa.name, "URI-fragment");
        bool found = false;
        for (std::size_t j = 0; j < b.params.size() && !found; ++j) {
            const auto &pb = b.params[j];
            if (matched[j] || !iequals(pa.name, pb.name)) continue;
            bool same = decoded_values || url_field ? decode(pa.value) == decode(pb.value) : pa.value == pb.value;
            // URI-body is a URI: its scheme compares without regard to case (RFC 3986 3.1).
            if (!same && iequals(pa.name, "URI-body")) same = equivalent_uri(decode(pa.value), decode(pb.value));
            if (same) found = matched[j] = true;
        }
        if (!found) return false;
    }
    return true;
}

namespace {

std::string normal_uri(std::string_view u)
{
    std::string s = text::without_space(u);
    if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = s.substr(1, s.size() - 2);
    auto colon = s.find(':');
    if (colon == std::string::npos) return s;
    std::string out = lower(s.substr(0, colon)) + ":";
    std::string rest = s.substr(colon + 1);
    std::string frag;
    if (auto h = rest.find('#'); h != std::string::npos) {
        frag = rest.substr(h);
        rest.resize(h);
    }
    auto q = rest.find('?');
    out += rest.substr(0, q);
    if (q != std::string::npos) {
        std::string query = rest.substr(q + 1);
        std::size_t pos = 0;
        char sep = '?';
        while (pos <= query.size()) {
            auto amp = query.find('&', pos);
            std::string item = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
            auto eq = item.find('=');
            out += sep;
            if (eq == std::string::npos) {
                out += item;
            } else {
                std::string name = item.substr(0, eq), value = unquote(item.substr(eq + 1));
                if (iequals(name, "MIME-type")) value = lower(decode(value));
                out += name + "=" + value;
            }
            sep = '&';
            if (amp == std::string::npos) break;
            pos = amp + 1;
        }
    }
    return out + frag;
}

} // namespace

bool equivalent_uri(std::string_view a, std::string_view b) { return normal_uri(a) == normal_uri(b); }

} // namespace mimeuri::cturi
