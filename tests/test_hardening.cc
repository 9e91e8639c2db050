// Limits and signals: each limit has an option and a clear result; a terminated run leaves
// no file half-written.
#include "helpers.hh"

#include <doctest/doctest.h>

using testing::mimeuri;
using testing::quote;

namespace {

std::string related_with_refs(int parts)
{
    std::string m = "Message-ID: <h@x>\nContent-Type: multipart/mixed; boundary=b\n\n";
    for (int i = 1; i <= parts; ++i)
        m += "--b\nContent-Type: multipart/related; boundary=r" + std::to_string(i) + "\n\n--r" + std::to_string(i) +
             "\nContent-Type: text/html\n\n<img src=\"cid:<p" + std::to_string(i) + "@x>\">\n--r" + std::to_string(i) +
             "\nContent-Type: image/png\nContent-ID: <p" + std::to_string(i) + "@x>\n\nAAAA\n--r" + std::to_string(i) + "--\n";
    return m + "--b--\n";
}

} // namespace

TEST_CASE("--max-header-bytes: a larger header block is passed through and reported")
{
    testing::TempDir d;
    std::string m = "Subject: big\n";
    for (int i = 0; i < 100; ++i) m += "X-Filler-" + std::to_string(i) + ": " + std::string(40, 'f') + "\n";
    m += "Content-Type: text/html\n\n<img src=\"cid:<x@y>\">\n";
    std::string f = d.file("m.eml", m);
    auto r = mimeuri("--max-header-bytes=1000 --report=" + quote(d / "r") + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.out == m);
    CHECK(testing::read_file(d / "r").find("\"code\":\"header-limit\"") != std::string::npos);
    CHECK(mimeuri("--strict --max-header-bytes=1000 " + quote(f)).status == 65);
    // Within the limit, the same message is read normally.
    CHECK(testing::read_file(d / "r").find("\"message_id\":null") != std::string::npos);
    CHECK(mimeuri("--check " + quote(f)).out.find("header-limit") == std::string::npos);
}

TEST_CASE("--max-parts: parts past the limit are left untouched, the others processed")
{
    testing::TempDir d;
    std::string m = related_with_refs(6);
    std::string f = d.file("m.eml", m);
    auto r = mimeuri("--max-parts=8 --report=" + quote(d / "r") + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.out.find("cid:p1@x") != std::string::npos);   // early parts repaired
    CHECK(r.out.find("cid:<p6@x>") != std::string::npos); // late ones untouched
    CHECK(testing::read_file(d / "r").find("\"code\":\"part-limit\"") != std::string::npos);
}

TEST_CASE("--max-time: a message past the limit is passed through and reported, whatever --on-error says")
{
    testing::TempDir d;
    std::string html;
    for (int i = 0; i < 60000; ++i) html += "<img src=\"cid:&lt;p" + std::to_string(i % 7) + "@x&gt;\">\n";
    std::string m = "Message-ID: <t@x>\nContent-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n" +
                    html + "--r\nContent-Type: image/png\nContent-ID: <p1@x>\n\nAAAA\n--r--\n";
    std::string f = d.file("m.eml", m);
    auto r = mimeuri("--max-time=0.001 --on-error=tempfail --report=" + quote(d / "r") + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.out == m);
    std::string rep = testing::read_file(d / "r");
    CHECK(rep.find("\"code\":\"limit\"") != std::string::npos);
    CHECK(rep.find("time limit") != std::string::npos);
    CHECK(rep.find("\"changed\":false") != std::string::npos);
    CHECK(mimeuri("--max-time=0.001 --strict " + quote(f)).status == 65);
    CHECK(mimeuri("--max-time=0").status == 64);
}

TEST_CASE("SIGTERM during -o: exit 75, the target untouched, no temporary file left")
{
    testing::TempDir d;
    std::string target = d.file("target.eml", "previous\n");
    // mimeuri waits on a FIFO that stays open; by then -o has its temporary file. Only this
    // process is signalled (other tests run mimeuri at the same time).
    auto r = testing::sh("cd " + quote(d.path) + " && mkfifo in.fifo && (" + testing::bin() +
                         " -o target.eml < in.fifo 2>err & pid=$!; exec 3>in.fifo; sleep 0.5; kill -TERM $pid; "
                         "wait $pid; echo $?)");
    CHECK(std::stoi(r.out) == 75);
    CHECK(testing::read_file(target) == "previous\n");
    CHECK(testing::sh("ls -A " + quote(d.path) + " | grep -c mimeuri- || true").out == "0\n");
    CHECK(testing::read_file(d / "err").find("terminated by a signal") != std::string::npos);
}

TEST_CASE("SIGKILL during --in-place: the file is the original or the whole rewrite, never a mix")
{
    testing::TempDir d;
    std::string m = related_with_refs(3);
    std::string big = m.substr(0, m.size() - 6) + "--b\nContent-Type: application/octet-stream\n\n" +
                      std::string(60u << 20, 'x') + "\n--b--\n";
    std::string expected = mimeuri("--format=message -", d.file("src.eml", big), false).out;
    REQUIRE(expected != big);
    int killed = 0; // runs the kill caught while --in-place was still at work
    for (int delay_ms : {50, 150, 400}) {
        std::string f = d.file("m.eml", big);
        auto r = testing::sh(testing::bin() + " --in-place " + quote(f) + " 2>/dev/null & pid=$!; sleep " +
                             std::to_string(delay_ms / 1000.0) + "; kill -KILL $pid 2>/dev/null && echo killed; wait $pid 2>/dev/null; true");
        killed += r.out == "killed\n";
        std::string now = testing::read_file(f);
        CHECK((now == big || now == expected));
    }
    CHECK(killed > 0); // else no kill fell inside a rewrite, and the checks above prove nothing
    // Left alone, --in-place does write the rewrite: the test fails if it never wrote at all.
    std::string f = d.file("m.eml", big);
    REQUIRE(testing::sh(testing::bin() + " --in-place " + quote(f)).status == 0);
    CHECK(testing::read_file(f) == expected);
}

TEST_CASE("a full file system: -o and --in-place exit 75 and leave every file as it was")
{
    testing::TempDir d;
    std::string fs = d / "small";
    if (testing::sh("mkdir -p " + quote(fs) + " && mount -t tmpfs -o size=400k tmpfs " + quote(fs) + " 2>/dev/null").status != 0) {
        return testing::skip("cannot mount a tmpfs here (not root?): the full-disk test");
    }
    struct Unmount {
        std::string path;
        ~Unmount() { testing::sh("umount " + testing::quote(path) + " 2>/dev/null"); }
    } unmount{fs};
    std::string m = "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<img src=\"cid:<a@x>\">\n"
                    "--r\nContent-Type: application/octet-stream\nContent-ID: <a@x>\n\n" + std::string(200000, 'z') + "\n--r--\n";
    std::string big = d.file("big.eml", m);
    // 400 KiB: room for the 100 KB target and the 200 KB original below, not for a second copy.
    // -o into the full file system: the temporary file cannot be written.
    testing::write_file(fs + "/target.eml", std::string(100000, 'p'));
    std::string inplace = fs + "/m.eml";
    testing::write_file(inplace, m);
    auto o = mimeuri("-o " + quote(fs + "/target.eml") + " " + quote(big));
    CHECK(o.status == 75);
    CHECK(testing::read_file(fs + "/target.eml") == std::string(100000, 'p'));
    // --in-place on the full file system: the original stays whole.
    auto r = mimeuri("--in-place " + quote(inplace));
    CHECK(r.status == 75);
    CHECK(testing::read_file(inplace) == m);
    CHECK(testing::sh("ls -A " + quote(fs) + " | grep -c mimeuri- || true").out == "0\n");
}

TEST_CASE("--in-place rewrites regular files only")
{
    testing::TempDir d;
    REQUIRE(testing::sh("mkfifo " + quote(d / "fifo")).status == 0);
    d.file("m.eml", "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<img src=\"cid:<a@x>\">\n"
                    "--r\nContent-Type: image/png\nContent-ID: <a@x>\n\nAAAA\n--r--\n");
    auto r = testing::sh("cd " + quote(d.path) + " && (cat m.eml > fifo &) && " +
                         testing::bin() + " --in-place fifo 2>err; echo $?");
    CHECK(std::stoi(r.out) == 73);
    CHECK(testing::sh("test -p " + quote(d / "fifo") + " && echo fifo").out == "fifo\n");
}
