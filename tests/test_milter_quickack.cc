// The service's quick ACKs (src/app/milter_quickack.c): a connection accepted on a listening
// TCP socket the service marked gets TCP_QUICKACK after each read, so that the MTA's second
// write of a command is not held for a delayed acknowledgement. Read back with
// getsockopt(TCP_QUICKACK), which Linux answers with "not in ping-pong mode": after the
// service has answered a command the connection is in that mode (ACKs delayed) until a read
// sets the option again.
#include "milter_quickack.h"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <initializer_list>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

struct Pair {
    int listener{-1}, client{-1}, server{-1};
    ~Pair()
    {
        for (int fd : {client, server, listener})
            if (fd >= 0) ::close(fd);
    }
};

// A loopback TCP connection; the listener marked first when `mark`.
void connect_pair(Pair &p, bool mark)
{
    p.listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(p.listener, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    REQUIRE(::listen(p.listener, 1) == 0);
    REQUIRE(::getsockname(p.listener, reinterpret_cast<sockaddr *>(&a), &len) == 0);
    if (mark) milter_quickack_listen(p.listener);
    p.client = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(p.client, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    p.server = ::accept(p.listener, nullptr, nullptr);
    REQUIRE(p.server >= 0);
}

// A command and its answer, three times (enough for the kernel's ping-pong threshold), then
// one more command read by the server; whether its ACKs are then quick.
int quick_after_exchange(Pair &p)
{
    char buf[16];
    for (int k = 0; k < 4; ++k) {
        REQUIRE(::write(p.client, "cmd!", 4) == 4);
        REQUIRE(::read(p.server, buf, sizeof buf) == 4);
        if (k == 3) break;
        REQUIRE(::write(p.server, "ok", 2) == 2);
        REQUIRE(::read(p.client, buf, sizeof buf) == 2);
    }
    int quick = -1;
    socklen_t len = sizeof quick;
    REQUIRE(::getsockopt(p.server, IPPROTO_TCP, TCP_QUICKACK, &quick, &len) == 0);
    return quick;
}

} // namespace

TEST_CASE("milter quick ACKs: a connection on a marked listener acknowledges at once after each read")
{
    Pair marked;
    connect_pair(marked, true);
    CHECK(milter_quickack_marked(marked.server));
    CHECK_FALSE(milter_quickack_marked(marked.client));
    CHECK(quick_after_exchange(marked) == 1);

    // The same exchange on a connection nobody marked: ping-pong mode, ACKs delayed (what
    // the service's connections did before; if this fails, the kernel no longer delays and
    // the check above proves nothing).
    Pair plain;
    connect_pair(plain, false);
    CHECK_FALSE(milter_quickack_marked(plain.server));
    CHECK(quick_after_exchange(plain) == 0);

    // close() clears the mark: a descriptor number used again is not marked.
    const int fd = marked.server;
    ::close(marked.server);
    marked.server = -1;
    CHECK_FALSE(milter_quickack_marked(fd));
}
