#include "helpers.hh"
#include "spool.hh"
#include "workers.hh"

#include <sys/resource.h>
#include <sys/wait.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mimeuri;

TEST_CASE("RecordSpool: records come back in order, from memory and from the file past the budget")
{
    for (std::size_t budget : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 30}) {
        CAPTURE(budget);
        RecordSpool spool(budget);
        std::vector<std::string> in;
        // Sizes around the file's 64 KiB write blocks and its 64 KiB read chunks, empty ones too.
        for (int i = 0; i < 300; ++i) in.push_back(std::string(static_cast<std::size_t>((i * 7919) % 70000), static_cast<char>('a' + i % 26)));
        in[5].clear();
        for (const auto &r : in) REQUIRE(spool.push(r).ok());
        CHECK(spool.size() == in.size());
        CHECK(spool.spilled() == (budget < (std::size_t{1} << 30))); // 10 MB in all: only the last keeps it in memory
        std::vector<std::string> out;
        REQUIRE(spool.drain([&](std::string &&r) {
                         out.push_back(std::move(r));
                         return true;
                     })
                    .ok());
        CHECK(out == in);
        CHECK(spool.empty());
        CHECK_FALSE(spool.spilled());
    }
}

TEST_CASE("RecordSpool: drain stops calling once told to, and still empties the spool")
{
    RecordSpool spool(10);
    for (int i = 0; i < 50; ++i) REQUIRE(spool.push(std::to_string(i)).ok());
    int calls = 0;
    REQUIRE(spool.drain([&](std::string &&r) {
                     ++calls;
                     return r != "20";
                 })
                .ok());
    CHECK(calls == 21);
    CHECK(spool.empty());
}

TEST_CASE("run_forked failing part way (no more file descriptors) leaves no child, pipe or mapping behind")
{
    // Issue 13, defect 4: the workers started were left unreaped and their pipes open.
    auto open_fds = [] {
        std::size_t n = 0;
        GDir *dir = g_dir_open("/proc/self/fd", 0, nullptr);
        while (dir && g_dir_read_name(dir)) ++n;
        if (dir) g_dir_close(dir);
        return n;
    };
    // A shared anonymous mapping (the workers' page) shows as /dev/zero in the maps.
    auto maps = [] {
        std::string m = testing::read_file("/proc/self/maps");
        std::size_t n = 0;
        for (std::size_t at = 0; (at = m.find("/dev/zero", at)) != std::string::npos; ++at) ++n;
        return n;
    };
    const std::size_t fds_before = open_fds();
    const std::size_t maps_before = maps();
    struct rlimit old {};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
    struct rlimit low = old;
    low.rlim_cur = fds_before + 8; // room for two or three workers' pipes, not sixteen
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    bool threw = false;
    try {
        mimeuri::run_forked(
            16, mimeuri::Feed::fixed(100), [](std::size_t i) { return std::to_string(i); },
            [](std::size_t, std::string &&, bool) { return true; });
    } catch (const std::exception &ex) {
        threw = std::string(ex.what()).find("pipe") != std::string::npos;
    }
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &old) == 0);
    CHECK(threw);
    CHECK(open_fds() == fds_before);
    errno = 0;
    CHECK(::waitpid(-1, nullptr, WNOHANG) == -1); // no child at all, not even one still running
    CHECK(errno == ECHILD);
    CHECK(maps() == maps_before);
}
