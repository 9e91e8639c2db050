// The service's front (milter_front.hh): libmilter's callbacks.
#include "milter_front.hh"

#include "fdio.hh"
#include "milter_chan.hh"
#include "milter_dispatch.hh"
#include "milter_edit.hh"
#include "proc_title.hh"
#include "milter_message.hh"
#include "milter_policy.hh"
#include "milter_quickack.h"
#include "milter_stats.hh"

#include <glib.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <thread>
#include <unistd.h>

namespace mimeuri::milter {
namespace {

struct FrontSettings {
    std::size_t spool_threshold{8u << 20};
    // What the supervisor sends at the start and after each reload (a config message on
    // the channel): the --on-error policy for failures no worker saw (the message could
    // not be held), and the --report file, opened by the supervisor (reopened on SIGHUP).
    std::atomic<bool> tempfail{false};
    std::atomic<bool> policies{false}; // the settings have policies: ask for the envelope
    std::atomic<bool> configured{false}; // the first config message is in (front_main waits for it)
    std::mutex report_mutex;
    int report_fd{-1};
};
FrontSettings g_front;
FreeWorkers g_free;
Syslog *g_syslog = nullptr;
Stats g_stats; // --stats, SIGUSR1

// The channels of new workers, as the supervisor forks them, and its config messages. The
// end of the supervisor's channel ends the front.
void receive_workers(int chan)
{
    for (;;) {
        char tag = 0;
        int fd = -1;
        int got = recv_fd(chan, tag, fd);
        if (got < 0 && errno == EINTR) continue;
        if (got != 1) break;
        if ((tag & 0xf0) == kReportTag) { // the report file was renamed (rotated): nothing else changes
            std::lock_guard l(g_front.report_mutex);
            if (g_front.report_fd >= 0) ::close(g_front.report_fd);
            g_front.report_fd = fd;
            continue;
        }
        if ((tag & 0xf0) == kEventTag) {
            ::close(fd);
            g_stats.event(static_cast<Event>(tag & 0x0f));
            continue;
        }
        if ((tag & 0xf0) == kConfigTag) {
            g_front.tempfail = (tag & kTempFail) != 0;
            g_front.policies = (tag & kPolicies) != 0;
            g_front.configured = true;
            g_free.new_generation(); // the workers of the settings before it take no more
            std::lock_guard l(g_front.report_mutex);
            if (g_front.report_fd >= 0) ::close(g_front.report_fd);
            g_front.report_fd = (tag & kReportFd) ? fd : -1;
            if (!(tag & kReportFd)) ::close(fd);
            continue;
        }
        g_free.add(fd);
    }
    g_front.configured = true; // the supervisor is gone: front_main waits no longer
    smfi_stop();
}

struct Connection {
    bool leadspc{false};
    bool no_reply_hdr{false};
    unsigned long no_reply{0}; // the SMFIP_NR_CONN, _MAIL, _RCPT the MTA agreed to
    Envelope envelope;         // the client's address, then each transaction's (policies)
    std::unique_ptr<Message> msg;
    std::string error; // the message could not be held: answered per policy at its end
    MessageTally tally; // how the message in hand left, for the counters
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
    if (!c->msg) c->msg = std::make_unique<Message>(c->leadspc, g_front.spool_threshold);
    return *c->msg;
}

char *c_str(const std::string &s) { return const_cast<char *>(s.c_str()); }

// Hands the header edits to the MTA as header requests.
Status apply_header(SMFICTX *ctx, const Message &m, const std::vector<Edit> &edits, bool &requested)
{
    std::string block(static_cast<std::size_t>(m.split().header_end), '\0');
    auto n = m.read_at(0, block.data(), block.size());
    if (!n || *n != block.size()) return Error{Code::IoErr, "cannot read the header block back"};
    auto ops = header_ops(parse_fields(block), parse_fields(apply_edits(block, edits)));
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
    return ok();
}

// Hands the plan's edits to the MTA: header requests, then the body if it changed. Edit
// texts the worker wrote into the message's file (`texts`) are read from there a chunk at a
// time. `requested` is set once the first request went out.
Status apply_plan(SMFICTX *ctx, const Message &m, const Plan &plan, const std::vector<SpooledText> &texts,
                  bool &requested)
{
    const ReadAt read_at = [&m](std::int64_t off, char *buf, std::size_t len) { return m.read_at(off, buf, len); };
    auto places = text_places(plan, texts, m.size());
    if (!places) return places.error();
    auto parts = split_edits(plan.edits, m.split(), *places, read_at);
    if (!parts) return parts.error();
    if (!parts->header.empty())
        if (Status s = apply_header(ctx, m, parts->header, requested); !s) return s;
    if (parts->body.empty()) return ok();
    bool refused = false;
    Status s = stream_edited(read_at, m.split().body_begin, m.size(), parts->body, parts->body_text,
                             [&](std::string_view chunk) {
                                 requested = true;
                                 refused = smfi_replacebody(ctx, reinterpret_cast<unsigned char *>(
                                                                     const_cast<char *>(chunk.data())),
                                                            static_cast<int>(chunk.size())) != MI_SUCCESS;
                                 return !refused;
                             });
    if (!s) return s;
    if (refused) return Error{Code::TempFail, "the MTA refused the new body"};
    return ok();
}

// One report line (--report), written whole by one write(2) on a file opened O_APPEND:
// the front's threads, and other writers of the file, never interleave within a line.
void write_report(const std::string &queue_id, MessageReport report, const std::string &policy = {})
{
    std::lock_guard l(g_front.report_mutex);
    if (g_front.report_fd < 0) return;
    report.queue_id = queue_id;
    report.policy = policy;
    report.source = "milter";
    std::string line = report.to_json() + "\n";
    if (!write_all(g_front.report_fd, line.data(), line.size()))
        g_warning("--report: cannot write a report line: %s", g_strerror(errno));
}

// The message failed. `reply` is what the SMTP client may read (nothing local: no path, no
// system error); `cause` goes to the log. Accepted as it came (pass) or answered 451
// (tempfail); `tempfail` is true too when requests already went to the MTA (only a 4xx
// then leaves nothing half-done).
sfsistat fail_message(SMFICTX *ctx, const std::string &where, const std::string &queue_id, const std::string &cause,
                      const std::string &reply, bool tempfail, std::optional<MessageReport> report = {},
                      const std::string &policy = {})
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
    r.add_error("", ErrorCode::Failed, outcome);
    conn(ctx)->tally = tally_report(tempfail ? Outcome::TempFailed : Outcome::PassedOnError, &r);
    conn(ctx)->tally.policy = policy;
    write_report(queue_id, std::move(r), policy);
    return tempfail ? SMFIS_TEMPFAIL : SMFIS_ACCEPT;
}

sfsistat on_negotiate(SMFICTX *ctx, unsigned long f0, unsigned long f1, unsigned long, unsigned long,
                      unsigned long *pf0, unsigned long *pf1, unsigned long *pf2, unsigned long *pf3)
{
    const unsigned long wanted_actions = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_CHGBODY;
    if ((f0 & wanted_actions) != wanted_actions) return SMFIS_REJECT; // this MTA cannot take our changes
    *pf0 = wanted_actions | (f0 & SMFIF_SETSYMLIST);
    // Only the steps a message needs: the envelope (the policies: the client's address, MAIL
    // FROM, each RCPT TO, answered with no reply where the MTA allows), its header lines,
    // its body and its end. Without policies the envelope is not asked for.
    Connection *c = conn(ctx);
    c->envelope.known = g_front.policies;
    unsigned long steps = SMFIP_NOHELO | SMFIP_NOEOH | SMFIP_NOUNKNOWN | SMFIP_NODATA;
    if (!c->envelope.known) steps |= SMFIP_NOCONNECT | SMFIP_NOMAIL | SMFIP_NORCPT;
    steps &= f1;
    if (c->envelope.known) c->no_reply = f1 & (SMFIP_NR_CONN | SMFIP_NR_MAIL | SMFIP_NR_RCPT);
    steps |= c->no_reply;
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
    // The macros it reads: the queue id at the end, the SMTP AUTH login with MAIL FROM
    // (authenticated = yes/no; Postfix's milter_mail_macros and sendmail's default send it too),
    // the listener with the connection (daemon-name, daemon-port).
    if (f0 & SMFIF_SETSYMLIST) {
        smfi_setsymlist(ctx, SMFIM_EOM, c_str(std::string("i")));
        smfi_setsymlist(ctx, SMFIM_ENVFROM, c_str(std::string("{auth_authen}")));
        smfi_setsymlist(ctx, SMFIM_CONNECT, c_str(std::string("{daemon_name} {daemon_port}")));
    }
    return SMFIS_CONTINUE;
}

void drop_message(SMFICTX *ctx)
{
    if (Connection *c = conn(ctx)) {
        c->msg.reset();
        c->error.clear();
    }
}

sfsistat reply_to(const Connection *c, unsigned long no_reply_flag)
{
    return (c->no_reply & no_reply_flag) ? SMFIS_NOREPLY : SMFIS_CONTINUE;
}

// The client's address as text (IPv4-mapped IPv6 as IPv4); "" when not an IP connection.
sfsistat on_connect(SMFICTX *ctx, char *, _SOCK_ADDR *addr)
{
    Connection *c = conn(ctx);
    char text[INET6_ADDRSTRLEN] = "";
    if (addr && addr->sa_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(addr)->sin_addr, text, sizeof text);
    else if (addr && addr->sa_family == AF_INET6) {
        const in6_addr &a6 = reinterpret_cast<sockaddr_in6 *>(addr)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a6)) ::inet_ntop(AF_INET, &a6.s6_addr[12], text, sizeof text);
        else ::inet_ntop(AF_INET6, &a6, text, sizeof text);
    }
    c->envelope.client = text;
    // The listener the client came in by (Postfix's milter_connect_macros send {daemon_name},
    // and {daemon_port} where added): the daemon-name and daemon-port policy keys.
    const char *name = smfi_getsymval(ctx, c_str(std::string("{daemon_name}")));
    const char *port = smfi_getsymval(ctx, c_str(std::string("{daemon_port}")));
    c->envelope.daemon_name = name ? name : "";
    c->envelope.daemon_port = port ? port : "";
    return reply_to(c, SMFIP_NR_CONN);
}

// A transaction starts: its sender, and whether the client logged in (SMTP AUTH).
sfsistat on_envfrom(SMFICTX *ctx, char **argv)
{
    Connection *c = conn(ctx);
    c->envelope.sender = argv && argv[0] ? argv[0] : "";
    c->envelope.recipients.clear();
    const char *authen = smfi_getsymval(ctx, c_str(std::string("{auth_authen}")));
    c->envelope.auth_authen = authen ? authen : "";
    return reply_to(c, SMFIP_NR_MAIL);
}

sfsistat on_envrcpt(SMFICTX *ctx, char **argv)
{
    Connection *c = conn(ctx);
    if (argv && argv[0]) c->envelope.recipients.emplace_back(argv[0]);
    return reply_to(c, SMFIP_NR_RCPT);
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

// The end of the message: planned by a worker, the plan handed to the MTA; any failure
// answered per --on-error (fail_message).
sfsistat end_of_message(SMFICTX *ctx, Connection *c, Message &m, std::string &where, const std::string &qid,
                        bool &requested)
{
    const bool policy_tempfail = g_front.tempfail;
    // Nothing to plan with: the original goes on, or is tempfailed, per --on-error.
    if (!c->error.empty())
        return fail_message(ctx, where, qid, c->error, "cannot hold the message now", policy_tempfail);
    auto fd = m.finish();
    if (!fd) return fail_message(ctx, where, qid, fd.error().message, "cannot hold the message now", policy_tempfail);
    WorkerResult w = run_worker(g_free, *fd, c->envelope.serialize(), [ctx] { smfi_progress(ctx); });
    if (w.plan && !w.plan->message_id.empty()) where += "message-id=<" + w.plan->message_id + ">: ";
    if (!w.policy.empty()) where += "policy=" + w.policy + ": ";
    if (!w.plan) return fail_message(ctx, where, qid, w.failure, w.failure, w.tempfail, {}, w.policy);
    if (w.plan->failed())
        return fail_message(ctx, where, qid, w.plan->cause, "the message could not be processed now", w.tempfail,
                            std::move(w.plan->report), w.policy);
    if (Status s = apply_plan(ctx, m, *w.plan, w.texts, requested); !s)
        // Once a request is with the MTA, only a 4xx leaves nothing half-done; before that,
        // the message can still go on unchanged under --on-error=pass.
        return fail_message(ctx, where, qid, s.error().message, "the message could not be changed now",
                            requested || w.tempfail, std::move(w.plan->report), w.policy);
    g_syslog->info(where + w.plan->log_line);
    c->tally = tally_report(requested ? Outcome::Changed : Outcome::Unchanged,
                            w.plan->report ? &*w.plan->report : nullptr);
    c->tally.policy = w.policy;
    if (w.plan->report) write_report(qid, std::move(*w.plan->report), w.policy);
    return SMFIS_ACCEPT;
}

sfsistat on_eom(SMFICTX *ctx)
{
    const auto started = std::chrono::steady_clock::now();
    const char *qid_c = smfi_getsymval(ctx, c_str(std::string("i")));
    const std::string qid = qid_c && *qid_c ? qid_c : "NOQUEUE";
    std::string where = qid + ": ";
    bool requested = false;
    conn(ctx)->tally = {};
    sfsistat result;
    try {
        result = end_of_message(ctx, conn(ctx), message(ctx), where, qid, requested);
    } catch (const std::exception &e) {
        result = fail_message(ctx, where, qid, std::string("internal error: ") + e.what(), "internal error",
                              requested || g_front.tempfail);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    g_stats.message(conn(ctx)->tally, seconds);
    drop_message(ctx);
    g_debug("end of message handled in %.3f ms", seconds * 1000);
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

// Written by stats_loop and at the front's end: one at a time (one temporary name).
void write_stats(const std::string &path)
{
    static std::mutex writing;
    if (path.empty()) return;
    std::lock_guard l(writing);
    if (Status s = write_stats_file(path, g_stats.exposition()); !s) g_warning("%s", s.error().message.c_str());
}

// The counters: written to --stats every 10 seconds, logged (and written) on SIGUSR1, which
// every other thread of the front keeps blocked (the supervisor forked it so), so that it
// comes here.
void stats_loop(std::string path)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (;;) {
        timespec every{kStatsSeconds, 0};
        const int sig = ::sigtimedwait(&usr1, nullptr, &every);
        if (sig < 0 && errno == EINTR) continue;
        if (sig == SIGUSR1) g_message("%s", g_stats.log_line().c_str());
        write_stats(path);
    }
}

} // namespace

smfiDesc front_description()
{
    static char name[] = "mimeuri";
    smfiDesc desc{};
    desc.xxfi_name = name;
    desc.xxfi_version = SMFI_VERSION;
    desc.xxfi_flags = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_CHGBODY | SMFIF_SETSYMLIST;
    desc.xxfi_connect = on_connect;
    desc.xxfi_envfrom = on_envfrom;
    desc.xxfi_envrcpt = on_envrcpt;
    desc.xxfi_header = on_header;
    desc.xxfi_body = on_body;
    desc.xxfi_eom = on_eom;
    desc.xxfi_abort = on_abort;
    desc.xxfi_close = on_close;
    desc.xxfi_negotiate = on_negotiate;
    return desc;
}

[[noreturn]] void front_main(int chan, const Options &opts, Syslog &syslog)
{
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    g_stats.start_now(); // before its threads: the counters start with this process
    proc_title::set("mimeuri: milter front " + opts.milter, "mimeuri-front");
    g_syslog = &syslog;
    g_front.spool_threshold = opts.spool_threshold;
    std::thread(receive_workers, chan).detach();
    std::thread(stats_loop, opts.stats_path).detach();
    milter_idle_timeout(static_cast<int>(opts.milter_timeout + 0.5));
    sigset_t usr1; // SIGUSR1 stays blocked: stats_loop takes it
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ::sigprocmask(SIG_SETMASK, &usr1, nullptr);
    // No connection is taken before the settings are in: one negotiated earlier would not ask
    // the MTA for the envelope, and so match no policy (seen in CI: the first message of a
    // fresh service went by the service's settings, not its policy's). The supervisor sends
    // them right after the fork; the end of its channel ends the wait too.
    for (int waited = 0; !g_front.configured && waited < 10000; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    int rc = smfi_main();
    write_stats(opts.stats_path); // at exit: the last counts
    _exit(rc == MI_SUCCESS ? 0 : 1);
}

} // namespace mimeuri::milter
