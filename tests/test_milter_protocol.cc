// The milter service driven over its socket by a client written here (no MTA, no miltertest,
// no root): the protocol as Postfix speaks it (version 6), a message whose HTML reference
// needs a repair (SMFIR_REPLBODY with the rewritten body, then accept), and one that needs
// nothing (accept, no request). The full matrix (crashes, limits, reload, syslog) is
// tests/integration/test-miltertest.sh, which needs miltertest and root.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

// One milter connection: a command is a 4-byte length, a command byte and its data.
class MilterClient {
public:
    explicit MilterClient(const std::string &path)
    {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        for (int i = 0; i < 100 && ::connect(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ~MilterClient() { ::close(fd_); }
    void send(char cmd, const std::string &data = {})
    {
        std::uint32_t len = htonl(static_cast<std::uint32_t>(data.size() + 1));
        std::string packet(reinterpret_cast<const char *>(&len), 4);
        packet += cmd;
        packet += data;
        REQUIRE(::send(fd_, packet.data(), packet.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(packet.size()));
    }
    // The next reply: its command byte and data.
    std::pair<char, std::string> reply()
    {
        std::string head = read_exact(4);
        std::uint32_t len;
        std::memcpy(&len, head.data(), 4);
        std::string body = read_exact(ntohl(len));
        return {body[0], body.substr(1)};
    }

private:
    std::string read_exact(std::size_t n)
    {
        std::string out(n, '\0');
        for (std::size_t got = 0; got < n;) {
            ssize_t k = ::read(fd_, out.data() + got, n - got);
            REQUIRE(k > 0);
            got += static_cast<std::size_t>(k);
        }
        return out;
    }
    int fd_{-1};
};

// `mimeuri --milter` on a unix socket in a folder of its own, stopped at scope exit.
class Service {
public:
    Service()
    {
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 2); // its "listening" and root warning lines
            ::execl(MIMEURI_BIN, "mimeuri", ("--milter=unix:" + socket()).c_str(), "--jobs=1",
                    static_cast<char *>(nullptr));
            ::_exit(127);
        }
    }
    ~Service()
    {
        ::kill(pid_, SIGKILL); // libmilter takes 5 s to end on SIGTERM; nothing here to keep
        ::waitpid(pid_, nullptr, 0);
    }
    std::string socket() const { return dir_ / "milter.sock"; }

private:
    testing::TempDir dir_;
    pid_t pid_{-1};
};

std::string u32(std::uint32_t v)
{
    v = htonl(v);
    return std::string(reinterpret_cast<const char *>(&v), 4);
}

// Protocol version 6, every action and the steps `offered`: the actions and steps the
// service asks for.
std::pair<std::uint32_t, std::uint32_t> negotiate(MilterClient &c, std::uint32_t offered)
{
    c.send('O', u32(6) + u32(0x1ff) + u32(offered));
    auto [cmd, data] = c.reply();
    REQUIRE(cmd == 'O');
    REQUIRE(data.size() >= 12);
    std::uint32_t actions, steps;
    std::memcpy(&actions, data.data() + 4, 4);
    std::memcpy(&steps, data.data() + 8, 4);
    return {ntohl(actions), ntohl(steps)};
}

// Sends one message (header fields, body) as the negotiated steps ask; the replies to its
// end, up to the final one.
std::vector<std::pair<char, std::string>> send_message(MilterClient &c, std::uint32_t steps,
                                                       const std::vector<std::pair<std::string, std::string>> &fields,
                                                       const std::string &body)
{
    const std::uint32_t kNoHeaderReply = 0x80, kNoEoh = 0x40;
    for (const auto &[name, value] : fields) {
        c.send('L', name + '\0' + value + '\0');
        if (!(steps & kNoHeaderReply)) CHECK(c.reply().first == 'c');
    }
    if (!(steps & kNoEoh)) {
        c.send('N');
        CHECK(c.reply().first == 'c');
    }
    c.send('B', body);
    CHECK(c.reply().first == 'c');
    c.send('E');
    std::vector<std::pair<char, std::string>> got;
    for (;;) {
        got.push_back(c.reply());
        if (std::string("acrtdy").find(got.back().first) != std::string::npos) return got;
    }
}

} // namespace

TEST_CASE("the milter service over its socket: a repair goes back as the new body, a plain message gets no request")
{
    Service service;
    MilterClient c(service.socket());
    // Negotiation: version 6, every action and every step offered; the service asks to skip
    // what it does not need and not to answer header lines.
    const auto [actions, steps] = negotiate(c, 0x1fffff);
    CHECK((actions & 0x13) == 0x13); // add and change headers, change the body
    CHECK((steps & 0x80) != 0);      // no reply to each header line

    // RFC 2392: a cid: URL is the Content-ID without its angle brackets; the HTML held it
    // escaped and in upper case, which a browser does not resolve.
    const std::vector<std::pair<std::string, std::string>> fields = {
        {"From", "a@example.test"}, {"Message-ID", "<small@example.test>"}, {"MIME-Version", "1.0"},
        {"Content-Type", "multipart/related; boundary=\"b\""}};
    auto body = [](const std::string &src) {
        return "--b\r\nContent-Type: text/html\r\n\r\n<p><img src=\"" + src +
               "\"></p>\r\n--b\r\nContent-Type: image/png\r\nContent-ID: <x@example.test>\r\n"
               "Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--b--\r\n";
    };
    auto got = send_message(c, steps, fields, body("CID:&lt;x@example.test&gt;"));
    REQUIRE(got.size() == 2);
    CHECK(got[0].first == 'b');
    CHECK(got[0].second == body("cid:x@example.test"));
    CHECK(got[1].first == 'a');

    // The same connection, a message with nothing to change: accepted, nothing requested.
    got = send_message(c, steps, {{"From", "a@example.test"}, {"Subject", "plain"}}, "Nothing to change.\r\n");
    REQUIRE(got.size() == 1);
    CHECK(got[0].first == 'a');
}

TEST_CASE("the milter service takes a header field over 64 KiB from an MTA that offers 1 MiB commands")
{
    // libmilter's default limit is 64 KiB a command and it drops the connection past it;
    // Sendmail and MTAs that negotiate SMFIP_MDS_1M send a header field whole (Postfix cuts
    // one to about 60,000 bytes first: tests/integration/test-milter.sh).
    Service service;
    MilterClient c(service.socket());
    const std::uint32_t kMds1M = 0x20000000;
    // (libmilter keeps the data-size bits of the reply to itself.)
    const std::uint32_t steps = negotiate(c, 0x1fffff | kMds1M).second;
    std::string refs;
    for (int k = 0; k < 1500; ++k) refs += " <ref-" + std::to_string(100000 + k) + "-long-enough-id@thread.example.test>\r\n";
    refs.resize(refs.size() - 2);
    REQUIRE(refs.size() > 65536);
    const std::string body = "--b\r\nContent-Type: text/html\r\n\r\n<p><img src=\"CID:&lt;x@example.test&gt;\"></p>\r\n"
                             "--b\r\nContent-Type: image/png\r\nContent-ID: <x@example.test>\r\n\r\nx\r\n--b--\r\n";
    auto got = send_message(c, steps,
                            {{"From", "a@example.test"}, {"References", refs}, {"MIME-Version", "1.0"},
                             {"Content-Type", "multipart/related; boundary=\"b\""}},
                            body);
    REQUIRE(got.size() == 2);
    CHECK(got[0].first == 'b'); // planned whole: the reference repaired
    CHECK(got[0].second.find("src=\"cid:x@example.test\"") != std::string::npos);
    CHECK(got[1].first == 'a');
}
