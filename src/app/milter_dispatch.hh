// The front's side of the workers: the channels of the free ones, and one message handed
// to a worker with its plan read back (within --max-time, the worker killed past it).
#pragma once

#include "engine.hh"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace mimeuri::milter {

// The channel to each free worker. The supervisor forks them and sends each channel to the
// front; a message waits for a free one (so at most --jobs at once).
class FreeWorkers {
public:
    void add(int fd);
    // A free worker's channel, waiting up to `wait` for one; -1 if none came.
    int take(std::chrono::milliseconds wait);

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<int> free_;
};

// The plan of a worker, or why there is none; `tempfail` is the --on-error policy the
// worker ran with (tempfail when no worker said).
struct WorkerResult {
    std::optional<Plan> plan;
    std::string failure;
    bool tempfail{false};
};

// Hands the message in msg_fd to a free worker and reads its plan back. `progress` is
// called every 5 s while the worker plans (the MTA's own timeout counts from the last word
// it heard).
WorkerResult run_worker(FreeWorkers &workers, int msg_fd, const std::function<void()> &progress);

} // namespace mimeuri::milter
