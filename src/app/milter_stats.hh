// The service's counters (--stats, SIGUSR1): messages by outcome, edits by pass, report
// errors by code, and a latency histogram, kept by the front (it sees every outcome) in
// atomics, since libmilter calls its callbacks on a thread per MTA connection.
//   Stats::message()      counts one message at its end (and under the policy that applied)
//   Stats::exposition()   the counters in Prometheus text format (node_exporter's textfile collector)
//   Stats::log_line()     the same in one line (SIGUSR1)
//   write_stats_file()    a temporary file in the same folder, fsync, rename, fsync the folder
#pragma once

#include "error_code.hh"
#include "milter_chan.hh"
#include "report.hh"
#include "result.hh"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mimeuri::milter {

// How a message left the service. No message is rejected (only connections from an MTA that
// cannot take changes, at negotiation).
enum class Outcome { Unchanged, Changed, PassedOnError, TempFailed };
constexpr int kOutcomes = static_cast<int>(Outcome::TempFailed) + 1;

// Seconds between two writes of --stats.
constexpr long kStatsSeconds = 10;

// What one message's report holds for the counters, taken before the report is written.
struct MessageTally {
    Outcome outcome{Outcome::Unchanged};
    std::string policy; // the [policy:NAME] that gave the message its settings, or 
    std::vector<std::uint32_t> edits; // by pass, in running order (registry.hh: pass_names); none: none
    std::array<std::uint32_t, kErrorCodes> errors{};
};

// The edits each pass made (its report entries that say a change, registry.hh: pass_edits)
// and the errors by code.
MessageTally tally_report(Outcome outcome, const MessageReport *report);

// Upper bounds of the latency histogram's buckets, in seconds (+Inf besides).
constexpr std::array<double, 11> kLatencyBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

class Stats {
public:
    Stats();
    // The counters' start: the front process's (it is forked from a supervisor that may have
    // run for days, and again after it ends): mimeuri_front_start_time_seconds.
    void start_now();
    // One message: its tally and the seconds from its end of message to the answer.
    void message(const MessageTally &t, double seconds);
    // One event the supervisor saw (milter_chan.hh).
    void event(Event e);
    std::string exposition() const;
    std::string log_line() const;

private:
    void policy_exposition(std::string &out) const;
    void events_exposition(std::string &out) const;
    double started_; // the front's start, seconds since the epoch
    std::array<std::atomic<std::uint64_t>, kOutcomes> outcomes_{};
    std::vector<std::atomic<std::uint64_t>> edits_; // by pass, as --passes names them (pass_names)
    std::array<std::atomic<std::uint64_t>, kErrorCodes> errors_{};
    std::array<std::atomic<std::uint64_t>, kLatencyBuckets.size() + 1> buckets_{}; // not cumulative
    std::atomic<std::uint64_t> latency_ns_{0};
    std::array<std::atomic<std::uint64_t>, kEvents> events_{};
    // Messages and edits by the policy that applied (issue 54 item 5): names from the
    // configuration, not from mail, so the map is as small as the [policy:NAME] groups ever
    // loaded (a policy removed by a reload keeps its counts: counters never go back).
    struct PolicyCounts {
        std::array<std::uint64_t, kOutcomes> outcomes{};
        std::vector<std::uint64_t> edits;
    };
    mutable std::mutex policies_mutex_;
    std::map<std::string, PolicyCounts> policies_;
};

// Replaces `path` with `text` atomically: a reader sees the old file or the new one, whole.
Status write_stats_file(const std::string &path, const std::string &text);

} // namespace mimeuri::milter
