// The service's supervisor (milter.hh): opens the socket, drops to --user, holds the
// configuration (reloaded on SIGHUP), forks the front and the workers and starts them
// again when they end. Single-threaded, so forking is safe. Its loop takes one signal at a
// time from a signalfd: on_reload (SIGHUP), on_stop (SIGTERM, SIGINT), on_children (SIGCHLD).
#include "milter.hh"

#include "engine.hh"
#include "fdio.hh"
#include "milter_chan.hh"
#include "milter_front.hh"
#include "milter_quickack.h"
#include "milter_socket.hh"
#include "milter_worker.hh"
#include "run.hh"
#include "syslog.hh"

#include <libmilter/mfapi.h>

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <fcntl.h>
#include <grp.h>
#include <optional>
#include <poll.h>
#include <pwd.h>
#include <set>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mimeuri {
namespace {

using namespace milter;
using Clock = std::chrono::steady_clock;

std::unique_ptr<Syslog> g_syslog; // made before the forks: the front and the workers log through it
bool g_stderr_journal = false;

// The service's own lines ("listening", "configuration reloaded", "stopping", what went
// wrong) go to syslog as well as to standard error (but once when standard error is the
// journal already): an admin reads them where the per-message lines are.
void service_log_handler(const gchar *, GLogLevelFlags level, const gchar *message, gpointer)
{
    if ((level & (G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)) && !g_getenv("MIMEURI_DEBUG")) return;
    if (!g_stderr_journal) std::fprintf(stderr, "mimeuri: %s\n", message);
    if (!g_syslog) return;
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) g_syslog->warning(message);
    else g_syslog->notice(message);
}

// Plans a small message of every kind the passes read (HTML with references, an external
// body, a label), once, in the supervisor: what GMime, iconv and the passes set up lazily on
// first use is then ready in every worker forked afterwards, instead of being set up again
// in each (measured: 10 to 40 ms a message cold, against well under 1 ms warm).
// The passes it runs are a set of their own: the workers' passes (and their mid: index)
// stay as the configuration made them.
void warm_up(const Settings &cfg)
{
    auto passes = build_passes(cfg.opts, cfg.pass_opts);
    static const char sample[] =
        "From: a@example.test\r\nTo: b@example.test\r\nSubject: =?utf-8?q?warm_up?=\r\n"
        "Message-ID: <warm-up@example.test>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: multipart/related; boundary=\"b\"\r\n\r\n"
        "--b\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
        "<p style=3D\"background: url(CID:&lt;x@example.test&gt;)\"><img src=3D\"cid:x@example.test\">"
        "<a href=3D\"mid:other@example.test\">caf=E9</a></p>\r\n"
        "--b\r\nContent-Type: image/png\r\nContent-ID: <x@example.test>\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        "iVBORw0KGgo=\r\n"
        "--b\r\nContent-Type: message/external-body; access-type=URL; URL=\"http://example.test/a b\"\r\n\r\n"
        "Content-Type: text/plain\r\n\r\n--b--\r\n";
    Engine engine(passes, engine_config(cfg.opts, Runner::Service));
    (void)plan_message(engine, sample, "warm-up");
}

// A descriptor per MTA connection (and a thread): the soft limit as started (1,024 under
// systemd) would let about a thousand idle connections make accept() fail for the MTA's
// real ones. Raised to the hard limit, up to 65,536 (what milter_quickack.c accounts for,
// the per-client bound included).
void raise_descriptor_limit()
{
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    const rlim_t want = std::min<rlim_t>(rl.rlim_max, 65536);
    if (rl.rlim_cur >= want) return;
    const rlim_t was = rl.rlim_cur;
    rl.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
        g_warning("--milter: cannot raise the descriptor limit from %lu: %s", static_cast<unsigned long>(was),
                  g_strerror(errno));
    else
        g_debug("descriptor limit raised from %lu to %lu", static_cast<unsigned long>(was),
                static_cast<unsigned long>(want));
}

Status drop_privileges(const std::string &user)
{
    if (user.empty()) return ok();
    errno = 0;
    passwd *pw = ::getpwnam(user.c_str());
    if (!pw) return Error{Code::Usage, "--user: no user " + user};
    if (::getuid() == pw->pw_uid && ::geteuid() == pw->pw_uid) return ok();
    if (::initgroups(pw->pw_name, pw->pw_gid) != 0 || ::setgid(pw->pw_gid) != 0 || ::setuid(pw->pw_uid) != 0)
        return Error{Code::Usage, "--user=" + user + ": cannot switch to it: " + g_strerror(errno) +
                                      " (the service must be started as root to change user)"};
    return ok();
}

// libmilter's socket, opened as root: a unix one belongs to --user and that user's group,
// mode 0660 (the MTA's user joins that group: usermod -aG). Then --pidfile, written as root
// before the switch to --user.
Status open_socket(const Options &opts)
{
    // Postfix passes header lines up to header_size_limit (100 KiB by default), over
    // libmilter's 64 KiB command limit; 1 MiB is what the protocol can negotiate (the MTA is
    // told so in on_negotiate when it offers it).
    (void)smfi_setmaxdatasize((1024 * 1024) - 1);
    // libmilter waits 7,210 s by default for an MTA connection's next command: idle
    // connections (anyone's who can reach a TCP socket) would hold a descriptor each for two
    // hours. Its own timeout is set too, but Debian's pooled libmilter checks it only every
    // ten minutes: the front shuts down silent connections itself (milter_idle_timeout).
    (void)smfi_settimeout(static_cast<int>(opts.milter_timeout + 0.5));
    milter_bound_clients(opts.milter_client_connections);
    if (smfi_register(front_description()) != MI_SUCCESS)
        return Error{Code::Software, "--milter: libmilter refused to register the filter"};
    std::string spec = opts.milter;
    if (smfi_setconn(spec.data()) != MI_SUCCESS || smfi_opensocket(true) != MI_SUCCESS)
        return Error{Code::CantCreate, "--milter=" + spec +
                                           ": cannot open the socket (the form is unix:/path, local:/path, "
                                           "inet:PORT@HOST or inet6:PORT@HOST; is it in use, or its folder missing?)"};
    if (std::string path = unix_path(spec); !path.empty()) {
        if (!opts.user.empty())
            if (passwd *pw = ::getpwnam(opts.user.c_str())) (void)::chown(path.c_str(), pw->pw_uid, pw->pw_gid);
        (void)::chmod(path.c_str(), 0660);
    }
    // Removed at the end, or emptied where the folder (/run) does not let --user remove it: a
    // stale one would name a pid that is gone, or another process's.
    if (!opts.pidfile.empty()) {
        std::string pid = std::to_string(::getpid()) + "\n";
        int fd = ::open(opts.pidfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        // Owned by --user, so that the service can at least empty it at its end when the
        // folder (/run) lets it not remove it: a stale pid is never left behind.
        if (fd >= 0 && !opts.user.empty())
            if (passwd *pw = ::getpwnam(opts.user.c_str())) (void)::fchown(fd, pw->pw_uid, pw->pw_gid);
        if (fd < 0 || !write_all(fd, pid.data(), pid.size()) || ::close(fd) != 0)
            return Error{Code::CantCreate, "--pidfile=" + opts.pidfile + ": cannot write it: " + g_strerror(errno)};
    }
    return ok();
}

// Which file a path named when it was opened: a path that names another one now was renamed
// (log rotation) or removed.
struct FileId {
    dev_t dev{0};
    ino_t ino{0};
    bool operator==(const FileId &) const = default;
};

// The --report file, opened for appending; `id` set to which file it is.
Result<int> open_report(const std::string &path, std::optional<FileId> &id)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0640);
    if (fd < 0) return Error{Code::CantCreate, "--report=" + path + ": cannot open it: " + g_strerror(errno)};
    struct stat st{};
    if (::fstat(fd, &st) == 0) id = FileId{st.st_dev, st.st_ino};
    return fd;
}

// Sends the front what it needs of the settings in effect (at the start, after a reload, to a
// front started again): the --on-error policy and the --report file, opened here, so that a
// reload reopens it (log rotation). Fails when the report file cannot be opened.
// An event for the front's counters (milter_chan.hh), with /dev/null as the descriptor every
// message carries.
void send_event(int chan, Event e)
{
    if (chan < 0) return;
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    (void)send_fd(chan, static_cast<char>(kEventTag | static_cast<char>(e)), fd);
    ::close(fd);
}

Status send_front_config(int chan, const Settings &cfg, std::optional<FileId> &report_id)
{
    const Options &opts = cfg.opts;
    char tag = kConfigTag | (opts.on_error == OnError::TempFail ? kTempFail : 0) | (cfg.policies.empty() ? 0 : kPolicies);
    int fd = -1;
    report_id.reset();
    if (!opts.report_path.empty()) {
        auto opened = open_report(opts.report_path, report_id);
        if (!opened) return opened.error();
        fd = *opened;
        tag |= kReportFd;
    } else {
        fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    bool sent = send_fd(chan, tag, fd);
    ::close(fd);
    if (!sent) return Error{Code::Software, std::string("cannot reach the front: ") + g_strerror(errno)};
    return ok();
}

class Supervisor {
public:
    Supervisor(const SettingsLoader &loader, std::unique_ptr<Settings> first)
        : loader_(loader), config_(std::move(first)), jobs_(config_->opts.jobs)
    {
    }
    // Runs until SIGTERM or SIGINT; the exit status.
    int run(std::vector<int> listeners, int sigfd);

private:
    Status start_front();
    bool fork_worker();
    void on_reload();
    void on_stop(int signo);
    Status on_children();
    void end_children();
    void watch_report();

    const SettingsLoader &loader_;
    std::unique_ptr<Settings> config_; // the configuration in effect (replaced on SIGHUP)
    const int jobs_;                   // as many workers as messages planned at once
    std::vector<int> listeners_;       // the listening sockets: no worker keeps them
    int sigfd_{-1};
    pid_t front_pid_{-1};
    int front_chan_{-1};        // the supervisor's end of the channel to the front
    unsigned front_restarts_{0}; // fronts started again since the service started
    std::set<pid_t> workers_;   // every worker not yet reaped
    std::set<pid_t> replaced_;  // workers of a front that died: already replaced
    std::set<pid_t> retiring_;  // workers told to end by a reload: their end is no failure
    bool stopping_{false};
    Clock::time_point last_front_start_{};
    std::deque<Clock::time_point> restarts_; // workers started again in the last second
    std::optional<FileId> report_id_;        // the --report file the front writes
    bool report_warned_{false};              // that it cannot be opened again: said once
    Clock::time_point next_watch_{};
};

// Forks the front and sends it the configuration in effect.
Status Supervisor::start_front()
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return Error{Code::Software, std::string("socketpair: ") + g_strerror(errno)};
    pid_t pid = ::fork();
    if (pid < 0) return Error{Code::TempFail, std::string("fork: ") + g_strerror(errno)};
    if (pid == 0) {
        ::close(sv[0]);
        front_main(sv[1], config_->opts, *g_syslog);
    }
    ::close(sv[1]);
    front_pid_ = pid;
    front_chan_ = sv[0];
    last_front_start_ = Clock::now();
    return send_front_config(front_chan_, *config_, report_id_);
}

// Forks a worker and hands its channel to the front (which then talks to it directly:
// a message costs no trip through the supervisor). Workers are kept for up to 1,000
// messages.
bool Supervisor::fork_worker()
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(front_chan_);
        ::close(sigfd_);
        // A worker parses hostile mail: it keeps no way to accept the MTA's connections.
        for (int fd : listeners_) ::close(fd);
        ::close(sv[0]);
        for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
        // SIGUSR1 (retire, on a reload) stays blocked until worker_main has its handler: one
        // sent right after the fork would otherwise end the worker by its default action.
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        ::sigprocmask(SIG_SETMASK, &usr1, nullptr);
        ::signal(SIGPIPE, SIG_IGN);
        worker_main(sv[1], 1000, *config_);
    }
    ::close(sv[1]);
    if (pid < 0) {
        ::close(sv[0]);
        g_warning("--milter: cannot start a worker: %s", g_strerror(errno));
        return false;
    }
    workers_.insert(pid);
    bool sent = send_fd(front_chan_, 'N', sv[0]);
    ::close(sv[0]); // the front has its own copy now; without it the worker ends
    return sent;
}

// SIGHUP: the same loader as at the start (the same files, the same command line).
void Supervisor::on_reload()
{
    auto loaded = loader_.load();
    if (loaded && !loaded->settings) loaded = Error{Code::Usage, "the command line asks to print and exit"};
    if (!loaded) {
        g_warning("SIGHUP: the configuration was not reloaded, the old one stays: %s", loaded.error().message.c_str());
        send_event(front_chan_, Event::ReloadRefused);
        return;
    }
    const Options &now = config_->opts, &next = loaded->settings->opts;
    if (next.milter != now.milter || next.user != now.user || next.jobs != now.jobs ||
        next.spool_threshold != now.spool_threshold || next.milter_timeout != now.milter_timeout ||
        next.milter_client_connections != now.milter_client_connections || next.stats_path != now.stats_path)
        g_warning("SIGHUP: --milter, --user, --jobs, --spool-threshold, --milter-timeout, "
                  "--milter-client-connections and --stats take effect at a restart");
    config_ = std::move(loaded->settings);
    if (Status s = send_front_config(front_chan_, *config_, report_id_); !s)
        g_warning("SIGHUP: %s; no report lines until it can be opened (SIGHUP again)", s.error().message.c_str());
    warm_up(*config_);
    // Each worker ends once its message in hand is done; their successors read the new
    // configuration.
    for (pid_t w : workers_)
        if (!replaced_.count(w) && retiring_.insert(w).second) ::kill(w, SIGUSR1);
    g_message("configuration reloaded");
    send_event(front_chan_, Event::ReloadDone);
}

// Every 2 seconds: when the --report path names another file than the front writes (renamed
// or removed by logrotate, with or without a signal after it), the front gets the file the
// path names now, created if need be; lines written meanwhile are in the renamed file, none
// lost.
void Supervisor::watch_report()
{
    const auto now = Clock::now();
    if (now < next_watch_) return;
    next_watch_ = now + std::chrono::seconds(2);
    const std::string &path = config_->opts.report_path;
    if (path.empty() || front_chan_ < 0) return;
    struct stat st{};
    if (report_id_ && ::stat(path.c_str(), &st) == 0 && FileId{st.st_dev, st.st_ino} == *report_id_) return;
    std::optional<FileId> id;
    auto fd = open_report(path, id);
    if (!fd) {
        if (!report_warned_) g_warning("%s; trying again every 2 seconds", fd.error().message.c_str());
        report_warned_ = true;
        return;
    }
    const bool sent = send_fd(front_chan_, kReportTag, *fd);
    ::close(*fd);
    if (!sent) return;
    report_id_ = id;
    report_warned_ = false;
    g_message("--report=%s: the file was renamed or removed; writing to a new one", path.c_str());
}

void Supervisor::on_stop(int signo)
{
    if (!stopping_)
        g_message("stopping (%s): messages in hand are finished first, for up to 5 seconds",
                  signo == SIGTERM ? "SIGTERM" : "SIGINT");
    stopping_ = true;
    if (front_pid_ > 0) ::kill(front_pid_, SIGTERM);
}

// SIGCHLD: a worker that ended is replaced (the front saw how it ended); a front that ended
// is started again, with workers of its own. An error when the front cannot start again.
Status Supervisor::on_children()
{
    int st = 0;
    pid_t pid;
    rusage ru{};
    while ((pid = ::wait4(-1, &st, WNOHANG, &ru)) > 0) {
        const char *how = WIFSIGNALED(st) ? "signal" : "status";
        const int what = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
        if (pid != front_pid_) {
            workers_.erase(pid);
            const bool retired = retiring_.erase(pid) > 0;
            if (replaced_.erase(pid) || stopping_ || front_chan_ < 0) continue;
            if (retired) { // a reload's: replaced at once, whatever the reloads' pace
                if (config_->opts.verbose)
                    g_message("worker %d retired by a reload (%s %d), peak RSS %ld KiB", static_cast<int>(pid), how, what,
                              ru.ru_maxrss);
                fork_worker();
                continue;
            }
            // Every other end is said, with its cause (issue 54 item 4): a worker ends by itself
            // only with status 0, after its 1,000 messages; a signal or another status is a death.
            send_event(front_chan_, WIFSIGNALED(st) || what != 0 ? Event::WorkerDied : Event::WorkerDone);
            if (WIFSIGNALED(st) || what != 0)
                g_warning("--milter: worker %d died (%s %d), peak RSS %ld KiB; starting another", static_cast<int>(pid), how,
                          what, ru.ru_maxrss);
            else
                g_message("--milter: worker %d ended (status 0: its messages done), peak RSS %ld KiB; starting another",
                          static_cast<int>(pid), ru.ru_maxrss);
            auto now = Clock::now();
            while (!restarts_.empty() && now - restarts_.front() > std::chrono::seconds(1)) restarts_.pop_front();
            if (restarts_.size() > 100) {
                g_warning("--milter: workers end as soon as they start; waiting a second");
                std::this_thread::sleep_for(std::chrono::seconds(1));
            }
            restarts_.push_back(now);
            fork_worker();
            continue;
        }
        front_pid_ = -1;
        if (front_chan_ >= 0) ::close(front_chan_), front_chan_ = -1;
        if (stopping_) break;
        g_warning("--milter: the front process ended (%s %d); starting it again", how, what);
        if (Clock::now() - last_front_start_ < std::chrono::seconds(1)) std::this_thread::sleep_for(std::chrono::seconds(1));
        ++front_restarts_;
        if (Status s = start_front(); !s) {
            if (front_pid_ < 0) return s;
            g_warning("%s", s.error().message.c_str());
        }
        // The new front's counters start at zero: it is told how often the front was started
        // again since the service started (mimeuri_front_restarts_total).
        for (unsigned k = 0; k < front_restarts_; ++k) send_event(front_chan_, Event::FrontRestart);
        // The old workers' channels went with the old front: they end at once; the new front
        // gets workers of its own.
        for (pid_t w : workers_) {
            ::kill(w, SIGKILL);
            replaced_.insert(w);
        }
        for (int k = 0; k < jobs_; ++k) fork_worker();
    }
    return ok();
}

// The workers end at the close of their channel with the front; any still planning are
// given a moment, then stopped: nothing of the service outlives it.
void Supervisor::end_children()
{
    for (auto until = Clock::now() + std::chrono::seconds(5);;) {
        pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
        if (pid < 0) break; // no children left
        workers_.erase(pid);
        if (pid == 0) {
            if (Clock::now() > until)
                for (pid_t w : workers_) ::kill(w, SIGKILL);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

int Supervisor::run(std::vector<int> listeners, int sigfd)
{
    listeners_ = std::move(listeners);
    sigfd_ = sigfd;
    if (Status s = start_front(); !s) {
        g_warning("--milter: %s", s.error().message.c_str());
        if (front_pid_ > 0) ::kill(front_pid_, SIGKILL);
        return exit_status(s.error().code);
    }
    for (int k = 0; k < jobs_; ++k) fork_worker();
    g_message("milter listening on %s (pid %d)", config_->opts.milter.c_str(), static_cast<int>(::getpid()));
    int status = 0;
    while (!(stopping_ && front_pid_ < 0)) {
        pollfd p[2] = {{sigfd_, POLLIN, 0}, {front_chan_, POLLIN, 0}};
        if (::poll(p, front_chan_ >= 0 ? 2 : 1, 2000) < 0 && errno != EINTR) {
            g_warning("--milter: poll: %s", g_strerror(errno));
            status = exit_status(Code::Software);
            break;
        }
        if (front_chan_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
            char c;
            if (::recv(front_chan_, &c, 1, MSG_DONTWAIT) <= 0 && errno != EAGAIN)
                ::close(front_chan_), front_chan_ = -1; // the front is gone; SIGCHLD says how
        }
        if (!stopping_) watch_report();
        signalfd_siginfo si{};
        if (!(p[0].revents & POLLIN) || ::read(sigfd_, &si, sizeof si) != sizeof si) continue;
        if (si.ssi_signo == SIGHUP) on_reload();
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) on_stop(static_cast<int>(si.ssi_signo));
        else if (si.ssi_signo == SIGUSR1) { // the counters: the front logs them (and writes --stats)
            if (front_pid_ > 0) ::kill(front_pid_, SIGUSR1);
        }
        else if (si.ssi_signo == SIGCHLD)
            if (Status s = on_children(); !s) {
                g_warning("--milter: %s", s.error().message.c_str());
                return exit_status(s.error().code);
            }
    }
    end_children();
    return status;
}

} // namespace

int run_milter(const SettingsLoader &loader, std::unique_ptr<Settings> first)
{
    g_stderr_journal = stderr_is_journal();
    g_syslog = std::make_unique<Syslog>(); // before the fork: the front and the workers log through it
    g_log_set_default_handler(service_log_handler, nullptr);
    const Options opts = first->opts; // the socket and the user: fixed until a restart
    raise_descriptor_limit();
    if (Status s = open_socket(opts); !s) {
        g_warning("%s", s.error().message.c_str());
        return exit_status(s.error().code);
    }
    std::vector<int> listeners = find_listeners();
    if (Status s = drop_privileges(opts.user); !s) {
        g_warning("%s", s.error().message.c_str());
        return exit_status(s.error().code);
    }
    if (::geteuid() == 0)
        g_warning("--milter runs as root: mail from anyone is parsed with every privilege; give --user");
    warm_up(*first);
    sigset_t sigs, old;
    sigemptyset(&sigs);
    // SIGUSR1 too: passed to the front (the counters); the front and the workers are forked
    // with it blocked, and take it when they are ready.
    for (int s : {SIGHUP, SIGTERM, SIGINT, SIGCHLD, SIGUSR1}) sigaddset(&sigs, s);
    ::sigprocmask(SIG_BLOCK, &sigs, &old);
    int sigfd = ::signalfd(-1, &sigs, SFD_CLOEXEC);
    Supervisor supervisor(loader, std::move(first));
    int status = supervisor.run(std::move(listeners), sigfd);
    if (std::string path = unix_path(opts.milter); !path.empty()) ::unlink(path.c_str());
    if (!opts.pidfile.empty() && ::unlink(opts.pidfile.c_str()) != 0) (void)::truncate(opts.pidfile.c_str(), 0);
    g_message("stopped");
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return status;
}

} // namespace mimeuri
