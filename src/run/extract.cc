// --cid=extract, the writing half (see extract.hh).
#include "extract.hh"

#include <glib.h>

#include <cerrno>
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

Status write_top_files(const std::string &top, const std::string &rows, const std::string &pages)
{
    Fd top_fd{::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (top_fd.fd < 0) return refused(AT_FDCWD, top, top, errno);
    const std::string index = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Messages</title>\n"
                              "<style>td{padding:0 1em 0 0;vertical-align:top}</style></head>\n<body>\n<table>\n"
                              "<tr><th>Date</th><th>From</th><th>Subject</th></tr>\n" +
                              rows + "</table>\n</body></html>\n";
    for (const auto &[name, bytes] : {std::pair<const char *, const std::string &>{"index.html", index}, {"pages.tsv", pages}}) {
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
    return ok();
}

} // namespace mimeuri
