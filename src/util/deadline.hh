// Deadlines from a number of seconds (--max-time, --lock-timeout, the service's watch over
// a worker), computed without overflow.
#pragma once

#include <chrono>
#include <cmath>

namespace mimeuri {

// The longest wait an option takes, in seconds (about 31 years): far below what a
// steady_clock duration (64-bit nanoseconds, about 292 years) can hold, so that a value the
// options accept never overflows a conversion. Options refuse more, and any non-finite value.
inline constexpr double kLongestSeconds = 1e9;

// now + seconds on the steady clock, saturating: time_point::max() (never) for a value too
// large to add (or +inf), now for zero, a negative value or NaN. Converting a double out of
// the target's range is undefined behaviour, so the range is checked in doubles first.
inline std::chrono::steady_clock::time_point deadline_after(double seconds,
                                                            std::chrono::steady_clock::time_point now =
                                                                std::chrono::steady_clock::now())
{
    using Clock = std::chrono::steady_clock;
    if (!(seconds > 0)) return now; // also NaN
    const double room = std::chrono::duration<double>(Clock::time_point::max() - now).count();
    // 2^63 ns is not exactly a double: stay a margin below it (a microsecond of 292 years).
    if (!(seconds < room * (1 - 1e-9))) return Clock::time_point::max();
    return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

} // namespace mimeuri
