// --data through the command line: check reports each data: URI and changes nothing;
// attach changes only what it says; signed content is kept; the report crosses --jobs.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <glib.h>

using namespace testing;

namespace {

std::string testdata(const std::string &name) { return std::string(MIMEURI_TESTDATA) + "/data/" + name; }

std::size_t count(const std::string &hay, const std::string &needle)
{
    std::size_t n = 0;
    for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("--data=check reports every data: URI of an HTML part and changes nothing")
{
    TempDir d;
    const std::string in = testdata("lone.eml");
    auto run = mimeuri("--report=" + quote(d / "r") + " " + quote(in));
    REQUIRE(run.status == 0);
    CHECK(run.out == read_file(in));
    const std::string rep = read_file(d / "r");
    // Five data: URIs: the <style> element's, img src, the style attribute's, the SVG image's, the link.
    CHECK(count(rep, "\"part\":\"1\"") == 5);
    CHECK(rep.find("{\"part\":\"1\",\"attr\":\"style\",\"type\":\"image/png\",\"size\":73,\"action\":\"none\"}") != std::string::npos);
    CHECK(rep.find("\"attr\":\"img@src\",\"type\":\"image/png\",\"size\":74,\"action\":\"none\"}") != std::string::npos);
    CHECK(rep.find("\"attr\":\"div@style\"") != std::string::npos);
    CHECK(rep.find("\"attr\":\"image@href\",\"type\":\"image/svg+xml\"") != std::string::npos);
    CHECK(rep.find("\"attr\":\"a@href\",\"type\":\"text/html\",\"size\":5,\"action\":\"none\",\"reason\":\"not-image\"}") !=
          std::string::npos);
    // Off: no data list at all, as before the pass.
    auto off = mimeuri("--data=off --report=" + quote(d / "r2") + " " + quote(in));
    CHECK(read_file(d / "r2").find("\"data\"") == std::string::npos);
    // A message with no data: URI reports no data list either.
    const std::string plain = d.file("plain.eml", "From: a@example.org\nContent-Type: text/html\n\n<p>hi</p>\n");
    (void)mimeuri("--report=" + quote(d / "r3") + " " + quote(plain));
    CHECK(read_file(d / "r3").find("\"data\"") == std::string::npos);
}

TEST_CASE("--data=attach leaves what it cannot attach, and says why")
{
    TempDir d;
    const std::string in = testdata("left.eml");
    auto run = mimeuri("--data=attach --data-max=50 --report=" + quote(d / "r") + " " + quote(in));
    REQUIRE(run.status == 0);
    CHECK(run.out == read_file(in));
    const std::string rep = read_file(d / "r");
    CHECK(rep.find("\"changed\":false") != std::string::npos);
    CHECK(rep.find("\"attr\":\"a@href\",\"type\":\"text/html\",\"size\":11,\"action\":\"none\",\"reason\":\"not-image\"") != std::string::npos);
    CHECK(rep.find("\"size\":null,\"action\":\"none\",\"reason\":\"base64\"") != std::string::npos);
    CHECK(rep.find("\"size\":74,\"action\":\"none\",\"reason\":\"size\"") != std::string::npos);
    CHECK(rep.find("\"attr\":\"a@href\",\"type\":\"image/png\",\"size\":74,\"action\":\"none\",\"reason\":\"context\"") !=
          std::string::npos);
    CHECK(rep.find("\"size\":0,\"action\":\"none\",\"reason\":\"empty\"") != std::string::npos);
    CHECK(rep.find("\"size\":11,\"sniffed\":\"unknown\",\"action\":\"none\",\"reason\":\"bytes\"") != std::string::npos);
}

TEST_CASE("--data=attach keeps signed content unless --signed=rewrite")
{
    TempDir d;
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\n"
                            "Content-Type: multipart/signed; protocol=\"application/pkcs7-signature\"; micalg=sha-256; boundary=\"s\"\n\n"
                            "--s\nContent-Type: text/html\n\n<img src=\"data:image/png;base64," + png + "\">\n"
                            "--s\nContent-Type: application/pkcs7-signature\nContent-Transfer-Encoding: base64\n\nAAAA\n--s--\n";
    const std::string f = d.file("signed.eml", msg);
    auto kept = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(f));
    CHECK(kept.out == msg);
    CHECK(read_file(d / "r").find("\"action\":\"kept\",\"kept\":\"smime\"") != std::string::npos);
    auto rewritten = mimeuri("--data=attach --signed=rewrite " + quote(f));
    CHECK(rewritten.status == 0);
    CHECK(rewritten.out.find("multipart/related") != std::string::npos);
    CHECK(rewritten.out.find("data:image") == std::string::npos);
}

TEST_CASE("--data's report is the same with --jobs")
{
    TempDir d;
    const std::string mbox = d.file("in.mbox", "From x\n" + read_file(testdata("lone.eml")) + "\nFrom x\n" +
                                                   read_file(testdata("related.eml")));
    auto one = mimeuri("--data=attach --report=" + quote(d / "r1") + " " + quote(mbox));
    auto two = mimeuri("--data=attach --jobs=2 --report=" + quote(d / "r2") + " " + quote(mbox));
    REQUIRE(one.status == 0);
    CHECK(one.out == two.out);
    CHECK(read_file(d / "r1") == read_file(d / "r2"));
    // lone.eml's three PNG URIs (its SVG stays data:, reason "type") and related.eml's one.
    CHECK(count(read_file(d / "r1"), "\"action\":\"attached\"") == 4);
}

namespace {

// The Content-IDs of a message as a second reader sees them (Python's email would do; here the
// header lines themselves, each "Content-ID:" field's value, brackets dropped, lower case).
std::vector<std::string> content_ids(const std::string &msg)
{
    std::vector<std::string> ids;
    for (std::size_t at = 0; at < msg.size();) {
        std::size_t end = msg.find('\n', at);
        if (end == std::string::npos) end = msg.size();
        std::string line = msg.substr(at, end - at);
        if (line.size() > 11 && g_ascii_strncasecmp(line.c_str(), "Content-ID:", 11) == 0) {
            std::string v;
            for (char c : line.substr(11))
                if (c != ' ' && c != '\t' && c != '\r' && c != '<' && c != '>') v += static_cast<char>(g_ascii_tolower(c));
            ids.push_back(v);
        }
        at = end + 1;
    }
    return ids;
}

std::string upper(std::string s)
{
    for (char &c : s) c = static_cast<char>(g_ascii_toupper(c));
    return s;
}

const std::string kPng = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const std::string kGif = "R0lGODlhAQABAAAAACw=";

// The id --data=attach gives kPng's bytes: SHA-256 (GLib's, not mimeuri's), 32 hex digits.
std::string png_hash()
{
    gsize n = 0;
    guchar *b = g_base64_decode(kPng.c_str(), &n);
    gchar *h = g_compute_checksum_for_data(G_CHECKSUM_SHA256, b, n);
    std::string out(h, 32);
    g_free(h);
    g_free(b);
    return out;
}

// A reply: its HTML quotes kPng as data:, beside `extra` (parts of its related set), and
// `after` (parts of the outer mixed).
std::string reply(const std::string &extra, const std::string &after = "")
{
    return "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"m\"\n\n--m\n"
           "Content-Type: multipart/related; boundary=\"r\"; type=\"text/html\"\n\n--r\nContent-Type: text/html\n\n"
           "<p>quoted:</p><img src=\"data:image/png;base64," + kPng + "\">\n" + extra + "--r--\n" + after + "--m--\n";
}

std::string image_part(const std::string &type, const std::string &cid, const std::string &b64)
{
    return "--r\nContent-Type: " + type + "\nContent-Transfer-Encoding: base64\nContent-Disposition: inline\n"
           "Content-ID: <" + cid + ">\n\n" + b64 + "\n";
}

} // namespace

TEST_CASE("--data=attach never gives an id the message has: the same image in the set is named, any other part's id skipped")
{
    // Issue 48 (2): ids were checked only against the ids given in the same run.
    TempDir d;
    const std::string h = png_hash(), id = h + "@example.org";
    struct Case {
        const char *what;
        std::string msg;
        std::string cid; // the id the HTML names after
        int parts;       // Content-ID fields after
    };
    const std::string inner = "--m\nContent-Type: message/rfc822\n\nFrom: c@example.org\nMIME-Version: 1.0\n"
                              "Content-Type: image/png\nContent-Transfer-Encoding: base64\nContent-ID: <" + id + ">\n\n" +
                              kPng + "\n";
    const std::string mixed = "--m\nContent-Type: image/png\nContent-Transfer-Encoding: base64\nContent-ID: <" + id +
                              ">\n\n" + kPng + "\n";
    const std::vector<Case> cases{
        {"the part an earlier run made, in the set", reply(image_part("image/png", id, kPng)), id, 1},
        {"the same, its id in upper case", reply(image_part("image/png", upper(id), kPng)), upper(id), 1},
        {"a part the sender named with the hash, other bytes", reply(image_part("image/gif", id, kGif)), h + ".2@example.org", 2},
        {"the same bytes, not an image by its type", reply(image_part("application/octet-stream", id, kPng)),
         h + ".2@example.org", 2},
        {"the same bytes twice in the set (ambiguous already)",
         reply(image_part("image/png", id, kPng) + image_part("image/png", id, kPng)), h + ".2@example.org", 3},
        {"the same bytes outside the set", reply("", mixed), h + ".2@example.org", 2},
        {"the id and its .2 in an attached message and the set", reply(image_part("image/gif", h + ".2@example.org", kGif), inner),
         h + ".3@example.org", 3},
    };
    for (const Case &c : cases) {
        for (bool cr : {false, true}) {
            CAPTURE(c.what);
            CAPTURE(cr);
            const std::string in = cr ? crlf(c.msg) : c.msg;
            const std::string f = d.file("in.eml", in);
            auto run = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(f));
            REQUIRE(run.status == 0);
            CHECK(run.out.find("data:image") == std::string::npos);
            CHECK(run.out.find("src=\"cid:" + c.cid + "\"") != std::string::npos);
            const auto ids = content_ids(run.out);
            CHECK(static_cast<int>(ids.size()) == c.parts);
            // No id twice that was not twice already.
            std::vector<std::string> before = content_ids(in), after = ids;
            for (const std::string &x : after)
                CHECK(std::count(after.begin(), after.end(), x) <= std::max<long>(1, std::count(before.begin(), before.end(), x)));
            CHECK(read_file(d / "r").find("\"action\":\"attached\",\"cid\":\"" + c.cid + "\"") != std::string::npos);
            // And the next run finds nothing to do, no reference ambiguous.
            const std::string again = d.file("again.eml", run.out);
            auto next = mimeuri("--data=attach --cid=check --report=" + quote(d / "r2") + " " + quote(again));
            CHECK(next.out == run.out);
            CHECK(read_file(d / "r2").find("ambiguous") == std::string::npos);
        }
    }
}

TEST_CASE("--data=attach: two HTML parts of one set quoting an image the set has name that part, none added")
{
    TempDir d;
    const std::string id = png_hash() + "@example.org";
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"r\"\n\n"
                            "--r\nContent-Type: text/html\n\n<img src=\"data:image/png;base64," + kPng + "\">\n"
                            "--r\nContent-Type: text/html\n\n<div style=\"background:url(data:image/png;base64," + kPng +
                            ")\">x</div>\n" + image_part("image/png", id, kPng) + "--r--\n";
    auto run = mimeuri("--data=attach " + quote(d.file("in.eml", msg)));
    REQUIRE(run.status == 0);
    CHECK(content_ids(run.out).size() == 1);
    CHECK(run.out.find("cid:" + id) != std::string::npos);
    CHECK(run.out.find("data:image") == std::string::npos);
}

TEST_CASE("--data=attach never edits inside an attached message; --data=check lists its data: URIs")
{
    // Issue 48 (7), as for --related=repair: a forwarded message is a document the user received.
    TempDir d;
    for (const std::string &html_type : {std::string("text/html"), std::string("text/css")}) {
        CAPTURE(html_type);
        const std::string body = html_type == "text/html" ? "<img src=\"data:image/png;base64," + kPng + "\">"
                                                          : "p { background: url(data:image/png;base64," + kPng + ") }";
        const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"m\"\n\n"
                                "--m\nContent-Type: text/plain\n\nforwarded\n--m\nContent-Type: message/rfc822\n\n"
                                "From: b@example.org\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"r\"\n\n"
                                "--r\nContent-Type: " + html_type + "\n\n" + body + "\n--r--\n\n--m--\n";
        for (bool cr : {false, true}) {
            const std::string in = cr ? crlf(msg) : msg;
            const std::string f = d.file("in.eml", in);
            auto run = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(f));
            REQUIRE(run.status == 0);
            CHECK(run.out == in);
            CHECK(read_file(d / "r").find("\"part\":\"2.1\",\"attr\":\"") != std::string::npos);
            CHECK(read_file(d / "r").find("\"action\":\"none\",\"reason\":\"attached-message\"") != std::string::npos);
        }
    }
}

TEST_CASE("--data reads an <iframe srcdoc> as the HTML it is: its data: images listed, and attached in place")
{
    // Issue 48 (8): a saved page's srcdoc frame kept its data: images, unlisted. Each variation:
    // the srcdoc as written, the text it must become (the id is the image's hash), and the
    // report's attr. The srcdoc's own escaping is kept: only the URL's bytes change.
    TempDir d;
    const std::string id = png_hash() + "@example.org";
    const std::string u = "data:image/png;base64," + kPng;
    struct Case {
        std::string srcdoc, want, attr;
    };
    const std::vector<Case> cases{
        {"srcdoc=\"<p>x</p><img src=&quot;" + u + "&quot;>\"", "srcdoc=\"<p>x</p><img src=&quot;cid:" + id + "&quot;>\"",
         "iframe@srcdoc>img@src"},
        {"srcdoc='<img src=\"" + u + "\">'", "srcdoc='<img src=\"cid:" + id + "\">'", "iframe@srcdoc>img@src"},
        {"SRCDOC=\"<img src=" + u + ">\"", "SRCDOC=\"<img src=cid:" + id + ">\"", "iframe@srcdoc>img@src"},
        {"srcdoc=\"<div style=&quot;background:url(" + u + ")&quot;>x</div>\"",
         "srcdoc=\"<div style=&quot;background:url('cid:" + id + "')&quot;>x</div>\"", "iframe@srcdoc>div@style"},
        {"srcdoc=\"<style>p{background:url(" + u + ")}</style><p>x\"",
         "srcdoc=\"<style>p{background:url('cid:" + id + "')}</style><p>x\"", "iframe@srcdoc>style"},
        {"srcdoc=\"<iframe srcdoc=&quot;<img src=&amp;quot;" + u + "&amp;quot;>&quot;></iframe>\"",
         "srcdoc=\"<iframe srcdoc=&quot;<img src=&amp;quot;cid:" + id + "&amp;quot;>&quot;></iframe>\"",
         "iframe@srcdoc>img@src"},
    };
    for (const Case &c : cases) {
        for (bool cr : {false, true}) {
            CAPTURE(c.srcdoc);
            const std::string html = "<p>page</p><iframe " + c.srcdoc + "></iframe>";
            const std::string msg = std::string("From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/related; ") +
                                    "boundary=\"r\"\n\n--r\nContent-Type: text/html\n\n" + html + "\n--r--\n";
            const std::string in = cr ? crlf(msg) : msg;
            const std::string f = d.file("in.eml", in);
            auto check = mimeuri("--report=" + quote(d / "c") + " " + quote(f));
            REQUIRE(check.status == 0);
            CHECK(check.out == in);
            CHECK(read_file(d / "c").find("\"attr\":\"" + c.attr + "\",\"type\":\"image/png\",\"size\":70,\"action\":\"none\"}") !=
                  std::string::npos);
            auto run = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(f));
            REQUIRE(run.status == 0);
            CHECK(run.out.find("<iframe " + c.want + "></iframe>") != std::string::npos);
            CHECK(run.out.find("Content-ID: <" + id + ">") != std::string::npos);
            CHECK(run.out.find("data:image") == std::string::npos);
            CHECK(read_file(d / "r").find("\"attr\":\"" + c.attr + "\",\"type\":\"image/png\",\"size\":70,\"action\":\"attached\"") !=
                  std::string::npos);
        }
    }
}

TEST_CASE("--data: a data: URL a srcdoc document writes escaped is attached whole; a srcdoc on no frame is no document")
{
    TempDir d;
    // "&amp;colon;" is "&colon;" in the document, ':' in its attribute: the URL's span still
    // starts and ends on bytes of its own, and is replaced whole.
    const std::string id = png_hash() + "@example.org";
    const std::string html = "<iframe srcdoc=\"<img src=&quot;data&amp;colon;image/png;base64," + kPng + "&quot;>\"></iframe>"
                             "<div srcdoc=\"<img src=&quot;data:image/png;base64," + kPng + "&quot;>\"></div>";
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: text/html\n\n" + html + "\n";
    const std::string f = d.file("in.eml", msg);
    auto run = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(f));
    REQUIRE(run.status == 0);
    CHECK(run.out.find("<iframe srcdoc=\"<img src=&quot;cid:" + id + "&quot;>\"></iframe><div srcdoc=\"<img src=&quot;data:image/png;base64," +
                       kPng + "&quot;>\"></div>") != std::string::npos);
    const std::string rep = read_file(d / "r");
    CHECK(rep.find("\"attr\":\"iframe@srcdoc>img@src\",\"type\":\"image/png\",\"size\":70,\"action\":\"attached\"") != std::string::npos);
    CHECK(count(rep, "\"attr\":") == 1);
}

TEST_CASE("--data=attach: what mailparser resolves: CSS url() written quoted, an SVG left as data:")
{
    // Issue 48 (9): mailparser reads an unquoted url(cid:x) to its ')', and resolves cid: only
    // for image/\w+ (tests/data_readers.py runs mailparser itself on testdata/data/style.eml).
    TempDir d;
    const std::string svg = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=";
    const std::string ico = "data:image/x-icon;base64,AAABAAEAAQEAAAEAIAAwAAAAFgAAACgAAAABAAAAAgAAAAEAIAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAP8AAAAAAA==";
    const std::string u = "data:image/png;base64," + kPng;
    const std::string html = "<style>p{background:url(" + u + ")} q{background:URL( " + u + " )}</style>"
                             "<div style=\"background:url(" + u + ")\">a</div><div style='background:url(" + u + ")'>b</div>"
                             "<div style=background:url(" + u + ")>c</div><img src=\"" + svg + "\"><img src=\"" + ico + "\">";
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: text/html\n\n" + html + "\n";
    auto run = mimeuri("--data=attach --report=" + quote(d / "r") + " " + quote(d.file("in.eml", msg)));
    REQUIRE(run.status == 0);
    const std::string id = png_hash() + "@example.org";
    CHECK(run.out.find("<style>p{background:url(\"cid:" + id + "\")} q{background:URL( \"cid:" + id + "\" )}</style>") !=
          std::string::npos);
    CHECK(run.out.find("<div style=\"background:url('cid:" + id + "')\">a</div>") != std::string::npos);
    CHECK(run.out.find("<div style='background:url(\"cid:" + id + "\")'>b</div>") != std::string::npos);
    CHECK(run.out.find("<div style=\"background:url('cid:" + id + "')\">c</div>") != std::string::npos);
    CHECK(run.out.find("<img src=\"" + svg + "\">") != std::string::npos);
    CHECK(run.out.find("<img src=\"" + ico + "\">") != std::string::npos);
    CHECK(count(run.out, "Content-ID:") == 1);
    const std::string rep = read_file(d / "r");
    CHECK(count(rep, "\"reason\":\"type\"") == 2);
    CHECK(count(rep, "\"action\":\"attached\"") == 5);
}

TEST_CASE("the references pass reads srcdoc as HTML too: its cid: resolved, and inlined with the attribute's escaping")
{
    // Issue 48 (8): "as the references pass must for cid: there too".
    TempDir d;
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"r\"\n\n"
                            "--r\nContent-Type: text/html\n\n<iframe srcdoc=\"<img src=&quot;cid:pic@x&quot;>\"></iframe>\n"
                            "--r\nContent-Type: image/gif\nContent-ID: <pic@x>\n\nGIF\n--r--\n";
    const std::string f = d.file("in.eml", msg);
    auto check = mimeuri("--report=" + quote(d / "r") + " " + quote(f));
    REQUIRE(check.status == 0);
    CHECK(check.out == msg);
    CHECK(read_file(d / "r").find("\"attr\":\"iframe@srcdoc\",\"url\":\"cid:pic@x\",\"kind\":\"cid\",\"status\":\"resolved\"") !=
          std::string::npos);
    CHECK(read_file(d / "r").find("\"unreferenced\":[]") != std::string::npos);
    auto inl = mimeuri("--cid=inline " + quote(f));
    CHECK(inl.out.find("<iframe srcdoc=\"<img src=&quot;data:image/gif;base64,R0lG&quot;>\"></iframe>") != std::string::npos);
}
