// --cid=extract, the writing half (see extract_write.hh).
#include "extract_write.hh"

#include "archive_contents.hh"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

Error failure(const std::string &what, int err)
{
    return Error{err == ENOSPC || err == EDQUOT ? Code::TempFail : Code::CantCreate, what + ": " + g_strerror(err)};
}

// Why openat(..., O_DIRECTORY | O_NOFOLLOW) failed on an existing entry, in words.
Error refused(int at, const std::string &name, const std::string &path, int err)
{
    struct stat st {};
    if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return Error{Code::CantCreate, "refusing " + path + ": it is a symbolic link"};
    if (err == ENOTDIR) return Error{Code::CantCreate, "refusing " + path + ": not a directory"};
    return failure("cannot open " + path, err);
}

struct Fd {
    int fd;
    ~Fd()
    {
        if (fd >= 0) ::close(fd);
    }
};

Error write_failure(const std::string &path, int err)
{
    return Error{err == ENOSPC || err == EDQUOT ? Code::TempFail : Code::IoErr, "cannot write " + path + ": " + g_strerror(err)};
}

Status write_all(int fd, const std::string &bytes, const std::string &path)
{
    for (std::size_t done = 0; done < bytes.size();) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return write_failure(path, n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    return ok();
}

} // namespace

Result<std::string> write_extraction(const std::string &top, std::size_t number, const std::vector<OutputFile> &files)
{
    const std::string name = std::to_string(number);
    const std::string dir = top + "/" + name;
    if (g_mkdir_with_parents(top.c_str(), 0755) != 0) return failure("cannot create " + top, errno);
    Fd top_fd{::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (top_fd.fd < 0) return refused(AT_FDCWD, top, top, errno);
    bool made_dir = ::mkdirat(top_fd.fd, name.c_str(), 0755) == 0;
    if (!made_dir && errno != EEXIST) return failure("cannot create " + dir, errno);
    Fd at{::openat(top_fd.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (at.fd < 0) return refused(top_fd.fd, name, dir, errno);
    if (struct stat st {}; ::fstat(at.fd, &st) != 0 || st.st_uid != ::geteuid())
        return Error{Code::CantCreate, "refusing " + dir + ": it belongs to another user"};
    std::vector<std::string> created; // removed again if the message fails
    auto undo = [&](Error e) {
        for (const auto &f : created) ::unlinkat(at.fd, f.c_str(), 0);
        if (made_dir) ::unlinkat(top_fd.fd, name.c_str(), AT_REMOVEDIR);
        return e;
    };
    for (const OutputFile &f : files) {
        const std::string path = dir + "/" + f.name;
        Fd fd{::openat(at.fd, f.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
        if (fd.fd < 0) return undo(failure("cannot create " + path, errno));
        created.push_back(f.name);
        if (auto s = write_all(fd.fd, f.bytes, path); !s) return undo(s.error());
        int closed = ::close(fd.fd);
        fd.fd = -1;
        if (closed != 0) return undo(write_failure(path, errno));
    }
    return dir;
}

namespace {

// Where the marker of a page mimeuri wrote is: read in blocks as far as it is, however long
// the Subject before it (the <title> holds it, escaped: no '<' of the mail comes before the
// marker). The first "<main" ends the search: the mail's body is not looked into.
std::optional<off_t> find_marker(int fd)
{
    constexpr std::string_view kBody = "<main";
    std::string window; // the tail of the last block (a marker across two blocks) and this one
    char block[16384];
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, block, sizeof block, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::nullopt;
        const off_t window_at = at - static_cast<off_t>(window.size());
        window.append(block, static_cast<std::size_t>(n));
        at += n;
        const std::size_t m = window.find(kNavMarker), b = window.find(kBody);
        if (b != std::string::npos && (m == std::string::npos || b < m)) return std::nullopt;
        if (m != std::string::npos) return window_at + static_cast<off_t>(m + kNavMarker.size());
        window.erase(0, window.size() - std::min(window.size(), kNavMarker.size()));
    }
}

// The thread links of one page, written over the room its header keeps for them after the
// marker (archive_contents.hh). The page is the run's own file, opened as the others: relative
// to the top's descriptor, no link followed. A page whose marker is not where mimeuri put it
// (before any byte of the mail), or not followed by its room, is left as it is.
void write_nav(int top_fd, std::size_t folder, const std::string &links)
{
    if (links.empty()) return;
    Fd dir{::openat(top_fd, std::to_string(folder).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (dir.fd < 0) return;
    Fd fd{::openat(dir.fd, "index.html", O_RDWR | O_NOFOLLOW | O_CLOEXEC)};
    if (fd.fd < 0) return;
    const std::optional<off_t> room = find_marker(fd.fd);
    if (!room) return;
    char spaces[kNavRoom];
    if (::pread(fd.fd, spaces, kNavRoom, *room) != static_cast<ssize_t>(kNavRoom)) return;
    if (std::string_view(spaces, kNavRoom).find_first_not_of(' ') != std::string_view::npos) return;
    (void)::pwrite(fd.fd, links.data(), links.size(), *room);
}

} // namespace

Status write_top_files(const std::string &top, const std::string &rows, const std::string &pages)
{
    Fd top_fd{::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (top_fd.fd < 0) return refused(AT_FDCWD, top, top, errno);
    const std::vector<ArchiveEntry> entries = read_archive_records(rows);
    const Threads threads = thread_archive(entries);
    const std::string index = contents_page(entries, threads);
    const std::string css = archive_stylesheet();
    for (const auto &[name, bytes] : {std::pair<const char *, const std::string &>{"index.html", index},
                                      {"pages.tsv", pages},
                                      {"mimeuri.css", css}}) {
        const std::string path = top + "/" + name;
        Fd fd{::openat(top_fd.fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
        if (fd.fd < 0) return failure("cannot create " + path, errno);
        Status s = write_all(fd.fd, bytes, path);
        const int closed = ::close(fd.fd);
        fd.fd = -1;
        if (s && closed != 0) s = write_failure(path, errno);
        if (!s) {
            ::unlinkat(top_fd.fd, name, 0);
            return s;
        }
    }
    // Each page's previous and next in its thread, now that the threads are known.
    for (std::size_t k = 0; k < threads.order.size(); ++k) {
        const bool has_prev = k > 0 && threads.thread[k - 1] == threads.thread[k];
        const bool has_next = k + 1 < threads.order.size() && threads.thread[k + 1] == threads.thread[k];
        write_nav(top_fd.fd, entries[threads.order[k]].folder,
                  nav_links(has_prev ? entries[threads.order[k - 1]].folder : 0,
                            has_next ? entries[threads.order[k + 1]].folder : 0));
    }
    return ok();
}

} // namespace mimeuri
