// The progress line on standard error (a terminal): messages, rate, share done and, once it
// means something, the time left.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mimeuri {

class Progress {
public:
    Progress(bool on, std::int64_t total_bytes) : on_(on), total_(total_bytes), start_(clock::now()) {}
    // At most five times a second. What it shows never goes back: the messages read (planned)
    // and those taken (written) both report here, and the line shows the furthest.
    void update(std::size_t messages, std::int64_t bytes);
    void done(); // draws the last state (once one was drawn) and ends the line
    void mute() { on_ = false; } // in a worker: the parent draws the line

private:
    using clock = std::chrono::steady_clock;
    bool on_;
    std::int64_t total_;
    clock::time_point start_, last_{};
    std::size_t messages_{0};
    std::int64_t bytes_{0};
};

// An estimate of the time left is shown only from this far on: before, the rate is the
// start-up's (opening, the first messages), and a first estimate was off by hours.
inline constexpr double kEtaAfterSeconds = 5;
inline constexpr double kEtaAfterShare = 0.05;

// The line's text: `bytes` of `total` (0: not known, as for a pipe) done in `seconds`.
std::string progress_text(std::size_t messages, std::int64_t bytes, std::int64_t total, double seconds);

} // namespace mimeuri
