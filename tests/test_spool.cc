#include "spool.hh"

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
