#include "progress.hh"

#include <cstdio>
#include <string>

namespace mimeuri {

void Progress::update(std::size_t messages, std::int64_t bytes)
{
    if (!on_) return;
    auto now = clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    if (secs <= 0) return;
    double mbs = static_cast<double>(bytes) / 1e6 / secs;
    std::string eta = "?";
    if (total_ > 0 && bytes > 0) {
        auto left = static_cast<long>(secs * static_cast<double>(total_ - bytes) / static_cast<double>(bytes));
        eta = std::to_string(left / 60) + ":" + (left % 60 < 10 ? "0" : "") + std::to_string(left % 60);
    }
    std::fprintf(stderr, "\rmimeuri: %zu messages, %.0f msg/s, %.1f MB/s, ETA %s   ", messages,
                 static_cast<double>(messages) / secs, mbs, eta.c_str());
}

void Progress::done()
{
    if (on_) std::fprintf(stderr, "\r\033[K");
}

} // namespace mimeuri
