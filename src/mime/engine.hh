// The per-message engine: one message's bytes in, a Plan out. It parses the message, runs
// the passes over it and keeps what the run needs of the result (the edits, the report
// entry, the log line, the cause of a failure). It knows nothing of inputs, outputs,
// workers or exit codes: the command line, the forked workers and a service all call it.
#pragma once

#include "message.hh"
#include "pass.hh"
#include "signatures.hh"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

// What the run keeps of one message once its passes are done.
struct Plan {
    std::vector<Edit> edits;
    std::optional<MessageReport> report; // when the engine makes reports: made JSON when taken
    std::string log_line;    // a one-line summary (--syslog), when the engine makes them
    std::string cause;       // a pass failed (an internal error): handled per --on-error
    std::string message_id;
    bool unprocessed{false}; // the report names a problem of the input (a part left as read)
    std::size_t dangling{0};
    std::size_t dangling_mid{0}; // of them mid: (which a later message may still resolve)
    std::string at_take;                  // MessageContext::at_take: for the run's TakeHook
    std::vector<std::string> waits;       // what a dangling mid: reference waits for
    bool failed() const { return !cause.empty(); }
    // On the wire (serialize, deserialize): every field.
    template <class Io, class Self> static void fields(Io &io, Self &p)
    {
        io(p.cause, p.message_id, p.unprocessed, p.dangling, p.dangling_mid, p.report, p.log_line, p.edits, p.waits,
           p.at_take);
    }
    // The report's JSON line with its "\n"; empty without a report.
    std::string report_line() const { return report ? report->to_json() + "\n" : std::string(); }
};

// What the run does with a plan's at_take bytes when it takes the plan (in message order, in
// the process that takes plans, never with --check), and once when the run ends: the entry
// point that runs the passes gives it (the command line: src/archive's, which writes the
// pages the references pass planned). A pass that leaves such work declares it
// (PassRow::files_beside), and the service, which gives no hook, refuses it.
class TakeHook {
public:
    virtual ~TakeHook() = default;
    // An Error fails the message, as a pass's error does (its edits dropped, reported per
    // --on-error); the hook amends the plan's report first, saying why.
    virtual Status take(Plan &plan) = 0;
    // The run's end; an Error is counted in its exit status.
    virtual Status finish() = 0;
};

// The wire format plans travel in between processes (workers) and through a spool.
std::string serialize(const Plan &p);
Plan deserialize(std::string bytes); // throws std::exception on bytes it cannot read

struct EngineConfig {
    Limits limits;
    SignedMode signed_mode{SignedMode::Keep};
    bool report{false};       // fill Plan::report
    bool summary{false};      // fill Plan::log_line
    bool inject_fault{false}; // every pass fails (MIMEURI_FAULT=pass, docs/testing.md)
    // A message that provably no pass can change (MessageContext::parse, InertCheck) is
    // planned from its header block alone, when no report or summary line is made. Tests
    // turn it off to compare.
    bool copy_inert{true};
};

// Where one message is: a segment of a source, its number there (1-based), whether the
// source is an mbox, and which of the run's inputs it is (run order, for mid: duplicates).
struct MessageAt {
    const Source &src;
    const Segment &seg;
    std::size_t number{1};
    bool in_mbox{false};
    std::size_t input_no{0};
};

class Engine {
public:
    // The passes are borrowed and run in this order.
    Engine(std::vector<std::unique_ptr<Pass>> &passes, EngineConfig cfg);

    // Whether some pass resolves references across messages (mid:), and what it finds can
    // show (a report or log line is made, or the pass edits from it): the run then shows it
    // every message (index) before the messages that may refer to it are planned, and holds
    // a plan whose mid: reference dangles until a later message may resolve it. Otherwise
    // no index is kept and nothing is held.
    bool wants_index() const { return index_wanted_; }
    void index(const MessageAt &m);
    // The index as bytes (a worker's share) and back; merge throws on unreadable bytes,
    // and takes no bytes as nothing to merge.
    std::string save_index() const;
    void merge_index(std::string bytes);

    // Plans one message. Never throws: a failure is the plan's cause. index_first: the
    // message is added to the index before it is planned (indexing as the run goes).
    Plan plan(const MessageAt &m, bool index_first = false);
    // Whether planning a message again could change its plan: the index now knows
    // something it waited for.
    bool worth_replanning(const Plan &p) const;

    const EngineConfig &config() const { return cfg_; }
    void set_fault(bool every_pass_fails) { cfg_.inject_fault = every_pass_fails; }
    // What MessageContext::parse may copy without a full parse, or null when every message
    // must be parsed.
    const InertCheck *inert_check() const;

private:
    Plan plan_parsed(MessageContext &ctx);
    void index_parsed(const MessageContext &ctx); // every cross-message index learns ctx
    std::vector<std::unique_ptr<Pass>> &passes_;
    EngineConfig cfg_;
    InertCheck inert_;                      // every pass's edited types, and which are scanned
    bool edits_any_{false};                 // some pass may change any message
    bool index_wanted_{false};              // wants_index()
    std::vector<bool> skipped_;             // passes that only report, where nothing is reported
};

// A whole source as one message (as the service receives it), indexed first where a pass
// keeps an index; or a whole message held in memory.
Plan plan_message(Engine &engine, const Source &src);
Plan plan_message(Engine &engine, std::string_view bytes, const std::string &name = "message");

// bytes with the edits applied (each edit's range replaced by its text); edits must not
// overlap and must lie inside bytes.
std::string apply_edits(std::string_view bytes, const std::vector<Edit> &edits);

} // namespace mimeuri
