#include "syslog.hh"

#include <glib.h>

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace mimeuri {

Syslog::Syslog()
{
    const char *path = g_getenv("MIMEURI_SYSLOG_SOCKET");
    if (!path || !*path) path = "/dev/log";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        g_warning("--syslog: cannot reach %s: %s; messages are not logged there", path, g_strerror(errno));
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
}

Syslog::~Syslog()
{
    if (fd_ >= 0) ::close(fd_);
}

void Syslog::send(int severity, const std::string &line)
{
    if (fd_ < 0) return;
    constexpr int facility_mail = 2;
    // A line is one record: no line breaks inside.
    std::string text = "<" + std::to_string(facility_mail * 8 + severity) + ">mimeuri[" + std::to_string(::getpid()) +
                       "]: ";
    for (char c : line) text += (c == '\n' || c == '\r') ? ' ' : c;
    (void)::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
}

} // namespace mimeuri
