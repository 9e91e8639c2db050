#include "helpers.hh"
#include "source.hh"

#include <doctest/doctest.h>
#include <fcntl.h>
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
