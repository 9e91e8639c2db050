// --in-place: a file rewritten through a temporary file and renamed over the one read, after
// the checks that keep mail where it lives safe (hard links, read-only files, a Maildir file
// an IMAP server renamed meanwhile); and --jobs over many files, a file per worker.
#include "maildir.hh"
#include "run_state.hh"
#include "wire.hh"
#include "workers.hh"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

// A file that cannot be rewritten safely is left as it was, which is what --on-error=pass
// asks for; tempfail makes the run end in 75.
void refuse(RunState &rs, const std::string &input, const std::string &why)
{
    g_warning("%s: %s; left as it was", input.c_str(), why.c_str());
    ++rs.st.failed;
    if (rs.opts.on_error == OnError::TempFail) rs.outcome.worsen(Code::TempFail);
}

// Postfix's safe_open: a second name would keep the old bytes (or, for a mailbox, get the
// next deliveries while this name holds the rewrite). The reason to refuse, or "".
std::string unsafe(const RunState &rs, const struct stat &read)
{
    if (read.st_nlink > 1)
        return "has " + std::to_string(read.st_nlink) + " hard links, and a rewrite would split them";
    if (!(read.st_mode & S_IWUSR) && !rs.opts.force_read_only)
        return "is read-only (mode " + std::to_string((read.st_mode >> 6) & 7) + std::to_string((read.st_mode >> 3) & 7) +
               std::to_string(read.st_mode & 7) + "); --force-read-only rewrites it";
    return {};
}

// A Maildir file: its S= and W= made right; if an IMAP server renamed it meanwhile (flags,
// new/ -> cur/), it is found again by inode and unique part. Returns where it landed.
Result<std::string> commit_maildir(RunState &rs, Sink &sink, const std::string &input, const struct stat &read)
{
    auto sizes = maildir::sizes_of(sink.temp_path());
    if (!sizes) return sizes.error();
    std::string current = sink.name();
    for (int attempt = 0;; ++attempt) {
        if (struct stat now {}; ::lstat(current.c_str(), &now) != 0 || now.st_ino != read.st_ino || now.st_dev != read.st_dev)
            current = maildir::locate(sink.name(), read.st_dev, read.st_ino);
        if (current.empty()) {
            refuse(rs, input, "was renamed or removed while being rewritten, and no file in cur/ or new/ has its unique "
                              "name and inode any more");
            return std::string();
        }
        std::string landed = maildir::with_sizes(current, sizes->size, sizes->vsize);
        Status s = sink.commit_replacing(read, current, landed);
        if (s) return landed;
        if (s.error().code != Code::NoInput || attempt == 2) return s.error();
        current.clear(); // renamed between the look and the exchange: look again
    }
}

void note_changed(RunState &rs, const std::string &landed)
{
    if (rs.changed_list_fd < 0) return;
    std::string line = landed + "\n";
    if (::write(rs.changed_list_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        g_warning("%s: cannot write to %s: %s", landed.c_str(), rs.opts.changed_list.c_str(), g_strerror(errno));
}

// A symbolic link is refused, not followed: as root, a link a user plants in their own
// folder would redirect the rewrite, its temporary file and the mbox's dotlock into any
// directory, and replace a file the user could not write. EX_CANTCREAT, as for a file that
// is not regular: the name cannot be written safely, whatever --on-error says. st: what
// lstat(2) said of input.
// what: what refuses it, and what to do instead.
Status refuse_link(const std::string &input, const struct stat &st,
                   const char *what = "--in-place does not follow (rewrite the file it names by that name); left as it was")
{
    if (S_ISLNK(st.st_mode)) return Error{Code::CantCreate, input + ": is a symbolic link, which " + what};
    return ok();
}

} // namespace

Status not_a_link(const std::string &input)
{
    struct stat st {};
    return ::lstat(input.c_str(), &st) == 0 ? refuse_link(input, st) : ok();
}

Status opened_as_named(const std::string &input, int fd)
{
    struct stat named {}, opened {};
    const bool found = ::lstat(input.c_str(), &named) == 0;
    if (found)
        if (Status s = refuse_link(input, named); !s) return s;
    if (!found || ::fstat(fd, &opened) != 0 || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino)
        return Error{Code::CantCreate, input + ": was replaced while being opened; left as it was"};
    return ok();
}

Result<int> open_changed_list(const std::string &path)
{
    const std::string cannot = "cannot write " + path + " (--changed-list): ";
    if (system_name(path)) { // /dev/stdout: written as -o and --report write it
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0) return Error{Code::CantCreate, cannot + g_strerror(errno)};
        return fd;
    }
    // As an input rewritten in place: no link followed, the file opened the one the name
    // holds, no second hard link (a list truncated as root must not be a user's link to
    // another file); truncated only once all that holds.
    const char *what = "--changed-list does not follow (give the list's own path); nothing written";
    struct stat named {};
    if (::lstat(path.c_str(), &named) == 0)
        if (Status s = refuse_link(path, named, what); !s) return s.error();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0666);
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP) return Error{Code::CantCreate, path + ": is a symbolic link, which " + what};
        return Error{Code::CantCreate, cannot + g_strerror(err)};
    }
    struct stat opened {};
    Status s = opened_as_named(path, fd);
    if (s && ::fstat(fd, &opened) != 0) s = Error{Code::CantCreate, cannot + g_strerror(errno)};
    if (s && S_ISREG(opened.st_mode) && opened.st_nlink != 1)
        s = Error{Code::CantCreate, path + ": has " + std::to_string(opened.st_nlink) +
                                        " hard links; --changed-list writes only a file of its own; nothing written"};
    if (s && S_ISREG(opened.st_mode) && ::ftruncate(fd, 0) != 0) s = Error{Code::CantCreate, cannot + g_strerror(errno)};
    if (!s) {
        ::close(fd);
        return s.error();
    }
    return fd;
}

void commit_in_place(RunState &rs, const std::string &input, const Source &src, const struct stat &read,
                     const std::vector<const Edit *> &edits)
{
    struct stat sb {};
    if (::lstat(input.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        g_warning("%s: --in-place rewrites regular files only; left as it was", input.c_str());
        return rs.outcome.worsen(Code::CantCreate);
    }
    if (std::string why = unsafe(rs, read); !why.empty()) return refuse(rs, input, why);
    const std::string md_tmp = maildir_tmp(input);
    auto sink = Sink::atomic(input, input, md_tmp);
    if (!sink) return rs.outcome.fail(sink.error());
    if (Status s = write_spliced(*sink, src, 0, src.size(), edits); !s) return rs.outcome.fail(s.error());
    Result<std::string> landed = sink->name();
    if (md_tmp.empty()) {
        if (Status s = sink->commit_replacing(read, sink->name(), sink->name()); !s) landed = s.error();
    } else {
        landed = commit_maildir(rs, *sink, input, read);
    }
    if (!landed) {
        // NoInput: the file went away (renamed) before it could be replaced: retry later.
        Error e = landed.error();
        if (e.code == Code::NoInput) e.code = Code::TempFail;
        return rs.outcome.fail(e);
    }
    if (!landed->empty()) note_changed(rs, *landed);
}

namespace {

// What a worker sends back for its file, by one field list (wire.hh): the report's lines,
// its counts and outcome, the bytes done. The parent adds them to its own.
struct FileResult {
    std::string lines;
    RunStats st;
    Outcome outcome;
    std::int64_t done_bytes{0};
    template <class Io, class Self> static void fields(Io &io, Self &f) { io(f.lines, f.st, f.outcome, f.done_bytes); }
};

} // namespace

// Each file is independent, so the workers take whole files; the parent writes the report
// and counts, in input order.
void run_files_forked(RunState &rs)
{
    auto produce = [&](std::size_t k) { // in a worker: this process's copies of the totals
        rs.captured_report.emplace();
        rs.progress.mute();
        rs.st = RunStats{};
        rs.done_bytes = 0;
        rs.outcome = Outcome{};
        if (rs.faults.worker_on == k) ::raise(SIGKILL);
        run_input(rs, k, 1);
        return wire::encode(FileResult{*rs.captured_report, rs.st, rs.outcome, rs.done_bytes});
    };
    auto consume = [&](std::size_t k, std::string &&bytes, bool alive) {
        if (!alive) {
            // Nothing was renamed into place: the file is as it was.
            refuse(rs, rs.inputs[k], "the worker process handling this file died");
            return true;
        }
        try {
            const FileResult f = wire::decode<FileResult>(std::move(bytes));
            rs.st.add(f.st);
            rs.outcome.worsen(f.outcome.worst);
            if (f.outcome.tempfail) rs.outcome.worsen(Code::TempFail);
            if (f.outcome.ended.value_or(0) != 0 && !rs.outcome.ended) rs.outcome.ended = f.outcome.ended;
            rs.done_bytes += f.done_bytes;
            if (rs.report && !f.lines.empty())
                if (auto s = rs.report->write(f.lines); !s) rs.outcome.end(s.error());
        } catch (const std::exception &ex) {
            g_warning("%s: unreadable worker result: %s", rs.inputs[k].c_str(), ex.what());
            rs.outcome.worsen(Code::Software);
        }
        rs.progress.update(rs.st.messages, rs.done_bytes);
        return true; // files are independent: the others are still worth doing
    };
    run_forked(rs.jobs(), Feed::fixed(rs.inputs.size()), produce, consume);
}

} // namespace mimeuri
