#include "helpers.hh"
#include "output.hh"

#include <doctest/doctest.h>
#include <fcntl.h>
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
