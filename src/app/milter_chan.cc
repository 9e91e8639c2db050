// The service's channels (milter_chan.hh): a tag byte and a descriptor per message.
#include "milter_chan.hh"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace mimeuri::milter {
namespace {

// One tag byte and room for one descriptor: the message both ways.
struct FdMessage {
    iovec iov;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))]{};
    msghdr m{};
    explicit FdMessage(char *tag) : iov{tag, 1}
    {
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
    }
};

} // namespace

bool send_fd(int sock, char tag, int fd)
{
    FdMessage f(&tag);
    cmsghdr *c = CMSG_FIRSTHDR(&f.m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do n = ::sendmsg(sock, &f.m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == 1;
}

int recv_fd(int sock, char &tag, int &fd)
{
    FdMessage f(&tag);
    ssize_t n = ::recvmsg(sock, &f.m, MSG_CMSG_CLOEXEC);
    if (n == 0) return 0;
    if (n < 0) return -1;
    cmsghdr *c = CMSG_FIRSTHDR(&f.m);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) {
        errno = EPROTO;
        return -1;
    }
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return 1;
}

} // namespace mimeuri::milter
