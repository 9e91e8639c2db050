// html::sanitize (the pages --cid=extract writes), the archive's threads and page names.
// The browser is the oracle for what runs (tests/browser/hostile_suite.py); here: what the
// sanitiser keeps and drops, and that its output reads the same when parsed again (a page
// sanitised twice is the page sanitised once: no second reading finds a new tag).
#include "archive_contents.hh"
#include "html_sanitize.hh"
#include "helpers.hh"
#include "folder_plan.hh"
#include "sanitize_check.hh"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

using namespace mimeuri;
using namespace std::literals;

namespace {

std::string clean(const std::string &html, html::SanitizeCounts *counts = nullptr, bool remote = false)
{
    html::SanitizeOptions o;
    o.allow_remote_images = remote;
    auto r = html::sanitize(html, o);
    REQUIRE(r);
    if (counts) *counts = r->removed;
    return r->html;
}

bool has(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

std::string lower(std::string s)
{
    for (char &c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
}

} // namespace

TEST_CASE("url_scheme: as WHATWG URL parsing reads it")
{
    CHECK(html::url_scheme("javascript:x") == "javascript");
    CHECK(html::url_scheme("JaVaScRiPt:x") == "javascript");
    CHECK(html::url_scheme(" \x01\x1f javascript:x") == "javascript"); // leading C0 and space stripped
    CHECK(html::url_scheme("jav\tas\ncr\ript:x") == "javascript");      // tab, LF, CR removed
    CHECK(html::url_scheme("java\x00script:x") == "");                 // NUL is not removed
    CHECK(html::url_scheme("java script:x") == "");
    CHECK(html::url_scheme("logo.png") == "");
    CHECK(html::url_scheme("a/b:c") == "");
    CHECK(html::is_script_url("vbscript:msgbox"));
    CHECK_FALSE(html::is_script_url("http://x/javascript:"));
    CHECK(html::is_remote_url("http://x/a.png"));
    CHECK(html::is_remote_url(" //x/a.png"));
    CHECK(html::is_remote_url("/\t/x/a.png"));
    CHECK_FALSE(html::is_remote_url("data:image/png;base64,AA"));
    CHECK_FALSE(html::is_remote_url("logo.png"));
    CHECK_FALSE(html::is_remote_url("../3/index.html"));
}

TEST_CASE("sanitize: script elements, handlers and script URLs in every spelling are taken out")
{
    struct Case {
        std::string_view html;
        const char *gone; // must not be in the output (lower case)
    } cases[] = {
        {"<script>x=1</script><p>kept</p>", "<script"},
        {"<ScRiPt>x=1</sCrIpT><p>kept</p>", "script"},
        {"<p>kept</p><ScRiPt SRC=http://e/x.js></sCrIpT>", "script"},
        {"<scr<script>ipt>x=1</script><p>kept</p>", "<script"},
        {"<svg><script>x=1</script></svg><p>kept</p>", "<script"},
        {"<p>kept</p><math><mtext><table><mglyph><style><img src=x onerror=x=1>", "onerror"},
        {"<svg></p><style><a id=\"</style><img src=1 onerror=x=1>\"><p>kept</p>", "<img"},
        {"<noscript><p title=\"</noscript><img src=x onerror=x=1>\"></noscript><p>kept</p>", "<img"},
        {"<img src=x OnErRoR=x=1><p>kept</p>", "onerror"},
        {"<a href=\"jav&#x09;ascript:x=1\">kept</a>", "ascript"},
        {"<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;x\">kept</a>", "script"},
        {"<a href=\"&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;x\">kept</a>", "script"},
        {"<a href=\" &#1;javascript:x\">kept</a>", "javascript"},
        {"<a href=\"java&NewLine;script:x\">kept</a>", "script:"},
        {"<a href=\"javascript&colon;x\">kept</a>", "javascript"},
        {"<a href=\"VBScript:x\">kept</a>", "vbscript"},
        {"<svg><a xlink:href=\"javascript:x\"><text>kept</text></a></svg>", "javascript"},
        {"<svg><animate attributeName=href values=\"javascript:x\"/></svg><p>kept</p>", "javascript"},
        {"<iframe srcdoc=\"<script>x</script>\"></iframe><p>kept</p>", "srcdoc"},
        {"<iframe src=http://e/></iframe><object data=x></object><embed src=x><p>kept</p>", "http"},
        {"<meta http-equiv=refresh content=\"0;url=http://e/\"><p>kept</p>", "refresh"},
        {"<base href=http://e/><p>kept</p>", "<base"},
        {"<form action=http://e/f><button formaction=http://e/b>kept</button></form>", "action"},
        {"<template><img src=x onerror=x></template><p>kept</p>", "onerror"},
        {"<a href=\"data:text/html,<script>x</script>\">kept</a>", "data:"},
        {"<link rel=dns-prefetch href=//e><link rel=stylesheet href=http://e/s.css><p>kept</p>", "//e"},
        {"<a href=\"java\0script:x\" hr\0ef=javascript:y t\0=\"&#0;javascript:z\">kept</a>"sv, "javascript"},
        {"<a href=\" \t j\na\tv\ra&#10;script:x\">kept</a><a href=\"\x01\x02javascript:y\">kept</a>", "script:"},
        {"<a href=javascript&#x3a;x>kept</a><a href=&#x6a;avascript:y>kept</a>", "script:"},
        {"<svg><script href=\"data:,x\"/><p>kept</p>", "<script"},
        {"<svg><foreignObject><iframe src=javascript:x></iframe></foreignObject></svg><p>kept</p>", "javascript"},
        {"<svg><set attributeName=onmouseover to=x /><a><text>kept</text></a></svg>", "onmouseover"},
        {"<math><maction actiontype=statusline xlink:href=javascript:x>y</maction></math><p>kept</p>", "javascript"},
        {"<svg><style><img src=x onerror=x></style></svg><p>kept</p>", "onerror"},
        {"<svg><![CDATA[</svg><img src=x onerror=x>]]></svg><p>kept</p>", "<img"},
        {"<plaintext><script>x</script>kept", "<script"},
        {"<xmp><img src=x onerror=x></xmp><p>kept</p>", "<img"},
        {"<textarea></textarea><img src=x onerror=x>kept</textarea>", "onerror"},
        {"<!--<script>--><p>kept</p><!-- --!><script>x</script>", "<script"},
        {"<p>kept</p><SCRIPT/xss SRC=http://e/x.js></SCRIPT>", "script"},
        {"<body onload=x><p>kept</p>", "onload"},
        {"<a href=\"  vbscript:msgbox\">kept</a><img dynsrc=javascript:x lowsrc=javascript:y>", "script:"},
        {"<object data=\"javascript:x\"><param name=src value=javascript:y><p>kept</p></object><p>kept</p>", "javascript"},
    };
    for (const Case &c : cases) {
        const std::string input(c.html);
        CAPTURE(input);
        html::SanitizeCounts n;
        const std::string out = clean(input, &n);
        CAPTURE(out);
        CHECK_FALSE(has(lower(out), c.gone));
        CHECK(testing::active_content(out) == "");
        CHECK(has(out, "kept"));
        CHECK(clean(out, &n) == out); // read again, the same: nothing new appears
        CHECK(n.total() == 0);
    }
}

// Inputs put together from the pieces an attack spells things with (a deterministic stream,
// 3,000 of them): whatever the tokenizer makes of them, gumbo's tree of the output holds
// nothing active, and a second pass changes nothing.
TEST_CASE("sanitize: gumbo finds nothing active in the output of made-up hostile markup")
{
    const std::string_view pieces[] = {
        "<", ">", "</", "/>", "<!--", "-->", "--!>", "<!", "<![CDATA[", "]]>", "<?", "\"", "'", "=", " ", "\t", "\n", "\0"sv,
        "&", "&#", "&#x6a;", "&#106", "&colon;", "&Tab;", "&NewLine;", "&lt;", "&amp;", ";", "java", "script", ":",
        "javascript:x", "JaVa\tScRiPt:x", "vbscript:x", "data:text/html,x", "http://e/x", "//e/x",
        "<script>", "</script>", "<svg>", "</svg>", "<math>", "</math>", "<mtext>", "<mglyph>", "<style>", "</style>",
        "<noscript>", "</noscript>", "<template>", "</template>", "<iframe", "</iframe>", "<object", "<embed",
        "<textarea>", "</textarea>", "<title>", "</title>", "<xmp>", "</xmp>", "<plaintext>", "<select>", "<table>",
        "<td>", "<p>", "</p>", "<img", "<a", "<form", "<base", "<meta", "<link", "<foreignObject>", "<desc>",
        "<animate", "<set", "<use", "<image", "<font color=red>", " src=", " href=", " xlink:href=", " onerror=",
        " OnLoad=", " srcdoc=", " action=", " formaction=", " http-equiv=refresh", " rel=stylesheet", " background=",
        " srcset=", " style=", "x", "<div>", "</div>", "<body bgcolor=red>", "<frameset>", "<noframes>", "<noembed>"};
    constexpr std::size_t n_pieces = sizeof pieces / sizeof pieces[0];
    std::uint32_t state = 12345;
    auto next = [&] { return state = state * 1103515245u + 12345u, state >> 8; };
    for (int round = 0; round < 3000; ++round) {
        std::string html;
        const std::size_t count = 4 + next() % 40;
        for (std::size_t k = 0; k < count; ++k) html += pieces[next() % n_pieces];
        CAPTURE(html);
        const std::string out = clean(html);
        CAPTURE(out);
        const std::string found = testing::active_content(out);
        CHECK(found == "");
        if (!found.empty()) break;
        const std::string again = clean(out);
        CHECK(again == out);
        if (again != out) break;
    }
}

// Found by fuzz_html_sanitize: values whose bytes gumbo's input stream changes once they are
// written beside a reference, and an element whose end tag the text's end cuts.
TEST_CASE("sanitize: a second pass changes nothing")
{
    const std::string inputs[] = {
        "<<a href=<for\xff\xff>",                        // 8-bit bytes that are not UTF-8, beside a '<'
        "<a href=im&#x3x3a<>",                            // a control from a reference
        "<a href=im&#xd;x title='a\r\nb'>x</a>",         // a CR from a reference, a CR LF
        "<img src='http://e/\xdd\xdd\"'>",                // the remote image's alt text
        "<style>p{}</style  ",                            // an end tag cut by the text's end
        "<textarea>a",                                    // no end tag at all
        "<img src=http://e/x.png title=t>",               // the image's own title stays, alone
    };
    for (const std::string &html : inputs) {
        CAPTURE(html);
        const std::string out = clean(html);
        CAPTURE(out);
        CHECK(clean(out) == out);
        CHECK(testing::active_content(out) == "");
    }
}

TEST_CASE("sanitize: SVG nested deeper than the open elements it keeps loses the deeper tags, not their text")
{
    std::string html = "<svg>";
    for (int k = 0; k < 2000; ++k) html += "<g>";
    html += "<text>kept</text>";
    const std::string out = clean(html);
    std::size_t tags = 0;
    for (std::size_t at = out.find("<g>"); at != std::string::npos; at = out.find("<g>", at + 1)) ++tags;
    CHECK(tags == 511); // <svg> and 511 <g>: 512 open
    CHECK(has(out, "kept"));
    CHECK(testing::active_content(out) == "");
    CHECK(clean(out) == out);
}

TEST_CASE("sanitize: what the mail shows is kept, forms become inert")
{
    html::SanitizeCounts n;
    const std::string out = clean("<html><head><style>p{color:red}</style></head><body bgcolor=white>"
                                  "<p style=\"color:blue\" title='a \"q\" &amp; b'>text &lt;x&gt;</p>"
                                  "<img src=\"logo.png\" alt=logo><a href=\"https://example.org/?a=1&amp;b=2\">web</a>"
                                  "<a href=\"../3/index.html\">page</a><pre>\n\nfirst</pre>"
                                  "<form><input name=q></form></body></html>",
                                  &n);
    CHECK(has(out, "<style>p{color:red}</style>"));
    CHECK(has(out, "<p style=\"color:blue\" title=\"a &quot;q&quot; &amp; b\">text &lt;x&gt;</p>"));
    CHECK(has(out, "<img src=\"logo.png\" alt=\"logo\">"));
    CHECK(has(out, "href=\"https://example.org/?a=1&amp;b=2\""));
    CHECK(has(out, "<a href=\"../3/index.html\">page</a>"));
    CHECK(has(out, "<pre>\n\nfirst</pre>")); // a leading newline survives a second reading
    CHECK(has(out, "<div><input name=\"q\"></div>"));
    CHECK(n.forms == 1);
    CHECK(clean(out) == out);
}

TEST_CASE("sanitize: remote images are not loaded unless allowed; the URL is shown")
{
    html::SanitizeCounts n;
    const std::string html = "<img src=\"http://track.example/p.gif\" alt=x><img srcset=\"http://e/a.png 1x\">"
                             "<table><tr><td background=\"https://e/bg.png\">c</td></tr></table><img src=\"data:image/png;base64,AA\">";
    std::string out = clean(html, &n);
    CHECK_FALSE(has(out, "src=\"http"));
    CHECK_FALSE(has(out, "srcset"));
    CHECK_FALSE(has(out, "background="));
    CHECK(has(out, "alt=\"[remote image not loaded: http://track.example/p.gif]\""));
    CHECK(has(out, "src=\"data:image/png;base64,AA\""));
    CHECK(n.remote == 3);
    // A URL ending in ',' has no descriptors: the next candidate follows it (HTML 4.8.4.3.10).
    CHECK_FALSE(has(clean("<img srcset=\"a.png,\thttp://e/b.png\">"), "srcset"));
    out = clean(html, &n, true);
    CHECK(has(out, "src=\"http://track.example/p.gif\""));
    CHECK(n.remote == 0);
}

TEST_CASE("report: each sanitised page says what was taken out of it")
{
    testing::TempDir d;
    const std::string eml = d / "in.eml", dir = d / "out", report = d / "r.jsonl";
    testing::write_file(eml, "From: a@example.org\r\nSubject: s\r\nMessage-ID: <m@example.org>\r\n"
                             "MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                             "<script>x</script><img src=x.png onerror=y><a href=\"java&#x09;script:z\">a</a>"
                             "<iframe src=q></iframe><form action=http://e/f></form><img src=\"http://e/p.gif\">\r\n");
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + testing::quote(dir) + " --report=" + testing::quote(report) + " " +
                              testing::quote(eml));
    REQUIRE(r.status == 0);
    const std::string line = testing::read_file(report);
    // Counted by hand from the HTML above: the form is one (made a <div>), its action another.
    CHECK(has(line, "\"pages\":[{\"part\":\"1\",\"file\":\"index.html\",\"removed\":{\"scripts\":1,\"handlers\":1,"
                    "\"urls\":1,\"refresh\":0,\"base\":0,\"frames\":1,\"forms\":2,\"remote\":1}}]"));
    // Without --cid=extract there are no pages, and no "pages" member.
    r = testing::mimeuri("--check " + testing::quote(eml));
    CHECK_FALSE(has(r.out, "\"pages\""));
}

TEST_CASE("choose_name: a page's name is never assumed free")
{
    std::set<std::string> used{"index.html", "part-2.html", "part-2-2.html"};
    CHECK(refs::choose_name(used, "part-2.html") == "part-2-3.html");
    CHECK(refs::choose_name(used, "part-2.html") == "part-2-4.html");
    CHECK(refs::choose_name(used, "part-3.html") == "part-3.html");
    CHECK(used.count("part-3.html"));
}

TEST_CASE("thread_archive: References, then In-Reply-To; a missing parent starts a thread; newest thread first")
{
    auto entry = [](std::size_t folder, long long epoch, std::string id, std::vector<std::string> parents) {
        ArchiveEntry e;
        e.folder = folder;
        e.epoch = epoch;
        e.message_id = std::move(id);
        e.parents = std::move(parents);
        e.subject = "s" + std::to_string(folder);
        return e;
    };
    // 1 root (t=10); 2 replies to 1 (t=30); 3 replies to 1 (t=20); 4 replies to 2 via
    // References (the last known); 5 replies to a message not here; 6 a loop with 7.
    std::vector<ArchiveEntry> in{entry(1, 10, "a", {}), entry(2, 30, "b", {"a"}), entry(3, 20, "c", {"a"}),
                                 entry(4, 40, "d", {"b", "a"}), entry(5, 5, "e", {"gone"}),
                                 entry(6, 1, "f", {"g"}), entry(7, 2, "g", {"f"})};
    const std::string text = [&] {
        std::string t;
        for (const auto &e : in) t += archive_record(e);
        return t;
    }();
    const auto back = read_archive_records(text);
    REQUIRE(back.size() == in.size());
    CHECK(back[3].parents == std::vector<std::string>{"b", "a"});
    const Threads t = thread_archive(back);
    std::vector<std::size_t> folders, depths;
    for (std::size_t k = 0; k < t.order.size(); ++k) folders.push_back(back[t.order[k]].folder), depths.push_back(t.depth[k]);
    CHECK(folders == std::vector<std::size_t>{1, 3, 2, 4, 5, 7, 6}); // 7 is 6's parent: 6 would be its own ancestor
    CHECK(depths == std::vector<std::size_t>{0, 1, 1, 2, 0, 0, 1});
    const std::string page = contents_page(back, t);
    CHECK(page.find("1/index.html") < page.find("3/index.html"));
    CHECK(nav_links(3, 4) == "<a rel=\"prev\" href=\"../3/index.html\">previous in thread</a>"
                             "<a rel=\"next\" href=\"../4/index.html\">next in thread</a>");
    CHECK(nav_links(99999999999999999, 99999999999999999).size() <= kNavRoom);
}
