#include "run.hh"
#include "signatures.hh"

#include "extract.hh"
#include "lock.hh"
#include "maildir.hh"
#include "output.hh"
#include "spool.hh"
#include "syslog.hh"
#include "workers.hh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <fcntl.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace mimeuri {

namespace {

// Lower rank wins when several outcomes compete for the exit status.
int rank(Code c)
{
    switch (c) {
    case Code::IoErr: return 1;
    case Code::CantCreate: return 2;
    case Code::TempFail: return 3;
    case Code::Software: return 4;
    case Code::NoInput: return 5;
    case Code::DataErr: return 6;
    case Code::Usage: return 7;
    case Code::Ok: return 100;
    }
    return 99;
}

void worsen(Code &worst, Code c)
{
    if (rank(c) < rank(worst)) worst = c;
}

// What the run keeps of one message once its passes are done.
struct Plan {
    std::vector<Edit> edits;
    std::string report_line;
    std::string log_line;  // for --syslog
    std::string cause;     // an internal error, handled per --on-error
    std::string message_id;
    bool unprocessed{false};
    std::size_t dangling{0};
    std::size_t dangling_mid{0};
    std::string output_dir;               // --cid=extract: the top folder, and the files
    std::vector<OutputFile> output_files; // written into a folder of their own when taken
};

std::string serialize(const Plan &p)
{
    Record r;
    r.put(p.cause);
    r.put(p.message_id);
    r.put(static_cast<std::size_t>(p.unprocessed));
    r.put(p.dangling);
    r.put(p.dangling_mid);
    r.put(p.report_line);
    r.put(p.log_line);
    r.put(p.edits.size());
    for (const Edit &e : p.edits) {
        r.put(static_cast<std::size_t>(e.begin));
        r.put(static_cast<std::size_t>(e.end));
        r.put(e.text);
    }
    r.put(p.output_dir);
    r.put(p.output_files.size());
    for (const OutputFile &f : p.output_files) {
        r.put(f.name);
        r.put(f.bytes);
    }
    return r.take();
}

Plan deserialize(std::string bytes)
{
    Record r(std::move(bytes));
    Plan p;
    p.cause = r.get();
    p.message_id = r.get();
    p.unprocessed = r.get_size() != 0;
    p.dangling = r.get_size();
    p.dangling_mid = r.get_size();
    p.report_line = r.get();
    p.log_line = r.get();
    std::size_t n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        Edit e;
        e.begin = static_cast<std::int64_t>(r.get_size());
        e.end = static_cast<std::int64_t>(r.get_size());
        e.text = r.get();
        p.edits.push_back(std::move(e));
    }
    p.output_dir = r.get();
    n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        OutputFile f;
        f.name = r.get();
        f.bytes = r.get();
        p.output_files.push_back(std::move(f));
    }
    return p;
}

// FILE arguments: a Maildir (a folder with cur/ or new/) stands for the files in them.
std::vector<std::string> expand_inputs(const std::vector<std::string> &in)
{
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const auto &path : in) {
        std::error_code ec;
        bool maildir = path != "-" && fs::is_directory(path, ec) &&
                       (fs::is_directory(fs::path(path) / "cur", ec) || fs::is_directory(fs::path(path) / "new", ec));
        if (!maildir) {
            out.push_back(path);
            continue;
        }
        std::vector<std::string> files;
        for (const char *sub : {"cur", "new"}) {
            fs::path d = fs::path(path) / sub;
            if (!fs::is_directory(d, ec)) continue;
            for (const auto &e : fs::directory_iterator(d, ec))
                if (e.is_regular_file(ec) && e.path().filename().string()[0] != '.') files.push_back(e.path().string());
        }
        std::sort(files.begin(), files.end());
        out.insert(out.end(), files.begin(), files.end());
    }
    return out;
}

// A file in a Maildir's cur/ or new/ is rewritten through the Maildir's tmp/ (same file
// system, and mail readers never look there).
std::string maildir_tmp(const std::string &path)
{
    namespace fs = std::filesystem;
    fs::path p(path), dir = p.parent_path();
    std::error_code ec;
    if ((dir.filename() == "cur" || dir.filename() == "new") && fs::is_directory(dir.parent_path() / "tmp", ec))
        return (dir.parent_path() / "tmp").string();
    return {};
}

std::string describe(const MessageReport &rep)
{
    auto count = [](JsonArray *a, const char *member, std::initializer_list<const char *> values) {
        std::size_t n = 0;
        for (guint i = 0; i < json_array_get_length(a); ++i) {
            JsonObject *o = json_array_get_object_element(a, i);
            if (!json_object_has_member(o, member) || json_object_get_null_member(o, member)) continue;
            std::string v = json_object_get_string_member(o, member);
            for (const char *want : values) n += v == want;
        }
        return n;
    };
    std::string out = rep.changed ? "changed" : "unchanged";
    std::size_t refs = count(rep.refs.get(), "action", {"repaired", "inlined", "extracted", "rewritten"});
    std::size_t ext = count(rep.external_bodies.get(), "status", {"normalized", "mapped", "converted"});
    std::size_t dangling = count(rep.refs.get(), "status", {"dangling"});
    if (refs) out += ", references rewritten=" + std::to_string(refs);
    if (dangling) out += ", dangling=" + std::to_string(dangling);
    if (ext) out += ", external bodies rewritten=" + std::to_string(ext);
    if (json_array_get_length(rep.labels.get())) out += ", labels=" + std::to_string(json_array_get_length(rep.labels.get()));
    if (rep.error_count()) out += ", problems=" + std::to_string(rep.error_count());
    return out;
}

class Progress {
public:
    Progress(bool on, std::int64_t total_bytes) : on_(on), total_(total_bytes), start_(clock::now()) {}
    void update(std::size_t messages, std::int64_t bytes)
    {
        if (!on_) return;
        auto now = clock::now();
        if (now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        double secs = std::chrono::duration<double>(now - start_).count();
        if (secs <= 0) return;
        double mbs = static_cast<double>(bytes) / 1e6 / secs;
        std::string eta = "?";
        if (total_ > 0 && bytes > 0) {
            auto left = static_cast<long>(secs * static_cast<double>(total_ - bytes) / static_cast<double>(bytes));
            eta = std::to_string(left / 60) + ":" + (left % 60 < 10 ? "0" : "") + std::to_string(left % 60);
        }
        std::fprintf(stderr, "\rmimeuri: %zu messages, %.0f msg/s, %.1f MB/s, ETA %s   ", messages,
                     static_cast<double>(messages) / secs, mbs, eta.c_str());
    }
    void done()
    {
        if (on_) std::fprintf(stderr, "\r\033[K");
    }
    void mute() { on_ = false; } // in a worker: the parent draws the line

private:
    using clock = std::chrono::steady_clock;
    bool on_;
    std::int64_t total_;
    clock::time_point start_, last_{};
};

} // namespace

void log_message_error(const std::string &source, std::size_t index, const std::string &message_id,
                       const std::string &cause)
{
    std::string id = message_id.empty() ? "" : " <" + message_id + ">";
    g_warning("%s: message %zu%s: %s", source.c_str(), index, id.c_str(), cause.c_str());
}

int run(const Options &opts, std::vector<std::unique_ptr<Pass>> &passes, int in_fd, int out_fd, RunStats *stats)
{
    RunStats local;
    RunStats &st = stats ? *stats : local;
    signal_reports_in_place(opts.in_place && !opts.check);
    Code worst = Code::Ok;
    bool any_tempfail = false;
    const bool inject_fault = g_strcmp0(g_getenv("MIMEURI_FAULT"), "pass") == 0;
    // MIMEURI_FAULT=worker: every worker dies before its second message; worker:N: the
    // worker given message N (0-based) dies on it (docs/testing.md).
    const char *fault = g_getenv("MIMEURI_FAULT");
    const bool crash_worker = g_strcmp0(fault, "worker") == 0;
    const std::optional<std::size_t> crash_on = g_str_has_prefix(fault ? fault : "", "worker:")
                                                    ? std::optional<std::size_t>(g_ascii_strtoull(fault + 7, nullptr, 10))
                                                    : std::nullopt;
    // A pass that depends on message order (extract numbers its folders): one process.
    const bool ordered = std::any_of(passes.begin(), passes.end(), [](const auto &p) { return p->ordered(); });
    const int jobs = ordered ? 1 : std::max(1, opts.jobs);
    std::optional<Syslog> syslog;
    if (opts.syslog) syslog.emplace();

    std::optional<Sink> out; // standard output or -o, shared by all inputs
    if (!opts.check && !opts.in_place) {
        if (opts.output.empty()) {
            out.emplace(Sink::to_fd(out_fd, "standard output"));
        } else {
            auto s = Sink::to_path(opts.output);
            if (!s) {
                g_warning("%s", s.error().message.c_str());
                return exit_status(s.error().code);
            }
            out.emplace(std::move(*s));
        }
    }
    std::optional<Sink> report;
    if (!opts.report_path.empty()) {
        auto s = Sink::to_path(opts.report_path);
        if (!s) {
            g_warning("%s", s.error().message.c_str());
            return exit_status(s.error().code);
        }
        report.emplace(std::move(*s));
    } else if (opts.check) {
        report.emplace(Sink::to_fd(out_fd, "standard output"));
    }
    const bool want_report = report.has_value();

    // --changed-list: one line per file renamed into place, written by the process that
    // renamed it (O_APPEND: whole lines, also from workers), so that it is right even when
    // the run is stopped part way.
    int changed_list_fd = -1;
    if (!opts.changed_list.empty()) {
        changed_list_fd = ::open(opts.changed_list.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
        if (changed_list_fd < 0) {
            int err = errno;
            g_warning("cannot write %s: %s", opts.changed_list.c_str(), g_strerror(err));
            return exit_status(Code::CantCreate);
        }
    }
    struct CloseList {
        int &fd;
        ~CloseList()
        {
            if (fd >= 0) ::close(fd);
        }
    } close_list{changed_list_fd};

    std::vector<std::string> inputs = expand_inputs(opts.inputs);
    if (inputs.empty()) inputs.emplace_back("-");
    std::int64_t total_bytes = 0;
    for (const auto &in : inputs) {
        struct stat sb {};
        if (in != "-" && ::stat(in.c_str(), &sb) == 0) total_bytes += sb.st_size;
    }
    Progress progress(opts.progress, total_bytes);
    std::int64_t done_bytes = 0;

    // Standard input can be read once only: kept for the second sweep.
    std::optional<Result<Source>> stdin_source;
    auto open_input = [&](const std::string &input) -> Result<Source> {
        if (input != "-") return Source::open_path(input, opts.spool_threshold);
        if (!stdin_source) stdin_source.emplace(Source::read_fd(in_fd, "-", opts.spool_threshold));
        if (!*stdin_source) return stdin_source->error();
        return (*stdin_source)->reopen();
    };
    auto format_of = [&](const Source &src) -> Result<Format> {
        if (opts.format != Format::Auto) return opts.format;
        auto m = looks_like_mbox(src);
        if (!m) return m.error();
        return *m ? Format::Mbox : Format::Message;
    };

    // Several inputs to one output: mboxes may follow each other, but single messages would
    // run together into one that no reader could split. Refused before anything is written.
    if (out && inputs.size() > 1) {
        std::size_t readable = 0;
        const std::string *single = nullptr;
        for (const auto &in : inputs) {
            auto src = open_input(in);
            if (!src || src->size() == 0) continue; // reported when it is processed
            ++readable;
            auto format = format_of(*src);
            if (format && *format == Format::Message && !single) single = &in;
        }
        if (single && readable > 1) {
            g_warning("%s is a single message: several inputs go to one output only as mboxes "
                      "(--format=mbox); use --in-place, or one run per message",
                      single->c_str());
            return exit_status(Code::Usage);
        }
    }

    // Passes that resolve references across messages (mid:) index the whole run first, so
    // that forward references resolve too. Inputs that cannot be read are reported below.
    bool wants_index = false;
    for (auto &p : passes) wants_index = wants_index || p->wants_index();
    // One input: the messages are indexed as they are planned (by each worker for its share,
    // merged at the end), and only those whose mid: references were still dangling then are
    // planned again once everything is indexed. Several inputs: the whole run is indexed first.
    const bool index_as_we_go = wants_index && inputs.size() == 1;
    if (wants_index && !index_as_we_go) {
        // Several inputs: with --jobs, each worker indexes whole inputs and sends its share.
        auto index_input = [&](std::size_t input_no) {
            auto src = open_input(inputs[input_no]);
            if (!src || src->size() == 0) return;
            auto format = format_of(*src);
            if (!format) return;
            auto segments = split(*src, *format);
            if (!segments) return;
            for (std::size_t i = 0; i < segments->size(); ++i) {
                auto ctx = MessageContext::parse(*src, (*segments)[i], i + 1, *format == Format::Mbox, opts.limits);
                ctx->report().input_no = input_no;
                if (!ctx->message()) continue;
                for (auto &p : passes)
                    if (p->wants_index()) (void)p->index(*ctx);
            }
        };
        if (jobs == 1) {
            for (std::size_t k = 0; k < inputs.size(); ++k) index_input(k);
        } else {
            // Standard input is read here, once, before the workers exist.
            if (std::find(inputs.begin(), inputs.end(), "-") != inputs.end()) (void)open_input("-");
            run_forked(
                jobs, Feed::fixed(inputs.size()),
                [&](std::size_t k) {
                    index_input(k);
                    return std::string();
                },
                [](std::size_t, std::string &&, bool) { return true; },
                [&]() {
                    Record r;
                    for (auto &p : passes) r.put(p->save_index());
                    return r.take();
                },
                [&](std::string &&bytes) {
                    try {
                        Record r(std::move(bytes));
                        for (auto &p : passes) p->merge_index(r.get());
                    } catch (const std::exception &ex) {
                        g_warning("a worker's index was unreadable: %s", ex.what());
                    }
                });
        }
    }

    // Report lines go to the report, or, in a worker taking whole files, back to the parent.
    std::optional<std::string> captured_report;
    auto write_report = [&](const std::string &lines) -> Status {
        if (captured_report) {
            *captured_report += lines;
            return ok();
        }
        return report->write(lines);
    };
    std::optional<int> ended; // set when a failed write to the shared output ends the run
    std::size_t extract_folders = 0; // --cid=extract: the run numbers its folders as it takes messages

    // One input, its messages planned by `input_jobs` processes.
    auto process = [&](std::size_t input_no, int input_jobs) {
        const std::string &input = inputs[input_no];
        // An mbox rewritten in place is locked as MDAs lock it, from before it is read until
        // after the rename, so that no delivery lands in the old file. A Maildir needs no lock.
        std::optional<MboxLock> lock;
        if (struct stat lst {}; opts.in_place && maildir_tmp(input).empty() && ::stat(input.c_str(), &lst) == 0 &&
                                S_ISREG(lst.st_mode)) {
            auto l = MboxLock::acquire(input, opts.lock_timeout);
            if (!l) {
                g_warning("%s", l.error().message.c_str());
                if (l.error().code == Code::TempFail) any_tempfail = true;
                worsen(worst, l.error().code);
                return;
            }
            lock.emplace(std::move(*l));
        }
        auto src = open_input(input);
        if (!src) {
            g_warning("%s", src.error().message.c_str());
            Code c = src.error().code;
            if (c == Code::TempFail) any_tempfail = true;
            worsen(worst, c);
            return;
        }
        // What was read, for --in-place: the checks before the rename compare with it.
        struct stat read_st {};
        if (opts.in_place && src->fd() >= 0 && ::fstat(src->fd(), &read_st) == 0) read_st.st_size = src->size();
        if (src->size() == 0) {
            // An empty output would be stored as an empty message by procmail, Dovecot or Exim.
            g_warning("%s: empty input, nothing to filter", input.c_str());
            if (opts.on_error == OnError::TempFail) {
                any_tempfail = true;
                worsen(worst, Code::TempFail);
            } else {
                worsen(worst, Code::DataErr);
            }
            return;
        }
        auto detected = format_of(*src);
        if (!detected) {
            g_warning("%s", detected.error().message.c_str());
            worsen(worst, detected.error().code);
            return;
        }
        // With one job the input is split before anything is written. Workers start on the
        // first messages while the parent splits the rest: its first MiB is split here.
        Splitter splitter(*src, *detected);
        std::vector<Segment> segs;
        std::optional<Error> split_failure;
        auto split_more = [&](std::int64_t budget) { // false once split (or failed)
            auto r = splitter.step(segs, budget);
            if (!r) split_failure = r.error();
            return r && !*r;
        };
        split_more(input_jobs == 1 ? std::numeric_limits<std::int64_t>::max() : (1 << 20));
        if (split_failure) {
            g_warning("%s", split_failure->message.c_str());
            worsen(worst, split_failure->code);
            return;
        }
        const bool mbox = *detected == Format::Mbox;

        // With --on-error=pass and a shared output, each message is written as soon as it is
        // done, so memory does not grow with the mailbox. Otherwise (tempfail: nothing for a
        // failed input; --in-place: only files that change) the edits wait for the input's end.
        const bool stream = opts.on_error == OnError::Pass && out.has_value();
        std::vector<Edit> held;
        std::int64_t written = 0;
        std::string report_buffer;
        bool input_failed = false, input_changed = false;
        std::optional<Status> write_failure;

        auto plan_one = [&](const Source &s, std::size_t i, bool index_first) {
            Plan plan;
            try {
                auto ctx = MessageContext::parse(s, segs[i], i + 1, mbox, opts.limits);
                MessageReport &rep = ctx->report();
                rep.input_no = input_no;
                if (index_first && ctx->message())
                    for (auto &p : passes)
                        if (p->wants_index()) (void)p->index(*ctx);
                protect_conflicting_types(*ctx); // before any pass, as signatures
                const Signatures signatures = Signatures::analyse(*ctx, opts.signed_mode); // before any pass
                if (ctx->message()) {
                    for (auto &p : passes) {
                        try {
                            // Fault injection for the --on-error tests (docs/testing.md).
                            if (inject_fault) throw std::runtime_error("injected fault (MIMEURI_FAULT=pass)");
                            Status r = p->apply(*ctx);
                            if (!r && r.error().code == Code::DataErr) {
                                // A limit (time): the message stays as it came, reported. No
                                // --on-error policy: a retry would hit the same limit.
                                ctx->drop_edits();
                                rep.add_error("", "limit", std::string(p->name()) + ": " + r.error().message);
                                break;
                            }
                            if (!r) plan.cause = std::string(p->name()) + ": " + r.error().message;
                        } catch (const std::exception &ex) {
                            plan.cause = std::string(p->name()) + ": internal error: " + ex.what();
                        } catch (...) {
                            plan.cause = std::string(p->name()) + ": internal error";
                        }
                        if (!plan.cause.empty()) break;
                    }
                    if (plan.cause.empty())
                        if (Status f = ctx->finish(); !f) {
                            ctx->drop_edits();
                            rep.add_error("", "content-length", f.error().message + "; message left untouched");
                        }
                }
                signatures.report(*ctx);
                plan.message_id = rep.message_id;
                if (!plan.cause.empty()) {
                    rep.add_error("", "internal", plan.cause);
                    rep.changed = false; // its original bytes are written (pass) or nothing (tempfail)
                } else {
                    plan.edits = ctx->edits();
                    plan.unprocessed = rep.error_count() > 0;
                    plan.output_dir = ctx->output_dir;
                    plan.output_files = ctx->output_files();
                }
                for (guint k = 0; k < json_array_get_length(rep.refs.get()); ++k) {
                    JsonObject *ref = json_array_get_object_element(rep.refs.get(), k);
                    bool dangling = g_strcmp0(json_object_get_string_member(ref, "status"), "dangling") == 0;
                    plan.dangling += dangling;
                    plan.dangling_mid += dangling && g_strcmp0(json_object_get_string_member(ref, "kind"), "mid") == 0;
                }
                if (want_report) plan.report_line = rep.to_json() + "\n";
                if (syslog) plan.log_line = describe(rep);
            } catch (const std::exception &ex) {
                plan.cause = std::string("internal error: ") + ex.what();
                plan.edits.clear();
            }
            return plan;
        };

        // In message order: logs, statistics, report, output.
        std::size_t taken = 0; // messages taken so far
        auto take = [&](std::size_t i, Plan &&plan) {
            if (write_failure) return;
            if (lock) lock->keep_alive();
            taken = i + 1;
            if (!opts.check && !plan.output_files.empty()) {
                // Written once, in message order. A failure fails the message as a pass error
                // does (its report no longer claims "extracted"); --strict makes it count.
                if (auto wrote = write_extraction(plan.output_dir, ++extract_folders, plan.output_files); !wrote) {
                    plan.cause = "references: " + wrote.error().message;
                    plan.edits.clear();
                    plan.unprocessed = true;
                    plan.report_line = report_extraction_failed(plan.report_line, wrote.error().message);
                }
            }
            ++st.messages;
            std::string id = plan.message_id.empty() ? "" : " <" + plan.message_id + ">";
            if (!plan.cause.empty()) {
                ++st.failed;
                log_message_error(input, i + 1, plan.message_id, plan.cause);
                if (opts.on_error == OnError::TempFail) input_failed = true;
            }
            if (plan.unprocessed) {
                ++st.unprocessed;
                if (opts.verbose) log_message_error(input, i + 1, plan.message_id, "left partly unprocessed (see report)");
            }
            if (!plan.edits.empty()) {
                ++st.changed;
                input_changed = true;
            }
            st.dangling += plan.dangling;
            if (syslog) {
                if (!plan.cause.empty()) syslog->warning(input + ": message " + std::to_string(i + 1) + id + ": " + plan.cause);
                else syslog->info(input + ": message " + std::to_string(i + 1) + id + ": " + plan.log_line);
            }
            if (report) {
                report_buffer += plan.report_line; // written in blocks, not a call per message
                if (report_buffer.size() >= (1u << 16)) {
                    if (auto s = write_report(report_buffer); !s) {
                        write_failure = s;
                        return;
                    }
                    report_buffer.clear();
                }
            }
            const std::int64_t until = segs[i].next;
            if (stream) {
                // Untouched messages are copied in runs of up to 4 MiB, not one call each.
                if (!plan.edits.empty() || until - written >= (4 << 20) || until == src->size()) {
                    std::vector<const Edit *> edits;
                    for (const Edit &ed : plan.edits) edits.push_back(&ed);
                    if (auto s = write_spliced(*out, *src, written, until, edits); !s) {
                        write_failure = s;
                        return;
                    }
                    written = until;
                }
            } else {
                for (Edit &ed : plan.edits) held.push_back(std::move(ed));
            }
            done_bytes += until - segs[i].begin;
            progress.update(st.messages, done_bytes);
        };

        // From the first message with a dangling mid: reference on (index_as_we_go), plans
        // wait; once the whole input is indexed, those messages are planned again, then all
        // are taken in order. Waiting plans past a few MiB go to a temporary file.
        RecordSpool waiting;
        bool holding = index_as_we_go;
        std::size_t arrived = 0; // plans arrive in message order: those from `taken` on wait
        // Takes the waiting plans (re-planning those with dangling mid: references when the
        // index is whole). Plans that cannot be read back fail: with --on-error=pass their
        // messages are written as they came, so the output is still complete.
        auto release = [&](bool replan) {
            Status s = waiting.drain([&](std::string &&bytes) {
                if (write_failure) return false;
                Record r(std::move(bytes));
                std::size_t i = r.get_size();
                Plan plan = deserialize(r.get());
                take(i, replan && plan.dangling_mid ? plan_one(*src, i, false) : std::move(plan));
                return true;
            });
            if (s || write_failure) return;
            if (opts.on_error != OnError::Pass) {
                write_failure = s;
                return;
            }
            while (taken < arrived && !write_failure) {
                Plan lost;
                lost.cause = s.error().message;
                take(taken, std::move(lost));
            }
        };
        auto arrive = [&](std::size_t i, Plan &&plan) {
            arrived = i + 1;
            if (!holding || (waiting.empty() && plan.dangling_mid == 0)) return take(i, std::move(plan));
            Record r;
            r.put(i);
            r.put(serialize(plan));
            Status s = waiting.push(r.take());
            if (s || write_failure) return;
            if (opts.on_error != OnError::Pass) {
                write_failure = s; // 75; with tempfail nothing was written for this input
                return;
            }
            // --on-error=pass promises a whole output: stop holding plans. Those waiting and
            // those to come are taken as planned, their forward mid: references dangling.
            g_warning("%s: %s; from message %zu on, mid: references to later messages are reported dangling",
                      input.c_str(), s.error().message.c_str(), taken + 1);
            holding = false;
            release(false);
        };
        if (input_jobs == 1 || (splitter.done() && segs.size() < 2)) {
            for (std::size_t i = 0; i < segs.size() && !write_failure; ++i) arrive(i, plan_one(*src, i, index_as_we_go));
        } else {
            std::optional<Result<Source>> mine; // a worker's own handle
            std::size_t produced_here = 0;      // counted in each worker (fault injection)
            static_assert(std::is_trivially_copyable_v<Segment>, "segments travel to workers as bytes");
            Feed feed;
            feed.more = [&] { return split_more(1 << 20); };
            feed.known = [&] { return segs.size(); };
            feed.describe = [&](std::size_t begin, std::size_t end) {
                return std::string(reinterpret_cast<const char *>(segs.data() + begin), (end - begin) * sizeof(Segment));
            };
            feed.learn = [&](std::size_t begin, std::size_t end, std::string &&bytes) { // in a worker
                if (segs.size() < end) segs.resize(end);
                std::memcpy(static_cast<void *>(segs.data() + begin), bytes.data(), std::min(bytes.size(), (end - begin) * sizeof(Segment)));
            };
            run_forked(
                input_jobs, feed,
                [&](std::size_t i) {
                    // Fault injection: a worker dies on its second message (docs/testing.md).
                    if ((crash_worker && ++produced_here == 2) || crash_on == i) ::raise(SIGKILL);
                    if (!mine) mine.emplace(src->reopen());
                    if (!*mine) {
                        Plan p;
                        p.cause = "cannot read the input again: " + (*mine).error().message;
                        return serialize(p);
                    }
                    return serialize(plan_one(**mine, i, index_as_we_go));
                },
                [&](std::size_t i, std::string &&bytes, bool ok) {
                    Plan plan;
                    if (ok) {
                        try {
                            plan = deserialize(std::move(bytes));
                        } catch (const std::exception &ex) {
                            plan.cause = std::string("unreadable worker result: ") + ex.what();
                        }
                    } else {
                        plan.cause = "the worker process handling this message died";
                    }
                    arrive(i, std::move(plan));
                    return !write_failure; // the shared output is gone: stop the workers
                },
                [&]() { // each worker's share of the index
                    Record r;
                    for (auto &p : passes) r.put(index_as_we_go ? p->save_index() : std::string());
                    return r.take();
                },
                [&](std::string &&bytes) {
                    try {
                        Record r(std::move(bytes));
                        for (auto &p : passes)
                            if (std::string part = r.get(); !part.empty()) p->merge_index(part);
                    } catch (const std::exception &ex) {
                        g_warning("a worker's index was unreadable: %s", ex.what());
                    }
                });
        }
        // A read error part way through splitting (the file shrank or could not be read): the
        // rest of the input cannot be copied either, so it ends the run as a failed write does.
        if (split_failure && !write_failure) write_failure = Status(*split_failure);
        release(true);
        if (report && !report_buffer.empty() && !write_failure) {
            if (auto s = write_report(report_buffer); !s) write_failure = s;
            report_buffer.clear();
        }
        if (write_failure) {
            // A failed write to the shared output ends the run: nothing after it can land.
            g_warning("%s", write_failure->error().message.c_str());
            ended = exit_status(write_failure->error().code);
            return;
        }

        if (stream) return;
        if (input_failed) {
            any_tempfail = true;
            worsen(worst, Code::TempFail);
            return; // nothing written for this input
        }
        std::vector<const Edit *> edits;
        for (const Edit &ed : held) edits.push_back(&ed);
        if (opts.in_place) {
            if (!input_changed) return; // untouched files keep their bytes and times
            struct stat sb {};
            if (::stat(input.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) {
                g_warning("%s: --in-place rewrites regular files only; left as it was", input.c_str());
                worsen(worst, Code::CantCreate);
                return;
            }
            // A file that cannot be rewritten safely is left as it was, which is what
            // --on-error=pass asks for; tempfail makes the run end in 75.
            auto refuse = [&](const std::string &why) {
                g_warning("%s: %s; left as it was", input.c_str(), why.c_str());
                ++st.failed;
                if (opts.on_error == OnError::TempFail) {
                    any_tempfail = true;
                    worsen(worst, Code::TempFail);
                }
            };
            // Postfix's safe_open: a second name would keep the old bytes (or, for a
            // mailbox, get the next deliveries while this name holds the rewrite).
            if (read_st.st_nlink > 1)
                return refuse("has " + std::to_string(read_st.st_nlink) + " hard links, and a rewrite would split them");
            if (!(read_st.st_mode & S_IWUSR) && !opts.force_read_only)
                return refuse("is read-only (mode " + std::to_string((read_st.st_mode >> 6) & 7) +
                              std::to_string((read_st.st_mode >> 3) & 7) + std::to_string(read_st.st_mode & 7) +
                              "); --force-read-only rewrites it");
            const std::string md_tmp = maildir_tmp(input);
            auto sink = Sink::atomic(input, input, md_tmp);
            if (!sink) {
                g_warning("%s", sink.error().message.c_str());
                worsen(worst, sink.error().code);
                return;
            }
            Status s = write_spliced(*sink, *src, 0, src->size(), edits);
            if (!s) {
                g_warning("%s", s.error().message.c_str());
                worsen(worst, s.error().code);
                return;
            }
            if (lock) lock->keep_alive();
            std::string landed = sink->name();
            if (md_tmp.empty()) {
                s = sink->commit_replacing(read_st, sink->name(), sink->name());
            } else {
                // A Maildir file: its S= and W= made right; if an IMAP server renamed it
                // meanwhile (flags, new/ -> cur/), it is found again by inode and unique part.
                auto sizes = maildir::sizes_of(sink->temp_path());
                if (!sizes) {
                    g_warning("%s", sizes.error().message.c_str());
                    worsen(worst, sizes.error().code);
                    return;
                }
                std::string current = sink->name();
                for (int attempt = 0;; ++attempt) {
                    if (struct stat now {}; ::lstat(current.c_str(), &now) != 0 || now.st_ino != read_st.st_ino ||
                                            now.st_dev != read_st.st_dev)
                        current = maildir::locate(sink->name(), read_st.st_dev, read_st.st_ino);
                    if (current.empty())
                        return refuse("was renamed or removed while being rewritten, and no file in cur/ or new/ "
                                      "has its unique name and inode any more");
                    landed = maildir::with_sizes(current, sizes->size, sizes->vsize);
                    s = sink->commit_replacing(read_st, current, landed);
                    if (s || s.error().code != Code::NoInput || attempt == 2) break;
                    current.clear(); // renamed between the look and the exchange: look again
                }
            }
            if (!s) {
                g_warning("%s", s.error().message.c_str());
                if (s.error().code == Code::TempFail) any_tempfail = true;
                worsen(worst, s.error().code == Code::NoInput ? Code::TempFail : s.error().code);
                return;
            }
            if (changed_list_fd >= 0) {
                std::string line = landed + "\n";
                if (::write(changed_list_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
                    g_warning("%s: cannot write to %s: %s", landed.c_str(), opts.changed_list.c_str(), g_strerror(errno));
            }
        } else if (out) {
            if (auto s = write_spliced(*out, *src, 0, src->size(), edits); !s) {
                g_warning("%s", s.error().message.c_str());
                ended = exit_status(s.error().code);
                return;
            }
        }
    };

    // --in-place over many files (a Maildir): each file is independent, so with --jobs the
    // workers take whole files; the parent writes the report and counts, in input order.
    if (jobs > 1 && opts.in_place && inputs.size() > 1) {
        run_forked(
            jobs, Feed::fixed(inputs.size()),
            [&](std::size_t k) { // in a worker: this process's copies of the totals
                captured_report.emplace();
                progress.mute();
                st = RunStats{};
                done_bytes = 0;
                worst = Code::Ok;
                any_tempfail = false;
                ended.reset();
                if (crash_on == k) ::raise(SIGKILL);
                process(k, 1);
                Record r;
                r.put(*captured_report);
                for (std::size_t v : {st.messages, st.changed, st.failed, st.unprocessed, st.dangling}) r.put(v);
                r.put(static_cast<std::size_t>(worst));
                r.put(static_cast<std::size_t>(any_tempfail));
                r.put(static_cast<std::size_t>(ended.value_or(0)));
                r.put(static_cast<std::size_t>(done_bytes));
                return r.take();
            },
            [&](std::size_t k, std::string &&bytes, bool alive) {
                if (!alive) {
                    // Nothing was renamed into place: the file is as it was, which is what
                    // --on-error=pass asks for; tempfail makes the run end in 75.
                    g_warning("%s: the worker process handling this file died; left as it was", inputs[k].c_str());
                    ++st.failed;
                    if (opts.on_error == OnError::TempFail) {
                        any_tempfail = true;
                        worsen(worst, Code::TempFail);
                    }
                    return true;
                }
                try {
                    Record r(std::move(bytes));
                    std::string lines = r.get();
                    for (std::size_t *v : {&st.messages, &st.changed, &st.failed, &st.unprocessed, &st.dangling}) *v += r.get_size();
                    worsen(worst, static_cast<Code>(r.get_size()));
                    any_tempfail = any_tempfail || r.get_size() != 0;
                    if (std::size_t e = r.get_size(); e != 0 && !ended) ended = static_cast<int>(e);
                    done_bytes += static_cast<std::int64_t>(r.get_size());
                    if (report && !lines.empty())
                        if (auto s = report->write(lines); !s && !ended) {
                            g_warning("%s", s.error().message.c_str());
                            ended = exit_status(s.error().code);
                        }
                } catch (const std::exception &ex) {
                    g_warning("%s: unreadable worker result: %s", inputs[k].c_str(), ex.what());
                    worsen(worst, Code::Software);
                }
                progress.update(st.messages, done_bytes);
                return true; // files are independent: the others are still worth doing
            });
        if (ended) return *ended;
    } else {
        for (std::size_t k = 0; k < inputs.size(); ++k) {
            process(k, jobs);
            if (ended) return *ended;
        }
    }
    progress.done();

    if (out) {
        if (any_tempfail) {
            out->discard(); // -o is all or nothing
        } else if (auto s = out->commit(); !s) {
            g_warning("%s", s.error().message.c_str());
            worsen(worst, s.error().code);
        }
    }
    if (report) {
        if (auto s = report->commit(); !s) {
            g_warning("%s", s.error().message.c_str());
            worsen(worst, s.error().code);
        }
    }
    if (opts.progress || opts.verbose)
        g_message("%zu messages, %zu changed, %zu dangling references, %zu errors", st.messages, st.changed, st.dangling,
                  st.failed + st.unprocessed);
    if (opts.strict && st.unprocessed > 0) worsen(worst, Code::DataErr);
    return exit_status(worst);
}

} // namespace mimeuri
