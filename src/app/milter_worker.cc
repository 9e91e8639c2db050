// The service's workers (milter_worker.hh): the front hands a message's descriptor over the
// channel; the worker answers a WorkerHello, then the serialized Plan.
#include "milter_worker.hh"

#include "engine.hh"
#include "faults.hh"
#include "fdio.hh"
#include "milter_chan.hh"
#include "milter_texts.hh"
#include "proc_title.hh"
#include "run.hh"
#include "source.hh"

#include <glib.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <string_view>
#include <unistd.h>

namespace mimeuri::milter {
namespace {

// Sends the plan back: its length and bytes, then those of the list of its texts written
// into the message's file, past its `size` bytes (milter_texts.hh).
void send_plan(int sock, int msg_fd, std::int64_t size, Plan plan)
{
    Result<std::vector<SpooledText>> texts = std::vector<SpooledText>{};
    if (!plan.failed()) texts = spool_texts(plan, msg_fd, size);
    if (!texts) {
        plan.cause = texts.error().message; // the front answers it per --on-error
        plan.edits.clear();
    }
    for (const std::string &bytes : {serialize(plan), serialize_texts(texts ? *texts : std::vector<SpooledText>{})}) {
        std::uint64_t len = bytes.size();
        if (!write_all(sock, &len, sizeof len) || !write_all(sock, bytes.data(), bytes.size())) return;
    }
}

// Plans one message: the hello, then the plan, on sock; with the settings of the first
// policy its envelope matches, else the service's.
void plan_one(int sock, int msg_fd, const Settings &service, const Envelope &env)
{
    const Policy *policy = service.policy_for(env);
    const Settings &cfg = policy ? *policy->settings : service;
    WorkerHello hello{::getpid(), static_cast<std::uint8_t>(cfg.opts.on_error == OnError::TempFail),
                      cfg.opts.limits.max_seconds, {}};
    if (policy) g_strlcpy(hello.policy, policy->name.c_str(), sizeof hello.policy);
    if (!write_all(sock, &hello, sizeof hello)) return;
    Plan plan;
    auto src = Source::open_path("/proc/self/fd/" + std::to_string(msg_fd), cfg.opts.spool_threshold);
    // Passes of its own for each message: their state (the mid: index) never carries over.
    // The settings were checked when loaded (an index that cannot be read stops the start
    // or the reload); a file that goes away later fails the messages that need it.
    // The envelope's recipients, for the passes that read them (the remote pass's trackers).
    PassOptions pass_opts = cfg.pass_opts;
    pass_opts.of<EnvelopeRecipients>().addresses = env.recipients;
    auto passes = build_passes(cfg.opts, pass_opts);
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
        Engine engine(passes, engine_config(cfg.opts, Runner::Service));
        plan = plan_message(engine, *src);
    }
    send_plan(sock, msg_fd, src ? src->size() : 0, std::move(plan));
}

volatile sig_atomic_t g_retire = 0;
void on_retire(int) { g_retire = 1; }

} // namespace

[[noreturn]] void worker_main(int chan, int max_use, const Settings &cfg)
{
    struct sigaction sa {};
    sa.sa_handler = on_retire; // no SA_RESTART: a worker waiting for a message wakes up
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
    sigset_t usr1; // blocked by the supervisor from the fork until here
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ::sigprocmask(SIG_UNBLOCK, &usr1, nullptr);
    // The socket too, as the supervisor's command line names it: `pgrep -f SOCKET` finds the
    // whole service.
    const std::string title = "mimeuri: milter worker " + cfg.opts.milter, of = " of " + std::to_string(max_use) + ")";
    for (int used = 0; used < max_use && !g_retire; ++used) {
        proc_title::set(title + " (idle, " + std::to_string(used) + of, "mimeuri-worker");
        char tag = 0;
        int msg_fd = -1;
        int got;
        while ((got = recv_fd(chan, tag, msg_fd)) < 0 && errno == EINTR && !g_retire) {}
        if (got != 1) _exit(0);
        proc_title::set(title + " (planning " + std::to_string(used + 1) + of);
        std::uint32_t len = 0;
        std::string env;
        if (!read_all(chan, &len, sizeof len)) _exit(0);
        env.resize(len);
        if (!read_all(chan, env.data(), env.size())) _exit(0);
        plan_one(chan, msg_fd, cfg, Envelope::deserialize(env));
        ::close(msg_fd);
    }
    _exit(0);
}

} // namespace mimeuri::milter
