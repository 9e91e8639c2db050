// `mimeuri offload-verify DIR INPUT...` (issue 51): every offloaded reference in the inputs
// (files, or folders such as a Maildir, read recursively) with no file behind it in DIR, and
// every file in DIR that no input references. A reference is the x-mimeuri-offload parameter
// the offload pass writes (offload.hh), found in the bytes as they are (an mbox's messages,
// a message moved by --url-map alike), a block at a time.
#include "offload.hh"

#include "offload_store.hh"

#include <glib.h>

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

constexpr std::string_view kMarker = "x-mimeuri-offload=\"1 ";

// The names the file at path references, each with its count.
bool scan_file(const std::string &path, std::map<std::string, std::vector<std::string>> &refs)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string buf, block(std::size_t{1} << 20, '\0');
    const std::size_t keep = kMarker.size() + 64;
    for (;;) {
        ssize_t n = ::read(fd, block.data(), block.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buf.append(block.data(), static_cast<std::size_t>(n));
        std::size_t at = 0, done = 0;
        while ((at = buf.find(kMarker, at)) != std::string::npos) {
            if (at + keep > buf.size()) break;
            std::string name = buf.substr(at + kMarker.size(), 64);
            if (offload::is_name(name)) refs[name].push_back(path);
            at += kMarker.size();
            done = at;
        }
        // Keep what may hold the start of a marker cut by the block's end.
        std::size_t from = std::max(done, buf.size() > keep ? buf.size() - keep : 0);
        buf.erase(0, from);
    }
    ::close(fd);
    return true;
}

bool scan(const std::string &path, std::map<std::string, std::vector<std::string>> &refs)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    if (!S_ISDIR(st.st_mode)) return scan_file(path, refs);
    DIR *d = ::opendir(path.c_str());
    if (!d) return false;
    std::vector<std::string> names;
    while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    ::closedir(d);
    bool good = true;
    for (const auto &n : names) good = scan(path + "/" + n, refs) && good;
    return good;
}

} // namespace

int run_offload_verify_command(int argc, char **argv)
{
    if (argc < 3 || std::strcmp(argv[1], "--help") == 0) {
        std::fprintf(argc < 3 ? stderr : stdout,
                     "Usage: mimeuri offload-verify DIR INPUT...\n"
                     "Lists each offloaded reference in INPUT (files or folders) with no file in DIR (\"dangling\n"
                     "NAME INPUT\") and each file in DIR no INPUT references (\"orphan NAME\").\n"
                     "Exit status: 0 all referenced and present, 1 orphan files only, 65 a dangling reference,\n"
                     "66 an input or DIR that cannot be read.\n");
        return argc < 3 ? 64 : 0;
    }
    const std::string dir = argv[1];
    std::map<std::string, std::vector<std::string>> refs;
    bool readable = true;
    for (int i = 2; i < argc; ++i)
        if (!scan(argv[i], refs)) {
            std::fprintf(stderr, "mimeuri: offload-verify: cannot read %s\n", argv[i]);
            readable = false;
        }
    std::set<std::string> stored;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d))
            if (offload::is_name(e->d_name)) stored.insert(e->d_name);
        ::closedir(d);
    } else {
        std::fprintf(stderr, "mimeuri: offload-verify: cannot read %s\n", dir.c_str());
        return 66;
    }
    std::size_t dangling = 0, orphans = 0;
    for (const auto &[name, where] : refs)
        if (!stored.count(name))
            for (const auto &w : where) {
                std::printf("dangling %s %s\n", name.c_str(), w.c_str());
                ++dangling;
            }
    for (const auto &name : stored)
        if (!refs.count(name)) {
            std::printf("orphan %s\n", name.c_str());
            ++orphans;
        }
    std::fflush(stdout);
    if (!readable) return 66;
    return dangling ? 65 : orphans ? 1 : 0;
}

} // namespace mimeuri
