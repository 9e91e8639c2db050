// The reference pass, --cid=extract, the planning half (see ref_extract.hh).
#include "ref_extract.hh"

#include <gmime/gmime.h>

#include <map>
#include <set>

namespace mimeuri::refs {

// Unicode controls (C0, C1), format characters (bidirectional controls such as U+202E,
// which make "evil\u202Egnp.exe" display as "evilexe.png"; zero-width ones; U+FEFF), line
// and paragraph separators, surrogates and unassigned code points are each replaced with '_'.
std::string safe_name(std::string name, const std::string &fallback)
{
    if (auto slash = name.find_last_of("/\\"); slash != std::string::npos) name = name.substr(slash + 1);
    if (!g_utf8_validate(name.data(), static_cast<gssize>(name.size()), nullptr)) {
        GCharPtr v(g_utf8_make_valid(name.data(), static_cast<gssize>(name.size())));
        name = v.get();
    }
    std::string out;
    for (const char *p = name.c_str(); *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        switch (g_unichar_type(c)) {
        case G_UNICODE_CONTROL:
        case G_UNICODE_FORMAT:
        case G_UNICODE_LINE_SEPARATOR:
        case G_UNICODE_PARAGRAPH_SEPARATOR:
        case G_UNICODE_SURROGATE:
        case G_UNICODE_UNASSIGNED: out += '_'; continue;
        default: break;
        }
        if (c == ':' || c == '*' || c == '?' || c == '"' || c == '<' || c == '>' || c == '|') out += '_';
        else out.append(p, static_cast<std::size_t>(g_utf8_next_char(p) - p));
    }
    while (!out.empty() && (out[0] == '.' || out[0] == ' ' || out[0] == '-')) out.erase(0, 1);
    while (out.find("..") != std::string::npos) out.replace(out.find(".."), 2, "_");
    if (out.size() > 100) {
        const char *end = out.data() + 100;
        const char *prev = g_utf8_find_prev_char(out.data(), end + 1);
        out.resize(static_cast<std::size_t>((prev ? prev : end) - out.data()));
    }
    if (out.empty() || out == "index.html") out = fallback;
    return out;
}

namespace {

std::string extension_for(const std::string &type)
{
    static const std::pair<const char *, const char *> table[] = {
        {"image/png", ".png"},   {"image/jpeg", ".jpg"}, {"image/gif", ".gif"},       {"image/webp", ".webp"},
        {"image/bmp", ".bmp"},   {"image/x-icon", ".ico"}, {"image/svg+xml", ".svg"}, {"text/css", ".css"},
        {"text/html", ".html"},  {"text/plain", ".txt"}, {"font/woff", ".woff"},      {"font/woff2", ".woff2"},
        {"audio/mpeg", ".mp3"},  {"video/mp4", ".mp4"},  {"application/pdf", ".pdf"}};
    for (auto &[t, e] : table)
        if (type == t) return e;
    return ".bin";
}

// A part's content with its transfer encoding undone.
std::string part_bytes(const Node &n)
{
    if (!GMIME_IS_PART(n.object)) return {};
    GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
    if (!w) return {};
    auto mem = GPtr<GMimeStream>::adopt(g_mime_stream_mem_new());
    if (g_mime_data_wrapper_write_to_stream(w, mem.get()) < 0) return {};
    GByteArray *a = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem.get()));
    return std::string(reinterpret_cast<const char *>(a->data), a->len);
}

// The file name for a target part: its filename parameter, else the last segment of its
// Content-Location, made safe, and unique among `used`.
std::string file_name(const Node &tn, const IndexedPart &tp, std::set<std::string> &used)
{
    std::string fallback = "part-" + tn.section + extension_for(mime_type(tn));
    const char *fn = GMIME_IS_PART(tn.object) ? g_mime_part_get_filename(GMIME_PART(tn.object)) : nullptr;
    std::string name = fn ? fn : "";
    if (name.empty() && !tp.location.empty()) {
        name = unescape(tp.location.substr(tp.location.find_last_of('/') + 1));
        if (auto q = name.find_first_of("?#"); q != std::string::npos) name.resize(q);
    }
    name = safe_name(name, fallback);
    std::string stem = name, ext;
    if (auto dot = name.rfind('.'); dot != std::string::npos && dot > 0) {
        stem = name.substr(0, dot);
        ext = name.substr(dot);
    }
    for (int k = 2; used.count(name); ++k) name = stem + "-" + std::to_string(k) + ext;
    used.insert(name);
    return name;
}

} // namespace

void plan_extraction(MessageContext &ctx, const MessageIndex &ix, const std::vector<PendingExtract> &extracts,
                     const std::string &top)
{
    if (extracts.empty()) return;
    ctx.output_dir = top;
    const auto &nodes = ctx.nodes();
    std::set<std::string> used{"index.html"};
    std::map<int, std::string> file_of;
    bool first_html = true;
    for (const auto &pe : extracts) {
        std::vector<html::Replacement> reps;
        for (const auto &[ri, node] : pe.refs) {
            if (!file_of.count(node)) {
                const Node &tn = nodes[static_cast<std::size_t>(node)];
                std::string name = file_name(tn, ix.parts[static_cast<std::size_t>(node)], used);
                ctx.add_output_file({name, part_bytes(tn)});
                file_of[node] = name;
            }
            GCharPtr rel(g_uri_escape_string(file_of[node].c_str(), nullptr, FALSE));
            reps.push_back({ri, rel.get()});
        }
        std::string html_name =
            first_html ? "index.html" : "part-" + nodes[static_cast<std::size_t>(pe.html_node)].section + ".html";
        first_html = false;
        used.insert(html_name);
        // A file of our own: kept as far as it goes.
        ctx.add_output_file({html_name, html::rewrite(pe.html, pe.scan, reps).html});
    }
}

} // namespace mimeuri::refs
