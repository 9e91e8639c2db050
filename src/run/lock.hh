// The locks mail delivery agents take on an mbox, taken by --in-place around its rewrite.
#pragma once

#include "result.hh"

#include <ctime>
#include <string>
#include <sys/types.h>

namespace mimeuri {

// FILE.lock (liblockfile's lockfile_create, the NFS-safe dotlock procmail, Postfix local
// and Dovecot take on Debian) and then an fcntl write lock on FILE (an open file
// description lock, which conflicts with their F_SETLK locks and is not dropped when some
// other descriptor of the file is closed), in that order, as they take them.
class MboxLock {
public:
    // Waits up to timeout seconds for both; then TempFail (75). Other failures (no write
    // permission in the folder) are CantCreate.
    static Result<MboxLock> acquire(const std::string &path, double timeout);

    MboxLock(MboxLock &&) noexcept;
    MboxLock(const MboxLock &) = delete;
    MboxLock &operator=(const MboxLock &) = delete;
    MboxLock &operator=(MboxLock &&) = delete;
    ~MboxLock(); // the fcntl lock, then the dotlock; only in the process that took them

    // Touches the dotlock at most once a minute: procmail breaks a dotlock older than
    // 17 minutes, liblockfile one older than 5 when its process cannot be checked.
    void keep_alive();

private:
    MboxLock() = default;
    std::string dotlock_;
    int fd_{-1};
    pid_t owner_{0};
    std::time_t touched_{0};
    int signal_slot_{-1}; // a terminating signal removes the dotlock too
};

} // namespace mimeuri
