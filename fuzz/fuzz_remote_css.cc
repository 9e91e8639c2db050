// The remote pass's CSS tokenizer (filters/remote_css.cc, CSS Syntax Level 3): whatever the
// text, every fetch it reports lies inside the text (begin <= url span <= end), the URLs in
// order; blocking every network fetch leaves a text in which the tokenizer finds none;
// proxying every fetch leaves a text in which it finds each one again, in order, at its new URL (a
// rewrite that moved a token's end, or that a second reading would split, shows here).
// Bounded time: libFuzzer's -timeout in fuzz/run.sh (the tokenizer is linear: remote_css.cc).
#include "remote.hh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mimeuri;
using remote::Action;

namespace {

[[noreturn]] void broken(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_remote_css: invariant broken: %s: %s\n", what, detail.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string css(reinterpret_cast<const char *>(data), size);
    const auto fetches = remote::css_fetches(css);
    std::size_t last = 0;
    for (const auto &f : fetches) {
        if (!(f.begin <= f.url_begin && f.url_begin <= f.url_end && f.url_end <= f.end && f.end <= css.size()))
            broken("a fetch's spans", std::to_string(f.begin) + " " + std::to_string(f.url_begin) + " " +
                                          std::to_string(f.url_end) + " " + std::to_string(f.end));
        // The URLs in order, apart (what a block replaces may be shared: an image-set()'s
        // strings each name the whole function).
        if (f.url_begin < last) broken("fetches' URLs out of order or overlapping", f.url);
        last = f.url_end;
    }
    const remote::Sites sites = remote::css_sites(css);
    // Block: every network fetch made `none`; read again, none is left.
    std::vector<Action> block(sites.sites.size(), Action{Action::Kind::Block, {}});
    const std::string blocked = remote::apply_actions(css, sites, block);
    if (const auto left = remote::css_sites(blocked); !left.sites.empty())
        broken("a fetch left after block", left.sites[0].url + " in " + blocked.substr(0, 200));
    // Proxy: each network fetch's URL replaced; read again, the same fetches at the new URLs.
    std::vector<Action> proxy;
    for (std::size_t k = 0; k < sites.sites.size(); ++k)
        proxy.push_back({Action::Kind::Proxy, "http://camo.test/" + std::to_string(k)});
    const std::string proxied = remote::apply_actions(css, sites, proxy);
    const auto again = remote::css_sites(proxied);
    if (again.sites.size() != sites.sites.size())
        broken("proxy changed the number of fetches",
               std::to_string(sites.sites.size()) + " then " + std::to_string(again.sites.size()));
    for (std::size_t k = 0; k < again.sites.size(); ++k)
        if (again.sites[k].url != proxy[k].url) broken("a proxied fetch not found again", again.sites[k].url);
    return 0;
}
