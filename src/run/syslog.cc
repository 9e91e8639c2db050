#include "syslog.hh"

#include <glib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

namespace mimeuri {

Syslog::Syslog()
{
    const char *path = g_getenv("MIMEURI_SYSLOG_SOCKET");
    if (path && *path) {
        test_path_ = path;
        if (!connect_test_socket())
            g_warning("--syslog: cannot reach %s: %s; trying again at each line", path, g_strerror(errno));
        return;
    }
    // LOG_NDELAY: connect now, before the service drops its privileges or a chroot.
    ::openlog("mimeuri", LOG_PID | LOG_NDELAY, LOG_MAIL);
}

Syslog::~Syslog()
{
    if (fd_ >= 0) ::close(fd_);
}

bool Syslog::connect_test_socket()
{
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, test_path_.c_str(), sizeof addr.sun_path - 1);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0) return true;
    int e = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    errno = e;
    return false;
}

void Syslog::send(int severity, const std::string &line)
{
    // A line is one record: no line breaks inside.
    std::string text;
    text.reserve(line.size());
    for (char c : line) text += (c == '\n' || c == '\r') ? ' ' : c;
    if (test_path_.empty()) {
        ::syslog(LOG_MAIL | severity, "%s", text.c_str());
        return;
    }
    constexpr int facility_mail = 2;
    text = "<" + std::to_string(facility_mail * 8 + severity) + ">mimeuri[" + std::to_string(::getpid()) + "]: " + text;
    // As syslog(3): a failed send (the listener restarted) connects again and sends once more.
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (fd_ < 0 && !connect_test_socket()) return;
        if (::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) >= 0) return;
        ::close(fd_);
        fd_ = -1;
    }
}

bool stderr_is_journal()
{
    const char *js = g_getenv("JOURNAL_STREAM");
    if (!js) return false;
    unsigned long long dev = 0, ino = 0;
    if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
    struct stat st {};
    return ::fstat(2, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

} // namespace mimeuri
