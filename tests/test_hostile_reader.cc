// What a reader parses that the scanner must not miss: URLs as the URL parser reads them,
// --drop-inlined against what the scanner did not read, output that never depends on a
// report, charsets declared with character references, header blocks after lines of white
// space, images declared application/octet-stream at any size.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <gmime/gmime.h>

#include <string>
#include <vector>

using testing::quote;

namespace {

testing::Proc run(const std::string &args, const std::string &path) { return testing::mimeuri(args + " " + quote(path)); }

const std::string kPngB64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

// A multipart/related: the HTML, then a PNG with Content-ID <img@x>.
std::string related(const std::string &html, const std::string &html_type = "text/html; charset=utf-8")
{
    return "From: a@example.org\nTo: b@example.org\nSubject: t\nMessage-ID: <t@example.org>\nMIME-Version: 1.0\n"
           "Content-Type: multipart/related; boundary=\"BOUNDARY\"\n\n"
           "--BOUNDARY\nContent-Type: " + html_type + "\n\n" + html +
           "\n--BOUNDARY\nContent-Type: image/png\nContent-ID: <img@x>\nContent-Transfer-Encoding: base64\n\n" + kPngB64 +
           "\n--BOUNDARY--\n";
}

std::string base64_lines(const std::string &bytes)
{
    gchar *b = g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size());
    std::string s = b, out;
    g_free(b);
    for (std::size_t i = 0; i < s.size(); i += 76) out += s.substr(i, 76) + "\n";
    return out;
}

std::size_t count(const std::string &s, const std::string &what)
{
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("a cid: URL spelt with what the URL parser drops is reported, inlined and repaired as a browser reads it")
{
    // Each is cid:img@x to Chromium (img.src): tabs and newlines inside removed, C0 controls
    // and spaces around stripped, the scheme in any case.
    testing::TempDir d;
    for (const char *src : {"ci&#9;d:img@x", "CI\nD:img@x", " &#1;cid:img@x", "CI\r\nD:img@x", "c&Tab;i&NewLine;d:img@x",
                            "&#x1f;cId:img@x&#9;", "\tcid:img@x\n", "cid&#10;:img@x"}) {
        CAPTURE(src);
        const std::string html = std::string("<p>x</p><img alt=\"a\" src=\"") + src + "\" width=\"1\">";
        const std::string m = related(html);
        const std::string f = d.file("m.eml", m);
        auto checked = run("--check", f);
        std::string lower = checked.out;
        for (char &c : lower) c = static_cast<char>(g_ascii_tolower(c));
        CHECK(lower.find("\"url\":\"cid:img@x\"") != std::string::npos); // the scheme as written
        CHECK(checked.out.find("\"status\":\"resolved\"") != std::string::npos);
        auto summary = run("--summary-header", f);
        CHECK(summary.out.find("Mimeuri-Refs: resolved=1 dangling=0 ambiguous=0") != std::string::npos);
        // Inlined, and the part it showed dropped only then; the attribute's other bytes kept.
        auto inl = run("--cid=inline --drop-inlined", f);
        REQUIRE(inl.status == 0);
        testing::MimeTree t = testing::mime_tree(inl.out);
        REQUIRE(t.leaves.size() == 1);
        CHECK(t.leaves[0] == "<p>x</p><img alt=\"a\" src=\"data:image/png;base64," + kPngB64 + "\" width=\"1\">");
        // Repaired: the URL written out as the browser reads it.
        auto rep = run("", f);
        testing::MimeTree r = testing::mime_tree(rep.out);
        REQUIRE(r.leaves.size() == 2);
        CHECK(r.leaves[0] == "<p>x</p><img alt=\"a\" src=\"cid:img@x\" width=\"1\">");
    }
}

TEST_CASE("--drop-inlined keeps a part that an HTML part it could not read whole may name")
{
    testing::TempDir d;
    const std::string small = "<p>short</p><img src=\"cid:img@x\">";
    const std::string big = "<p>" + std::string(4096, 'x') + "</p><img src=\"cid:img@x\">";
    // multipart/alternative of two HTML parts in the related: a reader shows the last one.
    auto alternative = [&](const std::string &first, const std::string &last, const std::string &last_type) {
        return "Message-ID: <a@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=r\n\n--r\n"
               "Content-Type: multipart/alternative; boundary=a\n\n--a\nContent-Type: text/html\n\n" + first +
               "\n--a\nContent-Type: " + last_type + "\n\n" + last + "\n--a--\n"
               "--r\nContent-Type: image/png\nContent-ID: <img@x>\nContent-Transfer-Encoding: base64\n\n" + kPngB64 +
               "\n--r--\n";
    };
    // Over --html-max; in a charset the pass does not rewrite.
    for (const auto &ma : std::vector<std::pair<std::string, std::string>>{
             {alternative(small, big, "text/html"), " --html-max=2048"},
             {alternative(small, big, "text/html; charset=iso-2022-jp"), ""},
             {alternative(big, small, "text/html"), " --html-max=2048"}}) {
        const std::string &m = ma.first, &args = ma.second; // (no structured binding: clang 14 lets CAPTURE take none)
        CAPTURE(args);
        const std::string f = d.file("m.eml", m);
        auto r = run("--cid=inline --drop-inlined --report=" + quote(d / "r") + args, f);
        REQUIRE(r.status == 0);
        CHECK(count(r.out, "Content-ID: <img@x>") == 1);
        // (In the charset case the part's reference is checked only, so the image is not inlined there at all.)
        if (!args.empty()) CHECK(testing::read_file(d / "r").find("not dropped") != std::string::npos);
    }
    // Constructs the scanner does not read, naming the part in other spellings.
    for (const char *extra : {"<div style=\"background-image: image-set('cid:img@x' 1x)\">x</div>",
                              "<div style='background-image: -webkit-image-set(\"CID:img%40x\" 1x)'>x</div>",
                              "<style>p{background:image-set(\"cid:img\\40x\" 2x)}</style>",
                              // Read in a srcdoc document (issue 48), but not rewritable there: the
                              // data: URL's '=' in an unquoted value.
                              "<iframe srcdoc=\"<img src=cid:img@x>\"></iframe>",
                              "<p title=\"cid:img@x\">x</p>",
                              "<object data=\"x.swf\"><param name=\"movie\" value=\"cid:img@x\"></object>",
                              "<meta http-equiv=\"refresh\" content=\"5; url=CID:img@x\">"}) {
        CAPTURE(extra);
        const std::string f = d.file("m.eml", related(small + extra));
        auto r = run("--cid=inline --drop-inlined --report=" + quote(d / "r"), f);
        REQUIRE(r.status == 0);
        CHECK(r.out.find("data:image/png;base64,") != std::string::npos);
        CHECK(count(r.out, "Content-ID: <img@x>") == 1);
    }
    // What the scans read, all inlined: the part goes, as before.
    // A srcdoc document is read as the HTML it is (issue 48): its references, escaped once
    // more, are inlined there too.
    for (const std::string &html : {small, small + "<p style=\"background:url('cid:img@x')\">y</p>",
                                    small + "<img srcset=\"cid:img@x 1x, CID:img%40x 2x\">",
                                    small + "<iframe srcdoc=\"&lt;img src=&quot;cid:img@x&quot;&gt;\"></iframe>",
                                    small + "<iframe srcdoc=\"<img src='cid:img&amp;#64;x'>\"></iframe>",
                                    small + "<iframe srcdoc=\"<img src='ci&amp;#9;d:img&amp;commat;x'>\"></iframe>"}) {
        CAPTURE(html);
        auto r = run("--cid=inline --drop-inlined", d.file("m.eml", related(html)));
        REQUIRE(r.status == 0);
        CHECK(r.out.find("data:image/png;base64,") != std::string::npos);
        CHECK(r.out.find("Content-ID: <img@x>") == std::string::npos);
    }
}

TEST_CASE("the output never depends on whether a report is written: a stylesheet's references, hostile spellings")
{
    testing::TempDir d;
    auto css_related = [](const std::string &css, const std::string &css_header) {
        return "Message-ID: <c@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=r\n\n--r\n" + css_header +
               "\n\n" + css + "\n--r\nContent-Type: image/png\nContent-ID: <img@x>\nContent-Transfer-Encoding: base64\n\n" +
               kPngB64 + "\n--r--\n";
    };
    std::vector<std::string> messages;
    for (const char *css : {"p{background:url(cid:<img@x>)}", "p{background:url('CID:img@x ')}", "p{background:url(ci\\9 d:img@x)}",
                            "@import 'cid:%3Cimg@x%3E';", "p{background:url(\" cid:img@x\")}"})
        for (const char *header : {"Content-Type: text/css", "Content-Type: TEXT/CSS; charset=utf-8",
                                   "Content-Type: text/css\nContent-Transfer-Encoding: quoted-printable"}) {
            messages.push_back(css_related(css, header));
        }
    // HTML with the URL parser's spellings, and a page whose only reference is in its stylesheet.
    for (const char *src : {"ci&#9;d:img@x", "CI\nD:img@x", " &#1;cid:img@x"})
        messages.push_back(related(std::string("<img src=\"") + src + "\">"));
    messages.push_back("Message-ID: <p@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=r\n\n--r\n"
                       "Content-Type: text/html\n\n<link rel=stylesheet href=\"cid:css@x\"><p>x</p>\n--r\n"
                       "Content-Type: text/css\nContent-ID: <css@x>\n\np{background:url(cid:<img@x>)}\n--r\n"
                       "Content-Type: image/png\nContent-ID: <img@x>\nContent-Transfer-Encoding: base64\n\n" + kPngB64 +
                       "\n--r--\n");
    for (const std::string &m : messages) {
        CAPTURE(m);
        const std::string f = d.file("m.eml", m);
        for (const char *mode : {"", "--cid=inline", "--cid=inline --drop-inlined"}) {
            CAPTURE(mode);
            auto plain = run(mode, f);
            auto reported = run(std::string(mode) + " --report=" + quote(d / "r"), f);
            REQUIRE(plain.status == 0);
            CHECK(plain.out == reported.out);
            // Each has a reference to repair or inline (but the page whose stylesheet would be
            // both rewritten and dropped: those edits overlap, and the message passes as it came).
            if (&m != &messages.back() || std::string(mode).find("drop") == std::string::npos) CHECK(plain.out != m);
        }
    }
}

TEST_CASE("lines of white space before the header block: the fields after them are read, every byte kept")
{
    testing::TempDir d;
    const std::string body = "From: a@example.org\nSubject: saved\nMessage-ID: <s@x>\nMIME-Version: 1.0\n"
                             "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n"
                             "<img src=\"CID:&lt;img@x&gt;\">\n--r\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--r--\n";
    for (const char *lead : {" \n", "    \n", "\t\n", " \t \n  \n", "   \n\t\t\n \n"}) {
        CAPTURE(lead);
        for (bool crlf : {false, true}) {
            CAPTURE(crlf);
            const std::string m = crlf ? testing::crlf(lead + body) : lead + body;
            auto r = run("--report=" + quote(d / "r"), d.file("m.eml", m));
            REQUIRE(r.status == 0);
            std::string want = m;
            want.replace(want.find("CID:&lt;img@x&gt;"), 17, "cid:img@x");
            CHECK(r.out == want);
            const std::string rep = testing::read_file(d / "r");
            CHECK(rep.find("\"message_id\":\"s@x\"") != std::string::npos);
            CHECK(rep.find("unparseable") == std::string::npos);
        }
    }
    // In an mbox, after the From_ line.
    const std::string mbox = "From a@example.org Thu Jan  1 00:00:00 2026\n  \n" + body + "\nFrom b@example.org Thu Jan  1 00:00:00 2026\n" + body;
    auto r = run("", d.file("m.mbox", mbox));
    REQUIRE(r.status == 0);
    CHECK(count(r.out, "<img src=\"cid:img@x\">") == 2);
    CHECK(r.out.rfind("From a@example.org Thu Jan  1 00:00:00 2026\n  \nFrom: a@example.org", 0) == 0);
    // A first line of white space then text is no such line: the message is as GMime reads it.
    const std::string odd = " x\n" + body;
    CHECK(run("", d.file("m.eml", odd)).status == 0);
}

TEST_CASE("an image declared application/octet-stream is sniffed and inlined at any size")
{
    testing::TempDir d;
    // A PNG signature, then filler: 1 KiB to 1 MiB of content, base64 and binary.
    for (std::size_t size : {std::size_t{1} << 10, std::size_t{48} << 10, std::size_t{64} << 10, std::size_t{70} << 10,
                             std::size_t{200} << 10, std::size_t{1} << 20}) {
        for (const char *cte : {"base64", "binary"}) {
            CAPTURE(size);
            CAPTURE(cte);
            std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(size - 8, 'A');
            const bool b64 = std::string(cte) == "base64";
            const std::string m = "Message-ID: <o@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=r\n\n--r\n"
                                  "Content-Type: text/html\n\n<img src=\"cid:oct@x\">\n--r\n"
                                  "Content-Type: application/octet-stream\nContent-ID: <oct@x>\nContent-Transfer-Encoding: " +
                                  std::string(cte) + "\n\n" + (b64 ? base64_lines(png) : png) + "\n--r--\n";
            auto r = run("--cid=inline --inline-max=4194304 --report=" + quote(d / "r"), d.file("m.eml", m));
            REQUIRE(r.status == 0);
            const std::string rep = testing::read_file(d / "r");
            CHECK(rep.find("\"reason\":\"sniffed:image/png\"") != std::string::npos);
            testing::MimeTree t = testing::mime_tree(r.out); // the HTML may now be transfer-encoded
            REQUIRE(!t.leaves.empty());
            CHECK(t.leaves[0].rfind("<img src=\"data:image/png;base64,iVBORw0KGg", 0) == 0);
        }
    }
}
