// The progress line on standard error (--progress, or a terminal): messages, rate, ETA.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace mimeuri {

class Progress {
public:
    Progress(bool on, std::int64_t total_bytes) : on_(on), total_(total_bytes), start_(clock::now()) {}
    // At most five times a second.
    void update(std::size_t messages, std::int64_t bytes);
    void done(); // clears the line
    void mute() { on_ = false; } // in a worker: the parent draws the line

private:
    using clock = std::chrono::steady_clock;
    bool on_;
    std::int64_t total_;
    clock::time_point start_, last_{};
};

} // namespace mimeuri
