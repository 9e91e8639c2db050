// The run, in the order a message flows (docs/design.md): inputs -> split -> plan (here or
// in workers, by the engine) -> take in order (log, report, output) -> commit.
#include "run.hh"

#include "run_state.hh"

#include <fcntl.h>
#include <map>
#include <unistd.h>

namespace mimeuri {

void log_message_error(const std::string &source, std::size_t index, const std::string &message_id,
                       const std::string &cause)
{
    std::string id = message_id.empty() ? "" : " <" + message_id + ">";
    g_warning("%s: message %zu%s: %s", source.c_str(), index, id.c_str(), cause.c_str());
}

namespace {

// The outputs: standard output or -o (not with --check or --in-place), the report
// (--report, or standard output with --check), and --changed-list: one line per file
// renamed into place, written by the process that renamed it (O_APPEND: whole lines, also
// from workers), so that it is right even when the run is stopped part way.
Status open_outputs(RunState &rs, int out_fd)
{
    const Options &opts = rs.opts;
    if (!opts.check && !opts.in_place) {
        if (opts.output.empty()) {
            rs.out.emplace(Sink::to_fd(out_fd, "standard output"));
        } else {
            auto s = Sink::to_path(opts.output);
            if (!s) return s.error();
            rs.out.emplace(std::move(*s));
        }
    }
    if (!opts.report_path.empty()) {
        auto s = Sink::to_path(opts.report_path);
        if (!s) return s.error();
        rs.report.emplace(std::move(*s));
    } else if (opts.check) {
        rs.report.emplace(Sink::to_fd(out_fd, "standard output"));
    }
    if (!opts.changed_list.empty()) {
        auto fd = open_changed_list(opts.changed_list);
        if (!fd) return fd.error();
        rs.changed_list_fd = *fd;
    }
    if (opts.syslog) rs.syslog.emplace();
    return ok();
}

// -o is all or nothing; the report is committed whatever happened.
void commit_outputs(RunState &rs)
{
    if (rs.out) {
        // Nothing to write (every input failed before a message, e.g. an empty one): the
        // file already there stays, rather than an empty one in its place.
        if (rs.outcome.tempfail || (rs.outcome.worst != Code::Ok && rs.st.messages == 0)) rs.out->discard();
        else if (auto s = rs.out->commit(); !s) rs.outcome.fail(s.error());
    }
    if (rs.report)
        if (auto s = rs.report->commit(); !s) rs.outcome.fail(s.error());
}

} // namespace

EngineConfig engine_config(const Options &opts, Runner who)
{
    EngineConfig cfg;
    cfg.limits = opts.limits;
    cfg.signed_mode = opts.signed_mode;
    if (who == Runner::Service) {
        cfg.summary = true;
        cfg.report = !opts.report_path.empty() || !opts.stats_path.empty(); // the counters count its entries
    } else {
        // A report is made also for --verbose's summary (its errors counted by kind), but not
        // for the progress line and summary on a terminal: a report needs every message
        // parsed (none copied as it came, its signatures analysed), which made the run on a
        // terminal 2.5x the piped one (bench/progress.sh).
        cfg.report = !opts.report_path.empty() || opts.check || opts.verbose;
        cfg.summary = opts.syslog;
    }
    return cfg;
}

void RunStats::add(const RunStats &o)
{
    messages += o.messages;
    changed += o.changed;
    failed += o.failed;
    unprocessed += o.unprocessed;
    dangling += o.dangling;
    for (const auto &[code, n] : o.errors_by_code) errors_by_code[code] += n;
}

std::string summary_line(const RunStats &st, const Options &opts)
{
    std::string line = std::to_string(st.messages) + " messages, " + std::to_string(st.changed) + " changed, " +
                       std::to_string(st.dangling) + " dangling references";
    std::size_t problems = 0;
    for (const auto &[code, n] : st.errors_by_code) problems += n;
    if (!engine_config(opts, Runner::Batch).report) { // the terminal's: no report to count the errors of
        if (st.unprocessed) line += ", " + std::to_string(st.unprocessed) + " left partly unprocessed";
        if (st.failed) line += ", " + std::to_string(st.failed) + " failed (handled per --on-error)";
        return line + "; --verbose or --report=FILE counts the errors by kind";
    }
    if (problems == 0 && st.failed == 0) return line + ", no errors";
    // What the report calls them, in words (error_code.cc).
    std::string kinds;
    for (const auto &[code, n] : st.errors_by_code)
        kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + what_it_means(code);
    if (st.failed)
        kinds += (kinds.empty() ? "" : ", ") + std::to_string(st.failed) + " failed (handled per --on-error)";
    line += ", errors: " + kinds;
    line += opts.report_path.empty() ? "; --report=FILE lists each one" : "; see " + opts.report_path;
    return line;
}

int run(const Options &opts, std::vector<std::unique_ptr<Pass>> &passes, int in_fd, int out_fd, RunStats *stats,
        TakeHook *take_hook)
{
    RunStats local;
    signal_reports_in_place(opts.in_place && !opts.check);
    Inputs inputs(opts, in_fd);
    Engine engine(passes, engine_config(opts, Runner::Batch));
    RunState rs(opts, engine, inputs, stats ? *stats : local);
    rs.take_hook = take_hook;
    engine.set_fault(rs.faults.pass);
    if (Status s = open_outputs(rs, out_fd); !s) {
        g_warning("%s", s.error().message.c_str());
        return exit_status(s.error().code);
    }
    if (rs.out)
        if (Status s = inputs.check_one_output(); !s) {
            g_warning("%s", s.error().message.c_str());
            return exit_status(s.error().code);
        }
    if (engine.wants_index() && inputs.size() > 1) index_inputs(rs);
    if (rs.jobs() > 1 && opts.in_place && inputs.size() > 1) {
        run_files_forked(rs);
    } else {
        for (std::size_t k = 0; k < inputs.size() && !rs.outcome.ended; ++k) run_input(rs, k, rs.jobs());
    }
    if (rs.outcome.ended) return *rs.outcome.ended;
    if (take_hook)
        if (Status s = take_hook->finish(); !s) rs.outcome.fail(s.error());
    rs.progress.done();
    commit_outputs(rs);
    const RunStats &st = rs.st;
    if (opts.progress || opts.verbose) g_message("%s", summary_line(st, opts).c_str());
    if (opts.strict && st.unprocessed > 0) rs.outcome.worsen(Code::DataErr);
    return exit_status(rs.outcome.worst);
}

} // namespace mimeuri
