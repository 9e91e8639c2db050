// mimeuri --check-config, run as an admin runs it before a start or a reload: every problem
// one line on standard error and exit 78 (EX_CONFIG), or one line on standard output and 0.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>

#include <sys/stat.h>
#include <unistd.h>

using testing::mimeuri;
using testing::quote;

namespace {

// The lines of a text.
std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    for (std::size_t pos = 0; pos < text.size();) {
        auto nl = text.find('\n', pos);
        out.push_back(text.substr(pos, nl - pos));
        pos = nl == std::string::npos ? text.size() : nl + 1;
    }
    return out;
}

} // namespace

TEST_CASE("--check-config: 0 and one line on standard output when the run or the service would start")
{
    testing::TempDir d;
    auto run = mimeuri("--no-config --report=" + quote(d / "r.jsonl") + " --check-config");
    CHECK(run.status == 0);
    CHECK(run.err.empty());
    CHECK(run.out == "mimeuri: the configuration is good: a run would start\n");
    const std::string sock = "unix:" + d / "milter.sock";
    auto service = mimeuri("--no-config --milter=" + quote(sock) + " --pidfile=" + quote(d / "pid") + " --check-config");
    CHECK(service.status == 0);
    CHECK(service.err.empty());
    CHECK(service.out == "mimeuri: the configuration is good: the service would start on " + sock + "\n");
    for (const char *tcp : {"inet:8891@127.0.0.1", "inet:8891", "inet6:8891@::1"}) {
        CAPTURE(tcp);
        CHECK(mimeuri(std::string("--no-config --milter=") + tcp + " --check-config").status == 0);
    }
    // Nothing was written or opened for good.
    CHECK_FALSE(g_file_test((d / "r.jsonl").c_str(), G_FILE_TEST_EXISTS));
    CHECK_FALSE(g_file_test((d / "pid").c_str(), G_FILE_TEST_EXISTS));
    CHECK_FALSE(g_file_test((d / "milter.sock").c_str(), G_FILE_TEST_EXISTS));
}

TEST_CASE("--check-config: every problem it can know before a start, one line each, exit 78")
{
    testing::TempDir d;
    const std::string missing = d / "no-such-folder";
    struct Case {
        std::string args;
        std::string line; // the whole line expected on standard error
    };
    const std::vector<Case> cases = {
        {"--milter=bogus:foo", "mimeuri: --milter=bogus:foo: unknown socket type (the form is unix:/path, "
                               "local:/path, inet:PORT@HOST or inet6:PORT@HOST)"},
        {"--milter=unix:relative.sock", "mimeuri: --milter=unix:relative.sock: the socket's path must be absolute "
                                        "(the form is unix:/path, local:/path, inet:PORT@HOST or inet6:PORT@HOST)"},
        {"--milter=unix:" + missing + "/m.sock",
         "mimeuri: --milter=unix:" + missing + "/m.sock: its folder " + missing + ": No such file or directory"},
        {"--milter=unix:/" + std::string(120, 'x'), "mimeuri: --milter=unix:/" + std::string(120, 'x') +
                                                        ": the socket's path is longer than 107 bytes"},
        {"--milter=local:" + d.file("plain", "x"), "mimeuri: --milter=local:" + d / "plain" + ": " + d / "plain" +
                                                       " exists and is not a socket"},
        {"--milter=inet:99999@127.0.0.1", "mimeuri: --milter=inet:99999@127.0.0.1: port 99999 is not between 1 and 65535"},
        {"--milter=inet:0@127.0.0.1", "mimeuri: --milter=inet:0@127.0.0.1: port 0 is not between 1 and 65535"},
        {"--milter=inet:@127.0.0.1", "mimeuri: --milter=inet:@127.0.0.1: no port (the form is unix:/path, "
                                     "local:/path, inet:PORT@HOST or inet6:PORT@HOST)"},
        {"--milter=inet:no-such-service-name@127.0.0.1",
         "mimeuri: --milter=inet:no-such-service-name@127.0.0.1: port no-such-service-name is no number and no "
         "service name /etc/services knows"},
        {"--milter=inet:8891@", "mimeuri: --milter=inet:8891@: no host after '@' (the form is unix:/path, "
                                "local:/path, inet:PORT@HOST or inet6:PORT@HOST)"},
        {"--milter=inet:8891@no-such-host.invalid", ""}, // the resolver's own words: checked below
        {"--milter=unix:" + d / "m.sock --user=no-such-user-here", "mimeuri: --user=no-such-user-here: no such user"},
        {"--milter=unix:" + d / "m.sock --pidfile=" + missing + "/pid",
         "mimeuri: --pidfile=" + missing + "/pid: its folder " + missing + ": No such file or directory"},
        {"--milter=unix:" + d / "m.sock --stats=" + missing + "/mimeuri.prom",
         "mimeuri: --stats=" + missing + "/mimeuri.prom: its folder " + missing + ": No such file or directory"},
        {"--milter=unix:" + d / "m.sock --stats=" + d.path, "mimeuri: --stats=" + d.path + ": it is a folder"},
        {"--report=" + missing + "/r.jsonl",
         "mimeuri: --report=" + missing + "/r.jsonl: its folder " + missing + ": No such file or directory"},
        {"--report=" + d.path, "mimeuri: --report=" + d.path + ": it is not a regular file"},
        {"--report=" + d.file("folder-is-file", "x") + "/r.jsonl",
         "mimeuri: --report=" + d / "folder-is-file" + "/r.jsonl: " + d / "folder-is-file" + " is not a folder"},
        {"--cid=extract --extract-dir=" + d / "folder-is-file",
         "mimeuri: --extract-dir=" + d / "folder-is-file" + ": it is not a folder"},
        {"--mid-index=" + missing + "/index.midx", ""}, // the load's own error: checked below
    };
    for (const Case &c : cases) {
        CAPTURE(c.args);
        auto r = mimeuri("--no-config " + c.args + " --check-config");
        CHECK(r.status == 78);
        CHECK(r.out.empty());
        REQUIRE(lines(r.err).size() == 1);
        if (!c.line.empty()) CHECK(r.err == c.line + "\n");
        else CHECK(r.err.rfind("mimeuri: --", 0) == 0);
    }
    // A link where the report goes: refused, as the run refuses it.
    REQUIRE(::symlink((d / "elsewhere").c_str(), (d / "link.jsonl").c_str()) == 0);
    auto link = mimeuri("--no-config --report=" + quote(d / "link.jsonl") + " --check-config");
    CHECK(link.status == 78);
    CHECK(link.err == "mimeuri: --report=" + d / "link.jsonl" + ": it is a symbolic link (refused)\n");
}

TEST_CASE("--check-config: several problems, a line each; a file's error is one of them, in the service's reading")
{
    testing::TempDir d;
    const std::string missing = d / "no-such-folder";
    auto r = mimeuri("--no-config --milter=bogus:x --user=no-such-user-here --report=" + quote(missing + "/r") +
                     " --check-config");
    CHECK(r.status == 78);
    CHECK(lines(r.err) == std::vector<std::string>{
                             "mimeuri: --milter=bogus:x: unknown socket type (the form is unix:/path, local:/path, "
                             "inet:PORT@HOST or inet6:PORT@HOST)",
                             "mimeuri: --user=no-such-user-here: no such user",
                             "mimeuri: --report=" + missing + "/r: its folder " + missing + ": No such file or directory"});
    // A configuration file that does not read: its one line (the file, the line, the key),
    // and 78 whatever the load's code (an index that does not open is 66 for a run).
    const std::string conf = d.file("m.conf", "[milter]\nreprot=/tmp/r\n");
    auto bad = mimeuri("--config=" + quote(conf) + " --milter=unix:" + quote(d / "m.sock") + " --check-config");
    CHECK(bad.status == 78);
    CHECK(bad.err == "mimeuri: " + conf + ":2: unknown key 'reprot' in [milter]: did you mean report? (keys are the "
                                          "long options' names: mimeuri --help)\n");
    // The same file for a command-line run: [milter] is not its concern.
    auto cl = mimeuri("--config=" + quote(conf) + " --check-config");
    CHECK(cl.status == 0);
    // [milter]'s report checked for the service, not for the command line.
    const std::string conf2 = d.file("m2.conf", "[milter]\nreport=" + missing + "/r.jsonl\n");
    auto sv = mimeuri("--config=" + quote(conf2) + " --milter=unix:" + quote(d / "m.sock") + " --check-config");
    CHECK(sv.status == 78);
    CHECK(sv.err == "mimeuri: --report=" + missing + "/r.jsonl: its folder " + missing + ": No such file or directory\n");
    CHECK(mimeuri("--config=" + quote(conf2) + " --check-config").status == 0);
}

TEST_CASE("--check-config: the report is checked as the --user the service writes it as")
{
    // A report file only root may write: the service, switched to nobody, could not open it.
    testing::TempDir d;
    const std::string report = d.file("r.jsonl", "");
    REQUIRE(::chmod(report.c_str(), 0600) == 0);
    REQUIRE(::chmod(d.path.c_str(), 0755) == 0);
    auto r = mimeuri("--no-config --milter=unix:" + quote(d / "m.sock") + " --user=nobody --report=" + quote(report) +
                     " --check-config");
    CHECK(r.status == 78);
    const bool root = ::geteuid() == 0;
    const auto got = lines(r.err);
    // Started as another user than root, switching is a problem of its own.
    if (root) REQUIRE(got.size() == 1);
    else REQUIRE(got.size() == 2);
    CHECK(got.back() == "mimeuri: --report=" + report + ": nobody may not write it");
    if (!root) CHECK(got.front() == "mimeuri: --user=nobody: the service must be started as root to switch to it");
}

TEST_CASE("--check-config: each bad policy is a line of its own; good ones are counted")
{
    testing::TempDir d;
    const std::string conf = d.file("p.conf", "[policy:range]\nclient = 10.0.0.0/33\n"
                                              "[policy:key]\nsender-domain = example.org\nbogus = 1\n"
                                              "[policy:empty]\npasses = none\n"
                                              "[policy:good]\nauthenticated = yes\ndata = attach\n");
    const std::string sock = " --milter=unix:" + quote(d / "m.sock");
    auto r = mimeuri("--config=" + quote(conf) + sock + " --check-config");
    CHECK(r.status == 78);
    CHECK(r.out.empty());
    const auto got = lines(r.err);
    REQUIRE(got.size() == 3);
    CHECK(got[0] == "mimeuri: " + conf + ":2: [policy:range] client: '10.0.0.0/33' is not an address or a CIDR range "
                                         "(10.0.0.0/8, 2001:db8::/32)");
    CHECK(got[1].rfind("mimeuri: " + conf + ":5: unknown key 'bogus' in [policy:key]", 0) == 0);
    CHECK(got[2] == "mimeuri: " + conf + ":6: [policy:empty] has no match key (client, sender-domain, recipient-domain, "
                                         "authenticated, daemon-name, daemon-port): it would match every message; the "
                                         "service's own settings go in [milter]");
    // The service would not start with them either (78, the first problem and how many more).
    // Without them it would, and says how many policies it has.
    const std::string good = d.file("g.conf", "[policy:good]\nauthenticated = yes\ndata = attach\n"
                                              "[policy:lan]\nclient = 192.168.0.0/16\npasses = none\n");
    auto ok = mimeuri("--config=" + quote(good) + sock + " --check-config");
    CHECK(ok.status == 0);
    CHECK(ok.out == "mimeuri: the configuration is good: the service would start on unix:" + d / "m.sock" +
                        " with 2 policies\n");
    // A command-line run reads no policy: the same bad file is no problem of its own.
    CHECK(mimeuri("--config=" + quote(conf) + " --check-config").status == 0);
}

TEST_CASE("--check-config: every problem of every file in one run, each with its file and line")
{
    // postfix check and opendkim -n go on past the first problem: an admin fixes the file
    // once, not one line per restart. Each expected line is written from the file below
    // (its line numbers counted by hand), not taken from the program.
    testing::TempDir d;
    const std::string a = d.file("a.conf", "[mimeuri]\n"                          // 1
                                           "jobs = 0\n"                           // 2: range
                                           "bogus-key = 1\n"                      // 3: unknown key
                                           "max-depth = 999\n"                    // 4: range
                                           "[milter]\n"                           // 5
                                           "verbose = true\n"                     // 6: good
                                           "[policy:lan]\n"                       // 7
                                           "client = 10.0.0.0/33\n"               // 8: bad policy
                                           "[policy:ok]\n"                        // 9
                                           "authenticated = yes\n"                // 10
                                           "[policy:ok]\n"                        // 11: defined twice
                                           "passes = none\n");                    // 12
    const std::string b = d.file("b.conf", "[mimeuri]\n"                          // 1
                                           "this line is no key\n"                // 2: syntax
                                           "syslog = maybe\n"                     // 3: no boolean
                                           "[policy:lan]\n"                       // 4: defined in a.conf
                                           "client = 10.0.0.0/8\n");              // 5
    auto r = mimeuri("--config=" + quote(a) + " --config=" + quote(b) + " --milter=unix:" + quote(d / "m.sock") +
                     " --check-config");
    CHECK(r.status == 78); // EX_CONFIG, as for one problem
    CHECK(r.out.empty());
    const auto got = lines(r.err);
    for (const auto &l : got) CAPTURE(l);
    // One line per problem, no line said twice (each policy's load reads the files again).
    const std::vector<std::string> starts = {
        "mimeuri: " + a + ":2: [mimeuri] jobs must be between 1 and 256",
        "mimeuri: " + a + ":3: unknown key 'bogus-key' in [mimeuri]",
        "mimeuri: " + a + ":4: [mimeuri] max-depth must be between 1 and 500",
        "mimeuri: " + a + ":8: [policy:lan] client: '10.0.0.0/33' is not an address or a CIDR range",
        "mimeuri: " + a + ":11: [policy:ok] is defined again: it is first defined at " + a + ":9",
        "mimeuri: " + b + ":2: ",
        "mimeuri: " + b + ":3: [mimeuri] syslog: 'maybe' is not a boolean",
        "mimeuri: " + b + ":4: [policy:lan] is defined again: it is first defined at " + a + ":7",
    };
    CHECK(got.size() == starts.size());
    for (const auto &want : starts) {
        CAPTURE(want);
        CHECK(std::count_if(got.begin(), got.end(), [&](const std::string &l) { return l.rfind(want, 0) == 0; }) == 1);
    }
    // The syntax error is GKeyFile's own words, at its line: the rest of b.conf was still read.
    CHECK(std::count_if(got.begin(), got.end(),
                        [](const std::string &l) { return l.find("this line is no key") != std::string::npos; }) == 1);
    // The service itself refuses the files with the first problem and how to see the rest.
    auto start = mimeuri("--config=" + quote(a) + " --config=" + quote(b) + " --milter=unix:" + quote(d / "m.sock") +
                         " --print-config");
    CHECK(start.status == 78);
    CHECK(start.err.find(a + ":2: [mimeuri] jobs must be between 1 and 256 (and ") != std::string::npos);
    CHECK(start.err.find(" more: mimeuri --check-config lists them)") != std::string::npos);
}
