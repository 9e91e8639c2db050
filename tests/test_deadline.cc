// deadline_after (src/util/deadline.hh): now + seconds, saturating instead of overflowing
//. The old formula, now + duration_cast<ns>(duration<double>(s)), is
// undefined behaviour past 2^63 ns; on x86-64 it gave a deadline in the past.
#include "deadline.hh"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace std::chrono;
using mimeuri::deadline_after;

TEST_CASE("deadline_after: seconds added to now, saturating at time_point::max()")
{
    const auto now = steady_clock::now();
    const auto never = steady_clock::time_point::max();
    CHECK(deadline_after(1.5, now) == now + milliseconds(1500));
    CHECK(deadline_after(mimeuri::kLongestSeconds, now) == now + seconds(1'000'000'000));
    // Too large to add, or not finite: never.
    for (double s : {1e10, 1e19, 1e300, std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity()}) {
        CAPTURE(s);
        CHECK(deadline_after(s, now) == never);
    }
    // Nothing left, or no number: now.
    for (double s : {0.0, -0.0, -1.0, -1e300, -std::numeric_limits<double>::infinity(), std::nan("")}) {
        CAPTURE(s);
        CHECK(deadline_after(s, now) == now);
    }
    // Close to the clock's end: what fits is added, what does not saturates.
    const auto late = never - seconds(100);
    CHECK(deadline_after(50, late) == late + seconds(50));
    CHECK(deadline_after(100, late) == never);
    CHECK(deadline_after(1e9, late) == never);
    CHECK(deadline_after(1, never) == never);
}
