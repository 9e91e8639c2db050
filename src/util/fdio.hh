// Whole reads and writes on a file descriptor, retrying on EINTR and short transfers.
#pragma once

#include <glib.h>

#include <cerrno>
#include <cstddef>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace mimeuri {

// Writes all len bytes; false on an error, with errno telling which.
inline bool write_all(int fd, const void *data, std::size_t len)
{
    auto *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// Writes all len bytes at offset `at` (the file position untouched); false on an error, with
// errno telling which.
inline bool pwrite_all(int fd, const void *data, std::size_t len, off_t at)
{
    auto *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::pwrite(fd, p, len, at);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        at += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// Reads exactly len bytes; false on an error or at end of file first.
inline bool read_all(int fd, void *data, std::size_t len)
{
    auto *p = static_cast<char *>(data);
    while (len > 0) {
        ssize_t n = ::read(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// Makes a rename into path's folder durable: fsyncs the folder (errors ignored: the data
// itself was synced, and some file systems refuse a directory fsync).
inline void fsync_dir_of(const std::string &path)
{
    gchar *dir = g_path_get_dirname(path.c_str());
    int dfd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    g_free(dir);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

} // namespace mimeuri
