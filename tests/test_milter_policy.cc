// The service's policies by envelope ([policy:NAME] groups, src/app/milter_policy.hh): their
// match keys read and matched against envelopes, and their settings loaded over [milter].
#include "helpers.hh"
#include "milter_policy.hh"
#include "milter_stats.hh"
#include "remote.hh"
#include "settings.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <algorithm>

using namespace mimeuri;

namespace {

Envelope envelope(std::string client, std::string sender, std::vector<std::string> rcpts, std::string auth = "")
{
    return Envelope{std::move(client), std::move(sender), std::move(rcpts), std::move(auth)};
}

// The match of [policy:p] in a file holding `body` under that group.
PolicyMatch match_of(const testing::TempDir &d, const std::string &body, std::vector<std::string> &problems)
{
    const std::string path = d.file("m.conf", "[policy:p]\n" + body);
    return read_policy_match(path, "policy:p", problems);
}

// The service's settings from a configuration file.
Result<LoadedSettings> service_settings(const testing::TempDir &d, const std::string &conf,
                                        std::vector<std::string> *problems = nullptr)
{
    const std::string path = d.file("mimeuri.conf", conf);
    SettingsLoader loader({"mimeuri", "--config=" + path, "--milter=unix:" + d / "m.sock"});
    return loader.load(problems);
}

} // namespace

TEST_CASE("policy: an envelope's domain is the address's, lower case, without brackets or a final dot")
{
    CHECK(envelope_domain("<Alice@Example.ORG>") == "example.org");
    CHECK(envelope_domain("bob@mail.example.org.") == "mail.example.org");
    CHECK(envelope_domain("<\"a@b\"@example.net>") == "example.net"); // the last @ decides
    CHECK(envelope_domain("<>") == "");
    CHECK(envelope_domain("postmaster") == "");
}

TEST_CASE("policy: the envelope goes from the front to a worker whole")
{
    const Envelope e = envelope("2001:db8::1", "<a@example.org>", {"<b@example.net>", "<c@example.com>"}, "alice");
    const Envelope back = Envelope::deserialize(e.serialize());
    CHECK(back.client == e.client);
    CHECK(back.sender == e.sender);
    CHECK(back.recipients == e.recipients);
    CHECK(back.auth_authen == "alice");
    CHECK(back.known);
    const Envelope none = Envelope::deserialize(Envelope{}.serialize());
    CHECK(none.client.empty());
    CHECK(none.recipients.empty());
    Envelope unasked; // a connection negotiated before the first policy was loaded
    unasked.known = false;
    CHECK_FALSE(Envelope::deserialize(unasked.serialize()).known);
}

TEST_CASE("policy: an envelope the front did not ask for matches no policy, not even authenticated = no")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    PolicyMatch m = match_of(d, "authenticated = no\n", problems);
    Envelope e;
    CHECK(m.matches(e));
    e.known = false;
    CHECK_FALSE(m.matches(e));
}

TEST_CASE("policy: client ranges, IPv4 and IPv6, and IPv4-mapped addresses")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    PolicyMatch m = match_of(d, "client = 10.0.0.0/8, 192.168.1.7; 2001:db8::/32\n", problems);
    CHECK(problems.empty());
    CHECK(m.clients.size() == 3);
    CHECK(m.matches(envelope("10.1.2.3", "", {})));
    CHECK(m.matches(envelope("192.168.1.7", "", {})));
    CHECK_FALSE(m.matches(envelope("192.168.1.8", "", {})));
    CHECK(m.matches(envelope("2001:db8:0:1::25", "", {})));
    CHECK_FALSE(m.matches(envelope("2001:db9::1", "", {})));
    CHECK(m.matches(envelope("::ffff:10.9.9.9", "", {})));
    CHECK_FALSE(m.matches(envelope("11.0.0.1", "", {})));
    CHECK_FALSE(m.matches(envelope("", "", {}))); // no address (not an IP connection)
}

TEST_CASE("policy: domains exact, or with a leading dot the domain and its subdomains")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    PolicyMatch m = match_of(d, "sender-domain = Example.org, .corp.example\n", problems);
    CHECK(problems.empty());
    CHECK(m.matches(envelope("", "<a@example.ORG>", {})));
    CHECK_FALSE(m.matches(envelope("", "<a@mail.example.org>", {})));
    CHECK(m.matches(envelope("", "<a@corp.example>", {})));
    CHECK(m.matches(envelope("", "<a@eu.corp.example>", {})));
    CHECK_FALSE(m.matches(envelope("", "<a@notcorp.example>", {})));
    CHECK_FALSE(m.matches(envelope("", "<>", {}))); // the null sender has no domain
}

TEST_CASE("policy: recipient-domain needs every recipient of the message")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    PolicyMatch m = match_of(d, "recipient-domain = example.org\n", problems);
    CHECK(problems.empty());
    CHECK(m.matches(envelope("", "", {"<a@example.org>", "<b@EXAMPLE.org>"})));
    CHECK_FALSE(m.matches(envelope("", "", {"<a@example.org>", "<b@example.net>"}))); // mixed
    CHECK_FALSE(m.matches(envelope("", "", {})));
}

TEST_CASE("policy: every key given must hold; authenticated from {auth_authen}")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    PolicyMatch m = match_of(d, "authenticated = yes\nsender-domain = example.org\n", problems);
    CHECK(problems.empty());
    CHECK(m.matches(envelope("", "<a@example.org>", {}, "alice")));
    CHECK_FALSE(m.matches(envelope("", "<a@example.org>", {})));
    CHECK_FALSE(m.matches(envelope("", "<a@example.net>", {}, "alice")));
    PolicyMatch anon = match_of(d, "authenticated = no\n", problems);
    CHECK(anon.matches(envelope("", "", {})));
    CHECK_FALSE(anon.matches(envelope("", "", {}, "bob")));
}

// Policies by listener (issue 54 item 6), and each list key negated with '!'.
TEST_CASE("policy: daemon-name and daemon-port choose by the MTA's listener; '!' negates a key")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    auto on = [](std::string name, std::string port, std::string client = "192.0.2.1",
                 std::vector<std::string> rcpts = {"<b@example.com>"}) {
        Envelope e = envelope(std::move(client), "<a@example.org>", std::move(rcpts));
        e.daemon_name = std::move(name);
        e.daemon_port = std::move(port);
        return e;
    };
    PolicyMatch sub = match_of(d, "daemon-name = submission, submissions\n", problems);
    CHECK(problems.empty());
    CHECK(sub.matches(on("submission", "587")));
    CHECK(sub.matches(on("submissions", "465")));
    CHECK_FALSE(sub.matches(on("smtp", "25")));
    CHECK_FALSE(sub.matches(on("", ""))); // an MTA that sent no {daemon_name}
    PolicyMatch port = match_of(d, "daemon-port = 587\n", problems);
    CHECK(port.matches(on("anything", "587")));
    CHECK_FALSE(port.matches(on("submission", "25")));
    PolicyMatch not_smtp = match_of(d, "daemon-name = !smtp\n", problems);
    CHECK(not_smtp.matches(on("submission", "587")));
    CHECK_FALSE(not_smtp.matches(on("smtp", "25")));
    CHECK_FALSE(not_smtp.matches(on("", ""))); // not known: not known to be another
    PolicyMatch outside = match_of(d, "client = !10.0.0.0/8, fd00::/8\n", problems);
    CHECK(outside.matches(on("smtp", "25", "192.0.2.1")));
    CHECK_FALSE(outside.matches(on("smtp", "25", "10.1.2.3")));
    CHECK_FALSE(outside.matches(on("smtp", "25", "fd00::1")));
    CHECK_FALSE(outside.matches(on("smtp", "25", ""))); // no address: not known to be outside
    PolicyMatch elsewhere = match_of(d, "recipient-domain = !.example.net\n", problems);
    CHECK(elsewhere.matches(on("smtp", "25", "192.0.2.1", {"<b@example.com>", "<c@example.org>"})));
    CHECK_FALSE(elsewhere.matches(on("smtp", "25", "192.0.2.1", {"<b@example.com>", "<c@lists.example.net>"})));
    PolicyMatch foreign = match_of(d, "sender-domain = !example.org\n", problems);
    CHECK_FALSE(foreign.matches(on("smtp", "25")));
    CHECK(problems.empty());
    (void)match_of(d, "daemon-name = !\ndaemon-port = 0, 70000, smtp, 587\n", problems);
    auto at = [&](int line) { return d / "m.conf" + ":" + std::to_string(line) + ": [policy:p] "; };
    REQUIRE(problems.size() == 4);
    CHECK(problems[0] == at(2) + "daemon-name is empty: it would match no message");
    CHECK(problems[1] == at(3) + "daemon-port: '0' is not a port (1 to 65535)");
    CHECK(problems[2] == at(3) + "daemon-port: '70000' is not a port (1 to 65535)");
    CHECK(problems[3] == at(3) + "daemon-port: 'smtp' is not a port (1 to 65535)");
    const Envelope back = Envelope::deserialize(on("submission", "587").serialize());
    CHECK(back.daemon_name == "submission");
    CHECK(back.daemon_port == "587");
    CHECK(back.recipients == std::vector<std::string>{"<b@example.com>"});
}

TEST_CASE("policy: each bad match key is one problem naming the file and the group")
{
    testing::TempDir d;
    std::vector<std::string> problems;
    (void)match_of(d, "client = 10.0.0.0/33, 300.1.1.1, 10.0.0.0/8\nsender-domain = a@b\nauthenticated = maybe\n"
                      "report = /tmp/x\n",
                   problems);
    // Each at its key's line: [policy:p] is line 1, client line 2, and so on.
    auto at = [&](int line) { return d / "m.conf" + ":" + std::to_string(line) + ": [policy:p] "; };
    REQUIRE(problems.size() == 5);
    CHECK(problems[0] == at(2) + "client: '10.0.0.0/33' is not an address or a CIDR range (10.0.0.0/8, 2001:db8::/32)");
    CHECK(problems[1] == at(2) + "client: '300.1.1.1' is not an address or a CIDR range (10.0.0.0/8, 2001:db8::/32)");
    CHECK(problems[2] == at(3) + "sender-domain: 'a@b' is not a domain (example.org, or .example.org for it and its subdomains)");
    CHECK(problems[3] == at(4) + "authenticated: 'maybe' is not yes or no");
    CHECK(problems[4] == at(5) + "report: the service's as a whole, not a message's: set it in [milter]");
    problems.clear();
    (void)match_of(d, "client =\n", problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == at(2) + "client is empty: it would match no message");
    problems.clear();
    (void)match_of(d, "passes = none\n", problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == at(1) + "has no match key (client, sender-domain, recipient-domain, authenticated, daemon-name, "
                                 "daemon-port): it would match every message; the service's own settings go in [milter]");
}

TEST_CASE("policy: one defined twice, in a file or across two, is a problem at the second naming the first")
{
    // GKeyFile merges a group written twice: without this the second [policy:lan] would
    // silently add its keys to the first's.
    testing::TempDir d;
    const std::string conf = "[policy:lan]\nclient = 10.0.0.0/8\n[policy:other]\nauthenticated = yes\n"
                             "[policy:lan]\npasses = none\n";
    std::vector<std::string> problems;
    auto loaded = service_settings(d, conf, &problems);
    REQUIRE(loaded);
    const std::string path = d / "mimeuri.conf";
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == path + ":5: [policy:lan] is defined again: it is first defined at " + path +
                             ":1 (a policy's name is its own)");
    // Across two files: the second file's line, and the first file's.
    const std::string second = d.file("second.conf", "# more\n[policy:other]\nclient = 192.168.0.0/16\n");
    SettingsLoader two({"mimeuri", "--config=" + path, "--config=" + second, "--milter=unix:" + d / "m.sock"});
    problems.clear();
    REQUIRE(two.load(&problems));
    CHECK(std::count(problems.begin(), problems.end(),
                     second + ":2: [policy:other] is defined again: it is first defined at " + path +
                         ":3 (a policy's name is its own)") == 1);
    // The start and a reload refuse the files, with that line first.
    auto failed = two.load();
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == Code::Config);
    CHECK(failed.error().message.rfind(path + ":5: [policy:lan] is defined again", 0) == 0);
    // A command-line run reads no policy: no problem of its own.
    SettingsLoader run({"mimeuri", "--config=" + path, "--config=" + second});
    CHECK(run.load());
}

TEST_CASE("policy: each policy's settings are the service's with its keys over [milter]; first match wins")
{
    testing::TempDir d;
    auto loaded = service_settings(d, "[mimeuri]\nmax-time = 30\n[milter]\non-error = tempfail\n"
                                      "[policy:internal]\nclient = 10.0.0.0/8\npasses = none\n"
                                      "[policy:submission]\nauthenticated = yes\ndata = attach\n"
                                      "[policy:also-internal]\nclient = 10.1.0.0/16\nmax-time = 5\n");
    REQUIRE(loaded);
    const Settings &s = *loaded->settings;
    CHECK(s.opts.on_error == OnError::TempFail);
    CHECK(s.opts.passes == std::vector<std::string>{"all"});
    REQUIRE(s.policies.size() == 3);
    CHECK(s.policies[0].name == "internal");
    CHECK(s.policies[0].settings->opts.passes == std::vector<std::string>{"none"});
    CHECK(s.policies[0].settings->opts.on_error == OnError::TempFail); // [milter] under it
    CHECK(s.policies[0].settings->opts.limits.max_seconds == 30);      // [mimeuri] under it
    CHECK(s.policies[1].settings->opts.passes == std::vector<std::string>{"all"});
    CHECK(s.policy_for(envelope("10.1.2.3", "", {}, "alice"))->name == "internal"); // the first of three
    CHECK(s.policy_for(envelope("192.0.2.1", "", {}, "alice"))->name == "submission");
    CHECK(s.policy_for(envelope("192.0.2.1", "", {})) == nullptr);
    // --print-config names them, in order, for the service and for a run.
    SettingsLoader printing({"mimeuri", "--config=" + d / "mimeuri.conf", "--print-config"});
    auto printed = printing.load();
    REQUIRE(printed);
    REQUIRE(printed->print_and_exit);
    CHECK(printed->print_and_exit->find("\n# The service's policies, first match wins (a command-line run does not "
                                        "read them): [policy:internal], [policy:submission], [policy:also-internal]\n") !=
          std::string::npos);
    // A run never reads them.
    SettingsLoader run({"mimeuri", "--config=" + d / "mimeuri.conf"});
    auto as_run = run.load();
    REQUIRE(as_run);
    CHECK(as_run->settings->policies.empty());
}

TEST_CASE("policy: an unknown key, a bad range, an empty match fail the service's load, one line each")
{
    testing::TempDir d;
    const std::string conf = "[policy:a]\nclient = 10.0.0.0/99\n[policy:b]\nsender-domain = example.org\nbogus = 1\n"
                             "[policy:c]\npasses = none\n[policy:good]\nclient = 10.0.0.0/8\n";
    std::vector<std::string> problems;
    auto loaded = service_settings(d, conf, &problems);
    REQUIRE(loaded);
    REQUIRE(problems.size() == 3);
    CHECK(problems[0].find("[policy:a] client: '10.0.0.0/99'") != std::string::npos);
    CHECK(problems[1].find("unknown key 'bogus' in [policy:b]") != std::string::npos);
    CHECK(problems[2].find("[policy:c] has no match key") != std::string::npos);
    REQUIRE(loaded->settings->policies.size() == 1);
    CHECK(loaded->settings->policies[0].name == "good");
    // Without a list to collect them in (the start, a reload), the first is the error.
    auto failed = service_settings(d, conf);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == Code::Config);
    CHECK(failed.error().message.find("(and 2 more: mimeuri --check-config lists them)") != std::string::npos);
}

// The counters file is written through a temporary file nobody can foresee or plant (issue 48:
// FILE.tmp.PID was opened without O_EXCL): whatever sits at the old name, a hard link to
// another file, a FIFO or a symbolic link, is left as it was and the counters are written.
TEST_CASE("the counters file's temporary file is new, never one planted in the folder")
{
    testing::TempDir d;
    const std::string path = d / "mimeuri.prom";
    const std::string planted = path + ".tmp." + std::to_string(::getpid());
    const std::string victim = d.file("victim", "not yours\n");
    for (const char *kind : {"hard link", "fifo", "symlink"}) {
        CAPTURE(kind);
        (void)::unlink(planted.c_str());
        if (std::string(kind) == "hard link") REQUIRE(::link(victim.c_str(), planted.c_str()) == 0);
        else if (std::string(kind) == "fifo") REQUIRE(::mkfifo(planted.c_str(), 0666) == 0);
        else REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
        // O_NONBLOCK is not ours to add: a FIFO opened for writing with no reader would block,
        // so the FIFO gets a reader that never reads (the old code then wrote into it).
        int reader = std::string(kind) == "fifo" ? ::open(planted.c_str(), O_RDONLY | O_NONBLOCK) : -1;
        auto s = mimeuri::milter::write_stats_file(path, "mimeuri_messages_total 1\n");
        if (reader >= 0) ::close(reader);
        CHECK(s.ok());
        struct stat st{};
        REQUIRE(::lstat(planted.c_str(), &st) == 0); // left where it was, as it was
        CHECK((std::string(kind) == "fifo" ? S_ISFIFO(st.st_mode) : std::string(kind) == "symlink" ? S_ISLNK(st.st_mode)
                                                                                                  : S_ISREG(st.st_mode)));
        CHECK(testing::read_file(victim) == "not yours\n");
        struct stat out{};
        REQUIRE(::lstat(path.c_str(), &out) == 0);
        REQUIRE(S_ISREG(out.st_mode));
        CHECK((out.st_mode & 0777) == 0644);
        CHECK(testing::read_file(path) == "mimeuri_messages_total 1\n");
        GDir *dir = g_dir_open(d.path.c_str(), 0, nullptr);
        int files = 0;
        while (g_dir_read_name(dir)) ++files;
        g_dir_close(dir);
        CHECK(files == 3); // the counters, the victim and what was planted: no temporary left
        (void)::unlink(path.c_str());
    }
}

TEST_CASE("policy: --remote per recipient domain, the camo key read at load (issue 52, the privacy relay)")
{
    testing::TempDir d;
    const std::string key = d.file("camo.key", "s3cret\n");
    auto loaded = service_settings(d, "[policy:relay]\nrecipient-domain = alias.example\nremote = proxy\n"
                                      "remote-proxy = https://camo.alias.example/\nremote-key = " + key + "\n"
                                      "[policy:strict]\nrecipient-domain = .private.example\nremote = block\n");
    REQUIRE(loaded);
    const Settings &s = *loaded->settings;
    CHECK(s.pass_opts.of<RemoteOptions>().mode == RemoteOptions::Mode::Keep); // the service's own
    REQUIRE(s.policies.size() == 2);
    const RemoteOptions &relay = s.policies[0].settings->pass_opts.of<RemoteOptions>();
    CHECK(relay.mode == RemoteOptions::Mode::Proxy);
    CHECK(relay.proxy_base == "https://camo.alias.example");
    CHECK(relay.key_file == key);
    RemoteOptions loaded_relay = relay; // the pass reads the file when it is made
    REQUIRE(load_remote_files(loaded_relay));
    CHECK(loaded_relay.key == "s3cret");
    CHECK(s.policies[1].settings->pass_opts.of<RemoteOptions>().mode == RemoteOptions::Mode::Block);
    CHECK(s.policy_for(envelope("192.0.2.1", "<a@b.example>", {"<x@alias.example>"}))->name == "relay");
    CHECK(s.policy_for(envelope("192.0.2.1", "<a@b.example>", {"<x@mx.private.example>"}))->name == "strict");
    CHECK(s.policy_for(envelope("192.0.2.1", "<a@b.example>", {"<x@alias.example>", "<y@other.example>"})) == nullptr);
    // proxy without its key is a problem at load: the policy is left out, the problem said.
    std::vector<std::string> problems;
    auto bad = service_settings(d, "[policy:relay]\nrecipient-domain = alias.example\nremote = proxy\n", &problems);
    REQUIRE(bad);
    CHECK(bad->settings->policies.empty());
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].find("--remote=proxy needs --remote-proxy and --remote-key") != std::string::npos);
}
