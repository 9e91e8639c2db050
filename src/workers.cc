#include "workers.hh"

#include "output.hh"

#include <cerrno>
#include <fcntl.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace mimeuri {

namespace {

bool write_all(int fd, const void *data, std::size_t len)
{
    auto *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

bool read_all(int fd, void *data, std::size_t len)
{
    auto *p = static_cast<char *>(data);
    while (len > 0) {
        ssize_t n = ::read(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

bool send(int fd, const std::string &s)
{
    std::uint64_t len = s.size();
    return write_all(fd, &len, sizeof len) && write_all(fd, s.data(), s.size());
}

bool receive(int fd, std::string &s)
{
    std::uint64_t len = 0;
    if (!read_all(fd, &len, sizeof len)) return false;
    s.resize(len);
    return read_all(fd, s.data(), len);
}

} // namespace

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

void run_forked(int jobs, std::size_t n, const std::function<std::string(std::size_t)> &produce,
                const std::function<void(std::size_t, std::string &&, bool)> &consume,
                const std::function<std::string()> &finish, const std::function<void(std::string &&)> &at_end)
{
    std::fflush(nullptr); // nothing buffered may be written twice
    struct Worker {
        pid_t pid{-1};
        int fd{-1};
        bool alive{true};
    };
    std::vector<Worker> workers(static_cast<std::size_t>(jobs));
    for (int w = 0; w < jobs; ++w) {
        int p[2];
        if (::pipe(p) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        // Results are read in message order: a larger pipe lets a worker run ahead while the
        // other finishes a big message (best effort; the default is 64 KiB).
        (void)::fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
        pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0) {
            reset_signal_cleanup(); // the parent's temporary files are the parent's
            ::close(p[0]);
            for (int o = 0; o < w; ++o) ::close(workers[static_cast<std::size_t>(o)].fd);
            bool ok = true;
            for (std::size_t i = static_cast<std::size_t>(w); i < n && ok; i += static_cast<std::size_t>(jobs))
                ok = send(p[1], produce(i));
            if (ok && finish) ok = send(p[1], finish());
            ::_exit(ok ? 0 : 1); // no destructors: the parent owns every output
        }
        ::close(p[1]);
        workers[static_cast<std::size_t>(w)] = {pid, p[0], true};
    }
    std::string bytes;
    for (std::size_t i = 0; i < n; ++i) {
        Worker &wk = workers[i % static_cast<std::size_t>(jobs)];
        bool ok = wk.alive && receive(wk.fd, bytes);
        if (!ok) wk.alive = false;
        consume(i, std::move(bytes), ok);
        bytes.clear();
    }
    for (auto &wk : workers) {
        if (finish && wk.alive && receive(wk.fd, bytes) && at_end) at_end(std::move(bytes));
        ::close(wk.fd);
        int status = 0;
        while (::waitpid(wk.pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

} // namespace mimeuri
