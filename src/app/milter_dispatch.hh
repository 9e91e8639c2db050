// The front's side of the workers: the channels of the free ones, and one message handed
// to a worker with its plan read back (within --max-time, the worker killed past it).
#pragma once

#include "engine.hh"
#include "milter_texts.hh"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace mimeuri::milter {

// A worker's channel and the configuration it runs with: generation N is the one the
// supervisor's Nth config message brought (the channel stream is ordered: a worker's channel
// comes after the config message of the settings it was forked with).
struct WorkerChan {
    int fd{-1};
    unsigned generation{0};
};

// The channel to each free worker. The supervisor forks them and sends each channel to the
// front; a message waits for a free one (so at most --jobs at once). After a reload only the
// new configuration's workers take messages: the older ones' channels are closed as they
// come free (which ends those workers; the supervisor has retired them already).
class FreeWorkers {
public:
    // A channel of the current configuration (a new worker's).
    void add(int fd);
    // A channel given back after a message: closed if a reload came meanwhile.
    void give_back(WorkerChan w);
    // A free worker's channel, waiting up to `wait` for one; fd -1 if none came.
    WorkerChan take(std::chrono::milliseconds wait);
    // A config message came: the free channels of the previous ones are closed.
    void new_generation();

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<WorkerChan> free_;
    unsigned generation_{0};
};

// The plan of a worker, or why there is none; `tempfail` is the --on-error policy the
// worker ran with (tempfail when no worker said). The texts of the plan's edits the worker
// wrote into the message's file are listed in `texts` (milter_texts.hh).
struct WorkerResult {
    std::optional<Plan> plan;
    std::vector<SpooledText> texts;
    std::string failure;
    bool tempfail{false};
    std::string policy; // the [policy:NAME] the worker chose the settings by; "" none
};

// Hands the message in msg_fd and its envelope (Envelope::serialize) to a free worker and
// reads its plan back (the worker may write its edits' texts into msg_fd, past the message).
// `progress` is
// called every 5 s while the worker plans (the MTA's own timeout counts from the last word
// it heard).
WorkerResult run_worker(FreeWorkers &workers, int msg_fd, const std::string &envelope,
                        const std::function<void()> &progress);

} // namespace mimeuri::milter
