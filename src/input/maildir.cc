#include "maildir.hh"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace mimeuri::maildir {

namespace {

std::string dirname_of(const std::string &path)
{
    auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string basename_of(const std::string &path)
{
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

bool is_maildir(const std::string &path)
{
    for (const char *sub : {"/cur", "/new"}) {
        struct stat st {};
        if (::stat((path + sub).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;
    }
    return false;
}

std::vector<std::string> message_files(const std::string &dir)
{
    // "Maildir/" names its files "Maildir/cur/...", as "Maildir" does.
    std::string root = dir;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    std::vector<std::string> files;
    for (const char *sub : {"/cur", "/new"}) {
        const std::string d = root + sub;
        GDir *gd = g_dir_open(d.c_str(), 0, nullptr);
        if (!gd) continue;
        while (const char *name = g_dir_read_name(gd)) {
            if (name[0] == '.') continue;
            std::string path = d + "/" + name;
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(std::move(path));
        }
        g_dir_close(gd);
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string_view unique_part(std::string_view name)
{
    return name.substr(0, std::min(name.find(','), name.find(':')));
}

std::string locate(const std::string &path, dev_t dev, ino_t ino)
{
    const std::string name = basename_of(path);
    const std::string_view unique = unique_part(name);
    const std::string root = dirname_of(dirname_of(path));
    for (const char *sub : {"cur", "new"}) {
        const std::string dir = root + "/" + sub;
        std::unique_ptr<DIR, int (*)(DIR *)> d(::opendir(dir.c_str()), ::closedir);
        if (!d) continue;
        while (const dirent *e = ::readdir(d.get())) {
            if (e->d_ino != ino || unique_part(e->d_name) != unique) continue;
            std::string found = dir + "/" + e->d_name;
            struct stat st {};
            if (::lstat(found.c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino) return found;
        }
    }
    return {};
}

std::string find_renamed(const std::string &path)
{
    const std::string name = basename_of(path);
    const std::string_view unique = unique_part(name);
    const std::string root = dirname_of(dirname_of(path));
    std::string found;
    for (const char *sub : {"cur", "new"}) {
        const std::string dir = root + "/" + sub;
        std::unique_ptr<DIR, int (*)(DIR *)> d(::opendir(dir.c_str()), ::closedir);
        if (!d) continue;
        while (const dirent *e = ::readdir(d.get())) {
            if (e->d_name[0] == '.' || unique_part(e->d_name) != unique) continue;
            std::string candidate = dir + "/" + e->d_name;
            struct stat st {};
            if (::lstat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            if (!found.empty()) return {}; // two files, one unique name: neither is taken for it
            found = std::move(candidate);
        }
    }
    return found;
}

std::string with_sizes(const std::string &path, std::uint64_t size, std::uint64_t vsize)
{
    const std::string name = basename_of(path);
    const auto colon = name.find(':');
    const std::string base = name.substr(0, colon), info = colon == std::string::npos ? "" : name.substr(colon);
    std::string out;
    std::size_t start = 0;
    for (bool first = true;; first = false) {
        auto comma = base.find(',', start);
        std::string field = base.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!first && field.rfind("S=", 0) == 0) field = "S=" + std::to_string(size);
        else if (!first && field.rfind("W=", 0) == 0) field = "W=" + std::to_string(vsize);
        out += (first ? "" : ",") + field;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return dirname_of(path) + "/" + out + info;
}

Result<Sizes> sizes_of(const std::string &path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return Error{Code::IoErr, "cannot read " + path + ": " + g_strerror(err)};
    }
    Sizes s;
    std::vector<char> buf(1 << 16);
    char prev = 0;
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return Error{Code::IoErr, "cannot read " + path + ": " + g_strerror(err)};
        }
        if (n == 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            if (buf[static_cast<std::size_t>(i)] == '\n' && prev != '\r') ++s.vsize;
            prev = buf[static_cast<std::size_t>(i)];
        }
        s.size += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    s.vsize += s.size;
    return s;
}

} // namespace mimeuri::maildir
