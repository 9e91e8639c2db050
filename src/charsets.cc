#include "charsets.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstring>
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

} // namespace mimeuri
