#include "cturi_cli.hh"

#include "cturi.hh"

#include <glib.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace mimeuri {

int run_cturi_command(int argc, char **argv)
{
    const std::string cmd = argv[0];
    bool urc = false;
    std::vector<std::string> args;
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (!options_done && a == "--") {
            options_done = true;
        } else if (!options_done && (a == "--label-format=urc" || a == "--label-format=uri")) {
            urc = a.back() == 'c';
        } else if (!options_done && (a == "-h" || a == "--help")) {
            std::printf("Usage: mimeuri %s [--label-format=uri|urc] ARG...\n"
                        "Maps each ARG (\"-\": one per line from stdin) and prints one line per ARG.\n",
                        cmd.c_str());
            return 0;
        } else if (!options_done && a.size() > 2 && a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "mimeuri: %s: unknown option %s\n", cmd.c_str(), a.c_str());
            return 64;
        } else {
            args.push_back(a);
        }
    }
    if (args.empty()) {
        std::fprintf(stderr, "mimeuri: %s needs at least one argument (or -)\n", cmd.c_str());
        return 64;
    }
    if (urc && cmd != "ct2uri") {
        std::fprintf(stderr, "mimeuri: --label-format applies to ct2uri only\n");
        return 64;
    }
    int status = 0;
    auto map_one = [&](const std::string &in) {
        Result<std::string> r = std::string();
        if (cmd == "ct2uri") {
            auto ct = cturi::parse_content_type(in);
            if (!ct) r = ct.error();
            else if (urc && !(ct->subtype.size() > 4 && cturi::iequals(ct->subtype.substr(0, 4), "uri.")))
                r = cturi::to_urc(*ct);
            else r = cturi::ct2uri(*ct);
        } else {
            r = cturi::uri2ct_string(in);
        }
        if (r) {
            std::printf("%s\n", r->c_str());
        } else {
            std::printf("\n");
            std::fflush(stdout);
            std::fprintf(stderr, "mimeuri: %s: '%s': %s\n", cmd.c_str(), in.c_str(), r.error().message.c_str());
            status = 65;
        }
    };
    for (const auto &a : args) {
        if (a != "-") {
            map_one(a);
            continue;
        }
        std::string line;
        while (std::getline(std::cin, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            map_one(line);
        }
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "mimeuri: %s: cannot write standard output\n", cmd.c_str());
        return 74;
    }
    return status;
}

} // namespace mimeuri
