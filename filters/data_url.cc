// data: URLs read as browsers read them (the WHATWG fetch standard's data: URL processor,
// RFC 2397): the media type, the payload decoded (forgiving base64 or percent-decoding), the
// bytes' own image type sniffed; and the cheap test that bytes may hold one (data.hh).
#include "data.hh"

#include "base64.hh"
#include "html_refs.hh"
#include "text.hh"

#include <glib.h>

#include <string>
#include <string_view>

namespace mimeuri {

namespace data {

namespace {

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int base64_value(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// URL percent-decoding (WHATWG URL 1.3): "%XX" with two hex digits is the byte, anything
// else is itself.
std::string percent_decode(std::string_view in)
{
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '%' && i + 2 < in.size()) {
            int h = hex_value(in[i + 1]), l = hex_value(in[i + 2]);
            if (h >= 0 && l >= 0) {
                out += static_cast<char>(h * 16 + l);
                i += 2;
                continue;
            }
        }
        out += in[i];
    }
    return out;
}

// Whether the numeric character reference at i ("&#...") decodes to a letter of "data" or ':'.
bool spells_data_char(std::string_view s, std::size_t i)
{
    std::size_t j = i + 2;
    const bool hex = j < s.size() && (s[j] == 'x' || s[j] == 'X');
    j += hex ? 1 : 0;
    unsigned long v = 0;
    std::size_t digits = 0;
    for (; j < s.size() && (hex ? g_ascii_isxdigit(s[j]) : g_ascii_isdigit(s[j])); ++j, ++digits)
        v = std::min(0x110000ul, v * (hex ? 16 : 10) + static_cast<unsigned long>(g_ascii_xdigit_value(s[j])));
    return digits > 0 && v < 128 && std::string_view("datDAT:").find(static_cast<char>(v)) != std::string_view::npos;
}

} // namespace

bool is_data_url(std::string_view url) { return url.size() >= 5 && g_ascii_strncasecmp(url.data(), "data:", 5) == 0; }

namespace {

// Forgiving-base64 decode (WHATWG Infra 4.6) of a data: URL's payload into d: its decoded
// size, and its bytes up to cap; d.size left none where it does not decode.
void forgiving_base64(std::string body, std::size_t cap, DataUrl &d)
{
    // White space removed, "=" padding only at the
    // end, no length of 1 modulo 4, nothing outside the alphabet.
    // The alphabet's values by octet: 64 for '=', 65 for white space, 66 for the rest.
    static const auto kValue = [] {
        std::array<unsigned char, 256> t{};
        t.fill(66);
        for (int c = 0; c < 256; ++c) {
            if (int v = base64_value(static_cast<char>(c)); v >= 0) t[static_cast<std::size_t>(c)] = static_cast<unsigned char>(v);
            else if (ascii_space(static_cast<char>(c))) t[static_cast<std::size_t>(c)] = 65;
        }
        t['='] = 64;
        return t;
    }();
    std::size_t n = 0;
    for (char c : body)
        if (kValue[static_cast<unsigned char>(c)] != 65) body[n++] = c;
    body.resize(n);
    if (n % 4 == 0 && n > 0 && body[n - 1] == '=') {
        --n;
        if (body[n - 1] == '=') --n;
    }
    if (n % 4 == 1) return;
    for (std::size_t i = 0; i < n; ++i)
        if (kValue[static_cast<unsigned char>(body[i])] > 63) return;
    const std::size_t size = n / 4 * 3 + (n % 4 == 2 ? 1 : n % 4 == 3 ? 2 : 0);
    d.size = size;
    if (size > cap) {
        d.over = true;
        return;
    }
    // The text kept where it is canonical (the padding in place, the unused bits zero).
    const bool canonical = base64::canonical(body);
    d.bytes.resize(size);
    char *out = d.bytes.data();
    unsigned acc = 0;
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
        acc = (acc << 6) | kValue[static_cast<unsigned char>(body[i])];
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *out++ = static_cast<char>((acc >> bits) & 0xff);
        }
    }
    if (canonical) d.text = std::move(body);
}

} // namespace

DataUrl parse_data_url(std::string_view url, std::size_t cap)
{
    DataUrl d;
    d.type = "text/plain";
    // Fetch's data: URL processor: browsers' URL parser has already dropped tabs and line breaks
    // anywhere in the URL and white space around it.
    std::string input;
    std::string_view whole = url;
    if (std::any_of(url.begin(), url.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; })) {
        input.reserve(url.size());
        for (char c : url)
            if (c != '\t' && c != '\n' && c != '\r') input += c;
        whole = input;
    }
    std::string_view rest = whole.substr(std::min<std::size_t>(5, whole.size()));
    const std::size_t comma = rest.find(',');
    if (comma == std::string_view::npos) return d; // no payload: failure (size none)
    std::string_view mime = rest.substr(0, comma);
    while (!mime.empty() && ascii_space(mime.front())) mime.remove_prefix(1);
    while (!mime.empty() && ascii_space(mime.back())) mime.remove_suffix(1);
    // ";" white space "base64", any case, ends the type: base64 payload.
    if (std::size_t semi = mime.rfind(';'); semi != std::string_view::npos) {
        std::string_view tail = mime.substr(semi + 1);
        while (!tail.empty() && ascii_space(tail.front())) tail.remove_prefix(1);
        if (tail.size() == 6 && g_ascii_strncasecmp(tail.data(), "base64", 6) == 0) {
            d.base64 = true;
            mime = mime.substr(0, semi);
            while (!mime.empty() && ascii_space(mime.back())) mime.remove_suffix(1);
        }
    }
    // The essence: type/subtype before any parameter, lower case; "text/plain" when none.
    std::string_view essence = mime.substr(0, mime.find(';'));
    while (!essence.empty() && ascii_space(essence.back())) essence.remove_suffix(1);
    if (!essence.empty() && essence.find('/') != std::string_view::npos)
        d.type = text::ascii_lower(essence);
    const std::string_view payload = rest.substr(comma + 1);
    std::string body = payload.find('%') == std::string_view::npos ? std::string(payload) : percent_decode(payload);
    if (!d.base64) {
        d.size = body.size();
        if (body.size() > cap) d.over = true;
        else d.bytes = std::move(body);
        return d;
    }
    forgiving_base64(std::move(body), cap, d);
    return d;
}

std::string sniff_image(std::string_view b)
{
    auto starts = [&](std::string_view p) { return b.size() >= p.size() && b.compare(0, p.size(), p) == 0; };
    using namespace std::string_view_literals;
    if (starts("\x00\x00\x01\x00"sv) || starts("\x00\x00\x02\x00"sv)) return "image/x-icon";
    if (starts("BM")) return "image/bmp";
    if (starts("GIF87a") || starts("GIF89a")) return "image/gif";
    if (b.size() >= 14 && starts("RIFF") && b.compare(8, 6, "WEBPVP") == 0) return "image/webp";
    if (starts("\x89PNG\r\n\x1a\n"sv)) return "image/png";
    if (starts("\xff\xd8\xff"sv)) return "image/jpeg";
    return "";
}

bool may_hold_data_uri(std::string_view bytes)
{
    if (bytes.find('\\') != std::string_view::npos) return true;
    if (html::holds_srcdoc(bytes)) return true; // its document is decoded once more: "data&amp;colon;"
    for (std::size_t i = bytes.find('&'); i != std::string_view::npos && i + 1 < bytes.size(); i = bytes.find('&', i + 1)) {
        if (bytes[i + 1] == '#' && spells_data_char(bytes, i)) return true;
        if (i + 6 <= bytes.size() && g_ascii_strncasecmp(bytes.data() + i + 1, "colon", 5) == 0) return true;
    }
    for (std::size_t i = bytes.find(':', 2); i != std::string_view::npos; i = bytes.find(':', i + 1))
        if ((bytes[i - 2] | 0x20) == 't' && (bytes[i - 1] | 0x20) == 'a') return true;
    return false;
}

std::string extension_for(std::string_view type)
{
    static const std::pair<std::string_view, std::string_view> kExt[] = {
        {"image/png", "png"},   {"image/jpeg", "jpg"},         {"image/jpg", "jpg"},  {"image/pjpeg", "jpg"},
        {"image/gif", "gif"},   {"image/webp", "webp"},        {"image/bmp", "bmp"},  {"image/x-icon", "ico"},
        {"image/vnd.microsoft.icon", "ico"}, {"image/svg+xml", "svg"}, {"image/avif", "avif"}, {"image/tiff", "tif"},
        {"image/apng", "apng"}, {"image/x-png", "png"}, {"image/heic", "heic"}, {"image/jxl", "jxl"},
    };
    for (const auto &[t, e] : kExt)
        if (t == type) return std::string(e);
    return "bin";
}

} // namespace data

} // namespace mimeuri
