// The reference pass and --cid=extract's pages (ref_pages.hh).
#include "ref_pages.hh"

#include "gobj.hh"

#include <glib.h>

namespace mimeuri::refs {

std::string relative_url(const std::string &from_dir, const std::string &to)
{
    auto segments = [](const std::string &path) {
        std::vector<std::string> out;
        for (std::size_t at = 0; at <= path.size();) {
            std::size_t end = path.find('/', at);
            if (end == std::string::npos) end = path.size();
            if (end > at) out.push_back(path.substr(at, end - at));
            at = end + 1;
        }
        return out;
    };
    const std::vector<std::string> from = segments(from_dir), target = segments(to);
    std::size_t common = 0;
    while (common < from.size() && common + 1 < target.size() && from[common] == target[common]) ++common;
    std::string url;
    for (std::size_t k = common; k < from.size(); ++k) url += "../";
    for (std::size_t k = common; k < target.size(); ++k) {
        GCharPtr e(g_uri_escape_string(target[k].c_str(), nullptr, FALSE));
        url += e.get();
        if (k + 1 < target.size()) url += '/';
    }
    return url;
}

} // namespace mimeuri::refs
