// Hostile input (issue 11): crafted messages an outside sender or a local user could send.
// Each case checks the promised result: structure unchanged, parts intact, limits held.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using testing::mimeuri;
using testing::quote;

namespace {

// A message whose HTML references one image: --cid=extract writes DIR/N/index.html and it.
const std::string extractable = "Message-ID: <x1@x>\nContent-Type: multipart/related; boundary=r\n\n"
                                "--r\nContent-Type: text/html\n\n<img src=\"cid:a@b\">\n"
                                "--r\nContent-Type: image/png\nContent-Disposition: inline; filename=\"pic.png\"\n"
                                "Content-ID: <a@b>\n\nAAAA\n--r--\n";

std::string listing(const std::string &dir)
{
    return testing::sh("cd " + quote(dir) + " && find . | sort").out;
}

} // namespace

TEST_CASE("extract: a symbolic link planted at DIR/1 is refused, nothing is written outside DIR")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", extractable);
    std::string dir = d / "shared", outside = d / "outside";
    REQUIRE(testing::sh("mkdir " + quote(dir) + " " + quote(outside) + " && ln -s " + quote(outside) + " " +
                        quote(dir + "/1")).status == 0);
    for (const char *policy : {"pass", "tempfail"}) {
        auto r = mimeuri("--on-error=" + std::string(policy) + " --cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
        CAPTURE(policy);
        CHECK(r.status == (std::string(policy) == "pass" ? 0 : 75));
        CHECK(r.out == (std::string(policy) == "pass" ? extractable : std::string()));
        CHECK(r.err.find("symbolic link") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(listing(outside) == ".\n");
    }
    // A per-message folder that is a plain file is refused too.
    std::string dir2 = d / "shared2";
    REQUIRE(testing::sh("mkdir " + quote(dir2) + " && echo x > " + quote(dir2 + "/1")).status == 0);
    auto r = mimeuri("--cid=extract --extract-dir=" + quote(dir2) + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.err.find("not a directory") != std::string::npos);
    CHECK(testing::read_file(dir2 + "/1") == "x\n");
}

TEST_CASE("extract: a symbolic link planted for a file name inside DIR/1 is never followed")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", extractable);
    std::string dir = d / "shared", outside = d / "outside";
    for (const char *name : {"index.html", "pic.png"}) {
        CAPTURE(name);
        testing::sh("rm -rf " + quote(dir) + " " + quote(outside));
        REQUIRE(testing::sh("mkdir -p " + quote(dir + "/1") + " " + quote(outside) + " && ln -s " +
                            quote(outside + "/victim") + " " + quote(dir + "/1/" + name)).status == 0);
        auto r = mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
        CHECK(r.status == 0);
        CHECK(r.out == extractable);
        CHECK(r.err.find("cannot create") != std::string::npos);
        CHECK(listing(outside) == ".\n");
        // What this message wrote before the refusal is removed: only the planted link stays.
        CHECK(listing(dir) == ".\n./1\n./1/" + std::string(name) + "\n");
    }
    // The extract folder itself given as a symbolic link is refused.
    testing::sh("rm -rf " + quote(dir) + " && ln -s " + quote(outside) + " " + quote(dir));
    auto r = mimeuri("--cid=extract --extract-dir=" + quote(dir) + " " + quote(f));
    CHECK(r.err.find("symbolic link") != std::string::npos);
    CHECK(listing(outside) == ".\n");
}

TEST_CASE("extract: bidirectional and other format or control characters in file names are replaced")
{
    testing::TempDir d;
    std::string m = extractable;
    // evil<U+202E>gnp.exe shows as "evilexe.png"; also U+2066, U+200F, U+061C, U+0085, U+FEFF.
    m.replace(m.find("pic.png"), 7, "evil\xE2\x80\xAEgnp.exe\xE2\x81\xA6\xE2\x80\x8F\xD8\x9C\xC2\x85\xEF\xBB\xBFx");
    std::string f = d.file("m.eml", m);
    auto r = mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(listing(d / "out") == ".\n./1\n./1/evil_gnp.exe_____x\n./1/index.html\n");
    CHECK(testing::read_file(d / "out/1/index.html").find("src=\"evil_gnp.exe_____x\"") != std::string::npos);
}
