#include "charsets.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>
#include <unordered_set>

namespace mimeuri {

namespace {

struct Kept {
    std::mutex mu;
    std::unordered_set<std::string> tried; // iconv names looked at, kept or not
    std::vector<GIConv> open;              // never closed: they keep their modules loaded
};

Kept &kept()
{
    static Kept *k = new Kept; // never destroyed: converters may be asked for until exit
    return *k;
}

bool token_char(char c)
{
    // RFC 2047's charset is a token: no space, control, or especials ()<>@,;:"/[]?.=
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7F && !std::strchr("()<>@,;:\"/[]?.=", c);
}

} // namespace

bool keep_charset(std::string_view charset)
{
    if (charset.empty() || charset.size() > 64) return false;
    const std::string name(charset);
    const char *iconv_name = g_mime_charset_iconv_name(name.c_str());
    if (!iconv_name) return false;
    std::string key(iconv_name);
    std::transform(key.begin(), key.end(), key.begin(), [](char c) { return g_ascii_toupper(c); });
    if (key == "UTF-8" || key == "UTF8" || key == "US-ASCII" || key == "ASCII") return false; // built into glibc
    Kept &k = kept();
    std::lock_guard<std::mutex> lock(k.mu);
    if (k.tried.count(key)) return true;
    if (k.tried.size() >= kMaxTried || k.open.size() >= kMaxKept) return false;
    k.tried.insert(key);
    GIConv cd = g_iconv_open("UTF-8", iconv_name);
    if (cd == reinterpret_cast<GIConv>(-1)) return false;
    k.open.push_back(cd);
    return true;
}

std::vector<std::string> encoded_word_charsets(std::string_view text)
{
    std::vector<std::string> out;
    for (std::size_t i = text.find("=?"); i != std::string_view::npos; i = text.find("=?", i + 1)) {
        std::size_t j = i + 2;
        while (j < text.size() && token_char(text[j])) ++j;
        // "=?charset?" then the encoding letter and '?': an encoded word's opening
        if (j == i + 2 || j + 2 >= text.size() || text[j] != '?' || text[j + 2] != '?') continue;
        const char enc = static_cast<char>(g_ascii_toupper(text[j + 1]));
        if (enc != 'Q' && enc != 'B') continue;
        std::string_view cs = text.substr(i + 2, j - i - 2);
        cs = cs.substr(0, cs.find('*')); // RFC 2231's language suffix
        if (cs.empty()) continue;
        if (out.size() >= kMaxKept) break; // bounded: more could not be kept anyway
        if (std::none_of(out.begin(), out.end(), [&](const std::string &s) { return g_ascii_strncasecmp(s.c_str(), cs.data(), cs.size()) == 0 && s.size() == cs.size(); }))
            out.emplace_back(cs);
    }
    return out;
}

void keep_charsets_for(std::string_view m, std::size_t header_block_size)
{
    for (const std::string &cs : encoded_word_charsets(m)) keep_charset(cs);
    const std::string_view head = m.substr(0, std::min(header_block_size, m.size()));
    if (std::any_of(head.begin(), head.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
        keep_charset(g_mime_locale_charset());
        keep_charset("iso-8859-1");
    }
}

namespace {

std::string lower_trimmed(std::string_view s)
{
    while (!s.empty() && g_ascii_isspace(s.front())) s.remove_prefix(1);
    while (!s.empty() && g_ascii_isspace(s.back())) s.remove_suffix(1);
    std::string out(s);
    for (char &c : out) c = static_cast<char>(g_ascii_tolower(c));
    return out;
}

// WHATWG Encoding, section 4.2 (the labels table): the labels of the encodings that are not
// ASCII-compatible, and the encoding each names.
const char *whatwg_non_ascii(const std::string &label)
{
    static const std::pair<const char *, const char *> table[] = {
        {"unicodefffe", "UTF-16BE"},    {"utf-16be", "UTF-16BE"},       {"csunicode", "UTF-16LE"},
        {"iso-10646-ucs-2", "UTF-16LE"}, {"ucs-2", "UTF-16LE"},         {"unicode", "UTF-16LE"},
        {"unicodefeff", "UTF-16LE"},    {"utf-16", "UTF-16LE"},         {"utf-16le", "UTF-16LE"},
        {"csiso2022jp", "ISO-2022-JP"}, {"iso-2022-jp", "ISO-2022-JP"}, {"csiso2022kr", "replacement"},
        {"hz-gb-2312", "replacement"},  {"iso-2022-cn", "replacement"}, {"iso-2022-cn-ext", "replacement"},
        {"iso-2022-kr", "replacement"}, {"replacement", "replacement"},
    };
    for (const auto &[l, enc] : table)
        if (label == l) return enc;
    return nullptr;
}

// What iconv makes of the probe in `name`: Yes when every byte comes back as itself.
AsciiCompat probe_iconv(const char *name)
{
    GIConv cd = g_iconv_open("UTF-8", name);
    if (cd == reinterpret_cast<GIConv>(-1)) return AsciiCompat::Unknown;
    std::string probe = "\t\n\r";
    for (int c = 0x20; c < 0x7F; ++c)
        if (c != '\\' && c != '~') probe += static_cast<char>(c);
    probe += "\x1b(B\x1b$B\x0e\x0f+-+AGEA-"; // ISO-2022 escapes, SO/SI, UTF-7 shifts
    gsize read = 0, written = 0;
    gchar *out = g_convert_with_iconv(probe.data(), static_cast<gssize>(probe.size()), cd, &read, &written, nullptr);
    g_iconv_close(cd);
    const bool same = out && written == probe.size() && std::memcmp(out, probe.data(), written) == 0;
    g_free(out);
    return same ? AsciiCompat::Yes : AsciiCompat::No;
}

struct Compat {
    std::mutex mu;
    std::vector<std::pair<std::string, AsciiCompat>> known; // at most kMaxTried
};

// An attribute value with its character references decoded, as far as a charset label can
// be spelt with them: numeric ones, and the named ones that stand for ASCII punctuation
// (WHATWG HTML 13.5), the legacy &quot; &amp; &lt; &gt; with or without their ';'. Others
// stay as written (a label has no other character in it).
std::string decode_label_refs(std::string_view v)
{
    static const std::pair<const char *, char> named[] = {
        {"quot;", '"'}, {"QUOT;", '"'}, {"apos;", '\''}, {"amp;", '&'}, {"AMP;", '&'}, {"lt;", '<'}, {"LT;", '<'},
        {"gt;", '>'}, {"GT;", '>'}, {"Tab;", '\t'}, {"NewLine;", '\n'}, {"semi;", ';'}, {"equals;", '='},
        {"hyphen;", '-'}, {"dash;", '-'}, {"lowbar;", '_'}, {"UnderBar;", '_'}, {"period;", '.'}, {"colon;", ':'},
        {"comma;", ','}, {"sol;", '/'}, {"quot", '"'}, {"QUOT", '"'}, {"amp", '&'}, {"AMP", '&'}};
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        if (v[i] != '&') {
            out += v[i++];
            continue;
        }
        if (i + 2 < v.size() && v[i + 1] == '#') {
            std::size_t j = i + 2;
            const bool hex = v[j] == 'x' || v[j] == 'X';
            if (hex) ++j;
            unsigned long cp = 0;
            const std::size_t first = j;
            for (; j < v.size() && (hex ? g_ascii_isxdigit(v[j]) : g_ascii_isdigit(v[j])); ++j)
                cp = std::min(0x110000ul, cp * (hex ? 16 : 10) + static_cast<unsigned long>(g_ascii_xdigit_value(v[j])));
            if (j > first) {
                if (j < v.size() && v[j] == ';') ++j;
                out += cp > 0 && cp < 0x80 ? static_cast<char>(cp) : '\x80'; // not ASCII: in no label
                i = j;
                continue;
            }
        }
        bool done = false;
        for (const auto &[name, c] : named) {
            const std::size_t n = std::strlen(name);
            if (v.compare(i + 1, n, name) != 0) continue;
            // A legacy reference with no ';' is left alone before an alphanumeric or '=' (13.2.5.73).
            if (name[n - 1] != ';' && i + 1 + n < v.size() && (g_ascii_isalnum(v[i + 1 + n]) || v[i + 1 + n] == '=')) break;
            out += c;
            i += 1 + n;
            done = true;
            break;
        }
        if (!done) out += v[i++];
    }
    return out;
}

// WHATWG HTML 13.2.3.2, "get an attribute" and "extract a character encoding from a meta
// element", over the first bytes of a text. Returns the label, lowercased, or "". Character
// references in attribute values are decoded, as Chromium's prescan (which runs its HTML
// tokenizer) does: content="text/html; charset=&quot;iso-2022-jp&quot;" is ISO-2022-JP
// there (document.characterSet in Chromium 156), though the byte-stream prescan
// of the standard leaves them.
struct MetaPrescan {
    std::string_view b;
    std::size_t p{0};
    // Chromium's rule as well (HTMLMetaCharsetParser): past the first 1024 bytes, a <meta>
    // still counts while only head elements have come (a long <title> or <style> first).
    bool head_rule{false};
    bool in_head{true};
    static bool space(char c) { return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '; }
    bool get_attribute(std::string &name, std::string &value)
    {
        name.clear();
        value.clear();
        while (p < b.size() && (space(b[p]) || b[p] == '/')) ++p;
        if (p >= b.size() || b[p] == '>') return false;
        for (;; ++p) {
            if (p >= b.size()) return false;
            const char c = b[p];
            if (c == '=' && !name.empty()) {
                ++p;
                break;
            }
            if (space(c)) {
                while (p < b.size() && space(b[p])) ++p;
                if (p >= b.size()) return false;
                if (b[p] != '=') return true;
                ++p;
                break;
            }
            if (c == '/' || c == '>') return true;
            name += static_cast<char>(g_ascii_tolower(c));
        }
        while (p < b.size() && space(b[p])) ++p;
        if (p >= b.size()) return false;
        auto decoded = [&] {
            value = decode_label_refs(value);
            for (char &c : value) c = static_cast<char>(g_ascii_tolower(c));
        };
        if (b[p] == '"' || b[p] == '\'') {
            const char q = b[p++];
            for (; p < b.size(); ++p) {
                if (b[p] == q) {
                    ++p;
                    decoded();
                    return true;
                }
                value += b[p];
            }
            return false;
        }
        if (b[p] == '>') return true;
        for (; p < b.size() && !space(b[p]) && b[p] != '>'; ++p) value += b[p];
        decoded();
        return p < b.size();
    }
    static std::string from_content(std::string_view v)
    {
        for (std::size_t at = 0;;) {
            const std::size_t cs = v.find("charset", at);
            if (cs == std::string_view::npos) return {};
            std::size_t i = cs + 7;
            while (i < v.size() && space(v[i])) ++i;
            if (i >= v.size() || v[i] != '=') {
                at = i; // "loop": look for "charset" again from here
                continue;
            }
            ++i;
            while (i < v.size() && space(v[i])) ++i;
            if (i >= v.size()) return {};
            if (v[i] == '"' || v[i] == '\'') {
                const std::size_t close = v.find(v[i], i + 1);
                return close == std::string_view::npos ? std::string() : std::string(v.substr(i + 1, close - i - 1));
            }
            std::size_t e = i;
            while (e < v.size() && !space(v[e]) && v[e] != ';') ++e;
            return std::string(v.substr(i, e - i));
        }
    }
    std::string run()
    {
        auto at = [&](std::string_view s) {
            return b.size() - p >= s.size() && g_ascii_strncasecmp(b.data() + p, s.data(), s.size()) == 0;
        };
        while (p < b.size()) {
            if (head_rule && !in_head && p >= 1024) return {};
            if (b[p] != '<') { // every step below starts at a '<': on to the next one
                const void *lt = std::memchr(b.data() + p, '<', b.size() - p);
                p = lt ? static_cast<std::size_t>(static_cast<const char *>(lt) - b.data()) : b.size();
                continue;
            }
            if (at("<!--")) {
                const std::size_t end = b.find("-->", p + 2);
                if (end == std::string_view::npos) return {};
                p = end + 3;
            } else if (at("<meta") && p + 5 < b.size() && (space(b[p + 5]) || b[p + 5] == '/')) {
                p += 6;
                std::vector<std::string> seen;
                bool got_pragma = false;
                int need_pragma = -1; // null
                std::string charset, name, value;
                while (get_attribute(name, value)) {
                    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
                    seen.push_back(name);
                    if (name == "http-equiv" && value == "content-type") got_pragma = true;
                    else if (name == "content" && charset.empty()) {
                        if (std::string cs = from_content(value); !cs.empty()) charset = cs, need_pragma = 1;
                    } else if (name == "charset") {
                        charset = value;
                        need_pragma = 0;
                    }
                }
                if (need_pragma < 0 || (need_pragma == 1 && !got_pragma) || lower_trimmed(charset).empty()) continue;
                return lower_trimmed(charset);
            } else if ((at("<") && p + 1 < b.size() && g_ascii_isalpha(b[p + 1])) ||
                       (at("</") && p + 2 < b.size() && g_ascii_isalpha(b[p + 2]))) {
                const bool end = b[p + 1] == '/';
                const std::size_t name_at = p + (end ? 2 : 1);
                while (p < b.size() && !space(b[p]) && b[p] != '>') ++p;
                std::string tag(b.substr(name_at, p - name_at));
                for (char &c : tag) c = static_cast<char>(g_ascii_tolower(c));
                std::string name, value;
                while (get_attribute(name, value)) {
                }
                ++p;
                if (head_rule) {
                    // Chromium's HTMLMetaCharsetParser: the head goes on through these tags only.
                    static const char *in_head_tags[] = {"script", "noscript", "style", "link", "meta", "object", "title", "base"};
                    const bool allowed = std::any_of(std::begin(in_head_tags), std::end(in_head_tags),
                                                     [&](const char *t) { return tag == t; }) ||
                                         (!end && (tag == "html" || tag == "head"));
                    if (!allowed) in_head = false;
                    // Its tokenizer reads these elements' text as text, not tags.
                    if (!end && (tag == "title" || tag == "script" || tag == "style" || tag == "noscript" ||
                                 tag == "textarea" || tag == "xmp" || tag == "noembed" || tag == "noframes")) {
                        for (std::size_t close = b.find("</", p); ; close = b.find("</", close + 2)) {
                            if (close == std::string_view::npos) return {};
                            if (b.size() - close - 2 >= tag.size() &&
                                g_ascii_strncasecmp(b.data() + close + 2, tag.data(), tag.size()) == 0) {
                                p = close;
                                break;
                            }
                        }
                    }
                }
            } else if (at("<!") || at("</") || at("<?")) {
                const std::size_t end = b.find('>', p + 2);
                if (end == std::string_view::npos) return {};
                p = end + 1;
            } else {
                ++p;
            }
        }
        return {};
    }
};

// The iconv name a non-ASCII-compatible label is read from: RFC 2781's utf-16 (a BOM, else
// big-endian) as glibc reads it; other WHATWG labels by the encoding they name; the rest
// as GMime maps it.
std::string convert_name(const std::string &label)
{
    if (label == "utf-16") return "UTF-16";
    if (const char *enc = whatwg_non_ascii(label); enc && std::strcmp(enc, "replacement") != 0) return enc;
    const char *n = g_mime_charset_iconv_name(label.c_str());
    return n ? n : label;
}

} // namespace

AsciiCompat ascii_compatibility(std::string_view charset)
{
    const std::string label = lower_trimmed(charset);
    if (label.empty() || label.size() > 64) return AsciiCompat::Unknown;
    if (whatwg_non_ascii(label)) return AsciiCompat::No;
    static Compat *cache = new Compat; // never destroyed, as the converters kept
    {
        std::lock_guard<std::mutex> lock(cache->mu);
        for (const auto &[l, v] : cache->known)
            if (l == label) return v;
    }
    AsciiCompat v = AsciiCompat::Unknown;
    if (const char *n = g_mime_charset_iconv_name(label.c_str())) v = probe_iconv(n);
    if (v == AsciiCompat::Unknown) v = probe_iconv(label.c_str());
    std::lock_guard<std::mutex> lock(cache->mu);
    if (cache->known.size() < kMaxTried) cache->known.emplace_back(label, v);
    return v;
}

HtmlEncoding sniff_html_encoding(std::string_view label_in, std::string_view head)
{
    HtmlEncoding e;
    const std::string label = lower_trimmed(label_in);
    const AsciiCompat by_label = ascii_compatibility(label);
    // WHATWG Encoding, "decode": the byte-order mark before anything else.
    const char *bom = nullptr;
    if (head.substr(0, 3) == "\xEF\xBB\xBF") bom = "UTF-8";
    else if (head.substr(0, 2) == "\xFE\xFF") bom = "UTF-16BE";
    else if (head.substr(0, 2) == "\xFF\xFE") bom = "UTF-16LE";
    if (bom) {
        e.convert_from = bom;
        e.described = std::string(bom) + " (byte-order mark)";
        e.ascii_compatible = std::strcmp(bom, "UTF-8") == 0 && by_label != AsciiCompat::No;
        if (e.ascii_compatible) e.convert_from.clear();
        return e;
    }
    if (by_label == AsciiCompat::No) {
        e.ascii_compatible = false;
        e.convert_from = convert_name(label);
        e.described = label;
        return e;
    }
    // HTML 13.2.3.2: a <meta> in the first 1024 bytes, read in any ASCII-compatible encoding.
    MetaPrescan scan{head.substr(0, 1024)};
    std::string meta = scan.run();
    if (meta.empty() && head.size() > 1024) { // Chromium reads on through the head
        MetaPrescan chromium{head};
        chromium.head_rule = true;
        meta = chromium.run();
        e.head_open = meta.empty() && chromium.in_head;
    } else if (meta.empty()) {
        e.head_open = true;
    }
    if (meta.empty()) return e;
    if (const char *enc = whatwg_non_ascii(meta); enc && std::strncmp(enc, "UTF-16", 6) == 0) return e; // UTF-8 then
    if (ascii_compatibility(meta) != AsciiCompat::No) return e;
    e.ascii_compatible = false;
    e.convert_from = by_label == AsciiCompat::Yes ? std::string() : convert_name(meta); // a label it contradicts: as labelled
    e.described = meta + " (<meta>)";
    return e;
}

} // namespace mimeuri
