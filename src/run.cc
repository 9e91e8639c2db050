#include "run.hh"

#include "output.hh"

#include <exception>
#include <optional>
#include <stdexcept>

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

struct Plan {
    std::vector<Edit> edits;
    std::string report_line;
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
    const bool inject_fault = g_strcmp0(g_getenv("MIMEURI_FAULT"), "pass") == 0;
    Code worst = Code::Ok;
    bool any_tempfail = false;

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

    std::vector<std::string> inputs = opts.inputs;
    if (inputs.empty()) inputs.emplace_back("-");

    // Standard input can be read once only: kept for the second sweep.
    std::optional<Result<Source>> stdin_source;
    auto open_input = [&](const std::string &input) -> Result<Source> * {
        if (input != "-") return nullptr;
        if (!stdin_source) stdin_source.emplace(Source::read_fd(in_fd, "-", opts.spool_threshold));
        return &*stdin_source;
    };
    auto format_of = [&](const Source &src) -> Result<Format> {
        if (opts.format != Format::Auto) return opts.format;
        auto m = looks_like_mbox(src);
        if (!m) return m.error();
        return *m ? Format::Mbox : Format::Message;
    };

    // Passes that resolve references across messages (mid:) index the whole run first, so
    // that forward references resolve too. Inputs that cannot be read are reported below.
    bool wants_index = false;
    for (auto &p : passes) wants_index = wants_index || p->wants_index();
    if (wants_index) {
        for (const std::string &input : inputs) {
            Result<Source> *cached = open_input(input);
            Result<Source> opened = cached ? Error{} : Source::open_path(input, opts.spool_threshold);
            Result<Source> &src = cached ? *cached : opened;
            if (!src || src->size() == 0) continue;
            auto format = format_of(*src);
            if (!format) continue;
            auto segments = split(*src, *format);
            if (!segments) continue;
            // One message alone in the run: it and its embedded messages are all there is,
            // and the pass searches those directly.
            if (inputs.size() == 1 && segments->size() == 1) break;
            for (std::size_t i = 0; i < segments->size(); ++i) {
                auto ctx = MessageContext::parse(*src, (*segments)[i], i + 1, *format == Format::Mbox, opts.limits);
                if (!ctx->message()) continue;
                for (auto &p : passes)
                    if (p->wants_index()) (void)p->index(*ctx);
            }
        }
    }

    for (const std::string &input : inputs) {
        Result<Source> *cached = open_input(input);
        Result<Source> opened = cached ? Error{} : Source::open_path(input, opts.spool_threshold);
        Result<Source> &src = cached ? *cached : opened;
        if (!src) {
            g_warning("%s", src.error().message.c_str());
            Code c = src.error().code;
            if (c == Code::TempFail) any_tempfail = true;
            worsen(worst, c);
            continue;
        }
        if (src->size() == 0) {
            // An empty output would be stored as an empty message by procmail, Dovecot or Exim.
            g_warning("%s: empty input, nothing to filter", input.c_str());
            if (opts.on_error == OnError::TempFail) {
                any_tempfail = true;
                worsen(worst, Code::TempFail);
            } else {
                worsen(worst, Code::DataErr);
            }
            continue;
        }
        auto detected = format_of(*src);
        if (!detected) {
            g_warning("%s", detected.error().message.c_str());
            worsen(worst, detected.error().code);
            continue;
        }
        const Format format = *detected;
        auto segments = split(*src, format);
        if (!segments) {
            g_warning("%s", segments.error().message.c_str());
            worsen(worst, segments.error().code);
            continue;
        }
        const bool mbox = format == Format::Mbox;

        std::vector<Plan> plans;
        plans.reserve(segments->size());
        bool input_failed = false;
        bool input_changed = false;
        for (std::size_t i = 0; i < segments->size(); ++i) {
            auto ctx = MessageContext::parse(*src, (*segments)[i], i + 1, mbox, opts.limits);
            MessageReport &rep = ctx->report();
            std::string cause;
            if (ctx->message()) {
                for (auto &p : passes) {
                    try {
                        // Fault injection for tests of the --on-error policies (docs/testing.md).
                        if (inject_fault) throw std::runtime_error("injected fault (MIMEURI_FAULT=pass)");
                        Status s = p->apply(*ctx);
                        if (!s) cause = std::string(p->name()) + ": " + s.error().message;
                    } catch (const std::exception &e) {
                        cause = std::string(p->name()) + ": internal error: " + e.what();
                    } catch (...) {
                        cause = std::string(p->name()) + ": internal error";
                    }
                    if (!cause.empty()) break;
                }
            }
            ++st.messages;
            Plan plan;
            if (!cause.empty()) {
                ++st.failed;
                log_message_error(input, i + 1, rep.message_id, cause);
                rep.add_error("", "internal", cause);
                rep.changed = false; // its original bytes are written (pass) or nothing (tempfail)
                if (opts.on_error == OnError::TempFail) input_failed = true;
            } else {
                plan.edits = ctx->edits();
                if (!plan.edits.empty()) {
                    ++st.changed;
                    input_changed = true;
                }
            }
            if (rep.error_count() > 0 && cause.empty()) {
                ++st.unprocessed;
                if (opts.verbose) {
                    // errors are part of the report; say them on stderr only when asked
                    log_message_error(input, i + 1, rep.message_id, "left partly unprocessed (see report)");
                }
            }
            plan.report_line = rep.to_json() + "\n";
            plans.push_back(std::move(plan));
        }

        if (report) {
            for (const Plan &p : plans) {
                if (auto s = report->write(p.report_line); !s) {
                    g_warning("%s", s.error().message.c_str());
                    return exit_status(s.error().code);
                }
            }
        }
        if (input_failed) {
            any_tempfail = true;
            worsen(worst, Code::TempFail);
            continue; // nothing written for this input
        }

        std::vector<const Edit *> edits;
        for (const Plan &p : plans)
            for (const Edit &e : p.edits) edits.push_back(&e);
        if (opts.in_place) {
            if (!input_changed) continue; // untouched files keep their bytes and times
            auto sink = Sink::atomic(input, input);
            if (!sink) {
                g_warning("%s", sink.error().message.c_str());
                worsen(worst, sink.error().code);
                continue;
            }
            Status s = write_spliced(*sink, *src, 0, src->size(), edits);
            if (s) s = sink->commit();
            if (!s) {
                g_warning("%s", s.error().message.c_str());
                worsen(worst, s.error().code);
            }
        } else if (out) {
            if (auto s = write_spliced(*out, *src, 0, src->size(), edits); !s) {
                // A failed write to the shared output ends the run: nothing after it can land.
                g_warning("%s", s.error().message.c_str());
                return exit_status(s.error().code);
            }
        }
    }

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
    if (opts.strict && st.unprocessed > 0) worsen(worst, Code::DataErr);
    return exit_status(worst);
}

} // namespace mimeuri
