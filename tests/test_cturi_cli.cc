// The ct2uri and uri2ct subcommands and the labels pass options, end to end.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>

using testing::mimeuri;
using testing::quote;

TEST_CASE("ct2uri prints the ContentType: URI of a Content-Type with quoted parameters")
{
    auto r = mimeuri("ct2uri " + quote("text/plain; charset=\"us-ascii\"; x-mac-type=\"54455854\""));
    CHECK(r.status == 0);
    CHECK(r.out == "ContentType:text/plain?charset=\"us-ascii\"&x-mac-type=\"54455854\"\n");
}

TEST_CASE("one line per argument; a failure prints an empty line, its reason, and exits 65 at the end")
{
    auto r = mimeuri("uri2ct " + quote("<http://example.com/tag42>") + " relative/path " +
                     quote("ContentType:model/vnd.example.longish.sub%23type.name"));
    CHECK(r.status == 65);
    CHECK(r.out == "application/uri.http%3A%2F%2Fexample.com%2Ftag42\n\nmodel/vnd.example.longish.sub#type.name\n");
    CHECK(r.err.find("relative/path") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("- reads one argument per line from stdin, CRLF accepted")
{
    testing::TempDir d;
    std::string in = d.file("in", "image/JPEG\r\napplication/xml; URI-body=\"http://xml.example/foo\"\n");
    auto r = mimeuri("ct2uri -", in);
    CHECK(r.status == 0);
    CHECK(r.out == "ContentType:image/jpeg\nhttp://xml.example/foo?MIME-type=\"application/xml\"\n");
}

TEST_CASE("URC tags in and out")
{
    CHECK(mimeuri("ct2uri --label-format=urc " + quote("Text/Plain; charset=ISO-8859-1")).out ==
          "/text/plain/charset:ISO-8859-1\n");
    CHECK(mimeuri("uri2ct /text/plain/charset:us-ascii").out == "text/plain; charset=\"us-ascii\"\n");
    CHECK(mimeuri("ct2uri /text/plain/charset:us-ascii").out == "ContentType:text/plain?charset=\"us-ascii\"\n");
}

TEST_CASE("decoded CR LF never reaches a header: refused with a reason")
{
    auto r = mimeuri("uri2ct " + quote("ContentType:text/plain?a=\"x%0D%0ABcc:%20victim@example.org\""));
    CHECK(r.status == 65);
    CHECK(r.out == "\n");
    CHECK(r.err.find("section 6") != std::string::npos);
}

TEST_CASE("usage errors of the subcommands and the label options")
{
    CHECK(mimeuri("ct2uri").status == 64);
    CHECK(mimeuri("uri2ct --label-format=urc x:y").status == 64);
    CHECK(mimeuri("--labels=some").status == 64);
    CHECK(mimeuri("--label-format=xml").status == 64);
    CHECK(mimeuri("--label-header=" + quote("Bad Name")).status == 64);
    auto help = mimeuri("--help");
    CHECK(help.out.find("changes the body") != std::string::npos);
    CHECK(help.out.find("default: Content-Type-URI") != std::string::npos);
}

TEST_CASE("the [labels] config group")
{
    testing::TempDir d;
    std::string conf = d.file("m.conf", "[labels]\nmode=top\nheader=X-Label\n");
    std::string msg = d.file("m.eml", "Subject: x\nContent-Type: text/plain\n\nx\n");
    auto r = mimeuri("--config=" + quote(conf) + " " + quote(msg));
    CHECK(r.status == 0);
    CHECK(r.out == "Subject: x\nContent-Type: text/plain\nX-Label: ContentType:text/plain\n\nx\n");
    // --passes=none wins over the configuration.
    CHECK(mimeuri("--config=" + quote(conf) + " --passes=none " + quote(msg)).out == testing::read_file(msg));
}

TEST_CASE("an unmappable Content-Type is reported and the part left alone")
{
    testing::TempDir d;
    std::string msg = d.file("m.eml", "Subject: x\nContent-Type: text\n\nx\n");
    auto r = mimeuri("--labels=top --check " + quote(msg));
    CHECK(r.status == 0);
    CHECK(r.out.find("\"code\":\"label\"") != std::string::npos);
    CHECK(mimeuri("--labels=top " + quote(msg)).out == testing::read_file(msg));
    CHECK(mimeuri("--labels=top --strict " + quote(msg)).status == 65);
}
