#include "helpers.hh"
#include "fdio.hh"
#include "mbox.hh"
#include "source.hh"

#include <doctest/doctest.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <optional>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace mimeuri;

static std::string all_bytes(const Source &s)
{
    auto r = s.slice(0, s.size());
    REQUIRE(r.ok());
    return *r;
}

TEST_CASE("a regular file is read in place")
{
    testing::TempDir d;
    std::string p = d.file("m.eml", "Subject: x\n\nbody\n");
    auto s = Source::open_path(p, 1024);
    REQUIRE(s.ok());
    CHECK(s->size() == 17);
    CHECK_FALSE(s->in_memory());
    CHECK_FALSE(s->spooled());
    CHECK(all_bytes(*s) == "Subject: x\n\nbody\n");
}

TEST_CASE("missing inputs and directories are EX_NOINPUT")
{
    auto s = Source::open_path("/nonexistent/mimeuri/x.eml", 1024);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Code::NoInput);
    testing::TempDir d;
    auto dir = Source::open_path(d.path, 1024);
    REQUIRE_FALSE(dir.ok());
    CHECK(dir.error().code == Code::NoInput);
}

TEST_CASE("a pipe is held in memory below the threshold and spooled above it")
{
    std::string data;
    for (int i = 0; i < 5000; ++i) data += "line " + std::to_string(i) + "\r\n";
    for (std::size_t threshold : {std::size_t(1) << 20, std::size_t(100), std::size_t(0)}) {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        // The data fits in the pipe buffer? Not necessarily: write from a child.
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            std::size_t off = 0;
            while (off < data.size()) {
                ssize_t n = write(fds[1], data.data() + off, std::min<std::size_t>(777, data.size() - off));
                if (n <= 0) _exit(1);
                off += static_cast<std::size_t>(n);
            }
            _exit(0);
        }
        close(fds[1]);
        auto s = Source::read_fd(fds[0], "-", threshold);
        close(fds[0]);
        int st = 0;
        waitpid(pid, &st, 0);
        REQUIRE(s.ok());
        CHECK(s->size() == static_cast<std::int64_t>(data.size()));
        CHECK(s->spooled() == (threshold < data.size()));
        CHECK(all_bytes(*s) == data);
        // Reads past the end are short, not errors.
        char buf[16];
        auto n = s->read_at(s->size() - 3, buf, sizeof buf);
        REQUIRE(n.ok());
        CHECK(*n == 3);
    }
}

TEST_CASE("what splice cannot move to the spool (not a pipe) is read and written instead")
{
    // A pipe's rest goes to the spool by splice(2); from a socket or a file, splice fails
    // with EINVAL, and the bytes must come through all the same.
    std::string data;
    for (int i = 0; i < 40000; ++i) data += "row " + std::to_string(i) + "\n";
    testing::TempDir d;
    std::string p = d.file("in.txt", data);
    int fd = ::open(p.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    auto s = Source::read_fd(fd, "file", 1000);
    ::close(fd);
    REQUIRE(s.ok());
    CHECK(s->spooled());
    CHECK(all_bytes(*s) == data);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    std::thread writer([&] {
        (void)write_all(sv[1], data.data(), data.size());
        ::close(sv[1]);
    });
    auto t = Source::read_fd(sv[0], "socket", 1000);
    writer.join();
    ::close(sv[0]);
    REQUIRE(t.ok());
    CHECK(t->spooled());
    CHECK(all_bytes(*t) == data);
}

TEST_CASE("a reopened in-memory source stays readable after its original is gone")
{
    // Issue 13, defect 8: reopen() borrowed the original's buffer without a reference.
    std::string text(1 << 20, 'm');
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::thread writer([&] {
        (void)write_all(p[1], text.data(), text.size());
        ::close(p[1]);
    });
    auto original = std::make_optional(Source::read_fd(p[0], "-", 8u << 20));
    writer.join();
    ::close(p[0]);
    REQUIRE((*original)->in_memory());
    auto again = (*original)->reopen();
    REQUIRE(again.ok());
    original.reset();
    std::string reuse(1 << 20, 'X'); // the freed block, if it were freed, is likely reused here
    CHECK(all_bytes(*again) == text);
    CHECK(std::string_view(again->memory(), 16) == std::string_view(text.data(), 16));
    CHECK(reuse.size() == text.size());
}

TEST_CASE("a --spool-threshold of 4 GiB or more spools a piped input past 4 GiB instead of overflowing")
{
    // Issue 13, defect 6: GByteArray's guint length wrapped past 4 GiB.
    if (testing::sanitized) {
        MESSAGE("skipped under the sanitizers: 4 GiB through a pipe");
        return;
    }
    const std::uint64_t size = (std::uint64_t{4} << 30) + (1 << 20);
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::thread writer([&] {
        std::string block(1 << 20, 'a');
        for (std::uint64_t done = 0; done < size; done += block.size())
            if (!write_all(p[1], block.data(), block.size())) break;
        ::close(p[1]);
    });
    auto s = Source::read_fd(p[0], "-", std::size_t{5} << 30);
    writer.join();
    ::close(p[0]);
    REQUIRE(s.ok());
    CHECK(s->size() == static_cast<std::int64_t>(size));
    CHECK(s->spooled());
    auto tail = s->slice(s->size() - 3, s->size());
    REQUIRE(tail.ok());
    CHECK(*tail == "aaa");
}

TEST_CASE("a window inside one of the last two blocks read is served from it, without a read of its own")
{
    testing::TempDir d;
    const std::string before(3000, 'a'), after(3000, 'b');
    std::string p = d.file("box", before);
    auto s = Source::open_path(p, 0);
    REQUIRE(s.ok());
    auto window_bytes = [&](std::int64_t b, std::int64_t e) {
        auto w = Source::window(*s, b, e);
        REQUIRE(w.ok());
        return std::string(w->view(b, e));
    };
    auto block = [&](std::int64_t off, std::size_t len) {
        auto r = s->read_block(off, len);
        REQUIRE(r.ok());
        std::string bytes(static_cast<const char *>(g_bytes_get_data(*r, nullptr)), g_bytes_get_size(*r));
        g_bytes_unref(*r);
        return bytes;
    };
    CHECK(block(0, 1000) == before.substr(0, 1000));
    CHECK(block(1000, 1000) == before.substr(1000, 1000));
    // The file's bytes change under the source (as no mail file should): what comes from a
    // block is what was read then, what is read now is what is there now.
    testing::write_file(p, after);
    CHECK(window_bytes(10, 990) == before.substr(10, 980));    // in the older block
    CHECK(window_bytes(1000, 2000) == before.substr(1000, 1000)); // in the newer one, whole
    CHECK(window_bytes(900, 1100) == after.substr(900, 200));   // across the two: read
    CHECK(window_bytes(2000, 2100) == after.substr(2000, 100)); // past them: read
    CHECK(block(2000, 5000) == after.substr(2000, 1000));      // short at the end of input
    CHECK(window_bytes(10, 990) == after.substr(10, 980));     // the oldest block is let go
    CHECK(window_bytes(2500, 3000) == after.substr(2500, 500)); // in the newest block
    // A window that the file no longer holds whole is an error, not bytes that were never read.
    testing::write_file(p, "short");
    CHECK_FALSE(Source::window(*s, 1500, 2500).ok()); // across two blocks: read
}

namespace {

std::string mbox_message(int i, std::size_t lines)
{
    std::string m = "From a@example.org Mon Jan  1 00:00:00 2024\nSubject: m" + std::to_string(i) + "\n\n";
    for (std::size_t k = 0; k < lines; ++k) m += "line " + std::to_string(k) + " of message " + std::to_string(i) + "\n";
    return m + "\n";
}

std::vector<Segment> split_all(const Source &s)
{
    auto r = split(s, Format::Mbox);
    REQUIRE(r.ok());
    return *r;
}

bool same(const std::vector<Segment> &a, const std::vector<Segment> &b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].begin != b[i].begin || a[i].msg_begin != b[i].msg_begin || a[i].msg_end != b[i].msg_end || a[i].next != b[i].next)
            return false;
    return true;
}

} // namespace

TEST_CASE("a piped mbox past the threshold is split as it arrives, not after its sender is done")
{
    // Two messages of about 700 KB, the third's From line and 100 KB of it; then the sender
    // waits until the test has split the first two (at most 10 s) and sends the rest.
    const std::string first = mbox_message(1, 22000) + mbox_message(2, 22000);
    const std::string third = mbox_message(3, 6000);
    const std::string data = first + third;
    const std::size_t pause = first.size() + 100000;
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::atomic<bool> split_two{false};
    std::thread sender([&] {
        write_all(fds[1], data.data(), pause);
        for (int k = 0; k < 1000 && !split_two; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        write_all(fds[1], data.data() + pause, data.size() - pause);
        ::close(fds[1]);
    });
    auto s = Source::read_fd(fds[0], "-", 1 << 20);
    ::close(fds[0]); // the spool reads a duplicate of it
    REQUIRE(s.ok());
    CHECK(s->spooled());
    CHECK(s->known_size() == -1); // returned past the threshold, before the end
    Splitter splitter(*s, Format::Mbox);
    std::vector<Segment> segs;
    while (segs.size() < 2) {
        auto r = splitter.step(segs, 1024);
        REQUIRE(r.ok());
        REQUIRE_FALSE(*r);
    }
    CHECK(s->known_size() == -1); // both split while the sender still held the rest
    CHECK(segs[1].next == static_cast<std::int64_t>(first.size()));
    auto window = Source::window(*s, segs[0].msg_begin, segs[0].msg_end);
    REQUIRE(window.ok());
    CHECK(window->view(segs[0].msg_begin, segs[0].msg_end) ==
          std::string_view(first).substr(static_cast<std::size_t>(segs[0].msg_begin),
                                         static_cast<std::size_t>(segs[0].msg_end - segs[0].msg_begin)));
    split_two = true;
    for (;;) {
        auto r = splitter.step(segs, 1024);
        REQUIRE(r.ok());
        if (*r) break;
    }
    sender.join();
    CHECK(s->size() == static_cast<std::int64_t>(data.size()));
    CHECK(s->known_size() == static_cast<std::int64_t>(data.size()));
    CHECK(all_bytes(*s) == data);
    CHECK(same(segs, split_all(Source::from_bytes(data, "-"))));
    // A handle reopened while the input arrives, and one after, read the same bytes.
    auto again = s->reopen();
    REQUIRE(again.ok());
    CHECK(all_bytes(*again) == data);
}

TEST_CASE("a pipe's input reopened while it arrives waits for it as the original does")
{
    const std::string data = mbox_message(1, 60000);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::atomic<bool> go{false};
    std::thread sender([&] {
        write_all(fds[1], data.data(), 1200000);
        for (int k = 0; k < 1000 && !go; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        write_all(fds[1], data.data() + 1200000, data.size() - 1200000);
        ::close(fds[1]);
    });
    auto s = Source::read_fd(fds[0], "-", 1 << 20);
    ::close(fds[0]);
    REQUIRE(s.ok());
    auto other = s->reopen();
    REQUIRE(other.ok());
    CHECK(other->known_size() == -1);
    go = true;
    CHECK(other->size() == static_cast<std::int64_t>(data.size()));
    CHECK(all_bytes(*other) == data);
    CHECK(all_bytes(*s) == data);
    sender.join();
    // Reopened after the spool ended, before anyone asked the original its size: the handle
    // has the whole input, not what the original had seen (a run's stdin is such a handle).
    int more[2];
    REQUIRE(::pipe(more) == 0);
    std::thread second([&] {
        write_all(more[1], data.data(), data.size());
        ::close(more[1]);
    });
    auto t = Source::read_fd(more[0], "-", 1 << 20);
    ::close(more[0]);
    REQUIRE(t.ok());
    second.join();
    for (int k = 0; k < 1000 && t->arrived() < static_cast<std::int64_t>(data.size()); ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // (the thread marks the end after the last byte)
    auto late = t->reopen();
    REQUIRE(late.ok());
    CHECK(late->known_size() == static_cast<std::int64_t>(data.size()));
    CHECK(all_bytes(*late) == data);
}

TEST_CASE("a spool that fails part way (the file size limit) fails every read past what arrived")
{
    // In a child: RLIMIT_FSIZE stops the spool file at 2 MiB (EFBIG; SIGXFSZ ignored).
    const std::string data = mbox_message(1, 150000) + mbox_message(2, 10);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim {2u << 20, 2u << 20};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        int fds[2];
        if (::pipe(fds) != 0) ::_exit(10);
        std::thread sender([&] {
            write_all(fds[1], data.data(), data.size());
            ::close(fds[1]);
        });
        auto s = Source::read_fd(fds[0], "-", 1 << 20);
        if (!s) ::_exit(11);
        auto whole = s->settle();
        int code = 0;
        if (whole || whole.error().code != Code::TempFail || whole.error().message.find("cannot spool -") != 0) code = 12;
        else if (s->size() > (2 << 20)) code = 13;              // what arrived, no more
        else if (auto head = s->slice(0, 1000); !head || *head != data.substr(0, 1000)) code = 14; // what arrived is read
        else if (split(*s, Format::Mbox).ok()) code = 15;        // a split reads past it: fails
        ::signal(SIGPIPE, SIG_IGN);
        ::close(fds[0]); // the sender's write fails (EPIPE) and it returns
        sender.join();
        ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
