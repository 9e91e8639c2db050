// The milter service driven over its socket by a client written here (no MTA, no miltertest,
// no root): the protocol as Postfix speaks it (version 6), a message whose HTML reference
// needs a repair (SMFIR_REPLBODY with the rewritten body, then accept), and one that needs
// nothing (accept, no request). The full matrix (crashes, limits, reload, syslog) is
// tests/integration/test-miltertest.sh, which needs miltertest and root.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <vector>
#include <unistd.h>

namespace {

// One milter connection: a command is a 4-byte length, a command byte and its data.
class MilterClient {
public:
    // A TCP connection to 127.0.0.1:port.
    explicit MilterClient(int port)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int i = 0; i < 100 && ::connect(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Whether the service closed the connection within `wait` (end of file, or reset).
    bool closed_within(std::chrono::milliseconds wait)
    {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
        char c;
        return ::recv(fd_, &c, 1, MSG_DONTWAIT) <= 0;
    }
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

// `mimeuri --milter` on a unix socket in a folder of its own, with `args` more, stopped at
// scope exit; its standard error (the service's own lines) in log().
class Service {
public:
    // `soft_nofile`: the soft descriptor limit it is started with (0: as it is).
    explicit Service(std::vector<std::string> args = {"--jobs=1"}, rlim_t soft_nofile = 0)
    {
        if (std::none_of(args.begin(), args.end(), [](const std::string &a) { return a.rfind("--milter=", 0) == 0; }))
            args.insert(args.begin(), "--milter=unix:" + socket());
        args.insert(args.begin(), "mimeuri");
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string log_path = log_file();
        // Its syslog lines (the per-message ones), kept.
        syslog_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, (dir_ / "syslog.sock").c_str(), sizeof a.sun_path - 1);
        REQUIRE(::bind(syslog_fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        syslog_reader_ = std::thread([this] {
            char buf[65536];
            for (;;) {
                ssize_t n = ::recv(syslog_fd_, buf, sizeof buf, 0);
                if (n <= 0) return;
                std::lock_guard l(syslog_lock_);
                syslog_.append(buf, static_cast<std::size_t>(n)).push_back('\n');
            }
        });
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            ::dup2(log, 2); // its "listening", "configuration reloaded" and warning lines
            if (soft_nofile) {
                rlimit rl{};
                ::getrlimit(RLIMIT_NOFILE, &rl);
                rl.rlim_cur = std::min(soft_nofile, rl.rlim_max);
                ::setrlimit(RLIMIT_NOFILE, &rl);
            }
            ::setenv("MIMEURI_SYSLOG_SOCKET", (dir_ / "syslog.sock").c_str(), 1);
            ::execv(MIMEURI_BIN, argv.data());
            ::_exit(127);
        }
    }
    ~Service()
    {
        ::kill(pid_, SIGKILL); // libmilter takes 5 s to end on SIGTERM; nothing here to keep
        ::waitpid(pid_, nullptr, 0);
        // An empty datagram ends the reader (recv returns 0).
        int wake = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, (dir_ / "syslog.sock").c_str(), sizeof a.sun_path - 1);
        (void)::sendto(wake, "", 0, 0, reinterpret_cast<sockaddr *>(&a), sizeof a);
        ::close(wake);
        syslog_reader_.join();
        ::close(syslog_fd_);
    }
    // The syslog lines so far that hold `what`.
    std::string syslog_lines(const std::string &what)
    {
        std::lock_guard l(syslog_lock_);
        std::string out;
        std::istringstream in(syslog_);
        for (std::string line; std::getline(in, line);)
            if (line.find(what) != std::string::npos) out += line + "\n";
        return out;
    }
    std::string socket() const { return dir_ / "milter.sock"; }
    std::string log_file() const { return dir_ / "service.log"; }
    std::string log() const
    {
        return g_file_test(log_file().c_str(), G_FILE_TEST_EXISTS) ? testing::read_file(log_file()) : std::string();
    }
    // How many lines of the log hold `what`.
    int count(const std::string &what) const
    {
        std::string l = log();
        int n = 0;
        for (std::size_t at = 0; (at = l.find(what, at)) != std::string::npos; at += what.size()) ++n;
        return n;
    }
    // Waits up to 10 s until the log holds `what` `n` times; false if it did not.
    bool wait_for(const std::string &what, int n = 1) const
    {
        for (int i = 0; i < 1000; ++i) {
            if (count(what) >= n) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    pid_t pid() const { return pid_; }
    const testing::TempDir &dir() const { return dir_; }

private:
    testing::TempDir dir_;
    pid_t pid_{-1};
    int syslog_fd_{-1};
    std::thread syslog_reader_;
    std::mutex syslog_lock_;
    std::string syslog_;
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
    // In commands of at most 65,535 bytes, as Postfix sends a body (libmilter's limit).
    for (std::size_t at = 0; at < body.size(); at += 65535) {
        c.send('B', body.substr(at, 65535));
        CHECK(c.reply().first == 'c');
    }
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

// SMFIR_CHGHEADER's data: the field's index (network order, from 1), its name and its new value.
std::pair<std::string, std::string> changed_header(const std::string &data)
{
    REQUIRE(data.size() > 4);
    std::uint32_t index;
    std::memcpy(&index, data.data(), 4);
    CHECK(ntohl(index) == 1);
    const std::string rest = data.substr(4);
    const auto nul = rest.find('\0');
    REQUIRE(nul != std::string::npos);
    return {rest.substr(0, nul), rest.substr(nul + 1, rest.find('\0', nul + 1) - nul - 1)};
}

TEST_CASE("the milter service: --related=repair and --data=attach change the top-level Content-Type (chgheader) and the body")
{
    const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    {
        // A multipart/mixed of an HTML part and the image it names, marked attachment: the
        // mixed becomes the related set (RFC 2387), the image inline; nothing else changes.
        Service service({"--jobs=1", "--related=repair"});
        MilterClient c(service.socket());
        const auto [actions, steps] = negotiate(c, 0x1fffff);
        CHECK((actions & 0x13) == 0x13);
        const std::string body = "--m\r\nContent-Type: text/html\r\n\r\n<img src=\"cid:x@example.test\">\r\n"
                                 "--m\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"x.png\"\r\n"
                                 "Content-ID: <x@example.test>\r\nContent-Transfer-Encoding: base64\r\n\r\n" + png +
                                 "\r\n--m--\r\n";
        auto got = send_message(c, steps,
                                {{"From", "a@example.test"}, {"MIME-Version", "1.0"},
                                 {"Content-Type", "multipart/mixed; boundary=\"m\""}},
                                body);
        REQUIRE(got.size() == 3);
        CHECK(got[0].first == 'm');
        const auto [name, value] = changed_header(got[0].second);
        CHECK(name == "Content-Type");
        CHECK(value == "multipart/related; boundary=\"m\"; type=\"text/html\"");
        CHECK(got[1].first == 'b');
        std::string want = body;
        want.replace(want.find("attachment;"), 11, "inline;");
        CHECK(got[1].second == want);
        CHECK(got[2].first == 'a');
    }
    {
        // A lone text/html body with a data: image: it becomes a multipart/related.
        Service service({"--jobs=1", "--data=attach"});
        MilterClient c(service.socket());
        const auto [actions, steps] = negotiate(c, 0x1fffff);
        (void)actions;
        auto got = send_message(c, steps,
                                {{"From", "a@example.test"}, {"MIME-Version", "1.0"},
                                 {"Content-Type", "text/html; charset=utf-8"}},
                                "<p><img src=\"data:image/png;base64," + png + "\"></p>\r\n");
        REQUIRE(got.size() == 3);
        CHECK(got[0].first == 'm');
        const auto [name, value] = changed_header(got[0].second);
        CHECK(name == "Content-Type");
        CHECK(value.rfind(" multipart/related; boundary=\"=_mimeuri_", 0) == 0);
        CHECK(got[1].first == 'b');
        // The HTML's own Content-Type moved into its part, as the MTA gave it (no space).
        CHECK(got[1].second.find("\r\nContent-Type:text/html; charset=utf-8\r\n\r\n<p><img src=\"cid:") != std::string::npos);
        CHECK(got[1].second.find("Content-Disposition: inline") != std::string::npos);
        CHECK(got[2].first == 'a');
    }
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

namespace {

// A message whose one reference needs a repair (RFC 2392: the Content-ID without its angle
// brackets; the HTML holds it escaped and in upper case), and its body repaired by hand.
const std::vector<std::pair<std::string, std::string>> kRepairFields = {
    {"From", "a@example.test"}, {"Message-ID", "<small@example.test>"}, {"MIME-Version", "1.0"},
    {"Content-Type", "multipart/related; boundary=\"b\""}};
std::string repair_body(const std::string &src)
{
    return "--b\r\nContent-Type: text/html\r\n\r\n<p><img src=\"" + src +
           "\"></p>\r\n--b\r\nContent-Type: image/png\r\nContent-ID: <x@example.test>\r\n"
           "Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--b--\r\n";
}

// How the service answered one message.
enum class Answer { Repaired, Unchanged, Refused, Other };

Answer send_repair(MilterClient &c, std::uint32_t steps, std::string *said = nullptr)
{
    auto got = send_message(c, steps, kRepairFields, repair_body("CID:&lt;x@example.test&gt;"));
    if (said) *said = got.back().second; // a refusal's SMTP text says which failure
    if (got.size() == 2 && got[0].first == 'b' && got[0].second == repair_body("cid:x@example.test") &&
        got[1].first == 'a')
        return Answer::Repaired;
    if (got.size() == 1 && got[0].first == 'a') return Answer::Unchanged;
    if (got.back().first == 't' || (got.back().first == 'y' && got.back().second.rfind("4", 0) == 0))
        return Answer::Refused;
    return Answer::Other;
}

} // namespace

TEST_CASE("the milter service: two reloads with no message between them, then a message: a worker plans it")
{
    // Each reload retires the workers; the front held the channels of every worker ever
    // forked, the ended ones first, and gave up after four dead ones: 451 "no worker could
    // take the message", whatever --on-error said.
    for (const char *policy : {"--on-error=pass", "--on-error=tempfail"}) {
        CAPTURE(policy);
        Service service({"--jobs=2", policy});
        MilterClient c(service.socket());
        const std::uint32_t steps = negotiate(c, 0x1fffff).second;
        for (int k = 1; k <= 3; ++k) {
            ::kill(service.pid(), SIGHUP);
            REQUIRE(service.wait_for("configuration reloaded", k));
        }
        CHECK(send_repair(c, steps) == Answer::Repaired);
        CHECK(send_repair(c, steps) == Answer::Repaired);
    }
}

TEST_CASE("the milter service: a reload keeps a bad file's old settings and says why; a good one holds from the next message")
{
    testing::TempDir files;
    const std::string conf = files.file("mimeuri.conf", "[mimeuri]\non-error=tempfail\n");
    Service service({"--jobs=2", "--config=" + conf});
    MilterClient c(service.socket());
    const std::uint32_t steps = negotiate(c, 0x1fffff).second;
    REQUIRE(send_repair(c, steps) == Answer::Repaired);

    // A key no option has, then a value no option takes: the old settings stay, the log
    // names the file and what is wrong with it.
    testing::write_file(conf, "[mimeuri]\npasses=none\nno-such-key=1\n");
    ::kill(service.pid(), SIGHUP);
    REQUIRE(service.wait_for("the configuration was not reloaded, the old one stays"));
    CHECK(service.log().find("no-such-key") != std::string::npos);
    CHECK(send_repair(c, steps) == Answer::Repaired);
    testing::write_file(conf, "[mimeuri]\npasses=none\nmax-time=soon\n");
    ::kill(service.pid(), SIGHUP);
    REQUIRE(service.wait_for("the configuration was not reloaded, the old one stays", 2));
    CHECK(service.log().find("max-time") != std::string::npos);
    CHECK(send_repair(c, steps) == Answer::Repaired);
    CHECK(service.count("configuration reloaded") == 0);

    // A good file: in force from the next message (nothing changed with passes=none).
    testing::write_file(conf, "[mimeuri]\npasses=none\n");
    ::kill(service.pid(), SIGHUP);
    REQUIRE(service.wait_for("configuration reloaded"));
    CHECK(send_repair(c, steps) == Answer::Unchanged);
    CHECK(send_repair(c, steps) == Answer::Unchanged);
}

TEST_CASE("the milter service under reloads: hundreds of SIGHUPs during thousands of messages, none refused or lost")
{
    // --on-error=tempfail: a message no worker could plan is refused (451), one planned is
    // repaired; both are counted. Four connections at once, as an MTA's smtpd processes.
    Service service({"--jobs=2", "--on-error=tempfail"});
    REQUIRE(service.wait_for("milter listening on")); // SIGHUP before that would end it
    constexpr int kConnections = 4, kAtLeast = 750, kReloads = 300;
    std::atomic<int> repaired{0}, unchanged{0}, refused{0}, other{0}, reloads{0};
    std::atomic<bool> reloads_done{false};
    std::mutex first_refusal_lock;
    std::string first_refusal;
    std::vector<std::thread> clients;
    for (int k = 0; k < kConnections; ++k)
        clients.emplace_back([&] {
            try {
                MilterClient c(service.socket());
                const std::uint32_t steps = negotiate(c, 0x1fffff).second;
                for (int sent = 0; sent < kAtLeast || !reloads_done; ++sent) {
                    std::string said;
                    switch (send_repair(c, steps, &said)) {
                    case Answer::Repaired: ++repaired; break;
                    case Answer::Unchanged: ++unchanged; break;
                    case Answer::Refused:
                        if (++refused == 1) {
                            std::lock_guard l(first_refusal_lock);
                            first_refusal = said;
                        }
                        break;
                    case Answer::Other: ++other; break;
                    }
                }
            } catch (...) {
                ++other; // a connection dropped: its message lost
            }
        });
    // Each SIGHUP waits for the one before to be taken (signals of a kind pending at once
    // are one), so each is a reload of its own; none waits for a message.
    for (int k = 1; k <= kReloads; ++k) {
        ::kill(service.pid(), SIGHUP);
        if (!service.wait_for("configuration reloaded", k)) break;
        reloads = k;
    }
    reloads_done = true;
    for (auto &t : clients) t.join();
    const int sent = repaired + unchanged + refused + other;
    MESSAGE(sent << " messages, " << reloads.load() << " reloads");
    CHECK(reloads == kReloads);
    CHECK(sent >= kConnections * kAtLeast);
    CHECK_MESSAGE(refused == 0, first_refusal << "\n" << service.syslog_lines("451"));
    CHECK(unchanged == 0);
    CHECK(other == 0);
    CHECK(repaired == sent);
}

namespace {

// A TCP port free on 127.0.0.1 a moment ago.
int free_port()
{
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

// The soft and hard descriptor limits of process pid, from /proc.
std::pair<std::string, std::string> nofile_of(pid_t pid)
{
    const std::string limits = testing::read_file("/proc/" + std::to_string(pid) + "/limits");
    auto at = limits.find("Max open files");
    REQUIRE(at != std::string::npos);
    std::istringstream in(limits.substr(at + 14));
    std::string soft, hard;
    in >> soft >> hard;
    return {soft, hard};
}

} // namespace

TEST_CASE("the milter service's limits: the soft descriptor limit raised, silent connections timed out")
{
    // Started with the soft limit systemd gives (1,024): about a thousand idle connections
    // would have made accept() fail for the MTA's own.
    Service service({"--jobs=1", "--milter-timeout=1"}, 1024);
    REQUIRE(service.wait_for("milter listening on"));
    const auto [soft, hard] = nofile_of(service.pid());
    CHECK(soft == (hard == "unlimited" || std::stoull(hard) > 65536 ? std::string("65536") : hard));
    CHECK(soft != "1024");
    // A connection that says nothing is closed after --milter-timeout (libmilter's default
    // is 7,210 s); one that speaks is served.
    MilterClient silent(service.socket());
    MilterClient speaking(service.socket());
    const std::uint32_t steps = negotiate(speaking, 0x1fffff).second;
    CHECK(send_repair(speaking, steps) == Answer::Repaired);
    CHECK(silent.closed_within(std::chrono::seconds(8)));
}

TEST_CASE("the milter service's bound on connections per client: the oldest silent one makes room; all in use, the new one is closed")
{
    const int port = free_port();
    Service service({"--jobs=1", "--milter=inet:" + std::to_string(port) + "@127.0.0.1", "--milter-client-connections=3"});
    REQUIRE(service.wait_for("milter listening on"));
    // Three silent connections (an attacker's) fill the bound.
    std::vector<std::unique_ptr<MilterClient>> silent;
    for (int k = 0; k < 3; ++k) {
        silent.push_back(std::make_unique<MilterClient>(port));
        std::this_thread::sleep_for(std::chrono::milliseconds(50)); // accepted in this order
    }
    // The MTA's connection still gets in: the oldest silent one is closed for it.
    MilterClient mta(port);
    const std::uint32_t steps = negotiate(mta, 0x1fffff).second;
    CHECK(send_repair(mta, steps) == Answer::Repaired);
    CHECK(silent[0]->closed_within(std::chrono::seconds(5)));
    CHECK_FALSE(silent[1]->closed_within(std::chrono::milliseconds(200)));
    CHECK_FALSE(silent[2]->closed_within(std::chrono::milliseconds(200)));
    // Every connection of the client in use (three that negotiated): a fourth is closed at
    // once, and the three go on.
    silent.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // their ends read by the service
    std::vector<std::unique_ptr<MilterClient>> busy;
    std::vector<std::uint32_t> busy_steps;
    for (int k = 0; k < 2; ++k) {
        busy.push_back(std::make_unique<MilterClient>(port));
        busy_steps.push_back(negotiate(*busy.back(), 0x1fffff).second);
    }
    MilterClient extra(port);
    CHECK(extra.closed_within(std::chrono::seconds(5)));
    CHECK(send_repair(mta, steps) == Answer::Repaired);
    for (std::size_t k = 0; k < busy.size(); ++k) CHECK(send_repair(*busy[k], busy_steps[k]) == Answer::Repaired);
    // Without a bound (0), the same fourth connection is served.
    const int port2 = free_port();
    Service unbounded({"--jobs=1", "--milter=inet:" + std::to_string(port2) + "@127.0.0.1",
                       "--milter-client-connections=0"});
    REQUIRE(unbounded.wait_for("milter listening on"));
    std::vector<std::unique_ptr<MilterClient>> many;
    for (int k = 0; k < 5; ++k) many.push_back(std::make_unique<MilterClient>(port2));
    const std::uint32_t s5 = negotiate(*many.back(), 0x1fffff).second;
    CHECK(send_repair(*many.back(), s5) == Answer::Repaired);
    CHECK_FALSE(many.front()->closed_within(std::chrono::milliseconds(200)));
}

namespace {

// A message whose `parts` HTML parts (`mb` MiB of HTML in all, in `cte`, with `eol` line
// ends) each hold a reference the references pass repairs (the Content-ID escaped and in
// upper case, RFC 2392), and its header fields.
std::string big_html_body(std::size_t mb, const std::string &cte, const std::string &eol, int parts)
{
    const std::string line = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit = caf\xc3\xa9.</p>\n";
    std::string out;
    for (int k = 0; k < parts; ++k) {
        const std::string id = "img" + std::to_string(k) + "@example.test";
        std::string html = "<html><body><p><img src=\"CID:&lt;" + id + "&gt;\"></p>\n";
        for (std::size_t n = 0; n < (mb << 20) / static_cast<std::size_t>(parts) / line.size(); ++n) html += line;
        html += "</body></html>\n";
        std::string enc;
        if (cte == "base64") {
            gchar *b = g_base64_encode(reinterpret_cast<const guchar *>(html.data()), html.size());
            const std::string_view all(b);
            for (std::size_t at = 0; at < all.size(); at += 76) enc.append(all.substr(at, 76)).push_back('\n');
            g_free(b);
        } else if (cte == "quoted-printable") {
            for (char c : html) {
                if (c == '=' || static_cast<unsigned char>(c) > 126) {
                    char hex[4];
                    std::snprintf(hex, sizeof hex, "=%02X", static_cast<unsigned char>(c));
                    enc += hex;
                } else {
                    enc += c;
                }
            }
        } else {
            enc = html;
        }
        std::string part = "--b\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: " + cte + "\n\n" +
                           enc + "\n--b\nContent-Type: image/png\nContent-ID: <" + id +
                           ">\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n";
        out += part;
    }
    out += "--b--\n";
    if (eol != "\n") {
        std::string crlf;
        crlf.reserve(out.size() + out.size() / 40);
        for (char c : out) c == '\n' ? crlf += "\r\n" : crlf += c;
        out.swap(crlf);
    }
    return out;
}

// The size of those parts: 24 MiB, or 4 in a sanitized build (which runs several times
// slower, and where the peak RSS is not checked: below).
constexpr std::size_t kBigMiB = testing::sanitized ? 4 : 24;

const std::vector<std::pair<std::string, std::string>> kBigFields = {
    {"From", "a@example.test"}, {"Message-ID", "<big@example.test>"}, {"MIME-Version", "1.0"},
    {"Content-Type", "multipart/related; boundary=\"b\""}};

// The body a batch run (with `args` more) writes for the message the front rebuilds from
// these fields and body.
std::string batch_body(const std::string &body, const std::string &args = {})
{
    testing::TempDir d;
    std::string msg;
    for (const auto &[name, value] : kBigFields) msg += name + ": " + value + "\r\n";
    auto p = testing::mimeuri(args + " " + testing::quote(d.file("in.eml", msg + "\r\n" + body)));
    REQUIRE(p.status == 0);
    const std::size_t at = p.out.find("\r\n\r\n");
    REQUIRE(at != std::string::npos);
    return p.out.substr(at + 4);
}

// A value of /proc/PID/status, in kB (VmHWM, VmRSS) or as counted (Threads); 0 if absent.
long status_of(pid_t pid, const std::string &key)
{
    std::istringstream in(testing::read_file("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
    return 0;
}

// The service's front: the supervisor's child with more than one thread (libmilter's).
pid_t front_of(pid_t supervisor)
{
    for (int tries = 0; tries < 200; ++tries) {
        GDir *dir = g_dir_open("/proc", 0, nullptr);
        pid_t found = 0;
        while (const char *name = dir ? g_dir_read_name(dir) : nullptr) {
            if (!g_ascii_isdigit(*name)) continue;
            // A process that ends between the listing and the read (any process of the
            // machine's) leaves a file that cannot be opened, or opens empty.
            try {
                const std::string stat = testing::read_file(std::string("/proc/") + name + "/stat");
                const auto close = stat.rfind(')');
                if (close == std::string::npos || close + 2 > stat.size()) continue;
                std::istringstream fields(stat.substr(close + 2));
                std::string state;
                pid_t ppid = 0;
                fields >> state >> ppid;
                const pid_t pid = std::atoi(name);
                if (ppid == supervisor && status_of(pid, "Threads") > 1) found = pid;
            } catch (...) {
                continue;
            }
        }
        if (dir) g_dir_close(dir);
        if (found) return found;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("the service has no front process");
    return 0;
}

// Sends the message on a connection of its own; the new body the service handed back.
std::string repaired_body(const std::string &socket, const std::string &body)
{
    MilterClient c(socket);
    const std::uint32_t steps = negotiate(c, 0x1fffff).second;
    auto got = send_message(c, steps, kBigFields, body);
    std::string out;
    for (std::size_t k = 0; k + 1 < got.size(); ++k)
        if (got[k].first == 'b') out += got[k].second;
    CHECK(got.back().first == 'a');
    return out;
}

} // namespace

TEST_CASE("the milter service's front holds no changed part whole: its peak memory stays bounded by part size x connections")
{
    // A 24 MiB HTML part changed by the references pass took the front to about 78 MB (the
    // new text held three times: read from the worker, the plan, its edit), six at once about
    // 390 MB. The worker now writes the new text beside the message and the front hands it
    // to the MTA a chunk at a time; the bodies are those a batch run writes.
    Service service({"--jobs=2"});
    REQUIRE(service.wait_for("milter listening on"));
    const pid_t front = front_of(service.pid());
    const std::string one = big_html_body(kBigMiB, "7bit", "\r\n", 1);
    CHECK(repaired_body(service.socket(), one) == batch_body(one));
    const long after_one = status_of(front, "VmHWM");
    MESSAGE("the front's peak RSS after one " << kBigMiB << " MiB part: " << after_one << " kB");

    // Four at once, each another spelling: quoted-printable, base64, LF line ends, several
    // changed parts.
    const std::vector<std::string> bodies = {big_html_body(kBigMiB, "quoted-printable", "\r\n", 1),
                                             big_html_body(kBigMiB, "base64", "\n", 1), big_html_body(kBigMiB, "7bit", "\n", 3),
                                             big_html_body(kBigMiB, "quoted-printable", "\n", 4)};
    std::vector<std::string> got(bodies.size());
    std::vector<std::thread> clients;
    for (std::size_t k = 0; k < bodies.size(); ++k)
        clients.emplace_back([&, k] { got[k] = repaired_body(service.socket(), bodies[k]); });
    for (auto &t : clients) t.join();
    const long after_four = status_of(front, "VmHWM");
    MESSAGE("the front's peak RSS after four more at once: " << after_four << " kB");
    for (std::size_t k = 0; k < bodies.size(); ++k) {
        CAPTURE(k);
        if (k != 1) CHECK(got[k].find("cid:img0@example.test\"") != std::string::npos); // not base64
        CHECK(got[k] == batch_body(bodies[k]));
    }
    // AddressSanitizer's quarantine keeps up to 256 MB of freed memory resident: the bound
    // is a release build's.
    if (!testing::sanitized) {
        CHECK(after_one < 40'000);
        CHECK(after_four < 40'000);
    }
}

TEST_CASE("the milter service's front holds no inlining part whole: --cid=inline's streamed body is read from beside the message")
{
    // The HTML part's text (the part but for the data: URLs' payloads) was held by the front
    // too: 138 MB of peak RSS for a 24 MiB quoted-printable part.
    Service service({"--jobs=1", "--cid=inline"});
    REQUIRE(service.wait_for("milter listening on"));
    const pid_t front = front_of(service.pid());
    const std::string body = big_html_body(kBigMiB, "quoted-printable", "\r\n", 2);
    const std::string got = repaired_body(service.socket(), body);
    CHECK(got.find("data:image/png;base64,iVBORw0KGgo=") != std::string::npos);
    CHECK(got == batch_body(body, "--cid=inline"));
    const long hwm = status_of(front, "VmHWM");
    MESSAGE("the front's peak RSS: " << hwm << " kB");
    if (!testing::sanitized) CHECK(hwm < 40'000); // as above: a release build's bound
}
