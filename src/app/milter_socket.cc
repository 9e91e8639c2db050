// The service's listening socket (milter_socket.hh).
#include "milter_socket.hh"

#include "milter_quickack.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace mimeuri::milter {

std::string unix_path(const std::string &spec)
{
    if (spec.rfind("unix:", 0) == 0) return spec.substr(5);
    if (spec.rfind("local:", 0) == 0) return spec.substr(6);
    if (!spec.empty() && spec[0] == '/') return spec;
    return {};
}

// libmilter answers in several small writes (a modification, then the reply); on TCP,
// Nagle's algorithm holds each one back until the MTA acknowledges the one before, which
// it delays (40 ms a round, measured: 60 to 100 ms a message). libmilter does not give out
// its sockets, but on Linux an accepted socket inherits TCP_NODELAY from the listening one:
// find that (the one listening TCP socket libmilter opened) and set it there. Its connections
// also get TCP_QUICKACK after each read (milter_quickack.c): the MTA's writes are held back
// by Nagle's algorithm on its side too.
std::vector<int> find_listeners()
{
    std::vector<int> found;
    for (int fd = 3; fd < 1024; ++fd) {
        int listening = 0, domain = 0, one = 1;
        socklen_t len = sizeof listening;
        if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
        len = sizeof domain;
        if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) continue;
        found.push_back(fd);
        milter_watch_listen(fd);
        if (domain == AF_INET || domain == AF_INET6) {
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            milter_quickack_listen(fd);
        }
    }
    return found;
}

} // namespace mimeuri::milter
