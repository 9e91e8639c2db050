#include "progress.hh"

#include <algorithm>
#include <cstdio>

namespace mimeuri {

namespace {

// 0:07, 12:30, 1:02:03
std::string duration_text(long secs)
{
    char buf[32];
    if (secs >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", secs / 3600, secs / 60 % 60, secs % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", secs / 60, secs % 60);
    return buf;
}

} // namespace

std::string progress_text(std::size_t messages, std::int64_t bytes, std::int64_t total, double seconds)
{
    char buf[160];
    std::snprintf(buf, sizeof buf, "mimeuri: %zu messages, %.0f msg/s, %.1f MB/s", messages,
                  seconds > 0 ? static_cast<double>(messages) / seconds : 0.0,
                  seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0.0);
    std::string line = buf;
    if (total <= 0 || bytes <= 0) return line;
    const double share = static_cast<double>(bytes) / static_cast<double>(total);
    line += ", " + std::to_string(static_cast<int>(share * 100)) + "%";
    if (seconds >= kEtaAfterSeconds && share >= kEtaAfterShare && bytes < total)
        line += ", ETA " + duration_text(static_cast<long>(seconds * (1 - share) / share + 0.5));
    return line;
}

void Progress::update(std::size_t messages, std::int64_t bytes)
{
    if (!on_) return;
    messages_ = std::max(messages_, messages);
    bytes_ = std::max(bytes_, bytes);
    auto now = clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    // Cleared to the end of the line: a shorter line leaves nothing of a longer one.
    std::fprintf(stderr, "\r%s\033[K", progress_text(messages_, bytes_, total_, secs).c_str());
}

void Progress::done()
{
    // The last state drawn once more, whole (100% when every byte was read), and left on its
    // line above the summary: the run's own rates. Nothing for a run too short to draw one.
    if (!on_ || last_ == clock::time_point{}) return;
    double secs = std::chrono::duration<double>(clock::now() - start_).count();
    std::fprintf(stderr, "\r%s\033[K\n", progress_text(messages_, bytes_, total_, secs).c_str());
}

} // namespace mimeuri
