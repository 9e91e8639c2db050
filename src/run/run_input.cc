// One input of a run: locked (an mbox rewritten in place), read, split into messages,
// planned here or in workers, taken in order, and written (or committed in place).
#include "run_state.hh"
#include "taker.hh"
#include "workers.hh"

#include <csignal>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <sys/stat.h>

namespace mimeuri {

namespace {

// The input, read and split. Split a first MiB at a time when workers are to start on the
// first messages while the parent splits the rest.
struct Opened {
    Source src;
    bool mbox;
    Splitter splitter;
    std::vector<Segment> segs;
    std::optional<Error> split_failure;
    struct stat read {}; // what was read, for --in-place: the checks before the rename
    IdCensus census;     // the Message-IDs its lines may give the index (ForwardHold)
    Opened(Source s, Format f) : src(std::move(s)), mbox(f == Format::Mbox), splitter(src, f) {}
    bool split_more(std::int64_t budget) // false once split (or failed)
    {
        auto r = splitter.step(segs, budget);
        if (!r) split_failure = r.error();
        return r && !*r;
    }
};

// An mbox rewritten in place is locked as MDAs lock it, from before it is read until after
// the rename, so that no delivery lands in the old file. A Maildir needs no lock.
Result<std::optional<MboxLock>> lock_input(const RunState &rs, const std::string &input)
{
    struct stat lst {};
    if (!rs.opts.in_place || !maildir_tmp(input).empty() || ::lstat(input.c_str(), &lst) != 0 || !S_ISREG(lst.st_mode))
        return std::optional<MboxLock>();
    auto l = MboxLock::acquire(input, rs.opts.lock_timeout);
    if (!l) return l.error();
    return std::optional<MboxLock>(std::move(*l));
}

// The mbox split runs this far ahead of the messages planned in one process, so that the
// splitter's last two blocks (Source::read_block, 256 KiB each) still hold the messages
// when their windows are made: no read of their own.
constexpr std::int64_t kSplitStep = 64 << 10;

// One input: its messages are indexed as they are planned, and only those whose mid:
// references were still dangling then are planned again once everything is indexed.
bool indexed_as_planned(const RunState &rs) { return rs.engine.wants_index() && rs.inputs.size() == 1; }

// jobs > 1: the census of Message-IDs is taken while splitting. With one job the split runs
// just ahead of the messages planned, so the census would be whole only at the input's end,
// when the held plans go anyway (it cost 3% of the default job's time there).
std::unique_ptr<Opened> open_input(RunState &rs, std::size_t input_no, int jobs)
{
    const std::string &input = rs.inputs[input_no];
    auto src = rs.inputs.open(input_no);
    if (!src && rs.inputs.expunged(input_no)) {
        // As a file expunged while it is rewritten in place (inplace.cc): nothing was lost,
        // so the exit status is --on-error's (0, or 75 with tempfail), not 66.
        g_warning("%s", src.error().message.c_str());
        ++rs.st.failed;
        if (rs.opts.on_error == OnError::TempFail) rs.outcome.worsen(Code::TempFail);
        return nullptr;
    }
    if (!src) return rs.outcome.fail(src.error()), nullptr;
    struct stat read {};
    if (rs.opts.in_place && src->fd() >= 0) {
        if (Status s = opened_as_named(input, src->fd()); !s) return rs.outcome.fail(s.error()), nullptr;
        if (::fstat(src->fd(), &read) == 0) read.st_size = src->size();
    }
    if (src->known_size() == 0) { // (a piped input still arriving has passed the spool threshold)
        // An empty output would be stored as an empty message by procmail, Dovecot or Exim.
        rs.outcome.fail({rs.opts.on_error == OnError::TempFail ? Code::TempFail : Code::DataErr,
                         input + ": empty input, nothing to filter"});
        return nullptr;
    }
    auto format = rs.inputs.format_of(*src);
    if (!format) return rs.outcome.fail(format.error()), nullptr;
    auto in = std::make_unique<Opened>(std::move(*src), *format);
    in->read = read;
    if (jobs > 1 && indexed_as_planned(rs)) in->splitter.census(&in->census);
    in->split_more(kSplitStep); // the rest as the messages are taken
    if (in->split_failure) return rs.outcome.fail(*in->split_failure), nullptr;
    return in;
}

// The messages planned by `jobs` forked workers, each with its own handle on the input;
// each worker's share of the mid: index comes back at its end.
void plan_forked(RunState &rs, Opened &in, std::size_t input_no, int jobs, bool index_as_we_go, const Taker &taker,
                 ForwardHold &hold)
{
    std::optional<Result<Source>> mine; // a worker's own handle
    std::size_t produced_here = 0;      // counted in each worker (fault injection)
    static_assert(std::is_trivially_copyable_v<Segment>, "segments travel to workers as bytes");
    Feed feed;
    feed.more = [&] { return in.split_more(1 << 20); };
    feed.known = [&] { return in.segs.size(); };
    feed.describe = [&](std::size_t begin, std::size_t end) {
        return std::string(reinterpret_cast<const char *>(in.segs.data() + begin), (end - begin) * sizeof(Segment));
    };
    feed.learn = [&](std::size_t begin, std::size_t end, std::string &&bytes) { // in a worker
        if (in.segs.size() < end) in.segs.resize(end);
        std::memcpy(static_cast<void *>(in.segs.data() + begin), bytes.data(),
                    std::min(bytes.size(), (end - begin) * sizeof(Segment)));
    };
    auto produce = [&](std::size_t i) {
        if ((rs.faults.worker_second && ++produced_here == 2) || rs.faults.worker_on == i) ::raise(SIGKILL);
        if (rs.faults.throw_on == i) throw std::runtime_error("injected exception (MIMEURI_FAULT=throw:N)");
        if (!mine) mine.emplace(in.src.reopen());
        if (*mine) return serialize(rs.engine.plan({**mine, in.segs[i], i + 1, in.mbox, input_no}, index_as_we_go));
        Plan p;
        p.cause = "cannot read the input again: " + (*mine).error().message;
        return serialize(p);
    };
    auto consume = [&](std::size_t i, std::string &&bytes, bool alive) {
        Plan plan;
        try {
            if (alive) plan = deserialize(std::move(bytes));
            else plan.cause = "the worker process handling this message died";
        } catch (const std::exception &ex) {
            plan.cause = std::string("unreadable worker result: ") + ex.what();
        }
        hold.arrive(i, std::move(plan));
        return !taker.failed(); // the shared output is gone: stop the workers
    };
    auto share = [&] {
        if (rs.faults.worker_final) ::raise(SIGKILL);
        return index_as_we_go ? rs.engine.save_index() : std::string();
    };
    auto merge = [&](std::string &&bytes) {
        try {
            rs.engine.merge_index(std::move(bytes));
        } catch (const std::exception &ex) {
            g_warning("a worker's index was unreadable: %s", ex.what());
        }
    };
    auto share_lost = [&](std::size_t i) { // a worker's share of the index, done again here
        if (index_as_we_go) rs.engine.index({in.src, in.segs[i], i + 1, in.mbox, input_no});
    };
    run_forked(jobs, feed, Hooks{produce, consume, share, merge, share_lost});
}

} // namespace

void run_input(RunState &rs, std::size_t input_no, int jobs)
{
    const std::string &input = rs.inputs[input_no];
    if (rs.opts.in_place)
        if (Status s = not_a_link(input); !s) return rs.outcome.fail(s.error());
    auto lock = lock_input(rs, input);
    if (!lock) return rs.outcome.fail(lock.error());
    auto in = open_input(rs, input_no, jobs);
    if (!in) return;
    // With --on-error=pass and a shared output, each message is written as soon as it is
    // taken, so memory does not grow with the mailbox. Otherwise (tempfail: nothing for a
    // failed input; --in-place: only files that change) the edits wait for the input's end.
    const bool stream = rs.opts.on_error == OnError::Pass && rs.out.has_value();
    Taker taker(rs, input_no, in->src, in->segs, *lock ? &**lock : nullptr, stream);
    const bool index_as_we_go = indexed_as_planned(rs);
    auto replan = [&](std::size_t i) { return rs.engine.plan({in->src, in->segs[i], i + 1, in->mbox, input_no}); };
    ForwardHold hold(rs, taker, input, index_as_we_go, replan, &in->census);
    // With several jobs, the first MiB split before deciding (as before the split went
    // incremental): an mbox of one message up to that size is planned here, without workers.
    if (jobs > 1) in->split_more(1 << 20);
    bool fork = jobs > 1 && !(in->splitter.done() && in->segs.size() < 2);
    // No thread across a fork: a piped input is spooled whole first (the workers read it).
    if (fork)
        if (auto s = in->src.settle(); !s) in->split_failure = s.error(), fork = false;
    if (!fork) {
        // The progress line goes by what is read (planned): plans held for a mid: index
        // (ForwardHold) are taken only at the input's end, and with one job no census lets
        // them go sooner. The inputs before this one are done whole.
        const std::size_t messages_before = rs.st.messages;
        const std::int64_t bytes_before = rs.done_bytes;
        // Split a block at a time, just ahead of the messages planned: the splitter's last
        // two blocks hold them, and their windows are made without a read of their own.
        for (std::size_t i = 0; !taker.failed(); ++i) {
            while (i >= in->segs.size() && in->split_more(kSplitStep)) {
            }
            if (i >= in->segs.size()) break;
            hold.arrive(i, rs.engine.plan({in->src, in->segs[i], i + 1, in->mbox, input_no}, index_as_we_go));
            rs.progress.update(messages_before + i + 1, bytes_before + std::max(in->segs[i].next, in->segs[i].msg_end));
        }
    } else {
        plan_forked(rs, *in, input_no, jobs, index_as_we_go, taker, hold);
    }
    // A read error part way through splitting (the file shrank or could not be read): the
    // rest of the input cannot be copied either, so it ends the run as a failed write does.
    if (in->split_failure) taker.fail(*in->split_failure);
    hold.release(true);
    if (Status s = taker.finish(); !s) return rs.outcome.end(s.error());
    if (stream) return;
    if (taker.input_failed()) return rs.outcome.worsen(Code::TempFail); // nothing written for this input
    if (rs.opts.in_place) {
        if (taker.changed()) commit_in_place(rs, input, in->src, in->read, taker.held());
    } else if (rs.out) {
        if (auto s = write_spliced(*rs.out, in->src, 0, in->src.size(), taker.held()); !s) rs.outcome.end(s.error());
    }
}

} // namespace mimeuri
