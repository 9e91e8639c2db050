// `mimeuri archive`: the archive's files written whole (files.hh).
#include "files.hh"

#include <glib.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace mimeuri::archive {

namespace {

Error io_error(const std::string &what, int err)
{
    return Error{err == ENOSPC || err == EDQUOT ? Code::TempFail : Code::CantCreate, what + ": " + g_strerror(err)};
}

Status write_all(int fd, std::string_view bytes, const std::string &path)
{
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return io_error("cannot write " + path, n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    return ok();
}

std::string parent_of(const std::string &rel)
{
    const std::size_t slash = rel.rfind('/');
    return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

} // namespace

void maybe_killed(const char *step)
{
    const char *want = g_getenv("MIMEURI_ARCHIVE_KILL");
    if (want && std::strcmp(want, step) == 0) ::raise(SIGKILL);
}

Result<Folder> Folder::open(const std::string &path)
{
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return io_error("cannot create " + path, errno);
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open the archive " + path + " (a folder, not a symbolic link)", errno);
    return Folder(path, fd);
}

Folder::~Folder()
{
    if (fd_ >= 0) ::close(fd_);
    if (scratch_fd_ >= 0) ::close(scratch_fd_);
}

Status Folder::use_scratch(const std::string &rel)
{
    if (Status s = remove_tree(fd_, rel); !s) return s;
    if (Status s = mkdir(rel); !s) return s;
    const int fd = ::openat(fd_, rel.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open " + path_ + "/" + rel, errno);
    if (scratch_fd_ >= 0) ::close(scratch_fd_);
    scratch_fd_ = fd;
    return ok();
}

Status Folder::mkdir(const std::string &rel) const
{
    if (::mkdirat(fd_, rel.c_str(), 0755) != 0 && errno != EEXIST) return io_error("cannot create " + path_ + "/" + rel, errno);
    struct stat st {};
    if (::fstatat(fd_, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return Error{Code::CantCreate, "refusing " + path_ + "/" + rel + ": not a folder"};
    return ok();
}

Result<std::optional<std::string>> Folder::get(const std::string &rel) const
{
    const int fd = ::openat(fd_, rel.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::optional<std::string>();
        return io_error("cannot read " + path_ + "/" + rel, errno);
    }
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return io_error("cannot read " + path_ + "/" + rel, err);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return std::optional<std::string>(std::move(out));
}

bool Folder::exists(const std::string &rel) const
{
    struct stat st {};
    return ::fstatat(fd_, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

Result<bool> Folder::put(const std::string &rel, std::string_view bytes) const
{
    auto old = get(rel);
    if (old && *old && **old == bytes) return false;
    if (const std::string dir = parent_of(rel); !dir.empty())
        if (Status s = mkdir(dir); !s) return s.error();
    // In the scratch folder one name serves every put (each is renamed away before the next);
    // without one, the temporary sits beside its target.
    const int tmp_dir = scratch_fd_ >= 0 ? scratch_fd_ : fd_;
    const std::string tmp = scratch_fd_ >= 0 ? std::string("put") : rel + ".tmp-" + std::to_string(::getpid());
    const std::string path = path_ + "/" + rel;
    const int fd = ::openat(tmp_dir, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("cannot create " + path, errno);
    Status s = write_all(fd, bytes, path);
    if (::close(fd) != 0 && s) s = io_error("cannot write " + path, errno);
    // The published tree's first file written and not yet renamed (the stage's are not).
    if (rel.rfind("threads/", 0) == 0) maybe_killed("mid-put");
    if (s && ::renameat(tmp_dir, tmp.c_str(), fd_, rel.c_str()) != 0) s = io_error("cannot rename into " + path, errno);
    if (!s) {
        ::unlinkat(tmp_dir, tmp.c_str(), 0);
        return s.error();
    }
    return true;
}

Status remove_tree(int dirfd, const std::string &name)
{
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return ok();
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) return io_error("cannot remove " + name, errno);
        return ok();
    }
    const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open " + name, errno);
    DIR *d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return io_error("cannot list " + name, errno);
    }
    std::vector<std::string> names;
    while (const dirent *e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
    }
    Status s = ok();
    for (const std::string &n : names)
        if (s) s = remove_tree(::dirfd(d), n);
    ::closedir(d);
    if (!s) return s;
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return io_error("cannot remove " + name, errno);
    return ok();
}

Status Folder::remove(const std::string &rel) const { return remove_tree(fd_, rel); }

Status Folder::move_folder(const std::string &from, const std::string &to, const std::string &trash) const
{
    // A folder already there (a message removed and added again) goes to trash first, so a
    // run killed between the two renames leaves from in place for the next run to move.
    if (exists(to)) {
        if (Status s = remove(trash); !s) return s;
        if (::renameat(fd_, to.c_str(), fd_, trash.c_str()) != 0) return io_error("cannot move " + to + " away", errno);
    }
    if (::renameat(fd_, from.c_str(), fd_, to.c_str()) != 0) return io_error("cannot move " + from + " to " + to, errno);
    return remove(trash);
}

Status Folder::sync() const
{
    if (::syncfs(fd_) != 0) return io_error("cannot sync " + path_, errno);
    return ok();
}

} // namespace mimeuri::archive
