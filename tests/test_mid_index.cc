// The persistent Message-ID index as --mid-index reads it (filters/ref_external.cc): answers
// kept from message to message, forgotten as soon as another connection commits.
#include "helpers.hh"
#include "mid_store.hh"
#include "ref_external.hh"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <glib.h>

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

TEST_CASE("mimeuri index: a file that fails half-way is rolled back alone, and the rest still commits")
{
    testing::TempDir d;
    std::string index = d / "a.midx";
    put(index, "old.mbox", {"a@x"});
    auto st = MidStore::open_write(index, 1000);
    REQUIRE(st.ok());
    auto add = [&](std::int64_t file, const char *id) {
        StoredMessage m;
        m.message_id = id;
        m.number = 1;
        REQUIRE(st->add(file, m).ok());
    };
    // old.mbox read again (it changed) and failing after its first message: its old record
    // and rows come back, under the old size, so the next run reads it again.
    auto again = st->begin_file("old.mbox", 999, 2, "", "");
    REQUIRE(again.ok());
    add(*again, "half@x");
    st->abandon_file();
    // A new file failing: not in the index at all.
    auto fresh = st->begin_file("new.mbox", 50, 1, "", "");
    REQUIRE(fresh.ok());
    add(*fresh, "lost@x");
    st->abandon_file();
    // A file that ends well, in the same transaction: kept.
    auto good = st->begin_file("good.mbox", 10, 1, "", "");
    REQUIRE(good.ok());
    add(*good, "good@x");
    REQUIRE(st->end_file(*good, 1).ok());
    REQUIRE(st->commit().ok());

    auto old = st->file("old.mbox");
    REQUIRE(old.ok());
    REQUIRE(*old);
    CHECK((*old)->size == 100);
    CHECK_FALSE(st->file("new.mbox")->has_value());
    CHECK(st->file("good.mbox")->has_value());
    CHECK(st->find("a@x", false)->has_value());
    CHECK_FALSE(st->find("half@x", false)->has_value());
    CHECK_FALSE(st->find("lost@x", false)->has_value());
    CHECK(st->find("good@x", false)->has_value());
}

TEST_CASE("--mid-index: a lookup asks the deadline as it works, and stops at it with a limit")
{
    testing::TempDir d;
    std::string index = d / "a.midx";
    put(index, "one.mbox", {"a@X.org", "a@X.org", "b@x"});
    auto st = MidStore::open_read(index);
    REQUIRE(st.ok());
    REQUIRE(st->begin_read().ok());
    // No deadline: answers as always; the case-insensitive lookup gives the least id.
    auto ci = st->find_ci("a@x.ORG");
    REQUIRE(ci.ok());
    CHECK(*ci == std::optional<std::string>("a@X.org"));
    auto f = st->find("a@X.org");
    REQUIRE(f.ok());
    REQUIRE(*f);
    CHECK((*f)->count == 2);
    // Past the deadline: each lookup stops, as a limit (the message passes, reported).
    st->set_interrupt([] { return true; });
    auto stopped = st->find("b@x");
    REQUIRE_FALSE(stopped.ok());
    CHECK(stopped.error().kind == Kind::Limit);
    auto stopped_ci = st->find_ci("A@x.org");
    REQUIRE_FALSE(stopped_ci.ok());
    CHECK(stopped_ci.error().kind == Kind::Limit);
    st->set_interrupt({});
    CHECK(st->find("b@x").ok());
    st->end_read();
    // Through the external index the --mid-index option opens: TimeLimit, not another failure.
    auto ix = refs::open_mid_index(index);
    ix->set_deadline([] { return true; });
    CHECK_THROWS_AS(ix->find("b@x"), refs::TimeLimit);
    ix->set_deadline({});
    CHECK(ix->find("b@x") != nullptr);
    ix->done();
}

namespace {

// How many of this process's descriptors are open on the file at path.
int open_on(const std::string &path)
{
    const std::string real = std::filesystem::canonical(path);
    int n = 0;
    GDir *dir = g_dir_open("/proc/self/fd", 0, nullptr);
    REQUIRE(dir);
    while (const char *name = g_dir_read_name(dir)) {
        std::string link = std::string("/proc/self/fd/") + name;
        if (GCharPtr target(g_file_read_link(link.c_str(), nullptr)); target && target.get() == real)
            ++n;
    }
    g_dir_close(dir);
    return n;
}

} // namespace

TEST_CASE("--mid-index: one connection a process, kept from message to message; a file renamed into place is opened anew")
{
    testing::TempDir d;
    std::string index = d / "kept.midx";
    put(index, "one.mbox", {"a@x"});
    for (int message = 0; message < 3; ++message) {
        // Each message's passes open the index anew (as the service's worker does)...
        auto ix = refs::open_mid_index(index);
        CHECK(ix->find("a@x"));
        ix->done();
    }
    // ...and find the one connection the first opened, still open: not one a message.
    CHECK(open_on(index) == 1);

    // An index made again elsewhere and renamed into place: the next message reads it.
    std::string fresh = d / "fresh.midx";
    put(fresh, "two.mbox", {"b@x"});
    REQUIRE(std::rename(fresh.c_str(), index.c_str()) == 0);
    auto ix = refs::open_mid_index(index);
    CHECK_FALSE(ix->find("a@x"));
    CHECK(ix->find("b@x"));
    ix->done();
    CHECK(open_on(index) == 1);
}
