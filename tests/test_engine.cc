// The per-message engine on its own: a message's bytes through the passes, no run loop, no
// inputs or outputs, as a service calls it.
#include "engine.hh"
#include "external_body.hh"
#include "references.hh"
#include "wire.hh"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace mimeuri;

namespace {

// A related message whose HTML names its image "cid:<img@x>": RFC 2392 wants "cid:img@x"
// (the brackets are not part of the URL), which the references pass repairs.
const std::string broken_cid = "Message-ID: <m1@example.org>\n"
                               "MIME-Version: 1.0\n"
                               "Content-Type: multipart/related; boundary=b\n"
                               "\n"
                               "--b\n"
                               "Content-Type: text/html\n"
                               "\n"
                               "<p><img src=\"cid:&lt;img@x&gt;\"></p>\n"
                               "--b\n"
                               "Content-Type: image/png\n"
                               "Content-ID: <img@x>\n"
                               "Content-Transfer-Encoding: base64\n"
                               "\n"
                               "iVBORw0KGgo=\n"
                               "--b--\n";

std::vector<std::unique_ptr<Pass>> references(RefOptions o = {})
{
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(o));
    return passes;
}

struct Throws final : Pass {
    std::string_view name() const override { return "throws"; }
    Status apply(MessageContext &) override { throw std::runtime_error("boom"); }
};

// Edits a header, then fails with the error given: the edit must not survive.
struct EditsThenFails final : Pass {
    Error error;
    explicit EditsThenFails(Error e) : error(std::move(e)) {}
    std::string_view name() const override { return "edits"; }
    Status apply(MessageContext &ctx) override
    {
        (void)ctx.add_header(ctx.nodes().front(), "X-Edited", " yes\n");
        return error;
    }
};

} // namespace

TEST_CASE("engine: a broken cid: reference is repaired, and only its bytes change")
{
    auto passes = references();
    EngineConfig cfg;
    cfg.report = true;
    cfg.summary = true;
    Engine engine(passes, cfg);
    Plan plan = plan_message(engine, broken_cid);
    CHECK_FALSE(plan.failed());
    REQUIRE(plan.edits.size() == 1);
    std::string out = apply_edits(broken_cid, plan.edits);
    std::string want = broken_cid;
    want.replace(want.find("cid:&lt;img@x&gt;"), 17, "cid:img@x");
    CHECK(out == want);
    CHECK(plan.message_id == "m1@example.org");
    REQUIRE(plan.report);
    REQUIRE(plan.report->refs.size() == 1);
    CHECK(plan.report->refs[0].action == RefEntry::Action::Repaired);
    CHECK(plan.report_line().find("\"action\":\"repaired\"") != std::string::npos);
    CHECK(plan.report_line().back() == '\n');
    CHECK(plan.log_line == "changed, references rewritten=1");
    CHECK(plan.dangling == 0);
}

TEST_CASE("engine: a change made by --summary-header alone is logged as what it is")
{
    RefOptions o;
    o.summary_header = true;
    auto passes = references(o);
    EngineConfig cfg;
    cfg.summary = true;
    Engine engine(passes, cfg);
    std::string m = "Message-ID: <plain@x>\nContent-Type: text/plain\n\nhello\n";
    Plan plan = plan_message(engine, m);
    REQUIRE(plan.edits.size() == 1);
    CHECK(apply_edits(m, plan.edits).find("\nMimeuri-Refs: resolved=0 dangling=0 ambiguous=0\n") != std::string::npos);
    CHECK(plan.log_line == "changed, Mimeuri-Refs field set (--summary-header)");
    // With a repair beside it, both are said.
    Plan both = plan_message(engine, broken_cid);
    CHECK(both.log_line == "changed, references rewritten=1, Mimeuri-Refs field set (--summary-header)");
    // Said from what the pass did, not from how its edit is spelt: a field a sender planted
    // (its value replaced), and a header block that ends without a line break (the field
    // added after one).
    for (const std::string &in : {std::string("Message-ID: <planted@x>\nMimeuri-Refs: resolved=9 dangling=0 ambiguous=0\n"
                                              "Content-Type: text/plain\n\nhello\n"),
                                  std::string("Message-ID: <unended@x>\nSubject: no line break")}) {
        CAPTURE(in);
        Plan p = plan_message(engine, in);
        const std::string out = apply_edits(in, p.edits);
        CHECK(out.find("Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0") != std::string::npos);
        CHECK(out.find("resolved=9") == std::string::npos);
        CHECK(p.log_line == "changed, Mimeuri-Refs field set (--summary-header)");
    }
    // The field there already as it would be written: no edit, nothing said.
    const std::string same = "Message-ID: <same@x>\nMimeuri-Refs: resolved=0 dangling=0 ambiguous=0\n\nhello\n";
    Plan unchanged = plan_message(engine, same);
    CHECK(apply_edits(same, unchanged.edits) == same);
    CHECK(unchanged.log_line == "unchanged");
}

TEST_CASE("engine: a message with nothing to change has no edit; reports only when asked")
{
    auto passes = references();
    Engine engine(passes, {});
    std::string m = "Message-ID: <plain@x>\nContent-Type: text/plain\n\nhello\n";
    Plan plan = plan_message(engine, m);
    CHECK(plan.edits.empty());
    CHECK(apply_edits(m, plan.edits) == m);
    CHECK_FALSE(plan.report); // no report asked for: the plan carries none
    CHECK(plan.report_line().empty());
    CHECK(plan.log_line.empty());
}

TEST_CASE("engine: a pass that throws fails the message with a cause and no edit")
{
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(RefOptions{}));
    passes.push_back(std::make_unique<Throws>());
    EngineConfig cfg;
    cfg.report = true;
    Engine engine(passes, cfg);
    Plan plan = plan_message(engine, broken_cid);
    CHECK(plan.failed());
    CHECK(plan.cause == "throws: internal error: boom");
    CHECK(plan.edits.empty()); // the references pass's repair is not kept either
    REQUIRE(plan.report);
    CHECK_FALSE(plan.report->changed);
    REQUIRE_FALSE(plan.report->errors.empty());
    CHECK(std::string(json_name(plan.report->errors.back().code)) == "internal");
}

TEST_CASE("engine: a limit or invalid input leaves the message as it came, reported; other errors fail it")
{
    struct Case {
        Error error;
        bool failed;
        const char *reported; // the report's error code, or the cause
    };
    const Case cases[] = {
        {Error::limit("time limit"), false, "limit"},
        {Error{Code::DataErr, "a label piece too long"}, false, "invalid"},
        {Error{Code::IoErr, "disk gone"}, true, "edits: disk gone"},
        {Error{Code::Software, "a bug"}, true, "edits: a bug"},
    };
    for (const Case &c : cases) {
        CAPTURE(c.error.message);
        std::vector<std::unique_ptr<Pass>> passes;
        passes.push_back(std::make_unique<EditsThenFails>(c.error));
        EngineConfig cfg;
        cfg.report = true;
        Engine engine(passes, cfg);
        Plan plan = plan_message(engine, broken_cid);
        CHECK(plan.failed() == c.failed);
        CHECK(plan.edits.empty());
        CHECK(plan.unprocessed == !c.failed);
        if (c.failed) CHECK(plan.cause == c.reported);
        else {
            REQUIRE(plan.report);
            REQUIRE(plan.report->errors.size() == 1);
            CHECK(json_name(plan.report->errors[0].code) == std::string(c.reported));
        }
    }
    CHECK(Error{Code::DataErr, "x"}.kind == Kind::Invalid); // DataErr alone does not mean a limit
    CHECK(Error::limit("x").code == Code::DataErr);
}

TEST_CASE("engine: a message whose edits are dropped reports no action as done")
{
    // Issue 31 (10): a later pass fails (or stops at a limit, or the mboxcl2 length cannot be
    // kept): the message is written as it came, so the report must not claim the references
    // pass's repair nor the external-body pass's rewrite (README: "An action is reported only
    // for an edit that is in the output").
    std::string m = broken_cid;
    m.replace(m.find("--b--\n"), 6,
              "--b\nContent-Type: message/external-body; access-type=URL;\n URL=http://example.org/a\n\n"
              "Content-Type: text/plain\n\n--b--\n");
    const Error errors[] = {Error{Code::Software, "a bug"}, Error{Code::IoErr, "disk gone"}, Error::limit("time limit"),
                            Error{Code::DataErr, "invalid"}};
    for (int throws = 0; throws < 2; ++throws)
        for (const Error &e : errors) {
            CAPTURE(throws);
            CAPTURE(e.message);
            std::vector<std::unique_ptr<Pass>> passes;
            passes.push_back(std::make_unique<ReferencesPass>(RefOptions{}));
            passes.push_back(std::make_unique<ExternalBodyPass>(ExternalBodyOptions{}));
            if (throws) passes.push_back(std::make_unique<Throws>());
            else passes.push_back(std::make_unique<EditsThenFails>(e));
            EngineConfig cfg;
            cfg.report = true;
            cfg.summary = true;
            Engine engine(passes, cfg);
            Plan plan = plan_message(engine, m);
            CHECK(plan.edits.empty());
            REQUIRE(plan.report);
            CHECK_FALSE(plan.report->changed);
            REQUIRE(plan.report->refs.size() == 1);
            CHECK(plan.report->refs[0].status == RefEntry::Status::Resolved);
            CHECK(plan.report->refs[0].action == RefEntry::Action::None);
            REQUIRE(plan.report->external_bodies.size() == 1);
            const ExternalBodyEntry &eb = plan.report->external_bodies[0];
            CHECK(eb.status != ExternalBodyEntry::Status::Normalized);
            CHECK(eb.url == eb.url_before); // the URL as it is in the output
            const std::string line = plan.report_line();
            CHECK(line.find("\"repaired\"") == std::string::npos);
            CHECK(line.find("\"normalized\"") == std::string::npos);
            CHECK(plan.log_line.find("rewritten") == std::string::npos);
            if (throws) break;
        }
    // The same passes with nothing failing do both (the message above is one they change).
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(RefOptions{}));
    passes.push_back(std::make_unique<ExternalBodyPass>(ExternalBodyOptions{}));
    EngineConfig cfg;
    cfg.report = true;
    Engine engine(passes, cfg);
    Plan plan = plan_message(engine, m);
    REQUIRE(plan.report);
    CHECK(plan.report->changed);
    CHECK(plan.report->refs[0].action == RefEntry::Action::Repaired);
    CHECK(plan.report->external_bodies[0].status == ExternalBodyEntry::Status::Normalized);
}

TEST_CASE("engine: mid: resolves against a message indexed before, in the same engine")
{
    RefOptions o;
    o.mid = RefOptions::Mid::Check;
    auto passes = references(o);
    EngineConfig cfg;
    cfg.report = true; // --mid=check shows what it finds only in a report (or a log line)
    Engine engine(passes, cfg);
    REQUIRE(engine.wants_index());
    std::string later = "Message-ID: <b@x>\nContent-Type: text/html\n\n<a href=\"mid:a@x\">earlier</a>\n";
    Plan before = plan_message(engine, later);
    CHECK(before.dangling == 1);
    CHECK(before.dangling_mid == 1);
    CHECK(before.waits == std::vector<std::string>{"a@x"});
    CHECK_FALSE(engine.worth_replanning(before)); // nothing new in the index: the plan stands
    (void)plan_message(engine, "Message-ID: <a@X>\nContent-Type: text/plain\n\nfirst\n");
    CHECK(engine.worth_replanning(before)); // the domain compares case-insensitively (RFC 5322)
    (void)plan_message(engine, "Message-ID: <a@x>\nContent-Type: text/plain\n\nfirst\n");
    Plan after = plan_message(engine, later);
    CHECK(after.dangling == 0);
}

TEST_CASE("engine: the run keeps a mid: index only where what it finds can show")
{
    auto wants = [](RefOptions o, bool report, bool summary) {
        auto passes = references(o);
        EngineConfig cfg;
        cfg.report = report;
        cfg.summary = summary;
        Engine e(passes, cfg);
        return e.wants_index();
    };
    RefOptions check;
    CHECK_FALSE(wants(check, false, false)); // the default job: --mid=check, nothing reported
    CHECK(wants(check, true, false));        // a report (or the summary on a terminal)
    CHECK(wants(check, false, true));        // a log line (--syslog, the service)
    RefOptions repair;
    repair.mid = RefOptions::Mid::Repair;
    CHECK(wants(repair, false, false));
    RefOptions url;
    url.mid_url = "https://lists.example/{id}";
    CHECK(wants(url, false, false));
    RefOptions header;
    header.summary_header = true;
    CHECK(wants(header, false, false));
    RefOptions extract;
    extract.cid = RefOptions::Cid::Extract;
    extract.extract_dir = "/nonexistent";
    extract.mid = RefOptions::Mid::Off;
    CHECK(wants(extract, false, false));
    RefOptions off;
    off.mid = RefOptions::Mid::Off;
    CHECK_FALSE(wants(off, true, true));
    // Without an index a dangling mid: reference changes nothing and waits for nothing.
    auto passes = references(check);
    Engine engine(passes, {});
    const std::string later = "Message-ID: <b@x>\nContent-Type: text/html\n\n<a href=\"mid:a@x\">earlier</a>\n";
    (void)plan_message(engine, "Message-ID: <a@x>\nContent-Type: text/plain\n\nfirst\n");
    Plan p = plan_message(engine, later);
    CHECK(p.edits.empty());
    CHECK_FALSE(p.report.has_value());
}

TEST_CASE("engine: a plan travels between processes unchanged")
{
    Plan p;
    p.cause = "a cause";
    p.message_id = "id@x";
    p.unprocessed = true;
    p.dangling = 3;
    p.dangling_mid = 2;
    MessageReport &rep = p.report.emplace();
    rep.number = 7;
    rep.source = "in.mbox";
    rep.offset = 1234;
    rep.message_id = "id@x";
    rep.changed = true;
    RefEntry ref;
    ref.part = "1";
    ref.attr = "img@src";
    ref.url = "cid:a\xff";
    ref.kind = RefEntry::Kind::Location;
    ref.status = RefEntry::Status::Ambiguous;
    ref.matched = "filename";
    ref.action = RefEntry::Action::Kept;
    ref.reason = "signed";
    ref.kept = "dkim";
    ref.target = "2";
    rep.refs = {ref, RefEntry{}};
    ExternalBodyEntry eb;
    eb.part = "3";
    eb.url = "ftp://a/b";
    eb.inner = ExternalBodyEntry::Fields{{"content-id", "<x>"}, {"content-type", "text/plain"}};
    eb.original = ExternalBodyEntry::Fields{{"site", "a"}};
    eb.status = ExternalBodyEntry::Status::Converted;
    eb.reason = "r";
    rep.external_bodies = {eb, ExternalBodyEntry{}};
    rep.labels = {{"1", "ContentType:text/html", "pgp"}, {"2", "x", std::nullopt}};
    rep.add_error("1", ErrorCode::Html, "bad");
    rep.set_unreferenced({{"2", "TEXT"}});
    rep.add_kept("", "summary-header", "dkim");
    rep.set_signatures({{"dkim", "", SignatureEntry::State::Intact, true, "example.org", "sel", ""}});
    p.log_line = "changed";
    p.edits = {{10, 20, "text\r\nwith a line break"}, {0, 0, ""}};
    p.waits = {"a@x", ""};
    p.at_take = std::string("folder\0bytes", 12);
    Plan q = deserialize(serialize(p));
    CHECK(q.cause == p.cause);
    CHECK(q.message_id == p.message_id);
    CHECK(q.unprocessed);
    CHECK(q.dangling == 3);
    CHECK(q.dangling_mid == 2);
    REQUIRE(q.report);
    CHECK(q.report->number == p.report->number);
    CHECK(q.report->offset == p.report->offset);
    CHECK(q.report->refs[0].kept == "dkim");
    CHECK(q.report->refs[0].reason == "signed");
    CHECK(q.report->extras() == p.report->extras()); // "unreferenced" before "kept", as set
    CHECK(q.report_line() == p.report_line());
    Plan none;
    CHECK_FALSE(deserialize(serialize(none)).report);
    CHECK(q.log_line == p.log_line);
    REQUIRE(q.edits.size() == 2);
    CHECK(q.edits[0].begin == 10);
    CHECK(q.edits[0].end == 20);
    CHECK(q.edits[0].text == p.edits[0].text);
    CHECK(q.waits == p.waits);
    CHECK(q.at_take == p.at_take);
    CHECK_THROWS(deserialize(serialize(p).substr(0, 5)));
}

TEST_CASE("a worker's record is read back only when each enum, bool and integer holds one of its values")
{
    // An entry written with a code no ErrorCode has: refused when read, not cast.
    ErrorEntry bad{"1", static_cast<ErrorCode>(kErrorCodes), "x"};
    CHECK_THROWS_AS(wire::decode<ErrorEntry>(wire::encode(bad)), std::runtime_error);
    ErrorEntry last{"1", ErrorCode::Label, "x"};
    CHECK(wire::decode<ErrorEntry>(wire::encode(last)).code == ErrorCode::Label);
    // A sysexits code between the values (66 NoInput, 70 Software): refused.
    CHECK_THROWS_AS(wire::decode<Code>(wire::encode(static_cast<Code>(67))), std::runtime_error);
    CHECK(wire::decode<Code>(wire::encode(Code::TempFail)) == Code::TempFail);
    // A bool written as 2, an int past its range, a presence flag of 2.
    CHECK_THROWS_AS(wire::decode<bool>(wire::encode(std::size_t{2})), std::runtime_error);
    CHECK_THROWS_AS(wire::decode<int>(wire::encode(std::int64_t{1} << 40)), std::runtime_error);
    CHECK(wire::decode<int>(wire::encode(-5)) == -5);
    CHECK(wire::decode<std::int64_t>(wire::encode(std::int64_t{-1})) == -1);
    CHECK_THROWS_AS(wire::decode<std::optional<std::string>>(wire::encode(std::size_t{2})), std::runtime_error);
    // A count larger than the bytes that follow: refused at the bytes' end, nothing allocated for it.
    CHECK_THROWS_AS(wire::decode<std::vector<std::string>>(wire::encode(std::size_t{1} << 60)), std::runtime_error);
    std::map<ErrorCode, std::size_t> m{{ErrorCode::Html, 3}, {ErrorCode::Limit, 1}};
    CHECK(wire::decode<decltype(m)>(wire::encode(m)) == m);
}

TEST_CASE("apply_edits: edits in any order; overlapping ones are refused")
{
    CHECK(apply_edits("abcdef", {{4, 5, "E"}, {0, 1, "A"}}) == "AbcdEf");
    CHECK(apply_edits("abc", {{3, 3, "!"}}) == "abc!");
    CHECK_THROWS_AS(apply_edits("abcdef", {{0, 3, "x"}, {2, 4, "y"}}), std::invalid_argument);
    CHECK_THROWS_AS(apply_edits("abc", {{2, 9, "x"}}), std::invalid_argument);
}
