// The report's JSON strings (json_writer.hh): valid UTF-8, escaped by table.
#include "json_writer.hh"

#include "gobj.hh"

#include <glib.h>

namespace mimeuri {

namespace {

// The escape of each ASCII octet: empty for the octets written as they are.
struct EscapeTable {
    char text[128][7]{};
    constexpr EscapeTable()
    {
        const char hex[] = "0123456789abcdef";
        for (int c = 0; c < 0x20; ++c) {
            const char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            for (int k = 0; k < 7; ++k) text[c][k] = u[k];
        }
        auto set = [this](int c, char e) {
            text[c][0] = '\\';
            text[c][1] = e;
            text[c][2] = 0;
        };
        set('\b', 'b');
        set('\f', 'f');
        set('\n', 'n');
        set('\r', 'r');
        set('\t', 't');
        set('"', '"');
        set('\\', '\\');
        const char del[7] = {'\\', 'u', '0', '0', '7', 'f', 0}; // as json-glib writes it
        for (int k = 0; k < 7; ++k) text[0x7f][k] = del[k];
    }
};
constexpr EscapeTable escapes;

// The octets written as they are in every case: printable ASCII but for '"' and '\\'.
struct PlainTable {
    bool plain[256]{};
    constexpr PlainTable()
    {
        for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
    }
};
constexpr PlainTable plain;

} // namespace

void JsonWriter::quoted(std::string_view v)
{
    // Most strings (every name, most values) hold no octet to escape or check: appended at
    // once, the same bytes the general path below writes for them (issue 53: a report with
    // 10,000 references wrote 165,000 strings an octet at a time).
    std::size_t i = 0;
    while (i < v.size() && plain.plain[static_cast<unsigned char>(v[i])]) ++i;
    if (i == v.size()) {
        out_.reserve(out_.size() + v.size() + 2);
        out_ += '"';
        out_.append(v);
        out_ += '"';
        return;
    }
    out_ += '"';
    const std::size_t mark = out_.size();
    if (!escaped(v, true)) { // not ASCII text: made valid UTF-8 first (a NUL replaced too)
        out_.resize(mark);
        GCharPtr valid;
        if (!g_utf8_validate_len(v.data(), v.size(), nullptr)) {
            valid.reset(g_utf8_make_valid(v.data(), static_cast<gssize>(v.size())));
            v = valid.get();
        }
        escaped(v, false);
    }
    out_ += '"';
}

// Appends v escaped; with ascii, stops (false) at the first octet that is not ASCII or NUL.
bool JsonWriter::escaped(std::string_view v, bool ascii)
{
    std::size_t run = 0; // octets since the last escape, appended at once
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto u = static_cast<unsigned char>(v[i]);
        if (ascii && (u >= 128 || u == 0)) return false;
        if (u >= 128 || !escapes.text[u][0]) continue;
        out_.append(v.data() + run, i - run).append(escapes.text[u]);
        run = i + 1;
    }
    out_.append(v.data() + run, v.size() - run);
    return true;
}

} // namespace mimeuri
