// Small text helpers shared by the mappings and passes.
#pragma once

#include <glib.h>

#include <string>
#include <string_view>

namespace mimeuri::text {

// Whether s holds lower_word at `at`, ASCII letters of s compared case-insensitively.
inline bool ci_at(std::string_view s, std::size_t at, std::string_view lower_word)
{
    if (at + lower_word.size() > s.size()) return false;
    for (std::size_t k = 0; k < lower_word.size(); ++k)
        if ((s[at + k] >= 'A' && s[at + k] <= 'Z' ? s[at + k] + 32 : s[at + k]) != lower_word[k]) return false;
    return true;
}

inline std::string ascii_lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out) // g_ascii_tolower's mapping, inline (a call a byte was most of its cost)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
}

// s without its SP, HTAB, CR and LF (folded or spaced URIs and labels are read so).
inline std::string without_space(std::string_view s)
{
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') out += c;
    return out;
}

// %XX-encodes (upper-case hex) every octet for which encode_octet(octet) is true.
template <typename Pred> std::string percent_encode(std::string_view s, Pred encode_octet)
{
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (encode_octet(c)) {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

// The bytes as lower-case hex, two digits an octet (a digest's usual spelling).
inline std::string lower_hex(std::string_view bytes)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) out += hex[c >> 4], out += hex[c & 15];
    return out;
}

} // namespace mimeuri::text
