// workers: --jobs, messages planned by forked worker processes (workers.hh).
//
// SYNOPSIS  run_forked(jobs, feed, hooks): the workers forked, each fed a share of the
//           messages; what each produces comes back to the parent in message order.
#include "workers.hh"

#include "fdio.hh"
#include "output.hh"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <map>
#include <poll.h>
#include <fcntl.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace mimeuri {


Feed Feed::fixed(std::size_t n)
{
    Feed f;
    f.more = [] { return false; };
    f.known = [n] { return n; };
    return f;
}

namespace {

// A range of consecutive item numbers handed to one worker.
struct Chunk {
    std::size_t begin, end;
};

// What goes down a task pipe: the chunk, then `size` bytes of Feed::describe.
struct Task {
    Chunk chunk;
    std::uint64_t size;
};

void worker_loop(int tasks, int results, std::uint64_t *current, const Feed &feed,
                 const std::function<std::string(std::size_t)> &produce, const std::function<std::string()> &finish);

// The worker's side: takes chunks from `tasks` until it closes, sends one length-prefixed
// result per item (a chunk's results in one write, so the parent wakes once a chunk), then
// finish()'s bytes. `current` (shared with the parent) names the item being made, so that if
// the worker dies the parent knows which item killed it.
[[noreturn]] void worker_main(int tasks, int results, std::uint64_t *current, const Feed &feed,
                              const std::function<std::string(std::size_t)> &produce,
                              const std::function<std::string()> &finish)
{
    // Nothing may unwind out of here into the parent's code, whose destructors would
    // remove the parent's temporary files: an exception ends the worker like a crash does
    // (the message it was on fails; the parent hands its other ones to the workers alive).
    try {
        worker_loop(tasks, results, current, feed, produce, finish);
    } catch (...) {
    }
    ::_exit(1);
}

// The worker's loop; returns only by _exit, or by throwing.
void worker_loop(int tasks, int results, std::uint64_t *current, const Feed &feed,
                 const std::function<std::string(std::size_t)> &produce, const std::function<std::string()> &finish)
{
    bool ok = true;
    Record out; // the results not written yet, each a Record field
    auto send = [&] {
        std::string bytes = out.take();
        out = Record();
        return write_all(results, bytes.data(), bytes.size());
    };
    std::string about;
    Task t{};
    while (ok && read_all(tasks, &t, sizeof t)) {
        about.resize(t.size);
        if (!read_all(tasks, about.data(), about.size())) break;
        if (feed.learn) feed.learn(t.chunk.begin, t.chunk.end, std::move(about));
        for (std::size_t i = t.chunk.begin; i < t.chunk.end && ok; ++i) {
            *current = i;
            out.put(produce(i));
            if (out.size() >= (1u << 18)) ok = send(); // big results go out as they come
        }
        if (ok) ok = send();
    }
    if (ok && finish) {
        out.put(finish());
        ok = send();
    }
    ::_exit(ok ? 0 : 1); // no destructors: the parent owns every output
}

// One run of workers. Whatever happens (a pipe or fork failing part way, poll failing),
// the destructor closes every pipe, waits for every worker started and unmaps the shared
// page: no child is left unreaped and nothing stays open.
class Pool {
public:
    Pool(int jobs, const Feed &feed, const Hooks &hooks);
    ~Pool();
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;
    void start();
    void loop();

private:
    struct Worker {
        pid_t pid{-1};
        int tasks{-1};   // parent writes chunks; closed when there are no more
        int results{-1}; // parent reads results; -1 once at end of file
        std::deque<Chunk> queued;
        std::vector<Chunk> done; // items whose results arrived (its share of the index)
        std::string in;          // bytes read, not yet a whole record
        bool final_seen{false};
    };
    static bool alive(const Worker &wk) { return wk.results >= 0; }
    static void close_tasks(Worker &wk);
    void find_more();
    void dispatch();
    void died(Worker &wk);
    void ended(Worker &wk);
    void take_records(Worker &wk);
    bool consume_due(bool anyone);
    void read_results();

    const Feed &feed_;
    const Hooks &hooks_;
    std::size_t n_;
    std::vector<Worker> workers_;
    void *shared_{MAP_FAILED};
    std::uint64_t *current_{nullptr}; // one slot per worker, shared across fork
    bool finding_{false};
    std::size_t chunk_{64}, window_{0};
    static constexpr std::size_t depth_ = 2;
    std::deque<Chunk> todo_; // chunks to hand out, in order (a dead worker's leftovers first)
    std::size_t chunked_{0}; // items already in chunks
    std::map<std::size_t, std::pair<std::string, bool>> held_; // results ahead of next_
    std::size_t next_{0};                                       // the next item to consume
    bool stopped_{false};
    std::string buf_ = std::string(1 << 16, '\0');
};

Pool::Pool(int jobs, const Feed &feed, const Hooks &hooks)
    : feed_(feed), hooks_(hooks), n_(static_cast<std::size_t>(jobs)), workers_(n_)
{
    shared_ = ::mmap(nullptr, n_ * sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared_ == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    current_ = static_cast<std::uint64_t *>(shared_);
    for (std::size_t w = 0; w < n_; ++w) current_[w] = UINT64_MAX;
}

Pool::~Pool()
{
    for (auto &wk : workers_) {
        close_tasks(wk);
        if (alive(wk)) ::close(wk.results); // when stopped: its next write fails and it exits
        if (wk.pid > 0) reap_worker(wk.pid);
    }
    if (shared_ != MAP_FAILED) ::munmap(shared_, n_ * sizeof(std::uint64_t));
}

void Pool::close_tasks(Worker &wk)
{
    if (wk.tasks >= 0) ::close(wk.tasks);
    wk.tasks = -1;
}

void Pool::start()
{
    for (std::size_t w = 0; w < n_; ++w) {
        int t[2], r[2];
        if (::pipe(t) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        if (::pipe(r) != 0) {
            int err = errno;
            ::close(t[0]);
            ::close(t[1]);
            throw std::runtime_error(std::string("pipe: ") + std::strerror(err));
        }
        (void)::fcntl(r[1], F_SETPIPE_SZ, 1 << 20); // best effort; the default is 64 KiB
        pid_t pid;
        {
            // No terminating signal between the fork and the worker's own handling of it (or
            // the parent knowing the worker's pid): it waits until both are in place.
            TerminationHeld held;
            pid = ::fork();
            if (pid == 0) reset_signal_cleanup(); // the parent's temporary files are the parent's
            if (pid > 0) register_worker(pid);
        }
        if (pid == 0) {
            ::close(t[1]);
            ::close(r[0]);
            // Another worker's task pipe held open here would never reach end of file.
            for (std::size_t o = 0; o < w; ++o) {
                ::close(workers_[o].tasks);
                ::close(workers_[o].results);
            }
            worker_main(t[0], r[1], &current_[w], feed_, hooks_.produce, hooks_.finish);
        }
        ::close(t[0]);
        ::close(r[1]);
        if (pid < 0) {
            int err = errno;
            ::close(t[1]);
            ::close(r[0]);
            throw std::runtime_error(std::string("fork: ") + std::strerror(err));
        }
        workers_[w] = Worker{pid, t[1], r[0], {}, {}, {}, false};
    }
    // Chunks of up to 64 items, fewer for a small known count so that it spreads over the
    // workers. Each worker has `depth` chunks queued so it never waits for the parent, and no
    // chunk starts `window` items or more past the oldest unconsumed one, which bounds what
    // the parent holds while it restores the order.
    finding_ = feed_.more();
    chunk_ = finding_ ? 64 : std::clamp<std::size_t>(feed_.known() / (n_ * 32), 1, 64);
    window_ = n_ * depth_ * 4 * chunk_;
    find_more();
}

void Pool::find_more()
{
    if (finding_) finding_ = feed_.more();
    const std::size_t known = feed_.known();
    while (known - chunked_ >= chunk_ || (!finding_ && chunked_ < known)) {
        todo_.push_back({chunked_, std::min(known, chunked_ + chunk_)});
        chunked_ = todo_.back().end;
    }
}

void Pool::dispatch()
{
    std::string task;
    // Round robin over the workers, a chunk at a time, so the first chunks are spread.
    for (bool gave = true; gave;) {
        gave = false;
        for (auto &wk : workers_) {
            if (!alive(wk) || wk.tasks < 0 || wk.queued.size() >= depth_ || todo_.empty()) continue;
            Chunk c = todo_.front();
            if (c.begin >= next_ + window_) continue;
            std::string about = feed_.describe ? feed_.describe(c.begin, c.end) : std::string();
            Task t{c, about.size()};
            task.assign(reinterpret_cast<const char *>(&t), sizeof t);
            task += about;
            if (!write_all(wk.tasks, task.data(), task.size())) {
                close_tasks(wk); // it died; its end of file is seen by the reading side
                continue;
            }
            todo_.pop_front();
            wk.queued.push_back(c);
            gave = true;
        }
    }
    // The end of the task pipes ends the workers: only once every item is found and done,
    // since a worker that dies hands its unfinished chunks back to the others.
    if (!finding_ && todo_.empty() &&
        std::all_of(workers_.begin(), workers_.end(), [](const Worker &wk) { return wk.queued.empty(); }))
        for (auto &wk : workers_) close_tasks(wk);
}

// A worker's results pipe reached its end. Without finish()'s bytes, its share of what the
// workers build (the mid: index) is lost: the parent is told which items to do again.
void Pool::ended(Worker &wk)
{
    close_tasks(wk);
    ::close(wk.results);
    wk.results = -1;
    if (!hooks_.finish || wk.final_seen || wk.done.empty()) return;
    std::size_t items = 0;
    for (const Chunk &c : wk.done) items += c.end - c.begin;
    g_warning("a worker process ended before it sent its share of the index; %zu messages indexed again", items);
    if (hooks_.share_lost)
        for (const Chunk &c : wk.done)
            for (std::size_t i = c.begin; i < c.end; ++i) hooks_.share_lost(i);
}

void Pool::died(Worker &wk)
{
    // The item it was making is lost; its other unsent ones go back to the others (results
    // it made but had not written yet included).
    const std::uint64_t culprit = current_[static_cast<std::size_t>(&wk - workers_.data())];
    std::deque<Chunk> back;
    for (const Chunk &c : wk.queued) {
        if (culprit >= c.begin && culprit < c.end) {
            held_.emplace(culprit, std::make_pair(std::string(), false));
            if (c.begin < culprit) back.push_back({c.begin, culprit});
            if (culprit + 1 < c.end) back.push_back({culprit + 1, c.end});
        } else {
            back.push_back(c);
        }
    }
    todo_.insert(todo_.begin(), back.begin(), back.end());
    wk.queued.clear();
    ended(wk);
}

void Pool::take_records(Worker &wk)
{
    std::size_t pos = 0;
    std::uint64_t len = 0;
    while (wk.in.size() - pos >= sizeof len) {
        std::memcpy(&len, wk.in.data() + pos, sizeof len);
        if (wk.in.size() - pos - sizeof len < len) break;
        std::string rec = wk.in.substr(pos + sizeof len, len);
        pos += sizeof len + len;
        if (!wk.queued.empty()) {
            Chunk &c = wk.queued.front();
            held_.emplace(c.begin, std::make_pair(std::move(rec), true));
            if (!wk.done.empty() && wk.done.back().end == c.begin) ++wk.done.back().end;
            else wk.done.push_back({c.begin, c.begin + 1});
            if (++c.begin == c.end) wk.queued.pop_front();
        } else if (!wk.final_seen) {
            wk.final_seen = true;
            if (hooks_.at_end) hooks_.at_end(std::move(rec));
        }
    }
    wk.in.erase(0, pos);
}

// Consumes what is due, in order. With no worker left, whatever remains fails.
bool Pool::consume_due(bool anyone)
{
    while (!stopped_) {
        if (auto it = held_.find(next_); it != held_.end()) {
            stopped_ = !hooks_.consume(next_, std::move(it->second.first), it->second.second);
            held_.erase(it);
        } else if (!anyone && next_ < feed_.known()) {
            stopped_ = !hooks_.consume(next_, std::string(), false);
        } else {
            break;
        }
        ++next_;
    }
    return !stopped_;
}

void Pool::read_results()
{
    std::vector<pollfd> fds;
    std::vector<Worker *> polled;
    for (auto &wk : workers_)
        if (alive(wk)) {
            fds.push_back({wk.results, POLLIN, 0});
            polled.push_back(&wk);
        }
    // While items are still being found, look for results without waiting, then find more.
    int ready = ::poll(fds.data(), fds.size(), finding_ ? 0 : -1);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t k = 0; ready > 0 && k < fds.size(); ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Worker &wk = *polled[k];
        ssize_t got = ::read(wk.results, buf_.data(), buf_.size());
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (wk.queued.empty() && wk.tasks < 0) ended(wk); // finished (with its share, or not)
            else died(wk);
            continue;
        }
        wk.in.append(buf_.data(), static_cast<std::size_t>(got));
        take_records(wk);
    }
}

void Pool::loop()
{
    for (;;) {
        const bool anyone = std::any_of(workers_.begin(), workers_.end(), alive);
        if (!anyone)
            while (finding_) find_more();
        if (!consume_due(anyone) || !anyone) break;
        dispatch();
        read_results();
        if (finding_) find_more();
    }
}

} // namespace

void run_forked(int jobs, const Feed &feed, const Hooks &hooks)
{
    std::fflush(nullptr); // nothing buffered may be written twice
    Pool pool(jobs, feed, hooks);
    pool.start();
    pool.loop();
}

void run_forked(int jobs, const Feed &feed, const std::function<std::string(std::size_t)> &produce,
                const std::function<bool(std::size_t, std::string &&, bool)> &consume,
                const std::function<std::string()> &finish, const std::function<void(std::string &&)> &at_end)
{
    run_forked(jobs, feed, Hooks{produce, consume, finish, at_end, {}});
}

} // namespace mimeuri
