// The front's copy of one message (milter_message.hh).
#include "milter_message.hh"

#include "fdio.hh"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace mimeuri::milter {

Message::~Message()
{
    if (fd_ >= 0) ::close(fd_);
}

Status Message::header(const char *name, const char *value)
{
    std::string line = name;
    line += ':';
    if (!leadspc && *value) line += ' ';
    for (const char *p = value; *p; ++p) {
        if (*p == '\n' && (p == value || p[-1] != '\r')) line += '\r';
        line += *p;
    }
    line += "\r\n";
    return append(line.data(), line.size());
}

Status Message::end_of_header()
{
    if (header_end_ >= 0) return ok();
    header_end_ = size_;
    return append("\r\n", 2);
}

Status Message::body(const unsigned char *p, std::size_t n)
{
    if (Status s = end_of_header(); !s) return s;
    return append(reinterpret_cast<const char *>(p), n);
}

Result<int> Message::finish()
{
    if (Status s = end_of_header(); !s) return s.error();
    if (fd_ < 0) {
        fd_ = ::memfd_create("mimeuri-message", MFD_CLOEXEC);
        if (fd_ < 0) return Error{Code::TempFail, std::string("memfd_create: ") + g_strerror(errno)};
        if (!write_all(fd_, mem_.data(), mem_.size()))
            return Error{Code::TempFail, std::string("cannot hold the message: ") + g_strerror(errno)};
    }
    return fd_;
}

Result<std::size_t> Message::read_at(std::int64_t off, char *buf, std::size_t len) const
{
    // Held in memory too (and in a memfd from finish() on): what is past it (the texts a
    // worker wrote there, milter_texts.hh) is only in the file.
    if (fd_ < 0 || off < static_cast<std::int64_t>(mem_.size())) {
        if (off >= static_cast<std::int64_t>(mem_.size())) return std::size_t{0};
        std::size_t n = std::min(len, mem_.size() - static_cast<std::size_t>(off));
        std::memcpy(buf, mem_.data() + off, n);
        return n;
    }
    ssize_t n;
    do n = ::pread(fd_, buf, len, off);
    while (n < 0 && errno == EINTR);
    if (n < 0) return Error{Code::IoErr, std::string("cannot read the spooled message: ") + g_strerror(errno)};
    return static_cast<std::size_t>(n);
}

Status Message::append(const char *p, std::size_t n)
{
    size_ += static_cast<std::int64_t>(n);
    if (fd_ < 0 && mem_.size() + n <= threshold_) {
        mem_.append(p, n);
        return ok();
    }
    if (fd_ < 0) {
        fd_ = ::open(g_get_tmp_dir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd_ < 0)
            return Error{Code::TempFail, std::string("cannot spool the message in ") + g_get_tmp_dir() + ": " +
                                             g_strerror(errno)};
        if (!write_all(fd_, mem_.data(), mem_.size()))
            return Error{Code::TempFail, std::string("cannot spool the message: ") + g_strerror(errno)};
        std::string().swap(mem_);
    }
    if (!write_all(fd_, p, n)) return Error{Code::TempFail, std::string("cannot spool the message: ") + g_strerror(errno)};
    return ok();
}

} // namespace mimeuri::milter
