// A reply's cid: whose part stayed in the message it answers (issue 50, "replies whose images
// come back"): the resolver (filters/ref_resolver.hh) looks a cid: that names no part of its
// message up in the messages that message answers (In-Reply-To, then References from the
// last: RFC 5322 3.6.4), in the run's index, nearest first. Threads built by hand here.
#include "ref_resolver.hh"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace mimeuri;
using namespace mimeuri::refs;

namespace {

struct Reply {
    std::unique_ptr<Source> src; // the context refers to it
    std::unique_ptr<MessageContext> ctx;
    MessageIndex ix;

    explicit Reply(const std::string &bytes)
    {
        src = std::make_unique<Source>(Source::from_bytes(bytes, "t.eml"));
        Segment seg{0, 0, src->size(), src->size()};
        ctx = MessageContext::parse(*src, seg, 1, false, Limits{});
        REQUIRE(ctx->message());
        ix = index_message(*ctx);
    }
    // The reference from the HTML part (1, or 1 of the related set).
    Target cid(const RunIndex &run, const std::string &url) const
    {
        Resolver r(ix, run);
        for (std::size_t i = 0; i < ix.parts.size(); ++i)
            if (ix.parts[i].section == "1") return r.cid(url, static_cast<int>(i), false);
        FAIL("no part 1");
        return {};
    }
};

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
        Reply r(reply("In-Reply-To: <parent@x>\nReferences: <root@x> <mid@x> <parent@x>\n"));
        CHECK(r.ix.messages.front().answers == std::vector<std::string>{"parent@x", "mid@x", "root@x"});
    }
    SUBCASE("a loop: References naming the message itself, and an id twice")
    {
        Reply r(reply("References: <reply@x> <a@x> <b@x> <a@x> <reply@x>\n"));
        CHECK(r.ix.messages.front().answers == std::vector<std::string>{"a@x", "b@x"});
    }
    SUBCASE("a sender's long References: the nearest kMaxAnswered")
    {
        std::string refs = "References:";
        for (int i = 0; i < 40; ++i) refs += " <r" + std::to_string(i) + "@x>";
        Reply r(reply(refs + "\n"));
        const auto &a = r.ix.messages.front().answers;
        REQUIRE(a.size() == kMaxAnswered);
        CHECK(a.front() == "r39@x");
        CHECK(a.back() == "r" + std::to_string(40 - kMaxAnswered) + "@x");
    }
    SUBCASE("no thread fields: none")
    {
        CHECK(Reply(reply("")).ix.messages.front().answers.empty());
    }
}

TEST_CASE("thread: a reply's dangling cid: is found in the message it answers")
{
    RunIndex run;
    run.add("parent@x", message(1, {"logo@x"}));
    Reply r(reply("In-Reply-To: <parent@x>\n"));
    Target t = r.cid(run, "cid:logo@x");
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
    CHECK(r.cid(run, "cid:logo%40x").match == Match::Thread);
    Target padded = r.cid(run, "cid:<logo@x>");
    CHECK(padded.match == Match::Thread);
    CHECK(padded.broken);
}

TEST_CASE("thread: in the grandparent through References, when the parent lacks it")
{
    RunIndex run;
    run.add("root@x", message(1, {"logo@x"}));
    run.add("parent@x", message(2, {"other@x"}));
    Reply r(reply("In-Reply-To: <parent@x>\nReferences: <root@x> <parent@x>\n"));
    Target t = r.cid(run, "cid:logo@x");
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
    Reply r(reply("References: <root@x> <parent@x>\n"));
    Target t = r.cid(run, "cid:logo@x");
    CHECK(t.message_id == "parent@x");
    CHECK(t.section == "3");
}

TEST_CASE("thread: a cid: in no message it answers stays dangling")
{
    RunIndex run;
    run.add("parent@x", message(1, {"other@x"}));
    Reply r(reply("In-Reply-To: <parent@x>\nReferences: <gone@x> <parent@x>\n")); // gone@x: in no index
    Target t = r.cid(run, "cid:logo@x");
    CHECK(t.status == RefStatus::Dangling);
    CHECK(t.match == Match::AsWritten);
    CHECK(t.message_id.empty());
    // Compared exactly: a Content-ID in another case is another part.
    CHECK(r.cid(run, "cid:LOGO@x").status == RefStatus::Dangling);
    // No thread fields: nothing looked up.
    RunIndex all;
    all.add("parent@x", message(1, {"logo@x"}));
    CHECK(Reply(reply("")).cid(all, "cid:logo@x").status == RefStatus::Dangling);
}

TEST_CASE("thread: a part of the reply's own wins over the message it answers")
{
    RunIndex run;
    run.add("parent@x", message(1, {"logo@x"}));
    Reply r(reply("In-Reply-To: <parent@x>\n", {"logo@x"}));
    Target t = r.cid(run, "cid:logo@x");
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
    Reply r(reply("In-Reply-To: <missing@x>\nReferences: <root@x> <dup@x> <missing@x>\n"));
    Target t = r.cid(run, "cid:logo@x");
    CHECK(t.status == RefStatus::Resolved);
    CHECK(t.message_id == "root@x");
}

TEST_CASE("thread: two messages that answer each other do not loop")
{
    // A's References name B and B's name A (a client's loop); each is looked up once.
    RunIndex run;
    run.add("a@x", message(1, {"pic-a@x"}));
    Reply b("Message-ID: <b@x>\nReferences: <a@x>\nContent-Type: text/html\n\n<img src=\"cid:none@x\">\n");
    run.add("b@x", message(2, {}));
    Reply a("Message-ID: <a@x>\nReferences: <b@x> <a@x>\nContent-Type: text/html\n\n<img src=\"cid:none@x\">\n");
    CHECK(a.ix.messages.front().answers == std::vector<std::string>{"b@x"});
    CHECK(a.cid(run, "cid:none@x").status == RefStatus::Dangling);
    CHECK(b.cid(run, "cid:none@x").status == RefStatus::Dangling);
    CHECK(b.cid(run, "cid:pic-a@x").message_id == "a@x");
}
