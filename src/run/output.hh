// Output sinks: a file descriptor (stdout), or a file written atomically (temporary file
// in the same directory, fsync, rename) so a failure never leaves a truncated file behind.
#pragma once

#include "message.hh"
#include "result.hh"
#include "source.hh"

#include <csignal>
#include <cstdint>
#include <sys/stat.h>
#include <sys/types.h>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

class Sink {
public:
    // Writes to fd (not closed). Nothing is buffered beyond one write call.
    static Sink to_fd(int fd, std::string name);
    // Creates a temporary file beside path; commit() renames it over path. If
    // mode_from is given, the new file takes that file's permissions, and the file counts
    // as rewritten in place (the line a terminating signal prints counts those renamed).
    // tmp_dir: where the temporary file goes (a Maildir's tmp/); default beside path.
    static Result<Sink> atomic(const std::string &path, const std::string &mode_from = {},
                               const std::string &tmp_dir = {});
    // For -o and --report: atomic for a regular (or new) file; an existing device, FIFO
    // or socket (/dev/stdout, /dev/null, a named pipe) is opened and written directly,
    // never replaced.
    static Result<Sink> to_path(const std::string &path);

    Sink(Sink &&) noexcept;
    Sink(const Sink &) = delete;
    Sink &operator=(const Sink &) = delete;
    Sink &operator=(Sink &&) = delete;
    ~Sink(); // discards an uncommitted temporary file

    Status write(std::string_view bytes);
    // Copies [begin, end) of src as read.
    Status copy(const Source &src, std::int64_t begin, std::int64_t end);
    // Atomic sinks: fsync and rename into place. fd sinks: nothing to do.
    Status commit();
    // --in-place: replaces `current`, which must still be the file that was read (`read`:
    // same inode, size and modification time), with the new bytes, under `final_name`
    // (current's own name, or a Maildir name with new S=/W= fields). Where the file system
    // can, the two are exchanged atomically (renameat2 RENAME_EXCHANGE) and the old one is
    // checked after the exchange, so that no append or rename landing at the last moment is
    // lost: a changed file is swapped back (TempFail). NoInput: current is gone (renamed
    // away); nothing was replaced, the temporary file is kept for another try.
    Status commit_replacing(const struct stat &read, const std::string &current, const std::string &final_name);
    const std::string &temp_path() const { return tmp_path_; }
    // Atomic sinks: remove the temporary file; the target is left as it was.
    void discard();

    const std::string &name() const { return name_; }

private:
    Sink() = default;
    int fd_{-1};
    bool owned_{false};
    std::string name_;     // the target path, or a label such as "standard output"
    std::string tmp_path_; // for atomic sinks
    bool committed_{false};
    int pending_slot_{-1}; // in the signal handler's list of files to remove
    bool in_place_{false}; // made with mode_from: a file rewritten in place, counted
    bool synced_{false}; // commit_replacing: fsynced and closed, ready to be renamed
};

// /dev/stdout, /dev/fd/N, /proc/self/fd/N, a device: names the system gives (links among
// them), which -o, --report and --changed-list open as they are, never replace.
bool system_name(const std::string &path);

// Writes src[begin, end) with the edits applied (each edit's range replaced by its text).
// Edits must lie inside [begin, end); they may come in any order but must not overlap.
Status write_spliced(Sink &out, const Source &src, std::int64_t begin, std::int64_t end, std::vector<const Edit *> edits);

// SIGTERM, SIGINT and SIGHUP stop the workers (and wait for them), remove every temporary
// file not yet committed, print one line saying what was done and exit 75 (EX_TEMPFAIL):
// the targets not yet replaced are left as they were, and an MTA retries later.
void install_signal_cleanup();
// In a forked worker: the parent's temporary files and workers are the parent's; a
// terminating signal removes the worker's own temporary files and ends it (_exit) at once.
void reset_signal_cleanup();
// With --in-place, the line a terminating signal prints counts the files rewritten (by
// every process of the run) instead of saying no file was replaced.
void signal_reports_in_place(bool in_place);
// A worker's pid, for the handler to stop and wait for; reap_worker() waits for its end and
// forgets it (never leaving a reaped, reusable pid in the list).
void register_worker(pid_t pid);
void reap_worker(pid_t pid);

// A file a terminating signal removes too (an mbox's dotlock): a slot to give back to
// forget_on_signal() once the file is removed in the ordinary way.
int remove_on_signal(const std::string &path);
void forget_on_signal(int slot);

// Holds SIGTERM, SIGINT and SIGHUP back while it lives (around a rename, a fork).
class TerminationHeld {
public:
    TerminationHeld();
    ~TerminationHeld();
    TerminationHeld(const TerminationHeld &) = delete;
    TerminationHeld &operator=(const TerminationHeld &) = delete;

private:
    sigset_t old_;
};

// Maps a write errno to the exit code: a full disk, a quota or a file-size limit is
// temporary (75), others 74.
Code write_error_code(int err);

} // namespace mimeuri
