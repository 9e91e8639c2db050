// --data through the command line: check reports each data: URI and changes nothing;
// attach changes only what it says; signed content is kept; the report crosses --jobs.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <string>

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
    CHECK(count(read_file(d / "r1"), "\"action\":\"attached\"") == 5);
}
