// Process titles by role and state (see proc_title.hh).
#include "proc_title.hh"

#include <sys/prctl.h>

#include <algorithm>
#include <cstring>

namespace mimeuri::proc_title {

namespace {

char *g_area = nullptr;   // argv[0]'s first byte
std::size_t g_room = 0;   // up to the end of the last argv string that follows it in memory

} // namespace

void init(int argc, char **argv)
{
    if (argc < 1 || !argv[0]) return;
    char *end = argv[0] + std::strlen(argv[0]);
    // The kernel lays argv's strings end to end: take each that starts where the last ended.
    for (int i = 1; i < argc && argv[i] == end + 1; ++i) end = argv[i] + std::strlen(argv[i]);
    g_area = argv[0];
    g_room = static_cast<std::size_t>(end - argv[0]); // the last NUL stays
}

void set(const std::string &title, const char *name)
{
    if (name) ::prctl(PR_SET_NAME, name, 0, 0, 0);
    if (!g_area || g_room == 0) return;
    const std::size_t n = std::min(title.size(), g_room);
    std::memcpy(g_area, title.data(), n);
    // The rest NUL: /proc/PID/cmdline (ps) ends at the title, not at the old arguments' tail.
    std::memset(g_area + n, 0, g_room - n);
}

} // namespace mimeuri::proc_title
