// taker: plans taken in message order (taker.hh).
//
// SYNOPSIS  Taker::take(plan): work left for the take (TakeHook), log line, totals, report line, then the
//           output (streamed, or held for the input's end); ForwardHold: plans waiting for a
//           mid: the index learns later, planned again.
#include "taker.hh"

#include "record.hh"

namespace mimeuri {

Taker::Taker(RunState &rs, std::size_t input_no, const Source &src, const std::vector<Segment> &segs, MboxLock *lock,
             bool stream)
    : rs_(rs), input_(rs.inputs[input_no]), src_(src), segs_(segs), lock_(lock), stream_(stream)
{
}

// A plan's work for when it is taken (MessageContext::at_take: a page's files), done once, in
// message order, by the hook the entry point gave the run; never with --check. Its failure
// fails the message as a pass's error does (the hook has said why in the report); so does
// work no hook is there to do.
void Taker::take_work(Plan &plan)
{
    if (rs_.opts.check || plan.at_take.empty()) return;
    Status done = rs_.take_hook ? rs_.take_hook->take(plan)
                                : Status(Error{Code::Software, "the plan carries work for when it is taken, and the run has no one to do it"});
    plan.at_take.clear();
    if (done) return;
    plan.cause = done.error().message;
    plan.edits.clear();
    plan.unprocessed = true;
}

// Logs and totals.
void Taker::log(std::size_t i, const Plan &plan)
{
    RunStats &st = rs_.st;
    const Options &opts = rs_.opts;
    ++st.messages;
    // Made only where it is written (the default run writes no line for an unchanged message).
    const auto where = [&] {
        return input_ + ": message " + std::to_string(i + 1) + (plan.message_id.empty() ? "" : " <" + plan.message_id + ">") + ": ";
    };
    if (plan.failed()) {
        ++st.failed;
        log_message_error(input_, i + 1, plan.message_id, plan.cause);
        if (opts.on_error == OnError::TempFail) input_failed_ = true;
    }
    if (plan.unprocessed) {
        ++st.unprocessed;
        if (opts.verbose) log_message_error(input_, i + 1, plan.message_id, "left partly unprocessed (see report)");
    }
    if (!plan.edits.empty()) {
        ++st.changed;
        changed_ = true;
    }
    // --verbose: each reference the mode did not act on as it would have, and why (the
    // report's "reason"); the URL escaped and cut, as it comes from the message.
    if (opts.verbose && plan.report)
        for (const RefEntry &r : plan.report->refs) {
            if (r.reason.empty()) continue;
            GCharPtr url(g_strescape(r.url.substr(0, 200).c_str(), nullptr));
            g_message("%spart %s: %s %s (%s)", where().c_str(), r.part.c_str(), url.get(),
                      r.action == RefEntry::Action::None ? "left as it is" : json_name(r.action), r.reason.c_str());
        }
    st.dangling += plan.dangling;
    if (plan.report)
        for (const ErrorEntry &e : plan.report->errors) ++st.errors_by_code[e.code];
    if (rs_.syslog) {
        if (plan.failed()) rs_.syslog->warning(where() + plan.cause);
        else rs_.syslog->info(where() + plan.log_line);
    }
}

// The report (its JSON made here, written in blocks, not a call per message), then the output.
void Taker::write(std::size_t i, Plan &&plan)
{
    if (rs_.report) {
        if (plan.report) { // a line with many entries is handed on as it is made
            const std::function<Status(std::string &)> flush = [this](std::string &b) {
                Status s = rs_.write_report(b);
                b.clear();
                return s;
            };
            // A run writes every entry (an archivist checks all of a page's references) unless
            // --report-max bounds it; the service's lines keep MessageReport::kListMax.
            const std::size_t max = rs_.opts.report_max ? rs_.opts.report_max : MessageReport::kNoListMax;
            if (auto s = plan.report->write_json(report_buffer_, &flush, max); !s) return fail(s.error());
            report_buffer_ += '\n';
        }
        if (report_buffer_.size() >= (1u << 16)) {
            if (auto s = rs_.write_report(report_buffer_); !s) return fail(s.error());
            report_buffer_.clear();
        }
    }
    const std::int64_t until = segs_[i].next;
    if (stream_) {
        // Untouched messages are copied in runs of up to 4 MiB, not one call each.
        if (!plan.edits.empty() || until - written_ >= (4 << 20) || until == src_.known_size()) {
            std::vector<const Edit *> edits;
            for (const Edit &ed : plan.edits) edits.push_back(&ed);
            if (auto s = write_spliced(*rs_.out, src_, written_, until, edits); !s) return fail(s.error());
            written_ = until;
        }
    } else {
        for (Edit &ed : plan.edits) held_.push_back(std::move(ed));
    }
    rs_.done_bytes += until - segs_[i].begin;
    rs_.progress.update(rs_.st.messages, rs_.done_bytes);
}

void Taker::take(std::size_t i, Plan &&plan)
{
    if (error_) return;
    if (lock_) lock_->keep_alive();
    taken_ = i + 1;
    take_work(plan);
    log(i, plan);
    write(i, std::move(plan));
}

Status Taker::finish()
{
    if (!error_ && rs_.report && !report_buffer_.empty()) {
        if (auto s = rs_.write_report(report_buffer_); !s) fail(s.error());
        report_buffer_.clear();
    }
    if (error_) return *error_;
    return ok();
}

std::vector<const Edit *> Taker::held() const
{
    std::vector<const Edit *> edits;
    for (const Edit &ed : held_) edits.push_back(&ed);
    return edits;
}

namespace {

// A held plan as the spool keeps it: its number, then the plan.
std::string held_record(std::size_t i, const Plan &plan)
{
    Record r;
    r.put(i);
    r.put(serialize(plan));
    return r.take();
}

} // namespace

// Whether the plan may be planned again once the input is indexed (Engine::worth_replanning
// decides then): a mid: reference of it dangles, and the census does not rule out every id
// it waits for. Or none dangles but one was answered by the messages indexed so far (it
// waits on that id): a later copy of the id would make it ambiguous, so it is final only
// where the census shows the id at most once; with one job (no census) it waits for the
// input's end. Otherwise the answer would depend on which messages a worker had indexed
// when it planned this one: --jobs=1 and --jobs=2 would differ, and --jobs=2 from run to run.
bool ForwardHold::may_replan(const Plan &plan) const
{
    if (plan.dangling_mid > 0) return !(census_ && census_->rules_out(plan.waits));
    return !plan.waits.empty() && !(census_ && census_->rules_out_repeats(plan.waits));
}

// At the input's end, with the whole index: a plan with a dangling reference is planned
// again if the index now knows an id it waits for; one answered by a partial index always
// (the answer may have become ambiguous).
bool ForwardHold::worth_replanning(const Plan &plan) const
{
    return plan.dangling_mid > 0 ? rs_.engine.worth_replanning(plan) : !plan.waits.empty();
}

void ForwardHold::arrive(std::size_t i, Plan &&plan)
{
    if (holding_ && census_ && !census_used_ && census_->complete()) let_ruled_out_go();
    arrived_ = i + 1;
    if (!holding_ || (waiting_->empty() && !may_replan(plan)))
        return taker_.take(i, std::move(plan));
    kept(waiting_->push(held_record(i, plan)));
}

// After a plan was pushed: a spool that failed (its record is held in memory all the same).
void ForwardHold::kept(const Status &pushed)
{
    if (pushed || taker_.failed()) return;
    if (rs_.opts.on_error != OnError::Pass) return taker_.fail(pushed.error()); // 75: nothing written for this input
    // --on-error=pass promises a whole output: stop holding plans. Those waiting and those
    // to come are taken as planned, their forward mid: references dangling.
    g_warning("%s: %s; from message %zu on, mid: references to later messages are reported dangling", input_.c_str(),
              pushed.error().message.c_str(), taker_.taken() + 1);
    holding_ = false;
    release(false);
}

// The census has become whole: the plans held until now are taken, up to the first that may
// still be planned again; it and those after it wait in a fresh spool.
void ForwardHold::let_ruled_out_go()
{
    census_used_ = true;
    auto rest = std::make_unique<RecordSpool>();
    Status pushed = ok();
    bool blocked = false;
    Status read = waiting_->drain([&](std::string &&bytes) {
        if (taker_.failed()) return false;
        Record r(std::move(bytes));
        // The plans up to the first that may be planned again are read and taken; that one
        // is spooled again, the rest go on unread.
        std::string keep;
        if (!blocked) {
            const std::size_t i = r.get_size();
            Plan plan = deserialize(r.get());
            blocked = may_replan(plan);
            if (!blocked) {
                taker_.take(i, std::move(plan));
                return true;
            }
            keep = held_record(i, plan);
        } else {
            keep = r.take();
        }
        if (Status p = rest->push(keep); !p && pushed) pushed = p;
        return true;
    });
    waiting_ = std::move(rest);
    if (!read && !taker_.failed()) { // those given back are taken as planned, then the lost fail
        if (rs_.opts.on_error != OnError::Pass) return taker_.fail(read.error());
        holding_ = false;
        release(false);
        return lost_from_here(read.error());
    }
    kept(pushed);
}

// Held plans that cannot be read back fail: with --on-error=pass their messages are written
// as they came, so the output is still complete.
void ForwardHold::lost_from_here(const Error &e)
{
    if (rs_.opts.on_error != OnError::Pass) return taker_.fail(e);
    while (taker_.taken() < arrived_ && !taker_.failed()) {
        Plan lost;
        lost.cause = e.message;
        taker_.take(taker_.taken(), std::move(lost));
    }
}

void ForwardHold::release(bool replan)
{
    Status s = waiting_->drain([&](std::string &&bytes) {
        if (taker_.failed()) return false;
        Record r(std::move(bytes));
        const std::size_t i = r.get_size();
        Plan plan = deserialize(r.get());
        taker_.take(i, replan && worth_replanning(plan) ? replan_(i) : std::move(plan));
        return true;
    });
    if (s || taker_.failed()) return;
    lost_from_here(s.error());
}

} // namespace mimeuri
