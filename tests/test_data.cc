// The data: pass's pieces: data: URLs read as WHATWG Fetch's "data: URL processor" reads them
// (its examples and the web-platform-tests' fetch/data-urls cases), images sniffed as WHATWG
// MIME Sniffing 6.1 sniffs them, and the cheap test that lets a message skip the parse.
#include "base64.hh"
#include "data.hh"
#include "transfer.hh"

#include <doctest/doctest.h>

#include <string>

using namespace mimeuri;
using namespace std::string_literals;

TEST_CASE("data: URLs decode as the Fetch standard's data: URL processor decodes them")
{
    struct Case {
        const char *url;
        const char *type;       // "" : no payload (failure)
        bool decodes;
        std::string bytes;
    };
    const Case cases[] = {
        {"data:,Hello%2C%20World%21", "text/plain", true, "Hello, World!"},
        {"data:text/plain;base64,SGVsbG8sIFdvcmxkIQ==", "text/plain", true, "Hello, World!"},
        {"DATA:IMAGE/PNG;BASE64,iVBO", "image/png", true, "\x89PNG"s.substr(0, 3)},
        {"data:image/png ; base64,iVBO", "image/png", true, "\x89PNG"s.substr(0, 3)},
        {"data:image/png;charset=x;base64,AAAA", "image/png", true, "\0\0\0"s},
        {"data:;base64,AAAA", "text/plain", true, "\0\0\0"s},
        {"data:image/png;base64,AA AA\nAA==", "image/png", true, "\0\0\0\0"s},   // white space dropped
        {"data:image/png;base64,AAA", "image/png", true, "\0\0"s},               // padding optional
        {"data:image/png;base64,A", "image/png", false, ""},                      // 1 mod 4
        {"data:image/png;base64,AA=A", "image/png", false, ""},                   // '=' inside
        {"data:image/png;base64,AA*A", "image/png", false, ""},                   // outside the alphabet
        {"data:image/png;base64,%41%41%41%41", "image/png", true, "\0\0\0"s},    // %-decoded first
        {"data:image/svg+xml,%3Csvg%2F%3E", "image/svg+xml", true, "<svg/>"},
        {"data:image/svg+xml,%3csvg%zz", "image/svg+xml", true, "<svg%zz"},     // a bad escape is itself
        {"data:text/html", "text/plain", false, ""},                                 // no comma
    };
    for (const Case &c : cases) {
        CAPTURE(c.url);
        data::DataUrl d = data::parse_data_url(c.url, 1000);
        if (std::string(c.type) == "text/plain" && !c.decodes) {
            CHECK(!d.size);
            continue;
        }
        CHECK(d.type == c.type);
        CHECK(d.size.has_value() == c.decodes);
        if (c.decodes) {
            CHECK(d.bytes == c.bytes);
            CHECK(*d.size == c.bytes.size());
        }
    }
}

TEST_CASE("a data: URL's canonical base64 is kept as text, to be copied into a part's lines")
{
    struct Case {
        const char *url;
        const char *text; // "": not canonical, the bytes are encoded again
    };
    const Case cases[] = {
        {"data:image/png;base64,SGVsbG8sIFdvcmxkIQ==", "SGVsbG8sIFdvcmxkIQ=="},
        {"data:image/png;base64,AA AA\nAA==", "AAAAAA=="},    // white space dropped, as the decoder drops it
        {"data:image/png;base64,AAA", ""},                     // no padding: encoded as AAA=
        {"data:image/png;base64,AB==", ""},                    // unused bits set: encoded as AA==
        {"data:image/png;base64,AAB=", ""},                    // the same with one '='
        {"data:image/png;base64,%41%41%41%41", "AAAA"},        // %-decoded first
        {"data:image/svg+xml,%3Csvg%2F%3E", ""},               // no base64 at all
    };
    for (const Case &c : cases) {
        CAPTURE(c.url);
        data::DataUrl d = data::parse_data_url(c.url, 1000);
        REQUIRE(d.size);
        CHECK(d.text == c.text);
        if (d.text.empty() || !d.base64) continue;
        // The copy's lines are the bytes' lines.
        std::string lines;
        base64::append_lines(d.text, lines);
        CHECK(lines == transfer::base64_lines(d.bytes));
    }
    // Over the cap: neither bytes nor text.
    data::DataUrl d = data::parse_data_url("data:image/png;base64,AAAAAAAA", 5);
    CHECK(d.text.empty());
}

TEST_CASE("a data: URL over the cap is counted, not held")
{
    data::DataUrl d = data::parse_data_url("data:image/png;base64,AAAAAAAA", 5);
    REQUIRE(d.size);
    CHECK(*d.size == 6);
    CHECK(d.over);
    CHECK(d.bytes.empty());
    d = data::parse_data_url("data:image/svg+xml,%3Csvg%3E", 4);
    CHECK(*d.size == 5);
    CHECK(d.over);
}

TEST_CASE("images are sniffed by their signatures, as browsers sniff them")
{
    CHECK(data::sniff_image("\x89PNG\r\n\x1a\n...."s) == "image/png");
    CHECK(data::sniff_image("GIF89a...") == "image/gif");
    CHECK(data::sniff_image("GIF87a") == "image/gif");
    CHECK(data::sniff_image("\xff\xd8\xff\xe0"s) == "image/jpeg");
    CHECK(data::sniff_image("RIFF\x10\0\0\0WEBPVP8 "s) == "image/webp");
    CHECK(data::sniff_image("BM....") == "image/bmp");
    CHECK(data::sniff_image("\0\0\1\0\1\0"s) == "image/x-icon");
    CHECK(data::sniff_image("<svg xmlns='http://www.w3.org/2000/svg'/>") == "");
    CHECK(data::sniff_image("Hello world") == "");
    CHECK(data::sniff_image("\x89PN"s) == "");
}

TEST_CASE("a part that cannot spell data: is not parsed for the data pass")
{
    CHECK_FALSE(data::may_hold_data_uri("<img src=\"cid:a\"><p>plain text: nothing</p>"));
    CHECK(data::may_hold_data_uri("<img src=\"data:image/png;base64,AAAA\">"));
    CHECK(data::may_hold_data_uri("<img src=\"DATA:image/png,x\">"));
    CHECK(data::may_hold_data_uri("<img src=\"d&#97;ta:image/png,x\">"));   // a character reference
    CHECK(data::may_hold_data_uri("<img src=\"data&#x3A;image/png,x\">"));
    CHECK_FALSE(data::may_hold_data_uri("<p>&#8217;quoted&#8217; &#169; &amp;</p>")); // others are no data:
    CHECK(data::may_hold_data_uri("<img src=\"data&colon;image/png,x\">"));
    CHECK(data::may_hold_data_uri("<p style=\"background:url(d\\61ta:x)\">")); // a CSS escape
}

TEST_CASE("file name extensions follow the image type")
{
    CHECK(data::extension_for("image/png") == "png");
    CHECK(data::extension_for("image/jpeg") == "jpg");
    CHECK(data::extension_for("image/svg+xml") == "svg");
    CHECK(data::extension_for("image/x-unknown") == "bin");
}
