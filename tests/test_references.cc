// The reference pass end to end: matching rules (RFC 2392, 2387, 2046 5.1.4, 2557), mid:
// across the run, extract safety, limits.
#include "helpers.hh"

#include <doctest/doctest.h>
#include <json-glib/json-glib.h>

using testing::mimeuri;
using testing::quote;

namespace {

// All report lines of a --check run, parsed.
struct Report {
    std::vector<JsonParser *> parsers;
    std::vector<JsonObject *> messages;
    ~Report()
    {
        for (auto *p : parsers) g_object_unref(p);
    }
    void load(const std::string &text)
    {
        std::size_t pos = 0;
        while (pos < text.size()) {
            auto nl = text.find('\n', pos);
            JsonParser *p = json_parser_new();
            parsers.push_back(p);
            REQUIRE(json_parser_load_from_data(p, text.data() + pos, static_cast<gssize>(nl - pos), nullptr));
            messages.push_back(json_node_get_object(json_parser_get_root(p)));
            pos = nl + 1;
        }
    }
    JsonObject *ref(std::size_t msg, std::size_t i)
    {
        JsonArray *a = json_object_get_array_member(messages.at(msg), "refs");
        REQUIRE(i < json_array_get_length(a));
        return json_array_get_object_element(a, static_cast<guint>(i));
    }
    std::size_t refs(std::size_t msg) { return json_array_get_length(json_object_get_array_member(messages.at(msg), "refs")); }
};

std::string s(JsonObject *o, const char *m)
{
    if (json_object_get_null_member(o, m)) return "<null>";
    return json_object_get_string_member(o, m);
}

std::string png_part(const char *cid)
{
    return std::string("Content-Type: image/png\nContent-ID: ") + cid + "\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n";
}

// One mbox entry: an HTML message with this Message-ID.
std::string msg(const std::string &id, const std::string &html)
{
    return "From x@y Mon Jan  1 00:00:00 2024\nMessage-ID: <" + id + ">\nContent-Type: text/html\n\n" + html + "\n\n";
}

// The action the report gives a resolved reference in each --cid mode.
std::string cid_action(const std::string &mode)
{
    return mode == "check" ? "none" : mode == "repair" ? "repaired" : mode == "inline" ? "inlined" : "extracted";
}

// A run over `file` in a --cid mode with the summary header, an extract folder and a report
// in x (its lines loaded into r); `more` goes first ("--verbose ").
testing::Proc run_cid_mode(const std::string &mode, const std::string &file, const testing::TempDir &x, Report &r,
                           const std::string &more = "")
{
    auto run = mimeuri(more + "--summary-header --cid=" + mode + " --extract-dir=" + quote(x / "out") +
                       " --report=" + quote(x / "r") + " " + quote(file));
    r.load(testing::read_file(x / "r"));
    return run;
}

} // namespace

// The mail's part of a page --cid=extract wrote: what comes after mimeuri's own head and
// header (issue 41), as the sanitiser wrote it.
static std::string mail_of(const std::string &page)
{
    const std::string open = "<main class=\"mimeuri-mail\">\n";
    const std::size_t b = page.find(open), e = page.rfind("\n</main>");
    return b == std::string::npos || e == std::string::npos || e < b ? "(not a page)" : page.substr(b + open.size(), e - b - open.size());
}

TEST_CASE("duplicates: the last alternative wins inside multipart/alternative; elsewhere ambiguous")
{
    std::string m = "Message-ID: <d@x>\nContent-Type: multipart/related; boundary=r\n\n"
                    "--r\nContent-Type: text/html\n\n<img src=\"cid:alt@x\"><img src=\"cid:dup@x\">\n"
                    "--r\nContent-Type: multipart/alternative; boundary=a\n\n"
                    "--a\n" + png_part("<alt@x>") + "--a\n" + png_part("<alt@x>") + "--a--\n"
                    "--r\n" + png_part("<dup@x>") + "--r\n" + png_part("<dup@x>") + "--r--\n";
    testing::TempDir d;
    Report r;
    r.load(mimeuri("--check " + quote(d.file("m.eml", m))).out);
    REQUIRE(r.refs(0) == 2);
    CHECK(s(r.ref(0, 0), "status") == "resolved");
    CHECK(s(r.ref(0, 0), "target") == "2.2"); // RFC 2046 5.1.4: the last alternative
    CHECK(s(r.ref(0, 1), "status") == "ambiguous");
    CHECK(s(r.ref(0, 1), "target") == "<null>");
}

TEST_CASE("the nearest multipart/related is searched first; start is compared as a msg-id")
{
    // Two related parts each with a <same@x>: each HTML finds its own. start names the
    // second part, written with spaces: it is the root and so not "unreferenced".
    std::string m = "Message-ID: <n@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
                    "--o\nContent-Type: multipart/related; boundary=r1; start=\"< root@x >\"\n\n"
                    "--r1\n" + png_part("<same@x>") +
                    "--r1\nContent-Type: text/html\nContent-ID: <root@x>\n\n<img src=\"cid:same@x\">\n"
                    "--r1\n" + png_part("<unused@x>") + "--r1--\n"
                    "--o\nContent-Type: multipart/related; boundary=r2\n\n"
                    "--r2\nContent-Type: text/html\n\n<img src=\"cid:same@x\">\n"
                    "--r2\n" + png_part("<same@x>") + "--r2--\n--o--\n";
    testing::TempDir d;
    Report r;
    r.load(mimeuri("--check " + quote(d.file("m.eml", m))).out);
    REQUIRE(r.refs(0) == 2);
    CHECK(s(r.ref(0, 0), "target") == "1.1");
    CHECK(s(r.ref(0, 1), "target") == "2.2");
    JsonArray *unref = json_object_get_array_member(r.messages[0], "unreferenced");
    REQUIRE(json_array_get_length(unref) == 1);
    CHECK(s(json_array_get_object_element(unref, 0), "part") == "1.3");
}

TEST_CASE("never a prefix: cid:img1 is not img10, and the reverse")
{
    std::string m = "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n"
                    "<img src=cid:img1><img src=cid:img10><img src=cid:img100>\n--r\n" +
                    png_part("<img10>") + "--r--\n";
    testing::TempDir d;
    Report r;
    r.load(mimeuri("--check " + quote(d.file("m.eml", m))).out);
    REQUIRE(r.refs(0) == 3);
    CHECK(s(r.ref(0, 0), "status") == "dangling");
    CHECK(s(r.ref(0, 1), "status") == "resolved");
    CHECK(s(r.ref(0, 2), "status") == "dangling");
}

TEST_CASE("mid: resolves in the message, its embedded messages, and other files of the run, forward too")
{
    testing::TempDir d;
    std::string a = d.file("a.eml", "Message-ID: <a@x>\nContent-Type: text/html\n\n"
                                    "<a href=\"mid:b@x/pic@x\">b's picture</a><a href=\"mid:a@x\">self</a>"
                                    "<a href=\"mid:b@X\">b, domain case</a><a href=\"mid:c@x\">nowhere</a>\n");
    std::string b = d.file("b.eml", "Message-ID: <b@x>\nContent-Type: multipart/related; boundary=r\n\n"
                                    "--r\nContent-Type: text/html\n\n<a href=\"mid:a@x\">back</a>\n--r\n" +
                                        png_part("<pic@x>") + "--r--\n");
    Report r;
    auto p = mimeuri("--check " + quote(a) + " " + quote(b));
    REQUIRE(p.status == 0);
    r.load(p.out);
    REQUIRE(r.messages.size() == 2);
    CHECK(s(r.ref(0, 0), "status") == "resolved");
    CHECK(s(r.ref(0, 0), "target_message") == "b@x");
    CHECK(s(r.ref(0, 0), "target") == "2");
    CHECK(s(r.ref(0, 1), "status") == "resolved");
    CHECK(s(r.ref(0, 1), "target_message") == "<null>");
    CHECK(s(r.ref(0, 2), "status") == "resolved");
    CHECK(s(r.ref(0, 3), "status") == "dangling");
    CHECK(s(r.ref(1, 0), "status") == "resolved");
    CHECK(s(r.ref(1, 0), "target_message") == "a@x");
    // --mid=repair fixes the domain case only.
    REQUIRE(mimeuri("--mid=repair --in-place " + quote(a) + " " + quote(b)).status == 0);
    std::string fixed = testing::read_file(a);
    CHECK(fixed.find("<a href=\"mid:b@x\">b, domain case</a>") != std::string::npos);
    CHECK(fixed.find("mid:c@x") != std::string::npos);
}

TEST_CASE("mid:msg/cid to an earlier message with no such part, in one mbox: dangling, ambiguous once a later copy comes")
{
    // The reference waits on the message it found: a later message with the same id makes
    // the id ambiguous, as one run that knew every message would say.
    const std::string first = msg("a@x", "<p>a</p>");
    const std::string linking = msg("l@x", "<a href=\"mid:a@x/nopart@x\">a's part</a>");
    testing::TempDir d;
    for (bool copy_later : {false, true}) {
        CAPTURE(copy_later);
        std::string mbox = first + linking + (copy_later ? msg("a@x", "<p>again</p>") : "");
        Report r;
        auto p = mimeuri("--check " + quote(d.file(copy_later ? "two.mbox" : "one.mbox", mbox)));
        REQUIRE(p.status == 0);
        r.load(p.out);
        REQUIRE(r.messages.size() == (copy_later ? 3u : 2u));
        CHECK(s(r.ref(1, 0), "status") == (copy_later ? "ambiguous" : "dangling"));
    }
}


TEST_CASE("a Message-ID held twice: every reference to it is ambiguous, over one mbox (whatever --jobs), a Maildir "
          "and with --mid-index (man mimeuri, --mid; docs/scale.md)")
{
    const std::string link = "<a href=\"mid:x@example.org\">x</a>";
    const std::vector<std::string> msgs = {msg("x@example.org", "<p>first</p>"), msg("r1@example.org", link),
                                           msg("x@example.org", "<p>second copy</p>"), msg("r2@example.org", link)};
    testing::TempDir d;
    std::string all;
    for (const auto &m : msgs) all += m;
    const std::string mbox = d.file("in.mbox", all);
    // The two linking messages' statuses (report lines 1 and 3).
    auto statuses = [](const std::string &out) {
        Report r;
        r.load(out);
        REQUIRE(r.messages.size() == 4u);
        return std::make_pair(s(r.ref(1, 0), "status"), s(r.ref(3, 0), "status"));
    };
    SUBCASE("one mbox, no index: the whole mbox's answer, though the first reference comes before the second copy")
    {
        for (const char *jobs : {"1", "2"}) {
            CAPTURE(jobs);
            auto p = mimeuri("--check --jobs=" + std::string(jobs) + " " + quote(mbox));
            REQUIRE(p.status == 0);
            CHECK(statuses(p.out) == std::make_pair(std::string("ambiguous"), std::string("ambiguous")));
        }
    }
    SUBCASE("the same mbox with --mid-index of itself: both ambiguous")
    {
        REQUIRE(testing::sh("cd " + quote(d.path) + " && " + testing::bin() + " index -q -o in.idx in.mbox; echo $?").out == "0\n");
        auto p = mimeuri("--check --mid-index=" + quote(d / "in.idx") + " " + quote(mbox));
        REQUIRE(p.status == 0);
        CHECK(statuses(p.out) == std::make_pair(std::string("ambiguous"), std::string("ambiguous")));
    }
    SUBCASE("the same messages as a Maildir (every file indexed first): both ambiguous")
    {
        for (const char *sub : {"cur", "new", "tmp"}) REQUIRE(g_mkdir_with_parents((d / ("md/" + std::string(sub))).c_str(), 0700) == 0);
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            const std::string body = msgs[i].substr(msgs[i].find('\n') + 1); // without the From_ line
            d.file("md/cur/" + std::to_string(1000 + i) + ".M" + std::to_string(i) + "P1.host:2,S", body);
        }
        auto p = mimeuri("--check " + quote(d / "md"));
        REQUIRE(p.status == 0);
        CHECK(statuses(p.out) == std::make_pair(std::string("ambiguous"), std::string("ambiguous")));
    }
}
TEST_CASE("extract: safe, unique names; nothing outside the folder; nothing overwritten")
{
    std::string m = "Message-ID: <e@x>\nContent-Type: multipart/related; boundary=r\n\n"
                    "--r\nContent-Type: text/html\n\n<img src=cid:1><img src=cid:2><img src=cid:3><img src=cid:4>\n"
                    "--r\nContent-Type: image/png; name=\"../../etc/passwd\"\nContent-ID: <1>\n\nA\n"
                    "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=\"/abs/x.png\"\nContent-ID: <2>\n\nB\n"
                    "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=\"x.png\"\nContent-ID: <3>\n\nC\n"
                    "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=\"index.html\"\nContent-ID: <4>\n\nD\n"
                    "--r--\n";
    testing::TempDir d;
    std::string f = d.file("m.eml", m);
    std::string dir = d / "out";
    auto r = mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    REQUIRE(r.status == 0);
    CHECK(r.out == m); // the message itself is untouched
    auto ls = testing::sh("cd " + quote(dir) + " && find . -type f | sort");
    // Each with an extension of its type: "passwd", an image/png, is passwd.png.
    CHECK(ls.out ==
          "./1/index.html\n./1/part-5.png\n./1/passwd.png\n./1/x-2.png\n./1/x.png\n./index.html\n./mimeuri.css\n./pages.tsv\n");
    std::string index = testing::read_file(dir + "/1/index.html");
    // Unquoted values are quoted when rewritten.
    CHECK(index.find("<img src=\"passwd.png\"><img src=\"x.png\"><img src=\"x-2.png\"><img src=\"part-5.png\">") !=
          std::string::npos);
    CHECK(testing::read_file(dir + "/1/x-2.png") == "C");
    // Running again into the same folder does not overwrite (the run numbers its folders
    // from 1 again): the message fails, and passes as it came (see the defect 9 case below).
    auto again = mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(again.status == 0);
    CHECK(testing::sh("test -f " + quote(dir + "/1/index.html") + " && echo y").out == "y\n");
}

TEST_CASE("limits: an HTML part over --html-max and references over --max-refs are reported")
{
    std::string html;
    for (int i = 0; i < 50; ++i) html += "<img src=\"cid:x" + std::to_string(i) + "\">";
    testing::TempDir d;
    std::string f = d.file("m.eml", "Content-Type: text/html\n\n" + html + "\n");
    auto big = mimeuri("--check --html-max=100 " + quote(f));
    CHECK(big.out.find("\"html-limit\"") != std::string::npos);
    auto many = mimeuri("--check --max-refs=10 " + quote(f));
    CHECK(many.out.find("\"ref-limit\"") != std::string::npos);
    Report r;
    r.load(many.out);
    CHECK(r.refs(0) == 10);
    CHECK(mimeuri("--strict --max-refs=10 " + quote(f)).status == 65);
}

TEST_CASE("usage: --cid=extract needs a folder, --mid-url needs {id}")
{
    CHECK(mimeuri("--cid=extract").status == 64);
    CHECK(mimeuri("--mid-url=https://x/").status == 64);
    CHECK(mimeuri("--cid=sometimes").status == 64);
}

TEST_CASE("extract: a page's name is chosen among the files' names, never assumed free")
{
    // Part 2 is an HTML part with something to extract: its page would be part-2.html, then
    // part-2-page.html; the HTML parts it and part 1 link are called just that.
    const std::string m = "Message-ID: <n@x>\nContent-Type: multipart/related; boundary=r\n\n"
                          "--r\nContent-Type: text/html\n\n<a href=cid:h1>a</a><a href=cid:h2>b</a>\n"
                          "--r\nContent-Type: text/html\n\n<img src=cid:p>\n"
                          "--r\nContent-Type: text/html\nContent-ID: <h1>\nContent-Disposition: inline; filename=part-2.html\n\nx\n"
                          "--r\nContent-Type: text/html\nContent-ID: <h2>\nContent-Disposition: inline; filename=part-2-page.html\n\ny\n"
                          "--r\nContent-Type: image/png\nContent-ID: <p>\n\nP\n--r--\n";
    testing::TempDir d;
    const std::string f = d.file("m.eml", m), dir = d / "out";
    auto r = mimeuri("--on-error=tempfail --cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(testing::sh("cd " + quote(dir) + " && find . -type f | sort").out == "./1/index.html\n./1/part-2-2.html\n./1/part-2-page.html\n./1/part-2.html\n./1/part-5.png\n"
                              "./index.html\n./mimeuri.css\n./pages.tsv\n");
    const std::string page = testing::read_file(dir + "/1/index.html");
    CHECK(page.find("<a href=\"part-2-2.html\">2 text/html</a>") != std::string::npos); // the part's own page
    CHECK(mail_of(testing::read_file(dir + "/1/part-2-2.html")) == "<img src=\"part-5.png\">");
}

TEST_CASE("usage: the milter refuses --cid=extract before it opens its socket")
{
    testing::TempDir d;
    const std::string sock = d / "milter.sock";
    auto r = mimeuri("--milter=unix:" + quote(sock) + " --cid=extract --extract-dir=" + quote(d / "out"));
    CHECK(r.status == 64);
    CHECK(r.err.find("--cid=extract") != std::string::npos);
    CHECK_FALSE(testing::sh("test -e " + quote(sock) + " && echo there").out == "there\n");
}

TEST_CASE("a cid: reference matches a Content-Location that is that cid: URL (Chrome's MHTML, RFC 2557)")
{
    std::string m = "Message-ID: <c@x>\nContent-Type: multipart/related; boundary=r\n\n"
                    "--r\nContent-Type: text/html\n\n<link rel=stylesheet href=\"cid:css-1@mhtml.blink\">\n"
                    "--r\nContent-Type: text/css\nContent-Location: cid:css-1@mhtml.blink\n\np{}\n--r--\n";
    testing::TempDir d;
    std::string f = d.file("m.eml", m);
    Report r;
    r.load(mimeuri("--check " + quote(f)).out);
    REQUIRE(r.refs(0) == 1);
    // The URL is the part's Content-Location: resolved (as a browser loads it), the report
    // saying how it matched; the status, the summary header and --verbose agree in every mode.
    CHECK(s(r.ref(0, 0), "status") == "resolved");
    CHECK(s(r.ref(0, 0), "matched") == "content-location");
    CHECK(s(r.ref(0, 0), "target") == "2");
    for (const char *mode : {"check", "repair", "inline", "extract"}) {
        CAPTURE(mode);
        testing::TempDir x;
        Report rr;
        auto run = run_cid_mode(mode, f, x, rr, "--verbose ");
        CHECK(run.out.find("Mimeuri-Refs: resolved=1 dangling=0 ambiguous=0") != std::string::npos);
        CHECK(run.err.find(" 0 dangling references") != std::string::npos);
        REQUIRE(rr.refs(0) == 1);
        CHECK(s(rr.ref(0, 0), "status") == "resolved");
        CHECK(s(rr.ref(0, 0), "action") == cid_action(mode));
    }
    // Repair gives the part the Content-ID the reference names; the HTML stays as it is.
    std::string expected = m;
    expected.replace(expected.find("Content-Location: cid:css-1@mhtml.blink\n") + 40, 0,
                     "Content-ID: <css-1@mhtml.blink>\n");
    CHECK(mimeuri(quote(f)).out == expected);
}

TEST_CASE("references spelled with character references or CSS escapes are still found")
{
    // Each of these decodes to cid:p@x; none contains "cid:" as bytes.
    for (const char *html : {"<img src=\"&#99;id:p@x\">", "<img src=\"cid&#58;p@x\">", "<img src=\"cid&colon;p@x\">",
                             "<img src=\"&#x43;&#x49;&#x44;&#x3a;p@x\">", "<img src=\"&#0000099;i&#100;&#58;p@x\">",
                             "<p style=\"background:url(cid\\3A p@x)\">", "<img src=\"CID:p@x\">"}) {
        CAPTURE(html);
        std::string m = "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n" + std::string(html) +
                        "\n--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n";
        testing::TempDir d;
        Report r;
        r.load(mimeuri("--check " + quote(d.file("m.eml", m))).out);
        REQUIRE(r.refs(0) == 1);
        CHECK(s(r.ref(0, 0), "status") == "resolved");
    }
}

namespace {

// A message whose HTML references one image, extracted as DIR/N/index.html and DIR/N/pic.png.
std::string extractable(const std::string &id, const std::string &more_html = "")
{
    return "Message-ID: <" + id + ">\nContent-Type: multipart/related; boundary=r\n\n"
           "--r\nContent-Type: text/html\n\n<img src=\"cid:a@b\">" + more_html + "\n"
           "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=\"pic.png\"\n"
           "Content-ID: <a@b>\n\nAAAA\n--r--\n";
}

std::string files_under(const std::string &dir)
{
    return testing::sh("cd " + quote(dir) + " 2>/dev/null && find . -type f | sort").out;
}

} // namespace

TEST_CASE("defect 9: extracting into a folder that already holds the files is a failure, not \"extracted\"")
{
    testing::TempDir d;
    std::string m = extractable("x@x");
    std::string f = d.file("m.eml", m), dir = d / "out";
    REQUIRE(mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f)).status == 0);
    REQUIRE(files_under(dir) == "./1/index.html\n./1/pic.png\n./index.html\n./mimeuri.css\n./pages.tsv\n");
    const std::string first_page = testing::read_file(dir + "/1/index.html");

    // Again into the same folder: DIR/1/pic.png exists and is never overwritten.
    std::string report = d / "report.json";
    auto again = mimeuri("--strict --cid=extract --extract-dir=" + quote(dir) + " --report=" + quote(report) + " " + quote(f));
    CHECK(again.status == 65); // --strict: the message was not processed
    CHECK(again.out == m);     // --on-error=pass: it passes as it came
    CHECK(again.err.find("cannot create") != std::string::npos);
    Report r;
    r.load(testing::read_file(report));
    REQUIRE(r.refs(0) == 1);
    CHECK(s(r.ref(0, 0), "action") == "none"); // not "extracted": nothing was
    CHECK(s(r.ref(0, 0), "reason") == "extract");
    CHECK(json_object_get_boolean_member(r.messages[0], "changed") == FALSE);
    JsonArray *errors = json_object_get_array_member(r.messages[0], "errors");
    bool extract_error = false;
    for (guint i = 0; i < json_array_get_length(errors); ++i)
        extract_error = extract_error || s(json_array_get_object_element(errors, i), "code") == "extract";
    CHECK(extract_error);
    // The first run's files are as they were; nothing of the second is left.
    CHECK(files_under(dir) == "./1/index.html\n./1/pic.png\n./index.html\n./mimeuri.css\n./pages.tsv\n");
    CHECK(testing::read_file(dir + "/1/index.html") == first_page);
    CHECK(testing::read_file(dir + "/1/pic.png") == "AAAA");

    // Without --strict the policy is --on-error's: 0 with pass, 75 with tempfail.
    CHECK(mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f)).status == 0);
    auto temp = mimeuri("--on-error=tempfail --cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(temp.status == 75);
    CHECK(temp.out.empty());
}

TEST_CASE("extract: --check writes no file; the report says what would be extracted")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", extractable("x@x")), dir = d / "out";
    auto r = mimeuri("--check --cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(files_under(dir).empty());
    Report rep;
    rep.load(r.out);
    REQUIRE(rep.refs(0) == 1);
    CHECK(s(rep.ref(0, 0), "action") == "extracted");
}

TEST_CASE("extract: a message planned twice (a forward mid: reference) is extracted once, in message order")
{
    testing::TempDir d;
    // Message 1 links forward to message 3 (its plan waits, and it is planned again once the
    // whole mbox is indexed); messages 2 and 3 are extracted too: folders 1, 2, 3 in order.
    std::string mbox;
    for (int i = 1; i <= 3; ++i) {
        std::string more = i == 1 ? "<a href=\"mid:m3@x\">last</a>" : "";
        mbox += "From a@x Mon Jan  1 00:00:00 2024\n" + extractable("m" + std::to_string(i) + "@x", more) + "\n";
    }
    std::string f = d.file("in.mbox", mbox), dir = d / "out";
    auto r = mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(files_under(dir) ==
          "./1/index.html\n./1/pic.png\n./2/index.html\n./2/pic.png\n./3/index.html\n./3/pic.png\n./index.html\n"
          "./mimeuri.css\n./pages.tsv\n");
    // The forward link names message 3's page (tests/test_extract_archive.cc has the rest).
    CHECK(testing::read_file(dir + "/1/index.html").find("href=\"../3/index.html\"") != std::string::npos);
    CHECK(testing::read_file(dir + "/2/index.html").find("mid:") == std::string::npos);
}

TEST_CASE("defect 7: in a Turkish locale, @IMPORT and URL( are still CSS references")
{
    // main() calls setlocale(LC_ALL, ""): tolower('I') is then not 'i' in tr_TR.
    if (testing::sh("locale -a | grep -qix 'tr_TR.utf8' && echo y").out != "y\n") {
        return testing::skip("the tr_TR.UTF-8 locale is not installed (localedef -i tr_TR -f UTF-8 tr_TR.UTF-8 makes it)");
    }
    testing::TempDir d;
    std::string f = d.file("m.eml", "Message-ID: <t@x>\nContent-Type: multipart/related; boundary=r\n\n"
                                    "--r\nContent-Type: text/html\n\n<STYLE>@IMPORT \"cid:css@x\";</STYLE>"
                                    "<DIV STYLE=\"background: URL(cid:css@x)\"></DIV>\n"
                                    "--r\nContent-Type: text/css\nContent-ID: <css@x>\n\np{}\n--r--\n");
    auto p = testing::sh("LC_ALL=tr_TR.UTF-8 " + testing::bin() + " --check " + quote(f));
    REQUIRE(p.status == 0);
    Report r;
    r.load(p.out);
    REQUIRE(r.refs(0) == 2);
    CHECK(s(r.ref(0, 0), "status") == "resolved");
    CHECK(s(r.ref(0, 1), "status") == "resolved");
}

// Issue 34 item 4: a reference the mode would act on but does not says why, in the report
// and in --verbose (also through --jobs, whose workers send the report back). An
// application/octet-stream part holding a PNG is inlined as image/png, as a browser shows it.
TEST_CASE("a reference left as it is says why: type, size, ambiguous, dangling; a sniffed image is inlined")
{
    const std::string png_b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string m =
        "Message-ID: <r@x>\nContent-Type: multipart/related; boundary=r\n\n"
        "--r\nContent-Type: text/html\n\n<img src=\"cid:oct@x\"><img src=\"cid:pdf@x\"><img src=\"cid:big@x\">"
        "<img src=\"cid:two@x\"><img src=\"cid:none@x\"><img src=\"cid:bin@x\">\n"
        "--r\nContent-Type: application/octet-stream\nContent-ID: <oct@x>\nContent-Transfer-Encoding: base64\n\n" + png_b64 + "\n"
        "--r\nContent-Type: application/pdf\nContent-ID: <pdf@x>\n\n%PDF-1.4\n"
        "--r\nContent-Type: image/png\nContent-ID: <big@x>\n\n" + std::string(200, 'x') + "\n"
        "--r\nContent-Type: image/png\nContent-ID: <two@x>\n\na\n"
        "--r\nContent-Type: image/png\nContent-ID: <two@x>\n\nb\n"
        "--r\nContent-Type: application/octet-stream\nContent-ID: <bin@x>\n\nnot an image\n--r--\n";
    testing::TempDir d;
    const std::string f = d.file("m.eml", m);
    for (const char *jobs : {"", " --jobs=2"}) {
        CAPTURE(jobs);
        auto run = mimeuri(std::string("--verbose --cid=inline --inline-max=150 --report=") + quote(d / "r") + jobs + " " + quote(f));
        REQUIRE(run.status == 0);
        Report r;
        r.load(testing::read_file(d / "r"));
        REQUIRE(r.refs(0) == 6);
        const char *want[][3] = {{"cid:oct@x", "inlined", "sniffed:image/png"}, {"cid:pdf@x", "none", "type"},
                                 {"cid:big@x", "none", "size"},                  {"cid:two@x", "none", "ambiguous"},
                                 {"cid:none@x", "none", "dangling"},             {"cid:bin@x", "none", "type"}};
        for (guint i = 0; i < 6; ++i) {
            CAPTURE(want[i][0]);
            CHECK(s(r.ref(0, i), "url") == want[i][0]);
            CHECK(s(r.ref(0, i), "action") == want[i][1]);
            CHECK(s(r.ref(0, i), "reason") == want[i][2]);
            const std::string line = std::string("part 1: ") + want[i][0] + " " +
                                     (std::string(want[i][1]) == "none" ? "left as it is" : want[i][1]) + " (" + want[i][2] + ")";
            CHECK(run.err.find(line) != std::string::npos);
        }
        CHECK(run.out.find("data:image/png;base64," + png_b64) != std::string::npos);
    }
    // Modes that act on nothing here give no reason: check reports only.
    Report c;
    c.load(mimeuri("--check --cid=check " + quote(f)).out);
    for (guint i = 0; i < 6; ++i) CHECK_FALSE(json_object_has_member(c.ref(0, i), "reason"));
}

// Issue 34 item 1: an extracted page shows what the inline page shows when opened as a file.
// Its <base href> is cut (else every file name resolves on the remote host), its other
// relative URLs are made absolute against that base (they keep their meaning; a fragment
// stays, for in-page anchors); crossorigin and integrity are cut where the element's URL
// names a file (a browser refuses a file: image or stylesheet fetched in CORS mode from a
// file: page), kept elsewhere; every file is named with an extension of its type (a browser
// applies a file: stylesheet only from a .css name): load.php -> load.php.css, and an
// application/octet-stream PNG named "pic" -> pic.png.
TEST_CASE("extract: the page loads its files as a file: no base, no crossorigin, names by type")
{
    const std::string png_b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string m =
        "Content-Type: multipart/related; boundary=r\n\n"
        "--r\nContent-Type: text/html\n\n"
        "<html><head><base href=\"https://example.org/dir/\"><link rel=stylesheet crossorigin=\"anonymous\" "
        "integrity=\"sha384-abc\" href=\"cid:css@x\"></head><body><img crossorigin src=\"cid:pic@x\">"
        "<img src=\"remote.png\" crossorigin=\"anonymous\" integrity=\"sha384-r\"><a href=\"page.html?a=1&amp;b=2\">p</a>"
        "<a href=\"#top\">t</a></body></html>\n"
        "--r\nContent-Type: text/css\nContent-ID: <css@x>\nContent-Location: https://example.org/load.php?x=1\n\np{}\n"
        "--r\nContent-Type: application/octet-stream\nContent-ID: <pic@x>\nContent-Disposition: inline; filename=pic\n"
        "Content-Transfer-Encoding: base64\n\n" + png_b64 + "\n--r--\n";
    testing::TempDir d;
    const std::string f = d.file("m.eml", m), dir = d / "out";
    REQUIRE(mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f)).status == 0);
    CHECK(files_under(dir) == "./1/index.html\n./1/load.php.css\n./1/pic.png\n./index.html\n./mimeuri.css\n./pages.tsv\n");
    // The mail's part of the page (mimeuri's head and header come before it; issue 41): the
    // base and every crossorigin/integrity dropped; the remote image not loaded (its URL shown).
    const std::string page = testing::read_file(dir + "/1/index.html");
    CHECK(mail_of(page) ==
          "<link rel=\"stylesheet\" href=\"load.php.css\"><img src=\"pic.png\">"
          "<img alt=\"[remote image not loaded: https://example.org/dir/remote.png]\" title=\"remote image not loaded\">"
          "<a href=\"https://example.org/dir/page.html?a=1&amp;b=2\">p</a><a href=\"#top\">t</a>");
    CHECK(testing::read_file(dir + "/1/load.php.css") == "p{}"); // (the line break before a delimiter is the delimiter's)
}

// Issue 34 item 5: old Mac mail (CR-only line ends) cannot be read: GMime takes the whole
// message for one header field. The report and --verbose say so, where they said nothing
// (no references, no error); the message passes byte for byte.
TEST_CASE("CR-only line ends: what could not be read is reported, not silently nothing")
{
    std::string lf = "Message-ID: <cr@x>\nContent-Type: multipart/related; boundary=r\n\n"
                     "--r\nContent-Type: text/html\n\n<img src=\"cid:p@x\">\n"
                     "--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n";
    std::string cr = lf;
    for (char &c : cr)
        if (c == '\n') c = '\r';
    testing::TempDir d;
    Report a;
    a.load(mimeuri("--check " + quote(d.file("lf.eml", lf))).out);
    CHECK(a.refs(0) == 1); // the same message with LF: one reference, no error
    const std::string f = d.file("cr.eml", cr);
    auto run = mimeuri("--verbose --report=" + quote(d / "r") + " " + quote(f));
    CHECK(run.status == 0);
    CHECK(run.out == cr);
    Report r;
    r.load(testing::read_file(d / "r"));
    JsonArray *errors = json_object_get_array_member(r.messages[0], "errors");
    REQUIRE(json_array_get_length(errors) == 1);
    CHECK(s(json_array_get_object_element(errors, 0), "code") == "unparseable");
    CHECK(s(json_array_get_object_element(errors, 0), "message").find("CR-only line ends") != std::string::npos);
    CHECK(run.err.find("left partly unprocessed") != std::string::npos);
    CHECK(run.err.find("1 unparseable") != std::string::npos);
    CHECK(mimeuri("--strict " + quote(f)).status == 65); // --strict: a message that could not be parsed
}

// Issue 34 item 6: <img src="image001.png"> for a part whose Content-ID is <image001.png>,
// and cid:logo.png for the one part of the related set named logo.png (no Content-ID
// names it). Resolved, saying how they matched; repair writes the cid: URL (the named part
// gets the Content-ID the URL names), inline and extract follow them, in every mode the
// report, the summary header and --verbose agree.
TEST_CASE("a Content-ID written without cid: and a cid: naming a file resolve in every mode")
{
    const std::string png_b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string m =
        "Message-ID: <n@x>\nContent-Type: multipart/related; boundary=r\n\n"
        "--r\nContent-Type: text/html\n\n<img src=\"image001.png\"><img src=\"cid:logo.png\"><a href=\"other.html\">o</a>\n"
        "--r\nContent-Type: image/png\nContent-ID: <image001.png>\nContent-Transfer-Encoding: base64\n\n" + png_b64 + "\n"
        "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=logo.png\nContent-Transfer-Encoding: base64\n\n" +
        png_b64 + "\n--r--\n";
    testing::TempDir d;
    const std::string f = d.file("m.eml", m);
    for (const char *mode : {"check", "repair", "inline", "extract"}) {
        CAPTURE(mode);
        testing::TempDir x;
        Report r;
        auto run = run_cid_mode(mode, f, x, r, "--verbose ");
        REQUIRE(run.status == 0);
        CHECK(run.out.find("Mimeuri-Refs: resolved=2 dangling=0 ambiguous=0") != std::string::npos);
        CHECK(run.err.find(" 0 dangling references") != std::string::npos);
        REQUIRE(r.refs(0) == 2); // other.html names no part: an ordinary link, not listed
        const std::string action = cid_action(mode);
        const char *want[][4] = {{"image001.png", "location", "content-id-without-scheme", "2"},
                                 {"cid:logo.png", "cid", "filename", "3"}};
        for (guint i = 0; i < 2; ++i) {
            CAPTURE(want[i][0]);
            CHECK(s(r.ref(0, i), "url") == want[i][0]);
            CHECK(s(r.ref(0, i), "kind") == want[i][1]);
            CHECK(s(r.ref(0, i), "status") == "resolved");
            CHECK(s(r.ref(0, i), "matched") == want[i][2]);
            CHECK(s(r.ref(0, i), "target") == want[i][3]);
            CHECK(s(r.ref(0, i), "action") == action);
        }
        if (std::string(mode) == "repair") {
            std::string expected = m;
            expected.replace(expected.find("src=\"image001.png\""), 18, "src=\"cid:image001.png\"");
            const std::string logo = "filename=logo.png\nContent-Transfer-Encoding: base64\n";
            expected.insert(expected.find(logo) + logo.size(), "Content-ID: <logo.png>\n");
            CHECK(run.out.substr(run.out.find("\n--r\n")) == expected.substr(expected.find("\n--r\n")));
        } else if (std::string(mode) == "inline") {
            CHECK(run.out.find("<img src=\"data:image/png;base64," + png_b64 + "\"><img src=\"data:image/png;base64," + png_b64 +
                               "\"><a href=\"other.html\">") != std::string::npos);
        } else if (std::string(mode) == "extract") {
            CHECK(files_under(x / "out") ==
                  "./1/index.html\n./1/logo.png\n./1/part-2.png\n./index.html\n./mimeuri.css\n./pages.tsv\n");
            CHECK(mail_of(testing::read_file(x / "out/1/index.html")) ==
                  "<img src=\"part-2.png\"><img src=\"logo.png\"><a href=\"other.html\">o</a>");
        }
    }
}

// ... and never when the name is not unique in the related set, never across related sets:
// there the references are what they were (an ordinary link; a dangling cid:) and nothing
// changes.
TEST_CASE("a Content-ID written without cid: or a file name: never a guess, never another related set")
{
    const std::string html = "--r\nContent-Type: text/html\n\n<img src=\"image001.png\"><img src=\"cid:logo.png\">\n";
    const std::string named = "Content-Type: image/png\nContent-ID: <image001.png>\n"
                              "Content-Disposition: inline; filename=logo.png\n\nAAAA\n";
    const std::string twice = "Content-Type: multipart/related; boundary=r\n\n" + html + "--r\n" + named + "--r\n" +
                              "Content-Type: image/gif; name=logo.png\nContent-ID: <image001.png>\n\nBBBB\n--r--\n";
    const std::string apart = "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/related; boundary=r\n\n" +
                              html + "--r--\n--o\nContent-Type: multipart/related; boundary=s\n\n--s\n" + named + "--s--\n--o--\n";
    for (const auto &m : {twice, apart}) {
        testing::TempDir d;
        const std::string f = d.file("m.eml", m);
        for (const char *mode : {"check", "repair", "inline"}) {
            CAPTURE(mode);
            auto run = mimeuri(std::string("--summary-header --cid=") + mode + " --report=" + quote(d / "r") + " " + quote(f));
            REQUIRE(run.status == 0);
            CHECK(run.out.find("Mimeuri-Refs: resolved=0 dangling=1 ambiguous=0") != std::string::npos);
            Report r;
            r.load(testing::read_file(d / "r"));
            REQUIRE(r.refs(0) == 1);
            CHECK(s(r.ref(0, 0), "url") == "cid:logo.png");
            CHECK(s(r.ref(0, 0), "status") == "dangling");
            CHECK_FALSE(json_object_has_member(r.ref(0, 0), "matched"));
            CHECK(s(r.ref(0, 0), "action") == "none");
        }
        CHECK(mimeuri(quote(f)).out == m); // repair: nothing to repair
    }
}

// Issue 34 item 2: a saved page's stylesheet part (Chrome's MHTML) names its backgrounds,
// relative to its own Content-Location (RFC 2557 5), and imports other stylesheets. Those
// references are found, resolved against the stylesheet's location (not the page's),
// reported (attr "css"), inlined (the page's inlined stylesheet carries its images
// inlined) and extracted (the extracted stylesheet names the extracted images).
TEST_CASE("references inside a stylesheet part resolve against its Content-Location and are followed")
{
    const std::string png_b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const std::string css = "@import \"more.css\";\n.x { background: url(../img/bg.png) }\n.y { background: url('cid:%3Cdot@x%3E') }\n"
                            ".z { background: url(http://other.example/z.png) } .w { background: url(\"w\\a x.png\") }";
    const std::string m =
        "Message-ID: <css@x>\nContent-Type: multipart/related; boundary=m; type=\"text/html\"\n\n"
        "--m\nContent-Type: text/html\nContent-Location: http://example.org/page/index.html\n\n"
        "<link rel=stylesheet href=\"css/site.css\"><p class=x>hi</p>\n"
        "--m\nContent-Type: text/css\nContent-Location: http://example.org/page/css/site.css\n\n" + css + "\n"
        "--m\nContent-Type: image/png\nContent-Location: http://example.org/page/img/bg.png\nContent-Transfer-Encoding: base64\n\n" +
        png_b64 + "\n"
        "--m\nContent-Type: image/png\nContent-ID: <dot@x>\nContent-Transfer-Encoding: base64\n\n" + png_b64 + "\n"
        "--m\nContent-Type: text/css\nContent-Location: http://example.org/page/css/more.css\n\np{}\n--m--\n";
    testing::TempDir d;
    const std::string f = d.file("m.eml", m);
    for (const char *mode : {"check", "repair", "inline", "extract"}) {
        CAPTURE(mode);
        testing::TempDir x;
        Report r;
        auto run = run_cid_mode(mode, f, x, r);
        REQUIRE(run.status == 0);
        CHECK(run.out.find("Mimeuri-Refs: resolved=4 dangling=0 ambiguous=0") != std::string::npos);
        // The stylesheet's references (http://other.example and w\nx.png name no part: not listed), then the page's.
        REQUIRE(r.refs(0) == 4);
        const char *want[][4] = {{"2", "css", "more.css", "5"},
                                 {"2", "css", "../img/bg.png", "3"},
                                 {"2", "css", "cid:%3Cdot@x%3E", "4"},
                                 {"1", "link@href", "css/site.css", "2"}};
        for (guint i = 0; i < 4; ++i) {
            CAPTURE(want[i][2]);
            CHECK(s(r.ref(0, i), "part") == want[i][0]);
            CHECK(s(r.ref(0, i), "attr") == want[i][1]);
            CHECK(s(r.ref(0, i), "url") == want[i][2]);
            CHECK(s(r.ref(0, i), "status") == "resolved");
            CHECK(s(r.ref(0, i), "target") == want[i][3]);
        }
        if (std::string(mode) == "repair") { // the malformed cid: in the stylesheet, and nothing else
            std::string expected = m;
            expected.replace(expected.find("cid:%3Cdot@x%3E"), 15, "cid:dot@x");
            CHECK(run.out.substr(run.out.find("\n--m\n")) == expected.substr(expected.find("\n--m\n")));
        } else if (std::string(mode) == "inline") {
            // The page's stylesheet is a data: URI of the stylesheet with its images inlined.
            const std::string lead = "<link rel=stylesheet href=\"data:text/css;base64,";
            auto at = run.out.find(lead);
            REQUIRE(at != std::string::npos);
            at += lead.size();
            const std::string b64 = run.out.substr(at, run.out.find('"', at) - at);
            gsize len = 0;
            guchar *sheet = g_base64_decode(b64.c_str(), &len);
            const std::string inlined(reinterpret_cast<const char *>(sheet), len);
            g_free(sheet);
            CHECK(inlined == "@import \"data:text/css;base64,cHt9\";\n.x { background: url(data:image/png;base64," + png_b64 +
                                 ") }\n.y { background: url('data:image/png;base64," + png_b64 +
                                 "') }\n.z { background: url(http://other.example/z.png) } .w { background: url(\"w\\a x.png\") }");
        } else if (std::string(mode) == "extract") {
            CHECK(files_under(x / "out") ==
                  "./1/bg.png\n./1/index.html\n./1/more.css\n./1/part-4.png\n./1/site.css\n./index.html\n./mimeuri.css\n"
                  "./pages.tsv\n");
            CHECK(mail_of(testing::read_file(x / "out/1/index.html")) ==
                  "<link rel=\"stylesheet\" href=\"site.css\"><p class=\"x\">hi</p>");
            // Its references name the files; its other relative URLs are made absolute
            // against its location, as a browser reads them: the decoded line break of
            // url("w\a x.png") is one the URL parser removes (never a line break written).
            CHECK(testing::read_file(x / "out/1/site.css") ==
                  "@import \"more.css\";\n.x { background: url(bg.png) }\n.y { background: url('part-4.png') }\n"
                  ".z { background: url(http://other.example/z.png) } .w { background: url(\"http://example.org/page/css/wx.png\") }");
            CHECK(run.out.find(m.substr(m.find("\n--m\n"))) != std::string::npos); // the message unchanged
        }
    }
    // Bounded as an HTML part is: over --html-max, its references are not looked at, and said so.
    Report big;
    big.load(mimeuri("--check --html-max=100 " + quote(f)).out);
    JsonArray *errors = json_object_get_array_member(big.messages[0], "errors");
    bool css_limit = false;
    for (guint i = 0; i < json_array_get_length(errors); ++i) {
        JsonObject *e = json_array_get_object_element(errors, i);
        css_limit = css_limit || (s(e, "part") == "2" && s(e, "code") == "html-limit");
    }
    CHECK(css_limit);
}
