#include "output.hh"

#include "fdio.hh"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

// Temporary files not yet committed, readable from a signal handler.
constexpr int max_pending = 64;
char pending_paths[max_pending][4096];
volatile sig_atomic_t pending_used[max_pending];

int register_pending(const std::string &path)
{
    if (path.size() >= sizeof pending_paths[0]) return -1;
    for (int i = 0; i < max_pending; ++i)
        if (!pending_used[i]) {
            std::memcpy(pending_paths[i], path.c_str(), path.size() + 1);
            pending_used[i] = 1;
            return i;
        }
    return -1;
}

void unregister_pending(int slot)
{
    if (slot >= 0) pending_used[slot] = 0;
}

extern "C" void on_terminate(int)
{
    for (int i = 0; i < max_pending; ++i)
        if (pending_used[i]) ::unlink(pending_paths[i]);
    static const char msg[] = "mimeuri: terminated by a signal; nothing was written in place of any file\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(75);
}

} // namespace

void install_signal_cleanup()
{
    struct sigaction sa {};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void reset_signal_cleanup()
{
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    for (int i = 0; i < max_pending; ++i) pending_used[i] = 0;
}

Code write_error_code(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EAGAIN || err == ENOMEM ? Code::TempFail : Code::IoErr;
}

Sink Sink::to_fd(int fd, std::string name)
{
    Sink s;
    s.fd_ = fd;
    s.name_ = std::move(name);
    return s;
}

Result<Sink> Sink::atomic(const std::string &path_in, const std::string &mode_from, const std::string &tmp_dir)
{
    // A symbolic link stays a link: its target is what gets replaced.
    std::string path = path_in;
    if (GCharPtr real{::realpath(path_in.c_str(), nullptr)}; real) path = real.get();
    GCharPtr dir(g_path_get_dirname(path.c_str()));
    GCharPtr base(g_path_get_basename(path.c_str()));
    std::string tmpl = (tmp_dir.empty() ? std::string(dir.get()) : tmp_dir) + "/." + base.get() + ".mimeuri-XXXXXX";
    int fd = g_mkstemp_full(tmpl.data(), O_WRONLY | O_CLOEXEC, 0666 & ~0022);
    if (fd < 0) {
        int err = errno;
        return Error{err == ENOSPC || err == EDQUOT ? Code::TempFail : Code::CantCreate,
                     "cannot create a file beside " + path + ": " + g_strerror(err)};
    }
    Sink s;
    s.fd_ = fd;
    s.owned_ = true;
    s.name_ = path;
    s.tmp_path_ = tmpl;
    s.pending_slot_ = register_pending(tmpl);
    struct stat st {};
    const std::string &ref = mode_from.empty() ? path : mode_from;
    if (::stat(ref.c_str(), &st) == 0) {
        (void)::fchmod(fd, st.st_mode & 07777);
    } else {
        mode_t mask = ::umask(0);
        ::umask(mask);
        (void)::fchmod(fd, 0666 & ~mask);
    }
    return s;
}

Result<Sink> Sink::to_path(const std::string &path)
{
    // /dev/stdout, /dev/fd/N, /proc/self/fd/N and devices or FIFOs are written directly
    // (appending, so a shared file descriptor's earlier output is kept), never replaced.
    bool special = path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0;
    struct stat st {};
    bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return Error{Code::CantCreate, "cannot write " + path + ": is a directory"};
    if (!special && (!exists || S_ISREG(st.st_mode))) return atomic(path);
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        return Error{Code::CantCreate, "cannot open " + path + ": " + g_strerror(err)};
    }
    Sink s;
    s.fd_ = fd;
    s.owned_ = true; // closed on commit or discard; there is no temporary file
    s.name_ = path;
    return s;
}

Sink::Sink(Sink &&o) noexcept
    : fd_(std::exchange(o.fd_, -1)), owned_(std::exchange(o.owned_, false)), name_(std::move(o.name_)),
      tmp_path_(std::move(o.tmp_path_)), committed_(o.committed_), pending_slot_(std::exchange(o.pending_slot_, -1))
{
}

Sink::~Sink() { discard(); }

void Sink::discard()
{
    if (owned_ && fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
        if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
    }
    unregister_pending(std::exchange(pending_slot_, -1));
}

Status Sink::write(std::string_view bytes)
{
    if (!write_all(fd_, bytes.data(), bytes.size())) {
        int err = errno;
        return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
    }
    return ok();
}

Status Sink::copy(const Source &src, std::int64_t begin, std::int64_t end)
{
    if (begin >= end) return ok();
    if (const char *mem = src.memory()) // in memory: written from where it is
        return write(std::string_view(mem + begin, static_cast<std::size_t>(end - begin)));
    // A file: the kernel copies (sendfile); where it cannot, read and write.
    while (begin < end) {
        off_t off = begin;
        ssize_t n = ::sendfile(fd_, src.fd(), &off, static_cast<std::size_t>(std::min<std::int64_t>(end - begin, 1 << 30)));
        if (n > 0) {
            begin += n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EINVAL && errno != ENOSYS) {
            int err = errno;
            return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
        }
        break; // not supported here, or the file shrank: the plain way decides
    }
    constexpr std::size_t chunk = 256 * 1024;
    static thread_local std::unique_ptr<char[]> buf(new char[chunk]);
    while (begin < end) {
        std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(end - begin, chunk));
        auto n = src.read_at(begin, buf.get(), want);
        if (!n) return n.error();
        if (*n != want) return Error{Code::TempFail, src.name() + " changed while being read"};
        if (auto s = write(std::string_view(buf.get(), want)); !s) return s;
        begin += static_cast<std::int64_t>(want);
    }
    return ok();
}

Status Sink::commit()
{
    if (!owned_) return ok();
    if (tmp_path_.empty()) { // a device or FIFO written directly
        int rc = ::close(fd_);
        int err = errno;
        fd_ = -1;
        committed_ = true;
        if (rc != 0) return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
        return ok();
    }
    if (::fsync(fd_) != 0) {
        int err = errno;
        return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
    }
    if (::close(fd_) != 0) {
        int err = errno;
        fd_ = -1;
        ::unlink(tmp_path_.c_str());
        return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
    }
    fd_ = -1;
    if (::rename(tmp_path_.c_str(), name_.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp_path_.c_str());
        return Error{Code::CantCreate, "cannot rename into " + name_ + ": " + g_strerror(err)};
    }
    committed_ = true;
    unregister_pending(std::exchange(pending_slot_, -1));
    // Make the rename itself durable.
    GCharPtr dir(g_path_get_dirname(name_.c_str()));
    int dfd = ::open(dir.get(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return ok();
}

Status write_spliced(Sink &out, const Source &src, std::int64_t begin, std::int64_t end, std::vector<const Edit *> edits)
{
    std::stable_sort(edits.begin(), edits.end(), [](const Edit *a, const Edit *b) { return a->begin < b->begin; });
    std::int64_t pos = begin;
    for (const Edit *e : edits) {
        if (e->begin < pos || e->end > end) return Error{Code::Software, "overlapping or misplaced edits"};
        if (auto s = out.copy(src, pos, e->begin); !s) return s;
        if (auto s = out.write(e->text); !s) return s;
        pos = e->end;
    }
    return out.copy(src, pos, end);
}

} // namespace mimeuri
