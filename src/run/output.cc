#include "output.hh"

#include "fdio.hh"
#include "streamed_body.hh"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <new>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mimeuri {

namespace {

// What a terminating signal's handler reads. Writers fill an entry, then publish it with a
// store to its volatile sig_atomic_t flag after a signal fence, so that the handler never
// sees a flag before what it guards.
constexpr int max_pending = 64;
char pending_paths[max_pending][4096]; // temporary files not yet committed
volatile sig_atomic_t pending_used[max_pending];
constexpr int max_workers = 256;
volatile sig_atomic_t worker_pids[max_workers]; // 0: a free slot
volatile sig_atomic_t in_worker = 0;             // this process is a forked worker
volatile sig_atomic_t in_place_run = 0;          // the final line counts files rewritten
// Files renamed into place by --in-place, by this process and its workers: a shared page,
// mapped before any fork. A lock-free atomic may be read in a signal handler.
std::atomic<unsigned long> *files_rewritten = nullptr;
static_assert(std::atomic<unsigned long>::is_always_lock_free);

const int terminating_signals[] = {SIGTERM, SIGINT, SIGHUP};

int register_pending(const std::string &path)
{
    if (path.size() >= sizeof pending_paths[0]) return -1;
    for (int i = 0; i < max_pending; ++i)
        if (!pending_used[i]) {
            std::memcpy(pending_paths[i], path.c_str(), path.size() + 1);
            std::atomic_signal_fence(std::memory_order_release);
            pending_used[i] = 1;
            return i;
        }
    return -1;
}

void unregister_pending(int slot)
{
    if (slot >= 0) pending_used[slot] = 0;
}

// Async-signal-safe: writes "text" and a decimal number to stderr.
void say(const char *text, unsigned long n = 0, bool number = false)
{
    char buf[24];
    std::size_t len = 0;
    if (number) {
        char digits[24];
        std::size_t k = 0;
        do digits[k++] = static_cast<char>('0' + n % 10);
        while ((n /= 10) != 0);
        while (k > 0) buf[len++] = digits[--k];
    }
    (void)write_all(2, text, std::strlen(text));
    (void)write_all(2, buf, len);
}

// Only async-signal-safe calls (kill, waitpid, unlink, write, _exit). A worker removes its
// own temporary file and ends at once, before any rename it has not begun (Sink::commit
// holds the signals back while it renames). The parent first stops its workers and waits
// for them, so that the count it prints is final, then removes its own temporary files.
extern "C" void on_terminate(int sig)
{
    if (!in_worker) {
        for (int i = 0; i < max_workers; ++i)
            if (pid_t pid = worker_pids[i]; pid > 0) ::kill(pid, SIGTERM);
        for (int i = 0; i < max_workers; ++i)
            if (pid_t pid = worker_pids[i]; pid > 0)
                while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
                }
    }
    for (int i = 0; i < max_pending; ++i)
        if (pending_used[i]) {
            std::atomic_signal_fence(std::memory_order_acquire);
            ::unlink(pending_paths[i]);
        }
    if (in_worker) ::_exit(128 + sig); // the parent reports
    if (in_place_run) {
        unsigned long n = files_rewritten ? files_rewritten->load() : 0;
        say("mimeuri: terminated by a signal: ", n, true);
        say(n == 1 ? " file rewritten, the rest left as they were\n" : " files rewritten, the rest left as they were\n");
    } else {
        say("mimeuri: terminated by a signal; nothing was written in place of any file\n");
    }
    ::_exit(75);
}

} // namespace

void install_signal_cleanup()
{
    if (!files_rewritten) {
        void *page = ::mmap(nullptr, sizeof *files_rewritten, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page != MAP_FAILED) files_rewritten = new (page) std::atomic<unsigned long>(0);
    }
    struct sigaction sa {};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    for (int sig : terminating_signals) sigaddset(&sa.sa_mask, sig); // one handler at a time
    for (int sig : terminating_signals) ::sigaction(sig, &sa, nullptr);
}

void reset_signal_cleanup()
{
    for (int i = 0; i < max_pending; ++i) pending_used[i] = 0;
    for (int i = 0; i < max_workers; ++i) worker_pids[i] = 0;
    in_worker = 1;
}

int remove_on_signal(const std::string &path) { return register_pending(path); }

void forget_on_signal(int slot) { unregister_pending(slot); }

void signal_reports_in_place(bool in_place) { in_place_run = in_place; }

void register_worker(pid_t pid)
{
    for (int i = 0; i < max_workers; ++i)
        if (worker_pids[i] == 0) {
            worker_pids[i] = pid;
            return;
        }
}

void reap_worker(pid_t pid)
{
    // Waited for without reaping it, so that the handler never signals a pid already reused.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    TerminationHeld held;
    for (int i = 0; i < max_workers; ++i)
        if (worker_pids[i] == pid) worker_pids[i] = 0;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

TerminationHeld::TerminationHeld()
{
    sigset_t set;
    sigemptyset(&set);
    for (int sig : terminating_signals) sigaddset(&set, sig);
    ::sigprocmask(SIG_BLOCK, &set, &old_);
}

TerminationHeld::~TerminationHeld() { ::sigprocmask(SIG_SETMASK, &old_, nullptr); }

Code write_error_code(int err)
{
    // EFBIG: past a file-size limit (ulimit -f), which a later try under another may not be.
    return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EAGAIN || err == ENOMEM ? Code::TempFail
                                                                                            : Code::IoErr;
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
    // -o: a symbolic link stays a link, its target is what gets replaced. A file rewritten
    // in place is no link (checked by the caller, and again when it is replaced): only its
    // folder is resolved, never its own name.
    std::string path = path_in;
    if (mode_from.empty()) {
        if (GCharPtr real{::realpath(path_in.c_str(), nullptr)}; real) path = real.get();
    } else {
        GCharPtr dir(g_path_get_dirname(path_in.c_str())), base(g_path_get_basename(path_in.c_str()));
        if (GCharPtr real{::realpath(dir.get(), nullptr)}; real) path = std::string(real.get()) + "/" + base.get();
    }
    GCharPtr dir(g_path_get_dirname(path.c_str()));
    GCharPtr base(g_path_get_basename(path.c_str()));
    std::string tmpl = (tmp_dir.empty() ? std::string(dir.get()) : tmp_dir) + "/." + base.get() + ".mimeuri-XXXXXX";
    // A terminating signal waits until the new file is in the handler's list of files to remove.
    // The file is born 0600 (whatever the umask), then given the final owner and mode before
    // any byte is written: in a spool others can search, nobody else ever reads it early.
    TerminationHeld held;
    int fd = g_mkstemp_full(tmpl.data(), O_WRONLY | O_CLOEXEC, 0600);
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
    s.in_place_ = !mode_from.empty();
    struct stat st {};
    const std::string &ref = mode_from.empty() ? path : mode_from;
    if (::stat(ref.c_str(), &st) == 0) {
        // Owner and group first (fchown clears set-id bits), then the mode. A file rewritten
        // in place whose owner or group cannot be kept is left alone: its owner could lose
        // access to their own mail. For -o, ownership is kept where possible.
        if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
            int rc = ::fchown(fd, st.st_uid, st.st_gid);
            if (rc != 0 && st.st_uid == ::geteuid()) rc = ::fchown(fd, static_cast<uid_t>(-1), st.st_gid);
            if (rc != 0 && s.in_place_) {
                int err = errno;
                return Error{Code::CantCreate, "cannot keep the owner " + std::to_string(st.st_uid) + ":" +
                                                   std::to_string(st.st_gid) + " of " + ref + " (" + g_strerror(err) +
                                                   "); left as it was"};
            }
        }
        if (::fchmod(fd, st.st_mode & 07777) != 0 && s.in_place_) {
            int err = errno;
            return Error{Code::CantCreate, "cannot keep the mode of " + ref + " (" + g_strerror(err) + "); left as it was"};
        }
    } else {
        mode_t mask = ::umask(0);
        ::umask(mask);
        (void)::fchmod(fd, 0666 & ~mask);
    }
    return s;
}

bool system_name(const std::string &path) { return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0; }

Result<Sink> Sink::to_path(const std::string &path)
{
    // /dev/stdout, /dev/fd/N, /proc/self/fd/N and devices or FIFOs are written directly
    // (appending, so a shared file descriptor's earlier output is kept), never replaced.
    bool special = system_name(path);
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
      tmp_path_(std::move(o.tmp_path_)), committed_(o.committed_), pending_slot_(std::exchange(o.pending_slot_, -1)),
      in_place_(o.in_place_), synced_(std::exchange(o.synced_, false))
{
}

Sink::~Sink() { discard(); }

void Sink::discard()
{
    if (owned_ && (fd_ >= 0 || synced_)) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
        synced_ = false;
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
    {
        // A terminating signal waits for the rename, so that the count it reports is exact.
        TerminationHeld held;
        if (::rename(tmp_path_.c_str(), name_.c_str()) != 0) {
            int err = errno;
            ::unlink(tmp_path_.c_str());
            return Error{Code::CantCreate, "cannot rename into " + name_ + ": " + g_strerror(err)};
        }
        committed_ = true;
        unregister_pending(std::exchange(pending_slot_, -1));
        if (in_place_ && files_rewritten) files_rewritten->fetch_add(1);
    }
    // Make the rename itself durable.
    GCharPtr dir(g_path_get_dirname(name_.c_str()));
    int dfd = ::open(dir.get(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return ok();
}

namespace {

bool same_file(const struct stat &a, const struct stat &b)
{
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

} // namespace

Status Sink::commit_replacing(const struct stat &read, const std::string &current, const std::string &final_name)
{
    if (!owned_ || tmp_path_.empty() || committed_) return Error{Code::Software, "not a file being rewritten"};
    if (!synced_) {
        if (::fsync(fd_) != 0 || ::close(std::exchange(fd_, -1)) != 0) {
            int err = errno;
            if (fd_ >= 0) ::close(std::exchange(fd_, -1));
            ::unlink(tmp_path_.c_str());
            committed_ = true; // nothing left to remove
            return Error{write_error_code(err), "cannot write " + name_ + ": " + g_strerror(err)};
        }
        synced_ = true;
    }
    const std::string changed = current + " was changed by another program while being rewritten (a writer that "
                                          "does not take the locks?); left as it was";
    TerminationHeld held; // the count a terminating signal reports stays exact
    auto done = [&]() {
        ::unlink(tmp_path_.c_str());
        committed_ = true;
        unregister_pending(std::exchange(pending_slot_, -1));
        if (in_place_ && files_rewritten) files_rewritten->fetch_add(1);
    };
    if (::renameat2(AT_FDCWD, tmp_path_.c_str(), AT_FDCWD, current.c_str(), RENAME_EXCHANGE) == 0) {
        // tmp_path_ now names the file that was there: it must be the one that was read.
        struct stat old {};
        if (::lstat(tmp_path_.c_str(), &old) != 0 || !same_file(old, read)) {
            if (::renameat2(AT_FDCWD, tmp_path_.c_str(), AT_FDCWD, current.c_str(), RENAME_EXCHANGE) != 0) {
                // Never lose it: the other program's file stays where it is now, named.
                int err = errno;
                committed_ = true;
                unregister_pending(std::exchange(pending_slot_, -1));
                return Error{Code::TempFail, current + " was changed while being rewritten and could not be put back (" +
                                                 g_strerror(err) + "): its bytes are in " + tmp_path_};
            }
            ::unlink(tmp_path_.c_str());
            committed_ = true;
            return Error{Code::TempFail, changed};
        }
        if (final_name != current && ::rename(current.c_str(), final_name.c_str()) != 0) {
            int err = errno;
            g_warning("%s: rewritten, but not renamed to %s: %s", current.c_str(), final_name.c_str(), g_strerror(err));
        }
        done();
    } else if (int err = errno; err == ENOENT) {
        return Error{Code::NoInput, current + " is gone (renamed or removed) while being rewritten"};
    } else if (err != EINVAL && err != ENOSYS && err != EOPNOTSUPP) {
        ::unlink(tmp_path_.c_str());
        committed_ = true;
        return Error{Code::CantCreate, "cannot rename into " + current + ": " + g_strerror(err)};
    } else {
        // No exchange on this file system (NFS, some FUSE): checked, then renamed; a
        // change in between is possible, which the locks rule out for cooperating writers.
        struct stat now {};
        if (::lstat(current.c_str(), &now) != 0) {
            int e = errno;
            if (e == ENOENT) return Error{Code::NoInput, current + " is gone (renamed or removed) while being rewritten"};
            ::unlink(tmp_path_.c_str());
            committed_ = true;
            return Error{Code::CantCreate, "cannot stat " + current + ": " + g_strerror(e)};
        }
        if (!same_file(now, read)) {
            ::unlink(tmp_path_.c_str());
            committed_ = true;
            return Error{Code::TempFail, changed};
        }
        if (::rename(tmp_path_.c_str(), final_name.c_str()) != 0) {
            int e = errno;
            ::unlink(tmp_path_.c_str());
            committed_ = true;
            return Error{Code::CantCreate, "cannot rename into " + final_name + ": " + g_strerror(e)};
        }
        if (final_name != current) ::unlink(current.c_str());
        committed_ = true;
        unregister_pending(std::exchange(pending_slot_, -1));
        if (in_place_ && files_rewritten) files_rewritten->fetch_add(1);
    }
    fsync_dir_of(final_name);
    fsync_dir_of(tmp_path_);
    return ok();
}

Status write_spliced(Sink &out, const Source &src, std::int64_t begin, std::int64_t end, std::vector<const Edit *> edits)
{
    std::stable_sort(edits.begin(), edits.end(), [](const Edit *a, const Edit *b) { return a->begin < b->begin; });
    std::int64_t pos = begin;
    const SpanReader read = reader_of(src);
    const ByteSink write = [&out](std::string_view v) { return out.write(v); };
    for (const Edit *e : edits) {
        if (e->begin < pos || e->end > end) return Error{Code::Software, "overlapping or misplaced edits"};
        if (auto s = out.copy(src, pos, e->begin); !s) return s;
        if (auto s = write_edit(*e, read, write); !s) return s;
        pos = e->end;
    }
    return out.copy(src, pos, end);
}

} // namespace mimeuri
