// --cid=extract over a threaded mbox (issue 34, "mid: links that navigate"): each message with
// an HTML part gets a page DIR/N/index.html, N its number in the run; a mid: link (RFC 2392:
// mid:message-id[/content-id], %-encoded) whose target has a page, or a file for
// mid:msg/cid, names it by a relative URL in the page; otherwise it stays, the report saying
// why. DIR/index.html lists the pages with their headers escaped as HTML text.
//
// testdata/threads/thread.mbox, written for this test, numbered as the run numbers it:
//   1 <root@>        related HTML, cid:logo, a forward link mid:reply-2
//   2 <reply-1@>     HTML: mid:root, <img src=mid:root/logo>, mid:notes (no page), mid:nowhere
//   3 <reply-2@>     related HTML: mid:reply-1, mid:root, cid:chart, mid:reply-2 (itself),
//                    mid:reply-2/chart (its own part), mid:a%2Fb (a later message, "/" encoded)
//   4 <notes@>       text/plain only: no page
//   5, 6 <dup@>      two messages with one id; hostile encoded words in From and Subject
//   7 <a/b@>         HTML: mid:reply-1%40thread.example, mid:dup (ambiguous)
#include "helpers.hh"

#include "contents_row.hh"
#include "folder_plan.hh"
#include "ref_pages.hh"

#include <doctest/doctest.h>

#include <map>

using testing::quote;

namespace {

const std::string kThread = std::string(MIMEURI_TESTDATA) + "/threads/thread.mbox";

std::string files_under(const std::string &dir)
{
    return testing::sh("cd " + quote(dir) + " 2>/dev/null && find . -type f | sort").out;
}

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

// Each report entry of a reference, as "MESSAGE URL ACTION REASON", in order (python3 reads
// the JSON: an independent reader).
std::string report_lines(const std::string &report_path)
{
    return testing::sh("python3 -c 'import json,sys\n"
                       "for l in open(sys.argv[1]):\n"
                       "  o=json.loads(l)\n"
                       "  for r in o[\"refs\"]: print(o[\"index\"], r[\"url\"], r[\"action\"], r.get(\"reason\") or \"-\")' " +
                       quote(report_path))
        .out;
}

const char *kExpectedTree = "./1/index.html\n./1/logo.png\n./2/index.html\n./3/chart.png\n./3/index.html\n"
                            "./4/index.html\n./5/index.html\n./6/index.html\n./7/index.html\n./index.html\n"
                            "./mimeuri.css\n./pages.tsv\n";

} // namespace

TEST_CASE("extract: mid: links in the pages name the pages and files of their targets")
{
    testing::TempDir d;
    const std::string dir = d / "out", report = d / "r.jsonl";
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(dir) + " --report=" + quote(report) + " " + quote(kThread));
    REQUIRE(r.status == 0);
    CHECK(r.out == testing::read_file(kThread)); // the messages themselves are not changed
    // Every message has a page (message 4's is its text); numbers are the messages' places.
    CHECK(files_under(dir) == kExpectedTree);

    const std::string p1 = testing::read_file(dir + "/1/index.html");
    CHECK(has(p1, "<img src=\"logo.png\""));
    CHECK(has(p1, "<a href=\"../3/index.html\">summary</a>")); // forward: planned again, then linked
    const std::string p2 = testing::read_file(dir + "/2/index.html");
    CHECK(has(p2, "<a href=\"../1/index.html\">Alice's plan</a>"));
    CHECK(has(p2, "<img src=\"../1/logo.png\"")); // mid:root/logo: the file message 1's page wrote
    CHECK(has(p2, "<a href=\"../4/index.html\">")); // a text-only message: its page is its text
    CHECK(has(p2, "<a href=\"mid:nowhere@thread.example\">"));
    const std::string p3 = testing::read_file(dir + "/3/index.html");
    CHECK(has(p3, "<a href=\"../2/index.html\">Bob's reply</a>"));
    CHECK(has(p3, "<a href=\"../1/index.html\">the plan</a>"));
    CHECK(has(p3, "<img src=\"chart.png\""));
    CHECK(has(p3, "<a href=\"#\">This summary</a>"));      // the page itself
    CHECK(has(p3, "<a href=\"chart.png\">its chart</a>")); // mid:own/cid: the part's file
    CHECK(has(p3, "<a href=\"../7/index.html\">the follow-up</a>")); // mid:a%2Fb@...: <a/b@...>
    const std::string p7 = testing::read_file(dir + "/7/index.html");
    CHECK(has(p7, "<a href=\"../2/index.html\">Bob</a>")); // %40 is "@"
    CHECK(has(p7, "<a href=\"mid:dup@thread.example\">"));  // two messages have it: left
    CHECK_FALSE(has(p1 + p2 + p3 + p7, "mid:root") );
    CHECK_FALSE(has(p3, "mid:"));

    // The report says what each page shows: extracted where the link was rewritten, else why not.
    CHECK(report_lines(report) == "1 cid:logo@thread.example extracted -\n"
                                  "1 mid:reply-2@thread.example extracted -\n"
                                  "2 mid:root@thread.example extracted -\n"
                                  "2 mid:root@thread.example/logo@thread.example extracted -\n"
                                  "2 mid:notes@thread.example extracted -\n"
                                  "2 mid:nowhere@thread.example none dangling\n"
                                  "3 mid:reply-1@thread.example extracted -\n"
                                  "3 mid:root@thread.example extracted -\n"
                                  "3 cid:chart@thread.example extracted -\n"
                                  "3 mid:reply-2@thread.example extracted -\n"
                                  "3 mid:reply-2@thread.example/chart@thread.example extracted -\n"
                                  "3 mid:a%2Fb@thread.example extracted -\n"
                                  "7 mid:reply-1%40thread.example extracted -\n"
                                  "7 mid:dup@thread.example none ambiguous\n");
}

TEST_CASE("extract: the top index.html lists the messages by thread, headers decoded and escaped as HTML text")
{
    testing::TempDir d;
    const std::string dir = d / "out";
    REQUIRE(testing::mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(kThread)).status == 0);
    const std::string top = testing::read_file(dir + "/index.html");
    // The Date is 09:00 +0100: shown in UTC, and said so.
    CHECK(has(top, "<ul class=\"mimeuri-thread\"><li><a href=\"1/index.html\">Release plan</a> <span class=\"from\">"
                   "Alice Example &lt;alice@thread.example&gt;</span> <span class=\"date\">2026-03-02 08:00 UTC</span><ul><li>"
                   "<a href=\"2/index.html\">"));
    CHECK(has(top, "4/index.html")); // a text-only message has its page
    // RFC 2047 words decoded, then escaped: the markup they carry is text.
    CHECK(has(top, ">&quot;&lt;img src=x onerror=alert(1)&gt;&quot; &lt;mallory@evil.example&gt;</span>"));
    CHECK(has(top, "<a href=\"5/index.html\">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;</a>"));
    CHECK(has(top, "<a href=\"6/index.html\">&quot;&gt;&lt;/a&gt;&lt;iframe src=javascript:alert(1)&gt;</a>"));
    // No element but the page's own: every '<' in it is one of these.
    std::map<std::string, int> tags;
    for (std::size_t at = top.find('<'); at != std::string::npos; at = top.find('<', at + 1)) {
        std::size_t end = top.find_first_of(" >", at);
        ++tags[top.substr(at, end - at)];
    }
    for (const auto &kv : tags) { // (not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE)
        const std::string &tag = kv.first;
        CHECK_MESSAGE((tag == "<!DOCTYPE" || tag == "<html" || tag == "<head" || tag == "<meta" || tag == "<title" ||
                       tag == "<link" || tag == "<body" || tag == "<h1" || tag == "<p" || tag == "<ul" || tag == "<li" ||
                       tag == "<span" || tag == "<a" || tag[1] == '/'),
                      tag);
    }
    CHECK(tags["<a"] == 7);
    CHECK(tags["<meta"] == 2); // the CSP and the charset
}

TEST_CASE("extract: page paths are the messages' places: the same with --jobs, and over several inputs")
{
    testing::TempDir d;
    const std::string one = d / "one", jobs = d / "jobs", two = d / "two";
    REQUIRE(testing::mimeuri("--cid=extract --extract-dir=" + quote(one) + " " + quote(kThread)).status == 0);
    REQUIRE(testing::mimeuri("--jobs=2 --cid=extract --extract-dir=" + quote(jobs) + " " + quote(kThread)).status == 0);
    CHECK(testing::sh("diff -r " + quote(one) + " " + quote(jobs) + " && echo same").out == "same\n");
    // The mbox cut in two after message 3: the second file's messages are 4 to 7 of the run,
    // and message 3's link to message 7 (a later input) still names its page.
    const std::string text = testing::read_file(kThread);
    std::size_t cut = text.find("\nFrom carol@thread.example Mon Mar  2 11:30:00 2026\n");
    REQUIRE(cut != std::string::npos);
    std::string a = d.file("a.mbox", text.substr(0, cut + 1)), b = d.file("b.mbox", text.substr(cut + 1));
    REQUIRE(testing::mimeuri("--cid=extract --extract-dir=" + quote(two) + " " + quote(a) + " " + quote(b)).status == 0);
    CHECK(testing::sh("diff -r " + quote(one) + " " + quote(two) + " && echo same").out == "same\n");
}

TEST_CASE("extract: the top index.html is never written through a link, nor over a file")
{
    testing::TempDir d;
    const std::string dir = d / "out", victim = d.file("victim", "keep\n");
    REQUIRE(testing::sh("mkdir " + quote(dir) + " && ln -s " + quote(victim) + " " + quote(dir + "/index.html")).status == 0);
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(kThread));
    CHECK(r.status != 0);
    CHECK(has(r.err, "index.html"));
    CHECK(testing::read_file(victim) == "keep\n");
    CHECK(has(files_under(dir), "./7/index.html")); // the pages themselves are written
}

TEST_CASE("html_text: any bytes as HTML text")
{
    using mimeuri::refs::html_text;
    CHECK(html_text("a < b & \"c\" > 'd'") == "a &lt; b &amp; &quot;c&quot; &gt; &apos;d&apos;");
    CHECK(html_text("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;");
    CHECK(html_text("tab\there\r\nnul\x01") == "tab here  nul ");
    CHECK(html_text("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(html_text("bad \xff byte") == "bad \xef\xbf\xbd byte"); // made valid UTF-8 (U+FFFD)
}

TEST_CASE("relative_url: from a page's folder to another file, segments %-encoded")
{
    using mimeuri::refs::relative_url;
    CHECK(relative_url("/srv/x/3", "/srv/x/1/index.html") == "../1/index.html");
    CHECK(relative_url("/srv/new/3", "/srv/old/12/index.html") == "../../old/12/index.html");
    CHECK(relative_url("/a/b", "/c/d e/index.html") == "../../c/d%20e/index.html");
    CHECK(relative_url("/srv/x/3", "/srv/x/3/index.html") == "index.html");
}

TEST_CASE("extract with --mid-index: a page an earlier run wrote is named through the index")
{
    testing::TempDir d;
    // The thread in two runs: messages 1-3 first, then 4-7 (here numbered 1-4) into another folder.
    const std::string text = testing::read_file(kThread);
    std::size_t cut = text.find("\nFrom carol@thread.example Mon Mar  2 11:30:00 2026\n");
    REQUIRE(cut != std::string::npos);
    std::string a = d.file("a.mbox", text.substr(0, cut + 1)), b = d.file("b.mbox", text.substr(cut + 1));
    const std::string first = d / "first", second = d / "second", idx = d / "idx", report = d / "r.jsonl";
    REQUIRE(testing::mimeuri("--cid=extract --extract-dir=" + quote(first) + " " + quote(a)).status == 0);
    CHECK(testing::read_file(first + "/pages.tsv") == "1\troot@thread.example\n2\treply-1@thread.example\n"
                                                     "3\treply-2@thread.example\n");
    REQUIRE(testing::sh(testing::bin() + " index -q -o " + quote(idx) + " --pages=" + quote(first) + " " + quote(a)).status ==
            0);
    REQUIRE(testing::mimeuri("--cid=extract --extract-dir=" + quote(second) + " --mid-index=" + quote(idx) +
                             " --report=" + quote(report) + " " + quote(b))
                .status == 0);
    // <a/b@> is the second run's message 4; its link to <reply-1@> names the first run's page.
    const std::string p4 = testing::read_file(second + "/4/index.html");
    CHECK(has(p4, "<a href=\"../../first/2/index.html\">Bob</a>"));
    CHECK(has(report_lines(report), "4 mid:reply-1%40thread.example extracted -\n"));
    // The first run's forward link to <a/b@> was made before that message was extracted: it
    // stays (a page already written is not rewritten).
    CHECK(has(testing::read_file(first + "/3/index.html"), "href=\"mid:a%2Fb@thread.example\""));

    // An index made before pages were recorded (no pages table) still opens: no page known.
    REQUIRE(testing::sh("python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DROP TABLE pages\"); "
                        "c.commit()' " + quote(idx)).status == 0);
    const std::string third = d / "third", report3 = d / "r3.jsonl";
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(third) + " --mid-index=" + quote(idx) + " --report=" +
                              quote(report3) + " " + quote(b));
    CHECK(r.status == 0);
    CHECK(has(report_lines(report3), "4 mid:reply-1%40thread.example none no-page\n"));
    CHECK(has(testing::read_file(third + "/4/index.html"), "href=\"mid:reply-1%40thread.example\""));
}

TEST_CASE("extract with --mid-url: the messages' mid: links go to the web archive, as without extract")
{
    testing::TempDir d;
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") +
                              " --mid-url='https://lists.example.org/msg/{id}' " + quote(kThread));
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "href=\"https://lists.example.org/msg/root%40thread.example\""));
    CHECK(has(testing::read_file(d / "out/2/index.html"), "href=\"mid:root@thread.example\""));
}

// Issue 50: a message with no HTML part showed its text and no image; a reader and MHonArc
// show its image attachments. Each is written as a file and shown under the text (an <img>
// of the file, its name escaped); a non-image attachment is listed only, as before; an image
// inside an attached message is the attached message's.
TEST_CASE("extract: a text message's image attachments are files its page shows")
{
    testing::TempDir d;
    const std::string msg = d / "t.eml", dir = d / "out";
    testing::write_file(msg, "From: a@example.org\nMessage-ID: <txt@t>\nSubject: photo\nMIME-Version: 1.0\n"
                             "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\nContent-Type: text/plain\n\n"
                             "Here is the <photo>.\n--m\nContent-Type: image/png\n"
                             "Content-Disposition: attachment; filename=\"pic <1>.png\"\nContent-Transfer-Encoding: base64\n\n"
                             "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==\n"
                             "--m\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename=x.js\n\n"
                             "alert(1)\n--m\nContent-Type: message/rfc822\n\nSubject: inner\nMIME-Version: 1.0\n"
                             "Content-Type: image/gif\nContent-Transfer-Encoding: base64\n\nR0lGODlhAQABAAAAACw=\n--m--\n");
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(msg));
    REQUIRE(r.status == 0);
    const std::string page = testing::read_file(dir + "/1/index.html");
    CHECK(testing::read_file(dir + "/1/pic _1_.png").size() == 70); // the PNG: 70 bytes, as Python decodes the base64
    CHECK(has(page, "Here is the &lt;photo&gt;."));
    CHECK(has(page, "<img src=\"pic%20_1_.png\" alt=\"pic _1_.png\">"));
    CHECK_FALSE(has(page, "x.js\">"));    // listed, not linked: no file written for it
    CHECK_FALSE(has(page, ".gif"));       // the attached message's image is not this page's
}
