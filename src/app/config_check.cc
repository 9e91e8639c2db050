// --check-config (config_check.hh).
#include "config_check.hh"

#include "milter_socket.hh"
#include "references.hh"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace mimeuri {
namespace {

// Who writes a file: a user, its group and its other groups.
struct Who {
    std::string name;
    uid_t uid{0};
    gid_t gid{0};
    std::vector<gid_t> groups;
};

Who current_user()
{
    Who w;
    w.uid = ::geteuid();
    w.gid = ::getegid();
    if (passwd *pw = ::getpwuid(w.uid)) w.name = pw->pw_name;
    else w.name = "uid " + std::to_string(w.uid);
    int n = ::getgroups(0, nullptr);
    if (n > 0) {
        w.groups.resize(static_cast<std::size_t>(n));
        n = ::getgroups(n, w.groups.data());
        w.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    }
    return w;
}

// A user by name, with its groups as initgroups(3) would give them; nullopt: no such user.
std::optional<Who> named_user(const std::string &name)
{
    passwd *pw = ::getpwnam(name.c_str());
    if (!pw) return std::nullopt;
    Who w;
    w.name = name;
    w.uid = pw->pw_uid;
    w.gid = pw->pw_gid;
    int n = 64;
    w.groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(pw->pw_name, pw->pw_gid, w.groups.data(), &n) < 0) {
        w.groups.resize(static_cast<std::size_t>(n));
        ::getgrouplist(pw->pw_name, pw->pw_gid, w.groups.data(), &n);
    }
    w.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    return w;
}

// Whether `who` has the permission bits `want` (a mask of the owner's bits: S_IWUSR,
// S_IXUSR) on a file with status `st`; root has them all.
bool may(const struct stat &st, mode_t want, const Who &who)
{
    if (who.uid == 0) return true;
    if (st.st_uid == who.uid) return (st.st_mode & want) == want;
    if (st.st_gid == who.gid || std::find(who.groups.begin(), who.groups.end(), st.st_gid) != who.groups.end())
        return (st.st_mode & (want >> 3)) == (want >> 3);
    return (st.st_mode & (want >> 6)) == (want >> 6);
}

std::string folder_of(const std::string &path)
{
    char *d = g_path_get_dirname(path.c_str());
    std::string out = d;
    g_free(d);
    return out;
}

// Why `who` could not create or append to the file `path` ("" if it could): an existing one
// must be a regular file (links are refused, as the run refuses them) with a write bit for
// it; a new one needs a folder it may write and enter.
std::string cannot_write_file(const std::string &path, const Who &who)
{
    struct stat st{};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) return "it is a symbolic link (refused)";
        if (!S_ISREG(st.st_mode)) return "it is not a regular file";
        if (!may(st, S_IWUSR, who)) return who.name + " may not write it";
        return {};
    }
    if (errno != ENOENT && errno != ENOTDIR) return g_strerror(errno);
    const std::string folder = folder_of(path);
    if (::stat(folder.c_str(), &st) != 0) return "its folder " + folder + ": " + g_strerror(errno);
    if (!S_ISDIR(st.st_mode)) return folder + " is not a folder";
    if (!may(st, S_IWUSR | S_IXUSR, who)) return who.name + " may not create files in " + folder;
    return {};
}

// Why `who` could not replace the file `path` by renaming a new one over it ("" if it could):
// --stats, written as a temporary file in the same folder; the folder must exist.
std::string cannot_replace_file(const std::string &path, const Who &who)
{
    struct stat st{};
    if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return "it is a folder";
    const std::string folder = folder_of(path);
    if (::stat(folder.c_str(), &st) != 0) return "its folder " + folder + ": " + g_strerror(errno);
    if (!S_ISDIR(st.st_mode)) return folder + " is not a folder";
    if (!may(st, S_IWUSR | S_IXUSR, who)) return who.name + " may not create files in " + folder;
    return {};
}

// Why `who` could not write files into the folder `path` ("" if it could; a missing one
// the run creates, in a folder it may write).
std::string cannot_write_folder(const std::string &path, const Who &who)
{
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return "it is not a folder";
        if (!may(st, S_IWUSR | S_IXUSR, who)) return who.name + " may not create files in it";
        return {};
    }
    if (errno != ENOENT) return g_strerror(errno);
    return cannot_write_file(path, who);
}

// libmilter's socket notation: "" when --milter=spec is one it opens, else why not.
std::string bad_socket(const std::string &spec)
{
    const std::string form = " (the form is unix:/path, local:/path, inet:PORT@HOST or inet6:PORT@HOST)";
    if (std::string path = milter::unix_path(spec); !path.empty()) {
        if (path[0] != '/') return "the socket's path must be absolute" + form;
        if (path.size() >= sizeof(sockaddr_un{}.sun_path))
            return "the socket's path is longer than " + std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes";
        const std::string folder = folder_of(path);
        struct stat st{};
        if (::stat(folder.c_str(), &st) != 0) return "its folder " + folder + ": " + g_strerror(errno);
        if (!S_ISDIR(st.st_mode)) return folder + " is not a folder";
        if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
            return path + " exists and is not a socket";
        return {};
    }
    const bool v4 = spec.rfind("inet:", 0) == 0, v6 = spec.rfind("inet6:", 0) == 0;
    if (!v4 && !v6) return "unknown socket type" + form;
    const std::string rest = spec.substr(v4 ? 5 : 6);
    const auto at = rest.find('@');
    const std::string port = rest.substr(0, at), host = at == std::string::npos ? "" : rest.substr(at + 1);
    if (port.empty()) return "no port" + form;
    if (port.find_first_not_of("0123456789") == std::string::npos) {
        long p = std::strtol(port.c_str(), nullptr, 10);
        if (port.size() > 5 || p < 1 || p > 65535) return "port " + port + " is not between 1 and 65535";
    } else if (!::getservbyname(port.c_str(), "tcp")) {
        return "port " + port + " is no number and no service name /etc/services knows";
    }
    if (at != std::string::npos && host.empty()) return "no host after '@'" + form;
    if (!host.empty()) {
        addrinfo hints{};
        hints.ai_family = v4 ? AF_INET : AF_INET6;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo *res = nullptr;
        int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
        if (res) ::freeaddrinfo(res);
        if (rc != 0) return "host " + host + ": " + ::gai_strerror(rc);
    }
    return {};
}

} // namespace

std::vector<std::string> config_problems(const Settings &s)
{
    std::vector<std::string> problems;
    const Options &o = s.opts;
    const Who me = current_user();
    Who writer = me; // who writes the report: --user once the service dropped to it
    if (!o.milter.empty()) {
        if (std::string why = bad_socket(o.milter); !why.empty()) problems.push_back("--milter=" + o.milter + ": " + why);
        if (!o.user.empty()) {
            auto user = named_user(o.user);
            if (!user) {
                problems.push_back("--user=" + o.user + ": no such user");
            } else {
                if (!::getgrgid(user->gid))
                    problems.push_back("--user=" + o.user + ": its group (gid " + std::to_string(user->gid) +
                                       ") does not exist");
                if (me.uid != 0 && me.uid != user->uid)
                    problems.push_back("--user=" + o.user + ": the service must be started as root to switch to it");
                writer = *user;
            }
        }
        // Written by the user that starts the service, before it switches.
        if (!o.pidfile.empty())
            if (std::string why = cannot_write_file(o.pidfile, me); !why.empty())
                problems.push_back("--pidfile=" + o.pidfile + ": " + why);
    }
    if (!o.report_path.empty())
        if (std::string why = cannot_write_file(o.report_path, writer); !why.empty())
            problems.push_back("--report=" + o.report_path + ": " + why);
    if (!o.milter.empty() && !o.stats_path.empty())
        if (std::string why = cannot_replace_file(o.stats_path, writer); !why.empty())
            problems.push_back("--stats=" + o.stats_path + ": " + why);
    if (!o.changed_list.empty())
        if (std::string why = cannot_write_file(o.changed_list, writer); !why.empty())
            problems.push_back("--changed-list=" + o.changed_list + ": " + why);
    for (const FilesBeside &f : files_beside(s.pass_opts))
        if (!f.folder.empty())
            if (std::string why = cannot_write_folder(f.folder, writer); !why.empty())
                problems.push_back(f.folder_option + "=" + f.folder + ": " + why);
    // A run or the service goes on without an index it cannot read now (each message that
    // needs it then follows --on-error); a check says so as a problem.
    const RefOptions &refs = s.pass_opts.of<RefOptions>();
    if (refs.mid != RefOptions::Mid::Off) {
        for (const std::string &path : refs.mid_indexes)
            if (Status st = refs::check_mid_index(path); !st) problems.push_back("--mid-index: " + st.error().message);
        if (!refs.notmuch.empty())
            if (Status st = refs::check_notmuch(refs.notmuch); !st) problems.push_back("--notmuch: " + st.error().message);
    }
    return problems;
}

bool wants_check_config(const SettingsLoader &loader)
{
    for (const auto &a : loader.args()) {
        if (a == "--") break;
        if (a == "--check-config") return true;
    }
    return false;
}

int check_config(const SettingsLoader &loader)
{
    // What the load only warns of (an index that cannot be read now: a run goes on without
    // it) config_problems reports as a problem: one line each, not two.
    const guint quiet = g_log_set_handler(G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, [](const gchar *, GLogLevelFlags, const gchar *, gpointer) {}, nullptr);
    // Every file's problems and every policy's, one line each: the load goes on past each.
    std::vector<std::string> problems;
    auto loaded = loader.load(&problems);
    g_log_remove_handler(G_LOG_DOMAIN, quiet);
    if (!loaded) problems.push_back(loaded.error().message);
    else if (loaded->print_and_exit) problems.push_back("--check-config prints nothing else: drop --help, --version, --print-config");
    else for (auto &p : config_problems(*loaded->settings)) problems.push_back(std::move(p));
    if (!problems.empty()) {
        for (const auto &p : problems) std::fprintf(stderr, "mimeuri: %s\n", p.c_str());
        return 78; // EX_CONFIG, whatever the problem: nothing would start
    }
    const Options &o = loaded->settings->opts;
    const std::size_t policies = loaded->settings->policies.size();
    std::printf("mimeuri: the configuration is good: %s%s\n",
                o.milter.empty() ? "a run would start" : ("the service would start on " + o.milter).c_str(),
                policies ? (" with " + std::to_string(policies) + (policies == 1 ? " policy" : " policies")).c_str() : "");
    return std::fflush(stdout) == 0 ? 0 : 74;
}

} // namespace mimeuri
