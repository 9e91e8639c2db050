#include "lock.hh"

#include "deadline.hh"
#include "output.hh"

#include <glib.h>
#include <lockfile.h>

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace mimeuri {

namespace {

using Clock = std::chrono::steady_clock;

bool past(Clock::time_point deadline) { return Clock::now() >= deadline; }

void pause_a_little() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

} // namespace

Result<MboxLock> MboxLock::acquire(const std::string &path, double timeout)
{
    // No symbolic link is followed (--in-place refuses one, as Postfix's safe_open): not the
    // mbox's own name, which would put the dotlock in the directory it points to, and not a
    // planted FILE.lock, which liblockfile would read and stat through.
    const auto deadline = deadline_after(timeout);
    MboxLock lock;
    lock.owner_ = ::getpid();
    const std::string dotlock = path + ".lock";
    if (struct stat st {}; ::lstat(dotlock.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        return Error{Code::CantCreate, dotlock + " is a symbolic link, not a lock file; " + path + " left as it was"};
    for (;;) {
        // retries 0: one attempt, no sleep of liblockfile's own (5 s and more); stale locks
        // (a dead pid, or older than 5 minutes) are broken by lockfile_create itself.
        int rc = lockfile_create(dotlock.c_str(), 0, L_PID);
        if (rc == L_SUCCESS) break;
        int err = errno;
        if (rc != L_MAXTRYS) {
            std::string why = rc == L_NAMELEN ? "name too long" : g_strerror(err);
            // Its pid not written (a full disk, a file-size limit): a temporary failure.
            const Code code = rc == L_TMPWRITE && write_error_code(err) == Code::TempFail ? Code::TempFail : Code::CantCreate;
            return Error{code, "cannot create the lock file " + dotlock + ": " + why + "; left as it was"};
        }
        if (past(deadline))
            return Error{Code::TempFail, path + " is locked (" + dotlock + ") by another program; gave up after " +
                                             std::to_string(static_cast<long>(timeout)) + " s (--lock-timeout), left as it was"};
        pause_a_little();
    }
    lock.dotlock_ = dotlock;
    lock.touched_ = std::time(nullptr);
    lock.signal_slot_ = remove_on_signal(dotlock);
    for (;;) {
        int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0) {
            int err = errno;
            if (err == ELOOP)
                return Error{Code::CantCreate, path + ": is a symbolic link, which --in-place does not follow; left as it was"};
            return Error{err == ENOENT ? Code::NoInput : Code::CantCreate, "cannot open " + path + ": " + g_strerror(err)};
        }
        lock.fd_ = fd;
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        for (;;) {
            if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) break;
            int err = errno;
            if (err == EINVAL && ::fcntl(fd, F_SETLK, &fl) == 0) break; // a kernel without OFD locks
            if (err != EAGAIN && err != EACCES && err != EINTR)
                return Error{Code::CantCreate, "cannot lock " + path + ": " + g_strerror(err)};
            if (past(deadline))
                return Error{Code::TempFail, path + " is locked (fcntl) by another program; gave up after " +
                                                 std::to_string(static_cast<long>(timeout)) +
                                                 " s (--lock-timeout), left as it was"};
            pause_a_little();
        }
        // Replaced while we waited (another rewriter renamed a new file in): lock that one.
        struct stat held {}, now {};
        if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino)
            return lock;
        ::close(std::exchange(lock.fd_, -1));
    }
}

MboxLock::MboxLock(MboxLock &&o) noexcept
    : dotlock_(std::move(o.dotlock_)), fd_(std::exchange(o.fd_, -1)), owner_(o.owner_), touched_(o.touched_),
      signal_slot_(std::exchange(o.signal_slot_, -1))
{
    o.dotlock_.clear();
}

MboxLock::~MboxLock()
{
    if (owner_ != ::getpid()) return; // a forked worker's copy: the parent holds the locks
    if (fd_ >= 0) ::close(fd_);
    if (!dotlock_.empty()) {
        TerminationHeld held; // removed once, by the handler or here
        (void)lockfile_remove(dotlock_.c_str());
        forget_on_signal(signal_slot_);
    }
}

void MboxLock::keep_alive()
{
    std::time_t now = std::time(nullptr);
    if (dotlock_.empty() || now - touched_ < 60) return;
    touched_ = now;
    (void)lockfile_touch(dotlock_.c_str());
}

} // namespace mimeuri
