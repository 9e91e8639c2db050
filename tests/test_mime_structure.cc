// The independent MIME structure reader the fuzzers check mimeuri's output with.
#include "helpers.hh"
#include "mime_structure.hh"

#include <doctest/doctest.h>

#include <string>

using namespace mimestructure;

namespace {

using testing::crlf;

std::string body(const std::string &msg, const Entity &e) { return msg.substr(e.body_begin, e.body_end - e.body_begin); }

const std::string nested = "From: a@x\n"
                           "MIME-Version: 1.0\n"
                           "Content-Type: multipart/mixed;\n"
                           "\tboundary=\"outer\"\n"
                           "\n"
                           "This is the preamble.\n"
                           "--outer\n"
                           "Content-Type: multipart/related; boundary=inner (a comment)\n"
                           "\n"
                           "--inner\n"
                           "Content-Type: TEXT/HTML; charset=us-ascii\n"
                           "\n"
                           "<p>hi</p>\n"
                           "--inner\n"
                           "Content-Type: image/png\n"
                           "Content-Transfer-Encoding: base64\n"
                           "\n"
                           "iVBORw0K\n"
                           "--inner--\n"
                           "inner epilogue\n"
                           "--outer\n"
                           "Content-Type: message/rfc822\n"
                           "\n"
                           "Subject: inside\n"
                           "Content-Type: text/plain\n"
                           "\n"
                           "inner body\n"
                           "--outer--\n"
                           "epilogue\n";

} // namespace

TEST_CASE("mime_structure: nested multiparts and message/rfc822, LF and CRLF")
{
    for (const std::string &msg : {nested, crlf(nested)}) {
        Entity t = read(msg);
        CHECK(t.type == "multipart/mixed");
        CHECK(t.boundary == "outer");
        CHECK(t.multipart);
        CHECK(t.closed);
        REQUIRE(t.children.size() == 2);
        const Entity &rel = t.children[0];
        CHECK(rel.type == "multipart/related");
        CHECK(rel.boundary == "inner");
        REQUIRE(rel.children.size() == 2);
        CHECK(rel.children[0].type == "text/html");
        CHECK(body(msg, rel.children[0]) == "<p>hi</p>");
        CHECK(rel.children[1].type == "image/png");
        CHECK(body(msg, rel.children[1]) == "iVBORw0K");
        const Entity &mp = t.children[1];
        CHECK(mp.type == "message/rfc822");
        CHECK(mp.message);
        REQUIRE(mp.children.size() == 1);
        CHECK(mp.children[0].type == "text/plain");
        CHECK(body(msg, mp.children[0]) == "inner body");
        CHECK(mp.children[0].fields.size() == 2);
        CHECK(bad_header_lines(t).empty());
        CHECK(t.fields.size() == 3);
        CHECK(compare(t, t).empty());
    }
    // The same tree either way; line ends are not structure.
    CHECK(compare(read(nested), read(crlf(nested))).empty());
}

TEST_CASE("mime_structure: delimiters need a line of their own; padding; prefixes")
{
    std::string msg = "Content-Type: multipart/mixed; boundary=b\n"
                      "\n"
                      "--b \t\n"                     // transport padding
                      "\n"
                      "one --b\n"                    // not at a line start
                      "--bc\n"                       // another boundary this one is a prefix of
                      "--b-\n"                       // neither
                      "--b\r\n"                      // CRLF line end in an LF message
                      "Content-Type: text/html\n"
                      "\n"
                      "two\n"
                      "--b--  \n"
                      "--b\n"                        // in the epilogue: ignored
                      "after\n";
    Entity t = read(msg);
    REQUIRE(t.children.size() == 2);
    CHECK(t.closed);
    CHECK(body(msg, t.children[0]) == "one --b\n--bc\n--b-");
    CHECK(t.children[0].type == "text/plain");
    CHECK(t.children[1].type == "text/html");
    CHECK(body(msg, t.children[1]) == "two");

    // A delimiter injected by an edit is a new part; an early close delimiter ends it.
    std::string more = msg;
    more.replace(more.find("two"), 3, "t\n--b\n\nwo");
    CHECK(compare(t, read(more)).find("3 children") != std::string::npos);
    std::string cut = msg;
    cut.replace(cut.find("one"), 3, "o\n--b--\n");
    CHECK(!compare(t, read(cut)).empty());
}

TEST_CASE("mime_structure: no close delimiter, preamble only, no boundary, digest")
{
    Entity open = read("Content-Type: multipart/alternative; boundary=\"x y\"\n\npre\n--x y\n\nlast");
    CHECK(!open.closed);
    REQUIRE(open.children.size() == 1);
    CHECK(open.children[0].body_begin == open.children[0].body_end - 4);
    Entity none = read("Content-Type: multipart/mixed; boundary=x\n\njust a preamble\n");
    CHECK(none.children.empty());
    Entity nob = read("Content-Type: multipart/mixed\n\n--x\n\na\n");
    CHECK(nob.leaf());
    Entity dig = read("Content-Type: multipart/digest; boundary=d\n\n--d\n\nSubject: s\n\nb\n--d--\n");
    REQUIRE(dig.children.size() == 1);
    CHECK(dig.children[0].type == "message/rfc822");
    CHECK(dig.children[0].children.size() == 1);
    // The last Content-Type field counts (as in GMime).
    CHECK(read("Content-Type: text/html\nContent-Type: image/gif\n\n").type == "image/gif");
}

TEST_CASE("mime_structure: header lines")
{
    std::string msg = "Subject: a\n"
                      " folded\n"
                      "X-Empty:\n"
                      "no colon here\n"
                      "Content-ID: <a\n"
                      " \n"          // white space only
                      "X-CR: a\rb\n" // bare CR
                      "\n"
                      "body\n";
    Entity t = read(msg);
    CHECK(t.fields.size() == 5);
    CHECK(msg.substr(t.fields[0].begin, t.fields[0].end - t.fields[0].begin) == "Subject: a\n folded");
    auto bad = bad_header_lines(t);
    REQUIRE(bad.size() == 3);
    CHECK(bad[0].text == "no colon here");
    CHECK(bad[1].text == " ");
    CHECK(bad[2].text == "X-CR: a\rb");
    CHECK(body(msg, t) == "body\n");

    // A header block running to the end of the input with no line end.
    Entity eof = read("Subject: x\nX-Last: y");
    CHECK(eof.fields.size() == 2);
    CHECK(eof.body_begin == eof.body_end);
    CHECK(bad_header_lines(eof).empty());
    // A CR last in the input ends the line as CRLF would; a CR inside a line is bare.
    Entity cr = read("Subject: x\rDate: y\r");
    REQUIRE(cr.fields.size() == 1);
    CHECK(cr.fields[0].end == 18);
    REQUIRE(cr.bad_lines.size() == 1);
    CHECK(cr.bad_lines[0].text == "Subject: x\rDate: y");
    CHECK(!read(std::string("Subject: x\nA: \0\n\n", 17)).bad_lines.empty());

    // RFC 5322 4.5.8: white space between a field's name and its ':' (obs-optional), as
    // GMime, Dovecot and Python read it; fuzz_filter took "Content-Type :" for no field and
    // a pass that wrote the field back as "Content-Type:" for a change of structure.
    Entity obs = read("Content-Type \t:multipart/mixed; boundary=b\n\n--b\n\nx\n--b--\n");
    REQUIRE(obs.fields.size() == 1);
    CHECK(obs.fields[0].valid);
    CHECK(obs.fields[0].name == "Content-Type");
    CHECK(obs.type == "multipart/mixed");
    CHECK(obs.children.size() == 1);
}

TEST_CASE("mime_structure: limits")
{
    std::string deep;
    for (int i = 0; i < 100; ++i) deep += "Content-Type: message/rfc822\n\n";
    Entity t = read(deep, Limits{10, 100});
    std::vector<const Entity *> all;
    flatten(t, all);
    CHECK(all.size() == 11);
    CHECK(all.back()->truncated);

    std::string many = "Content-Type: multipart/mixed; boundary=b\n\n";
    for (int i = 0; i < 500; ++i) many += "--b\n\nx\n";
    Entity w = read(many, Limits{10, 50});
    CHECK(w.truncated);
    CHECK(w.children.size() < 50);
}
