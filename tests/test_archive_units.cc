// `mimeuri archive` (issue 50): the pure parts, each against what it must be by its rule,
// not by the program's output: permanent addresses, links given addresses, the navigation
// spliced into a page, the Atom dates and ids, a thread mbox's From-quoting.
#include "address.hh"
#include "extract.hh"
#include "pages.hh"
#include "views.hh"
#include "wire.hh"

#include <doctest/doctest.h>
#include <glib.h>
#include <glib/gstdio.h>

using namespace mimeuri::archive;

TEST_CASE("archive: a plain Message-ID is its own address, anything else a hash")
{
    CHECK(address_of("20261127.abc@example.org") == "20261127.abc@example.org");
    CHECK(address_of("a+b=c_d-e@x.y") == "a+b=c_d-e@x.y");
    // Not plain: a path, a percent, a tilde, a space, no '@', two '@', a leading dot, "..",
    // non-ASCII, too long, empty: the id's SHA-256, 32 hex digits (the SHA-256 of "" starts
    // e3b0c442 98fc1c14 9afbf4c8 996fb924, FIPS 180-4's known value).
    CHECK(address_of("") == "id-e3b0c44298fc1c149afbf4c8996fb924");
    for (const char *id : {"a/b@x", "../x@y", "a%2f@x", "a~b@x", "a b@x", "nodomain", "a@b@c", ".a@x", "a..b@x", "\xc3\xa9@x",
                           "@x", "x@"}) {
        const std::string a = address_of(id);
        CHECK(a.size() == 35);
        CHECK(a.rfind("id-", 0) == 0);
        CHECK(a.find_first_not_of("id-0123456789abcdef") == std::string::npos);
    }
    CHECK(address_of(std::string(96, 'a') + "@x").rfind("id-", 0) == 0); // 98 bytes: too long
    CHECK(address_of(std::string(94, 'a') + "@x") == std::string(94, 'a') + "@x");
    // The same id always gives the same address; two ids never share one by case.
    CHECK(address_of("a/b@x") == address_of("a/b@x"));
    CHECK(address_of("A@x") != address_of("a@x"));
    // A second message of the id: "~" and 16 hex digits of its bytes' hash.
    const std::string h = sha256_hex("other bytes");
    CHECK(address_of("m@x", h) == "m@x~" + h.substr(0, 16));
    CHECK(is_address("m@x~" + h.substr(0, 16)));
    CHECK(is_address(address_of("a/b@x")));
    for (const char *bad : {"index.html", "feed.atom", "mimeuri.css", "by-date", "by-thread", "threads", ".mimeuri", "..", "",
                            "m@x~12", "id-xyz", "a/b@x"})
        CHECK_MESSAGE(!is_address(bad), bad);
}

TEST_CASE("archive: links to the batch's folders get the addresses, nothing else")
{
    const std::vector<std::string> addrs{"a@x", "b@x"};
    CHECK(give_addresses(R"(<a href="../2/index.html">)", addrs) == R"(<a href="../b@x/index.html">)");
    CHECK(give_addresses(R"(<img src='../1/i.png'> url(../2/c.png))", addrs) == R"(<img src='../a@x/i.png'> url(../b@x/c.png))");
    // Not a folder of the batch, not at a URL's start, not a number, the top: left alone.
    for (const char *same : {R"(href="../3/index.html")", R"(href="x../1/y")", R"(href="../index.html")", R"(../1/ in text)",
                             R"(href="../0/x")", R"(href="../12345678901234567890/x")", R"(href="../1")"})
        CHECK(give_addresses(same, addrs) == same);
}

TEST_CASE("archive: the navigation goes into the page's room, and again over itself")
{
    const std::string room(mimeuri::kNavRoom, ' ');
    const std::string page = "<head><title>x</title></head><nav><a>index</a>" + std::string(mimeuri::kNavMarker) + room +
                             "</nav><main>" + std::string(mimeuri::kNavMarker) + "</main>";
    auto once = with_nav(page, "<a>one</a>");
    REQUIRE(once);
    CHECK(*once == "<head><title>x</title></head><nav><a>index</a>" + std::string(mimeuri::kNavMarker) + "<a>one</a>" +
                       std::string(kNavEnd) + "</nav><main>" + std::string(mimeuri::kNavMarker) + "</main>");
    auto twice = with_nav(*once, "<a>two, longer</a>");
    REQUIRE(twice);
    CHECK(*twice == "<head><title>x</title></head><nav><a>index</a>" + std::string(mimeuri::kNavMarker) + "<a>two, longer</a>" +
                        std::string(kNavEnd) + "</nav><main>" + std::string(mimeuri::kNavMarker) + "</main>");
    // A marker only inside the mail (after <main) is not ours.
    CHECK(!with_nav("<main>" + std::string(mimeuri::kNavMarker) + room, "<a>x</a>"));
}

TEST_CASE("archive: Atom dates and entry ids")
{
    CHECK(rfc3339(0) == "1970-01-01T00:00:00Z");
    CHECK(rfc3339(1764208080) == "2025-11-27T01:48:00Z"); // date -u -d @1764208080
    const std::string u = name_uuid("feed/a@x");
    CHECK(u == name_uuid("feed/a@x"));
    CHECK(u != name_uuid("feed/b@x"));
    REQUIRE(u.size() == 45);
    CHECK(u.substr(0, 9) == "urn:uuid:");
    CHECK(u[9 + 14] == '5');                                   // RFC 4122 4.1.3: version 5
    CHECK(std::string("89ab").find(u[9 + 19]) != std::string::npos); // 4.1.1: the variant
}

TEST_CASE("archive: a thread mbox's messages, as read or mboxrd-quoted")
{
    // From an mbox: the From_ line, the bytes and the separator exactly as read.
    CHECK(mbox_chunk("From a@b Thu Nov 27 01:48:00 2025\n", "S: x\n\n>From here\n", true, "\n", 0) ==
          "From a@b Thu Nov 27 01:48:00 2025\nS: x\n\n>From here\n\n");
    // The input's last message (nothing followed it): one empty line after it, as a message
    // after it in the input would have had, and none added when it has one.
    CHECK(mbox_chunk("From a@b x\n", "S: x\n\nbody\n\n", true, "", 0) == "From a@b x\nS: x\n\nbody\n\n");
    CHECK(mbox_chunk("From a@b x\n", "S: x\n\nbody", true, "", 0) == "From a@b x\nS: x\n\nbody\n\n");
    // From a file: mboxrd (a line ">*From " gets one '>' more), a From_ line made, a final
    // line break and the separator added.
    CHECK(mbox_chunk("", "S: x\n\nFrom me\n>From you\n>>From them\nFromage", false, "", 1764208080) ==
          "From MAILER-DAEMON Thu Nov 27 01:48:00 2025\nS: x\n\n>From me\n>>From you\n>>>From them\nFromage\n\n");
}

TEST_CASE("--cid=extract: a folder that cannot be written when taken takes back what the plan claimed")
{
    using namespace mimeuri;
    char *tmp = g_dir_make_tmp("mimeuri-take-XXXXXX", nullptr);
    REQUIRE(tmp);
    const std::string top = tmp;
    g_free(tmp);
    // Folder 1 is taken by a file: the message's folder cannot be made.
    REQUIRE(g_file_set_contents((top + "/1").c_str(), "x", 1, nullptr));
    Plan plan;
    plan.message_id = "x@example.org";
    plan.report.emplace();
    MessageReport &r = *plan.report;
    r.number = 1;
    r.source = "in.mbox";
    r.message_id = "x@example.org";
    r.changed = true;
    RefEntry x;
    x.part = "1";
    x.attr = "img@src";
    x.url = "cid:a@x";
    x.status = RefEntry::Status::Resolved;
    x.action = RefEntry::Action::Extracted;
    x.target = "2";
    RefEntry y = x;
    y.action = RefEntry::Action::Repaired;
    r.refs = {x, y};
    r.add_error("1", ErrorCode::Html, "bad markup");
    plan.at_take = wire::encode(FolderFiles{top, {{"index.html", "<p>"}}, 1, "row\n"});
    ExtractFiles hook;
    Status s = hook.take(plan);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.rfind("references: ", 0) == 0);
    // The reference extracted is "none" with the reason "extract", the one repaired stays, the
    // message is not changed, and the error says why (docs/report.md).
    const std::string json = r.to_json();
    CHECK(json.find("\"changed\":false") != std::string::npos);
    CHECK(json.find("\"action\":\"none\",\"reason\":\"extract\"") != std::string::npos);
    CHECK(json.find("\"action\":\"repaired\"") != std::string::npos);
    CHECK(json.find("{\"part\":\"\",\"code\":\"extract\",\"message\":\"refusing " + top + "/1: not a directory\"}") !=
          std::string::npos);
    CHECK(hook.finish().ok()); // no folder written: no top files
    CHECK_FALSE(g_file_test((top + "/index.html").c_str(), G_FILE_TEST_EXISTS));
    g_unlink((top + "/1").c_str());
    g_rmdir(top.c_str());
}
