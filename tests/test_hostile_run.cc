// Hostile input: crafted messages an outside sender or a local user could send.
// Each case checks the promised result: structure unchanged, parts intact, limits held.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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
    // (".png": every file is named with an extension of its type, issue 34)
    CHECK(listing(d / "out") == ".\n./1\n./1/evil_gnp.exe_____x.png\n./1/index.html\n./index.html\n./mimeuri.css\n./pages.tsv\n");
    CHECK(testing::read_file(d / "out/1/index.html").find("src=\"evil_gnp.exe_____x.png\"") != std::string::npos);
}

namespace {

// An mbox whose message 1 links mid: to its last message (a forward reference: its plan
// waits for the whole mbox to be indexed) and whose every message has a reference to repair.
std::string forward_mid_mbox(int messages = 3)
{
    std::string mb;
    for (int i = 1; i <= messages; ++i) {
        std::string n = std::to_string(i);
        mb += "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m" + n + "@x>\nContent-Type: multipart/related; boundary=r\n\n"
              "--r\nContent-Type: text/html\n\n<img src=\"cid:<p@x>\">" + (i == 1 ? "<a href=\"mid:m" + std::to_string(messages) + "@x\">last</a>" : "") +
              "\n--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n\n";
    }
    return mb;
}

} // namespace

TEST_CASE("plans that cannot be held (a full TMPDIR): with pass a whole output, with tempfail 75 and nothing written")
{
    testing::TempDir d;
    std::string mb = d.file("in.mbox", forward_mid_mbox());
    for (const char *jobs : {"1", "2"}) {
        CAPTURE(jobs);
        auto good = mimeuri("--jobs=" + std::string(jobs) + " --report=" + quote(d / "good.json") + " " + quote(mb));
        REQUIRE(good.status == 0);
        REQUIRE(good.out != testing::read_file(mb)); // every message was repaired
        REQUIRE(testing::read_file(d / "good.json").find("\"status\":\"resolved\",\"action\":\"none\"") != std::string::npos);
        // --on-error=pass (the default): the same bytes, exit 0, one line saying what was given up.
        auto faulty = testing::sh("MIMEURI_FAULT=spool " + testing::bin() + " --jobs=" + jobs + " --report=" +
                                  quote(d / "pass.json") + " " + quote(mb) + " >" + quote(d / "out") + " 2>" +
                                  quote(d / "err") + "; echo $?");
        CHECK(std::stoi(faulty.out) == 0);
        CHECK(testing::read_file(d / "out") == good.out);
        std::string err = testing::read_file(d / "err");
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK(err.find("No space left on device; from message 1 on, mid: references to later messages are reported dangling") !=
              std::string::npos);
        std::string report = testing::read_file(d / "pass.json");
        CHECK(std::count(report.begin(), report.end(), '\n') == 3);
        CHECK(report.find("\"kind\":\"mid\",\"status\":\"dangling\"") != std::string::npos);
        // --on-error=tempfail: 75, nothing on standard output, one line.
        // (--mid=repair: with no report a mid: result shows only in what it repairs, and
        // only then are plans held)
        auto temp = testing::sh("MIMEURI_FAULT=spool " + testing::bin() + " --mid=repair --on-error=tempfail --jobs=" + jobs + " " +
                                quote(mb) + " >" + quote(d / "out") + " 2>" + quote(d / "err") + "; echo $?");
        CHECK(std::stoi(temp.out) == 75);
        CHECK(testing::read_file(d / "out").empty());
        err = testing::read_file(d / "err");
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK(err.find("No space left on device") != std::string::npos);
    }
}

TEST_CASE("nothing reported and --mid=check: a dangling mid: reference holds no plan back")
{
    // What a mid: reference resolves to then changes no byte of the output: the run keeps no
    // index and holds nothing (Engine::wants_index), so a full TMPDIR changes nothing either,
    // and a pipe's messages go out as they are planned.
    testing::TempDir d;
    std::string mb = d.file("in.mbox", forward_mid_mbox());
    for (const char *jobs : {"1", "2"}) {
        CAPTURE(jobs);
        auto held = mimeuri("--mid=repair --jobs=" + std::string(jobs) + " " + quote(mb));
        REQUIRE(held.status == 0);
        for (const std::string opts : {"", " --on-error=tempfail"}) {
            auto r = testing::sh("MIMEURI_FAULT=spool " + testing::bin() + opts + " --jobs=" + jobs + " " + quote(mb) + " >" +
                                 quote(d / "out") + " 2>" + quote(d / "err") + "; echo $?");
            CHECK(std::stoi(r.out) == 0);
            CHECK(testing::read_file(d / "out") == held.out);
            CHECK(testing::read_file(d / "err").empty());
        }
    }
}

TEST_CASE("plans held partly in the temporary file when it fills up: all read back, in order")
{
    testing::TempDir d;
    std::string mb = d.file("in.mbox", forward_mid_mbox(6));
    auto good = mimeuri("--mid=repair " + quote(mb));
    REQUIRE(good.status == 0);
    // Two plans are written to the file, the third write stops half way.
    auto r = testing::sh("MIMEURI_FAULT=spool:2 " + testing::bin() + " --mid=repair " + quote(mb) + " >" + quote(d / "out") + " 2>" +
                         quote(d / "err") + "; echo $?");
    CHECK(std::stoi(r.out) == 0);
    CHECK(testing::read_file(d / "out") == good.out);
    CHECK(testing::read_file(d / "err").find("from message 1 on") != std::string::npos);
}

TEST_CASE("--jobs: a mid: reference no message of the input can resolve holds no plan back; one a later message may, does")
{
    // MIMEURI_FAULT=spool fails the first plan held: its warning says whether, and from
    // which message on, plans were held. With --jobs the split takes a census of the
    // input's Message-IDs (src/input/id_census.hh); one job takes none (its split runs just ahead
    // of the messages planned) and holds from the first dangling reference on, as before.
    testing::TempDir d;
    auto msg = [](const std::string &id, const std::string &html) {
        return "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <" + id + ">\nContent-Type: multipart/related; boundary=r\n\n"
               "--r\nContent-Type: text/html\n\n<img src=\"cid:<p@x>\">" + html +
               "\n--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n\n";
    };
    // Message 1 links to an id no message has; message 2 to one that only an mboxcl2 body
    // embeds (the split passes over those lines; the census reads them).
    const std::string inner = "Message-ID: <late@x>\nSubject: embedded\n\nhi\n";
    const std::string cl2 = "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m4@x>\nContent-Type: message/rfc822\n"
                            "Content-Length: " + std::to_string(inner.size()) + "\n\n" + inner + "\n";
    const std::string nowhere = msg("m1@x", "<a href=\"mid:nowhere@x\">gone</a>") + msg("m3@x", "");
    const std::string later = msg("m1@x", "<a href=\"mid:nowhere@x\">gone</a>") +
                              msg("m2@x", "<a href=\"mid:late@x\">later</a>") + msg("m3@x", "") + cl2;
    for (const char *jobs : {"1", "2"}) {
        CAPTURE(jobs);
        const std::string mb = d.file("nowhere.mbox", nowhere);
        auto good = mimeuri("--mid=repair --jobs=" + std::string(jobs) + " " + quote(mb));
        REQUIRE(good.status == 0);
        REQUIRE(good.out != nowhere);
        auto r = testing::sh("MIMEURI_FAULT=spool " + testing::bin() + " --mid=repair --jobs=" + jobs + " " + quote(mb) + " >" +
                             quote(d / "out") + " 2>" + quote(d / "err") + "; echo $?");
        CHECK(std::stoi(r.out) == 0);
        CHECK(testing::read_file(d / "out") == good.out);
        const std::string held1 = "from message 1 on, mid: references to later messages are reported dangling";
        if (jobs == std::string("1")) CHECK(testing::read_file(d / "err").find(held1) != std::string::npos);
        else CHECK(testing::read_file(d / "err").empty()); // no plan was held

        const std::string mb2 = d.file("later.mbox", later);
        auto good2 = mimeuri("--mid=repair --jobs=" + std::string(jobs) + " --report=" + quote(d / "r.json") + " " + quote(mb2));
        REQUIRE(good2.status == 0);
        CHECK(testing::read_file(d / "r.json").find("\"url\":\"mid:late@x\",\"kind\":\"mid\",\"status\":\"resolved\"") !=
              std::string::npos);
        auto r2 = testing::sh("MIMEURI_FAULT=spool " + testing::bin() + " --mid=repair --jobs=" + jobs + " " + quote(mb2) + " >" +
                              quote(d / "out") + " 2>" + quote(d / "err") + "; echo $?");
        CHECK(std::stoi(r2.out) == 0);
        CHECK(testing::read_file(d / "out") == good2.out); // (the link was left as it is either way)
        const std::string from = jobs == std::string("1") ? "from message 1 on" : "from message 2 on";
        CHECK(testing::read_file(d / "err").find(from + ", mid: references to later messages are reported dangling") !=
              std::string::npos);
    }
}

namespace {

// Starts mimeuri with args in a process group of its own; returns its pid (the group's id).
pid_t start_group(const std::vector<std::string> &args, const std::string &err_path)
{
    pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 2);
        std::vector<char *> argv{const_cast<char *>(MIMEURI_BIN)};
        for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(MIMEURI_BIN, argv.data());
        ::_exit(127);
    }
    ::setpgid(pid, pid); // both sides, so that the group exists before any kill
    return pid;
}

// Whether pid runs mimeuri (exec done: before it, the test's own handlers are inherited)
// and has a handler for SIGTERM (the SigCgt mask of /proc/PID/status).
bool catches_sigterm(pid_t pid)
{
    std::string status;
    try {
        status = testing::read_file("/proc/" + std::to_string(pid) + "/status");
    } catch (const std::exception &) {
        return false;
    }
    if (status.compare(0, 14, "Name:\tmimeuri\n") != 0) return false;
    auto at = status.find("SigCgt:");
    if (at == std::string::npos) return false;
    return (std::stoull(status.substr(at + 7), nullptr, 16) >> (SIGTERM - 1)) & 1;
}

std::vector<std::string> files_in(const std::string &dir)
{
    std::vector<std::string> out;
    if (GDir *d = g_dir_open(dir.c_str(), 0, nullptr)) {
        while (const char *n = g_dir_read_name(d)) out.push_back(dir + "/" + n);
        g_dir_close(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("SIGTERM to --jobs=2 --in-place over a Maildir: every process cleans up, the last line counts what was rewritten")
{
    const std::string m = "Message-ID: <m@x>\nContent-Type: multipart/related; boundary=r\n\n"
                          "--r\nContent-Type: text/html\n\n<img src=\"cid:<a@b>\">\n"
                          "--r\nContent-Type: image/png\nContent-ID: <a@b>\n\nAAAA\n--r--\n";
    testing::TempDir d;
    const std::string rewritten = mimeuri("-", d.file("one.eml", m)).out;
    REQUIRE(rewritten != m);
    constexpr std::size_t messages = 2000;
    // To the whole group (Ctrl-C, systemctl stop), then to the parent alone. With mid: on,
    // the Maildir is indexed first (about 0.4 s here): --mid=off starts rewriting at once.
    struct Case {
        bool group;
        std::vector<std::string> args;
        int delay_ms;
    };
    // delay_ms from the start, or (negative) from the first file renamed into cur/, so that
    // the run is stopped part way through the rewriting, however fast the machine.
    const Case cases[] = {{true, {"--jobs=2"}, 100},
                          {true, {"--jobs=2"}, -100},
                          {false, {"--jobs=2", "--mid=off"}, -100},
                          {true, {"--jobs=1", "--mid=off"}, -50}};
    int run = 0;
    for (const Case &c : cases) {
        const bool group = c.group;
        CAPTURE(group);
        CAPTURE(c.args[0]);
        CAPTURE(c.delay_ms);
        std::string md = d / ("md" + std::to_string(++run));
        for (const char *sub : {"/cur", "/new", "/tmp"}) REQUIRE(g_mkdir_with_parents((md + sub).c_str(), 0755) == 0);
        for (std::size_t i = 0; i < messages; ++i) testing::write_file(md + "/cur/" + std::to_string(100000 + i) + ":2,S", m);
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"--in-place", md});
        struct stat before {};
        REQUIRE(::stat((md + "/cur").c_str(), &before) == 0);
        pid_t pid = start_group(args, d / "err");
        // A signal before main() installs its handler ends the process with nothing done (a
        // loaded machine can take over 100 ms to get there): the delay counts from then.
        for (int waited = 0; waited < 20000 && !catches_sigterm(pid); waited += 2) ::usleep(2000);
        if (c.delay_ms < 0) { // a rename into cur/ changes its modification time
            for (int waited = 0; waited < 20000; waited += 2) {
                struct stat now {};
                ::stat((md + "/cur").c_str(), &now);
                if (now.st_mtim.tv_sec != before.st_mtim.tv_sec || now.st_mtim.tv_nsec != before.st_mtim.tv_nsec) break;
                ::usleep(2000);
            }
        }
        ::usleep(static_cast<useconds_t>(std::abs(c.delay_ms)) * 1000);
        ::kill(group ? -pid : pid, SIGTERM);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 75);
        // The parent waited for its workers: nothing of the group is left.
        CHECK((::kill(-pid, 0) == -1 && errno == ESRCH));
        CHECK(files_in(md + "/tmp").empty());
        std::size_t changed = 0;
        auto cur = files_in(md + "/cur");
        CHECK(cur.size() == messages);
        for (const auto &f : cur) {
            std::string now = testing::read_file(f);
            if (now == rewritten) ++changed;
            else CHECK(now == m);
        }
        std::string err = testing::read_file(d / "err");
        CAPTURE(err);
        std::string line = "mimeuri: terminated by a signal: " + std::to_string(changed) + (changed == 1 ? " file" : " files") +
                           " rewritten, the rest left as they were\n";
        CHECK(err.size() >= line.size());
        CHECK(err.compare(err.size() - std::min(err.size(), line.size()), line.size(), line) == 0);
        if (c.delay_ms < 0) CHECK((changed > 0 && changed < messages));
        MESSAGE(changed << " of " << messages << " files rewritten before SIGTERM");
    }
}

TEST_CASE("--max-time holds against a poisoned --mid-index (one Message-ID 300,000 times, 1,024 case variants)")
{
    // Each mid: link names the domain in another case (RFC 5322: it compares
    // case-insensitively), so each is a lookup of its own past the exact one. A lookup must
    // cost a bounded amount of work whatever the index holds, and the clock is read by work
    // done: the run ends well within --max-time plus a margin, with the message passed and
    // the limit reported, or resolved.
    testing::TempDir d;
    const std::string idx = d / "idx";
    const std::string one = "From a@b Mon Jan  1 00:00:00 2024\nMessage-ID: <dup@Example.ORG>\n\nx\n";
    REQUIRE(testing::sh(testing::bin() + " index -o " + quote(idx) + " " + quote(d.file("a.mbox", one + one))).status == 0);
    // 300,000 more rows for the same id, written straight into the index.
    auto poison = testing::sh("sqlite3 " + quote(idx) +
                              " \"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
                              "INSERT INTO messages(file, number, offset, section, message_id, ci_key) "
                              "SELECT (SELECT min(id) FROM files), 1, 0, '', 'dup@Example.ORG', 'dup@example.org' FROM n\"");
    REQUIRE_MESSAGE(poison.status == 0, poison.err);
    std::string html = "<html><body>";
    const std::string domain = "example.org";
    for (int v = 0; v < 1024; ++v) {
        std::string dom = domain;
        for (std::size_t k = 0, bit = 0; k < dom.size(); ++k)
            if (dom[k] != '.' && ((v >> bit++) & 1)) dom[k] = static_cast<char>(g_ascii_toupper(dom[k]));
        html += "<a href=\"mid:dup@" + dom + "\">x</a>\n";
    }
    html += "</body></html>\n";
    const std::string m = "Message-ID: <q@x>\nContent-Type: text/html\n\n" + html;
    const std::string msg = d.file("m.eml", m);
    for (bool old_index : {false, true}) {
        CAPTURE(old_index);
        if (old_index) // an index made before the case-insensitive lookup was indexed for it
            REQUIRE(testing::sh("sqlite3 " + quote(idx) +
                                " 'DROP INDEX IF EXISTS messages_ci_id; CREATE INDEX IF NOT EXISTS messages_ci ON "
                                "messages(ci_key) WHERE ci_key IS NOT NULL'").status == 0);
        gint64 t0 = g_get_monotonic_time();
        auto r = testing::sh("timeout 60 " + testing::bin() + " --max-time=2 --mid=check --mid-index=" + quote(idx) +
                             " --report=" + quote(d / "r") + " " + quote(msg) + " > " + quote(d / "out") + "; echo $?");
        const double secs = static_cast<double>(g_get_monotonic_time() - t0) / 1e6;
        CHECK(r.out == "0\n");
        CHECK(secs < 6);
        CHECK(testing::read_file(d / "out") == m);
        const std::string rep = testing::read_file(d / "r");
        CHECK((rep.find("\"code\":\"limit\"") != std::string::npos || rep.find("\"status\":\"ambiguous\"") != std::string::npos));
    }
}

namespace {

// An index holding <a@x> (made by mimeuri index), and a message whose mid: link needs it.
struct IndexedLink {
    testing::TempDir d;
    std::string idx = d / "idx";
    std::string msg = "Message-ID: <q@x>\nContent-Type: text/html\n\n<a href=\"mid:a@x\">a</a>\n";
    std::string file = d.file("m.eml", msg);
    IndexedLink()
    {
        REQUIRE(testing::sh(testing::bin() + " index -o " + quote(idx) + " " +
                            quote(d.file("a.mbox", "From a@b Mon Jan  1 00:00:00 2024\nMessage-ID: <a@x>\n\nx\n")))
                    .status == 0);
    }
    // A delivery run: the message on standard input, the result on standard output.
    testing::Proc deliver(const std::string &index, const std::string &args)
    {
        return testing::sh(testing::bin() + " --mid-url='https://arch/{id}' --mid-index=" + quote(index) + " " + args +
                           " < " + quote(file));
    }
};

} // namespace

TEST_CASE("an unusable --mid-index is a temporary condition of the run: --on-error decides, never 64 or 66")
{
    IndexedLink t;
    const std::string good = t.deliver(t.idx, "").out;
    REQUIRE(good.find("https://arch/a%40x") != std::string::npos);
    const std::string whole = testing::read_file(t.idx);
    // What a nightly index renamed into place, a copy cut short or a wrong file looks like.
    std::vector<std::pair<std::string, std::string>> states{
        {"missing", ""}, {"empty", "-"}, {"header only", whole.substr(0, 100)}, {"first page cut", whole.substr(0, 1000)},
        {"not SQLite", "this is no index\n"}, {"a folder", "/"}};
    for (const auto &state : states) {
        const std::string &what = state.first, &bytes = state.second; // (no structured binding: clang 14 lets CAPTURE take none)
        CAPTURE(what);
        const std::string bad = t.d / ("bad-" + std::to_string(&what - &states[0].first));
        if (bytes == "/") REQUIRE(::mkdir(bad.c_str(), 0755) == 0);
        else if (!bytes.empty()) testing::write_file(bad, bytes == "-" ? "" : bytes);
        auto r = t.deliver(bad, "");
        CHECK(r.status == 0);
        CHECK(r.out == t.msg); // passed as it came
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2); // said at the start, and for the message
        CHECK(r.err.rfind("mimeuri: --mid-index: " + bad, 0) == 0);
        CHECK(r.err.find("handled as --on-error says until it can be read") != std::string::npos);
        r = t.deliver(bad, "--on-error=tempfail");
        CHECK(r.status == 75);
        CHECK(r.out.empty());
        // A message that needs no lookup goes through as usual, whatever the policy.
        const std::string plain = t.d.file("plain.eml", "Message-ID: <p@x>\nContent-Type: multipart/related; boundary=b\n\n"
                                                        "--b\nContent-Type: text/html\n\n<img src=\"cid:i@x\">\n"
                                                        "--b\nContent-Type: image/png\nContent-ID: <i@x>\n\nAAAA\n--b--\n");
        r = testing::sh(testing::bin() + " --on-error=tempfail --mid-index=" + quote(bad) + " < " + quote(plain));
        CHECK(r.status == 0);
        CHECK(r.out == testing::sh(testing::bin() + " --on-error=tempfail < " + quote(plain)).out);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        // The index back in place: the next run resolves again.
        CHECK(t.deliver(t.idx, "--on-error=tempfail").out == good);
    }
    // The service loads the same settings: it starts (and reloads) with the index missing.
    // (tests/test_options.cc checks the loader itself.)
}

TEST_CASE("--mid-index reads only the schema mimeuri writes: a view, trigger or default in a crafted index is refused")
{
    IndexedLink t;
    const std::string good = t.deliver(t.idx, "").out;
    REQUIRE(good.find("https://arch/a%40x") != std::string::npos);
    // Each crafted index is the good one changed by these statements.
    std::vector<std::pair<std::string, std::string>> crafted{
        {"a view that builds a 400 MB blob per row",
         "ALTER TABLE messages RENAME TO m2; CREATE VIEW messages AS SELECT id, file, number, offset, section, "
         "message_id || zeroblob(400000000) AS message_id, ci_key FROM m2;"},
        {"a view in place of files", "ALTER TABLE files RENAME TO f2; CREATE VIEW files AS SELECT * FROM f2;"},
        {"a trigger", "CREATE TRIGGER t AFTER DELETE ON files BEGIN SELECT zeroblob(400000000); END;"},
        {"a table of its own", "CREATE TABLE extra(x);"},
        {"an index over an expression", "CREATE INDEX messages_file2 ON messages(zeroblob(10));"},
        {"one of mimeuri's index names over an expression",
         "DROP INDEX messages_file; CREATE INDEX messages_file ON messages(length(message_id));"},
        {"a column of its own", "ALTER TABLE cids ADD COLUMN x TEXT;"},
        {"a generated column", "ALTER TABLE files ADD COLUMN g TEXT GENERATED ALWAYS AS (hex(zeroblob(1000))) VIRTUAL;"},
        {"a default that runs for every row",
         "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET sql = replace(sql, 'ci_key TEXT', "
         "'ci_key TEXT DEFAULT (zeroblob(400000000))') WHERE name = 'messages';"},
    };
    for (const auto &c : crafted) {
        const std::string &what = c.first, &sql = c.second; // (no structured binding: clang 14 lets CAPTURE take none)
        CAPTURE(what);
        const std::string bad = t.d / ("crafted-" + std::to_string(&what - &crafted[0].first));
        testing::write_file(bad, testing::read_file(t.idx));
        auto made = testing::sh("sqlite3 " + quote(bad) + " " + quote(sql));
        REQUIRE_MESSAGE(made.status == 0, made.err);
        // Under a memory bound that a 400 MB row would break: refused before any lookup runs.
        gint64 t0 = g_get_monotonic_time();
        auto r = testing::sh(testing::address_limit("600000") + testing::bin() + " --mid-url='https://arch/{id}' --mid-index=" +
                             quote(bad) + " --on-error=tempfail < " + quote(t.file));
        CHECK(static_cast<double>(g_get_monotonic_time() - t0) / 1e6 < 5);
        CHECK(r.status == 75);
        CHECK(r.out.empty());
        CHECK(r.err.find(bad + ": not a mimeuri index (") != std::string::npos);
        CHECK(r.err.find("out of memory") == std::string::npos);
        // And mimeuri index does not merge into it (a trigger would run as whoever indexes).
        auto ix = testing::sh(testing::bin() + " index -o " + quote(bad) + " " + quote(t.file));
        CHECK(ix.status != 0);
        CHECK(ix.err.find("not a mimeuri index (") != std::string::npos);
    }
    // A value larger than any lookup needs (a Message-ID of 8 MB stored in the index): the
    // lookup fails as --on-error says, it does not read 8 MB.
    const std::string big = t.d / "big";
    testing::write_file(big, testing::read_file(t.idx));
    REQUIRE(testing::sh("sqlite3 " + quote(big) + " \"UPDATE messages SET section = hex(zeroblob(4000000))\"").status == 0);
    auto r = t.deliver(big, "--on-error=tempfail");
    CHECK(r.status == 75);
    CHECK(r.err.find("too big") != std::string::npos);
    // The good index is still read as before.
    CHECK(t.deliver(t.idx, "--on-error=tempfail").out == good);
}

TEST_CASE("mimeuri index -o follows no symbolic link, and takes over no file that is not an index")
{
    // A link planted in a shared folder must not make a root run create or write the file
    // it points at (SQLite opens a path through links); an empty file, an SQLite file with
    // no tables, another user's file or one with other hard links is not an index to write.
    testing::TempDir d;
    const std::string mbox = d.file("a.mbox", "From a@b Mon Jan  1 00:00:00 2024\nMessage-ID: <a@b>\n\nx\n");
    auto index = [&](const std::string &out) {
        return testing::sh(testing::bin() + " index -o " + quote(out) + " " + quote(mbox) + " 2>&1; echo \"rc=$?\"").out;
    };
    // A link to a file that does not exist yet, and to one that does.
    REQUIRE(::symlink((d / "victim.db").c_str(), (d / "link.db").c_str()) == 0);
    std::string r = index(d / "link.db");
    CHECK(r.find("rc=0") == std::string::npos);
    CHECK(r.find("symbolic link") != std::string::npos);
    CHECK(::access((d / "victim.db").c_str(), F_OK) != 0);
    const std::string victim = d.file("victim2", "precious\n");
    REQUIRE(::symlink(victim.c_str(), (d / "link2.db").c_str()) == 0);
    r = index(d / "link2.db");
    CHECK(r.find("rc=0") == std::string::npos);
    CHECK(testing::read_file(victim) == "precious\n");
    // Files that are not an index, each left as it was.
    const std::string empty = d.file("empty.db", "");
    r = index(empty);
    CHECK(r.find("rc=0") == std::string::npos);
    CHECK(r.find("not a mimeuri index") != std::string::npos);
    CHECK(testing::read_file(empty).empty());
    const std::string bare = d / "bare.db";
    REQUIRE(testing::sh("sqlite3 " + quote(bare) + " 'CREATE TABLE t(x); DROP TABLE t;'").status == 0);
    const std::string bare_before = testing::read_file(bare);
    REQUIRE(!bare_before.empty());
    r = index(bare);
    CHECK(r.find("rc=0") == std::string::npos);
    CHECK(r.find("not a mimeuri index") != std::string::npos);
    CHECK(testing::read_file(bare) == bare_before);
    // A real index next to it: made, then merged into, as before.
    CHECK(index(d / "good.db").find("rc=0") != std::string::npos);
    CHECK(index(d / "good.db").find("rc=0") != std::string::npos);
    // A hard link to it, and (as root) a file another user owns: refused.
    REQUIRE(::link((d / "good.db").c_str(), (d / "hard.db").c_str()) == 0);
    r = index(d / "hard.db");
    CHECK(r.find("rc=0") == std::string::npos);
    if (::geteuid() == 0) {
        REQUIRE(testing::sh("cp " + quote(d / "good.db") + " " + quote(d / "theirs.db") + " && chown 65534 " +
                            quote(d / "theirs.db")).status == 0);
        r = index(d / "theirs.db");
        CHECK(r.find("rc=0") == std::string::npos);
        CHECK(r.find("owned by") != std::string::npos);
    }
}

TEST_CASE("mimeuri index tells an input's failure from the index's: one input failing stops neither a Maildir nor the inputs after it")
{
    testing::TempDir d;
    const std::string idx = d / "idx";
    auto ids = [&] { return testing::sh("sqlite3 " + quote(idx) + " 'SELECT message_id FROM messages ORDER BY 1'").out; };
    auto msg = [](const std::string &id) { return "Message-ID: <" + id + ">\n\nx\n"; };
    // A Maildir whose second file cannot be read (an I/O error, injected: a root test cannot
    // make a regular file unreadable): the first and third are indexed, the run says which
    // failed, exit 74, and the mbox given after the Maildir is indexed too.
    const std::string md = d / "Maildir";
    REQUIRE(testing::sh("mkdir -p " + quote(md + "/cur") + " " + quote(md + "/new") + " " + quote(md + "/tmp")).status == 0);
    testing::write_file(md + "/cur/1.a:2,S", msg("m1@x"));
    testing::write_file(md + "/cur/2.b:2,S", msg("m2@x"));
    testing::write_file(md + "/cur/3.c:2,S", msg("m3@x"));
    const std::string after = d.file("after.mbox", "From a@b Mon Jan  1 00:00:00 2024\n" + msg("after@x"));
    auto r = testing::sh("MIMEURI_FAULT=index-input:2.b:2,S " + testing::bin() + " index -o " + quote(idx) + " " +
                         quote(md) + " " + quote(after) + " 2>&1; echo \"rc=$?\"");
    CHECK(r.out.find("rc=74") != std::string::npos);
    CHECK(r.out.find("2.b:2,S") != std::string::npos);
    CHECK(ids() == "after@x\nm1@x\nm3@x\n");
    // An input that fails for now (a pipe that cannot be spooled: TMPDIR missing) is a
    // temporary failure of that input, not of the index: the inputs after it are indexed.
    const std::string fifo = d / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string later = d.file("later.mbox", "From a@b Mon Jan  1 00:00:00 2024\n" + msg("later@x"));
    r = testing::sh("{ printf 'From a@b Mon Jan  1 00:00:00 2024\\nMessage-ID: <p@x>\\n\\n'; head -c 9000000 /dev/zero; } > " +
                    quote(fifo) + " & TMPDIR=" + quote(d / "missing") + " " + testing::bin() + " index -o " + quote(idx) +
                    " " + quote(fifo) + " " + quote(later) + " 2>&1; echo \"rc=$?\"; wait");
    CHECK(r.out.find("rc=75") != std::string::npos);
    CHECK(ids() == "after@x\nlater@x\nm1@x\nm3@x\n");
}

TEST_CASE("an exception in a subcommand is main's to handle: exit 70 and one line, never an abort")
{
    testing::TempDir d;
    const std::string first = d.file("first.mbox", "From a@b Mon Jan  1 00:00:00 2024\nMessage-ID: <a@x>\n\nx\n");
    const std::string second = d.file("second.mbox", "From a@b Mon Jan  1 00:00:00 2024\nMessage-ID: <b@x>\n\nx\n");
    // The injected exception escapes run_index_command as an internal error would; it used
    // to end in std::terminate (SIGABRT).
    auto p = testing::sh("MIMEURI_FAULT=index-throw:second.mbox " + testing::bin() + " index -o " + quote(d / "idx") +
                         " " + quote(first) + " " + quote(second) + " 2>" + quote(d / "err") + "; echo $?");
    CHECK(p.out == "70\n");
    const std::string err = testing::read_file(d / "err");
    CHECK(err.rfind("mimeuri: internal error: injected exception reading ", 0) == 0);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

namespace {

// Runs mimeuri with args under a file-size limit of kib KiB (bash's ulimit -f, as Postfix's
// local and pipe delivery set it from mailbox_size_limit). Its standard output goes through
// a pipe to a file written outside the limit; feed: a command piped in, or none.
testing::Proc under_file_size_limit(const std::string &kib, const std::string &args, const std::string &feed = {})
{
    testing::TempDir d;
    const std::string outp = d / "stdout", errp = d / "stderr";
    const std::string limited = "(ulimit -f " + kib + "; exec " + testing::bin() + " " + args + ")";
    const std::string line = (feed.empty() ? limited + " </dev/null" : feed + " | " + limited) + " 2>" + quote(errp) +
                             " | cat >" + quote(outp) + "; echo ${PIPESTATUS[" + (feed.empty() ? "0" : "1") + "]}";
    auto r = testing::sh("exec bash -c " + quote(line));
    testing::Proc p;
    p.status = std::stoi(r.out);
    p.out = testing::read_file(outp);
    p.err = testing::read_file(errp);
    return p;
}

// An mbox of n messages, each with a reference to repair, about 1.2 KB each.
std::string repairable_mbox(int n)
{
    std::string mb;
    for (int i = 0; i < n; ++i)
        mb += "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m" + std::to_string(i) +
              "@x>\nContent-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<img src=\"cid:<p@x>\">" +
              std::string(200, 'x') + "\n--r\nContent-Type: image/png\nContent-ID: <p@x>\n\n" + std::string(800, 'A') +
              "\n--r--\n\n";
    return mb;
}

} // namespace

TEST_CASE("a file-size limit (ulimit -f) is a temporary failure: exit 75, nothing left behind")
{
    testing::TempDir d;
    const std::string mb = repairable_mbox(400); // about 480 KB, over the 100 KiB limit
    REQUIRE(mb.size() > 400 * 1024);
    auto listing_of = [&] { return listing(d.path); };

    SUBCASE("--in-place: no FILE.lock, no temporary file, the mbox as it was")
    {
        const std::string f = d.file("in.mbox", mb);
        auto r = under_file_size_limit("100", "--in-place " + quote(f));
        CHECK(r.status == 75);
        CHECK(r.err.find("File too large") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(testing::read_file(f) == mb);
        CHECK(listing_of() == ".\n./in.mbox\n");
    }
    SUBCASE("-o: no temporary file, no output file")
    {
        const std::string f = d.file("in.mbox", mb);
        auto r = under_file_size_limit("100", "-o " + quote(d / "out.mbox") + " " + quote(f));
        CHECK(r.status == 75);
        CHECK(r.err.find("File too large") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(listing_of() == ".\n./in.mbox\n");
    }
    SUBCASE("piped input past --spool-threshold: the spool cannot be written, 75 and nothing on standard output")
    {
        const std::string f = d.file("in.mbox", mb + mb + mb); // 1.4 MB: past the 1 MiB threshold
        for (const char *jobs : {"1", "2"}) {
            CAPTURE(jobs);
            for (const char *policy : {"pass", "tempfail"}) {
                CAPTURE(policy);
                auto r = under_file_size_limit("100", "--jobs=" + std::string(jobs) + " --on-error=" + policy,
                                               "cat " + quote(f));
                CHECK(r.status == 75);
                CHECK(r.err.find("cannot spool -: File too large") != std::string::npos);
                CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
                CHECK(r.out.empty());
            }
        }
    }
}

TEST_CASE("plans held past the file-size limit: pass stops holding, tempfail exits 75 with nothing written")
{
    // Message 1 links mid: to the last, so every plan waits for the whole mbox; each plan
    // (its HTML rewritten, 3,000 references repaired) holds about 66 KB, so that 80 of them
    // go to the temporary file past 4 MiB in memory, which the limit stops.
    testing::TempDir d;
    std::string mb;
    const int n = 80;
    for (int i = 1; i <= n; ++i) {
        std::string refs;
        for (int k = 0; k < 3000; ++k) refs += "<img src=\"cid:<p@x>\">";
        if (i == 1) refs += "<a href=\"mid:m" + std::to_string(n) + "@x\">last</a>";
        mb += "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m" + std::to_string(i) +
              "@x>\nContent-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n" + refs +
              "\n--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n\n";
    }
    const std::string f = d.file("held.mbox", mb);
    auto good = mimeuri("--mid=repair " + quote(f));
    REQUIRE(good.status == 0);
    REQUIRE(good.out != mb);
    auto r = under_file_size_limit("100", "--mid=repair " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.out == good.out);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("File too large; from message 1 on, mid: references to later messages are reported dangling") !=
          std::string::npos);
    r = under_file_size_limit("100", "--mid=repair --on-error=tempfail " + quote(f));
    CHECK(r.status == 75);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(listing(d.path) == ".\n./held.mbox\n");
}

TEST_CASE("--in-place follows no symbolic link, neither the file's nor a planted FILE.lock (exit 73)")
{
    testing::TempDir d;
    const std::string mb = repairable_mbox(3);
    REQUIRE(testing::sh("mkdir " + quote(d / "theirs") + " " + quote(d / "mine")).status == 0);
    const std::string target = d / "theirs/real.mbox";
    testing::write_file(target, mb);
    const std::string other = d.file("mine/other.mbox", mb);
    auto link_of = [](const std::string &p) {
        char buf[4096];
        ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
        return n < 0 ? std::string() : std::string(buf, static_cast<std::size_t>(n));
    };

    SUBCASE("the file named is a link: refused, its target and the link as they were, the next file rewritten")
    {
        const std::string link = d / "mine/box";
        REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
        for (const char *jobs : {"1", "2"}) {
            CAPTURE(jobs);
            testing::write_file(other, mb);
            auto r = mimeuri("--in-place --jobs=" + std::string(jobs) + " " + quote(link) + " " + quote(other));
            CHECK(r.status == 73);
            CHECK(r.err == "mimeuri: " + link +
                               ": is a symbolic link, which --in-place does not follow (rewrite the file it names by that "
                               "name); left as it was\n");
            CHECK(testing::read_file(target) == mb);
            CHECK(link_of(link) == target);
            CHECK(testing::read_file(other) != mb); // the other input is still done
            CHECK(listing(d / "theirs") == ".\n./real.mbox\n"); // no dotlock, no temporary file there
            CHECK(listing(d / "mine") == ".\n./box\n./other.mbox\n");
        }
    }
    SUBCASE("a Maildir file that is a link is refused the same way")
    {
        REQUIRE(testing::sh("mkdir -p " + quote(d / "Maildir/cur") + " " + quote(d / "Maildir/new") + " " +
                            quote(d / "Maildir/tmp")).status == 0);
        const std::string one = d.file("theirs/one.eml", "Message-ID: <one@x>\nContent-Type: multipart/related; boundary=r\n\n"
                                                         "--r\nContent-Type: text/html\n\n<img src=\"cid:<p@x>\">\n"
                                                         "--r\nContent-Type: image/png\nContent-ID: <p@x>\n\nAAAA\n--r--\n");
        const std::string link = d / "Maildir/cur/1.a:2,S";
        REQUIRE(::symlink(one.c_str(), link.c_str()) == 0);
        const std::string before = testing::read_file(one);
        REQUIRE(mimeuri(quote(one)).out != before); // it has something to repair
        auto r = mimeuri("--in-place " + quote(d / "Maildir"));
        CHECK(r.status == 73);
        CHECK(r.err.find("is a symbolic link, which --in-place does not follow") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(testing::read_file(one) == before);
        CHECK(link_of(link) == one);
        CHECK(listing(d / "Maildir") == ".\n./cur\n./cur/1.a:2,S\n./new\n./tmp\n");
    }
    SUBCASE("a symbolic link planted as FILE.lock: refused, never read or removed through")
    {
        const std::string victim = d.file("theirs/victim", "12345\n");
        const std::string lock = other + ".lock";
        REQUIRE(::symlink(victim.c_str(), lock.c_str()) == 0);
        auto r = mimeuri("--in-place --lock-timeout=1 " + quote(other));
        CHECK(r.status == 73);
        CHECK(r.err == "mimeuri: " + lock + " is a symbolic link, not a lock file; " + other + " left as it was\n");
        CHECK(testing::read_file(other) == mb);
        CHECK(link_of(lock) == victim);
        CHECK(testing::read_file(victim) == "12345\n");
        CHECK(listing(d / "mine") == ".\n./other.mbox\n./other.mbox.lock\n");
    }
}

TEST_CASE("--changed-list follows no symbolic link and truncates no other file's hard link (exit 73, nothing rewritten)")
{
    testing::TempDir d;
    const std::string mb = repairable_mbox(2);
    const std::string box = d.file("box.mbox", mb);
    const std::string victim = d.file("victim", "root:x:0:0\n");
    const std::string list = d / "list";
    auto untouched = [&] {
        CHECK(testing::read_file(victim) == "root:x:0:0\n");
        CHECK(testing::read_file(box) == mb); // refused before any input is read
    };
    for (const char *jobs : {"1", "2"}) {
        CAPTURE(jobs);
        const std::string args = "--in-place --jobs=" + std::string(jobs) + " --changed-list=";
        auto fresh = [&] {
            ::unlink(list.c_str());
            testing::write_file(box, mb);
        };
        // A link to an existing file.
        fresh();
        REQUIRE(::symlink(victim.c_str(), list.c_str()) == 0);
        auto r = mimeuri(args + quote(list) + " " + quote(box));
        CHECK(r.status == 73);
        CHECK(r.err == "mimeuri: " + list +
                           ": is a symbolic link, which --changed-list does not follow (give the list's own path); "
                           "nothing written\n");
        untouched();
        // A dangling link: its target is not created.
        fresh();
        REQUIRE(::symlink((d / "made").c_str(), list.c_str()) == 0);
        r = mimeuri(args + quote(list) + " " + quote(box));
        CHECK(r.status == 73);
        CHECK(r.err.find("is a symbolic link") != std::string::npos);
        CHECK(::access((d / "made").c_str(), F_OK) != 0);
        untouched();
        // A link to a folder, and to /dev/null.
        for (const char *to : {"/tmp", "/dev/null"}) {
            CAPTURE(to);
            fresh();
            REQUIRE(::symlink(to, list.c_str()) == 0);
            r = mimeuri(args + quote(list) + " " + quote(box));
            CHECK(r.status == 73);
            CHECK(r.err.find("is a symbolic link") != std::string::npos);
            untouched();
        }
        // A second hard link of another file.
        fresh();
        REQUIRE(::link(victim.c_str(), list.c_str()) == 0);
        r = mimeuri(args + quote(list) + " " + quote(box));
        CHECK(r.status == 73);
        CHECK(r.err == "mimeuri: " + list + ": has 2 hard links; --changed-list writes only a file of its own; "
                                            "nothing written\n");
        untouched();
        // Its own file is emptied and written; /dev/stdout is written as it is.
        fresh();
        testing::write_file(list, "an older list, longer than the new one\n");
        r = mimeuri(args + quote(list) + " " + quote(box));
        CHECK(r.status == 0);
        CHECK(testing::read_file(list) == box + "\n");
        fresh();
        r = mimeuri(args + "/dev/stdout " + quote(box));
        CHECK(r.status == 0);
        CHECK(r.out == box + "\n");
    }
}

TEST_CASE("--max-time and --lock-timeout refuse what no deadline can hold: non-finite and out-of-range values")
{
    testing::TempDir d;
    const std::string mb = repairable_mbox(1);
    const std::string f = d.file("in.mbox", mb);
    const auto good = mimeuri(quote(f));
    REQUIRE(good.status == 0);
    REQUIRE(good.out != mb);
    // --max-time=1e300 was taken, and its deadline overflowed into the past: every message
    // was "over --max-time" at once and passed unchanged. inf and 1e10 were taken too.
    for (const char *option : {"max-time", "lock-timeout"}) {
        for (const char *v : {"inf", "+inf", "-inf", "infinity", "nan", "1e400", "1e300", "1e10", "1000000001"}) {
            CAPTURE(option);
            CAPTURE(v);
            auto r = mimeuri("--in-place --" + std::string(option) + "=" + v + " " + quote(f));
            CHECK(r.status == 64);
            const bool finite = std::string(v).find_first_of("in") == std::string::npos && std::string(v) != "1e400";
            CHECK(r.err == "mimeuri: --" + std::string(option) +
                               (finite ? " must be at most 1000000000 seconds\n"
                                       : ": '" + std::string(v) + "' is not a finite number\n"));
            CHECK(testing::read_file(f) == mb);
        }
        // From a configuration file: a configuration error (78) naming the key.
        const std::string conf = d.file("x.conf", "[mimeuri]\n" + std::string(option) + "=inf\n");
        auto r = mimeuri("--config=" + quote(conf) + " " + quote(f));
        CHECK(r.status == 78);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find("not a finite number") != std::string::npos);
    }
    // The longest accepted value works as a long limit, not as no time at all.
    for (const char *args : {"--max-time=1000000000", "--max-time=1e9 --lock-timeout=1e9"}) {
        CAPTURE(args);
        auto r = mimeuri(std::string(args) + " " + quote(f));
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(r.out == good.out);
    }
}
