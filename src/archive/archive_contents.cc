// --cid=extract, the archive's top (archive_contents.hh).
#include "archive_contents.hh"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace mimeuri {

namespace {

std::string clean_id(std::string_view id)
{
    std::string out;
    for (char c : id)
        if (c != '\t' && c != '\n' && c != '\r' && c != '\x1f') out += c;
    return out;
}

std::string clean_field(std::string_view s)
{
    std::string out;
    for (char c : s) out += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
    return out;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        std::size_t end = s.find(sep, at);
        if (end == std::string_view::npos) {
            out.push_back(s.substr(at));
            return out;
        }
        out.push_back(s.substr(at, end - at));
        at = end + 1;
    }
}

} // namespace

std::string archive_record(const ArchiveEntry &e)
{
    std::string parents;
    for (const std::string &p : e.parents) {
        if (!parents.empty()) parents += '\x1f';
        parents += clean_id(p);
    }
    return std::to_string(e.folder) + '\t' + std::to_string(e.epoch) + '\t' + clean_field(e.date) + '\t' +
           clean_id(e.message_id) + '\t' + parents + '\t' + clean_field(e.from) + '\t' + clean_field(e.subject) + '\n';
}

std::vector<ArchiveEntry> read_archive_records(std::string_view text)
{
    std::vector<ArchiveEntry> out;
    for (std::string_view line : split(text, '\n')) {
        const auto f = split(line, '\t');
        if (f.size() != 7) continue;
        ArchiveEntry e;
        try {
            e.folder = std::stoull(std::string(f[0]));
            e.epoch = std::stoll(std::string(f[1]));
        } catch (...) {
            continue;
        }
        e.date = f[2];
        e.message_id = f[3];
        if (!f[4].empty())
            for (std::string_view p : split(f[4], '\x1f'))
                if (!p.empty()) e.parents.emplace_back(p);
        e.from = f[5];
        e.subject = f[6];
        out.push_back(std::move(e));
    }
    return out;
}

namespace {

// Each message's parent (n: none), in time linear in the ids named. A message is taken once,
// in order, and has no parent yet when it is: so it is a root, and a candidate is one of its
// own replies exactly when the candidate's tree is rooted at it. The trees are kept as
// disjoint sets (union by size, halving paths), each set knowing its root: the check is one
// find, where walking up from the candidate cost the thread's depth for every id named.
std::vector<std::size_t> parents_of(const std::vector<ArchiveEntry> &entries)
{
    const std::size_t n = entries.size();
    std::unordered_map<std::string_view, std::size_t> by_id; // the first message with the id
    by_id.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        if (!entries[i].message_id.empty()) by_id.emplace(entries[i].message_id, i);
    std::vector<std::size_t> parent(n, n), set(n), size(n, 1), root(n);
    for (std::size_t i = 0; i < n; ++i) set[i] = root[i] = i;
    auto find = [&](std::size_t k) {
        while (set[k] != k) k = set[k] = set[set[k]];
        return k;
    };
    for (std::size_t i = 0; i < n; ++i) {
        const auto &ids = entries[i].parents;
        for (std::size_t k = 0; k < ids.size() && k < kMaxParentIds; ++k) {
            auto it = by_id.find(ids[k]);
            if (it == by_id.end() || it->second == i) continue;
            std::size_t a = find(it->second), b = find(i);
            if (root[a] == i) continue; // one of i's own replies
            parent[i] = it->second;
            const std::size_t top = root[a];
            if (size[a] < size[b]) std::swap(a, b);
            set[b] = a, size[a] += size[b], root[a] = top;
            break;
        }
    }
    return parent;
}

} // namespace

Threads thread_archive(const std::vector<ArchiveEntry> &entries)
{
    const std::size_t n = entries.size();
    const std::vector<std::size_t> parent = parents_of(entries);
    std::vector<std::vector<std::size_t>> kids(n);
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < n; ++i) (parent[i] < n ? kids[parent[i]] : roots).push_back(i);
    auto by_date = [&](std::size_t a, std::size_t b) {
        return entries[a].epoch != entries[b].epoch ? entries[a].epoch < entries[b].epoch : entries[a].folder < entries[b].folder;
    };
    for (auto &k : kids) std::sort(k.begin(), k.end(), by_date);
    // Each thread's newest message.
    std::vector<long long> newest(n);
    std::vector<std::size_t> stack;
    for (std::size_t r : roots) {
        long long best = entries[r].epoch;
        stack.assign(1, r);
        while (!stack.empty()) {
            const std::size_t k = stack.back();
            stack.pop_back();
            best = std::max(best, entries[k].epoch);
            for (std::size_t c : kids[k]) stack.push_back(c);
        }
        newest[r] = best;
    }
    std::sort(roots.begin(), roots.end(), [&](std::size_t a, std::size_t b) {
        return newest[a] != newest[b] ? newest[a] > newest[b] : entries[a].folder > entries[b].folder;
    });
    Threads t;
    for (std::size_t ti = 0; ti < roots.size(); ++ti) {
        std::vector<std::pair<std::size_t, std::size_t>> walk{{roots[ti], 0}};
        while (!walk.empty()) {
            auto [k, d] = walk.back();
            walk.pop_back();
            t.order.push_back(k);
            t.depth.push_back(d);
            t.thread.push_back(ti);
            for (auto c = kids[k].rbegin(); c != kids[k].rend(); ++c) walk.push_back({*c, d + 1});
        }
    }
    return t;
}

std::string thread_lists(const std::vector<ArchiveEntry> &entries, const Threads &t, const std::string &prefix)
{
    std::string p;
    std::size_t open = 0; // nested lists open in the current thread
    for (std::size_t k = 0; k < t.order.size(); ++k) {
        const ArchiveEntry &e = entries[t.order[k]];
        const std::size_t d = t.depth[k];
        if (k == 0 || t.thread[k] != t.thread[k - 1]) {
            while (open) p += "</li></ul>", --open;
            if (k) p += "</li></ul>\n";
            p += "<ul class=\"mimeuri-thread\">";
        } else if (d > t.depth[k - 1]) {
            p += "<ul>";
            ++open;
        } else {
            p += "</li>";
            for (std::size_t up = t.depth[k - 1]; up > d; --up) p += "</ul></li>", --open;
        }
        p += "<li><a href=\"" + prefix + (e.address.empty() ? std::to_string(e.folder) : e.address) + "/index.html\">" + e.subject + "</a> <span class=\"from\">" +
             e.from + "</span> <span class=\"date\">" + (e.date.empty() ? std::string("(no date)") : e.date) + "</span>";
    }
    if (!t.order.empty()) {
        while (open) p += "</li></ul>", --open;
        p += "</li></ul>\n";
    }
    return p;
}

std::string contents_page(const std::vector<ArchiveEntry> &entries, const Threads &t)
{
    std::string p = "<!DOCTYPE html>\n<html><head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                    "'none'; style-src 'self'; form-action 'none'; base-uri 'none'\">\n<meta charset=\"utf-8\">\n"
                    "<title>Messages</title>\n<link rel=\"stylesheet\" href=\"mimeuri.css\">\n</head>\n<body>\n"
                    "<h1>Messages</h1>\n<p class=\"mimeuri-fields\">" +
                    std::to_string(entries.size()) + " messages; newest thread first; dates in UTC</p>\n";
    p += thread_lists(entries, t, "");
    p += "</body></html>\n";
    return p;
}

std::string archive_stylesheet()
{
    return "/* mimeuri's archive: the index and the header of each page */\n"
           "body{margin:0;font-family:sans-serif}\n"
           "body>h1,body>p,body>ul{margin-left:1em;margin-right:1em}\n"
           ".mimeuri-header{background:#eef;border-bottom:1px solid #99c;padding:.5em 1em;font:14px sans-serif;color:#000}\n"
           ".mimeuri-header h1{font-size:1.3em;margin:.3em 0}\n"
           ".mimeuri-nav a{margin-right:1em}\n"
           ".mimeuri-fields span{margin-right:2em}\n"
           ".mimeuri-parts{margin:.3em 0;padding-left:1.5em;font-size:90%}\n"
           ".mimeuri-removed{color:#933;margin:.3em 0}\n"
           ".mimeuri-mail{padding:1em}\n"
           ".mimeuri-text{white-space:pre-wrap}\n"
           "ul.mimeuri-thread{border-top:1px solid #ccd;padding-top:.3em}\n"
           "ul.mimeuri-thread ul{padding-left:1.5em}\n"
           ".from,.date{color:#555;margin-left:.7em;font-size:90%}\n";
}

std::string nav_links(std::size_t prev, std::size_t next)
{
    std::string out;
    if (prev) out += "<a rel=\"prev\" href=\"../" + std::to_string(prev) + "/index.html\">previous in thread</a>";
    if (next) out += "<a rel=\"next\" href=\"../" + std::to_string(next) + "/index.html\">next in thread</a>";
    return out.size() <= kNavRoom ? out : std::string();
}

} // namespace mimeuri
