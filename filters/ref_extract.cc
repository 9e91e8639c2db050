// The reference pass, --cid=extract, the planning half (see ref_extract.hh).
#include "ref_extract.hh"

#include "text.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// A browser opening a page as a file takes a file's type from its name: a stylesheet is
// applied only from a .css file, a script run only from a .js one. So every file is named
// with an extension of its type. A table, not GLib's g_content_type_*: on Linux those
// answer from the machine's shared-mime-info database, which a server need not have, and
// the names must not depend on the machine. The first extension of a type is the one added;
// the others are accepted as they are (photo.jpeg stays photo.jpeg).
struct TypeExtensions {
    const char *type;
    const char *extensions; // space-separated, the one to add first
};
constexpr TypeExtensions kExtensions[] = {
    {"text/css", ".css"},
    {"text/html", ".html .htm"},
    {"application/xhtml+xml", ".xhtml .html"},
    {"text/plain", ".txt"},
    {"text/javascript", ".js .mjs"},
    {"application/javascript", ".js .mjs"},
    {"application/x-javascript", ".js"},
    {"application/json", ".json"},
    {"image/png", ".png"},
    {"image/jpeg", ".jpg .jpeg .jpe .jfif"},
    {"image/pjpeg", ".jpg .jpeg"},
    {"image/gif", ".gif"},
    {"image/webp", ".webp"},
    {"image/avif", ".avif"},
    {"image/bmp", ".bmp"},
    {"image/x-icon", ".ico"},
    {"image/vnd.microsoft.icon", ".ico"},
    {"image/svg+xml", ".svg"},
    {"image/tiff", ".tif .tiff"},
    {"font/woff", ".woff"},
    {"font/woff2", ".woff2"},
    {"font/ttf", ".ttf"},
    {"font/otf", ".otf"},
    {"application/font-woff", ".woff"},
    {"application/x-font-woff", ".woff"},
    {"application/vnd.ms-fontobject", ".eot"},
    {"audio/mpeg", ".mp3"},
    {"audio/ogg", ".ogg .oga"},
    {"audio/wav", ".wav"},
    {"video/mp4", ".mp4"},
    {"video/webm", ".webm"},
    {"application/pdf", ".pdf"},
};

const char *extensions_of(const std::string &type)
{
    for (const auto &t : kExtensions)
        if (type == t.type) return t.extensions;
    return nullptr;
}

// The type a file is named for: the part's, or for application/octet-stream the image its
// first bytes show (as a browser shows it whatever the name).
std::string file_type(MessageContext &ctx, const Node &n)
{
    std::string type = mime_type(n);
    if (type != "application/octet-stream" || !GMIME_IS_PART(n.object)) return type;
    if (g_mime_part_get_content_encoding(GMIME_PART(n.object)) == GMIME_CONTENT_ENCODING_UUENCODE) return type;
    std::string head;
    (void)ctx.decoded_pieces(n, SIZE_MAX, [&](std::string_view piece) {
        head.append(piece.substr(0, 16 - head.size()));
        return head.size() < 16;
    }, 4096);
    std::string image = sniff_image(head);
    return image.empty() ? type : image;
}

// name with an extension of type: kept when it has one already (any case), else the
// type's first added (load.php -> load.php.css). A type the table does not know keeps the
// name as it is, or gets ".bin" when it has no extension at all.
std::string with_extension(std::string name, const std::string &type)
{
    const auto dot = name.rfind('.');
    const std::string ext = dot == std::string::npos || dot == 0 ? std::string() : text::ascii_lower(name.substr(dot));
    const char *known = extensions_of(type);
    if (!known) return ext.empty() ? name + ".bin" : name;
    std::string_view list = known;
    const std::string_view first = list.substr(0, list.find(' '));
    for (std::size_t at = 0; at < list.size();) {
        std::size_t end = list.find(' ', at);
        if (end == std::string_view::npos) end = list.size();
        if (!ext.empty() && list.substr(at, end - at) == ext) return name;
        at = end + 1;
    }
    return name + std::string(first);
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
// Content-Location, made safe, with an extension of its type, and unique among `used`.
std::string file_name(MessageContext &ctx, const Node &tn, const IndexedPart &tp, std::set<std::string> &used)
{
    const std::string type = file_type(ctx, tn);
    std::string fallback = with_extension("part-" + tn.section, type);
    const char *fn = GMIME_IS_PART(tn.object) ? g_mime_part_get_filename(GMIME_PART(tn.object)) : nullptr;
    std::string name = fn ? fn : "";
    if (name.empty() && !tp.location.empty()) {
        name = unescape(tp.location.substr(tp.location.find_last_of('/') + 1));
        if (auto q = name.find_first_of("?#"); q != std::string::npos) name.resize(q);
    }
    name = with_extension(safe_name(name, fallback), type);
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

std::map<std::string, std::string> plan_extraction(MessageContext &ctx, const MessageIndex &ix,
                                                   const std::vector<PendingExtract> &extracts, const std::string &top,
                                                   int page_node)
{
    std::map<std::string, std::string> written;
    if (extracts.empty()) return written;
    ctx.output_dir = top;
    const auto &nodes = ctx.nodes();
    std::set<std::string> used{"index.html"};
    std::map<int, std::string> file_of;
    bool first_html = true;
    html::ParseLimits limits;
    limits.out_of_time = [&ctx] { return ctx.out_of_time(); };
    // A stylesheet with references to extract is written as its file with them rewritten
    // (the stylesheets come first: references.cc), so that the page's backgrounds load.
    std::map<int, std::string> css_files;
    for (const auto &pe : extracts) {
        std::vector<html::Replacement> reps;
        std::set<std::size_t> to_files, holders;
        for (const auto &[ri, node] : pe.refs) {
            if (!file_of.count(node)) {
                const Node &tn = nodes[static_cast<std::size_t>(node)];
                std::string name = file_name(ctx, tn, ix.parts[static_cast<std::size_t>(node)], used);
                auto css = css_files.find(node);
                ctx.add_output_file({name, css != css_files.end() ? css->second : part_bytes(tn)});
                file_of[node] = name;
                written[tn.section] = name;
            }
            GCharPtr rel(g_uri_escape_string(file_of[node].c_str(), nullptr, FALSE));
            reps.push_back({ri, rel.get()});
            to_files.insert(ri);
            const html::Holder &h = pe.scan.holders[pe.scan.refs[ri].holder];
            if (h.attribute) holders.insert(h.raw_begin);
        }
        // The page: index.html for the message's page part (PageBook), part-SECTION.html
        // for another HTML part with something to extract. Before page_node was known, the
        // first HTML part with something to extract was index.html: the same but where an
        // earlier HTML part had nothing to extract.
        const bool index_page = !pe.css && (page_node >= 0 ? pe.html_node == page_node : first_html);
        // mid: links to pages: another message's (a relative URL), or this one's.
        for (const auto &[ri, url] : pe.links) {
            reps.push_back({ri, !url.empty() ? url : index_page ? std::string("#") : std::string("index.html")});
            to_files.insert(ri);
        }
        // The page's <base href> is cut (page_cuts), so that the file names resolve beside
        // it. Its other relative URLs (links, images left on the web) keep the meaning the
        // base gave them: each is made absolute against it, or against the part's own base
        // (Content-Location, RFC 2557), as the message's reader would have resolved it. A
        // URL that is only a fragment stays, so that in-page anchors work in the file; and
        // without a base of the web (thismessage:/) relative URLs stay as they are.
        if (const char *scheme = g_uri_peek_scheme(pe.base.c_str()); scheme && std::strcmp(scheme, "thismessage") != 0)
            for (std::size_t ri = 0; ri < pe.scan.refs.size(); ++ri) {
                const std::string &url = pe.scan.refs[ri].url;
                if (to_files.count(ri) || url.empty() || url[0] == '#') continue;
                if (g_uri_peek_scheme(url.c_str())) continue; // absolute (interned, not owned)
                if (std::string abs = resolve(pe.base, url); !abs.empty()) reps.push_back({ri, abs});
            }
        if (pe.css) {
            css_files[pe.html_node] = html::rewrite(pe.html, pe.scan, reps).html;
            continue;
        }
        const std::string &section = nodes[static_cast<std::size_t>(pe.html_node)].section;
        std::string html_name = index_page ? "index.html" : "part-" + section + ".html";
        if (!index_page && used.count(html_name)) html_name = "part-" + section + "-page.html";
        first_html = first_html && !index_page;
        used.insert(html_name);
        written[section] = html_name;
        // A file of our own: kept as far as it goes.
        ctx.add_output_file({html_name, html::rewrite(pe.html, pe.scan, reps, html::page_cuts(pe.html, holders, limits)).html});
    }
    return written;
}

} // namespace mimeuri::refs
