// In-process HTML scanning speed (bench/html.sh): the streaming tokenizer (scan_refs, as the
// references pass calls it) against gumbo's tree (find_refs) on the same text, best of N runs
// each, interleaved so that both see the same load. Usage: html_scan FILE.html [RUNS]
#include "html_tokenizer.hh"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace mimeuri::html;

int main(int argc, char **argv)
{
    if (argc < 2) return 64;
    std::ifstream f(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string html = ss.str();
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    ParseLimits limits;
    double best_fast = 1e9, best_gumbo = 1e9;
    std::size_t refs = 0;
    bool fell_back = false;
    for (int i = 0; i < runs; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto fast = tokenize_refs(html, limits.max_refs);
        auto t1 = std::chrono::steady_clock::now();
        auto gumbo = find_refs(html, limits);
        auto t2 = std::chrono::steady_clock::now();
        best_fast = std::min(best_fast, std::chrono::duration<double>(t1 - t0).count());
        best_gumbo = std::min(best_gumbo, std::chrono::duration<double>(t2 - t1).count());
        fell_back = !fast.scan;
        refs = fast.scan ? fast.scan->refs.size() : 0;
        if (!gumbo || (fast.scan && gumbo->refs.size() != refs)) return 1;
    }
    const double mb = static_cast<double>(html.size()) / 1e6;
    std::printf("%.1f MB of HTML, %zu references%s\n", mb, refs, fell_back ? " (the tokenizer fell back)" : "");
    std::printf("tokenizer %8.4f s %8.1f MB/s\n", best_fast, mb / best_fast);
    std::printf("gumbo     %8.4f s %8.1f MB/s\n", best_gumbo, mb / best_gumbo);
    std::printf("tokenizer is %.1fx gumbo's speed\n", best_gumbo / best_fast);
    return 0;
}
