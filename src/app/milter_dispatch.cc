// The front's side of the workers (milter_dispatch.hh).
#include "milter_dispatch.hh"

#include "deadline.hh"
#include "fdio.hh"
#include "milter_chan.hh"
#include "milter_texts.hh"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace mimeuri::milter {

void FreeWorkers::add(int fd)
{
    {
        std::lock_guard l(m_);
        free_.push_back({fd, generation_});
    }
    cv_.notify_one();
}

void FreeWorkers::give_back(WorkerChan w)
{
    {
        std::lock_guard l(m_);
        if (w.generation != generation_) {
            ::close(w.fd);
            return;
        }
        free_.push_back(w);
    }
    cv_.notify_one();
}

WorkerChan FreeWorkers::take(std::chrono::milliseconds wait)
{
    std::unique_lock l(m_);
    if (!cv_.wait_for(l, wait, [&] { return !free_.empty(); })) return {};
    WorkerChan w = free_.front();
    free_.pop_front();
    return w;
}

void FreeWorkers::new_generation()
{
    std::lock_guard l(m_);
    ++generation_;
    for (const WorkerChan &w : free_) ::close(w.fd);
    free_.clear();
}

namespace {

using Clock = std::chrono::steady_clock;

// Reads a length and that many bytes (the plan, the list of its texts) from worker channel w
// into `bytes` until `deadline`: "" when they came whole, else why not (past the deadline
// the worker is killed).
std::string read_frame(int w, pid_t pid, Clock::time_point deadline, const std::function<void()> &progress,
                      std::string &bytes)
{
    std::uint64_t len = 0;
    bool have_len = false;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            ::kill(pid, SIGKILL);
            return "the message took longer than --max-time; its worker was stopped";
        }
        pollfd p{w, POLLIN, 0};
        int n = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 5000)));
        if (n == 0) {
            progress();
            continue;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::string("poll: ") + g_strerror(errno);
        }
        std::size_t want = have_len ? static_cast<std::size_t>(len - bytes.size()) : sizeof len - bytes.size();
        char buf[65536];
        ssize_t got = ::read(w, buf, std::min(sizeof buf, want));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return "the worker planning the message died";
        bytes.append(buf, static_cast<std::size_t>(got));
        if (!have_len && bytes.size() == sizeof len) {
            std::memcpy(&len, bytes.data(), sizeof len);
            bytes.clear();
            have_len = true;
        }
        if (have_len && bytes.size() == len) return {};
    }
}

} // namespace

WorkerResult run_worker(FreeWorkers &workers, int msg_fd, const std::string &envelope,
                        const std::function<void()> &progress)
{
    WorkerResult r;
    r.tempfail = true;
    // A worker that ends before it says hello (retired by a reload, its last message done,
    // killed) never started on this message: another one takes it. Such channels are not
    // tries: after N reloads with no message between them the free list holds N x --jobs
    // channels of ended workers ahead of the live ones, each found dead at once (the send
    // or the hello fails), and none comes back. What bounds the wait is the time.
    const auto give_up = Clock::now() + std::chrono::seconds(60);
    for (;;) {
        auto t0 = Clock::now();
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - t0);
        WorkerChan chan = left.count() > 0 ? workers.take(left) : WorkerChan{};
        const int w = chan.fd;
        if (w < 0) {
            r.failure = "no worker was free within 60 s";
            return r;
        }
        WorkerHello hello{};
        const auto len = static_cast<std::uint32_t>(envelope.size());
        if (!send_fd(w, 'M', msg_fd) || !write_all(w, &len, sizeof len) || !write_all(w, envelope.data(), len) ||
            !read_all(w, &hello, sizeof hello)) {
            ::close(w);
            continue;
        }
        auto t1 = Clock::now();
        g_debug("worker started in %.3f ms", std::chrono::duration<double, std::milli>(t1 - t0).count());
        r.tempfail = hello.tempfail;
        hello.policy[sizeof hello.policy - 1] = '\0';
        r.policy = hello.policy;
        // The engine keeps --max-time itself; past it and 5 seconds more the worker is stopped.
        const auto deadline = deadline_after(hello.max_seconds + 5, t1);
        std::string bytes, texts;
        r.failure = read_frame(w, hello.pid, deadline, progress, bytes);
        if (r.failure.empty()) r.failure = read_frame(w, hello.pid, deadline, progress, texts);
        g_debug("plan back in %.3f ms", std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
        if (!r.failure.empty()) {
            ::close(w); // a dead or stopped worker: the supervisor forks another
            return r;
        }
        workers.give_back(chan);
        try {
            r.plan = deserialize(std::move(bytes));
            r.texts = deserialize_texts(texts);
            // The service writes no files beside its messages (its settings refuse a pass that
            // would, PassRow::files_beside): a plan with work for the take would report files
            // that are never written.
            if (!r.plan->at_take.empty()) r.failure = "the worker's plan carries work for when it is taken (files to write), which the service does not do";
        } catch (const std::exception &e) {
            r.failure = std::string("the worker's plan could not be read: ") + e.what();
        }
        return r;
    }
}

} // namespace mimeuri::milter
