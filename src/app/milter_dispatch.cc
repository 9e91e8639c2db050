// The front's side of the workers (milter_dispatch.hh).
#include "milter_dispatch.hh"

#include "deadline.hh"
#include "fdio.hh"
#include "milter_chan.hh"

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
        free_.push_back(fd);
    }
    cv_.notify_one();
}

int FreeWorkers::take(std::chrono::milliseconds wait)
{
    std::unique_lock l(m_);
    if (!cv_.wait_for(l, wait, [&] { return !free_.empty(); })) return -1;
    int fd = free_.front();
    free_.pop_front();
    return fd;
}

namespace {

using Clock = std::chrono::steady_clock;

// Reads the plan's length and bytes from worker channel w into `bytes` until `deadline`:
// "" when it came whole, else why not (past the deadline the worker is killed).
std::string read_plan(int w, pid_t pid, Clock::time_point deadline, const std::function<void()> &progress,
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

WorkerResult run_worker(FreeWorkers &workers, int msg_fd, const std::function<void()> &progress)
{
    WorkerResult r;
    r.tempfail = true;
    // A worker that ends before it says hello (a reload, its last message done) never
    // started on this message: another one takes it.
    for (int tries = 0; tries < 4; ++tries) {
        auto t0 = Clock::now();
        int w = workers.take(std::chrono::seconds(60));
        if (w < 0) {
            r.failure = "no worker was free within 60 s";
            return r;
        }
        WorkerHello hello{};
        if (!send_fd(w, 'M', msg_fd) || !read_all(w, &hello, sizeof hello)) {
            ::close(w);
            continue;
        }
        auto t1 = Clock::now();
        g_debug("worker started in %.3f ms", std::chrono::duration<double, std::milli>(t1 - t0).count());
        r.tempfail = hello.tempfail;
        // The engine keeps --max-time itself; past it and 5 seconds more the worker is stopped.
        const auto deadline = deadline_after(hello.max_seconds + 5, t1);
        std::string bytes;
        r.failure = read_plan(w, hello.pid, deadline, progress, bytes);
        g_debug("plan back in %.3f ms", std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
        if (!r.failure.empty()) {
            ::close(w); // a dead or stopped worker: the supervisor forks another
            return r;
        }
        workers.add(w);
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

} // namespace mimeuri::milter
