// `mimeuri archive`: the command line (archive.hh).
#include "archive.hh"

#include "gobj.hh"

#include <glib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace mimeuri::archive {

namespace {

constexpr const char *kUsage =
    "usage: mimeuri archive [--remove=MESSAGE-ID]... [--feed-size=N] [--batch=N] [--quiet] DIR [INPUT...]\n"
    "Makes or adds to the web archive in DIR from mboxes, Maildirs and message files: a page per\n"
    "message at DIR/ADDRESS/ (ADDRESS from its Message-ID), threads, months, an Atom feed and\n"
    "a thread's mbox. --remove takes a message out again; --batch: messages read and recorded\n"
    "at a time (1000; memory follows it) (docs/archives.md).\n";

struct Args {
    std::string dir;
    std::vector<std::string> inputs, removals;
    Settings settings;
};

// 0 when parsed, else the exit status (64, or 0 for --help).
int parse(int argc, char **argv, Args &a)
{
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return -1;
        } else if (arg.rfind("--remove=", 0) == 0 && arg.size() > 9) {
            std::string id = arg.substr(9);
            if (id.size() > 2 && id.front() == '<' && id.back() == '>') id = id.substr(1, id.size() - 2);
            a.removals.push_back(id);
        } else if (arg.rfind("--feed-size=", 0) == 0) {
            const long n = std::strtol(arg.c_str() + 12, nullptr, 10);
            if (n < 1 || n > 10000) return 64;
            a.settings.feed_size = static_cast<std::size_t>(n);
        } else if (arg.rfind("--batch=", 0) == 0) {
            const long n = std::strtol(arg.c_str() + 8, nullptr, 10);
            if (n < 1 || n > 1000000) return 64;
            a.settings.batch = static_cast<std::size_t>(n);
        } else if (arg == "--quiet" || arg == "-q") {
            a.settings.quiet = true;
        } else if (arg == "--") {
            for (++k; k < argc; ++k) (a.dir.empty() ? a.dir : a.inputs.emplace_back()) = argv[k];
        } else if (arg.size() > 1 && arg[0] == '-') {
            g_warning("archive: unknown option %s", arg.c_str());
            return 64;
        } else if (a.dir.empty()) {
            a.dir = arg;
        } else {
            a.inputs.push_back(arg);
        }
    }
    return a.dir.empty() ? 64 : 0;
}

// One run at a time: an flock on DIR/.mimeuri/lock, which the kernel drops with the process
// however it ends (a run killed leaves no stale lock).
Result<int> lock(const Folder &top, bool quiet)
{
    const int fd = ::openat(top.fd(), (std::string(kStateDir) + "/lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Error{Code::CantCreate, "cannot open the archive's lock: " + std::string(g_strerror(errno))};
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (!quiet) g_message("archive: waiting for another run on %s", top.path().c_str());
        while (::flock(fd, LOCK_EX) != 0)
            if (errno != EINTR) {
                ::close(fd);
                return Error{Code::TempFail, "cannot lock the archive: " + std::string(g_strerror(errno))};
            }
    }
    return fd;
}

int fail(const Error &e)
{
    g_warning("archive: %s", e.message.c_str());
    return exit_status(e.code);
}

} // namespace

int run_archive_command(int argc, char **argv)
{
    Args a;
    if (const int bad = parse(argc, argv, a); bad) {
        if (bad > 0) std::fputs(kUsage, stderr);
        return bad > 0 ? bad : 0;
    }
    auto top = Folder::open(a.dir);
    if (!top) return fail(top.error());
    if (Status s = top->mkdir(kStateDir); !s) return fail(s.error());
    auto held = lock(*top, a.settings.quiet);
    if (!held) return fail(held.error());
    if (Status s = top->use_scratch(kScratch); !s) return fail(s.error());
    auto st = State::open(a.dir + "/" + kStateDir + "/state.sqlite");
    if (!st) return fail(st.error());
    if (auto id = st->meta("feed-id"); !id || id->empty()) {
        GCharPtr uuid(g_uuid_string_random());
        if (Status s = st->set_meta("feed-id", std::string("urn:uuid:") + uuid.get()); !s) return fail(s.error());
    }
    // What a run killed before left in the journal, then a clean stage.
    if (Status s = finish(*top, *st, a.settings); !s) return fail(s.error());
    for (const std::string &id : a.removals) {
        auto n = remove_id(*st, id);
        if (!n) return fail(n.error());
        if (*n == 0) g_warning("archive: no message <%s> to remove", id.c_str());
    }
    auto added = intake(*top, *st, a.inputs, a.settings.batch);
    if (!added) return fail(added.error());
    if (Status s = finish(*top, *st, a.settings); !s) return fail(s.error());
    if (!a.settings.quiet) {
        auto total = st->count();
        g_message("archive: %zu read, %zu added, %zu already there, %zu not added; %lld messages in %s", added->read,
                  added->added, added->already, added->failed, total ? *total : 0LL, a.dir.c_str());
    }
    ::close(*held);
    return added->failed ? 65 : 0;
}

} // namespace mimeuri::archive
