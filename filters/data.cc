// The data: pass (see data.hh): find, classify and report each data: URI of an HTML or CSS
// part; with --data=attach, rewrite the part's data: images to cid: references and add one
// inline part per distinct image to the part's multipart/related, made if need be.
#include "data.hh"
#include "data_report.hh"

#include "base64.hh"
#include "charsets.hh"
#include "gobj.hh"
#include "html_refs.hh"
#include "html_share.hh"
#include "html_tokenizer.hh"
#include "new_related.hh"
#include "text.hh"
#include "transfer.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace mimeuri {

namespace {

using data::DataUrl;

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

// Whether a data: image there is shown as an image: <img src>, srcset candidates,
// background, <video poster>, <input type=image src>, SVG <image>/<feImage> href, and CSS
// url() (style attributes, <style> elements, stylesheets).
bool image_context(const html::Scan &scan, const html::Ref &ref)
{
    if (ref.css) return true;
    const html::Holder &h = scan.holders[ref.holder];
    // Inside an <iframe srcdoc> document: where it stands there.
    const html::Inner *in = ref.inner >= 0 ? &scan.inner[static_cast<std::size_t>(ref.inner)] : nullptr;
    const std::string &e = in ? in->element : h.element, &a = in ? in->attr : h.attr;
    if (a == "src") return e == "img" || e == "input";
    if (a == "srcset") return e == "img" || e == "source";
    if (a == "background") return true;
    if (a == "poster") return e == "video";
    if (a == "href" || a == "xlink:href") return e == "image" || e == "feimage";
    return false;
}

// Types whose bytes the sniffer knows: for those the bytes must agree on being an image.
bool sniffable(std::string_view type)
{
    return type == "image/png" || type == "image/jpeg" || type == "image/jpg" || type == "image/pjpeg" ||
           type == "image/gif" || type == "image/webp" || type == "image/bmp" || type == "image/x-icon" ||
           type == "image/vnd.microsoft.icon" || type == "image/x-png";
}

// Whether readers resolve a cid: to a part of this type. nodemailer's mailparser (and the
// webmails built on it) inlines a cid: part only when its type is image/ and a word
// (/^image\/[\w]+$/i): never image/svg+xml, image/x-icon. Such an image stays a data: URI (issue
// 48): no reader shows it as cid: that would not show it as data: (Gmail and Outlook, which
// show no data: image, show no SVG either), and mailparser's readers would lose it.
bool cid_type(std::string_view type)
{
    if (type.size() <= 6 || type.compare(0, 6, "image/") != 0) return false;
    return std::all_of(type.begin() + 6, type.end(), [](char c) { return g_ascii_isalnum(c) || c == '_'; });
}

// The same image type named two ways is no lie.
std::string canonical_type(std::string t)
{
    if (t == "image/jpg" || t == "image/pjpeg") return "image/jpeg";
    if (t == "image/x-png") return "image/png";
    if (t == "image/vnd.microsoft.icon") return "image/x-icon";
    return t;
}

// A domain fit for the right side of a Content-ID (RFC 5322 dot-atom, letters, digits, '-').
bool domain_text(std::string_view d)
{
    if (d.empty() || d.size() > 253 || d.front() == '.' || d.back() == '.') return false;
    for (char c : d)
        if (!(g_ascii_isalnum(c) || c == '-' || c == '.')) return false;
    return d.find("..") == std::string_view::npos;
}

std::string from_domain(GMimeMessage *m)
{
    InternetAddressList *list = m ? g_mime_message_get_from(m) : nullptr;
    for (int i = 0; list && i < internet_address_list_length(list); ++i) {
        InternetAddress *a = internet_address_list_get_address(list, i);
        if (!INTERNET_ADDRESS_IS_MAILBOX(a)) continue;
        const char *addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
        std::string_view s = addr ? addr : "";
        auto at = s.rfind('@');
        if (at == std::string_view::npos) continue;
        std::string d = text::ascii_lower(s.substr(at + 1));
        if (domain_text(d)) return d;
    }
    return "";
}

// Line ends of LF text made the message's.
std::string to_eol(std::string_view lf, bool crlf)
{
    if (!crlf) return std::string(lf);
    std::string out;
    out.reserve(lf.size() + lf.size() / 32);
    for (char c : lf) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

struct Image {
    std::string type;  // of the new part
    std::string bytes; // its bytes, where text is empty
    std::string cid;
    std::string text;  // its canonical base64 in one line (DataUrl::text), copied into lines
    bool reused{false}; // cid names a part the related set has already, with these bytes: none added
};

// Where a part's new images go: a multipart/related to add them to, or (related < 0) the
// part itself, made a multipart/related.
struct Container {
    int related{-1};
    std::int64_t close{-1}; // the related's closing delimiter line
    std::string reason;     // why there is none
};

struct PartText;

class Attacher {
public:
    Attacher(MessageContext &ctx, const DataOptions &opts) : ctx_(ctx), opts_(opts) {}
    Status part(int node);

private:
    bool read_text(const Node &n, PartText &p);
    bool shared_scan(const Node &n, PartText &p);
    Result<bool> scan_text(const Node &n, PartText &p);
    Status classify(const Node &n, PartText &p);
    Status attach(int node, const Container &c, PartText &p);
    Container container_for(int node);
    std::string cid_for(const std::string &hash, int container, const std::string &dom, bool &reused);
    void read_ids();
    bool same_image(int node, const std::string &hash, int related) const;
    std::string part_text(const Image &img) const;
    Status wrap(const Node &n, std::string_view html, const std::vector<const Image *> &images);
    Status add_to_related(const Container &c, const Node &n, std::string_view text, const std::vector<const Image *> &images);
    std::string domain(const Node &n) const;

    MessageContext &ctx_;
    const DataOptions &opts_;
    std::map<int, std::unordered_set<std::string>> added_; // related node -> hashes added to it
    std::unordered_map<std::string, std::pair<int, std::string>> cid_owner_; // id given (lower case) -> container, id
    std::unordered_set<std::string> reused_;               // those that name a part already there
    std::unordered_map<std::string, std::vector<int>> ids_; // every Content-ID of the message -> its nodes
    bool ids_read_{false};
};

std::string Attacher::domain(const Node &n) const
{
    if (!opts_.domain.empty()) return opts_.domain;
    std::string d = from_domain(n.message);
    if (d.empty()) d = from_domain(ctx_.message());
    return d.empty() ? "mimeuri.invalid" : d;
}

// A Content-ID as ids are compared here: its brackets and white space (folding) dropped, in
// lower case (a reader may match either side's case: RFC 2392 leaves it open).
std::string id_key(std::string_view raw)
{
    std::string out;
    for (char c : raw)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') out += static_cast<char>(g_ascii_tolower(c));
    if (!out.empty() && out.front() == '<') out.erase(0, 1);
    if (!out.empty() && out.back() == '>') out.pop_back();
    return out;
}

// Every Content-ID of the message, embedded messages' too, each field of that name (a part
// may carry two), as written and as GMime decodes it.
void Attacher::read_ids()
{
    ids_read_ = true;
    const auto &nodes = ctx_.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        std::set<std::string> keys;
        if (const char *c = g_mime_object_get_content_id(nodes[i].object)) keys.insert(id_key(c));
        GMimeHeaderList *hl = MessageContext::headers_of(nodes[i]);
        for (int k = 0; hl && k < g_mime_header_list_get_count(hl); ++k) {
            GMimeHeader *h = g_mime_header_list_get_header_at(hl, k);
            const char *name = g_mime_header_get_name(h);
            if (name && g_ascii_strcasecmp(name, "Content-ID") == 0) keys.insert(id_key(ctx_.header_value(h)));
        }
        for (const std::string &k : keys)
            if (!k.empty()) ids_[k].push_back(static_cast<int>(i));
    }
}

// Whether node is the image of that hash in the related set: a leaf of it, in its message,
// an image by its type, its decoded bytes those the hash is of.
bool Attacher::same_image(int node, const std::string &hash, int related) const
{
    const auto &nodes = ctx_.nodes();
    const Node &n = nodes[static_cast<std::size_t>(node)];
    if (related < 0 || n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object)) return false;
    if (n.message != nodes[static_cast<std::size_t>(related)].message) return false;
    int p = n.parent;
    while (p >= 0 && p != related) p = nodes[static_cast<std::size_t>(p)].parent;
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    if (p != related || !ct || g_ascii_strcasecmp(g_mime_content_type_get_media_type(ct), "image") != 0) return false;
    auto content = ctx_.decoded_content(n, opts_.max);
    return content && hex_sha256({content->view()}) == hash;
}

// A Content-ID per image and container: the hash's first 32 hex digits at the domain, with
// ".2", ".3"... where that id is taken. One message never holds one id twice (issue 48): an id
// is taken when this run gave it to another related set, or when any part of the message
// (embedded messages too) has it, unless that part is this image in this set already (a
// reply quoting an image an earlier run attached): that part is named, none added.
std::string Attacher::cid_for(const std::string &hash, int container, const std::string &dom, bool &reused)
{
    if (!ids_read_) read_ids();
    const std::string base = hash.substr(0, 32);
    const int related = container >= 0 && ctx_.nodes()[static_cast<std::size_t>(container)].kind == Node::Kind::Multipart
                            ? container
                            : -1;
    for (int k = 1;; ++k) {
        std::string id = base + (k > 1 ? "." + std::to_string(k) : std::string()) + "@" + dom;
        const std::string key = id_key(id);
        if (auto given = cid_owner_.find(key); given != cid_owner_.end()) {
            if (given->second.first != container) continue;
            reused = reused_.count(key) > 0;
            return given->second.second;
        }
        if (auto there = ids_.find(key); there != ids_.end()) {
            const int part = there->second.front();
            if (there->second.size() != 1 || !same_image(part, hash, related)) continue;
            // Named as the part has it: a reader may compare ids case by case.
            const char *own = g_mime_object_get_content_id(ctx_.nodes()[static_cast<std::size_t>(part)].object);
            if (own && id_key(own) == key) id = own;
            reused_.insert(key);
            reused = true;
        }
        cid_owner_.emplace(key, std::make_pair(container, id));
        return id;
    }
}

Container Attacher::container_for(int node)
{
    const auto &nodes = ctx_.nodes();
    const Node &n = nodes[static_cast<std::size_t>(node)];
    Container c;
    for (int p = n.parent; p >= 0; p = nodes[static_cast<std::size_t>(p)].parent) {
        const Node &pn = nodes[static_cast<std::size_t>(p)];
        if (pn.kind != Node::Kind::Multipart) break; // an embedded message's edge
        if (is_type(pn, "multipart", "related")) {
            c.related = p;
            break;
        }
    }
    if (c.related < 0) {
        if (!is_type(n, "text", "html")) c.reason = "no-related"; // a stylesheet outside a page
        return c;
    }
    // The closing delimiter: the first line "--boundary--" after the related's last leaf.
    const Node &rel = nodes[static_cast<std::size_t>(c.related)];
    const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(rel.object));
    if (!b || !*b) {
        c.reason = "structure";
        return c;
    }
    std::int64_t from = -1;
    for (std::size_t j = static_cast<std::size_t>(c.related) + 1; j < nodes.size() && nodes[j].depth > rel.depth; ++j)
        if (nodes[j].kind == Node::Kind::Leaf)
            if (auto span = ctx_.content_span(nodes[j])) from = std::max(from, span->second);
    const std::string close = std::string("\n--") + b + "--";
    const std::int64_t end = ctx_.segment().msg_end;
    constexpr std::int64_t kChunk = 64 << 10;
    for (std::int64_t at = from; from >= 0 && at < end; at += kChunk) {
        auto bytes = ctx_.source().slice(at, std::min(end, at + kChunk + static_cast<std::int64_t>(close.size()) + 2));
        if (!bytes) break;
        for (std::size_t k = bytes->find(close); k != std::string::npos; k = bytes->find(close, k + 1)) {
            if (static_cast<std::int64_t>(k) >= kChunk) break; // the next chunk looks again
            std::size_t e = k + close.size();
            while (e < bytes->size() && (((*bytes)[e] == ' ') || (*bytes)[e] == '\t')) ++e;
            if (e < bytes->size() && (*bytes)[e] != '\n' && (*bytes)[e] != '\r') continue;
            c.close = at + static_cast<std::int64_t>(k) + 1;
            return c;
        }
    }
    c.reason = "structure"; // no closing delimiter: nothing is added after an unended related
    return c;
}

std::string Attacher::part_text(const Image &img) const
{
    std::string t = "Content-Type: " + img.type + "\nContent-Transfer-Encoding: base64\n";
    t += "Content-Disposition: inline; filename=\"image-" + img.cid.substr(0, 8) + "." + data::extension_for(img.type) + "\"\n";
    t += "Content-ID: <" + img.cid + ">\n\n";
    if (img.text.empty()) t += transfer::base64_lines(img.bytes);
    else base64::append_lines(img.text, t); // the same lines, copied
    return t;
}

Status Attacher::add_to_related(const Container &c, const Node &n, std::string_view text,
                                const std::vector<const Image *> &images)
{
    const Node &rel = ctx_.nodes()[static_cast<std::size_t>(c.related)];
    const std::string b = g_mime_multipart_get_boundary(GMIME_MULTIPART(rel.object));
    std::string parts;
    // The line break that ends each part's base64 is the next delimiter's (RFC 2046 5.1.1).
    for (const Image *img : images) parts += "--" + b + "\n" + part_text(*img);
    if (Status s = transfer::write_back(ctx_, n, text); !s) return s;
    return parts.empty() ? ok() : ctx_.insert_lines(c.close, parts);
}

Status Attacher::wrap(const Node &n, std::string_view html, const std::vector<const Image *> &images)
{
    GMimeHeaderList *hl = MessageContext::headers_of(n);
    GMimeHeader *ct = g_mime_header_list_get_header(hl, "Content-Type");
    GMimeHeader *cte = g_mime_header_list_get_header(hl, "Content-Transfer-Encoding");
    if (!ct) return Error{Code::DataErr, "no Content-Type field to change"};
    const bool crlf = ctx_.eol() == Eol::CRLF;
    // The HTML part: the entity's own Content-Type and Content-Transfer-Encoding, its text
    // encoded as before (quoted-printable where a line would pass 998 octets).
    std::string inner = "Content-Type:" + ctx_.header_value(ct);
    std::string body;
    bool raw = false; // the text goes in as it is, in the message's own line ends
    const auto enc = g_mime_part_get_content_encoding(GMIME_PART(n.object));
    const bool outer_7bit = enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
    switch (enc) {
    case GMIME_CONTENT_ENCODING_BASE64: body = transfer::base64_lines(html); break;
    case GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE: body = transfer::quoted_printable(html, crlf); break;
    case GMIME_CONTENT_ENCODING_BINARY: raw = true; break;
    case GMIME_CONTENT_ENCODING_DEFAULT:
    case GMIME_CONTENT_ENCODING_7BIT:
    case GMIME_CONTENT_ENCODING_8BIT:
        if (transfer::longest_line_over(html, 998)) body = transfer::quoted_printable(html, crlf);
        else raw = true;
        break;
    default: return Error{Code::DataErr, "transfer encoding not rewritable"};
    }
    if (cte && (raw || enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE))
        inner += "Content-Transfer-Encoding:" + ctx_.header_value(cte);
    else if (!raw)
        inner += "Content-Transfer-Encoding: quoted-printable\n";
    // A boundary no line of the new body holds, nor any enclosing boundary's prefix.
    const NewRelated nr = NewRelated::around(ctx_, n, "=_mimeuri_", {html}, {raw ? std::string_view(html) : std::string_view(body)});
    std::string out = to_eol(nr.delimiter() + inner + "\n", crlf);
    if (raw) out.append(html).append(crlf ? "\r\n" : "\n");
    else out += to_eol(body, crlf);
    std::string tail;
    for (const Image *img : images) tail += nr.delimiter() + part_text(*img);
    tail += nr.close();
    // The content ends with a line break where it did (replace_body keeps that, but in LF).
    auto span = ctx_.content_span(n);
    if (!span) return span.error();
    char last = '\0';
    if (span->second > span->first)
        if (auto r = ctx_.source().read_at(span->second - 1, &last, 1); !r) return r.error();
    if (last == '\n') tail += '\n';
    out += to_eol(tail, crlf);
    if (Status s = ctx_.replace_header(ct, nr.content_type("text/html") + "\n"); !s) return s;
    if (cte && outer_7bit)
        if (Status s = ctx_.replace_header(cte, " 7bit\n"); !s) return s;
    return ctx_.replace_body(n, std::move(out), false);
}

// One HTML or CSS part as the pass reads it: its text (converted to UTF-8 where its
// charset is not ASCII-compatible), its references, and the data: images to attach.
struct PartText {
    std::string converted; // the text, where it had to be converted
    std::string_view view; // the text the references are offsets into (HtmlShare's, or converted)
    bool css{false};
    bool rewritable{true}; // written back as it is read: its charset ASCII-compatible
    html::Scan own;                  // the scan made here
    const html::Scan *scan{nullptr}; // own, or the references pass's (HtmlShare)
    bool unread{false};              // scanned by the references pass: view read when it is needed
    std::vector<html::Replacement> reps;
    std::vector<std::size_t> rep_entry; // per replacement: its entry
    std::vector<std::string> rep_hash;  // per replacement: its image's hash
    std::vector<Image *> rep_image;     // per replacement: its image (in fresh: nodes stay put)
    std::unordered_map<std::string, Image> fresh;             // images this part names, by hash
    std::unordered_map<std::string_view, std::string> hashes; // an image's canonical text -> its hash
};

// The part's text, where it may hold a data: URI and can be read; false: nothing to do.
bool Attacher::read_text(const Node &n, PartText &p)
{
    p.css = is_type(n, "text", "css");
    if (!p.css && shared_scan(n, p)) return true;
    // Read once for the passes after this one too (HtmlShare: the related pass).
    Result<Content> &content = HtmlShare::of(ctx_).decoded(ctx_, n, html::kDefaultHtmlMax);
    if (!content) {
        if (opts_.mode == DataOptions::Mode::Attach)
            ctx_.report().add_error(n.section, ErrorCode::HtmlLimit, content.error().message + "; data: URIs not looked at");
        return false;
    }
    if (!data::may_hold_data_uri(content->view())) return false;
    const char *cs = g_mime_object_get_content_type_parameter(n.object, "charset");
    p.view = content->view();
    if (p.css) {
        p.rewritable = ascii_compatibility(cs ? cs : "") != AsciiCompat::No;
        return true;
    }
    const HtmlEncoding enc = sniff_html_encoding(cs ? cs : "", p.view.substr(0, 1024));
    p.rewritable = enc.ascii_compatible;
    if (!p.rewritable && !enc.convert_from.empty()) {
        gsize written = 0;
        GCharPtr conv(g_convert(p.view.data(), static_cast<gssize>(p.view.size()), "UTF-8", enc.convert_from.c_str(),
                                nullptr, &written, nullptr));
        if (!conv) return false;
        p.converted.assign(conv.get(), written);
        p.view = p.converted;
    }
    return true;
}

// An HTML part the references pass scanned as it is (HtmlShare), where this pass would read
// it so too (its first 1024 bytes sniffed as read_text sniffs them: no conversion): its scan
// taken, its text read only where an image is to be attached (Attacher::attach), and
// may_hold_data_uri not asked: where that finds nothing, the scan holds no data: URL either
// (it is the test that lets a message skip this pass), so the report is the same. False:
// read_text reads it whole.
bool Attacher::shared_scan(const Node &n, PartText &p)
{
    HtmlShare &share = HtmlShare::of(ctx_);
    const html::Scan *kept = share.scan(static_cast<int>(&n - ctx_.nodes().data()), html::kDefaultHtmlMax);
    const std::string *head = kept ? share.head(ctx_, n, html::kDefaultHtmlMax) : nullptr;
    if (!head) return false;
    const char *cs = g_mime_object_get_content_type_parameter(n.object, "charset");
    const HtmlEncoding enc = sniff_html_encoding(cs ? cs : "", *head);
    if (!enc.ascii_compatible && !enc.convert_from.empty()) return false;
    p.rewritable = enc.ascii_compatible;
    p.scan = kept;
    p.unread = true;
    return true;
}

// The part's references (a stylesheet's url()s, or the HTML's); an error ends the message
// (a limit the report names, or a deadline), false: nothing to do.
Result<bool> Attacher::scan_text(const Node &n, PartText &p)
{
    if (p.css) {
        html::ScanBuilder b(1000000);
        b.style_text(0, p.view);
        p.own = b.finish();
        p.scan = &p.own;
        return true;
    }
    // The references pass's scan of these bytes, where it made the one made here.
    HtmlShare &share = HtmlShare::of(ctx_);
    const int node = static_cast<int>(&n - ctx_.nodes().data());
    if (p.converted.empty())
        if ((p.scan = share.scan(node, html::kDefaultHtmlMax))) return true;
    html::ParseLimits limits;
    limits.max_bytes = html::memory_cap(p.view.size(), html::kDefaultHtmlMax);
    limits.out_of_time = [this] { return ctx_.out_of_time(); };
    auto r = html::scan_refs(p.view, limits);
    if (!r) {
        if (r.error().code == Code::TempFail) return r.error();
        return false; // the references pass reports what the parser could not read
    }
    if (r->stop != html::Stop::None) {
        ctx_.report().add_error(n.section, html::stop_kind(r->stop), r->stop_message);
        return Error::limit(r->stop_message);
    }
    p.own = std::move(*r);
    p.scan = &p.own;
    if (p.converted.empty() && !p.own.truncated) // kept for the related pass, which reads the same bytes
        p.scan = share.keep_scan(node, html::kDefaultHtmlMax, std::move(p.own));
    return true;
}

// Each data: URI: an entry in the report; with --data=attach, each image fit to attach a
// replacement, its image found by the hash of its bytes (the same bytes once). Canonical
// base64 seen before (the same text, so the same bytes) is not hashed again.
Status Attacher::classify(const Node &n, PartText &p)
{
    const bool attach = opts_.mode == DataOptions::Mode::Attach;
    for (std::size_t ri = 0; ri < p.scan->refs.size(); ++ri) {
        if (ri % 1024 == 0)
            if (Status t = ctx_.check_time(); !t) return t;
        const html::Ref &ref = p.scan->refs[ri];
        if (!data::is_data_url(ref.url)) continue;
        const html::Holder &h = p.scan->holders[ref.holder];
        DataEntry e;
        e.part = n.section;
        e.attr = p.css ? "css" : h.attribute ? h.element + "@" + h.attr : "style";
        if (ref.inner >= 0) { // "iframe@srcdoc>img@src": the frame's document, and where in it
            const html::Inner &in = p.scan->inner[static_cast<std::size_t>(ref.inner)];
            e.attr += ">" + (in.attribute ? in.element + "@" + in.attr : std::string("style"));
        }
        DataUrl d = data::parse_data_url(ref.url, opts_.max);
        e.type = d.type;
        if (d.size) e.size = static_cast<std::int64_t>(*d.size);
        std::string part_type = canonical_type(d.type);
        if (d.type.compare(0, 6, "image/") != 0) e.reason = "not-image";
        else if (!image_context(*p.scan, ref)) e.reason = "context";
        else if (!d.size) e.reason = "base64";
        else if (d.over) e.reason = "size";
        else if (d.bytes.empty()) e.reason = "empty";
        else {
            const std::string sniffed = data::sniff_image(d.bytes);
            if (!sniffed.empty() && sniffed != part_type) {
                e.sniffed = sniffed; // a lie: the part gets the type the bytes have, as a browser reads them
                part_type = sniffed;
            } else if (sniffed.empty() && sniffable(d.type)) {
                e.sniffed = "unknown";
                e.reason = "bytes"; // no image of the type it names: a browser shows none
            }
            if (e.reason.empty() && !cid_type(part_type)) e.reason = "type";
        }
        if (attach && e.reason.empty()) {
            auto known = d.text.empty() ? p.hashes.end() : p.hashes.find(d.text);
            std::string hash = known != p.hashes.end() ? known->second : hex_sha256({d.bytes});
            p.reps.push_back({ri, {}, true}); // url("cid:..."): what mailparser reads to its quote
            p.rep_entry.push_back(ctx_.report().section<DataReport>().entries.size());
            auto it = p.fresh.find(hash);
            if (it == p.fresh.end()) {
                const bool copied = !d.text.empty();
                Image img{part_type, copied ? std::string() : std::move(d.bytes), {}, std::move(d.text)};
                it = p.fresh.emplace(hash, std::move(img)).first;
                if (copied) p.hashes.emplace(it->second.text, hash);
            }
            p.rep_image.push_back(&it->second);
            p.rep_hash.push_back(std::move(hash));
        }
        ctx_.report().section<DataReport>().entries.push_back(std::move(e));
    }
    return ok();
}

// One HTML or CSS part: its data: URIs reported, and with --data=attach its images attached.
Status Attacher::part(int node)
{
    const Node &n = ctx_.nodes()[static_cast<std::size_t>(node)];
    PartText p;
    if (!read_text(n, p)) return ok();
    auto scanned = p.scan ? Result<bool>(true) : scan_text(n, p);
    if (!scanned) return scanned.error();
    if (!*scanned) return ok();
    if (Status s = classify(n, p); !s) return s;
    if (p.reps.empty()) return ok();
    auto &entries = ctx_.report().section<DataReport>().entries;
    auto leave = [&](const std::string &reason) {
        for (std::size_t k : p.rep_entry) entries[k].reason = reason;
        return ok();
    };
    // Another pass rewrote the part already (edits are splices on the input: one per span).
    if (auto span = ctx_.content_span(n)) {
        for (const Edit &ed : ctx_.edits())
            if (ed.begin < span->second && span->first < ed.end) return leave("edited");
    } else {
        return leave("structure");
    }
    // An attached message (message/rfc822 inside this one) is a document the user received:
    // its data: URIs are reported, never rewritten (as --related=repair leaves it).
    if (n.message != ctx_.message()) return leave("attached-message");
    if (!p.rewritable) return leave("charset");
    if (!transfer::can_write_back(g_mime_part_get_content_encoding(GMIME_PART(n.object)))) return leave("encoding");
    Container c = container_for(node);
    if (!c.reason.empty()) return leave(c.reason);
    std::optional<std::string> kept = ctx_.kept(n);
    if (!kept && c.related < 0) kept = ctx_.kept(n, "content-type");
    if (kept) {
        for (std::size_t k : p.rep_entry) {
            entries[k].action = DataEntry::Action::Kept;
            entries[k].kept = *kept;
        }
        return ok();
    }
    return attach(node, c, p);
}

// The part's data: images made cid: references to new parts of its related set (or of the
// multipart/related it becomes), each distinct image once per set.
Status Attacher::attach(int node, const Container &c, PartText &p)
{
    const Node &n = ctx_.nodes()[static_cast<std::size_t>(node)];
    auto &entries = ctx_.report().section<DataReport>().entries;
    const int owner = c.related >= 0 ? c.related : node;
    const std::string dom = domain(n);
    if (p.unread) { // the text now, read once for the passes (HtmlShare); read before, by the references pass
        Result<Content> &content = HtmlShare::of(ctx_).decoded(ctx_, n, html::kDefaultHtmlMax);
        if (!content) return content.error();
        p.view = content->view();
        p.unread = false;
    }
    for (std::size_t k = 0; k < p.reps.size(); ++k) // in the order named: the same ids on every run
        if (Image &img = *p.rep_image[k]; img.cid.empty()) img.cid = cid_for(p.rep_hash[k], owner, dom, img.reused);
    for (std::size_t k = 0; k < p.reps.size(); ++k) p.reps[k].url = "cid:" + p.rep_image[k]->cid;
    html::Rewritten rw = html::rewrite(p.view, *p.scan, p.reps);
    std::vector<bool> done(p.reps.size(), true);
    for (std::size_t k : rw.skipped) {
        done[k] = false;
        entries[p.rep_entry[k]].reason = "html-rewrite";
    }
    // The images still named, in the order first named; those the related set has already.
    std::vector<const Image *> images;
    std::vector<std::string> image_hashes;
    std::unordered_set<std::string> named;
    for (std::size_t k = 0; k < p.reps.size(); ++k) {
        if (!done[k] || !named.insert(p.rep_hash[k]).second) continue;
        if (p.rep_image[k]->reused || (c.related >= 0 && added_[c.related].count(p.rep_hash[k]))) continue;
        images.push_back(p.rep_image[k]);
        image_hashes.push_back(p.rep_hash[k]);
    }
    if (named.empty()) return ok();
    const auto mark = ctx_.edit_mark();
    Status s = c.related >= 0 ? add_to_related(c, n, rw.html, images) : wrap(n, rw.html, images);
    if (!s) {
        ctx_.rollback(mark);
        if (s.error().code == Code::Software || s.error().code == Code::TempFail) return s;
        ctx_.report().add_error(n.section, ErrorCode::Rewrite, s.error().message + "; data: URIs not attached");
        for (std::size_t k = 0; k < p.reps.size(); ++k)
            if (done[k]) entries[p.rep_entry[k]].reason = "rewrite";
        return ok();
    }
    if (c.related >= 0) added_[c.related].insert(image_hashes.begin(), image_hashes.end());
    for (std::size_t k = 0; k < p.reps.size(); ++k) {
        if (!done[k]) continue;
        entries[p.rep_entry[k]].action = DataEntry::Action::Attached;
        entries[p.rep_entry[k]].cid = p.rep_image[k]->cid;
    }
    return ok();
}

} // namespace

InertHint DataPass::inert_hint() const
{
    const bool attach = opts_.mode == DataOptions::Mode::Attach;
    InertHint h;
    h.edited_types = {"text/html", "text/css"};
    h.references_up_to = attach ? html::kDefaultHtmlMax : SIZE_MAX;
    h.may_hold_reference = [attach](std::string_view bytes) { return attach && data::may_hold_data_uri(bytes); };
    h.reports_only = !attach;
    return h;
}

Status DataPass::apply(MessageContext &ctx)
{
    if (opts_.mode == DataOptions::Mode::Off || !ctx.message()) return ok();
    Attacher a(ctx, opts_);
    const auto &nodes = ctx.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object)) continue;
        if (!is_type(n, "text", "html") && !is_type(n, "text", "css")) continue;
        if (Status s = a.part(static_cast<int>(i)); !s) return s;
    }
    return ok();
}

} // namespace mimeuri
