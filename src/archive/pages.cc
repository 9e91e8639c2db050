// `mimeuri archive`: the pages of an add (pages.hh).
#include "pages.hh"

#include "extract.hh"
#include "references.hh"

#include <glib.h>

namespace mimeuri::archive {

std::string give_addresses(std::string_view html, const std::vector<std::string> &addrs)
{
    std::string out;
    out.reserve(html.size());
    std::size_t from = 0;
    for (std::size_t at = html.find("../"); at != std::string_view::npos; at = html.find("../", at + 3)) {
        if (at == 0 || (html[at - 1] != '"' && html[at - 1] != '\'' && html[at - 1] != '(')) continue;
        std::size_t d = at + 3, n = 0;
        while (d < html.size() && g_ascii_isdigit(html[d]) && n <= addrs.size()) n = n * 10 + static_cast<std::size_t>(html[d++] - '0');
        if (d == at + 3 || d >= html.size() || html[d] != '/' || n == 0 || n > addrs.size()) continue;
        out.append(html.substr(from, at + 3 - from));
        out += addrs[n - 1];
        from = d;
    }
    out.append(html.substr(from));
    return out;
}

std::vector<PlannedPage> plan_pages(const std::vector<std::string_view> &messages, const std::vector<std::string> &batch_addrs,
                                    const std::string &stage, const std::vector<KnownMessage> &known)
{
    std::vector<std::string> addrs = batch_addrs;
    for (const KnownMessage &k : known) addrs.push_back(k.addr);
    RefOptions ro;
    ro.cid = RefOptions::Cid::Extract;
    ro.extract_dir = stage;
    ro.pages = &extract_pages;
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(ro));
    Engine engine(passes, EngineConfig{});
    std::vector<std::string_view> all = messages;
    for (const KnownMessage &k : known) all.push_back(k.bytes);
    std::vector<Source> sources;
    std::vector<Segment> segs;
    sources.reserve(all.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
        sources.push_back(Source::from_bytes(all[k], addrs[k]));
        const auto size = static_cast<std::int64_t>(all[k].size());
        segs.push_back(Segment{0, 0, size, size});
    }
    // Every message indexed first, so that a mid: names any message of the batch (and a
    // reply's cid: the message it answers, known or new).
    for (std::size_t k = 0; k < all.size(); ++k) engine.index(MessageAt{sources[k], segs[k], k + 1, false, 0});
    // The known messages planned first and their pages dropped (an earlier add wrote them):
    // planning one names its files, which a reply's thread link needs (its file names are
    // those of the earlier run: the same bytes, the same names).
    for (std::size_t k = messages.size(); k < all.size(); ++k) (void)engine.plan(MessageAt{sources[k], segs[k], k + 1, false, 0});
    std::vector<PlannedPage> out(messages.size());
    for (std::size_t k = 0; k < messages.size(); ++k) {
        Plan plan = engine.plan(MessageAt{sources[k], segs[k], k + 1, false, 0});
        PlannedPage &p = out[k];
        p.message_id = plan.message_id;
        FolderFiles folder;
        if (plan.failed()) p.cause = plan.cause;
        else if (plan.at_take.empty()) p.cause = "no page was made";
        else folder = folder_of(plan.at_take); // (the engine's own bytes, in this process)
        if (!p.cause.empty()) continue;
        p.row = std::move(folder.row);
        p.files = std::move(folder.files);
        for (OutputFile &f : p.files)
            if (g_str_has_suffix(f.name.c_str(), ".html") || g_str_has_suffix(f.name.c_str(), ".htm"))
                f.bytes = give_addresses(f.bytes, addrs);
    }
    return out;
}

} // namespace mimeuri::archive
