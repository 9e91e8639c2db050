// A pass's own section of the report (src/mime/report_section.hh, issue 49 item 1), from the
// outside: a section declared here alone, as a new pass declares its own in filters/, is
// written as its JSON member in the order first made, sent between processes, undone with
// the message's edits and counted in the log line and --summary-header's field; the core
// names none of its types. The data and related passes' sections travel the same way.
#include "data_report.hh"
#include "engine.hh"
#include "related_report.hh"
#include "report.hh"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace mimeuri;

namespace {

// A pass's entry: what a new pass would declare in its filters/NAME_report.hh.
struct ProbeEntry {
    enum class Action { None, Done };
    std::string part;
    Action action{Action::None};

    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.part, e.action); }
};
constexpr bool wire_valid(ProbeEntry::Action v) { return v <= ProbeEntry::Action::Done; }
void write_json(JsonWriter &w, const ProbeEntry &e)
{
    w.begin_object();
    w.key("part").string(e.part);
    w.key("action").string(e.action == ProbeEntry::Action::Done ? "done" : "none");
    w.end_object();
}

class ProbeReport final : public EntryList<ProbeReport, ProbeEntry> {
public:
    static constexpr std::string_view kName = "probe";
    std::size_t done() const { return count_if([](const ProbeEntry &e) { return e.action == ProbeEntry::Action::Done; }); }
    void describe(std::string &line) const override
    {
        if (auto n = done()) line += ", probed=" + std::to_string(n);
    }
    void summary_words(std::string &value) const override
    {
        if (auto n = done()) value += " probed=" + std::to_string(n);
    }
    std::size_t edits() const override { return done(); }
    void edits_dropped() override
    {
        for (ProbeEntry &e : entries) e.action = ProbeEntry::Action::None;
    }
};

MessageReport base()
{
    MessageReport r;
    r.number = 1;
    r.source = "in.eml";
    return r;
}

const std::string kHead = "{\"index\":1,\"source\":\"in.eml\",\"offset\":0,\"message_id\":null,\"changed\":false,"
                          "\"refs\":[],\"external_bodies\":[],\"labels\":[],\"errors\":[]";

} // namespace

TEST_CASE("report section: a pass's own member, placed when first made, between the core's")
{
    MessageReport r = base();
    CHECK(r.to_json() == kHead + "}"); // never asked for: no member
    r.add_kept("2", "content-id", "dkim");
    r.section<ProbeReport>().entries.push_back({"1", ProbeEntry::Action::Done});
    r.set_signatures({});
    r.section<ProbeReport>().entries.push_back({"3", ProbeEntry::Action::None}); // the member is there already
    CHECK(r.to_json() == kHead +
                             ",\"kept\":[{\"part\":\"2\",\"edit\":\"content-id\",\"kept\":\"dkim\"}],"
                             "\"probe\":[{\"part\":\"1\",\"action\":\"done\"},{\"part\":\"3\",\"action\":\"none\"}],"
                             "\"signatures\":[]}");
    REQUIRE(r.find<ProbeReport>());
    CHECK(r.find<ProbeReport>()->edits() == 1);
    CHECK_FALSE(r.find<DataReport>());
    // At most list_max entries written, the rest counted in "omitted" under its name.
    CHECK(r.to_json(1) == kHead +
                              ",\"kept\":[{\"part\":\"2\",\"edit\":\"content-id\",\"kept\":\"dkim\"}],"
                              "\"probe\":[{\"part\":\"1\",\"action\":\"done\"}],\"signatures\":[],\"omitted\":{\"probe\":1}}");
}

TEST_CASE("report section: counted in the log line and --summary-header's words, undone with the edits")
{
    MessageReport r = base();
    r.section<ProbeReport>().entries.push_back({"1", ProbeEntry::Action::Done});
    r.section<ProbeReport>().entries.push_back({"2", ProbeEntry::Action::Done});
    std::string line = "changed", words;
    r.describe_sections(line);
    r.summary_words(words);
    CHECK(line == "changed, probed=2");
    CHECK(words == " probed=2");
    r.edits_dropped();
    CHECK(r.find<ProbeReport>()->edits() == 0);
    line.clear();
    r.describe_sections(line);
    CHECK(line.empty());
}

TEST_CASE("report section: sections cross processes (a plan's record) as they were, in their order")
{
    Plan p;
    p.report = base();
    MessageReport &rep = *p.report;
    rep.section<RelatedReport>().entries.push_back(
        {"1", "cid:a@x", "3", std::nullopt, true, "attachment", RelatedEntry::Action::Moved, "", std::nullopt});
    rep.set_unreferenced({{"2", "TEXT"}});
    rep.section<ProbeReport>().entries.push_back({"4", ProbeEntry::Action::Done});
    DataEntry d;
    d.part = "1";
    d.attr = "img@src";
    d.type = "image/png";
    d.size = 3;
    d.action = DataEntry::Action::Attached;
    d.cid = "a@x";
    rep.section<DataReport>().entries.push_back(d);
    Plan q = deserialize(serialize(p));
    REQUIRE(q.report);
    CHECK(q.report->extras() == rep.extras());
    CHECK(q.report_line() == p.report_line());
    CHECK(q.report_line().find("\"related\":[{\"part\":\"1\",\"url\":\"cid:a@x\",\"target\":\"3\",\"related\":null,"
                               "\"outside\":true,\"disposition\":\"attachment\",\"action\":\"moved\"}],"
                               "\"unreferenced\":[{\"part\":\"2\",\"related\":\"TEXT\"}],"
                               "\"probe\":[{\"part\":\"4\",\"action\":\"done\"}],"
                               "\"data\":[{\"part\":\"1\",\"attr\":\"img@src\",\"type\":\"image/png\",\"size\":3,"
                               "\"action\":\"attached\",\"cid\":\"a@x\"}]}") != std::string::npos);
    REQUIRE(q.report->find<DataReport>());
    CHECK(q.report->find<DataReport>()->attached() == 1);
    CHECK(q.report->find<RelatedReport>()->moved() == 1);
    // A copy is a copy: its sections are its own.
    MessageReport copy = *q.report;
    copy.section<ProbeReport>().entries.clear();
    CHECK(q.report->find<ProbeReport>()->size() == 1);
    // A record naming a section no pass registered, or an enum value not the entry's, is refused.
    std::string bytes = serialize(p);
    std::string renamed = bytes;
    for (auto at = renamed.find("probe"); at != std::string::npos; at = renamed.find("probe", at)) renamed.replace(at, 5, "qrobe");
    CHECK_THROWS_AS(deserialize(renamed), std::runtime_error);
}
