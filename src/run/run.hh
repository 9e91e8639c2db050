// The run: inputs in, messages planned by the passes, outputs and reports written.
#pragma once

#include "engine.hh"
#include "options.hh"
#include "pass.hh"

#include <map>
#include <memory>
#include <vector>

namespace mimeuri {

struct RunStats {
    std::size_t messages{0};
    std::size_t changed{0};
    std::size_t failed{0};      // messages a pass failed on (handled per --on-error)
    std::size_t unprocessed{0}; // messages or parts left as read because of their input
    std::size_t dangling{0};    // dangling references
    std::map<ErrorCode, std::size_t> errors_by_code; // the report's error entries, by code
    // Another process's counts (a --jobs worker's) added to these.
    void add(const RunStats &o);
    template <class Io, class Self> static void fields(Io &io, Self &s)
    {
        io(s.messages, s.changed, s.failed, s.unprocessed, s.dangling, s.errors_by_code);
    }
};

// The summary line on a terminal (and with --verbose): the totals, the report's errors
// counted by kind (when a report is made: not for the terminal alone) and where to read them.
std::string summary_line(const RunStats &st, const Options &opts);

// The engine's settings from the options, in one home: the batch run's (a report is made
// also for --verbose's summary, the summary line with --syslog) or the service's (its
// log line always, a report with --report).
enum class Runner { Batch, Service };
EngineConfig engine_config(const Options &opts, Runner who);

// Runs the job described by opts; returns the process exit status (sysexits.h).
// in_fd/out_fd stand for standard input and output. take_hook: what the run does with a
// plan's at_take work when it takes the plan, and at its end (engine.hh); none: a plan that
// carries some fails.
int run(const Options &opts, std::vector<std::unique_ptr<Pass>> &passes, int in_fd = 0, int out_fd = 1,
        RunStats *stats = nullptr, TakeHook *take_hook = nullptr);

// One line on stderr naming the message and the cause, through g_log.
void log_message_error(const std::string &source, std::size_t index, const std::string &message_id,
                       const std::string &cause);

} // namespace mimeuri
