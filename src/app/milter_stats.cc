// The service's counters (milter_stats.hh).
#include "milter_stats.hh"

#include "fdio.hh"
#include "registry.hh"

#include <glib.h>
#include <gmime/gmime.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri::milter {
namespace {

// The label values, in the enums' order.
constexpr std::array<const char *, kOutcomes> kOutcomeNames{"unchanged", "changed", "passed-on-error", "tempfailed"};

std::string number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

void family(std::string &out, const char *name, const char *type, const char *help)
{
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// A label value in the text format: backslash, double quote and line feed escaped.
std::string label_value(const std::string &v)
{
    std::string out;
    for (char ch : v) {
        if (ch == '\\' || ch == '"') out += '\\';
        if (ch == '\n') {
            out += "\\n";
            continue;
        }
        out += ch;
    }
    return out;
}

} // namespace

MessageTally tally_report(Outcome outcome, const MessageReport *report)
{
    MessageTally t;
    t.outcome = outcome;
    if (!report) return t;
    for (const ErrorEntry &e : report->errors)
        if (wire_valid(e.code)) ++t.errors[static_cast<std::size_t>(e.code)];
    // A message that went on as it came had no edit done, whatever its entries say.
    if (outcome != Outcome::Changed) return t;
    for (std::size_t n : pass_edits(*report)) t.edits.push_back(static_cast<std::uint32_t>(n));
    return t;
}

Stats::Stats() : edits_(pass_names().size()) { start_now(); }

void Stats::start_now()
{
    started_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Stats::message(const MessageTally &t, double seconds)
{
    constexpr auto relaxed = std::memory_order_relaxed;
    outcomes_[static_cast<std::size_t>(t.outcome)].fetch_add(1, relaxed);
    for (std::size_t i = 0; i < edits_.size() && i < t.edits.size(); ++i)
        if (t.edits[i]) edits_[i].fetch_add(t.edits[i], relaxed);
    for (std::size_t i = 0; i < errors_.size(); ++i)
        if (t.errors[i]) errors_[i].fetch_add(t.errors[i], relaxed);
    std::size_t b = 0;
    while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) ++b;
    buckets_[b].fetch_add(1, relaxed);
    latency_ns_.fetch_add(static_cast<std::uint64_t>(seconds > 0 ? seconds * 1e9 : 0), relaxed);
    if (t.policy.empty()) return;
    std::lock_guard l(policies_mutex_);
    PolicyCounts &p = policies_[t.policy];
    ++p.outcomes[static_cast<std::size_t>(t.outcome)];
    p.edits.resize(edits_.size());
    for (std::size_t i = 0; i < p.edits.size() && i < t.edits.size(); ++i) p.edits[i] += t.edits[i];
}

std::string Stats::exposition() const
{
    std::string out;
    family(out, "mimeuri_messages_total", "counter", "Messages the milter service answered, by outcome.");
    for (std::size_t i = 0; i < outcomes_.size(); ++i)
        out += std::string("mimeuri_messages_total{outcome=\"") + kOutcomeNames[i] + "\"} " +
               std::to_string(outcomes_[i].load()) + "\n";
    family(out, "mimeuri_edits_total", "counter", "Changes made to messages that went on changed, by pass.");
    for (std::size_t i = 0; i < edits_.size(); ++i)
        out += std::string("mimeuri_edits_total{pass=\"") + pass_names()[i] + "\"} " + std::to_string(edits_[i].load()) +
               "\n";
    family(out, "mimeuri_report_errors_total", "counter", "Entries in the errors of the messages' reports, by code.");
    for (std::size_t i = 0; i < errors_.size(); ++i)
        out += std::string("mimeuri_report_errors_total{code=\"") + json_name(static_cast<ErrorCode>(i)) + "\"} " +
               std::to_string(errors_[i].load()) + "\n";
    family(out, "mimeuri_message_seconds", "histogram",
           "Seconds from a message's end to the service's answer (planning and changes).");
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
        cumulative += buckets_[b].load();
        const std::string le = b < kLatencyBuckets.size() ? number(kLatencyBuckets[b]) : "+Inf";
        out += "mimeuri_message_seconds_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "mimeuri_message_seconds_sum " + number(static_cast<double>(latency_ns_.load()) / 1e9) + "\n";
    out += "mimeuri_message_seconds_count " + std::to_string(cumulative) + "\n";
    family(out, "mimeuri_front_start_time_seconds", "gauge",
           "When the counters started (the service's front process), seconds since the epoch.");
    char start[32];
    std::snprintf(start, sizeof start, "%.3f", started_);
    out += std::string("mimeuri_front_start_time_seconds ") + start + "\n";
    events_exposition(out);
    policy_exposition(out);
    family(out, "mimeuri_build_info", "gauge", "The running build: its version and the libraries' (always 1).");
    out += "mimeuri_build_info{version=\"" MIMEURI_VERSION "\",gmime=\"" + std::to_string(gmime_major_version) + "." +
           std::to_string(gmime_minor_version) + "." + std::to_string(gmime_micro_version) + "\",glib=\"" +
           std::to_string(glib_major_version) + "." + std::to_string(glib_minor_version) + "." +
           std::to_string(glib_micro_version) + "\"} 1\n";
    return out;
}

void Stats::event(Event e)
{
    if (const auto i = static_cast<std::size_t>(e); i < events_.size()) events_[i].fetch_add(1, std::memory_order_relaxed);
}

void Stats::events_exposition(std::string &out) const
{
    auto n = [this](Event e) { return std::to_string(events_[static_cast<std::size_t>(e)].load()); };
    family(out, "mimeuri_worker_ends_total", "counter",
           "Workers that ended other than by a reload, by cause: died (a signal, or a status other than 0) or done "
           "(after their messages).");
    out += "mimeuri_worker_ends_total{cause=\"died\"} " + n(Event::WorkerDied) + "\n";
    out += "mimeuri_worker_ends_total{cause=\"done\"} " + n(Event::WorkerDone) + "\n";
    family(out, "mimeuri_reloads_total", "counter", "SIGHUP reloads, by outcome: done, or refused (the old settings stay).");
    out += "mimeuri_reloads_total{outcome=\"done\"} " + n(Event::ReloadDone) + "\n";
    out += "mimeuri_reloads_total{outcome=\"refused\"} " + n(Event::ReloadRefused) + "\n";
    family(out, "mimeuri_front_restarts_total", "counter",
           "Times the front process ended and was started again since the service started.");
    out += "mimeuri_front_restarts_total " + n(Event::FrontRestart) + "\n";
}

void Stats::policy_exposition(std::string &out) const
{
    std::lock_guard l(policies_mutex_);
    family(out, "mimeuri_policy_messages_total", "counter",
           "Messages the milter service answered under a [policy:NAME], by policy and outcome.");
    for (const auto &[name, p] : policies_)
        for (std::size_t i = 0; i < p.outcomes.size(); ++i)
            out += "mimeuri_policy_messages_total{policy=\"" + label_value(name) + "\",outcome=\"" + kOutcomeNames[i] +
                   "\"} " + std::to_string(p.outcomes[i]) + "\n";
    family(out, "mimeuri_policy_edits_total", "counter",
           "Changes made under a [policy:NAME] to messages that went on changed, by policy and pass.");
    for (const auto &[name, p] : policies_)
        for (std::size_t i = 0; i < p.edits.size(); ++i)
            out += "mimeuri_policy_edits_total{policy=\"" + label_value(name) + "\",pass=\"" + pass_names()[i] + "\"} " +
                   std::to_string(p.edits[i]) + "\n";
}

std::string Stats::log_line() const
{
    std::uint64_t total = 0;
    std::string line;
    for (std::size_t i = 0; i < outcomes_.size(); ++i) {
        total += outcomes_[i].load();
        line += std::string(i ? ", " : "") + kOutcomeNames[i] + " " + std::to_string(outcomes_[i].load());
    }
    line = "counters: messages " + std::to_string(total) + " (" + line + "); edits";
    for (std::size_t i = 0; i < edits_.size(); ++i)
        line += std::string(" ") + pass_names()[i] + "=" + std::to_string(edits_[i].load());
    line += "; errors";
    bool any = false;
    for (std::size_t i = 0; i < errors_.size(); ++i)
        if (std::uint64_t n = errors_[i].load()) {
            line += std::string(" ") + json_name(static_cast<ErrorCode>(i)) + "=" + std::to_string(n);
            any = true;
        }
    if (!any) line += " none";
    const double mean_ms = total ? static_cast<double>(latency_ns_.load()) / 1e6 / static_cast<double>(total) : 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "; mean %.1f ms a message", mean_ms);
    return line + buf;
}

Status write_stats_file(const std::string &path, const std::string &text)
{
    // node_exporter's textfile collector reads only *.prom: the temporary name is never read.
    // A new file of a name nobody can foresee (O_CREAT | O_EXCL, as every file mimeuri writes):
    // a FIFO, a link or a hard link to another file left at a foreseeable name by whoever can
    // write the folder would block the service, or have it truncate that file.
    std::string tmp = path + ".tmp.XXXXXX";
    int fd = g_mkstemp_full(tmp.data(), O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return Error{Code::CantCreate, "--stats=" + path + ": cannot write " + tmp + ": " + g_strerror(errno)};
    (void)::fchmod(fd, 0644); // readable by the collector, whatever the umask took away
    bool good = write_all(fd, text.data(), text.size()) && ::fsync(fd) == 0;
    const int err = errno;
    good = ::close(fd) == 0 && good;
    if (!good || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const int why = good ? errno : err;
        (void)::unlink(tmp.c_str());
        return Error{Code::IoErr, "--stats=" + path + ": cannot write it: " + g_strerror(why)};
    }
    fsync_dir_of(path);
    return ok();
}

} // namespace mimeuri::milter
