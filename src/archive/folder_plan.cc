// --cid=extract, the planning half (see folder_plan.hh).
#include "folder_plan.hh"

#include "charsets.hh"
#include "contents_row.hh"
#include "external_body.hh"
#include "page_writer.hh"
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
    {"application/x-font-ttf", ".ttf"},
    {"application/font-sfnt", ".ttf .otf"},
    {"application/x-font-otf", ".otf"},
    {"application/x-font-opentype", ".otf"},
    {"audio/mp3", ".mp3"},
    {"audio/x-wav", ".wav"},
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
    std::string sniffed = sniff_image(head);
    // Fonts and PDF by their signatures too (a part of the type a file keeps is named so).
    for (const auto &[magic, t] : {std::pair<std::string_view, const char *>{"wOFF", "font/woff"}, {"wOF2", "font/woff2"},
                                   {"OTTO", "font/otf"}, {std::string_view("\0\1\0\0", 4), "font/ttf"}, {"%PDF-", "application/pdf"}})
        if (sniffed.empty() && head.compare(0, magic.size(), magic) == 0) sniffed = t;
    return sniffed.empty() ? type : sniffed;
}

// A name's extension, lower case, with its dot ("" for none, and for a name that only starts
// with a dot).
std::string extension_of(const std::string &name)
{
    const auto dot = name.rfind('.');
    return dot == std::string::npos || dot == 0 ? std::string() : text::ascii_lower(name.substr(dot));
}

// name with an extension of type: kept when it has one already (any case), else the
// type's first added (load.php -> load.php.css). A type the table does not know keeps the
// name as it is (inert_name decides whether its extension may stay).
std::string with_extension(std::string name, const std::string &type)
{
    const std::string ext = extension_of(name);
    const char *known = extensions_of(type);
    if (!known) return name;
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

bool is_html_type(const std::string &type) { return type == "text/html" || type == "application/xhtml+xml"; }

// The extensions a file beside the pages may keep: each maps, in Chromium's table
// (net/base/mime_util.cc), in /etc/mime.types (Apache, nginx and Python's http.server read
// the same list) and in shared-mime-info, to a type no browser runs or renders as a document
// of the archive's origin: images (not SVG: a document with script), fonts, audio, video,
// CSS, PDF (its viewer is not the page's origin), plain text. An allow list: a deny list of
// what runs cannot be complete (.xhtm, .xpdl, .xht and whatever a server adds next).
struct InertExtension {
    const char *ext;
    const char *type; // the part's type it is consistent with (or any of the same top level)
};
constexpr InertExtension kInert[] = {
    {".png", "image/png"},   {".jpg", "image/jpeg"},  {".jpeg", "image/jpeg"}, {".gif", "image/gif"},
    {".webp", "image/webp"}, {".avif", "image/avif"}, {".bmp", "image/bmp"},   {".ico", "image/x-icon"},
    {".tif", "image/tiff"},  {".tiff", "image/tiff"}, {".woff", "font/woff"},  {".woff2", "font/woff2"},
    {".ttf", "font/ttf"},    {".otf", "font/otf"},    {".mp3", "audio/mpeg"},  {".ogg", "audio/ogg"},
    {".oga", "audio/ogg"},   {".wav", "audio/wav"},   {".mp4", "video/mp4"},   {".webm", "video/webm"},
    {".css", "text/css"},    {".pdf", "application/pdf"}, {".txt", "text/plain"},
};

std::string_view top_level(std::string_view type) { return type.substr(0, type.find('/')); }

// Whether a file of type may keep the extension ext (lower case): ext is on the allow list,
// and type is its type, or the table names ext for type (image/pjpeg: .jpg), or both are
// images, fonts, audio or video (image/x-png: .png). An octet-stream the bytes did not show
// to be one of these (file_type) is none of them.
bool keeps_extension(const std::string &ext, const std::string &type)
{
    for (const InertExtension &e : kInert) {
        if (ext != e.ext) continue;
        if (type == e.type) return true;
        const std::string_view top = top_level(e.type);
        if ((top == "image" || top == "font" || top == "audio" || top == "video") && top_level(type) == top &&
            type != "image/svg+xml")
            return true;
        const char *known = extensions_of(type);
        for (std::string_view list = known ? known : ""; !list.empty();) {
            const std::string_view one = list.substr(0, list.find(' '));
            if (one == ext) return true;
            list.remove_prefix(std::min(list.size(), one.size() + 1));
        }
        return false;
    }
    return false;
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
    const char *fn = GMIME_IS_PART(tn.object) ? g_mime_part_get_filename(GMIME_PART(tn.object)) : nullptr;
    std::string name = fn ? fn : "";
    if (name.empty() && !tp.location.empty()) {
        name = unescape(tp.location.substr(tp.location.find_last_of('/') + 1));
        if (auto q = name.find_first_of("?#"); q != std::string::npos) name.resize(q);
    }
    return choose_name(used, inert_name(safe_name(name, "part-" + tn.section), type));
}

} // namespace

std::string inert_name(const std::string &name, const std::string &type)
{
    std::string out = with_extension(name, type);
    const std::string ext = extension_of(out);
    // An HTML part is written as a page, sanitised (page_writer.hh): named .html.
    if (is_html_type(type)) return ext == ".html" || ext == ".htm" ? out : out + ".html";
    return keeps_extension(ext, type) ? out : out + ".txt";
}

std::string choose_name(std::set<std::string> &used, const std::string &wanted)
{
    std::string name = wanted, stem = wanted, ext;
    if (auto dot = wanted.rfind('.'); dot != std::string::npos && dot > 0) {
        stem = wanted.substr(0, dot);
        ext = wanted.substr(dot);
    }
    for (int k = 2; used.count(name); ++k) name = stem + "-" + std::to_string(k) + ext;
    used.insert(name);
    return name;
}

namespace {

// The part's text as UTF-8 for its page: pe.html is the part's bytes, or already UTF-8 when
// its charset is not ASCII-compatible (ref_part.cc converts those to check them).
std::string page_text(const Node &n, std::string_view bytes)
{
    const char *label = g_mime_object_get_content_type_parameter(n.object, "charset");
    if (label && ascii_compatibility(label) == AsciiCompat::No &&
        g_utf8_validate(bytes.data(), static_cast<gssize>(bytes.size()), nullptr))
        return to_utf8(bytes, "utf-8");
    return to_utf8(bytes, label);
}

// The first text/plain leaf that is not an attachment: the message's text.
int text_node(const MessageContext &ctx)
{
    const auto &nodes = ctx.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (n.kind != Node::Kind::Leaf || mime_type(n) != "text/plain" || !GMIME_IS_TEXT_PART(n.object)) continue;
        if (const char *d = g_mime_object_get_disposition(n.object); d && g_ascii_strcasecmp(d, "attachment") == 0) continue;
        return static_cast<int>(i);
    }
    return -1;
}

// The message's text, whole: its bytes decoded and converted here (page_text, to_utf8: a
// NUL becomes U+FFFD), not through g_mime_text_part_get_text, whose C string ends at the
// first NUL and would hide the rest of the text from the page.
std::string text_page_body(const Node &n)
{
    const std::string t = page_text(n, part_bytes(n));
    const char *format = g_mime_object_get_content_type_parameter(n.object, "format");
    const char *delsp = g_mime_object_get_content_type_parameter(n.object, "delsp");
    return plain_text_body(t, format && g_ascii_strcasecmp(format, "flowed") == 0,
                           delsp && g_ascii_strcasecmp(delsp, "yes") == 0);
}

} // namespace

namespace {

// One message's folder being planned (plan_extraction): the files of the parts its pages
// reference, then a page for every HTML part (and index.html), each sanitised, with the
// header's list of parts linking to the file or page that holds each.
class FolderPlan {
public:
    FolderPlan(MessageContext &ctx, const MessageIndex &ix, int page_node, bool allow_remote_images)
        : ctx_(ctx), ix_(ix), nodes_(ctx.nodes()), page_node_(page_node), allow_remote_images_(allow_remote_images)
    {
    }
    void extract(const PendingExtract &pe);
    void page_the_rest();
    void write_pages();
    PlannedFolder done() && { return {std::move(files_), std::move(written_)}; }

private:
    // The pages, made once every file is named (their headers list the files).
    struct Page {
        std::string name;
        std::string text; // UTF-8: the mail's HTML to sanitise, or (ours) HTML as it is
        bool ours{false};
        bool message_page{false};
        std::string section; // the HTML part's (the report's "pages")
    };
    const std::string &file_for(int node);
    std::string svg_image_url(const PendingExtract &pe, std::size_t ri, int node);
    std::string text_page_images(int text_node);
    void absolute_urls(const PendingExtract &pe, const std::set<std::size_t> &to_files,
                       std::vector<html::Replacement> &reps) const;
    PageParts parts_list() const;

    MessageContext &ctx_;
    const MessageIndex &ix_;
    const std::vector<Node> &nodes_;
    const int page_node_;
    const bool allow_remote_images_;
    std::vector<OutputFile> files_;
    std::map<std::string, std::string> written_; // section -> file or page name
    std::set<std::string> used_{"index.html"};
    std::map<int, std::string> file_of_;
    std::map<int, std::string> svg_url_of_; // svg_image_url's answer a target ("": the file)
    // A stylesheet with references to extract is written as its file with them rewritten
    // (the stylesheets come first: references.cc), so that the page's backgrounds load.
    std::map<int, std::string> css_files_;
    std::vector<Page> pages_;
    std::set<int> paged_;
    bool first_html_{true};
};

// The file a referenced part is saved as, named (and saved) the first time.
const std::string &FolderPlan::file_for(int node)
{
    if (auto f = file_of_.find(node); f != file_of_.end()) return f->second;
    const Node &tn = nodes_[static_cast<std::size_t>(node)];
    std::string name = file_name(ctx_, tn, ix_.parts[static_cast<std::size_t>(node)], used_);
    auto css = css_files_.find(node);
    std::string bytes = css != css_files_.end() ? css->second : part_bytes(tn);
    // An HTML part saved as a file is a page too: made inert as the others are.
    if (is_html_type(mime_type(tn))) pages_.push_back({name, page_text(tn, bytes), false, false, tn.section});
    else files_.push_back({name, std::move(bytes)});
    written_[tn.section] = name;
    return file_of_[node] = name;
}

// An SVG image is written beside the pages as .svg.txt (inert_name: as a document, SVG runs
// script), which no browser shows as an image. Where the mail shows it as an image (an
// <img>, a srcset candidate, a background or poster, CSS url()), the page names it by a
// data: URL instead: an image runs no script and loads nothing, and the pages' policy allows
// data: images. Up to 1 MiB; elsewhere (a link, a frame) and larger, the file.
std::string FolderPlan::svg_image_url(const PendingExtract &pe, std::size_t ri, int node)
{
    constexpr std::size_t kMaxInline = 1u << 20;
    if (ri >= pe.scan.refs.size()) return {};
    const html::Ref &r = pe.scan.refs[ri];
    if (!r.css) {
        if (r.inner >= 0 || r.holder >= pe.scan.holders.size()) return {};
        const html::Holder &h = pe.scan.holders[r.holder];
        const bool image = (h.element == "img" && (h.attr == "src" || h.attr == "srcset")) ||
                           (h.element == "source" && h.attr == "srcset") || h.attr == "background" ||
                           (h.element == "video" && h.attr == "poster");
        if (!image) return {};
    }
    // Once a target, however often the mail names it: its type, its bytes, their base64.
    auto [url, fresh] = svg_url_of_.try_emplace(node);
    if (!fresh) return url->second;
    const Node &tn = nodes_[static_cast<std::size_t>(node)];
    if (file_type(ctx_, tn) != "image/svg+xml") return {};
    const std::string bytes = part_bytes(tn);
    if (bytes.empty() || bytes.size() > kMaxInline) return {};
    GCharPtr b64(g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size()));
    return url->second = std::string("data:image/svg+xml;base64,") + b64.get();
}

// The page's <base href> is dropped (html_sanitize), so that the file names resolve beside
// it. Its other relative URLs (links, images left on the web) keep the meaning the base gave
// them: each is made absolute against it, or against the part's own base (Content-Location,
// RFC 2557), as the message's reader would have resolved it. A URL that is only a fragment
// stays, so that in-page anchors work in the file; and without a base of the web
// (thismessage:/) relative URLs stay as they are.
void FolderPlan::absolute_urls(const PendingExtract &pe, const std::set<std::size_t> &to_files,
                               std::vector<html::Replacement> &reps) const
{
    const char *scheme = g_uri_peek_scheme(pe.base.c_str());
    if (!scheme || std::strcmp(scheme, "thismessage") == 0) return;
    for (std::size_t ri = 0; ri < pe.scan.refs.size(); ++ri) {
        const std::string &url = pe.scan.refs[ri].url;
        if (to_files.count(ri) || url.empty() || url[0] == '#') continue;
        if (g_uri_peek_scheme(url.c_str())) continue; // absolute (interned, not owned)
        if (std::string abs = resolve(pe.base, url); !abs.empty()) reps.push_back({ri, abs});
    }
}

// One HTML part (or stylesheet) with something to extract: its references point at the
// files, its mid: links at the pages; a stylesheet is kept for its file, an HTML part
// becomes a page.
void FolderPlan::extract(const PendingExtract &pe)
{
    std::vector<html::Replacement> reps;
    std::set<std::size_t> to_files;
    for (const auto &[ri, node] : pe.refs) {
        GCharPtr rel(g_uri_escape_string(file_for(node).c_str(), nullptr, FALSE));
        std::string svg = svg_image_url(pe, ri, node);
        reps.push_back({ri, svg.empty() ? std::string(rel.get()) : std::move(svg)});
        to_files.insert(ri);
    }
    // The page: index.html for the message's page part (page_node), part-SECTION.html
    // for another HTML part with something to extract. Before page_node was known, the
    // first HTML part with something to extract was index.html: the same but where an
    // earlier HTML part had nothing to extract.
    const bool message_page = !pe.css && (page_node_ >= 0 ? pe.html_node == page_node_ : first_html_);
    // mid: links to pages: another message's (a relative URL), or this one's.
    for (const auto &[ri, url] : pe.links) {
        reps.push_back({ri, !url.empty() ? url : message_page ? std::string("#") : std::string("index.html")});
        to_files.insert(ri);
    }
    absolute_urls(pe, to_files, reps);
    if (pe.css) {
        css_files_[pe.html_node] = html::rewrite(pe.html, pe.scan, reps).html;
        return;
    }
    const Node &hn = nodes_[static_cast<std::size_t>(pe.html_node)];
    // Chosen among the names taken, never assumed free: an attachment may be called
    // part-2.html (or part-2-2.html).
    const std::string html_name = message_page ? "index.html" : choose_name(used_, "part-" + hn.section + ".html");
    first_html_ = first_html_ && !message_page;
    written_[hn.section] = html_name;
    paged_.insert(pe.html_node);
    pages_.push_back({html_name, page_text(hn, html::rewrite(pe.html, pe.scan, reps).html), false, message_page, hn.section});
}

// Every HTML part of the message has a page; the message has one (index.html) whatever
// it holds: its first HTML part, else its text, else the list of its parts.
void FolderPlan::page_the_rest()
{
    bool have_page = false;
    for (const Page &p : pages_) have_page = have_page || p.message_page;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const Node &n = nodes_[i];
        if (n.kind != Node::Kind::Leaf || mime_type(n) != "text/html" || paged_.count(static_cast<int>(i))) continue;
        if (written_.count(n.section)) continue; // saved as a file (a page already)
        const bool message_page = !have_page && (page_node_ < 0 || static_cast<int>(i) == page_node_);
        const std::string name = message_page ? "index.html" : choose_name(used_, "part-" + n.section + ".html");
        have_page = have_page || message_page;
        written_[n.section] = name;
        pages_.push_back({name, page_text(n, part_bytes(n)), false, message_page, n.section});
    }
    if (!have_page) {
        const int tn = text_node(ctx_);
        std::string body = tn >= 0 ? text_page_body(nodes_[static_cast<std::size_t>(tn)]) : std::string();
        if (tn >= 0) written_[nodes_[static_cast<std::size_t>(tn)].section] = "index.html";
        body += text_page_images(tn);
        pages_.push_back({"index.html", std::move(body), true, true});
    }
}

// A message with no HTML part: its images (each leaf of an image type a browser shows as a
// file, SVG aside, outside an attached message) written as files and shown under its text, as
// a reader and MHonArc show them; the page is ours (written as is), so each name is escaped.
std::string FolderPlan::text_page_images(int text_node)
{
    std::string out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const Node &n = nodes_[i];
        if (static_cast<int>(i) == text_node || n.kind != Node::Kind::Leaf || n.message != ctx_.message()) continue;
        const std::string type = file_type(ctx_, n);
        if (type.compare(0, 6, "image/") != 0 || type == "image/svg+xml") continue;
        const std::string &name = file_for(static_cast<int>(i));
        if (!keeps_extension(extension_of(name), type))
            continue; // named .txt: not an image to a browser
        GCharPtr url(g_uri_escape_string(name.c_str(), nullptr, FALSE));
        out += "<p class=\"mimeuri-image\"><img src=\"" + html_text(url.get()) + "\" alt=\"" + html_text(name) + "\"></p>\n";
    }
    return out;
}

// The header's list of parts: each leaf, linked to the file or page that holds it.
namespace {

// A message/external-body part's access-type=URL URL (RFC 2017 3.1: quotes and white space
// dropped), when it is http or https: an offloaded attachment's (docs/offload.md) or any
// sender's. Any other scheme (javascript:, file:, data:) is no link: "" then.
std::string external_url(const Node &n)
{
    if (mime_type(n) != "message/external-body") return {};
    const char *access = g_mime_object_get_content_type_parameter(n.object, "access-type");
    const char *value = g_mime_object_get_content_type_parameter(n.object, "URL");
    if (!access || !value || g_ascii_strcasecmp(access, "URL") != 0) return {};
    std::string url = rfc2017::extract(value);
    const char *scheme = g_uri_peek_scheme(url.c_str());
    if (!scheme || (std::strcmp(scheme, "http") != 0 && std::strcmp(scheme, "https") != 0)) return {};
    if (!g_uri_is_valid(url.c_str(), G_URI_FLAGS_NONE, nullptr)) return {};
    return url;
}

} // namespace

PageParts FolderPlan::parts_list() const
{
    PageParts parts;
    for (const Node &n : nodes_) {
        if (n.kind != Node::Kind::Leaf) continue;
        std::string text = html_text(n.section + " " + mime_type(n));
        if (const char *fn = GMIME_IS_PART(n.object) ? g_mime_part_get_filename(GMIME_PART(n.object)) : nullptr)
            text += " " + html_text(fn);
        auto w = written_.find(n.section);
        std::string url;
        if (w != written_.end()) {
            GCharPtr e(g_uri_escape_string(w->second.c_str(), nullptr, FALSE));
            url = e.get();
        } else {
            url = external_url(n); // a link the reader follows; nothing loads with the page
            if (!url.empty()) text += " " + html_text(url);
        }
        parts.parts.push_back({url, text});
    }
    return parts;
}

// Each page sanitised (the mail's; ours as it is) and written with its header.
void FolderPlan::write_pages()
{
    const PageParts parts = parts_list();
    html::SanitizeOptions so;
    so.allow_remote_images = allow_remote_images_;
    so.limits.out_of_time = [this] { return ctx_.out_of_time(); };
    for (Page &p : pages_) {
        PageParts mine = parts;
        mine.message_page = p.message_page;
        std::string body = std::move(p.text);
        if (!p.ours) {
            auto clean = html::sanitize(body, so);
            if (!clean) {
                // The machine failed: nothing of the mail is written unsanitised.
                body = "<pre>" + html::escape_text(body) + "</pre>";
            } else {
                body = std::move(clean->html);
                mine.removed = clean->removed;
            }
            const html::SanitizeCounts &r = mine.removed;
            ctx_.report().add_page({p.section, p.name, r.scripts, r.handlers, r.urls, r.refresh, r.base, r.frames, r.forms, r.remote});
        }
        files_.push_back({p.name, make_page(ctx_, body, mine, allow_remote_images_)});
    }
}

} // namespace

PlannedFolder plan_folder(MessageContext &ctx, const MessageIndex &ix, const std::vector<PendingExtract> &extracts,
                          int page_node, bool allow_remote_images)
{
    FolderPlan plan(ctx, ix, page_node, allow_remote_images);
    for (const auto &pe : extracts) plan.extract(pe);
    plan.page_the_rest();
    plan.write_pages();
    return std::move(plan).done();
}

} // namespace mimeuri::refs
