// The transfer encoders passes write with (src/mime/transfer.cc): exact vectors for the line
// rules of quoted-printable, and base64 in lines against GLib's own encoder.
#include "transfer.hh"

#include <doctest/doctest.h>
#include <glib.h>

#include <memory>
#include <string>

using mimeuri::transfer::append_base64;
using mimeuri::transfer::base64_lines;
using mimeuri::transfer::quoted_printable;

TEST_CASE("quoted-printable: soft breaks at 76, line ends, line starts (exact output)")
{
    const std::string a75(75, 'a');
    struct Vector {
        std::string text;
        bool crlf;
        std::string encoded;
    };
    const Vector vectors[] = {
        {std::string(80, 'a'), false, a75 + "=\naaaaa"},
        // A soft break makes the next octet a line start: '-' is encoded there.
        {a75 + "-x", false, a75 + "=\n=2Dx"},
        // An encoded octet that does not fit goes to the next line whole.
        {std::string(74, 'a') + "==", false, std::string(74, 'a') + "=\n=3D=3D"},
        // Space and tab before a line end or the end are encoded, elsewhere not.
        {"x \ny\t", false, "x=20\ny=09"},
        {"a b\tc", false, "a b\tc"},
        // The message's line break is a hard break; any other CR or LF is encoded.
        {"a\r\nb\rc\n", true, "a\nb=0Dc=0A"},
        {"a\r\nb", false, "a=0D\nb"},
        {".\nFrom x\nFrom", false, "=2E\n=46rom x\nFrom"},
        {std::string(150, 'b') + "From me", false,
         std::string(75, 'b') + "=\n" + std::string(75, 'b') + "=\n=46rom me"},
        {"caf\xc3\xa9=", false, "caf=C3=A9=3D"},
        {"", false, ""},
    };
    for (const auto &v : vectors) {
        CAPTURE(v.text);
        CHECK(quoted_printable(v.text, v.crlf) == v.encoded);
    }
}

TEST_CASE("base64: in lines of 76 and in one line, the same as g_base64_encode")
{
    std::string bytes;
    for (int n = 0; n < 400; ++n) {
        std::unique_ptr<gchar, decltype(&g_free)> flat(
            g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size()), g_free);
        std::string want;
        for (std::string_view f = flat.get(); !f.empty(); f.remove_prefix(std::min<std::size_t>(76, f.size())))
            want.append(f.substr(0, 76)).append("\n");
        CAPTURE(n);
        CHECK(base64_lines(bytes) == want);
        std::string url = "data:x;base64,";
        append_base64(url, bytes);
        CHECK(url == std::string("data:x;base64,") + flat.get());
        bytes += static_cast<char>(n * 37 + 11);
    }
}

TEST_CASE("quoted-printable: any octet anywhere in a run (the run is found sixteen octets at a time)")
{
    // Each octet value at each place of a 48-octet line of 'b': written as it is when
    // printable ASCII but '=' (space and tab too, but at the line's end), else =XX. A
    // reference written octet by octet, for lines too short for a soft break.
    static const char hex[] = "0123456789ABCDEF";
    for (int v = 0; v < 256; ++v) {
        for (std::size_t at = 0; at < 48; ++at) {
            std::string text(48, 'b');
            text[at] = static_cast<char>(v);
            std::string want;
            for (std::size_t i = 0; i < text.size(); ++i) {
                const auto u = static_cast<unsigned char>(text[i]);
                const bool last = i + 1 == text.size();
                const bool literal = (u >= 33 && u <= 126 && u != '=') || ((u == ' ' || u == '\t') && !last);
                const bool line_start = i == 0 && (u == '-' || u == '.');
                if (literal && !line_start) want += text[i];
                else want += std::string{'=', hex[u >> 4], hex[u & 15]};
            }
            if (v == '\n') want = text.substr(0, at) + "\n" + text.substr(at + 1); // the message's line break
            CAPTURE(v);
            CAPTURE(at);
            CHECK(quoted_printable(text, false) == want);
        }
    }
}
