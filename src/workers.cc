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


void Record::put(const std::string &s)
{
    std::uint64_t len = s.size();
    buf_.append(reinterpret_cast<const char *>(&len), sizeof len);
    buf_ += s;
}

std::string Record::get()
{
    std::uint64_t len = 0;
    if (pos_ + sizeof len > buf_.size()) throw std::runtime_error("short worker record");
    std::memcpy(&len, buf_.data() + pos_, sizeof len);
    pos_ += sizeof len;
    if (pos_ + len > buf_.size()) throw std::runtime_error("short worker record");
    std::string out = buf_.substr(pos_, len);
    pos_ += len;
    return out;
}

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

// The worker's side: takes chunks from `tasks` until it closes, sends one length-prefixed
// result per item (a chunk's results in one write, so the parent wakes once a chunk), then
// finish()'s bytes. `current` (shared with the parent) names the item being made, so that if
// the worker dies the parent knows which item killed it.
[[noreturn]] void worker_main(int tasks, int results, std::uint64_t *current, const Feed &feed,
                              const std::function<std::string(std::size_t)> &produce,
                              const std::function<std::string()> &finish)
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

} // namespace

void run_forked(int jobs, const Feed &feed, const std::function<std::string(std::size_t)> &produce,
                const std::function<bool(std::size_t, std::string &&, bool)> &consume,
                const std::function<std::string()> &finish, const std::function<void(std::string &&)> &at_end)
{
    std::fflush(nullptr); // nothing buffered may be written twice
    const std::size_t nworkers = static_cast<std::size_t>(jobs);
    struct Worker {
        pid_t pid{-1};
        int tasks{-1};   // parent writes chunks; closed when there are no more
        int results{-1}; // parent reads results; -1 once at end of file
        std::deque<Chunk> queued;
        std::string in; // bytes read, not yet a whole record
        bool final_seen{false};
    };
    std::vector<Worker> workers(nworkers);
    // One slot per worker, shared across fork: the item it is working on.
    void *shared = ::mmap(nullptr, nworkers * sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    auto *current = static_cast<std::uint64_t *>(shared);
    for (std::size_t w = 0; w < nworkers; ++w) current[w] = UINT64_MAX;
    for (std::size_t w = 0; w < nworkers; ++w) {
        int t[2], r[2];
        if (::pipe(t) != 0 || ::pipe(r) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
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
        if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0) {
            ::close(t[1]);
            ::close(r[0]);
            // Another worker's task pipe held open here would never reach end of file.
            for (std::size_t o = 0; o < w; ++o) {
                ::close(workers[o].tasks);
                ::close(workers[o].results);
            }
            worker_main(t[0], r[1], &current[w], feed, produce, finish);
        }
        ::close(t[0]);
        ::close(r[1]);
        workers[w].pid = pid;
        workers[w].tasks = t[1];
        workers[w].results = r[0];
    }

    // Chunks of up to 64 items, fewer for a small known count so that it spreads over the
    // workers. Each worker has `depth` chunks queued so it never waits for the parent, and no
    // chunk starts `window` items or more past the oldest unconsumed one, which bounds what
    // the parent holds while it restores the order.
    bool finding = feed.more();
    const std::size_t chunk = finding ? 64 : std::clamp<std::size_t>(feed.known() / (nworkers * 32), 1, 64);
    constexpr std::size_t depth = 2;
    const std::size_t window = nworkers * depth * 4 * chunk;
    std::deque<Chunk> todo;   // chunks to hand out, in order (a dead worker's leftovers first)
    std::size_t chunked = 0;  // items already in chunks
    auto find_more = [&] {
        if (finding) finding = feed.more();
        const std::size_t known = feed.known();
        while (known - chunked >= chunk || (!finding && chunked < known)) {
            todo.push_back({chunked, std::min(known, chunked + chunk)});
            chunked = todo.back().end;
        }
    };
    find_more();
    std::map<std::size_t, std::pair<std::string, bool>> held; // results ahead of `next`
    std::size_t next = 0;                                      // the next item to consume

    auto close_tasks = [](Worker &wk) {
        if (wk.tasks >= 0) ::close(wk.tasks);
        wk.tasks = -1;
    };
    auto alive = [](const Worker &wk) { return wk.results >= 0; };
    std::string task;
    auto dispatch = [&] {
        // Round robin over the workers, a chunk at a time, so the first chunks are spread.
        for (bool gave = true; gave;) {
            gave = false;
            for (auto &wk : workers) {
                if (!alive(wk) || wk.tasks < 0 || wk.queued.size() >= depth || todo.empty()) continue;
                Chunk c = todo.front();
                if (c.begin >= next + window) continue;
                std::string about = feed.describe ? feed.describe(c.begin, c.end) : std::string();
                Task t{c, about.size()};
                task.assign(reinterpret_cast<const char *>(&t), sizeof t);
                task += about;
                if (!write_all(wk.tasks, task.data(), task.size())) {
                    close_tasks(wk); // it died; its end of file is seen by the reading side
                    continue;
                }
                todo.pop_front();
                wk.queued.push_back(c);
                gave = true;
            }
        }
        // The end of the task pipes ends the workers: only once every item is found and
        // done, since a worker that dies hands its unfinished chunks back to the others.
        if (!finding && todo.empty() &&
            std::all_of(workers.begin(), workers.end(), [](const Worker &wk) { return wk.queued.empty(); }))
            for (auto &wk : workers) close_tasks(wk);
    };
    auto died = [&](Worker &wk) {
        // The item it was making is lost; its other unsent ones go back to the others
        // (results it made but had not written yet included).
        const std::uint64_t culprit = current[static_cast<std::size_t>(&wk - workers.data())];
        std::deque<Chunk> back;
        for (const Chunk &c : wk.queued) {
            if (culprit >= c.begin && culprit < c.end) {
                held.emplace(culprit, std::make_pair(std::string(), false));
                if (c.begin < culprit) back.push_back({c.begin, culprit});
                if (culprit + 1 < c.end) back.push_back({culprit + 1, c.end});
            } else {
                back.push_back(c);
            }
        }
        todo.insert(todo.begin(), back.begin(), back.end());
        wk.queued.clear();
        close_tasks(wk);
        ::close(wk.results);
        wk.results = -1;
    };
    auto take_records = [&](Worker &wk) {
        std::size_t pos = 0;
        std::uint64_t len = 0;
        while (wk.in.size() - pos >= sizeof len) {
            std::memcpy(&len, wk.in.data() + pos, sizeof len);
            if (wk.in.size() - pos - sizeof len < len) break;
            std::string rec = wk.in.substr(pos + sizeof len, len);
            pos += sizeof len + len;
            if (!wk.queued.empty()) {
                Chunk &c = wk.queued.front();
                held.emplace(c.begin, std::make_pair(std::move(rec), true));
                if (++c.begin == c.end) wk.queued.pop_front();
            } else if (!wk.final_seen) {
                wk.final_seen = true;
                if (at_end) at_end(std::move(rec));
            }
        }
        wk.in.erase(0, pos);
    };

    std::vector<pollfd> fds;
    std::vector<Worker *> polled;
    std::string buf(1 << 16, '\0');
    bool stopped = false;
    for (;;) {
        // Consume what is due, in order. With no worker left, whatever remains fails.
        const bool anyone = std::any_of(workers.begin(), workers.end(), alive);
        if (!anyone)
            while (finding) find_more();
        while (!stopped) {
            if (auto it = held.find(next); it != held.end()) {
                stopped = !consume(next, std::move(it->second.first), it->second.second);
                held.erase(it);
            } else if (!anyone && next < feed.known()) {
                stopped = !consume(next, std::string(), false);
            } else {
                break;
            }
            ++next;
        }
        if (!anyone || stopped) break;
        dispatch();
        fds.clear();
        polled.clear();
        for (auto &wk : workers)
            if (alive(wk)) {
                fds.push_back({wk.results, POLLIN, 0});
                polled.push_back(&wk);
            }
        // While items are still being found, look for results without waiting, then find more.
        int ready = ::poll(fds.data(), fds.size(), finding ? 0 : -1);
        if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        for (std::size_t k = 0; ready > 0 && k < fds.size(); ++k) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Worker &wk = *polled[k];
            ssize_t got = ::read(wk.results, buf.data(), buf.size());
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                if (wk.queued.empty() && wk.tasks < 0) { // finished
                    ::close(wk.results);
                    wk.results = -1;
                } else {
                    died(wk);
                }
                continue;
            }
            wk.in.append(buf.data(), static_cast<std::size_t>(got));
            take_records(wk);
        }
        if (finding) find_more();
    }
    for (auto &wk : workers) {
        close_tasks(wk);
        if (alive(wk)) ::close(wk.results); // when stopped: its next write fails and it exits
        reap_worker(wk.pid);
    }
    ::munmap(shared, nworkers * sizeof(std::uint64_t));
}

} // namespace mimeuri
