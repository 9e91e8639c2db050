// --related through the command line: check reports the parts an HTML part names outside its
// related set (or not inline) and changes nothing; repair moves them, each moved part's bytes
// the same but for its Content-Disposition line; what it must not move it leaves, saying why.
// The expected outputs are written here from RFC 2387 and RFC 2183, not copied from the
// program; tests/data_readers.py checks the results again with Python's email, mailparser
// and postal-mime.
#include "helpers.hh"
#include "related.hh"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace testing;

namespace {

std::string testdata(const std::string &name) { return std::string(MIMEURI_TESTDATA) + "/related/" + name; }

std::size_t count(const std::string &hay, const std::string &needle)
{
    std::size_t n = 0;
    for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

// The bytes of the part that holds `marker` (a header line of it): from the line after the
// delimiter line before it to the line break before the next delimiter line.
std::string part_bytes(const std::string &msg, const std::string &marker, const std::string &eol = "\n")
{
    auto at = msg.find(marker);
    REQUIRE(at != std::string::npos);
    auto delim = msg.rfind(eol + "--", at);
    REQUIRE(delim != std::string::npos);
    auto begin = msg.find(eol, delim + eol.size()) + eol.size();
    auto end = msg.find(eol + "--", at);
    REQUIRE(end != std::string::npos);
    return msg.substr(begin, end - begin);
}

std::string replaced(std::string s, const std::string &from, const std::string &to)
{
    auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("related: the raw value edits (a disposition made inline, a multipart made related)")
{
    using namespace mimeuri::related;
    CHECK(inline_disposition(" attachment; filename=\"a.png\"\n") == " inline; filename=\"a.png\"\n");
    CHECK(inline_disposition(" ATTACHMENT;\n\tfilename=a.png\n") == " inline;\n\tfilename=a.png\n");
    CHECK(inline_disposition(" attachment\n") == " inline\n");
    CHECK(inline_disposition("\n attachment (a comment)\n") == "\n inline (a comment)\n");
    CHECK(related_content_type(" multipart/mixed; boundary=\"b\"\n", "text/html") ==
          " multipart/related; boundary=\"b\"; type=\"text/html\"\n");
    CHECK(related_content_type(" Multipart/Mixed;\n\tboundary=\"b\";\n", "multipart/alternative") ==
          " Multipart/related;\n\tboundary=\"b\"; type=\"multipart/alternative\"\n");
    CHECK(related_content_type(" multipart/mixed; type=\"x\"; boundary=b\n", "text/html").empty());
    CHECK(to_lf("a\r\nb\r\n", true) == std::optional<std::string>("a\nb\n"));
    CHECK(to_lf("a\r\r\nb", true) == std::optional<std::string>("a\r\nb"));
    CHECK(!to_lf("a\nb\r\n", true));
    CHECK(to_lf("a\nb\r\n", false) == std::optional<std::string>("a\nb\r\n"));
}

TEST_CASE("--related=check reports what repair would move or mark, and changes nothing")
{
    TempDir d;
    for (const char *name : {"mixed.eml", "in_related.eml", "alternative.eml", "outside.eml"}) {
        CAPTURE(name);
        const std::string in = testdata(name);
        auto run = testing::mimeuri("--report=" + quote(d / "r") + " " + quote(in));
        REQUIRE(run.status == 0);
        CHECK(run.out == read_file(in));
        const std::string rep = read_file(d / "r");
        CHECK(rep.find("\"related\":[{") != std::string::npos);
        CHECK(rep.find("\"action\":\"moved\"") == std::string::npos);
    }
    auto run = testing::mimeuri("--report=" + quote(d / "r") + " " + quote(testdata("mixed.eml")));
    CHECK(read_file(d / "r").find("\"related\":[{\"part\":\"1\",\"url\":\"cid:logo@example.org\",\"target\":\"2\","
                                  "\"related\":null,\"outside\":true,\"disposition\":\"attachment\",\"action\":\"none\"}]") !=
          std::string::npos);
    // Off, and a message with nothing out of place: no related list at all.
    (void)testing::mimeuri("--related=off --report=" + quote(d / "r2") + " " + quote(testdata("mixed.eml")));
    CHECK(read_file(d / "r2").find("\"related\":[") == std::string::npos);
    const std::string good = d.file("good.eml", "From: a@example.org\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                                                "Content-Type: text/html\n\n<img src=\"cid:x@y\">\n--b\nContent-Type: image/png\n"
                                                "Content-Disposition: inline\nContent-ID: <x@y>\n\nPNG\n--b--\n");
    (void)testing::mimeuri("--report=" + quote(d / "r3") + " " + quote(good));
    CHECK(read_file(d / "r3").find("\"related\":[") == std::string::npos);
}

TEST_CASE("--related=repair: a multipart/mixed of the HTML and its image becomes the multipart/related")
{
    for (bool cr : {false, true}) {
        CAPTURE(cr);
        TempDir d;
        const std::string eol = cr ? "\r\n" : "\n";
        const std::string orig = cr ? crlf(read_file(testdata("mixed.eml"))) : read_file(testdata("mixed.eml"));
        const std::string in = d.file("in.eml", orig);
        auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(in));
        REQUIRE(run.status == 0);
        // RFC 2387 3.1: the type parameter names the root's type; the boundary stays, and so
        // does every byte but the type and the image's disposition.
        std::string want = replaced(orig, "multipart/mixed;" + eol + "\tboundary=\"outer\"",
                                    "multipart/related;" + eol + "\tboundary=\"outer\"; type=\"text/html\"");
        want = replaced(want, "Content-Disposition: attachment; filename=\"logo.png\"",
                        "Content-Disposition: inline; filename=\"logo.png\"");
        CHECK(run.out == want);
        CHECK(read_file(d / "r").find("\"target\":\"2\",\"related\":null,\"outside\":true,\"disposition\":\"attachment\","
                                      "\"action\":\"moved\"") != std::string::npos);
        // With nothing left to do, a second run changes nothing.
        const std::string again = d.file("again.eml", run.out);
        CHECK(testing::mimeuri("--related=repair " + quote(again)).out == run.out);
    }
}

TEST_CASE("--related=repair: an attachment disposition inside the related set is marked inline, none is given one")
{
    TempDir d;
    const std::string orig = read_file(testdata("in_related.eml"));
    auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(testdata("in_related.eml")));
    REQUIRE(run.status == 0);
    std::string want = replaced(orig, "Content-Disposition: attachment;\n filename=\"one.png\"",
                                "Content-Disposition: inline;\n filename=\"one.png\"");
    // A field added goes first in the part's header block (as in a moved part).
    want = replaced(want, "--rel\nContent-Type: image/png\nContent-ID: <two@example.org>",
                    "--rel\nContent-Disposition: inline\nContent-Type: image/png\nContent-ID: <two@example.org>");
    CHECK(run.out == want);
    const std::string rep = read_file(d / "r");
    CHECK(count(rep, "\"action\":\"marked\"") == 2);
    CHECK(rep.find("\"target\":\"3\",\"related\":\"TEXT\",\"outside\":false,\"disposition\":null,\"action\":\"marked\"") !=
          std::string::npos);
}

TEST_CASE("--related=repair: alternative and mixed: a new related set around the alternative; the real attachment stays")
{
    TempDir d;
    const std::string orig = read_file(testdata("alternative.eml"));
    auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(testdata("alternative.eml")));
    REQUIRE(run.status == 0);
    const std::string &out = run.out;
    CHECK(count(read_file(d / "r"), "\"action\":\"moved\"") == 2);
    // The message's own header and the mixed boundary stay; a related set of the alternative
    // and the two images is the mixed's first part, the PDF its second and last.
    const auto head = orig.find("--mix\n");
    CHECK(out.compare(0, head, orig, 0, head) == 0);
    const std::string lead = "--mix\nContent-Type: multipart/related; boundary=\"";
    auto rel = out.find(lead);
    REQUIRE(rel != std::string::npos);
    const auto bb = rel + lead.size();
    const std::string b = out.substr(bb, out.find('"', bb) - bb);
    CHECK(b.rfind("=_mimeuri_rel_", 0) == 0);
    CHECK(out.find("; type=\"multipart/alternative\"\n\n--" + b + "\nContent-Type: multipart/alternative; boundary=\"alt\"",
                   rel) != std::string::npos);
    CHECK(count(out, "--" + b + "\n") == 3);
    CHECK(count(out, "--" + b + "--\n") == 1);
    CHECK(count(out, "--mix\n") == 2);
    CHECK(out.find("--" + b + "--\n--mix\nContent-Type: application/pdf") != std::string::npos);
    CHECK(out.find("report.pdf\"\nContent-Transfer-Encoding: base64\n\n"
                   "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg==\n--mix--\n") != std::string::npos);
    // The alternative's bytes, and each image's but its disposition, as they were.
    const auto alt = orig.find("Content-Type: multipart/alternative");
    CHECK(out.find(orig.substr(alt, orig.find("--alt--\n") + 8 - alt)) != std::string::npos);
    CHECK(part_bytes(out, "Content-ID: <a@example.org>") ==
          "Content-Disposition: inline\n" + part_bytes(orig, "Content-ID: <a@example.org>"));
    CHECK(part_bytes(out, "Content-ID: <b@example.org>") ==
          replaced(part_bytes(orig, "Content-ID: <b@example.org>"), "attachment;", "inline;"));
}

TEST_CASE("--related=repair: a part outside the related set moves in; the real attachment stays where it was")
{
    for (bool cr : {false, true}) {
        CAPTURE(cr);
        TempDir d;
        const std::string eol = cr ? "\r\n" : "\n";
        const std::string orig = cr ? crlf(read_file(testdata("outside.eml"))) : read_file(testdata("outside.eml"));
        const std::string in = d.file("in.eml", orig);
        auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(in));
        REQUIRE(run.status == 0);
        // By hand: the image part cut from the mixed (its delimiter line with it) and put
        // before the related set's closing delimiter, marked inline.
        const std::string img = part_bytes(orig, "Content-ID: <out@example.org>", eol);
        std::string want = replaced(orig, eol + "--mix" + eol + img, "");
        want = replaced(want, "--rel--", "--rel" + eol + replaced(img, "attachment;", "inline;") + eol + "--rel--");
        CHECK(run.out == want);
        CHECK(read_file(d / "r").find("\"target\":\"2\",\"related\":\"1\",\"outside\":true,\"disposition\":\"attachment\","
                                      "\"action\":\"moved\"") != std::string::npos);
    }
}

TEST_CASE("--related=repair leaves a part two related sets name, signed content, and another message's parts")
{
    TempDir d;
    for (const char *name : {"shared.eml", "signed.eml", "rfc822.eml"}) {
        CAPTURE(name);
        auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(testdata(name)));
        REQUIRE(run.status == 0);
        CHECK(run.out == read_file(testdata(name)));
        CHECK(read_file(d / "r").find("\"action\":\"moved\"") == std::string::npos);
    }
    (void)testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(testdata("shared.eml")));
    CHECK(read_file(d / "r").find("\"part\":\"2.1\",\"url\":\"cid:s@example.org\",\"target\":\"1.2\",\"related\":\"2\","
                                  "\"outside\":true,\"disposition\":\"inline\",\"action\":\"none\",\"reason\":\"shared\"") !=
          std::string::npos);
    (void)testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(testdata("signed.eml")));
    CHECK(read_file(d / "r").find("\"action\":\"kept\",\"kept\":\"smime\"") != std::string::npos);
    // --signed=rewrite: moved as any other.
    auto rewritten = testing::mimeuri("--related=repair --signed=rewrite " + quote(testdata("signed.eml")));
    CHECK(rewritten.out.find("Content-Type: multipart/related; boundary=\"mix\"; type=\"text/html\"") != std::string::npos);
}

TEST_CASE("--related=repair never edits inside an attached message: its sets are reported, left as received")
{
    // Issue 48 (7): a forwarded message's own related set lacking an inline disposition got
    // one written into it, changing the attachment's bytes. Variations: the set to be made of a
    // mixed (nested.eml), one already a multipart/related whose image is marked attachment,
    // and one whose image sits outside it; LF and CRLF.
    TempDir d;
    const std::string in_related =
        "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"o\"\n\n--o\n"
        "Content-Type: text/plain\n\nsee below\n--o\nContent-Type: message/rfc822\n\n"
        "From: b@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"m\"\n\n--m\n"
        "Content-Type: multipart/related; boundary=\"r\"\n\n--r\nContent-Type: text/html\n\n"
        "<img src=\"cid:a@x\"><img src=\"cid:b@x\">\n--r\nContent-Type: image/gif\nContent-ID: <a@x>\n\nGIF\n--r--\n"
        "--m\nContent-Type: image/gif\nContent-Disposition: attachment\nContent-ID: <b@x>\n\nGIF2\n--m--\n\n--o--\n";
    std::vector<std::string> inputs{read_file(testdata("nested.eml")), in_related};
    for (std::size_t i = 0, n = inputs.size(); i < n; ++i) inputs.push_back(crlf(inputs[i]));
    for (const std::string &orig : inputs) {
        CAPTURE(orig);
        const std::string f = d.file("in.eml", orig);
        auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(f));
        REQUIRE(run.status == 0);
        CHECK(run.out == orig);
        const std::string rep = read_file(d / "r");
        CHECK(rep.find("\"action\":\"none\",\"reason\":\"attached-message\"") != std::string::npos);
        CHECK(rep.find("\"action\":\"moved\"") == std::string::npos);
        CHECK(rep.find("\"action\":\"marked\"") == std::string::npos);
    }
    CHECK(testing::mimeuri("--report=" + quote(d / "r") + " " + quote(testdata("nested.eml"))).status == 0);
    CHECK(read_file(d / "r").find("\"part\":\"2.1\",\"url\":\"cid:n@example.org\",\"target\":\"2.2\"") != std::string::npos);
}

TEST_CASE("--related's report is the same with --jobs")
{
    TempDir d;
    std::string mbox;
    for (const char *name : {"mixed.eml", "alternative.eml", "outside.eml", "shared.eml"})
        mbox += "From x\n" + read_file(testdata(name)) + "\n";
    const std::string f = d.file("in.mbox", mbox);
    auto one = testing::mimeuri("--related=repair --report=" + quote(d / "r1") + " " + quote(f));
    auto two = testing::mimeuri("--related=repair --jobs=2 --report=" + quote(d / "r2") + " " + quote(f));
    REQUIRE(one.status == 0);
    CHECK(one.out == two.out);
    CHECK(read_file(d / "r1") == read_file(d / "r2"));
    CHECK(count(read_file(d / "r1"), "\"action\":\"moved\"") == 4);
}

TEST_CASE("--related=repair after --data=attach in one run: a part the data pass made a related set is left, said edited")
{
    TempDir d;
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"m\"\n\n"
                            "--m\nContent-Type: text/html\n\n<img src=\"data:image/png;base64," + png +
                            "\"><img src=\"cid:x@example.org\">\n--m\nContent-Type: image/gif\n"
                            "Content-Disposition: attachment\nContent-ID: <x@example.org>\n\nGIF\n--m--\n";
    const std::string f = d.file("both.eml", msg);
    auto both = testing::mimeuri("--data=attach --related=repair --report=" + quote(d / "r") + " " + quote(f));
    REQUIRE(both.status == 0);
    const std::string rep = read_file(d / "r");
    CHECK(rep.find("\"action\":\"attached\"") != std::string::npos);
    CHECK(rep.find("\"target\":\"2\",\"related\":null,\"outside\":true,\"disposition\":\"attachment\",\"action\":\"none\","
                   "\"reason\":\"edited\"") != std::string::npos);
    // The mixed is still the mixed, the image still where it was; a second run moves it.
    CHECK(both.out.find("Content-Type: multipart/mixed; boundary=\"m\"") != std::string::npos);
    const std::string again = d.file("again.eml", both.out);
    auto second = testing::mimeuri("--related=repair --report=" + quote(d / "r2") + " " + quote(again));
    CHECK(read_file(d / "r2").find("\"action\":\"moved\"") != std::string::npos);
    CHECK(second.out.find("Content-Disposition: inline\nContent-ID: <x@example.org>") != std::string::npos);
}

TEST_CASE("--related=repair: a mixed of the HTML and one image is not retyped when another image it names sits elsewhere")
{
    TempDir d;
    const std::string msg = "From: a@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"out\"\n\n"
                            "--out\nContent-Type: multipart/mixed; boundary=\"in\"\n\n"
                            "--in\nContent-Type: text/html\n\n<img src=\"cid:one@x\"><img src=\"cid:two@x\">\n"
                            "--in\nContent-Type: image/gif\nContent-ID: <one@x>\n\nGIF1\n--in--\n"
                            "--out\nContent-Type: image/gif\nContent-ID: <two@x>\n\nGIF2\n--out--\n";
    const std::string f = d.file("split.eml", msg);
    auto run = testing::mimeuri("--related=repair --report=" + quote(d / "r") + " " + quote(f));
    REQUIRE(run.status == 0);
    CHECK(count(read_file(d / "r"), "\"action\":\"moved\"") == 2);
    const std::string &out = run.out;
    // Both mixed types stay; a new related set in the inner one holds the HTML and both images.
    CHECK(out.find("Content-Type: multipart/mixed; boundary=\"in\"\n") != std::string::npos);
    const auto rel = out.find("Content-Type: multipart/related; boundary=\"=_mimeuri_rel_");
    REQUIRE(rel != std::string::npos);
    const auto in_close = out.find("--in--");
    CHECK(rel < out.find("Content-ID: <one@x>"));
    CHECK(out.find("Content-ID: <two@x>") < in_close);
    CHECK(out.find("--out\n", rel) == std::string::npos); // the outer mixed holds one part now
    CHECK(count(out, "Content-Disposition: inline\n") == 2);
}

// The summary field (--summary-header) is written after every pass: what --related moved or
// marked and what --data attached are counted there, as the report lists them; with neither,
// the field is as it always was (the golden cases hold that).
TEST_CASE("--summary-header counts the parts --related moved and the data: images --data attached")
{
    TempDir d;
    auto run = testing::mimeuri("--related=repair --summary-header --report=" + quote(d / "r") + " " + quote(testdata("alternative.eml")));
    REQUIRE(run.status == 0);
    const std::string report = read_file(d / "r");
    const auto moved = count(report, "\"action\":\"moved\""), marked = count(report, "\"action\":\"marked\"");
    REQUIRE(moved == 2);
    std::string want = "Mimeuri-Refs: resolved=2 dangling=0 ambiguous=0 moved=2";
    if (marked) want += " marked=" + std::to_string(marked);
    CHECK(run.out.find(want + "\n") != std::string::npos);
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string in = d.file("data.eml", "From: a@example.org\nSubject: d\nMIME-Version: 1.0\nContent-Type: text/html\n\n"
                                              "<p><img src=\"data:image/png;base64," + png + "\"><img src=\"data:image/png;base64," + png +
                                              "\"></p>\n");
    run = testing::mimeuri("--data=attach --summary-header --report=" + quote(d / "r2") + " " + quote(in));
    REQUIRE(run.status == 0);
    REQUIRE(count(read_file(d / "r2"), "\"action\":\"attached\"") == 2); // two references, one part
    CHECK(run.out.find("Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0 attached=2\n") != std::string::npos);
    run = testing::mimeuri("--summary-header " + quote(in));
    CHECK(run.out.find("Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0\n") != std::string::npos);
}
