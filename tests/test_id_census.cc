// The census of an mbox's Message-IDs (src/input/id_census.hh): whatever id GMime gives a message of
// the input, or one embedded in it, the census never rules out; what it cannot read as GMime
// does leaves it unsure (it rules nothing out). tests/test_corpus_census.cc holds the same
// over every corpus message; tests/test_hostile_run.cc has the run's side (ForwardHold).
#include "id_census.hh"
#include "mbox.hh"
#include "message.hh"
#include "mid_store.hh"

#include <doctest/doctest.h>

#include <limits>

using namespace mimeuri;

namespace {

// The census of mbox, split `budget` bytes at a time.
IdCensus census_of(const std::string &mbox, std::int64_t budget = std::numeric_limits<std::int64_t>::max())
{
    IdCensus c;
    Source s = Source::from_bytes(mbox, "t");
    Splitter sp(s, Format::Mbox);
    sp.census(&c);
    std::vector<Segment> segs;
    for (;;) {
        auto r = sp.step(segs, budget);
        REQUIRE(r.ok());
        if (*r) break;
    }
    return c;
}

// The ids the run's index learns from mbox (mid_store.cc messages_of, as RunIndex::add_message
// reads them), each message parsed whole by GMime.
std::vector<std::string> gmime_ids(const std::string &mbox)
{
    Source s = Source::from_bytes(mbox, "t");
    auto segs = split(s, Format::Mbox);
    REQUIRE(segs.ok());
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < segs->size(); ++i) {
        auto ctx = MessageContext::parse(s, (*segs)[i], i + 1, true, Limits{});
        for (const StoredMessage &m : messages_of(*ctx)) ids.push_back(m.message_id);
    }
    return ids;
}

std::string message(const std::string &header, const std::string &body = "body\n")
{
    return "From a@x Mon Jan  1 00:00:00 2024\nSubject: t\n" + header + "\n" + body + "\n";
}

} // namespace

TEST_CASE("census: the id GMime gives a Message-ID field, however it is written, is never ruled out")
{
    const char *fields[] = {
        "Message-ID: <a1@example.org>\n",
        "message-id:<a2@example.org>\n",
        "MESSAGE-ID \t: <a3@example.org>\n",     // blanks before the colon (RFC 5322 4.5.3)
        "Message-ID:\n <a4@example.org>\n",        // folded
        "Message-ID: <a5\n @example.org>\n",       // folded inside the id
        "Message-ID: <a6@example.org> (a comment)\n",
        "Message-ID: (first) <a7(in)@example.org>\n",
        "Message-ID: <a8@example.org.>\n",         // a trailing dot, which GMime drops
        "Message-ID: < a9 @ example.org >\n",
        "Message-ID: <a10@example.\xd1\x81\xd1\x80\xd0\xb1>\n", // UTF-8 (RFC 6532)
        "Message-ID: =?utf-8?q?<a11@example.org>?=\n",          // an encoded word
        "Message-ID: a12@example.org\n",           // no brackets
        "Message-ID: <a13@example.org>\r\n",
        "Message-ID: <a14@Example.ORG>\n",
        "Message-ID: <a15@example.org>\nMessage-ID: <a16@example.org>\n", // two fields
    };
    for (const char *f : fields) {
        CAPTURE(f);
        const std::string mb = message(f);
        IdCensus c = census_of(mb);
        CHECK(c.complete());
        std::vector<std::string> ids = gmime_ids(mb);
        REQUIRE(ids.size() == 1);
        CHECK_FALSE(ids[0].empty());
        CHECK_FALSE(c.rules_out({ids[0]}));
        CHECK(c.rules_out({"nobody@nowhere.example"}));
    }
    // The index answers an id whose domain differs in case: so does the census.
    IdCensus c = census_of(message("Message-ID: <b1@Example.ORG>\n"));
    CHECK_FALSE(c.rules_out({"b1@example.org"}));
    CHECK_FALSE(c.rules_out({"b1@EXAMPLE.org"}));
}

TEST_CASE("census: embedded messages, an mboxcl2 body and body lines that look like fields")
{
    const std::string embedded = "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <outer@x>\n"
                                 "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\n"
                                 "Message-ID: <inner@x>\nSubject: in\n\nhello\n--b--\n\n";
    std::string body = "Message-ID: <in-cl2@x>\n\nFrom an unquoted line\n";
    const std::string cl2 = "From b@x Mon Jan  1 00:00:00 2024\nMessage-ID: <cl2@x>\nContent-Type: message/rfc822\nContent-Length: " +
                            std::to_string(body.size()) + "\n\n" + body;
    const std::string looks = message("Message-ID: <m@x>\n", "text\nMessage-Id: <only-in-the-body@x>\n");
    const std::string mb = embedded + cl2 + looks;
    IdCensus c = census_of(mb);
    CHECK(c.complete());
    std::vector<std::string> ids = gmime_ids(mb);
    // outer, inner, cl2, in-cl2 (GMime reads the mboxcl2 body's embedded message too), m
    CHECK(ids.size() == 5);
    for (const std::string &id : ids) {
        CAPTURE(id);
        CHECK_FALSE(c.rules_out({id}));
    }
    CHECK_FALSE(c.rules_out({"in-cl2@x"}));            // only in the lines the split passes over
    CHECK_FALSE(c.rules_out({"only-in-the-body@x"})); // a superset: harmless
    CHECK(c.rules_out({"nowhere@x", "nobody@x"}));
    CHECK_FALSE(c.rules_out({"nowhere@x", "inner@x"})); // one id that may come is enough to wait
}

TEST_CASE("census: what it cannot read as GMime does leaves it unsure")
{
    const std::string unsure[] = {
        message(std::string("Message-ID: <n\0ul@x>\n", 21)),
        message("Message-ID: <bare\rcr@x>\n"),
        message("Message-ID: <" + std::string(9000, 'a') + "@x>\n"),
        message("Message-ID:\n <" + std::string(9000, 'a') + "@x>\n"),
    };
    for (const std::string &mb : unsure) {
        IdCensus c = census_of(mb);
        CHECK_FALSE(c.complete());
        CHECK_FALSE(c.rules_out({"nobody@nowhere.example"}));
    }
    // An mboxcl2 length that ends inside a line: the split reads the rest as a line.
    std::string body = "text\nMessage-ID: <late@x>\n";
    const std::string mid_line = "From b@x Mon Jan  1 00:00:00 2024\nContent-Length: " + std::to_string(body.size() - 5) +
                                 "\n\n" + body.substr(0, body.size() - 5) + "\nFrom c@x Mon Jan  1 00:00:00 2024\n\n";
    CHECK_FALSE(census_of(mid_line).complete());
    // A single message (no split into lines) and a census not yet at the input's end.
    IdCensus single;
    const std::string one = "Message-ID: <one@x>\n\nbody\n";
    Source s = Source::from_bytes(one, "t");
    Splitter sp(s, Format::Message);
    sp.census(&single);
    std::vector<Segment> segs;
    REQUIRE(sp.step(segs, 1 << 20).ok());
    CHECK_FALSE(single.complete());
    IdCensus partial;
    partial.line("Message-ID: <p@x>\n");
    CHECK_FALSE(partial.rules_out({"nobody@x"}));
}

TEST_CASE("census: rules_out says no for a plan that waits for nothing named")
{
    IdCensus c = census_of(message("Message-ID: <a@x>\n"));
    REQUIRE(c.complete());
    CHECK_FALSE(c.rules_out({}));   // the plan did not say what it waits for
    CHECK_FALSE(c.rules_out({""})); // an empty key waits for whatever comes
    CHECK(c.rules_out({"b@x"}));
    CHECK(c.size() == 1);
}

TEST_CASE("census: any step budget gives the same census, fields across read blocks included")
{
    // Over 256 KiB (Source::read_block's block), with a field folded across each block end.
    std::string mb;
    for (int i = 0; mb.size() < (700u << 10); ++i)
        mb += message("Message-ID:\n <id" + std::to_string(i) + "@x>\n", std::string(997, 'x') + "\n");
    const std::vector<std::string> ids = gmime_ids(mb);
    REQUIRE(ids.size() > 600);
    for (std::int64_t budget : {std::int64_t{1}, std::int64_t{977}, std::int64_t{64 << 10},
                                std::numeric_limits<std::int64_t>::max()}) {
        CAPTURE(budget);
        IdCensus c = census_of(mb, budget);
        CHECK(c.complete());
        CHECK(c.size() == ids.size());
        std::size_t missed = 0;
        for (const std::string &id : ids) missed += c.rules_out({id});
        CHECK(missed == 0);
    }
}
