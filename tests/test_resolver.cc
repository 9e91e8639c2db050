// The reference resolver alone (filters/ref_resolver.hh) over the index of a parsed message
// (filters/ref_index.hh): table-driven cases from RFC 2392 (cid:, mid:) and RFC 2557
// (Content-Location, Content-Base), with the vectors of the specs in ../shared/specs.
#include "ref_resolver.hh"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace mimeuri;
using namespace mimeuri::refs;

namespace {

struct Parsed {
    std::unique_ptr<Source> src; // the context refers to it
    std::unique_ptr<MessageContext> ctx;
    MessageIndex ix;

    explicit Parsed(const std::string &bytes)
    {
        src = std::make_unique<Source>(Source::from_bytes(bytes, "t.eml"));
        Segment seg{0, 0, src->size(), src->size()};
        ctx = MessageContext::parse(*src, seg, 1, false, Limits{});
        REQUIRE(ctx->message());
        ix = index_message(*ctx);
    }
    int node(const std::string &section) const
    {
        for (std::size_t i = 0; i < ix.parts.size(); ++i)
            if (ix.parts[i].section == section) return static_cast<int>(i);
        FAIL("no part " << section);
        return -1;
    }
    std::string section(int node) const { return node < 0 ? "-" : ix.parts[static_cast<std::size_t>(node)].section; }
};

// A multipart/related (with extra headers `related`) whose first part (1) is the HTML that
// refers, followed by `parts` ("Content-...: ...\n" header blocks, numbered 2, 3, ...).
std::string related(const std::vector<std::string> &parts, const std::string &related_headers = "",
                    const std::string &message_id = "<m@example.org>")
{
    std::string m = "Message-ID: " + message_id + "\nContent-Type: multipart/related; boundary=r\n" + related_headers +
                    "\n--r\nContent-Type: text/html\n\n<p>x</p>\n";
    for (const auto &p : parts) m += "--r\nContent-Type: image/png\n" + p + "\nAAAA\n";
    return m + "--r--\n";
}

struct Case {
    const char *what;
    std::string message;
    std::string url;
    RefStatus status;
    std::string target; // section, "-" for none
    bool broken;
};

Target resolve_one(const Parsed &p, const RunIndex &run, const std::string &url, int from)
{
    Resolver r(p.ix, run);
    std::string scheme = url.substr(0, 4);
    for (char &c : scheme) c = static_cast<char>(g_ascii_tolower(c));
    if (scheme == "cid:") return r.cid(url, from, false);
    if (scheme == "mid:") return r.mid(url, from);
    return r.location(url, p.ix.parts[static_cast<std::size_t>(from)].base, from);
}

// One case resolved from part 1 and checked; its target, for checks of a caller's own.
Target check_case(const Case &c, const RunIndex &run)
{
    CAPTURE(c.what);
    CAPTURE(c.url);
    Parsed p(c.message);
    Target t = resolve_one(p, run, c.url, p.node("1"));
    CHECK(status_name(t.status) == std::string(status_name(c.status)));
    CHECK(p.section(t.node) == c.target);
    CHECK(t.broken == c.broken);
    return t;
}

void run_cases(const std::vector<Case> &cases, const RunIndex &run = {})
{
    for (const auto &c : cases) check_case(c, run);
}

} // namespace

TEST_CASE("resolver: cid: as RFC 2392 writes it (the addr-spec %-encoded, no brackets)")
{
    const auto R = RefStatus::Resolved, D = RefStatus::Dangling;
    run_cases({
        // RFC 2392 section 2: cid:foo4%25foo1@bar.net is Content-ID: <foo4%foo1@bar.net>.
        {"%25 is a %", related({"Content-ID: <foo4%foo1@bar.net>\n"}), "cid:foo4%25foo1@bar.net", R, "2", false},
        // RFC 2392's HTML example: <IMG SRC="cid:foo4*foo1@bar.net">.
        {"* as it is", related({"Content-ID: <foo4*foo1@bar.net>\n"}), "cid:foo4*foo1@bar.net", R, "2", false},
        {"other escapes", related({"Content-ID: <a b/c@bar.net>\n"}), "cid:a%20b%2Fc@bar.net", R, "2", true},
        {"the scheme in any case", related({"Content-ID: <x@bar.net>\n"}), "CID:x@bar.net", R, "2", false},
        {"brackets in the URL: broken", related({"Content-ID: <x@bar.net>\n"}), "cid:<x@bar.net>", R, "2", true},
        {"%-encoded brackets: broken", related({"Content-ID: <x@bar.net>\n"}), "cid:%3Cx@bar.net%3E", R, "2", true},
        // RFC 5322 msg-id: the domain is case-insensitive, the local part is not.
        {"domain in another case: broken", related({"Content-ID: <x@bar.net>\n"}), "cid:x@BAR.Net", R, "2", true},
        {"local part in another case", related({"Content-ID: <x@bar.net>\n"}), "cid:X@bar.net", D, "-", false},
        {"never a prefix (img1)", related({"Content-ID: <img10>\n"}), "cid:img1", D, "-", false},
        {"never a prefix (img100)", related({"Content-ID: <img10>\n"}), "cid:img100", D, "-", false},
        {"the id as written, not only as GMime cleans it", related({"Content-ID: < sp@bar.net >\n"}), "cid:sp@bar.net",
         R, "2", false},
        {"no part has it", related({"Content-ID: <x@bar.net>\n"}), "cid:y@bar.net", D, "-", false},
    });
}

TEST_CASE("resolver: a cid: URL that is a part's Content-Location resolves to it (RFC 2557 8.2)")
{
    Parsed p(related({"Content-Location: cid:css-1@mhtml.blink\n", "Content-Location: http://example.org/pic.png\n"}));
    RunIndex run;
    // Blink's MHTML: found through the location, resolved, flagged so that the report says
    // how it matched and repair can give the part the Content-ID the URL names.
    Target t = resolve_one(p, run, "cid:css-1@mhtml.blink", p.node("1"));
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.match == Match::ContentLocation);
    CHECK(t.named_id == "css-1@mhtml.blink");
    CHECK(p.section(t.node) == "2");
    // A cid: URL that is not the Content-Location itself matches nothing.
    Target u = resolve_one(p, run, "cid:pic.png", p.node("1"));
    CHECK(u.status == RefStatus::Dangling);
    CHECK(u.match == Match::AsWritten);
    // A Content-ID always wins over a Content-Location.
    Parsed q(related({"Content-Location: cid:a@x\n", "Content-ID: <a@x>\n"}));
    Target v = resolve_one(q, run, "cid:a@x", q.node("1"));
    CHECK(v.match == Match::AsWritten);
    CHECK(q.section(v.node) == "3");
}

// Issue 34 item 6: two ways real mail names a part that RFC 2392 and 2557 do not define,
// each matched last, inside the referring part's own multipart/related, and only when
// exactly one part there matches.
TEST_CASE("resolver: a Content-ID written without cid:, and a cid: that is a part's file name")
{
    RunIndex run;
    struct Row {
        const char *what;
        std::string message;
        std::string url;
        RefStatus status;
        std::string target;
        Match match;
        bool broken;
    };
    const auto R = RefStatus::Resolved, D = RefStatus::Dangling;
    const auto W = Match::AsWritten, B = Match::ContentIdWithoutScheme, F = Match::Filename, L = Match::ContentLocation;
    // Parts of a related set other than image/png, a file name given in the Content-Type.
    auto related_with = [](const std::string &headers) {
        return "Message-ID: <m@x>\nContent-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<p>x</p>\n"
               "--r\n" + headers + "\nAAAA\n--r--\n";
    };
    // The HTML in one related set, the part in another (or in none), inside a multipart/mixed.
    const std::string apart = "Message-ID: <m@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
                              "--o\nContent-Type: multipart/related; boundary=r\n\n"
                              "--r\nContent-Type: text/html\n\n<p>x</p>\n--r\nContent-Type: image/gif\n\nAAAA\n--r--\n"
                              "--o\nContent-Type: multipart/related; boundary=s\n\n"
                              "--s\nContent-Type: image/png\nContent-ID: <image001.png>\n"
                              "Content-Disposition: inline; filename=logo.png\n\nAAAA\n--s--\n--o--\n";
    const std::string unrelated = "Message-ID: <m@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
                                  "--o\nContent-Type: text/html\n\n<p>x</p>\n"
                                  "--o\nContent-Type: image/png\nContent-ID: <image001.png>\n"
                                  "Content-Disposition: inline; filename=logo.png\n\nAAAA\n--o--\n";
    const std::vector<Row> rows = {
        // <img src="image001.png"> for Content-ID: <image001.png> (fax gateways, some Outlook paths)
        {"a Content-ID as a relative URL", related({"Content-ID: <image001.png>\n"}), "image001.png", R, "2", B, true},
        {"... %-encoded", related({"Content-ID: <image 001.png>\n"}), "image%20001.png", R, "2", B, true},
        {"... the id as written", related({"Content-ID: < image001.png >\n"}), "image001.png", R, "2", B, true},
        {"a Content-Location wins", related({"Content-ID: <image001.png>\n", "Content-Location: image001.png\n"}),
         "image001.png", R, "3", W, false},
        {"a Content-Location that matches several: ambiguous, not a Content-ID",
         related({"Content-ID: <image001.png>\n", "Content-Location: image001.png\n", "Content-Location: image001.png\n"}),
         "image001.png", RefStatus::Ambiguous, "-", W, false},
        {"never a URL with a scheme", related({"Content-ID: <http://example.org/image001.png>\n"}),
         "http://example.org/image001.png", D, "-", W, false},
        {"never a path from the root", related({"Content-ID: </image001.png>\n"}), "/image001.png", D, "-", W, false},
        {"never a fragment", related({"Content-ID: <#top>\n"}), "#top", D, "-", W, false},
        {"never a prefix", related({"Content-ID: <image001.png@x>\n"}), "image001.png", D, "-", W, false},
        {"not unique: two parts with that Content-ID",
         related({"Content-ID: <image001.png>\n", "Content-ID: <image001.png>\n"}), "image001.png", D, "-", W, false},
        {"never in another related set", apart, "image001.png", D, "-", W, false},
        {"never outside a related set", unrelated, "image001.png", D, "-", W, false},
        // cid:logo.png for a part named logo.png (webmail and help-desk tools write these)
        {"a Content-Disposition filename", related({"Content-Disposition: inline; filename=logo.png\n"}), "cid:logo.png",
         R, "2", F, false},
        {"a Content-Type name", related_with("Content-Type: image/png; name=\"logo.png\"\n"), "cid:logo.png", R, "2", F,
         false},
        {"a target with a Content-ID: repair rewrites the URL to it",
         related({"Content-ID: <abc@x>\nContent-Disposition: inline; filename=logo.png\n"}), "cid:logo.png", R, "2", F,
         true},
        {"a malformed cid: URL", related({"Content-Disposition: inline; filename=logo.png\n"}), "cid:<logo.png>", R, "2",
         F, true},
        {"a Content-ID wins",
         related({"Content-Disposition: inline; filename=logo.png\n", "Content-ID: <logo.png>\n"}), "cid:logo.png", R,
         "3", W, false},
        {"a Content-Location wins",
         related({"Content-Disposition: inline; filename=logo.png\n", "Content-Location: cid:logo.png\n"}),
         "cid:logo.png", R, "3", L, false},
        {"not unique: two parts named so",
         related({"Content-Disposition: inline; filename=logo.png\n", "Content-Disposition: inline; filename=logo.png\n"}),
         "cid:logo.png", D, "-", W, false},
        {"not unique: one by filename, one by name",
         related_with("Content-Type: image/png\nContent-Disposition: inline; filename=logo.png\n\nA\n"
                      "--r\nContent-Type: image/png; name=logo.png\n"),
         "cid:logo.png", D, "-", W, false},
        {"the name exactly", related({"Content-Disposition: inline; filename=Logo.png\n"}), "cid:logo.png", D, "-", W,
         false},
        {"never in another related set", apart, "cid:logo.png", D, "-", W, false},
        {"never outside a related set", unrelated, "cid:logo.png", D, "-", W, false},
    };
    for (const auto &row : rows) {
        CAPTURE(row.what);
        Target t = check_case({row.what, row.message, row.url, row.status, row.target, row.broken}, run);
        CHECK(match_name(t.match) == std::string(match_name(row.match)));
        if (row.match == Match::Filename) CHECK(t.named_id == "logo.png");
    }
    // In the HTML's related set: a part outside it with that Content-ID or name is not looked at.
    Parsed q("Message-ID: <m@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
             "--o\nContent-Type: multipart/related; boundary=r\n\n"
             "--r\nContent-Type: text/html\n\n<p>x</p>\n"
             "--r\nContent-Type: image/png\nContent-ID: <image001.png>\nContent-Disposition: inline; filename=logo.png\n\nA\n--r--\n"
             "--o\nContent-Type: image/png\nContent-ID: <image001.png>\nContent-Disposition: inline; filename=logo.png\n\nB\n--o--\n");
    CHECK(q.section(resolve_one(q, run, "image001.png", q.node("1.1")).node) == "1.2");
    CHECK(q.section(resolve_one(q, run, "cid:logo.png", q.node("1.1")).node) == "1.2");
}

TEST_CASE("resolver: Content-Location resolved against its base (RFC 2557 4, 5)")
{
    const auto R = RefStatus::Resolved, D = RefStatus::Dangling;
    const std::string base = "Content-Base: http://www.ietf.cnri.reston.va.us/\n";
    run_cases({
        // RFC 2557's example: an absolute Content-Location, the reference written absolutely.
        {"absolute", related({"Content-Location: http://www.ietf.cnri.reston.va.us/images/ietflogo.gif\n"}),
         "http://www.ietf.cnri.reston.va.us/images/ietflogo.gif", R, "2", false},
        {"relative reference, absolute location",
         related({"Content-Location: http://www.ietf.cnri.reston.va.us/images/ietflogo.gif\n"}, base),
         "images/ietflogo.gif", R, "2", false},
        {"relative location, relative reference", related({"Content-Location: images/ietflogo.gif\n"}, base),
         "images/ietflogo.gif", R, "2", false},
        {"dot segments", related({"Content-Location: images/ietflogo.gif\n"}, base), "./x/../images/ietflogo.gif", R,
         "2", false},
        {"%-encoded octets compare decoded", related({"Content-Location: images/ietf logo.gif\n"}, base),
         "images/ietf%20logo.gif", R, "2", false},
        {"no base: thismessage:/", related({"Content-Location: logo.gif\n"}), "logo.gif", R, "2", false},
        {"another folder", related({"Content-Location: images/ietflogo.gif\n"}, base), "ietflogo.gif", D, "-", false},
        {"a part's own Content-Base", related({"Content-Base: http://a.example/x/\nContent-Location: y.png\n"}, base),
         "http://a.example/x/y.png", R, "2", false},
    });
}

TEST_CASE("resolver: duplicates (RFC 2046 5.1.4; RFC 2387: the nearest multipart/related first)")
{
    auto png = [](const char *cid) { return std::string("Content-Type: image/png\nContent-ID: ") + cid + "\n\nAAAA\n"; };
    std::string m = "Message-ID: <d@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
                    "--o\nContent-Type: multipart/related; boundary=r\n\n"
                    "--r\nContent-Type: text/html\n\n<p>x</p>\n"
                    "--r\nContent-Type: multipart/alternative; boundary=a\n\n"
                    "--a\n" + png("<alt@x>") + "--a\n" + png("<alt@x>") + "--a--\n"
                    "--r\n" + png("<dup@x>") + "--r\n" + png("<dup@x>") + "--r\n" + png("<near@x>") + "--r--\n"
                    "--o\n" + png("<near@x>") + "--o\n" + png("<far@x>") + "--o\n" + png("<far@x>") + "--o--\n";
    Parsed p(m);
    RunIndex run;
    const int html = p.node("1.1");
    struct Row {
        const char *url;
        RefStatus status;
        const char *target;
    } rows[] = {
        {"cid:alt@x", RefStatus::Resolved, "1.2.2"},  // the last alternative
        {"cid:dup@x", RefStatus::Ambiguous, "-"},     // two in the related part, not alternatives
        {"cid:near@x", RefStatus::Resolved, "1.5"},   // inside the nearest related part first
        {"cid:far@x", RefStatus::Ambiguous, "-"},     // outside it: two in a multipart/mixed
    };
    for (const auto &row : rows) {
        CAPTURE(row.url);
        Target t = resolve_one(p, run, row.url, html);
        CHECK(t.status == row.status);
        CHECK(p.section(t.node) == row.target);
    }
}

TEST_CASE("resolver: mid: in the message, its embedded messages, and the run (RFC 2392)")
{
    // RFC 2392's example: mid:960830.1639@XIson.com/partA.960830.1639@XIson.com
    std::string m = related({"Content-ID: <partA.960830.1639@XIson.com>\n"}, "", "<960830.1639@XIson.com>");
    const auto R = RefStatus::Resolved, D = RefStatus::Dangling;
    run_cases({
        {"the RFC's example", m, "mid:960830.1639@XIson.com/partA.960830.1639@XIson.com", R, "2", false},
        {"the message itself", m, "mid:960830.1639@XIson.com", R, "TEXT", false},
        {"the message's domain in another case", m, "MID:960830.1639@xison.COM/partA.960830.1639@XIson.com", R, "2",
         true},
        {"the content-id's local part in another case", m, "mid:960830.1639@XIson.com/PARTA.960830.1639@XIson.com", D,
         "-", false},
        {"a content-id the message lacks", m, "mid:960830.1639@XIson.com/partB@XIson.com", D, "-", false},
        {"/ inside an id is %2F", related({}, "", "<a/b@x>"), "mid:a%2Fb@x", R, "TEXT", false},
    });
    // The top-level entity of the message is node 0 (its section is TEXT for a multipart).
    Parsed p(m);
    CHECK(p.section(0) == "TEXT");

    // Other messages of the run: a lookup in the run's index.
    RunIndex run;
    RunIndex::Entry e;
    e.count = 1;
    e.section = "";
    e.cids["pic@x"] = "2";
    run.add("other@x", e);
    RunIndex::Entry twice;
    twice.count = 1;
    run.add("dup@x", twice);
    twice.index = 2;
    run.add("dup@x", twice);
    Parsed q(related({}));
    Target t = resolve_one(q, run, "mid:other@x/pic@x", q.node("1"));
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.message_id == "other@x");
    CHECK(t.section == "2");
    CHECK(t.node == -1);
    t = resolve_one(q, run, "mid:other@X", q.node("1"));
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.broken);
    CHECK(resolve_one(q, run, "mid:other@x/nope@x", q.node("1")).status == RefStatus::Dangling);
    CHECK(resolve_one(q, run, "mid:dup@x", q.node("1")).status == RefStatus::Ambiguous);
    CHECK(resolve_one(q, run, "mid:nobody@x", q.node("1")).status == RefStatus::Dangling);
}

TEST_CASE("resolver: mid: into an embedded message/rfc822")
{
    std::string m = "Message-ID: <outer@x>\nContent-Type: multipart/mixed; boundary=o\n\n"
                    "--o\nContent-Type: text/html\n\n<p>x</p>\n"
                    "--o\nContent-Type: message/rfc822\n\n"
                    "Message-ID: <inner@x>\nContent-Type: multipart/related; boundary=i\n\n"
                    "--i\nContent-Type: text/html\n\n<p>y</p>\n"
                    "--i\nContent-Type: image/png\nContent-ID: <pic@x>\n\nAAAA\n--i--\n"
                    "--o--\n";
    Parsed p(m);
    RunIndex run;
    Target t = resolve_one(p, run, "mid:inner@x/pic@x", p.node("1"));
    CHECK(t.status == RefStatus::Resolved);
    CHECK(p.section(t.node) == "2.2");
    CHECK(t.message_id.empty()); // in this message, not another of the run
    Target whole = resolve_one(p, run, "mid:inner@x", p.node("1"));
    CHECK(whole.status == RefStatus::Resolved);
    CHECK(p.section(whole.node) == "2");
    // A Content-ID of the outer message is not one of the inner message's.
    CHECK(resolve_one(p, run, "mid:outer@x/pic@x", p.node("1")).status == RefStatus::Dangling);
}

TEST_CASE("run index: each entry given back whole, the first in run order keeping the place, and a worker's share merged")
{
    auto entry = [](std::size_t index, std::size_t input_no, const char *source, std::int64_t offset,
                    const char *section = "", std::map<std::string, std::string> cids = {}) {
        RunIndex::Entry e;
        e.index = index;
        e.input_no = input_no;
        e.source = source;
        e.offset = offset;
        e.section = section;
        e.cids = std::move(cids);
        e.count = 1;
        return e;
    };
    RunIndex run;
    run.add("top@x", entry(3, 0, "in.mbox", 100));
    run.add("emb@x", entry(5, 0, "in.mbox", 900, "2", {{"c@x", "2.1"}}));
    run.add("Top@Example.ORG", entry(1, 1, "other.mbox", 7));
    run.add("emb@x", entry(9, 0, "in.mbox", 2000)); // later: counted, not kept
    run.add("late@x", entry(4, 0, "in.mbox", 1500, "1.2", {{"d@x", "1.2.1"}, {"e@x", "1.2.2"}}));
    run.add("late@x", entry(2, 0, "first.mbox", 50)); // earlier in run order: takes the place
    auto check = [](const RunIndex &r) {
        CHECK(r.size() == 4);
        auto top = r.find("top@x", false);
        REQUIRE(top);
        CHECK(top->first == "top@x");
        CHECK(top->second.index == 3);
        CHECK(top->second.source == "in.mbox");
        CHECK(top->second.offset == 100);
        CHECK(top->second.section.empty());
        CHECK(top->second.count == 1);
        auto emb = r.find("emb@x", false);
        REQUIRE(emb);
        CHECK(emb->second.index == 5);
        CHECK(emb->second.section == "2");
        CHECK(emb->second.cids == std::map<std::string, std::string>{{"c@x", "2.1"}});
        CHECK(emb->second.count == 2);
        auto late = r.find("late@x", false);
        REQUIRE(late);
        CHECK(late->second.index == 2);
        CHECK(late->second.source == "first.mbox");
        CHECK(late->second.section.empty());
        CHECK(late->second.cids.empty());
        CHECK(late->second.count == 2);
        CHECK_FALSE(r.find("top@example.org", false));
        auto ci = r.find("Top@example.org", true); // the domain compared case-insensitively
        REQUIRE(ci);
        CHECK(ci->first == "Top@Example.ORG");
        CHECK(ci->second.source == "other.mbox");
        CHECK(ci->second.input_no == 1);
        CHECK_FALSE(r.find("top@example.org", true)); // the local part is not
        CHECK_FALSE(r.find("none@x", true));
    };
    check(run);
    RunIndex merged; // as the parent takes a --jobs worker's share
    merged.merge(run.save());
    check(merged);
}

// --- A reply's cid: whose part stayed in the message it answers (issue 50): a cid: that names
// no part of its message is looked up in the messages that message answers (In-Reply-To,
// then References from the last: RFC 5322 3.6.4), in the run's index, nearest first.

namespace {

// The reference from the reply's HTML part (1).
Target thread_cid(const Parsed &p, const RunIndex &run, const std::string &url)
{
    return resolve_one(p, run, url, p.node("1"));
}

// A reply: its header fields (In-Reply-To, References), an HTML part, and own images.
std::string reply(const std::string &fields, const std::vector<std::string> &own_cids = {})
{
    std::string m = "Message-ID: <reply@x>\n" + fields + "Content-Type: multipart/related; boundary=r\n\n"
                    "--r\nContent-Type: text/html\n\n<img src=\"cid:logo@x\">\n";
    for (const auto &c : own_cids) m += "--r\nContent-Type: image/png\nContent-ID: <" + c + ">\n\nAAAA\n";
    return m + "--r--\n";
}

// A message of the run with these Content-IDs (each in part 2, 3...); count 1.
RunIndex::Entry message(std::size_t number, const std::vector<std::string> &cids)
{
    RunIndex::Entry e;
    e.count = 1;
    e.index = number;
    e.source = "thread.mbox";
    e.offset = static_cast<std::int64_t>(number) * 100;
    for (std::size_t k = 0; k < cids.size(); ++k) e.cids[cids[k]] = std::to_string(k + 2);
    return e;
}

} // namespace

TEST_CASE("thread: the ids a message answers, nearest first, each once, never its own")
{
    SUBCASE("In-Reply-To, then References from the last")
    {
        Parsed r(reply("In-Reply-To: <parent@x>\nReferences: <root@x> <mid@x> <parent@x>\n"));
        CHECK(r.ix.answers(0) == std::vector<std::string>{"parent@x", "mid@x", "root@x"});
    }
    SUBCASE("a loop: References naming the message itself, and an id twice")
    {
        Parsed r(reply("References: <reply@x> <a@x> <b@x> <a@x> <reply@x>\n"));
        CHECK(r.ix.answers(0) == std::vector<std::string>{"a@x", "b@x"});
    }
    SUBCASE("a sender's long References: the nearest kMaxAnswered")
    {
        std::string refs = "References:";
        for (int i = 0; i < 40; ++i) refs += " <r" + std::to_string(i) + "@x>";
        Parsed r(reply(refs + "\n"));
        const auto a = r.ix.answers(0);
        REQUIRE(a.size() == kMaxAnswered);
        CHECK(a.front() == "r39@x");
        CHECK(a.back() == "r" + std::to_string(40 - kMaxAnswered) + "@x");
    }
    SUBCASE("no thread fields: none")
    {
        CHECK(Parsed(reply("")).ix.answers(0).empty());
    }
}

TEST_CASE("thread: a reply's dangling cid: is found in the message it answers")
{
    RunIndex run;
    run.add("parent@x", message(1, {"logo@x"}));
    Parsed r(reply("In-Reply-To: <parent@x>\n"));
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.match == Match::Thread);
    CHECK(std::string(match_name(t.match)) == "thread");
    CHECK(t.message_id == "parent@x");
    CHECK(t.mid == "parent@x");
    CHECK(t.mid_cid == "logo@x");
    CHECK(t.section == "2");
    CHECK(t.node == -1);
    CHECK(t.in_run);
    CHECK(t.number == 1);
    CHECK(t.source == "thread.mbox");
    CHECK(t.offset == 100);
    // As the URL is written: %-encoded, in brackets (broken: not RFC 2392's form).
    CHECK(thread_cid(r, run, "cid:logo%40x").match == Match::Thread);
    Target padded = thread_cid(r, run, "cid:<logo@x>");
    CHECK(padded.match == Match::Thread);
    CHECK(padded.broken);
}

TEST_CASE("thread: in the grandparent through References, when the parent lacks it")
{
    RunIndex run;
    run.add("root@x", message(1, {"logo@x"}));
    run.add("parent@x", message(2, {"other@x"}));
    Parsed r(reply("In-Reply-To: <parent@x>\nReferences: <root@x> <parent@x>\n"));
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.match == Match::Thread);
    CHECK(t.message_id == "root@x");
    CHECK(t.number == 1);
}

TEST_CASE("thread: the nearest message that has the part wins")
{
    RunIndex run;
    run.add("root@x", message(1, {"logo@x"}));
    run.add("parent@x", message(2, {"x@x", "logo@x"}));
    Parsed r(reply("References: <root@x> <parent@x>\n"));
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.message_id == "parent@x");
    CHECK(t.section == "3");
}

TEST_CASE("thread: a cid: in no message it answers stays dangling")
{
    RunIndex run;
    run.add("parent@x", message(1, {"other@x"}));
    Parsed r(reply("In-Reply-To: <parent@x>\nReferences: <gone@x> <parent@x>\n")); // gone@x: in no index
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.status == RefStatus::Dangling);
    CHECK(t.match == Match::AsWritten);
    CHECK(t.message_id.empty());
    // Compared exactly: a Content-ID in another case is another part.
    CHECK(thread_cid(r, run, "cid:LOGO@x").status == RefStatus::Dangling);
    // No thread fields: nothing looked up.
    RunIndex all;
    all.add("parent@x", message(1, {"logo@x"}));
    CHECK(thread_cid(Parsed(reply("")), all, "cid:logo@x").status == RefStatus::Dangling);
}

TEST_CASE("thread: a part of the reply's own wins over the message it answers")
{
    RunIndex run;
    run.add("parent@x", message(1, {"logo@x"}));
    Parsed r(reply("In-Reply-To: <parent@x>\n", {"logo@x"}));
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.match == Match::AsWritten);
    CHECK(t.message_id.empty());
    REQUIRE(t.node >= 0);
    CHECK(r.ix.parts[static_cast<std::size_t>(t.node)].section == "2");
}

TEST_CASE("thread: an ancestor not in the index is passed over; one several messages carry too")
{
    RunIndex run;
    run.add("root@x", message(1, {"logo@x"}));
    run.add("dup@x", message(2, {"logo@x"}));
    run.add("dup@x", message(3, {"logo@x"})); // two messages with one id: which one is not known
    Parsed r(reply("In-Reply-To: <missing@x>\nReferences: <root@x> <dup@x> <missing@x>\n"));
    Target t = thread_cid(r, run, "cid:logo@x");
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.message_id == "root@x");
}

TEST_CASE("thread: two messages that answer each other do not loop")
{
    // A's References name B and B's name A (a client's loop); each is looked up once.
    RunIndex run;
    run.add("a@x", message(1, {"pic-a@x"}));
    Parsed b("Message-ID: <b@x>\nReferences: <a@x>\nContent-Type: text/html\n\n<img src=\"cid:none@x\">\n");
    run.add("b@x", message(2, {}));
    Parsed a("Message-ID: <a@x>\nReferences: <b@x> <a@x>\nContent-Type: text/html\n\n<img src=\"cid:none@x\">\n");
    CHECK(a.ix.answers(0) == std::vector<std::string>{"b@x"});
    CHECK(thread_cid(a, run, "cid:none@x").status == RefStatus::Dangling);
    CHECK(thread_cid(b, run, "cid:none@x").status == RefStatus::Dangling);
    CHECK(thread_cid(b, run, "cid:pic-a@x").message_id == "a@x");
}
