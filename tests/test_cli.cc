// End-to-end tests of the mimeuri binary: exit codes, identity, mbox, reports, outputs.
#include "helpers.hh"

#include <algorithm>
#include <sys/stat.h>

#include <doctest/doctest.h>
#include <json-glib/json-glib.h>

using testing::mimeuri;
using testing::quote;

namespace {

// Each report line parsed; checks it is valid JSON with the documented members.
std::vector<JsonObject *> report_lines(const std::string &text, std::vector<JsonParser *> &keep)
{
    std::vector<JsonObject *> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        REQUIRE(nl != std::string::npos);
        JsonParser *p = json_parser_new();
        keep.push_back(p);
        REQUIRE(json_parser_load_from_data(p, text.data() + pos, static_cast<gssize>(nl - pos), nullptr));
        JsonObject *o = json_node_get_object(json_parser_get_root(p));
        for (const char *m : {"index", "source", "message_id", "changed", "refs", "external_bodies", "labels", "errors"})
            CHECK_MESSAGE(json_object_has_member(o, m), m);
        out.push_back(o);
        pos = nl + 1;
    }
    return out;
}

struct Parsers {
    std::vector<JsonParser *> v;
    ~Parsers()
    {
        for (auto *p : v) g_object_unref(p);
    }
};

const char *odd_cases[][2] = {
    {"crlf", "From: a@b\r\nSubject: folded\r\n\t  oddly   \r\nContent-Type: multipart/mixed;\r\n boundary=x\r\n\r\n"
             "preamble\r\n--x\r\nContent-Type: text/html\r\n\r\n<img src=\"cid:a\">\r\n--x--\r\nepilogue\r\n\r\n"},
    {"cr-only", "From: a@b\rSubject: cr\r\rbody\r"},
    {"no-final-newline", "From: a@b\nSubject: x\n\nlast line"},
    {"headerless", "\nbody without headers\n"},
    {"no-header-block", "this is not a message\n"},
    {"mixed", "From: a@b\r\nSubject: x\n\nbody\r\nmore\n"},
    {"nul", "From: a@b\nSubject: x\n\nnul\0byte\n"},
};

} // namespace

TEST_CASE("--version, --help and usage errors")
{
    auto v = mimeuri("--version");
    CHECK(v.status == 0);
    CHECK(v.out.rfind("mimeuri ", 0) == 0);
    auto h = mimeuri("--help");
    CHECK(h.status == 0);
    for (const char *opt : {"--output", "--in-place", "--format", "--report", "--check", "--on-error", "--strict",
                            "--passes", "--max-depth", "--spool-threshold", "--config", "default: pass"})
        CHECK_MESSAGE(h.out.find(opt) != std::string::npos, opt);
    auto u = mimeuri("--on-error=sometimes");
    CHECK(u.status == 64);
    CHECK(u.err.find("--on-error") != std::string::npos);
    CHECK(u.out.empty());
}

TEST_CASE("a missing input is EX_NOINPUT and the others still pass through")
{
    testing::TempDir d;
    std::string a = d.file("a.eml", "Subject: a\n\nA\n");
    auto r = mimeuri("--passes=none " + quote(d / "missing.eml") + " " + quote(a));
    CHECK(r.status == 66);
    CHECK(r.out == "Subject: a\n\nA\n");
    CHECK(r.err.find("missing.eml") != std::string::npos);
}

TEST_CASE("empty input is an error, never an empty success")
{
    testing::TempDir d;
    std::string e = d.file("empty", "");
    CHECK(mimeuri("", e).status == 65);
    CHECK(mimeuri("--on-error=tempfail", e).status == 75);
    CHECK(mimeuri(quote(e)).status == 65);
    // -o: the file already there is left as it was, not replaced by an empty one.
    std::string kept = d.file("kept.mbox", "From a@b Sat Nov 21 09:00:00 2026\nSubject: kept\n\nK\n");
    for (const char *policy : {"--on-error=pass", "--on-error=tempfail"}) {
        CAPTURE(policy);
        auto r = mimeuri(std::string(policy) + " -o " + quote(kept), e);
        CHECK(r.status == (std::string(policy) == "--on-error=pass" ? 65 : 75));
        CHECK(testing::read_file(kept) == "From a@b Sat Nov 21 09:00:00 2026\nSubject: kept\n\nK\n");
    }
}

TEST_CASE("odd messages come out byte-identical, from a file, a pipe and a redirect")
{
    testing::TempDir d;
    for (auto &c : odd_cases) {
        std::string bytes = c[0] == std::string("nul") ? std::string(c[1], 30) : std::string(c[1]);
        std::string f = d.file(c[0], bytes);
        CAPTURE(c[0]);
        auto byfile = mimeuri(quote(f));
        CHECK(byfile.status == 0);
        CHECK(byfile.out == bytes);
        auto bypipe = mimeuri("", f, true);
        CHECK(bypipe.status == 0);
        CHECK(bypipe.out == bytes);
        auto byredirect = mimeuri("-", f, false);
        CHECK(byredirect.out == bytes);
    }
}

TEST_CASE("--strict exits 65 for a message that could not be parsed, after writing it unchanged")
{
    testing::TempDir d;
    std::string f = d.file("bad", "this is not a message\n");
    auto r = mimeuri("--strict " + quote(f));
    CHECK(r.status == 65);
    CHECK(r.out == "this is not a message\n");
}

TEST_CASE("an mbox whose third message has no header block is carried through whole")
{
    std::string mb = "From a@b Sat Jan  1 00:00:00 2022\nMessage-ID: <1@x>\nSubject: one\n\nbody\nFrom the start\n>From quoted\n\n"
                     "From a@b Sat Jan  1 00:00:01 2022\nMessage-ID: <2@x>\n\ntwo\n\n"
                     "From a@b Sat Jan  1 00:00:02 2022\nno header block, only text\n\n"
                     "From a@b Sat Jan  1 00:00:03 2022\nMessage-ID: <4@x>\n\nfour\n";
    testing::TempDir d;
    std::string f = d.file("box.mbox", mb);
    auto r = mimeuri("--report=" + quote(d / "r.jsonl") + " " + quote(f));
    CHECK(r.status == 0);
    CHECK(r.out == mb);
    Parsers ps;
    auto lines = report_lines(testing::read_file(d / "r.jsonl"), ps.v);
    REQUIRE(lines.size() == 4);
    CHECK(std::string(json_object_get_string_member(lines[0], "message_id")) == "1@x");
    CHECK(json_object_get_int_member(lines[2], "index") == 3);
    CHECK(json_array_get_length(json_object_get_array_member(lines[2], "errors")) == 1);
    CHECK(std::string(json_object_get_string_member(lines[3], "message_id")) == "4@x");
    CHECK(std::string(json_object_get_string_member(lines[3], "source")) == f);

    // Forced message format: one message, still identical.
    auto m = mimeuri("--format=message --check " + quote(f));
    CHECK(m.status == 0);
    auto one = report_lines(m.out, ps.v);
    CHECK(one.size() == 1);
}

TEST_CASE("--check writes only the report to standard output")
{
    testing::TempDir d;
    std::string f = d.file("a.eml", "Message-ID: <a@b>\n\nA\n");
    auto r = mimeuri("--check " + quote(f) + " " + quote(f));
    CHECK(r.status == 0);
    Parsers ps;
    auto lines = report_lines(r.out, ps.v);
    REQUIRE(lines.size() == 2);
    CHECK_FALSE(json_object_get_boolean_member(lines[0], "changed"));
}

// --report=- is standard output (never a file named "-", issue 48 item 10): the report alone
// with --check or -o, refused with one line where standard output carries the mail.
TEST_CASE("--report=- is standard output where the mail is not, and refused where it is")
{
    testing::TempDir d;
    std::string f = d.file("a.eml", "Message-ID: <a@b>\n\nA\n");
    const std::string cd = "cd " + quote(d.path) + " && ";
    auto mixed = testing::sh(cd + testing::bin() + " --report=- " + quote(f));
    CHECK(mixed.status == 64);
    CHECK(mixed.out.empty());
    CHECK(mixed.err.find("--report=-: standard output carries the messages") != std::string::npos);
    CHECK(std::count(mixed.err.begin(), mixed.err.end(), '\n') == 1); // one line
    auto piped = testing::sh(cd + "printf 'Message-ID: <p@b>\\n\\nA\\n' | " + testing::bin() + " --report=-");
    CHECK(piped.status == 64);
    auto to_file = testing::sh(cd + testing::bin() + " --report=- -o out.eml " + quote(f));
    CHECK(to_file.status == 0);
    CHECK(testing::read_file(d / "out.eml") == testing::read_file(f));
    auto check = testing::sh(cd + testing::bin() + " --check --report=- " + quote(f));
    CHECK(check.status == 0);
    for (const testing::Proc *p : {&to_file, &check}) {
        Parsers ps;
        auto lines = report_lines(p->out, ps.v);
        REQUIRE(lines.size() == 1);
        CHECK(std::string(json_object_get_string_member(lines[0], "message_id")) == "a@b");
    }
    CHECK_FALSE(g_file_test((d / "-").c_str(), G_FILE_TEST_EXISTS));
    auto service = testing::sh(testing::bin() + " --milter=unix:" + quote(d / "s.sock") + " --report=- --check-config");
    CHECK(service.status == 78); // --check-config: EX_CONFIG
    CHECK(service.err.find("the service has no standard output") != std::string::npos);
}

TEST_CASE("-o writes atomically; several single messages are refused, never run together; mboxes follow each other")
{
    testing::TempDir d;
    std::string a = d.file("a.eml", "Subject: a\n\nA\n"), b = d.file("b.eml", "Subject: b\r\n\r\nB\r\n");
    auto r = mimeuri("-o " + quote(d / "out") + " " + quote(a) + " " + quote(b));
    CHECK(r.status == 64);
    CHECK(r.err.find("single message") != std::string::npos);
    CHECK_FALSE(g_file_test((d / "out").c_str(), G_FILE_TEST_EXISTS));
    CHECK(mimeuri(quote(a) + " " + quote(b)).out.empty()); // nothing on standard output either
    std::string m1 = d.file("1.mbox", "From x Mon Jan  1 00:00:00 2024\nSubject: a\n\nA\n\n"),
                m2 = d.file("2.mbox", "From y Mon Jan  1 00:00:00 2024\nSubject: b\n\nB\n\n");
    auto both = mimeuri("-o " + quote(d / "out") + " " + quote(m1) + " " + quote(m2));
    CHECK(both.status == 0);
    CHECK(testing::read_file(d / "out") == testing::read_file(m1) + testing::read_file(m2));
    auto bad = mimeuri("-o /nonexistent/dir/out " + quote(a));
    CHECK(bad.status == 73);
}

TEST_CASE("output errors: a full disk and a closed pipe never exit 0")
{
    testing::TempDir d;
    std::string a = d.file("a.eml", "Subject: a\n\n" + std::string(200000, 'x') + "\n");
    auto full = testing::sh(testing::bin() + " " + quote(a) + " >/dev/full 2>" + quote(d / "err") + "; echo $?");
    CHECK(std::stoi(full.out) == 75);
    std::string err = testing::read_file(d / "err");
    CHECK(err.find("No space left") != std::string::npos);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    // A reader that goes away: the status of mimeuri itself is what counts.
    auto closed = testing::sh("set -o pipefail 2>/dev/null; " + testing::bin() + " " + quote(a) +
                              " 2>/dev/null | head -c 10 >/dev/null; echo ${PIPESTATUS[0]:-$?}");
    (void)closed; // sh may lack PIPESTATUS; checked precisely below
    auto precise = testing::sh("(" + testing::bin() + " " + quote(a) + " 2>/dev/null; echo $? >" + quote(d / "st") +
                               ") | head -c 10 >/dev/null; cat " + quote(d / "st"));
    CHECK(std::stoi(precise.out) == 74);
    // -o onto a device writes into it and never replaces the device node.
    auto o = mimeuri("-o /dev/full " + quote(a));
    CHECK(o.status == 75);
    CHECK(testing::sh("test -c /dev/full && echo char").out == "char\n");
}

TEST_CASE("a pipe fed one byte per write, large enough to spool, comes out identical")
{
    testing::TempDir d;
    std::string msg = "Subject: slow\r\nContent-Type: text/plain\r\n\r\n";
    for (int i = 0; i < 3000; ++i) msg += "line " + std::to_string(i) + "\r\n";
    std::string f = d.file("slow.eml", msg);
    auto r = testing::sh("dd if=" + quote(f) + " bs=1 status=none | " + testing::bin() +
                         " --spool-threshold=1000 > " + quote(d / "out") + "; echo $?");
    CHECK(std::stoi(r.out) == 0);
    CHECK(testing::read_file(d / "out") == msg);
}

TEST_CASE("a piped mbox is filtered as it arrives: a message is written before the sender sends the next")
{
    // The sender sends the first message and the first 100 bytes of the second (its From
    // line and part of its header), then waits for mimeuri's output to hold the first (at most
    // 20 s) before it sends the rest. Each message has a cid: reference to repair (an edit, so
    // it is written when taken, not gathered into a run of untouched messages).
    testing::TempDir d;
    auto msg = [](int i) {
        return "From b@example.org Sat Nov 21 00:00:00 2026\nFrom: b@example.org\nMessage-ID: <m" + std::to_string(i) +
               "@example.org>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"b\"\n\n--b\n"
               "Content-Type: text/html\n\n<img src=\"cid:&lt;att@example.org&gt;\">\n--b\nContent-Type: image/png\n"
               "Content-Transfer-Encoding: base64\nContent-ID: <att@example.org>\n\niVBORw0KGgo=\n--b--\n\n";
    };
    const std::string all = msg(1) + msg(2) + msg(3);
    const std::size_t cut = msg(1).size() + 100;
    std::string first = d.file("first", all.substr(0, cut)), rest = d.file("rest", all.substr(cut));
    std::string whole = d.file("all.mbox", all);
    const std::string out = quote(d / "out");
    auto send = [&](const std::string &env, int tenths) { // what the sender saw before sending the rest
        auto r = testing::sh("rm -f " + out + "; { cat " + quote(first) + "; for i in $(seq " + std::to_string(tenths) +
                             "); do [ -s " + out + " ] && break; sleep 0.1; done; [ -s " + out + " ] && echo seen > " +
                             quote(d / "saw") + " || echo nothing > " + quote(d / "saw") + "; cat " + quote(rest) + "; } | " +
                             env + testing::bin() + " --spool-threshold=100 > " + out + "; echo $?");
        CHECK(r.out == "0\n");
        return testing::read_file(d / "saw");
    };
    auto file = mimeuri(quote(whole));
    REQUIRE(file.status == 0);
    CHECK(file.out != all); // (repaired)
    CHECK(send("", 200) == "seen\n");
    CHECK(testing::read_file(d / "out") == file.out);
    // Where no thread can be started for the spool, the input is spooled whole first (as it
    // was before): the same bytes, written after the sender is done.
    CHECK(send("MIMEURI_FAULT=no-thread ", 15) == "nothing\n");
    CHECK(testing::read_file(d / "out") == file.out);
}

TEST_CASE("--in-place leaves files with nothing to change untouched")
{
    testing::TempDir d;
    std::string a = d.file("a.eml", "Subject: a\n\nA\n");
    auto before = testing::sh("stat -c %i:%Y " + quote(a)).out;
    auto r = mimeuri("--in-place " + quote(a));
    CHECK(r.status == 0);
    CHECK(testing::sh("stat -c %i:%Y " + quote(a)).out == before);
    CHECK(testing::read_file(a) == "Subject: a\n\nA\n");
}

TEST_CASE("--on-error: pass writes the original bytes; tempfail exits 75 having written nothing")
{
    testing::TempDir d;
    std::string msg = "Message-ID: <f@x>\nContent-Type: text/html\n\n<img src=\"cid:<x>\">\n";
    std::string f = d.file("m.eml", msg);
    auto pass = testing::sh("MIMEURI_FAULT=pass " + testing::bin() + " " + quote(f) + " >" + quote(d / "out") + " 2>" +
                            quote(d / "err") + "; echo $?");
    CHECK(std::stoi(pass.out) == 0);
    CHECK(testing::read_file(d / "out") == msg);
    std::string err = testing::read_file(d / "err");
    CHECK(err.find("message 1 <f@x>: ") != std::string::npos);
    CHECK(err.find("injected fault") != std::string::npos);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);

    auto temp = testing::sh("MIMEURI_FAULT=pass " + testing::bin() + " --on-error=tempfail " + quote(f) + " >" +
                            quote(d / "out2") + " 2>/dev/null; echo $?");
    CHECK(std::stoi(temp.out) == 75);
    CHECK(testing::read_file(d / "out2").empty());
    // -o: the target is not created (or, if it exists, not replaced).
    std::string target = d.file("target.eml", "previous\n");
    auto o = testing::sh("MIMEURI_FAULT=pass " + testing::bin() + " --on-error=tempfail -o " + quote(target) + " " +
                         quote(f) + " 2>/dev/null; echo $?");
    CHECK(std::stoi(o.out) == 75);
    CHECK(testing::read_file(target) == "previous\n");
    CHECK(testing::sh("ls -A " + quote(d.path) + " | grep -c mimeuri- || true").out == "0\n");
    // In an mbox, the failed input is not written at all with tempfail; with pass, whole.
    std::string mb = d.file("box", "From a\nMessage-ID: <1@x>\n\none\n\nFrom b\nMessage-ID: <2@x>\n\ntwo\n");
    auto mbpass = testing::sh("MIMEURI_FAULT=pass " + testing::bin() + " " + quote(mb) + " 2>/dev/null");
    CHECK(mbpass.out == testing::read_file(mb));
}

TEST_CASE("command-line papercuts: -j2, -check, a mistyped option")
{
    testing::TempDir d;
    std::string mb = d.file("box.mbox", "From a@b Sat Jan  1 00:00:00 2022\nSubject: one\n\nA\n\n"
                                        "From a@b Sat Jan  1 00:00:01 2022\nSubject: two\n\nB\n");
    // A short option's value glued to it, as make and xz take it.
    auto j = mimeuri("-j2 -pnone " + quote(mb));
    CHECK(j.status == 0);
    CHECK(j.out == testing::read_file(mb));
    CHECK(mimeuri("-j0 " + quote(mb)).err.find("--jobs must be between 1 and 256") != std::string::npos);
    // A long option with one dash: an error, not bundled short options (-c -h ...: help).
    auto c = mimeuri("-check " + quote(mb));
    CHECK(c.status == 64);
    CHECK(c.out.empty());
    CHECK(c.err.find("did you mean --check?") != std::string::npos);
    // A typo: exit 64, the closest option and a pointer to --help.
    auto t = mimeuri("--chek " + quote(mb));
    CHECK(t.status == 64);
    CHECK(t.out.empty());
    CHECK(t.err == "mimeuri: unknown option --chek: did you mean --check? (mimeuri --help lists the options)\n");
}

TEST_CASE("--version names the libraries; --help the passes and exit codes")
{
    auto v = mimeuri("--version");
    CHECK(v.status == 0);
    CHECK(v.out.find("\nGMime 3.") != std::string::npos);
    CHECK(v.out.find(", GLib 2.") != std::string::npos);
    CHECK(v.out.find(", gumbo ") != std::string::npos);
    auto h = mimeuri("--help");
    CHECK(h.status == 0);
    CHECK(h.out.find("references, external-body, labels, data, related, remote, offload, in this order") != std::string::npos);
    CHECK(h.out.find("78 configuration error") != std::string::npos);
    CHECK(h.out.find("/mimeuri.conf when it exists") != std::string::npos);
}

TEST_CASE("configuration: a bad file exits 78 naming file, line and key; --print-config exits 0")
{
    testing::TempDir d;
    std::string f = d.file("m.eml", "Subject: a\n\nA\n");
    std::string bad = d.file("bad.conf", "[mimeuri]\non-error=tempfail\njobs=lots\n");
    auto b = mimeuri("--config=" + quote(bad) + " " + quote(f));
    CHECK(b.status == 78);
    CHECK(b.out.empty());
    CHECK(b.err == "mimeuri: " + bad + ":3: [mimeuri] jobs: 'lots' is not an integer\n");
    std::string good = d.file("good.conf", "[mimeuri]\ncid=check\nstrict=yes\n");
    auto p = mimeuri("--config=" + quote(good) + " --print-config");
    CHECK(p.status == 0);
    CHECK(p.err.empty());
    CHECK(p.out.rfind("# mimeuri ", 0) == 0);
    CHECK(p.out.find("\nstrict=true\n") != std::string::npos);
    CHECK(p.out.find("\n[references]\n# from " + good + ":2\ncid=check\n") != std::string::npos);
    // The printed settings are themselves a good configuration (where each came from aside).
    std::string printed = d.file("printed.conf", p.out);
    auto again = mimeuri("--no-config --config=" + quote(printed) + " --print-config");
    CHECK(again.status == 0);
    CHECK(testing::printed_settings(again.out) == testing::printed_settings(p.out));
}

// Drop-in files (issue 54 item 7): FILE.d/*.conf after FILE, in name order, a later one's
// setting winning; other names and hidden files not read; --print-config says where each
// setting came from, the command line's its own; a problem in one names its file and line.
TEST_CASE("configuration: FILE.d/*.conf read after FILE in name order; --print-config names each setting's file")
{
    testing::TempDir d;
    const std::string main = d.file("m.conf", "[mimeuri]\non-error=tempfail\nmax-depth=5\n[references]\nsummary-header=yes\n");
    REQUIRE(::mkdir((d / "m.conf.d").c_str(), 0755) == 0);
    const std::string b = d.file("m.conf.d/20-b.conf", "[references]\nsummary-header=no\n");
    const std::string a = d.file("m.conf.d/10-a.conf", "\n[mimeuri]\nmax-depth=7\n");
    d.file("m.conf.d/30-c.conf.dpkg-old", "not a key file");
    d.file("m.conf.d/.40-hidden.conf", "[mimeuri]\nmax-depth=9\n");
    auto p = mimeuri("--config=" + quote(main) + " --print-config");
    CHECK(p.status == 0);
    CHECK(p.out.find("the defaults, then " + main + ", then " + a + ", then " + b + ", then the command line") !=
          std::string::npos);
    CHECK(p.out.find("\n# from " + main + ":2\non-error=tempfail\n") != std::string::npos);
    CHECK(p.out.find("\n# from " + a + ":3\nmax-depth=7\n") != std::string::npos);
    CHECK(p.out.find("\n# from " + b + ":2\nsummary-header=false\n") != std::string::npos);
    auto cl = mimeuri("--config=" + quote(main) + " --max-depth=11 --print-config");
    CHECK(cl.out.find("\nmax-depth=11\n") != std::string::npos);
    CHECK(cl.out.find("# from " + a) == std::string::npos); // the command line's, not the file's
    d.file("m.conf.d/15-bad.conf", "[mimeuri]\njobs=lots\n");
    auto bad = mimeuri("--config=" + quote(main) + " --check-config");
    CHECK(bad.status == 78);
    CHECK(bad.err.find(d / "m.conf.d/15-bad.conf" + ":2: [mimeuri] jobs: 'lots' is not an integer") != std::string::npos);
}

TEST_CASE("--check on a terminal shows the progress line, unless its report goes to that terminal")
{
    if (testing::sh("command -v script").status != 0) return;
    testing::TempDir d;
    std::string box;
    for (int i = 0; i < 20; ++i)
        box += "From a@b Sat Jan  1 00:00:00 2022\nMessage-ID: <" + std::to_string(i) + "@x>\n\nbody\n\n";
    std::string mb = d.file("box.mbox", box);
    // script(1) gives mimeuri a terminal for both; here standard output goes to a file.
    auto tty = testing::sh("script -qec " + quote(testing::bin() + " --check " + quote(mb) + " > " + quote(d / "out")) +
                           " /dev/null");
    CHECK(tty.out.find("mimeuri: 20 messages, ") != std::string::npos);
    CHECK(tty.out.find(" msg/s, ") != std::string::npos);
    CHECK(testing::read_file(d / "out").find("\"index\":20") != std::string::npos);
    // The report on the terminal itself: no line drawn over it.
    auto both = testing::sh("script -qec " + quote(testing::bin() + " --check " + quote(mb)) + " /dev/null");
    CHECK(both.out.find("\"index\":20") != std::string::npos);
    CHECK(both.out.find(" msg/s, ") == std::string::npos);
}

namespace {

// What the bash completion script offers for the words typed so far (the last one being
// completed), run in a bash of its own.
std::vector<std::string> completions(const std::string &script, const std::vector<std::string> &words)
{
    std::string array;
    for (const auto &w : words) array += " " + quote(w);
    auto r = testing::sh("bash -c " + quote(". " + quote(script) + "; COMP_WORDS=(" + array + "); COMP_CWORD=" +
                                          std::to_string(words.size() - 1) +
                                          "; _mimeuri; printf '%s\\n' \"${COMPREPLY[@]}\"") +
                         " 2>&1");
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < r.out.size()) {
        auto nl = r.out.find('\n', pos);
        if (nl > pos) out.push_back(r.out.substr(pos, nl - pos));
        pos = nl + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("bash completion made from the option table: options, their values, files, subcommands")
{
    if (testing::sh("command -v bash").status != 0) return;
    testing::TempDir d;
    auto gen = mimeuri("--no-config --bash-completion");
    REQUIRE(gen.status == 0);
    std::string script = d.file("mimeuri.bash", gen.out);
    REQUIRE(testing::sh("bash -n " + quote(script)).status == 0);
    CHECK(gen.out.find("complete -F _mimeuri mimeuri") != std::string::npos);
    using V = std::vector<std::string>;
    CHECK(completions(script, {"mimeuri", "--for"}) == V{"--force-read-only", "--format="});
    CHECK(completions(script, {"mimeuri", "--in-"}) == V{"--in-place"});
    CHECK(completions(script, {"mimeuri", "--bash"}).empty()); // hidden
    // Values after "--opt=" (bash splits at '=') and after "-f ".
    CHECK(completions(script, {"mimeuri", "--format", "=", "m"}) == V{"mbox", "message"});
    CHECK(completions(script, {"mimeuri", "--cid", "=", ""}) == V{"check", "extract", "inline", "off", "repair"});
    CHECK(completions(script, {"mimeuri", "-f", "a"}) == V{"auto"});
    CHECK(completions(script, {"mimeuri", "--passes", "=", "references,e"}) == V{"references,external-body"});
    CHECK(completions(script, {"mimeuri", "--jobs", "=", ""}).empty());
    // Files, and the subcommands at the first word.
    d.file("archive.mbox", "");
    CHECK(completions(script, {"mimeuri", d / "arch"}) == V{d / "archive.mbox"});
    CHECK(completions(script, {"mimeuri", "ct"}) == V{"ct2uri"});
    CHECK(completions(script, {"mimeuri", "-o", d / "arch"}) == V{d / "archive.mbox"});
}

TEST_CASE("the shipped example configuration passes --print-config")
{
    const std::string example = std::string(MIMEURI_TESTDATA) + "/../docs/examples/mimeuri.conf";
    auto r = mimeuri("--no-config --config=" + quote(example) + " --print-config");
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("then " + example + ", then the command line") != std::string::npos);
}

TEST_CASE("the summary counts the report's errors by kind and says where to read them")
{
    testing::TempDir d;
    // Three levels of multipart under --max-depth=1: the deeper parts are left and reported.
    std::string m = d.file("deep.eml", "Subject: deep\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=a\n\n"
                                       "--a\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
                                       "Content-Type: multipart/mixed; boundary=c\n\n--c\nContent-Type: text/plain\n\nx\n"
                                       "--c--\n--b--\n--a--\n");
    auto r = mimeuri("--verbose --max-depth=1 " + quote(m));
    CHECK(r.status == 0);
    CHECK(r.err.find("1 messages, 0 changed, 0 dangling references, errors: 1 over --max-depth; "
                     "--report=FILE lists each one") != std::string::npos);
    auto with_report = mimeuri("--verbose --max-depth=1 --report=" + quote(d / "r.jsonl") + " " + quote(m));
    CHECK(with_report.err.find("errors: 1 over --max-depth; see " + (d / "r.jsonl")) != std::string::npos);
    auto clean = mimeuri("--verbose " + quote(m));
    CHECK(clean.err.find("1 messages, 0 changed, 0 dangling references, no errors") != std::string::npos);
}

TEST_CASE("--check and --report write every entry of a page's 10,000 references; --report-max bounds them")
{
    // An archivist checking a saved page sees each reference; the service's log line keeps
    // its bound (MessageReport::kListMax, test_report.cc), the command line has none unless
    // --report-max=N asks for one. The expected counts are the page's own: 10,000 img
    // elements, each one cid: reference to no part.
    std::string html;
    for (int i = 0; i < 10000; ++i) html += "<img src=\"cid:i" + std::to_string(i) + "@example.org\">\n";
    const std::string msg = "From: a@example.org\nMessage-ID: <page@example.org>\nMIME-Version: 1.0\n"
                            "Content-Type: text/html; charset=utf-8\n\n<html><body>\n" + html + "</body></html>\n";
    testing::TempDir d;
    const std::string f = d.file("page.eml", msg);
    Parsers ps;
    auto check = mimeuri("--check " + quote(f));
    REQUIRE(check.status == 0);
    auto all = report_lines(check.out, ps.v);
    REQUIRE(all.size() == 1);
    JsonArray *refs = json_object_get_array_member(all[0], "refs");
    CHECK(json_array_get_length(refs) == 10000);
    CHECK(std::string(json_object_get_string_member(json_array_get_object_element(refs, 9999), "url")) ==
          "cid:i9999@example.org");
    CHECK_FALSE(json_object_has_member(all[0], "omitted"));
    // --report: the same, into the file.
    REQUIRE(mimeuri("--report=" + quote(d / "r.jsonl") + " -o " + quote(d / "out.eml") + " " + quote(f)).status == 0);
    auto file = report_lines(testing::read_file(d / "r.jsonl"), ps.v);
    REQUIRE(file.size() == 1);
    CHECK(json_array_get_length(json_object_get_array_member(file[0], "refs")) == 10000);
    // --report-max=N: the first N, the rest counted in "omitted".
    auto bounded = mimeuri("--check --report-max=100 " + quote(f));
    REQUIRE(bounded.status == 0);
    auto few = report_lines(bounded.out, ps.v);
    REQUIRE(few.size() == 1);
    CHECK(json_array_get_length(json_object_get_array_member(few[0], "refs")) == 100);
    REQUIRE(json_object_has_member(few[0], "omitted"));
    CHECK(json_object_get_int_member(json_object_get_object_member(few[0], "omitted"), "refs") == 9900);
    // As a configuration key too.
    const std::string conf = d.file("m.conf", "[mimeuri]\nreport-max = 10\n");
    auto from_file = mimeuri("--config=" + quote(conf) + " --check " + quote(f));
    REQUIRE(from_file.status == 0);
    auto ten = report_lines(from_file.out, ps.v);
    REQUIRE(ten.size() == 1);
    CHECK(json_array_get_length(json_object_get_array_member(ten[0], "refs")) == 10);
}

TEST_CASE("setup.sh and tests/run.sh name each stage as it starts and show the build's progress")
{
    // The README's two set-up commands, with apt-get, meson and ninja replaced by stubs that
    // say what they were asked (ninja prints its progress lines, as it does when its output
    // is no terminal): what the scripts print around them is what an admin sees.
    const std::string top = std::string(MIMEURI_TESTDATA) + "/..";
    testing::TempDir d;
    const std::string stubs = d / "bin";
    REQUIRE(g_mkdir_with_parents(stubs.c_str(), 0755) == 0);
    auto stub = [&](const std::string &name, const std::string &body) {
        testing::write_file(stubs + "/" + name, "#!/bin/sh\necho \"" + name + " $*\" >> " + quote(d / "calls") + "\n" + body);
        REQUIRE(::chmod((stubs + "/" + name).c_str(), 0755) == 0);
    };
    stub("apt-get", "");
    stub("meson", "case $1 in\n"
                  "setup) mkdir -p \"$2\" && : > \"$2/build.ninja\" ;;\n"
                  "test) mkdir -p \"$3/meson-logs\"\n"
                  "  if [ -n \"$TESTS_FAIL\" ]; then echo '{\"result\": \"FAIL\"}' > \"$3/meson-logs/testlog.json\"; exit 1; fi\n"
                  "  echo '{\"result\": \"OK\"}' > \"$3/meson-logs/testlog.json\" ;;\n"
                  "esac\n");
    stub("ninja", "echo '[1/2] Compiling C++ object a.o'\necho '[2/2] Linking target mimeuri'\n"
                  "[ -z \"$NINJA_FAILS\" ] || exit 1\n"
                  "mkdir -p \"$2\" && printf '#!/bin/sh\\necho sample ran\\n' > \"$2/mimeuri\" && chmod 755 \"$2/mimeuri\"\n");
    const std::string env = "PATH=" + quote(stubs) + ":\"$PATH\" MIMEURI_INTEGRATION= ";
    // The order of what is printed: each stage's line before what the stage does.
    auto in_order = [](const std::string &out, const std::vector<std::string> &wanted) {
        std::size_t at = 0;
        for (const auto &w : wanted) {
            CAPTURE(w);
            const std::size_t found = out.find(w, at);
            CHECK(found != std::string::npos);
            if (found != std::string::npos) at = found + w.size();
        }
    };
    auto setup = testing::sh(env + "bash " + quote(top + "/setup.sh") + " " + quote(d / "b1"));
    CAPTURE(setup.out);
    CAPTURE(setup.err);
    CHECK(setup.status == 0);
    in_order(setup.out, {"== setup 1/4: installing the packages", "== setup 2/4: configuring the build",
                         "== setup 3/4: building the program", "[1/2] Compiling", "[2/2] Linking",
                         "== setup 4/4: running it on a bundled sample", "sample ran"});
    // A stage that fails is the last one named, and the script says so.
    auto broken = testing::sh(env + "NINJA_FAILS=1 bash " + quote(top + "/setup.sh") + " " + quote(d / "b2"));
    CHECK(broken.status != 0);
    CHECK(broken.out.rfind("== setup 3/4: building the program") != std::string::npos);
    CHECK(broken.out.find("== setup 4/4") == std::string::npos);
    CHECK(broken.err.find("== setup: FAILED in stage 3") != std::string::npos);
    // tests/run.sh: configured, built with its progress shown, run, counted.
    auto tests = testing::sh(env + "bash " + quote(top + "/tests/run.sh") + " " + quote(d / "b3"));
    CAPTURE(tests.out);
    CHECK(tests.status == 0);
    // The fast suites first, then the rest; the counts of both runs.
    in_order(tests.out, {"== tests: configuring the build", "== tests: enabling the test suites",
                         "== tests: building the program and the test suites", "[1/2] Compiling", "[2/2] Linking",
                         "== tests: running the test suites (meson test --suite unit --suite golden --suite hostile",
                         "== tests: running the test suites (meson test --no-suite unit --no-suite golden --no-suite hostile",
                         "2 passed, 0 failed, 0 skipped"});
    // A fast suite that fails ends the run there: the rest is not started.
    auto gate = testing::sh(env + "TESTS_FAIL=1 bash " + quote(top + "/tests/run.sh") + " " + quote(d / "b3"));
    CAPTURE(gate.out);
    CHECK(gate.status != 0);
    CHECK(gate.out.find("--no-suite unit") == std::string::npos);
    CHECK(gate.out.find("0 passed, 1 failed, 0 skipped") != std::string::npos);
}
