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
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/types.h>

enum { kMaxFd = 65536 };
/* 1: a listening TCP socket of the service's; 2: a connection accepted on one; 3: another
 * listening socket of the service's (unix); 4: a connection accepted on one. */
enum { kTcpListen = 1, kTcpConn = 2, kListen = 3, kConn = 4 };
static _Atomic unsigned char g_mark[kMaxFd];

/* The bound on connections per client (milter_bound_clients): for each connection accepted
 * on a marked listening socket, its peer's address (IPv4 as IPv4-mapped IPv6), when it was
 * accepted, and whether it has sent anything yet; under g_lock. */
struct Peer {
    unsigned char addr[16];
    unsigned long long seq;   /* accept order: the oldest has the lowest */
    unsigned char open;       /* counted (and watched for silence) */
    unsigned char ip;         /* a TCP peer: counted against its client address */
    _Atomic unsigned char spoke; /* read something (libmilter's first read is the negotiation) */
    _Atomic long long last;   /* the last read or write, CLOCK_MONOTONIC seconds */
};
static struct Peer g_peer[kMaxFd];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_bound;             /* 0: no bound */
static int g_top;               /* one past the highest fd ever counted */
static unsigned long long g_seq;
static _Atomic unsigned long g_evicted, g_refused, g_timed_out;
static int g_timeout; /* seconds of silence before a connection is shut down; 0: none */

static long long now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec;
}

/* glibc's own entry points (exported aliases), and accept found past this program. */
extern ssize_t __read(int fd, void *buf, size_t n);
extern int __close(int fd);

void milter_quickack_listen(int fd)
{
    if (fd >= 0 && fd < kMaxFd) atomic_store_explicit(&g_mark[fd], kTcpListen, memory_order_relaxed);
}

void milter_watch_listen(int fd)
{
    if (fd >= 0 && fd < kMaxFd && atomic_load_explicit(&g_mark[fd], memory_order_relaxed) != kTcpListen)
        atomic_store_explicit(&g_mark[fd], kListen, memory_order_relaxed);
}

int milter_quickack_marked(int fd)
{
    return fd >= 0 && fd < kMaxFd && atomic_load_explicit(&g_mark[fd], memory_order_relaxed) == kTcpConn;
}

static int watched(int fd)
{
    if (fd < 0 || fd >= kMaxFd) return 0;
    unsigned char m = atomic_load_explicit(&g_mark[fd], memory_order_relaxed);
    return m == kTcpConn || m == kConn;
}

/* The front's thread that shuts down connections silent for g_timeout seconds (libmilter's
 * own timeout, smfi_settimeout, is checked by Debian's pooled libmilter only every ten
 * minutes, and not for a connection that never sent its first command). */
static void *reaper(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(1);
        const long long now = now_s();
        pthread_mutex_lock(&g_lock);
        for (int f = 0; f < g_top; ++f)
            if (g_peer[f].open && now - atomic_load(&g_peer[f].last) >= g_timeout) {
                g_peer[f].open = 0;
                (void)shutdown(f, SHUT_RDWR); /* libmilter reads the end and closes it */
                atomic_fetch_add(&g_timed_out, 1);
            }
        pthread_mutex_unlock(&g_lock);
    }
    return NULL;
}

void milter_idle_timeout(int seconds)
{
    g_timeout = seconds;
    pthread_t t;
    if (seconds > 0 && pthread_create(&t, NULL, reaper, NULL) == 0) pthread_detach(t);
}

unsigned long milter_timed_out(void) { return atomic_load(&g_timed_out); }

void milter_bound_clients(int bound) { g_bound = bound; }

unsigned long milter_bound_evicted(void) { return atomic_load(&g_evicted); }
unsigned long milter_bound_refused(void) { return atomic_load(&g_refused); }

/* The peer's address of connection c, as 16 bytes; 0 if it has none (not IP). */
static int peer_of(int c, unsigned char out[16])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getpeername(c, (struct sockaddr *)&ss, &len) != 0) return 0;
    memset(out, 0, 16);
    if (ss.ss_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
        return 1;
    }
    if (ss.ss_family == AF_INET6) {
        memcpy(out, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
        return 1;
    }
    return 0;
}

/* Counts connection c against its client; at the bound, makes room by shutting down the
 * client's oldest connection that has sent nothing yet (its libmilter thread then reads the
 * end and closes it), or, when every one of them is in use, returns 0: c is refused. */
static int admit(int c, int tcp)
{
    unsigned char addr[16];
    int ip = tcp && peer_of(c, addr);
    if (!ip) memset(addr, 0, sizeof addr);
    pthread_mutex_lock(&g_lock);
    int count = 0, idle = -1;
    for (int f = 0; ip && g_bound > 0 && f < g_top; ++f) {
        if (!g_peer[f].open || !g_peer[f].ip || memcmp(g_peer[f].addr, addr, 16) != 0) continue;
        ++count;
        if (!atomic_load(&g_peer[f].spoke) && (idle < 0 || g_peer[f].seq < g_peer[idle].seq)) idle = f;
    }
    int ok = 1;
    if (ip && g_bound > 0 && count >= g_bound) {
        if (idle >= 0) {
            g_peer[idle].open = 0; /* no longer counted: it is on its way out */
            (void)shutdown(idle, SHUT_RDWR);
            atomic_fetch_add(&g_evicted, 1);
        } else {
            ok = 0;
            atomic_fetch_add(&g_refused, 1);
        }
    }
    if (ok) {
        memcpy(g_peer[c].addr, addr, 16);
        g_peer[c].seq = ++g_seq;
        g_peer[c].open = 1;
        g_peer[c].ip = (unsigned char)ip;
        atomic_store(&g_peer[c].spoke, 0);
        atomic_store(&g_peer[c].last, now_s());
        if (c + 1 > g_top) g_top = c + 1;
    }
    pthread_mutex_unlock(&g_lock);
    return ok;
}

int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
    static int (*next)(int, __SOCKADDR_ARG, socklen_t *);
    if (!next) *(void **)&next = dlsym(RTLD_NEXT, "accept"); /* POSIX's idiom for a function */
    int c = next(fd, addr, len);
    unsigned char m = fd >= 0 && fd < kMaxFd ? atomic_load_explicit(&g_mark[fd], memory_order_relaxed) : 0;
    if (c >= 0 && c < kMaxFd && (m == kTcpListen || m == kListen)) {
        if (!admit(c, m == kTcpListen)) {
            /* libmilter's listener takes ECONNABORTED as a connection gone before it was
             * taken, and goes on listening. */
            __close(c);
            errno = ECONNABORTED;
            return -1;
        }
        atomic_store_explicit(&g_mark[c], m == kTcpListen ? kTcpConn : kConn, memory_order_relaxed);
    }
    return c;
}

ssize_t read(int fd, void *buf, size_t n)
{
    ssize_t got = __read(fd, buf, n);
    if (got > 0 && watched(fd)) {
        if (milter_quickack_marked(fd)) {
            int one = 1;
            (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
        }
        if (!atomic_load_explicit(&g_peer[fd].spoke, memory_order_relaxed))
            atomic_store_explicit(&g_peer[fd].spoke, 1, memory_order_relaxed);
        atomic_store_explicit(&g_peer[fd].last, now_s(), memory_order_relaxed);
    }
    return got;
}

/* libmilter's answers (and smfi_progress while a worker plans) go out with writev: a
 * connection the service is answering is not silent. */
ssize_t writev(int fd, const struct iovec *iov, int n)
{
    static ssize_t (*next)(int, const struct iovec *, int);
    if (!next) *(void **)&next = dlsym(RTLD_NEXT, "writev");
    ssize_t put = next(fd, iov, n);
    if (put > 0 && watched(fd)) atomic_store_explicit(&g_peer[fd].last, now_s(), memory_order_relaxed);
    return put;
}

int close(int fd)
{
    if (fd >= 0 && fd < kMaxFd) {
        if (watched(fd)) {
            pthread_mutex_lock(&g_lock);
            g_peer[fd].open = 0;
            pthread_mutex_unlock(&g_lock);
        }
        atomic_store_explicit(&g_mark[fd], 0, memory_order_relaxed);
    }
    return __close(fd);
}
