/* Quick ACKs on the MTA's TCP connections to the service.
 *
 * Postfix writes each milter command in two writes (length and command, then the data) with
 * Nagle's algorithm on: the second waits until the service acknowledges the first. After
 * the service has answered a command, Linux delays that acknowledgement (delayed ACK, up to
 * 40 ms: the socket is in "ping-pong" mode, expecting to piggyback it on the next answer),
 * so a message over TCP costs tens of milliseconds more than over a unix socket (measured:
 * bench/milter.sh). TCP_QUICKACK after each read sends the acknowledgement at once; it is
 * not a lasting option (the kernel clears it as the connection turns ping-pong again), so it
 * must be set after every read. libmilter reads its sockets itself and does not give them
 * out: these definitions of accept(2), read(2) and close(2) stand in front of glibc's (the
 * program's own definitions come first in the dynamic linker's lookup, libmilter's calls
 * included). accept marks a connection taken on a listening TCP socket of the service's,
 * read sets TCP_QUICKACK on a marked one, close clears the mark. Anything else passes
 * straight through; nothing is marked unless milter_quickack_listen() was called.
 * Written in C without _FORTIFY_SOURCE: its inline read() would clash with this one.
 */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include "milter_quickack.h"

#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/types.h>

enum { kMaxFd = 65536 };
/* 1: a listening TCP socket of the service's; 2: a connection accepted on one. */
static _Atomic unsigned char g_mark[kMaxFd];

/* glibc's own entry points (exported aliases), and accept found past this program. */
extern ssize_t __read(int fd, void *buf, size_t n);
extern int __close(int fd);

void milter_quickack_listen(int fd)
{
    if (fd >= 0 && fd < kMaxFd) atomic_store_explicit(&g_mark[fd], 1, memory_order_relaxed);
}

int milter_quickack_marked(int fd)
{
    return fd >= 0 && fd < kMaxFd && atomic_load_explicit(&g_mark[fd], memory_order_relaxed) == 2;
}

int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
    static int (*next)(int, __SOCKADDR_ARG, socklen_t *);
    if (!next) *(void **)&next = dlsym(RTLD_NEXT, "accept"); /* POSIX's idiom for a function */
    int c = next(fd, addr, len);
    if (c >= 0 && c < kMaxFd && fd >= 0 && fd < kMaxFd &&
        atomic_load_explicit(&g_mark[fd], memory_order_relaxed) == 1)
        atomic_store_explicit(&g_mark[c], 2, memory_order_relaxed);
    return c;
}

ssize_t read(int fd, void *buf, size_t n)
{
    ssize_t got = __read(fd, buf, n);
    if (got > 0 && milter_quickack_marked(fd)) {
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
    return got;
}

int close(int fd)
{
    if (fd >= 0 && fd < kMaxFd) atomic_store_explicit(&g_mark[fd], 0, memory_order_relaxed);
    return __close(fd);
}
