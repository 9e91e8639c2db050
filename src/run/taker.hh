// Taking plans in message order: the log line, the totals, the report, then the output
// (streamed, or held for the input's end). Its write error is sticky, as Postfix's cleanup
// keeps state->errs: once the shared output failed, nothing more is taken.
#pragma once

#include "id_census.hh"
#include "lock.hh"
#include "run_state.hh"
#include "spool.hh"

#include <functional>
#include <memory>

namespace mimeuri {

class Taker {
public:
    // stream: each message written as soon as it is taken (--on-error=pass, a shared
    // output); otherwise the edits are held for the input's end (held()).
    Taker(RunState &rs, std::size_t input_no, const Source &src, const std::vector<Segment> &segs, MboxLock *lock,
          bool stream);
    void take(std::size_t i, Plan &&plan);
    std::size_t taken() const { return taken_; }
    // The report lines still buffered, written; then the sticky error, if any.
    Status finish();
    void fail(Error e)
    {
        if (!error_) error_ = std::move(e);
    }
    bool failed() const { return error_.has_value(); }
    bool input_failed() const { return input_failed_; } // a message failed with --on-error=tempfail
    bool changed() const { return changed_; }
    std::vector<const Edit *> held() const;

private:
    void take_work(Plan &plan);
    void log(std::size_t i, const Plan &plan);
    void write(std::size_t i, Plan &&plan);
    RunState &rs_;
    const std::string &input_;
    const Source &src_;
    const std::vector<Segment> &segs_;
    MboxLock *lock_;
    bool stream_;
    std::optional<Error> error_;
    std::size_t taken_{0};
    std::int64_t written_{0};
    std::vector<Edit> held_;
    std::string report_buffer_;
    bool input_failed_{false}, changed_{false};
};

// Forward mid: references. From the first message with a dangling mid: reference on, plans
// wait (past a few MiB in a temporary file); once the whole input is indexed, those with
// dangling mid: references are planned again, then all are taken in order. With a census of
// the input's Message-IDs (id_census.hh), a plan whose every awaited id the census rules out
// does not hold the others back: no later message can resolve it, so it is taken as planned
// (once the census is whole, the plans held until then are looked at again).
class ForwardHold {
public:
    using Replan = std::function<Plan(std::size_t)>;
    ForwardHold(RunState &rs, Taker &taker, const std::string &input, bool holding, Replan replan,
                const IdCensus *census = nullptr)
        : rs_(rs), taker_(taker), input_(input), holding_(holding), replan_(std::move(replan)), census_(census)
    {
    }
    // A plan arrives (in message order).
    void arrive(std::size_t i, Plan &&plan);
    // Takes the waiting plans; replan: the index is whole, plan the dangling ones again.
    void release(bool replan);

private:
    bool may_replan(const Plan &plan) const;
    bool worth_replanning(const Plan &plan) const;
    void let_ruled_out_go();
    void kept(const Status &pushed);
    void lost_from_here(const Error &e);
    RunState &rs_;
    Taker &taker_;
    const std::string &input_;
    bool holding_;
    Replan replan_;
    const IdCensus *census_;
    bool census_used_{false}; // the plans held before the census was whole were looked at again
    std::unique_ptr<RecordSpool> waiting_ = std::make_unique<RecordSpool>();
    std::size_t arrived_{0};
};

} // namespace mimeuri
