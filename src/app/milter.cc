#include "milter.hh"

#include "deadline.hh"
#include "engine.hh"
#include "faults.hh"
#include "fdio.hh"
#include "milter_edit.hh"
#include "source.hh"
#include "syslog.hh"

#include <libmilter/mfapi.h>

#include <glib.h>
#include <gmime/gmime.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <mutex>
#include <set>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mimeuri {
namespace {

// ---------------------------------------------------------------------------------------
// The supervisor's state: the configuration in effect (replaced on SIGHUP) and the channel
// on which the front asks for workers.

using Config = Settings;

std::unique_ptr<Config> g_config;
std::vector<int> g_listeners; // the listening sockets libmilter opened: no worker keeps them
const SettingsLoader *g_loader = nullptr; // the command line's: read again on SIGHUP
std::set<pid_t> g_workers;  // the supervisor's: every worker not yet reaped
std::set<pid_t> g_replaced; // workers of a front that died: already replaced

// What a worker tells the front first (before planning): who it is, and the policy and
// time limit of the configuration it runs with (a reload changes them for later messages).
struct WorkerHello {
    pid_t pid;
    std::uint8_t tempfail;
    double max_seconds;
};

// One tag byte and room for one descriptor (SCM_RIGHTS): the message both ways.
struct FdMessage {
    iovec iov;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))]{};
    msghdr m{};
    explicit FdMessage(char *tag) : iov{tag, 1}
    {
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
    }
};

// Sends a tag byte and one descriptor over a unix socket.
bool send_fd(int sock, char tag, int fd)
{
    FdMessage f(&tag);
    cmsghdr *c = CMSG_FIRSTHDR(&f.m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do n = ::sendmsg(sock, &f.m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == 1;
}

// Receives a tag byte and one descriptor: 1, or 0 at the end of the socket, or -1 on an
// error (EINTR included: the caller decides whether to try again).
int recv_fd(int sock, char &tag, int &fd)
{
    FdMessage f(&tag);
    ssize_t n = ::recvmsg(sock, &f.m, MSG_CMSG_CLOEXEC);
    if (n == 0) return 0;
    if (n < 0) return -1;
    cmsghdr *c = CMSG_FIRSTHDR(&f.m);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) {
        errno = EPROTO;
        return -1;
    }
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return 1;
}

// ---------------------------------------------------------------------------------------
// A worker: plans the message in msg_fd and writes the plan to sock.

// Plans one message: the hello, then the plan, on sock.
void plan_one(int sock, int msg_fd)
{
    const Config &cfg = *g_config;
    WorkerHello hello{::getpid(), static_cast<std::uint8_t>(cfg.opts.on_error == OnError::TempFail),
                      cfg.opts.limits.max_seconds};
    if (!write_all(sock, &hello, sizeof hello)) return;
    Plan plan;
    auto src = Source::open_path("/proc/self/fd/" + std::to_string(msg_fd), cfg.opts.spool_threshold);
    // Passes of its own for each message: their state (the mid: index) never carries over.
    // The settings were checked when loaded (an index that cannot be read stops the start
    // or the reload); a file that goes away later fails the messages that need it.
    auto passes = build_passes(cfg.opts, cfg.pass_opts);
    if (!src) {
        plan.cause = src.error().message;
    } else {
        if (Faults::from_env().milter) {
            char head[65536];
            auto n = src->read_at(0, head, sizeof head);
            std::string_view h(head, n ? *n : 0);
            if (h.find("mimeuri-fault:crash") != std::string_view::npos) ::raise(SIGSEGV);
            if (h.find("mimeuri-fault:hang") != std::string_view::npos)
                for (;;) ::pause();
        }
        EngineConfig ec;
        ec.limits = cfg.opts.limits;
        ec.signed_mode = cfg.opts.signed_mode;
        ec.summary = true;
        ec.report = !cfg.opts.report_path.empty();
        Engine engine(passes, ec);
        Segment seg;
        seg.msg_end = seg.next = src->size();
        if (engine.wants_index()) engine.index({*src, seg, 1, false, 0});
        plan = engine.plan({*src, seg, 1, false, 0});
    }
    std::string bytes = serialize(plan);
    std::uint64_t len = bytes.size();
    (void)(write_all(sock, &len, sizeof len) && write_all(sock, bytes.data(), bytes.size()));
}

// SIGUSR1 (a reload): end once the message in hand is done.
volatile sig_atomic_t g_retire = 0;
void on_retire(int) { g_retire = 1; }

// A worker: takes messages from its channel to the front one at a time (the message's
// descriptor), plans each and answers on the same channel. It ends at the end of the
// channel (the front is gone), after max_use messages (its memory then goes back whole), or
// on SIGUSR1 once the message in hand is done.
[[noreturn]] void worker_main(int chan, int max_use)
{
    struct sigaction sa {};
    sa.sa_handler = on_retire; // no SA_RESTART: a worker waiting for a message wakes up
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
    for (int used = 0; used < max_use && !g_retire; ++used) {
        char tag = 0;
        int msg_fd = -1;
        int got;
        while ((got = recv_fd(chan, tag, msg_fd)) < 0 && errno == EINTR && !g_retire) {}
        if (got != 1) _exit(0);
        plan_one(chan, msg_fd);
        ::close(msg_fd);
    }
    _exit(0);
}

// ---------------------------------------------------------------------------------------
// The front: libmilter's callbacks.

struct FrontSettings {
    std::size_t spool_threshold{8u << 20};
    // What the supervisor sends at the start and after each reload (a config message on
    // the channel): the --on-error policy for failures no worker saw (the message could
    // not be held), and the --report file, opened by the supervisor (reopened on SIGHUP).
    std::atomic<bool> tempfail{false};
    std::mutex report_mutex;
    int report_fd{-1};
};
FrontSettings g_front;

// The tag of a config message (supervisor to front): these bits; its descriptor is the
// report file when kReportFd is set (else a placeholder).
constexpr char kConfigTag = 0x10, kTempFail = 0x01, kReportFd = 0x02;
std::unique_ptr<Syslog> g_syslog;

// The front's workers: the channel to each one that is free. The supervisor forks them and
// sends each channel here; a message waits for a free one (so at most --jobs at once).
class Workers {
public:
    void add(int fd)
    {
        {
            std::lock_guard l(m_);
            free_.push_back(fd);
        }
        cv_.notify_one();
    }
    // A free worker's channel, waiting up to `wait` for one; -1 if none came.
    int take(std::chrono::milliseconds wait)
    {
        std::unique_lock l(m_);
        if (!cv_.wait_for(l, wait, [&] { return !free_.empty(); })) return -1;
        int fd = free_.front();
        free_.pop_front();
        return fd;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<int> free_;
};
Workers g_workers_free;

// In the front: the channels of new workers, as the supervisor forks them. The end of the
// supervisor's channel ends the front.
void receive_workers(int chan)
{
    for (;;) {
        char tag = 0;
        int fd = -1;
        int got = recv_fd(chan, tag, fd);
        if (got < 0 && errno == EINTR) continue;
        if (got != 1) break;
        if ((tag & 0xf0) == kConfigTag) {
            g_front.tempfail = (tag & kTempFail) != 0;
            std::lock_guard l(g_front.report_mutex);
            if (g_front.report_fd >= 0) ::close(g_front.report_fd);
            g_front.report_fd = (tag & kReportFd) ? fd : -1;
            if (!(tag & kReportFd)) ::close(fd);
            continue;
        }
        g_workers_free.add(fd);
    }
    smfi_stop();
}

// One message as the MTA sends it, rebuilt as bytes: each header line as "name:value" with
// CRLF line ends, the empty line, the body (CRLF already). In memory up to the spool
// threshold, then in an unlinked temporary file.
class Message {
public:
    ~Message()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    bool leadspc{false};
    std::string queue_id;

    Status header(const char *name, const char *value)
    {
        std::string line = name;
        line += ':';
        if (!leadspc && *value) line += ' ';
        for (const char *p = value; *p; ++p) {
            if (*p == '\n' && (p == value || p[-1] != '\r')) line += '\r';
            line += *p;
        }
        line += "\r\n";
        return append(line.data(), line.size());
    }
    Status end_of_header()
    {
        if (header_end_ >= 0) return ok();
        header_end_ = size_;
        return append("\r\n", 2);
    }
    Status body(const unsigned char *p, std::size_t n)
    {
        if (Status s = end_of_header(); !s) return s;
        return append(reinterpret_cast<const char *>(p), n);
    }
    // The message as a file descriptor the worker can read (made at the end of the message).
    Result<int> finish()
    {
        if (Status s = end_of_header(); !s) return s.error();
        if (fd_ < 0) {
            fd_ = ::memfd_create("mimeuri-message", MFD_CLOEXEC);
            if (fd_ < 0) return Error{Code::TempFail, std::string("memfd_create: ") + g_strerror(errno)};
            if (!write_all(fd_, mem_.data(), mem_.size()))
                return Error{Code::TempFail, std::string("cannot hold the message: ") + g_strerror(errno)};
        }
        return fd_;
    }
    std::int64_t size() const { return size_; }
    MessageSplit split() const { return {header_end_, header_end_ + 2}; }
    Result<std::size_t> read_at(std::int64_t off, char *buf, std::size_t len) const
    {
        if (fd_ < 0 || !mem_.empty()) {
            if (off >= static_cast<std::int64_t>(mem_.size())) return std::size_t{0};
            std::size_t n = std::min(len, mem_.size() - static_cast<std::size_t>(off));
            std::memcpy(buf, mem_.data() + off, n);
            return n;
        }
        ssize_t n;
        do n = ::pread(fd_, buf, len, off);
        while (n < 0 && errno == EINTR);
        if (n < 0) return Error{Code::IoErr, std::string("cannot read the spooled message: ") + g_strerror(errno)};
        return static_cast<std::size_t>(n);
    }

private:
    Status append(const char *p, std::size_t n)
    {
        size_ += static_cast<std::int64_t>(n);
        if (fd_ < 0 && mem_.size() + n <= g_front.spool_threshold) {
            mem_.append(p, n);
            return ok();
        }
        if (fd_ < 0) {
            fd_ = ::open(g_get_tmp_dir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
            if (fd_ < 0)
                return Error{Code::TempFail, std::string("cannot spool the message in ") + g_get_tmp_dir() + ": " +
                                                 g_strerror(errno)};
            if (!write_all(fd_, mem_.data(), mem_.size()))
                return Error{Code::TempFail, std::string("cannot spool the message: ") + g_strerror(errno)};
            std::string().swap(mem_);
        }
        if (!write_all(fd_, p, n))
            return Error{Code::TempFail, std::string("cannot spool the message: ") + g_strerror(errno)};
        return ok();
    }
    std::string mem_;
    int fd_{-1};
    std::int64_t size_{0};
    std::int64_t header_end_{-1};
};

struct Connection {
    bool leadspc{false};
    bool no_reply_hdr{false};
    std::unique_ptr<Message> msg;
    std::string error; // the message could not be held: answered per policy at its end
};

// The connection's state, made at negotiation (or here, for an MTA that does not negotiate).
Connection *conn(SMFICTX *ctx)
{
    auto *c = static_cast<Connection *>(smfi_getpriv(ctx));
    if (!c) {
        c = new Connection;
        smfi_setpriv(ctx, c);
    }
    return c;
}

Message &message(SMFICTX *ctx)
{
    Connection *c = conn(ctx);
    if (!c->msg) {
        c->msg = std::make_unique<Message>();
        c->msg->leadspc = c->leadspc;
    }
    return *c->msg;
}

// The plan of a worker, or why there is none.
struct WorkerResult {
    std::optional<Plan> plan;
    std::string failure;
    bool tempfail{false};
};

WorkerResult run_worker(SMFICTX *ctx, int msg_fd)
{
    WorkerResult r;
    r.tempfail = true;
    // A worker that ends before it says hello (a reload, its last message done) never
    // started on this message: another one takes it.
    for (int tries = 0; tries < 4; ++tries) {
        auto t0 = std::chrono::steady_clock::now();
        int w = g_workers_free.take(std::chrono::seconds(60));
        if (w < 0) {
            r.failure = "no worker was free within 60 s";
            return r;
        }
        WorkerHello hello{};
        if (!send_fd(w, 'M', msg_fd) || !read_all(w, &hello, sizeof hello)) {
            ::close(w);
            continue;
        }
        auto t1 = std::chrono::steady_clock::now();
        g_debug("worker started in %.3f ms", std::chrono::duration<double, std::milli>(t1 - t0).count());
        r.tempfail = hello.tempfail;
        // The engine keeps --max-time itself; past it and 5 seconds more the worker is stopped.
        const auto deadline = deadline_after(hello.max_seconds + 5);
        std::string bytes;
        std::uint64_t len = 0;
        bool have_len = false, ended = false;
        while (!ended) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                ::kill(hello.pid, SIGKILL);
                r.failure = "the message took longer than --max-time; its worker was stopped";
                break;
            }
            pollfd p{w, POLLIN, 0};
            int n = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 5000)));
            if (n == 0) {
                smfi_progress(ctx); // the MTA's own timeout counts from the last word it heard
                continue;
            }
            if (n < 0) {
                if (errno == EINTR) continue;
                r.failure = std::string("poll: ") + g_strerror(errno);
                break;
            }
            std::size_t want = have_len ? static_cast<std::size_t>(len - bytes.size()) : sizeof len - bytes.size();
            char buf[65536];
            ssize_t got = ::read(w, buf, std::min(sizeof buf, want));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                r.failure = "the worker planning the message died";
                break;
            }
            bytes.append(buf, static_cast<std::size_t>(got));
            if (!have_len && bytes.size() == sizeof len) {
                std::memcpy(&len, bytes.data(), sizeof len);
                bytes.clear();
                have_len = true;
            }
            if (have_len && bytes.size() == len) ended = true;
        }
        g_debug("plan back in %.3f ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
        if (!ended) {
            ::close(w); // a dead or stopped worker: the supervisor forks another
            return r;
        }
        g_workers_free.add(w);
        try {
            r.plan = deserialize(std::move(bytes));
        } catch (const std::exception &e) {
            r.failure = std::string("the worker's plan could not be read: ") + e.what();
        }
        return r;
    }
    r.failure = "no worker could take the message";
    return r;
}

char *c_str(const std::string &s) { return const_cast<char *>(s.c_str()); }

// Hands the plan's edits to the MTA: header requests, then the body if it changed.
// `requested` is set once the first request went out.
Status apply_plan(SMFICTX *ctx, const Message &m, const Plan &plan, bool &requested)
{
    auto parts = split_edits(plan.edits, m.split());
    if (!parts) return parts.error();
    if (!parts->header.empty()) {
        std::string block(static_cast<std::size_t>(m.split().header_end), '\0');
        auto n = m.read_at(0, block.data(), block.size());
        if (!n || *n != block.size()) return Error{Code::IoErr, "cannot read the header block back"};
        auto ops = header_ops(parse_fields(block), parse_fields(apply_edits(block, parts->header)));
        if (!ops) return ops.error();
        for (HeaderOp op : *ops) {
            // Without SMFIP_HDR_LEADSPC the MTA writes "name: value" itself.
            if (!m.leadspc && !op.value.empty() && op.value[0] == ' ') op.value.erase(0, 1);
            requested = true;
            int rc = MI_FAILURE;
            switch (op.kind) {
            case HeaderOp::Kind::Append: rc = smfi_addheader(ctx, c_str(op.name), c_str(op.value)); break;
            case HeaderOp::Kind::Insert: rc = smfi_insheader(ctx, op.index, c_str(op.name), c_str(op.value)); break;
            case HeaderOp::Kind::Change: rc = smfi_chgheader(ctx, c_str(op.name), op.index, c_str(op.value)); break;
            case HeaderOp::Kind::Delete: rc = smfi_chgheader(ctx, c_str(op.name), op.index, nullptr); break;
            }
            if (rc != MI_SUCCESS) return Error{Code::TempFail, "the MTA refused a header change (" + op.name + ")"};
        }
    }
    if (!parts->body.empty()) {
        bool refused = false;
        Status s = stream_edited([&](std::int64_t off, char *buf, std::size_t len) { return m.read_at(off, buf, len); },
                                 m.split().body_begin, m.size(), parts->body, [&](std::string_view chunk) {
                                     requested = true;
                                     refused = smfi_replacebody(ctx, reinterpret_cast<unsigned char *>(
                                                                         const_cast<char *>(chunk.data())),
                                                                static_cast<int>(chunk.size())) != MI_SUCCESS;
                                     return !refused;
                                 });
        if (!s) return s;
        if (refused) return Error{Code::TempFail, "the MTA refused the new body"};
    }
    return ok();
}

// One report line (--report), written whole by one write(2) on a file opened O_APPEND:
// the front's threads, and other writers of the file, never interleave within a line.
void write_report(const std::string &queue_id, MessageReport report)
{
    std::lock_guard l(g_front.report_mutex);
    if (g_front.report_fd < 0) return;
    report.queue_id = queue_id;
    report.source = "milter";
    std::string line = report.to_json() + "\n";
    if (!write_all(g_front.report_fd, line.data(), line.size()))
        g_warning("--report: cannot write a report line: %s", g_strerror(errno));
}

// The message failed. `reply` is what the SMTP client may read (nothing local: no path, no
// system error); `cause` goes to the log. Accepted as it came (pass) or answered 451
// (tempfail); `must_tempfail` when requests already went to the MTA (only a 4xx then
// leaves nothing half-done).
sfsistat fail_message(SMFICTX *ctx, const std::string &where, const std::string &queue_id, const std::string &cause,
                      const std::string &reply, bool tempfail, std::optional<MessageReport> report = {})
{
    if (tempfail) {
        std::string text = "mimeuri: " + reply;
        for (char &c : text)
            if (c == '\r' || c == '\n' || c == '%' || static_cast<unsigned char>(c) < 0x20) c = ' ';
        smfi_setreply(ctx, c_str(std::string("451")), c_str(std::string("4.3.0")), c_str(text));
    }
    const std::string outcome =
        cause + (tempfail ? "; answered 451 4.3.0 (--on-error=tempfail)" : "; accepted unchanged (--on-error=pass)");
    g_syslog->warning(where + outcome);
    MessageReport r = report ? std::move(*report) : MessageReport{};
    r.changed = false;
    r.add_error("", "failed", outcome);
    write_report(queue_id, std::move(r));
    return tempfail ? SMFIS_TEMPFAIL : SMFIS_ACCEPT;
}

sfsistat on_negotiate(SMFICTX *ctx, unsigned long f0, unsigned long f1, unsigned long f2, unsigned long f3,
                      unsigned long *pf0, unsigned long *pf1, unsigned long *pf2, unsigned long *pf3)
{
    (void)f2;
    const unsigned long wanted_actions = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_CHGBODY;
    if ((f0 & wanted_actions) != wanted_actions) return SMFIS_REJECT; // this MTA cannot take our changes
    *pf0 = wanted_actions | (f0 & SMFIF_SETSYMLIST);
    *pf1 = 0;
    // Only the steps a message needs: its header lines, its body and its end.
    unsigned long steps = SMFIP_NOCONNECT | SMFIP_NOHELO | SMFIP_NOMAIL | SMFIP_NORCPT | SMFIP_NOEOH |
                          SMFIP_NOUNKNOWN | SMFIP_NODATA;
    steps &= f1;
    Connection *c = conn(ctx);
    if (f1 & SMFIP_HDR_LEADSPC) steps |= SMFIP_HDR_LEADSPC, c->leadspc = true;
    if (f1 & SMFIP_NR_HDR) steps |= SMFIP_NR_HDR, c->no_reply_hdr = true;
    if (f1 & SMFIP_MDS_1M) steps |= SMFIP_MDS_1M;
    else if (f1 & SMFIP_MDS_256K) steps |= SMFIP_MDS_256K;
    // Body chunks are answered: an MTA (or miltertest) that need not wait may fill the
    // socket faster than a 64 KiB chunk a round trip is worth.
    *pf1 = steps;
    g_debug("negotiated: the MTA offers actions %#lx, steps %#lx; asked for %#lx, %#lx", f0, f1, *pf0, steps);
    *pf2 = 0;
    *pf3 = 0;
    (void)f3;
    if (f0 & SMFIF_SETSYMLIST) smfi_setsymlist(ctx, SMFIM_EOM, c_str(std::string("i")));
    return SMFIS_CONTINUE;
}

void drop_message(SMFICTX *ctx)
{
    if (Connection *c = conn(ctx)) {
        c->msg.reset();
        c->error.clear();
    }
}

sfsistat on_header(SMFICTX *ctx, char *name, char *value)
{
    Connection *c = conn(ctx);
    if (c->error.empty())
        if (Status s = message(ctx).header(name, value); !s) c->error = s.error().message;
    return c->no_reply_hdr ? SMFIS_NOREPLY : SMFIS_CONTINUE;
}

sfsistat on_body(SMFICTX *ctx, unsigned char *chunk, size_t len)
{
    Connection *c = conn(ctx);
    if (c->error.empty())
        if (Status s = message(ctx).body(chunk, len); !s) c->error = s.error().message;
    return SMFIS_CONTINUE;
}

sfsistat on_eom(SMFICTX *ctx)
{
    const auto started = std::chrono::steady_clock::now();
    struct Timer {
        std::chrono::steady_clock::time_point t;
        ~Timer()
        {
            g_debug("end of message handled in %.3f ms",
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
        }
    } timer{started};
    Connection *c = conn(ctx);
    Message &m = message(ctx);
    const char *qid_c = smfi_getsymval(ctx, c_str(std::string("i")));
    const std::string qid = qid_c && *qid_c ? qid_c : "NOQUEUE";
    std::string where = qid + ": ";
    const bool policy_tempfail = g_front.tempfail;
    sfsistat result = SMFIS_ACCEPT;
    bool requested = false;
    try {
        if (!c->error.empty()) {
            // Nothing to plan with: the original goes on, or is tempfailed, per --on-error.
            result = fail_message(ctx, where, qid, c->error, "cannot hold the message now", policy_tempfail);
        } else if (auto fd = m.finish(); !fd) {
            result = fail_message(ctx, where, qid, fd.error().message, "cannot hold the message now", policy_tempfail);
        } else {
            WorkerResult w = run_worker(ctx, *fd);
            if (w.plan && !w.plan->message_id.empty()) where += "message-id=<" + w.plan->message_id + ">: ";
            if (!w.plan) {
                result = fail_message(ctx, where, qid, w.failure, w.failure, w.tempfail);
            } else if (w.plan->failed()) {
                result = fail_message(ctx, where, qid, w.plan->cause, "the message could not be processed now",
                                      w.tempfail, std::move(w.plan->report));
            } else if (Status s = apply_plan(ctx, m, *w.plan, requested); !s) {
                // Once a request is with the MTA, only a 4xx leaves nothing half-done; before
                // that, the message can still go on unchanged under --on-error=pass.
                result = fail_message(ctx, where, qid, s.error().message, "the message could not be changed now",
                                      requested || w.tempfail, std::move(w.plan->report));
            } else {
                g_syslog->info(where + w.plan->log_line);
                if (w.plan->report) write_report(qid, std::move(*w.plan->report));
            }
        }
    } catch (const std::exception &e) {
        result = fail_message(ctx, where, qid, std::string("internal error: ") + e.what(), "internal error",
                              requested || policy_tempfail);
    }
    drop_message(ctx);
    return result;
}

sfsistat on_abort(SMFICTX *ctx)
{
    drop_message(ctx);
    return SMFIS_CONTINUE;
}

sfsistat on_close(SMFICTX *ctx)
{
    delete static_cast<Connection *>(smfi_getpriv(ctx));
    smfi_setpriv(ctx, nullptr);
    return SMFIS_CONTINUE;
}

[[noreturn]] void front_main(int chan, const Options &opts)
{
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    g_front.spool_threshold = opts.spool_threshold;
    std::thread(receive_workers, chan).detach();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int rc = smfi_main();
    _exit(rc == MI_SUCCESS ? 0 : 1);
}

// ---------------------------------------------------------------------------------------
// The supervisor.

// SIGHUP: the same loader as at the start (the same files, the same command line).
Result<std::unique_ptr<Config>> load_config()
{
    auto loaded = g_loader->load();
    if (!loaded) return loaded.error();
    if (!loaded->settings) return Error{Code::Usage, "the command line asks to print and exit"};
    return std::move(loaded->settings);
}

// Plans a small message of every kind the passes read (HTML with references, an external
// body, a label), once, in the supervisor: what GMime, iconv and the passes set up lazily on
// first use is then ready in every worker forked afterwards, instead of being set up again
// in each (measured: 10 to 40 ms a message cold, against well under 1 ms warm).
// The passes it runs are a set of their own: the workers' passes (and their mid: index)
// stay as the configuration made them.
void warm_up(const Config &cfg)
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
    EngineConfig ec;
    ec.limits = cfg.opts.limits;
    ec.signed_mode = cfg.opts.signed_mode;
    ec.summary = true;
    Engine engine(passes, ec);
    (void)plan_message(engine, sample, "warm-up");
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

// The path of a unix socket spec ("unix:/p", "local:/p", "/p"), or "" for an inet one.
std::string unix_path(const std::string &spec)
{
    if (spec.rfind("unix:", 0) == 0) return spec.substr(5);
    if (spec.rfind("local:", 0) == 0) return spec.substr(6);
    if (!spec.empty() && spec[0] == '/') return spec;
    return {};
}

struct Front {
    pid_t pid{-1};
    int chan{-1}; // the supervisor's end
};

Result<Front> start_front(const Options &opts)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return Error{Code::Software, std::string("socketpair: ") + g_strerror(errno)};
    pid_t pid = ::fork();
    if (pid < 0) return Error{Code::TempFail, std::string("fork: ") + g_strerror(errno)};
    if (pid == 0) {
        ::close(sv[0]);
        front_main(sv[1], opts);
    }
    ::close(sv[1]);
    return Front{pid, sv[0]};
}

// Sends the front what it needs of the settings in effect (at the start, after a reload, to a
// front started again): the --on-error policy and the --report file, opened here, so that a
// reload reopens it (log rotation). Fails when the report file cannot be opened.
Status send_front_config(int chan, const Options &opts)
{
    char tag = kConfigTag | (opts.on_error == OnError::TempFail ? kTempFail : 0);
    int fd = -1;
    if (!opts.report_path.empty()) {
        fd = ::open(opts.report_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0640);
        if (fd < 0)
            return Error{Code::CantCreate, "--report=" + opts.report_path + ": cannot open it: " + g_strerror(errno)};
        tag |= kReportFd;
    } else {
        fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    bool sent = send_fd(chan, tag, fd);
    ::close(fd);
    if (!sent) return Error{Code::Software, std::string("cannot reach the front: ") + g_strerror(errno)};
    return ok();
}

// Forks a worker and hands its channel to the front (which then talks to it directly:
// a message costs no trip through the supervisor). close_in_child: the supervisor's
// descriptors a worker must not keep. Workers are kept for up to 1,000 messages.
bool fork_worker(int front_chan, std::initializer_list<int> close_in_child)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    pid_t pid = ::fork();
    if (pid == 0) {
        for (int fd : close_in_child) ::close(fd);
        // A worker parses hostile mail: it keeps no way to accept the MTA's connections.
        for (int fd : g_listeners) ::close(fd);
        ::close(sv[0]);
        for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_IGN);
        worker_main(sv[1], 1000);
    }
    ::close(sv[1]);
    if (pid < 0) {
        ::close(sv[0]);
        g_warning("--milter: cannot start a worker: %s", g_strerror(errno));
        return false;
    }
    g_workers.insert(pid);
    bool sent = send_fd(front_chan, 'N', sv[0]);
    ::close(sv[0]); // the front has its own copy now; without it the worker ends
    return sent;
}

// libmilter answers in several small writes (a modification, then the reply); on TCP,
// Nagle's algorithm holds each one back until the MTA acknowledges the one before, which
// it delays (40 ms a round, measured: 60 to 100 ms a message). libmilter does not give out
// its sockets, but on Linux an accepted socket inherits TCP_NODELAY from the listening one:
// find that (the one listening TCP socket libmilter opened) and set it there. Every
// listening socket found is kept in g_listeners, for the workers to close.
void find_listeners()
{
    for (int fd = 3; fd < 1024; ++fd) {
        int listening = 0, domain = 0, one = 1;
        socklen_t len = sizeof listening;
        if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
        len = sizeof domain;
        if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) continue;
        g_listeners.push_back(fd);
        if (domain == AF_INET || domain == AF_INET6) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
}

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

} // namespace

int run_milter(const SettingsLoader &loader, std::unique_ptr<Settings> first)
{
    g_loader = &loader;
    g_config = std::move(first);
    g_stderr_journal = stderr_is_journal();
    g_syslog = std::make_unique<Syslog>(); // before the fork: the front and the workers log through it
    g_log_set_default_handler(service_log_handler, nullptr);
    const Options opts = g_config->opts; // the socket and the user: fixed until a restart

    static char name[] = "mimeuri";
    smfiDesc desc{};
    desc.xxfi_name = name;
    desc.xxfi_version = SMFI_VERSION;
    desc.xxfi_flags = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_CHGBODY | SMFIF_SETSYMLIST;
    desc.xxfi_header = on_header;
    desc.xxfi_body = on_body;
    desc.xxfi_eom = on_eom;
    desc.xxfi_abort = on_abort;
    desc.xxfi_close = on_close;
    desc.xxfi_negotiate = on_negotiate;
    std::string spec = opts.milter;
    // Postfix passes header lines up to header_size_limit (100 KiB by default), over
    // libmilter's 64 KiB command limit; 1 MiB is what the protocol can negotiate (the MTA is
    // told so in on_negotiate when it offers it).
    (void)smfi_setmaxdatasize((1024 * 1024) - 1);
    if (smfi_register(desc) != MI_SUCCESS) {
        g_warning("--milter: libmilter refused to register the filter");
        return exit_status(Code::Software);
    }
    if (smfi_setconn(spec.data()) != MI_SUCCESS || smfi_opensocket(true) != MI_SUCCESS) {
        g_warning("--milter=%s: cannot open the socket (the form is unix:/path, local:/path, inet:PORT@HOST or "
                  "inet6:PORT@HOST; is it in use, or its folder missing?)",
                  spec.c_str());
        return exit_status(Code::CantCreate);
    }
    find_listeners();
    // A unix socket: the MTA's user must be able to connect. It belongs to --user and that
    // user's group, mode 0660: add the MTA's user to that group (usermod -aG).
    if (std::string path = unix_path(spec); !path.empty()) {
        if (!opts.user.empty())
            if (passwd *pw = ::getpwnam(opts.user.c_str())) (void)::chown(path.c_str(), pw->pw_uid, pw->pw_gid);
        (void)::chmod(path.c_str(), 0660);
    }
    // --pidfile: for init systems that want one; written as root before the switch to --user,
    // removed at the end where the user may (a stale one names a pid that is gone).
    if (!opts.pidfile.empty()) {
        std::string pid = std::to_string(::getpid()) + "\n";
        int fd = ::open(opts.pidfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || !write_all(fd, pid.data(), pid.size()) || ::close(fd) != 0) {
            g_warning("--pidfile=%s: cannot write it: %s", opts.pidfile.c_str(), g_strerror(errno));
            return exit_status(Code::CantCreate);
        }
    }
    if (Status s = drop_privileges(opts.user); !s) {
        g_warning("%s", s.error().message.c_str());
        return exit_status(s.error().code);
    }
    if (::geteuid() == 0)
        g_warning("--milter runs as root: mail from anyone is parsed with every privilege; give --user");

    warm_up(*g_config);
    sigset_t sigs, old;
    sigemptyset(&sigs);
    for (int s : {SIGHUP, SIGTERM, SIGINT, SIGCHLD}) sigaddset(&sigs, s);
    ::sigprocmask(SIG_BLOCK, &sigs, &old);
    int sigfd = ::signalfd(-1, &sigs, SFD_CLOEXEC);
    auto front = start_front(opts);
    if (!front) {
        g_warning("--milter: %s", front.error().message.c_str());
        return exit_status(front.error().code);
    }
    if (Status s = send_front_config(front->chan, g_config->opts); !s) {
        g_warning("%s", s.error().message.c_str());
        ::kill(front->pid, SIGKILL);
        return exit_status(s.error().code);
    }
    // As many workers as messages planned at once (--jobs).
    const int jobs = g_config->opts.jobs;
    for (int k = 0; k < jobs; ++k) fork_worker(front->chan, {front->chan, sigfd});
    g_message("milter listening on %s (pid %d)", spec.c_str(), static_cast<int>(::getpid()));
    bool stopping = false;
    int status = 0;
    auto last_start = std::chrono::steady_clock::now();
    // Workers started again in the last second, to notice one that dies at once every time.
    std::deque<std::chrono::steady_clock::time_point> restarts;
    for (;;) {
        pollfd p[2] = {{sigfd, POLLIN, 0}, {front->chan, POLLIN, 0}};
        int n = ::poll(p, front->chan >= 0 ? 2 : 1, -1);
        if (n < 0 && errno != EINTR) {
            g_warning("--milter: poll: %s", g_strerror(errno));
            status = exit_status(Code::Software);
            break;
        }
        if (front->chan >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
            char c;
            if (::recv(front->chan, &c, 1, MSG_DONTWAIT) <= 0 && errno != EAGAIN) {
                ::close(front->chan); // the front is gone; SIGCHLD says how
                front->chan = -1;
            }
        }
        if (!(p[0].revents & POLLIN)) continue;
        signalfd_siginfo si{};
        if (::read(sigfd, &si, sizeof si) != sizeof si) continue;
        if (si.ssi_signo == SIGHUP) {
            auto cfg = load_config();
            if (!cfg) {
                g_warning("SIGHUP: the configuration was not reloaded, the old one stays: %s",
                          cfg.error().message.c_str());
            } else {
                if ((*cfg)->opts.milter != g_config->opts.milter || (*cfg)->opts.user != g_config->opts.user ||
                    (*cfg)->opts.jobs != g_config->opts.jobs ||
                    (*cfg)->opts.spool_threshold != g_config->opts.spool_threshold)
                    g_warning("SIGHUP: --milter, --user, --jobs and --spool-threshold take effect at a restart");
                g_config = std::move(*cfg);
                if (Status s = send_front_config(front->chan, g_config->opts); !s)
                    g_warning("SIGHUP: %s; no report lines until it can be opened (SIGHUP again)",
                              s.error().message.c_str());
                warm_up(*g_config);
                // Each worker ends once its message in hand is done; their successors read
                // the new configuration.
                for (pid_t w : g_workers) ::kill(w, SIGUSR1);
                g_message("configuration reloaded");
            }
        } else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
            if (!stopping)
                g_message("stopping (%s): messages in hand are finished first, for up to 5 seconds",
                          si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
            stopping = true;
            if (front->pid > 0) ::kill(front->pid, SIGTERM);
            else break;
        } else if (si.ssi_signo == SIGCHLD) {
            int st = 0;
            pid_t pid;
            rusage ru{};
            while ((pid = ::wait4(-1, &st, WNOHANG, &ru)) > 0) {
                if (pid != front->pid) { // a worker: the front saw how it ended; another takes its place
                    g_workers.erase(pid);
                    if (g_config->opts.verbose)
                        g_message("worker %d ended (%s %d), peak RSS %ld KiB", static_cast<int>(pid),
                                  WIFSIGNALED(st) ? "signal" : "status",
                                  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), ru.ru_maxrss);
                    if (g_replaced.erase(pid) || stopping || front->chan < 0) continue;
                    auto now = std::chrono::steady_clock::now();
                    while (!restarts.empty() && now - restarts.front() > std::chrono::seconds(1)) restarts.pop_front();
                    if (restarts.size() > 100) {
                        g_warning("--milter: workers end as soon as they start; waiting a second");
                        std::this_thread::sleep_for(std::chrono::seconds(1));
                    }
                    restarts.push_back(now);
                    fork_worker(front->chan, {front->chan, sigfd});
                    continue;
                }
                front->pid = -1;
                if (front->chan >= 0) ::close(front->chan), front->chan = -1;
                if (stopping) break;
                g_warning("--milter: the front process ended (%s %d); starting it again",
                          WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                if (std::chrono::steady_clock::now() - last_start < std::chrono::seconds(1))
                    std::this_thread::sleep_for(std::chrono::seconds(1));
                last_start = std::chrono::steady_clock::now();
                front = start_front(g_config->opts);
                if (!front) {
                    g_warning("--milter: %s", front.error().message.c_str());
                    return exit_status(front.error().code);
                }
                if (Status s = send_front_config(front->chan, g_config->opts); !s)
                    g_warning("%s", s.error().message.c_str());
                // The old workers' channels went with the old front: they end at once; the
                // new front gets workers of its own.
                for (pid_t w : g_workers) {
                    ::kill(w, SIGKILL);
                    g_replaced.insert(w);
                }
                for (int k = 0; k < jobs; ++k) fork_worker(front->chan, {front->chan, sigfd});
            }
            if (stopping && front->pid < 0) break;
        }
    }
    // The workers end at the close of their channel with the front; any still planning are
    // given a moment, then stopped: nothing of the service outlives it.
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);;) {
        pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
        if (pid < 0) break; // no children left
        g_workers.erase(pid);
        if (pid == 0) {
            if (std::chrono::steady_clock::now() > until)
                for (pid_t w : g_workers) ::kill(w, SIGKILL);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    if (std::string path = unix_path(spec); !path.empty()) ::unlink(path.c_str());
    if (!opts.pidfile.empty()) (void)::unlink(opts.pidfile.c_str());
    g_message("stopped");
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return status;
}

} // namespace mimeuri
