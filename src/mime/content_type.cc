// The Content-Type field value, read and written (content_type.hh): RFC 2045 syntax,
// RFC 2231 continuations and charsets.
#include "content_type.hh"

#include "charsets.hh"
#include "text.hh"

#include <glib.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace mimeuri::cturi {

namespace {
int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
} // namespace

Error fail(const std::string &why) { return Error{Code::DataErr, why}; }
bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool istarts(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// RFC 2045 tspecials; a token is 33-126 without them.
bool tspecial(char c) { return std::strchr("()<>@,;:\\\"/[]?=", c) != nullptr && c != '\0'; }
bool is_token(std::string_view s)
{
    if (s.empty()) return false;
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u >= 127 || tspecial(c)) return false;
    }
    return true;
}

// A Content-Type parameter name: a token without "*", which RFC 2231 reserves.
bool is_param_name(std::string_view s) { return is_token(s) && s.find('*') == std::string_view::npos; }

// Section 6: what URL decoding produced must not carry CR, LF or NUL into a header.
Status header_safe(std::string_view what, std::string_view s)
{
    for (char c : s)
        if (c == '\r' || c == '\n' || c == '\0')
            return fail(std::string(what) + " decodes to a CR, LF or NUL; refused (draft section 6)");
    return ok();
}

// A MIME type or subtype bound for a header: no white space, controls, "/", ";" or quotes.
Status type_safe(std::string_view what, std::string_view s)
{
    if (s.empty()) return fail(std::string(what) + " is empty");
    if (auto st = header_safe(what, s); !st) return st;
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u == 127 || c == '/' || c == ';' || c == ':' || c == '"' || c == '\\' || c == '(' || c == ')')
            return fail(std::string(what) + " '" + std::string(s) + "' has a character a MIME type cannot hold");
    }
    return ok();
}

// A parameter named twice is ambiguous (RFC 2231 forbids it for continuations, and readers
// disagree on which value counts): not a Content-Type to map.
Status distinct_names(const ContentType &ct)
{
    for (std::size_t i = 0; i < ct.params.size(); ++i)
        for (std::size_t j = i + 1; j < ct.params.size(); ++j)
            if (iequals(ct.params[i].name, ct.params[j].name)) return fail("parameter '" + ct.params[i].name + "' given twice");
    return ok();
}

std::string decode(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out += static_cast<char>(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && g_ascii_strncasecmp(a.data(), b.data(), a.size()) == 0;
}

namespace {

std::string lower(std::string_view s) { return text::ascii_lower(s); }

// --- RFC 2045 / 2231 parsing -------------------------------------------------------

class Scanner {
public:
    explicit Scanner(std::string_view s) : s_(s) {}
    bool done() const { return i_ >= s_.size(); }
    std::size_t pos() const { return i_; }
    char peek() const { return done() ? '\0' : s_[i_]; }
    void next() { ++i_; }
    // Skips white space, folding and (nested) comments.
    Status skip_cfws()
    {
        for (;;) {
            while (!done() && is_ws(peek())) next();
            if (peek() != '(') return ok();
            int depth = 0;
            do {
                char c = peek();
                if (done()) return fail("unterminated comment");
                if (c == '\\') next();
                else if (c == '(') ++depth;
                else if (c == ')') --depth;
                next();
            } while (depth > 0);
        }
    }
    // Characters up to one of stop, white space or "(".
    std::string take_until(const char *stop)
    {
        std::string out;
        while (!done() && !is_ws(peek()) && peek() != '(' && !std::strchr(stop, peek())) {
            out += peek();
            next();
        }
        return out;
    }
    Result<std::string> quoted()
    {
        next(); // opening quote
        std::string out;
        while (!done() && peek() != '"') {
            char c = peek();
            if (c == '\\') {
                next();
                if (done()) break;
                c = peek();
            } else if (c == '\r' || c == '\n') { // folding inside a quoted string
                next();
                continue;
            }
            out += c;
            next();
        }
        if (done()) return fail("unterminated quoted string");
        next(); // closing quote
        return out;
    }

private:
    std::string_view s_;
    std::size_t i_{0};
};

struct RawParam {
    std::string name; // without the RFC 2231 section and "*"
    int section{-1};  // -1: not a continuation
    bool extended{false};
    std::string value;
};

// Decodes an RFC 2231 extended value's %XX octets.
std::string pct_bytes(std::string_view s) { return decode(s); }

std::string to_utf8(const std::string &bytes, const std::string &charset)
{
    std::string cs = lower(charset);
    if (cs.empty() || cs == "utf-8" || cs == "utf8" || cs == "us-ascii") return bytes;
    keep_charset(charset); // its module stays loaded (charsets.hh)
    gsize written = 0;
    char *out = g_convert(bytes.data(), static_cast<gssize>(bytes.size()), "UTF-8", charset.c_str(), nullptr,
                          &written, nullptr);
    if (!out) return bytes; // an unknown or wrong charset: the octets themselves, not a failure
    std::string r(out, written);
    g_free(out);
    return r;
}

} // namespace

Result<ScannedContentType> scan_content_type(std::string_view text)
{
    std::size_t offset = 0; // of the scanned text in the caller's
    while (offset < text.size() && is_ws(text[offset])) ++offset;
    if (istarts(text.substr(offset), "content-type:")) offset += 13;
    Scanner sc(text.substr(offset));
    ScannedContentType ct;
    if (auto st = sc.skip_cfws(); !st) return st.error();
    ct.type = sc.take_until("/;");
    if (auto st = sc.skip_cfws(); !st) return st.error();
    if (sc.peek() != '/') return fail("not a type/subtype: no '/'");
    sc.next();
    if (auto st = sc.skip_cfws(); !st) return st.error();
    ct.subtype = sc.take_until(";");
    if (ct.type.empty() || ct.subtype.empty()) return fail("not a type/subtype: empty type or subtype");
    for (;;) {
        if (auto st = sc.skip_cfws(); !st) return st.error();
        if (sc.done()) break;
        if (sc.peek() != ';') return fail("expected ';' before a parameter");
        ParamSpan span;
        span.begin = offset + sc.pos();
        sc.next();
        if (auto st = sc.skip_cfws(); !st) return st.error();
        if (sc.done()) break;        // a trailing ";"
        if (sc.peek() == ';') continue; // an empty parameter
        span.name = sc.take_until("=;");
        if (auto st = sc.skip_cfws(); !st) return st.error();
        if (span.name.empty() || sc.peek() != '=') return fail("parameter '" + span.name + "' has no '='");
        sc.next();
        if (auto st = sc.skip_cfws(); !st) return st.error();
        if (sc.peek() == '"') {
            auto q = sc.quoted();
            if (!q) return q.error();
            span.value = std::move(*q);
            span.quoted = true;
        } else {
            span.value = sc.take_until(";");
        }
        span.end = offset + sc.pos();
        ct.params.push_back(std::move(span));
    }
    return ct;
}

namespace {

// One parameter as written: its RFC 2231 section and extended form read from its name.
Result<RawParam> raw_param(const std::string &name, std::string value)
{
    RawParam rp;
    rp.value = std::move(value);
    // RFC 2231: name*, name*N, name*N*
    auto star = name.find('*');
    if (star == std::string::npos) {
        rp.name = name;
    } else {
        rp.name = name.substr(0, star);
        std::string rest = name.substr(star + 1);
        if (!rest.empty() && rest.back() == '*') {
            rp.extended = true;
            rest.pop_back();
        } else if (rest.empty()) {
            rp.extended = true; // name*=charset'lang'value
        }
        if (!rest.empty()) {
            if (!std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
                rest.size() > 4)
                return fail("bad RFC 2231 parameter name '" + name + "'");
            rp.section = std::stoi(rest);
        }
    }
    if (rp.name.empty()) return fail("empty parameter name");
    // RFC 2045 5.1: attribute := token.
    if (!is_param_name(rp.name)) return fail("parameter name '" + rp.name + "' is not a token");
    return rp;
}

} // namespace

Result<ContentType> parse_mime_content_type(std::string_view text)
{
    auto scanned = scan_content_type(text);
    if (!scanned) return scanned.error();
    ContentType ct;
    ct.type = std::move(scanned->type);
    ct.subtype = std::move(scanned->subtype);

    std::vector<RawParam> raw;
    for (auto &span : scanned->params) {
        auto rp = raw_param(span.name, std::move(span.value));
        if (!rp) return rp.error();
        raw.push_back(std::move(*rp));
    }
    // Join RFC 2231 continuations at the place of their first section.
    std::vector<bool> used(raw.size(), false);
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (used[i]) continue;
        const RawParam &first = raw[i];
        if (first.section < 0 && !first.extended) {
            ct.params.push_back({first.name, first.value});
            used[i] = true;
            continue;
        }
        std::map<int, const RawParam *> parts;
        for (std::size_t j = i; j < raw.size(); ++j) {
            if (used[j] || !iequals(raw[j].name, first.name) || (raw[j].section < 0 && !raw[j].extended)) continue;
            int sec = raw[j].section < 0 ? 0 : raw[j].section;
            if (parts.count(sec)) return fail("duplicate RFC 2231 section for '" + first.name + "'");
            parts[sec] = &raw[j];
            used[j] = true;
        }
        std::string bytes, charset;
        int expect = 0;
        for (auto &[sec, rp] : parts) {
            if (sec != expect++) return fail("missing RFC 2231 section of '" + first.name + "'");
            std::string v = rp->value;
            if (sec == 0 && rp->extended) {
                auto q1 = v.find('\'');
                auto q2 = q1 == std::string::npos ? std::string::npos : v.find('\'', q1 + 1);
                if (q2 == std::string::npos) return fail("RFC 2231 value of '" + first.name + "' lacks charset''");
                charset = v.substr(0, q1);
                v = v.substr(q2 + 1);
            }
            bytes += rp->extended ? pct_bytes(v) : v;
        }
        ct.params.push_back({first.name, to_utf8(bytes, charset)});
    }
    if (auto st = distinct_names(ct); !st) return st.error();
    return ct;
}

Result<std::string> format_content_type(const ContentType &ct)
{
    if (auto st = type_safe("type", ct.type); !st) return st.error();
    if (auto st = type_safe("subtype", ct.subtype); !st) return st.error();
    std::string out = ct.type + "/" + ct.subtype;
    for (const auto &p : ct.params) {
        if (!is_param_name(p.name)) return fail("parameter name '" + p.name + "' is not a token");
        if (auto st = header_safe("parameter " + p.name, p.value); !st) return st.error();
        bool eight_bit = std::any_of(p.value.begin(), p.value.end(), [](char c) { return static_cast<unsigned char>(c) >= 128; });
        if (eight_bit) {
            // RFC 2231 section 4: header parameter values are ASCII.
            const char *cs = g_utf8_validate(p.value.data(), static_cast<gssize>(p.value.size()), nullptr)
                                 ? "utf-8"
                                 : "unknown-8bit";
            out += "; " + p.name + "*=" + cs + "''";
            out += text::percent_encode(p.value, [](unsigned char c) {
                return c >= 128 || tspecial(static_cast<char>(c)) || c <= 32 || c == '*' || c == '\'' || c == '%';
            });
            continue;
        }
        out += "; " + p.name + "=\"";
        for (char c : p.value) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out;
}

} // namespace mimeuri::cturi
