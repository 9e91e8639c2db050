// The progress line's text (src/run/progress.cc): no time left until it means something.
#include "progress.hh"

#include <doctest/doctest.h>

using namespace mimeuri;

TEST_CASE("the progress line: messages, rates, share done; an ETA only after some seconds and some share")
{
    const std::int64_t total = 100'000'000;
    // The first fifth of a second: no ETA (it once said "ETA 653:18" here).
    CHECK(progress_text(3, 400'000, total, 0.2) == "mimeuri: 3 messages, 15 msg/s, 2.0 MB/s, 0%");
    // Long enough, but too little done.
    CHECK(progress_text(40, 4'000'000, total, 30) == "mimeuri: 40 messages, 1 msg/s, 0.1 MB/s, 4%");
    // Much done, but too soon.
    CHECK(progress_text(500, 50'000'000, total, 4.9) == "mimeuri: 500 messages, 102 msg/s, 10.2 MB/s, 50%");
    // Both: the time left at the rate so far.
    CHECK(progress_text(500, 50'000'000, total, 10) == "mimeuri: 500 messages, 50 msg/s, 5.0 MB/s, 50%, ETA 0:10");
    CHECK(progress_text(100, 10'000'000, total, 400) ==
          "mimeuri: 100 messages, 0 msg/s, 0.0 MB/s, 10%, ETA 1:00:00");
    CHECK(progress_text(100, 10'000'000, total, 80) == "mimeuri: 100 messages, 1 msg/s, 0.1 MB/s, 10%, ETA 12:00");
    // Unknown size (a pipe): neither share nor ETA, however long it runs.
    CHECK(progress_text(9000, 90'000'000, 0, 60) == "mimeuri: 9000 messages, 150 msg/s, 1.5 MB/s");
    // Done: no time left to show.
    CHECK(progress_text(10, total, total, 60).find("ETA") == std::string::npos);
}
