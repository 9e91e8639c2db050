// Output sinks: a file descriptor (stdout), or a file written atomically (temporary file
// in the same directory, fsync, rename) so a failure never leaves a truncated file behind.
#pragma once

#include "message.hh"
#include "result.hh"
#include "source.hh"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

class Sink {
public:
    // Writes to fd (not closed). Nothing is buffered beyond one write call.
    static Sink to_fd(int fd, std::string name);
    // Creates a temporary file beside path; commit() renames it over path. If
    // mode_from is given, the new file takes that file's permissions.
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
};

// Writes src[begin, end) with the edits applied (each edit's range replaced by its text).
// Edits must lie inside [begin, end); they may come in any order but must not overlap.
Status write_spliced(Sink &out, const Source &src, std::int64_t begin, std::int64_t end, std::vector<const Edit *> edits);

// SIGTERM, SIGINT and SIGHUP remove every temporary file not yet committed and exit 75
// (EX_TEMPFAIL): the targets are left as they were, and an MTA retries later.
void install_signal_cleanup();
// In a forked worker: back to the default actions (the parent owns the temporary files).
void reset_signal_cleanup();

// Maps a write errno to the exit code: a full disk or quota is temporary (75), others 74.
Code write_error_code(int err);

} // namespace mimeuri
