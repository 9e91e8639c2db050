// The persistent Message-ID index as --mid-index reads it (filters/ref_external.cc): answers
// kept from message to message, forgotten as soon as another connection commits.
#include "helpers.hh"
#include "mid_store.hh"
#include "ref_external.hh"

#include <doctest/doctest.h>

using namespace mimeuri;

namespace {

void put(const std::string &index, const std::string &file, const std::vector<std::string> &ids)
{
    auto st = MidStore::open_write(index, 1000);
    REQUIRE(st.ok());
    auto f = st->begin_file(file, 100, 1, "", "");
    REQUIRE(f.ok());
    std::size_t n = 0;
    for (const auto &id : ids) {
        StoredMessage m;
        m.message_id = id;
        m.source = file;
        m.number = ++n;
        m.offset = static_cast<std::int64_t>(n * 10);
        if (id == "a@x") m.cids = {{"img@x", "2"}};
        REQUIRE(st->add(*f, m).ok());
    }
    REQUIRE(st->end_file(*f, static_cast<std::int64_t>(ids.size())).ok());
    REQUIRE(st->commit().ok());
}

} // namespace

TEST_CASE("--mid-index: lookups are kept between messages until another connection writes")
{
    testing::TempDir d;
    std::string index = d / "a.midx";
    put(index, "one.mbox", {"a@x", "c@x"});
    auto ix = refs::open_mid_index(index);
    REQUIRE(ix);

    // First message: a@x found with its Content-IDs, b@x not there.
    auto a = ix->find("a@x", true);
    REQUIRE(a);
    CHECK(a->count == 1);
    CHECK(a->source == "one.mbox");
    CHECK(a->offset == 10);
    CHECK(a->cids.at("img@x") == "2");
    CHECK_FALSE(ix->find("b@x", false));
    CHECK(ix->find_ci("C@X") == std::nullopt); // "C@X": the local part differs
    CHECK(ix->find_ci("c@X") == std::optional<std::string>("c@x"));
    ix->done();

    // Second message, nothing written meanwhile: the same answers.
    CHECK(ix->find("a@x", false)->count == 1);
    CHECK_FALSE(ix->find("b@x", false));
    ix->done();

    // Another connection adds b@x and a second a@x: the next message sees both.
    put(index, "two.mbox", {"a@x", "b@x"});
    auto b = ix->find("b@x", false);
    REQUIRE(b);
    CHECK(b->source == "two.mbox");
    CHECK(b->offset == 20);
    auto again = ix->find("a@x", true);
    REQUIRE(again);
    CHECK(again->count == 2); // now ambiguous
    ix->done();

    // Within one message the answers hold still: a writer waits for done() (its read
    // transaction); it gives up after its busy time, and nothing changes.
    CHECK(ix->find("c@x", false));
    auto w = MidStore::open_write(index, 200);
    REQUIRE(w.ok());
    auto f = w->begin_file("three.mbox", 1, 1, "", "");
    bool wrote = f.ok();
    if (wrote) {
        StoredMessage m;
        m.message_id = "d@x";
        m.source = "three.mbox";
        wrote = w->add(*f, m).ok() && w->end_file(*f, 1).ok() && w->commit().ok();
    }
    CHECK_FALSE(wrote);
    CHECK_FALSE(ix->find("d@x", false));
    ix->done();
}
