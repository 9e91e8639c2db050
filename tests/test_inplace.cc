// --in-place where mail lives (issues 12 and 18): users' files rewritten by root, live
// mboxes an MDA appends to, Maildirs an IMAP server renames in.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <string>
#include <unistd.h>

using testing::mimeuri;
using testing::quote;

namespace {

// A message --cid=repair changes (cid:<a@x> -> cid:a@x).
const std::string fixme = "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n"
                          "<img src=\"cid:<a@x>\">\n--r\nContent-Type: image/png\nContent-ID: <a@x>\n\nAAAA\n--r--\n";

std::string fixed()
{
    std::string f = fixme;
    f.replace(f.find("cid:<a@x>"), 9, "cid:a@x");
    return f;
}

std::string stat_of(const std::string &path) { return testing::sh("stat -c %u:%g:%a:%h " + quote(path)).out; }

void make_maildir(const std::string &dir)
{
    for (const char *sub : {"cur", "new", "tmp"}) REQUIRE(testing::sh("mkdir -p " + quote(dir + "/" + sub)).status == 0);
}

} // namespace

TEST_CASE("the temporary file is born 0600 and given the final owner and mode before any byte is written")
{
    if (::geteuid() != 0 || testing::sh("command -v strace").status != 0) return;
    testing::TempDir d;
    REQUIRE(testing::sh("chmod 0755 " + quote(d.path)).status == 0);
    std::string f = d.file("mbox.eml", fixme);
    REQUIRE(testing::sh("chown 1234:1234 " + quote(f) + " && chmod 0600 " + quote(f)).status == 0);
    std::string trace = d / "trace";
    for (const std::string &args : {"--in-place " + quote(f), "-o " + quote(d / "out.eml") + " " + quote(f)}) {
        CAPTURE(args);
        auto r = testing::sh("umask 022; strace -f -o " + quote(trace) + " -e trace=openat,fchmod,fchown,write,sendfile " +
                             testing::bin() + " --cid=repair " + args + " 2>&1");
        REQUIRE(r.status == 0);
        std::string t = testing::read_file(trace);
        auto created = t.find(".mimeuri-");
        REQUIRE(created != std::string::npos);
        std::string open_line = t.substr(t.rfind('\n', created) + 1, t.find('\n', created) - t.rfind('\n', created) - 1);
        CAPTURE(open_line);
        CHECK(open_line.find("O_CREAT") != std::string::npos);
        CHECK(open_line.find(", 0600)") != std::string::npos);
        // The mode is set before the first write to the new file (the only writes after
        // its creation go to it: mimeuri writes nothing else on success).
        auto fchmod_at = t.find("fchmod(", created);
        auto write_at = std::min(t.find("write(", created), t.find("sendfile(", created));
        REQUIRE(fchmod_at != std::string::npos);
        CHECK(fchmod_at < write_at);
    }
    CHECK(testing::read_file(f) == fixed());
}

TEST_CASE("--in-place as root keeps the owner, group and mode of a user's file")
{
    if (::geteuid() != 0) return;
    testing::TempDir d;
    make_maildir(d / "Maildir");
    std::string a = d.file("Maildir/cur/1700000000.1.host:2,S", fixme);
    std::string b = d.file("mbox", "From a@b Sat Jan  1 00:00:00 2000\n" + fixme);
    REQUIRE(testing::sh("chown 1234:1234 " + quote(a) + " && chmod 0600 " + quote(a)).status == 0);
    REQUIRE(testing::sh("chown 1234:8 " + quote(b) + " && chmod 0660 " + quote(b)).status == 0);
    auto r = testing::sh("umask 077; " + testing::bin() + " --in-place --cid=repair " + quote(d / "Maildir") + " " + quote(b) + " 2>&1");
    CHECK(r.status == 0);
    CHECK(r.out == "");
    CHECK(testing::read_file(a) == fixed());
    CHECK(stat_of(a) == "1234:1234:600:1\n");
    CHECK(stat_of(b) == "1234:8:660:1\n");
}

TEST_CASE("--in-place refuses a file with several hard links: never split silently")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", fixme);
    REQUIRE(testing::sh("ln " + quote(f) + " " + quote(d / "link.eml")).status == 0);
    for (const char *policy : {"pass", "tempfail"}) {
        CAPTURE(policy);
        auto r = mimeuri("--in-place --cid=repair --on-error=" + std::string(policy) + " " + quote(f));
        CHECK(r.status == (std::string(policy) == "pass" ? 0 : 75));
        CHECK(r.err.find("hard links") != std::string::npos);
        CHECK(r.err.find("left as it was") != std::string::npos);
        CHECK(testing::read_file(f) == fixme);
        CHECK(testing::sh("stat -c %h " + quote(f)).out == "2\n");
    }
}

TEST_CASE("--in-place refuses a read-only file unless --force-read-only")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", fixme);
    REQUIRE(testing::sh("chmod 0444 " + quote(f)).status == 0);
    auto r = mimeuri("--in-place --cid=repair " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.err.find("read-only") != std::string::npos);
    CHECK(r.err.find("--force-read-only") != std::string::npos);
    CHECK(testing::read_file(f) == fixme);
    auto t = mimeuri("--in-place --cid=repair --on-error=tempfail " + quote(f));
    CHECK(t.status == 75);
    CHECK(testing::read_file(f) == fixme);
    auto forced = mimeuri("--in-place --cid=repair --force-read-only " + quote(f));
    CHECK(forced.status == 0);
    CHECK(forced.err == "");
    CHECK(testing::read_file(f) == fixed());
    CHECK(testing::sh("stat -c %a " + quote(f)).out == "444\n");
}
