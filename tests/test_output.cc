#include "helpers.hh"
#include "output.hh"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

using namespace mimeuri;

TEST_CASE("an atomic sink replaces its target only on commit")
{
    testing::TempDir d;
    std::string target = d.file("out.eml", "old");
    chmod(target.c_str(), 0640);
    {
        auto s = Sink::atomic(target);
        REQUIRE(s.ok());
        REQUIRE(s->write("new").ok());
        CHECK(testing::read_file(target) == "old");
        // dropped without commit: the target stays, no temporary file is left
    }
    CHECK(testing::read_file(target) == "old");
    auto s = Sink::atomic(target);
    REQUIRE(s.ok());
    REQUIRE(s->write("new").ok());
    REQUIRE(s->commit().ok());
    CHECK(testing::read_file(target) == "new");
    struct stat st {};
    REQUIRE(stat(target.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    auto ls = testing::sh("ls -A " + testing::quote(d.path));
    CHECK(ls.out == "out.eml\n");
}

TEST_CASE("a full disk is a temporary failure")
{
    int fd = open("/dev/full", O_WRONLY);
    REQUIRE(fd >= 0);
    Sink s = Sink::to_fd(fd, "/dev/full");
    auto r = s.write("x");
    close(fd);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::TempFail);
}

TEST_CASE("an atomic sink in a missing directory cannot be created")
{
    auto s = Sink::atomic("/nonexistent/dir/out.eml");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Code::CantCreate);
}

TEST_CASE("write_spliced copies around unordered edits")
{
    Source src = Source::from_bytes("0123456789", "t");
    Edit a{2, 4, "ab"}, b{7, 7, "+"}, c{0, 1, ""};
    testing::TempDir d;
    auto s = Sink::atomic(d / "o");
    REQUIRE(s.ok());
    REQUIRE(write_spliced(*s, src, 0, src.size(), {&b, &a, &c}).ok());
    REQUIRE(s->commit().ok());
    CHECK(testing::read_file(d / "o") == "1ab456+789");
}

TEST_CASE("a symbolic link stays a link; its target is replaced")
{
    testing::TempDir d;
    std::string target = d.file("real.eml", "old");
    std::string link = d / "link.eml";
    REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
    auto s = Sink::to_path(link);
    REQUIRE(s.ok());
    REQUIRE(s->write("new").ok());
    REQUIRE(s->commit().ok());
    struct stat st {};
    REQUIRE(lstat(link.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK(testing::read_file(target) == "new");
}

TEST_CASE("paths under /dev and /proc are written into, never replaced")
{
    testing::TempDir d;
    std::string target = d.file("shared.txt", "earlier;");
    int fd = open(target.c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    std::string via_proc = "/proc/self/fd/" + std::to_string(fd);
    auto s = Sink::to_path(via_proc);
    REQUIRE(s.ok());
    REQUIRE(s->write("later").ok());
    REQUIRE(s->commit().ok());
    close(fd);
    CHECK(testing::read_file(target) == "earlier;later");
    struct stat st {};
    REQUIRE(lstat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    auto n = Sink::to_path("/dev/null");
    REQUIRE(n.ok());
    REQUIRE(n->commit().ok());
    REQUIRE(lstat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
}

// Issue 53: standard output into a pipe (mimeuri | ..., the pipe filter) is given 1 MiB of
// room, so that a run of unchanged messages goes in with a few calls instead of one (and a
// wake of the reader) each 64 KiB; the bytes are the same. On the parent the pipe kept its
// 64 KiB.
TEST_CASE("a sink on a pipe gives the pipe 1 MiB of room, and copies through it as read")
{
    const std::string max = testing::read_file("/proc/sys/fs/pipe-max-size");
    if (max.empty() || std::stol(max) < (1 << 20)) return testing::skip("pipe-max-size below 1 MiB here");
    int p[2];
    REQUIRE(::pipe(p) == 0);
    REQUIRE(::fcntl(p[1], F_SETPIPE_SZ, 65536) >= 0);
    REQUIRE(::fcntl(p[1], F_GETPIPE_SZ) == 65536);
    Sink s = Sink::to_fd(p[1], "pipe");
    CHECK(::fcntl(p[1], F_GETPIPE_SZ) >= (1 << 20));
    // Never shrunk: a pipe with more room keeps it.
    int q[2];
    REQUIRE(::pipe(q) == 0);
    if (::fcntl(q[1], F_SETPIPE_SZ, 1 << 20) >= 0) {
        const int before = ::fcntl(q[1], F_GETPIPE_SZ);
        Sink t = Sink::to_fd(q[1], "pipe");
        CHECK(::fcntl(q[1], F_GETPIPE_SZ) == before);
    }
    ::close(q[0]);
    ::close(q[1]);
    // 3 MiB from a file, through the pipe, read by another thread: the same bytes.
    std::string bytes(3 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 23);
    testing::TempDir dir;
    const std::string path = dir.path + "/in";
    testing::write_file(path, bytes);
    auto src = Source::open_path(path, 1 << 20);
    REQUIRE(src);
    std::string got;
    std::thread reader([&] {
        char buf[65536];
        for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    });
    CHECK(s.copy(*src, 0, static_cast<std::int64_t>(bytes.size())));
    ::close(p[1]);
    reader.join();
    ::close(p[0]);
    CHECK(got == bytes);
}
