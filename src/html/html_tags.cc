// The tokenizer's text rules that are more than a line (html_tags.hh).
#include "html_tags.hh"

namespace mimeuri::html::tags {

std::optional<std::string> plain_decoded(std::string_view v)
{
    std::string out;
    out.reserve(v.size());
    std::size_t copied = 0; // v up to here is in out: bytes that are themselves are copied by runs
    for (std::size_t i = 0; i < v.size(); ++i) {
        const char c = v[i];
        auto u = static_cast<unsigned char>(c);
        if ((u >= 0x20 && u < 0x7F && c != '&') || c == '\t' || c == '\n' || c == '\f') continue;
        out.append(v.substr(copied, i - copied));
        copied = i + 1;
        if (c == '\r') { // the input stream makes CR LF and CR one LF (13.2.3.5)
            out += '\n';
            if (i + 1 < v.size() && v[i + 1] == '\n') copied = ++i + 1;
            continue;
        }
        // (gumbo makes DEL, as the other controls, U+FFFD)
        if (c != '&') return std::nullopt;
        // '&', ASCII letters and digits, '=': no reference in an attribute value (13.2.5.73: a
        // name that matches no reference, or one of those taken without ';' followed by '=' or
        // an alphanumeric, is the text it is): a tracking link's "&linknum=0".
        std::size_t k = i + 1;
        while (k < v.size() && ((v[k] >= '0' && v[k] <= '9') || alpha(v[k]))) ++k;
        if (k < v.size() && v[k] == '=') {
            out += '&';
            continue;
        }
        const std::size_t semi = v.find(';', i);
        if (semi == std::string_view::npos || semi - i > 10) return std::nullopt;
        const std::string_view name = v.substr(i + 1, semi - i - 1);
        char d = 0;
        if (name == "amp") d = '&';
        else if (name == "lt") d = '<';
        else if (name == "gt") d = '>';
        else if (name == "quot") d = '"';
        else if (name == "apos") d = '\'';
        else if (name.size() >= 2 && name[0] == '#') {
            const bool hex = name[1] == 'x' || name[1] == 'X';
            const std::string_view digits = name.substr(hex ? 2 : 1);
            if (digits.empty() || digits.size() > 4) return std::nullopt;
            unsigned cp = 0;
            for (char h : digits) {
                int dv = h >= '0' && h <= '9' ? h - '0' : hex && h >= 'a' && h <= 'f' ? h - 'a' + 10 : hex && h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (dv < 0) return std::nullopt;
                cp = cp * (hex ? 16 : 10) + static_cast<unsigned>(dv);
            }
            if (cp < 0x20 || cp > 0x7E) return std::nullopt;
            d = static_cast<char>(cp);
        } else {
            return std::nullopt;
        }
        out += d;
        i = semi;
        copied = semi + 1;
    }
    out.append(v.substr(copied));
    return out;
}

ScriptEnd script_data(std::string_view h, std::size_t j, Script &st, bool cut)
{
    const std::size_t n = h.size();
    auto script_at = [&](std::size_t at) { // "script" and white space, '/' or '>'
        return iequal_at(h, at, "script") && at + 6 < n && (ws(h[at + 6]) || h[at + 6] == '/' || h[at + 6] == '>');
    };
    while (j < n) {
        const char c = h[j];
        const bool dbl = st >= Script::Dbl, esc = st != Script::Data && !dbl;
        const Script base = dbl ? Script::Dbl : esc ? Script::Esc : Script::Data;
        if (c == '-') { // escaped: a dash, two dashes ("-->" may follow)
            if (st != Script::Data && st != Script::EscDashDash && st != Script::DblDashDash)
                st = static_cast<Script>(static_cast<int>(st) + 1);
            ++j;
            continue;
        }
        if (c != '<') {
            st = c == '>' && (st == Script::EscDashDash || st == Script::DblDashDash) ? Script::Data : base;
            ++j;
            continue;
        }
        if (j + 9 > n && cut) return {j, false}; // what follows the '<' decides
        st = base; // each '<' state reconsumes into these
        const char next = j + 1 < n ? h[j + 1] : 0;
        if (next == '/' && script_at(j + 2)) {
            if (!dbl) return {j, true};
            st = Script::Esc, j += 9; // the inner "<script" closed
        } else if (next == '/') {
            j += 2; // letters and '/' change no state
        } else if (next == '!' && !esc && !dbl) {
            if (h.compare(j + 2, 2, "--") == 0) st = Script::EscDashDash, j += 4; // "<!--" (and "<!-->" ends it)
            else j += 2;
        } else if (esc && script_at(j + 1)) {
            st = Script::Dbl, j += 8;
        } else {
            ++j;
        }
    }
    return {n, false};
}

std::string name_key(std::string_view name)
{
    std::string key;
    key.reserve(name.size());
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7F) key += c;
        else if (key.empty() || key.back() != '\x01') key += '\x01';
    }
    return key;
}

} // namespace mimeuri::html::tags
