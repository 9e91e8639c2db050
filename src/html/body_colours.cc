#include "body_colours.hh"

#include <algorithm>
#include <array>
#include <cstdio>

namespace mimeuri::html {

namespace {

// CSS Color 4's named colours, which the legacy rules look up first (step 5).
constexpr std::array<std::string_view, 148> kNamed{
    "aliceblue", "antiquewhite", "aqua", "aquamarine", "azure", "beige", "bisque", "black", "blanchedalmond", "blue",
    "blueviolet", "brown", "burlywood", "cadetblue", "chartreuse", "chocolate", "coral", "cornflowerblue", "cornsilk",
    "crimson", "cyan", "darkblue", "darkcyan", "darkgoldenrod", "darkgray", "darkgreen", "darkgrey", "darkkhaki",
    "darkmagenta", "darkolivegreen", "darkorange", "darkorchid", "darkred", "darksalmon", "darkseagreen",
    "darkslateblue", "darkslategray", "darkslategrey", "darkturquoise", "darkviolet", "deeppink", "deepskyblue",
    "dimgray", "dimgrey", "dodgerblue", "firebrick", "floralwhite", "forestgreen", "fuchsia", "gainsboro",
    "ghostwhite", "gold", "goldenrod", "gray", "green", "greenyellow", "grey", "honeydew", "hotpink", "indianred",
    "indigo", "ivory", "khaki", "lavender", "lavenderblush", "lawngreen", "lemonchiffon", "lightblue", "lightcoral",
    "lightcyan", "lightgoldenrodyellow", "lightgray", "lightgreen", "lightgrey", "lightpink", "lightsalmon",
    "lightseagreen", "lightskyblue", "lightslategray", "lightslategrey", "lightsteelblue", "lightyellow", "lime",
    "limegreen", "linen", "magenta", "maroon", "mediumaquamarine", "mediumblue", "mediumorchid", "mediumpurple",
    "mediumseagreen", "mediumslateblue", "mediumspringgreen", "mediumturquoise", "mediumvioletred", "midnightblue",
    "mintcream", "mistyrose", "moccasin", "navajowhite", "navy", "oldlace", "olive", "olivedrab", "orange",
    "orangered", "orchid", "palegoldenrod", "palegreen", "paleturquoise", "palevioletred", "papayawhip", "peachpuff",
    "peru", "pink", "plum", "powderblue", "purple", "rebeccapurple", "red", "rosybrown", "royalblue", "saddlebrown",
    "salmon", "sandybrown", "seagreen", "seashell", "sienna", "silver", "skyblue", "slateblue", "slategray",
    "slategrey", "snow", "springgreen", "steelblue", "tan", "teal", "thistle", "tomato", "turquoise", "violet",
    "wheat", "white", "whitesmoke", "yellow", "yellowgreen"};

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }
bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

std::string rgb(int r, int g, int b)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
    return buf;
}

} // namespace

std::optional<std::string> legacy_colour(std::string_view value)
{
    // Steps 3-4: strip ASCII whitespace; nothing, or "transparent", is no colour.
    while (!value.empty() && ascii_space(value.front())) value.remove_prefix(1);
    while (!value.empty() && ascii_space(value.back())) value.remove_suffix(1);
    std::string lower(value);
    for (char &c : lower)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
    if (lower.empty() || lower == "transparent") return std::nullopt;
    // Step 5: a named colour.
    if (std::find(kNamed.begin(), kNamed.end(), lower) != kNamed.end()) return lower;
    // Step 6: "#rgb".
    if (value.size() == 4 && value[0] == '#' && is_hex(value[1]) && is_hex(value[2]) && is_hex(value[3]))
        return rgb(hex(value[1]) * 17, hex(value[2]) * 17, hex(value[3]) * 17);
    // Step 7: a code point above U+FFFF (four UTF-8 bytes) becomes "00"; other non-ASCII
    // code points are one character each (replaced by '0' in step 10).
    std::string s;
    for (std::size_t i = 0; i < value.size() && s.size() < 128;) { // step 8: at most 128
        const auto b = static_cast<unsigned char>(value[i]);
        const std::size_t len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        if (len == 4) s += "00";
        else s += len == 1 ? value[i] : '0';
        i += len;
    }
    if (s.size() > 128) s.resize(128);
    if (!s.empty() && s[0] == '#') s.erase(0, 1); // step 9
    for (char &c : s)                              // step 10
        if (!is_hex(c)) c = '0';
    while (s.empty() || s.size() % 3 != 0) s += '0'; // step 11
    std::size_t len = s.size() / 3;                  // step 12
    std::array<std::string_view, 3> comp{std::string_view(s).substr(0, len), std::string_view(s).substr(len, len),
                                         std::string_view(s).substr(2 * len, len)};
    if (len > 8) { // step 13: the last 8 of each
        for (auto &c : comp) c.remove_prefix(len - 8);
        len = 8;
    }
    while (len > 2 && comp[0][0] == '0' && comp[1][0] == '0' && comp[2][0] == '0') { // step 14
        for (auto &c : comp) c.remove_prefix(1);
        --len;
    }
    if (len > 2) // step 15
        for (auto &c : comp) c = c.substr(0, 2);
    auto value_of = [](std::string_view c) {
        int v = 0;
        for (char ch : c) v = v * 16 + hex(ch);
        return v;
    };
    return rgb(value_of(comp[0]), value_of(comp[1]), value_of(comp[2]));
}

std::string body_css(const std::optional<std::string> &bgcolor, const std::optional<std::string> &text,
                     const std::optional<std::string> &background, const std::optional<std::string> &style)
{
    std::string css;
    if (auto c = bgcolor ? legacy_colour(*bgcolor) : std::nullopt) css += "background-color:" + *c + ';';
    if (auto c = text ? legacy_colour(*text) : std::nullopt) css += "color:" + *c + ';';
    if (background && !background->empty()) {
        css += "background-image:url(\"";
        for (char c : *background) { // a CSS string: its quote, backslash and line ends escaped
            if (c == '"' || c == '\\') css += '\\', css += c;
            else if (c == '\n') css += "\\a ";
            else if (c == '\r') css += "\\d ";
            else if (c == '\f') css += "\\c ";
            else css += c;
        }
        css += "\");";
    }
    if (style) css += *style;
    return css;
}

} // namespace mimeuri::html
