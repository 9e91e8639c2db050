#include "html_refs.hh"

#include <doctest/doctest.h>

#include <chrono>

using namespace mimeuri::html;

namespace {

std::vector<std::string> urls(const std::string &html)
{
    auto s = find_refs(html, 1000000);
    REQUIRE(s.ok());
    std::vector<std::string> out;
    for (const auto &r : s->refs) out.push_back(r.url);
    return out;
}

// Replaces every reference equal to `from` by `to`.
std::string replace(const std::string &html, const std::string &from, const std::string &to)
{
    auto s = find_refs(html, 1000000);
    REQUIRE(s.ok());
    std::vector<Replacement> reps;
    for (std::size_t i = 0; i < s->refs.size(); ++i)
        if (s->refs[i].url == from) reps.push_back({i, to});
    return rewrite(html, *s, reps);
}

using V = std::vector<std::string>;

} // namespace

TEST_CASE("URL attributes, srcset candidates, SVG href and xlink:href, base")
{
    CHECK(urls("<img src=\"cid:a\" lowsrc='cid:b' longdesc=cid:c><a href=\" cid:d \">x</a>") == V{"cid:a", "cid:b", "cid:c", "cid:d"});
    CHECK(urls("<body background=cid:bg><video poster=\"cid:p\"><object data=\"cid:o\"></object><form action=\"cid:f\">") ==
          V{"cid:bg", "cid:p", "cid:o", "cid:f"});
    CHECK(urls("<img srcset=\"cid:s1 1x, cid:s2 2x,cid:s3\">") == V{"cid:s1", "cid:s2", "cid:s3"});
    CHECK(urls("<svg><image href=\"cid:h\"/><use xlink:href=\"cid:x\"/></svg>") == V{"cid:h", "cid:x"});
    auto s = find_refs("<head><base href=\" http://example.org/dir/ \"></head><img src=a.png>", 10);
    REQUIRE(s.ok());
    CHECK(s->base_href.value() == "http://example.org/dir/");
    CHECK(s->refs.size() == 1);
    // Not references: other attributes, text, comments, scripts.
    CHECK(urls("<p title=\"cid:no\">cid:no</p><!-- <img src=cid:no> --><script>x='<img src=cid:no>'</script>").empty());
}

TEST_CASE("character references are decoded; a prefix is never a match")
{
    CHECK(urls("<img src=\"cid:a&amp;b\"><img src=\"&#99;id:img1\">") == V{"cid:a&b", "cid:img1"});
    CHECK(urls("<img src=\"cid:img10\">") == V{"cid:img10"});
}

TEST_CASE("CSS: url() quoted and unquoted, escapes, comments, @import, in style attributes and elements")
{
    CHECK(urls("<div style=\"background: url(cid:a) no-repeat; list-style: URL( 'cid:b' )\">") == V{"cid:a", "cid:b"});
    CHECK(urls("<style>/* url(cid:no) */ p { background:url(\"cid:c\") } "
               "q { background: url(cid\\:d) } @import 'cid:e'; @import url(cid:f); s{content:\"url(cid:no)\"}</style>") ==
          V{"cid:c", "cid:d", "cid:e", "cid:f"});
    CHECK(urls("<style>a{b:url(c\\69 d:x)}</style>") == V{"cid:x"});
    CHECK(urls("<div style=\"background:url(&quot;cid:q&quot;)\">") == V{"cid:q"});
    // Not a url(): a function whose name ends in url.
    CHECK(urls("<style>a{b:myurl(cid:no)}</style>").empty());
}

TEST_CASE("rewrite touches only the reference's bytes")
{
    std::string html = "<!DOCTYPE html>\n<P CLASS=x><IMG SRC=\"cid:old\"  ALT='a'>  <img src=\"cid:keep\"></P>\n";
    CHECK(replace(html, "cid:old", "cid:new@example.org") ==
          "<!DOCTYPE html>\n<P CLASS=x><IMG SRC=\"cid:new@example.org\"  ALT='a'>  <img src=\"cid:keep\"></P>\n");
    // srcset: one candidate of several.
    CHECK(replace("<img srcset=\"cid:a 1x, cid:b 2x\">", "cid:b", "cid:c") == "<img srcset=\"cid:a 1x, cid:c 2x\">");
    // <style> text and a style attribute.
    CHECK(replace("<style>p{background:url(cid:a)}</style>", "cid:a", "data:image/png;base64,AAAA") ==
          "<style>p{background:url(data:image/png;base64,AAAA)}</style>");
    CHECK(replace("<p style='background:url(\"cid:a\")'>", "cid:a", "x y") == "<p style='background:url(\"x y\")'>");
    // An unquoted CSS url that must become quoted.
    CHECK(replace("<style>p{background:url(cid:a)}</style>", "cid:a", "a b") == "<style>p{background:url(\"a b\")}</style>");
}

TEST_CASE("rewrite quotes or re-escapes a value where it must")
{
    // Unquoted attribute: a data: URI holds "=", so the value gets quotes.
    CHECK(replace("<img src=cid:a alt=x>", "cid:a", "data:,a=b") == "<img src=\"data:,a=b\" alt=x>");
    // A value written with character references is rewritten whole, escaped.
    CHECK(replace("<a href=\"cid:a&amp;b\">", "cid:a&b", "cid:c&d") == "<a href=\"cid:c&amp;d\">");
    CHECK(replace("<a href='cid:a'>", "cid:a", "x'y") == "<a href='x&#39;y'>");
}

TEST_CASE("hostile HTML: unterminated tags and comments, NUL bytes, invalid UTF-8, misnesting")
{
    static const char nul[] = "<img src=\"cid:a\"><p><b><i>x</p>y<img src=\"cid:b\"\0 >";
    CHECK(urls(std::string(nul, sizeof nul - 1)) == V{"cid:a", "cid:b"});
    CHECK(urls("<img src=\"cid:\xff\xfe\">") == V{"cid:\xef\xbf\xbd\xef\xbf\xbd"});
    CHECK(urls("<!-- never closed <img src=cid:no>").empty());
    CHECK(urls("<img src=\"cid:a").empty()); // EOF in a tag: gumbo drops the tag
    // Adoption agency clones formatting elements: a reference is reported once.
    CHECK(urls("<a href=\"cid:a\"><p>x</a>y</p>").size() == 1);
    auto s = find_refs("<img src=cid:1><img src=cid:2><img src=cid:3>", 2);
    REQUIRE(s.ok());
    CHECK(s->refs.size() == 2);
    CHECK(s->truncated);
}

TEST_CASE("100,000 references in 10 MB are found in bounded time")
{
    std::string html = "<html><body>";
    for (int i = 0; i < 100000; ++i) html += "<img src=\"cid:img" + std::to_string(i) + "@example.org\" alt=\"" + std::string(50, 'x') + "\">\n";
    while (html.size() < 10u << 20) html += "<p>" + std::string(1000, 'y') + "</p>\n";
    auto t0 = std::chrono::steady_clock::now();
    auto s = find_refs(html, 1000000);
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(s.ok());
    CHECK(s->refs.size() == 100000);
    CHECK(s->refs[99999].url == "cid:img99999@example.org");
    MESSAGE("10 MB, 100,000 references: " << secs << " s");
}
