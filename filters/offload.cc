// The offload pass's helpers and its offloading half (offload.hh); restoring is in
// offload_restore.cc, the store in offload_store.cc.
#include "offload.hh"

#include "base64.hh"
#include "decode.hh"
#include "external_body.hh"
#include "gobj.hh"
#include "offload_report.hh"
#include "offload_store.hh"
#include "streamed_body.hh"
#include "text.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <functional>
#include <variant>

namespace mimeuri {

namespace offload {

std::string path_safe(std::string_view filename)
{
    std::string out;
    for (char c : filename) {
        if (out.size() >= 100) break;
        bool keep = g_ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
        out += keep ? c : '_';
    }
    while (!out.empty() && out.front() == '.') out.erase(0, 1);
    return out.empty() ? "file" : out;
}

std::string fill_url(std::string_view tmpl, std::string_view name, std::string_view filename)
{
    std::string out;
    for (std::size_t i = 0; i < tmpl.size();) {
        if (tmpl.compare(i, 6, "{name}") == 0) {
            out += name;
            i += 6;
        } else if (tmpl.compare(i, 10, "{filename}") == 0) {
            out += filename;
            i += 10;
        } else {
            out += tmpl[i++];
        }
    }
    return out;
}

std::optional<std::int64_t> parse_duration(std::string_view text)
{
    if (text.empty()) return std::nullopt;
    std::int64_t n = 0;
    std::size_t i = 0;
    for (; i < text.size() && g_ascii_isdigit(text[i]); ++i) {
        if (n > 1'000'000'000) return std::nullopt;
        n = n * 10 + (text[i] - '0');
    }
    if (i == 0 || i + 1 < text.size()) return std::nullopt;
    const char unit = i < text.size() ? text[i] : 's';
    switch (unit) {
    case 's': return n;
    case 'm': return n * 60;
    case 'h': return n * 3600;
    case 'd': return n * 86400;
    case 'w': return n * 7 * 86400;
    default: return std::nullopt;
    }
}

std::string rfc5322_date(std::int64_t unix_seconds)
{
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    static const char *days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday], tm.tm_mday,
                  months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
}

std::string Form::text() const
{
    if (!base64) return "raw";
    return "base64 " + std::to_string(line) + " " + std::to_string(trail);
}

std::optional<Form> Form::parse(std::string_view text)
{
    if (text == "raw") return Form{};
    unsigned long line = 0, trail = 0;
    char tail = 0;
    if (std::sscanf(std::string(text).c_str(), "base64 %lu %lu%c", &line, &trail, &tail) != 2) return std::nullopt;
    if (line == 0 || line > 990 || trail > 64) return std::nullopt;
    return Form{true, line, trail};
}

void FormCheck::feed(std::string_view piece)
{
    if (bad_) return;
    if (!b64_.feed(piece, nullptr)) bad_ = true;
    for (char c : piece) {
        if (bad_) return;
        octet(c);
    }
}

// One octet of the text: lines of the first line's length, a last one no longer, then only
// line ends; a line end is exactly eol_.
void FormCheck::octet(char c)
{
    if (c == eol_[eol_seen_]) {
        if (++eol_seen_ < eol_.size()) return;
        eol_seen_ = 0;
        if (col_ == 0) {
            if (lines_ == 0) bad_ = true; // an empty first line
            ++trail_;
            return;
        }
        if (lines_ == 0) line_ = col_;
        else if (col_ > line_) bad_ = true;
        else if (col_ < line_) short_ = true;
        ++lines_;
        trail_ = 1;
        col_ = 0;
        return;
    }
    if (eol_seen_ > 0 || c == '\r' || c == '\n') {
        bad_ = true; // half a line end, or another one than the message's
        return;
    }
    if (short_ || trail_ > 1) bad_ = true; // a line after the short last one, or after an empty line
    trail_ = 0;
    ++col_;
}

std::optional<Form> FormCheck::end() const
{
    if (bad_ || eol_seen_ > 0 || !b64_.canonical() || b64_.chars() == 0) return std::nullopt;
    Form f{true, line_, trail_};
    if (col_ > 0) { // a last line with no line end after it
        if (short_ || (lines_ > 0 && col_ > line_)) return std::nullopt;
        if (lines_ == 0) f.line = col_;
        f.trail = 0;
    }
    if (f.line > 990 || f.trail > 64) return std::nullopt;
    return f;
}

bool edited(const MessageContext &ctx, std::int64_t begin, std::int64_t end)
{
    return std::any_of(ctx.edits().begin(), ctx.edits().end(),
                       [&](const Edit &e) { return e.begin <= end && e.end >= begin; });
}

} // namespace offload

namespace {

using offload::Form;

constexpr std::size_t kBlock = std::size_t{256} << 10;

std::string eol_of(const MessageContext &ctx) { return ctx.eol() == Eol::CRLF ? "\r\n" : "\n"; }

std::string with_eol(std::string_view lf, const std::string &eol)
{
    std::string out;
    for (char c : lf) {
        if (c == '\n') out += eol;
        else out += c;
    }
    return out;
}

void report(MessageContext &ctx, OffloadEntry e)
{
    ctx.report().section<OffloadReport>().entries.push_back(std::move(e));
}

OffloadEntry left(const Node &n, std::string reason) { return {n.section, OffloadEntry::Action::Left, {}, {}, {}, std::move(reason), {}}; }

bool has_ancestor(const MessageContext &ctx, const Node &n, const std::function<bool(const Node &)> &is)
{
    for (int p = n.parent; p >= 0; p = ctx.nodes()[static_cast<std::size_t>(p)].parent)
        if (is(ctx.nodes()[static_cast<std::size_t>(p)])) return true;
    return false;
}

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

// The decoded text of the message's HTML parts (each up to 8 MiB), lower case: what a
// Content-ID or Content-Location must not be named in for its part to be offloaded.
std::string html_text(const MessageContext &ctx)
{
    std::string out;
    for (const Node &h : ctx.nodes())
        if (h.kind == Node::Kind::Leaf && is_type(h, "text", "html"))
            if (auto c = ctx.decoded_content(h, std::size_t{8} << 20)) out += text::ascii_lower(c->view());
    // A Content-ID's '@' as a URL may write it (RFC 2392: cid: URLs are %-encoded).
    for (std::size_t at = out.find("%40"); at != std::string::npos; at = out.find("%40", at + 1)) out.replace(at, 3, "@");
    return out;
}

// Why a part that is large enough is not offloaded; "" when it is. html: html_text, made
// when first needed.
std::string why_not(const MessageContext &ctx, const Node &n, std::optional<std::string> &html)
{
    if (n.top_level()) return "top-level"; // the message's own body: its header is the message's
    if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object) || is_type(n, "message", "*")) return "message";
    if (has_ancestor(ctx, n, [](const Node &p) { return p.kind == Node::Kind::MessagePart; })) return "attached-message";
    if (ctx.eol() == Eol::CR) return "line-ends";
    const char *disp = g_mime_object_get_disposition(n.object);
    const bool attachment = disp && g_ascii_strcasecmp(disp, "attachment") == 0;
    if (is_type(n, "text", "*") && !attachment) return "message-text";
    // RFC 2387: what a multipart/related holds is shown by its root, in place.
    if (has_ancestor(ctx, n, [](const Node &p) { return is_type(p, "multipart", "related"); })) return "html-target";
    const char *cid = g_mime_object_get_content_id(n.object);
    const char *loc = g_mime_object_get_header(n.object, "Content-Location");
    if (cid || loc) {
        if (!html) html = html_text(ctx);
        if (cid && html->find("cid:" + text::ascii_lower(cid)) != std::string::npos) return "html-target";
        if (loc && *loc && html->find(text::ascii_lower(text::without_space(loc))) != std::string::npos)
            return "html-target";
    }
    GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(n.object));
    if (enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE || enc == GMIME_CONTENT_ENCODING_UUENCODE) return "encoding";
    return "";
}

// A part's content into the store, a block at a time: decoded when it is base64 (its form
// checked on the way), else as read.
struct Stored {
    std::string name;
    std::size_t size{0};
    std::optional<Form> form; // none: the base64 is not in a form that can be made again
};

Result<Stored> store_part(const MessageContext &ctx, const offload::Store &store, std::int64_t begin, std::int64_t end,
                          bool base64, std::size_t min)
{
    auto w = store.writer();
    if (!w) return w.error();
    offload::FormCheck check(eol_of(ctx));
    GMimeEncoding st;
    g_mime_encoding_init_decode(&st, GMIME_CONTENT_ENCODING_BASE64);
    const SpanReader read = reader_of(ctx.source());
    std::string buf, out;
    for (std::int64_t at = begin; at < end;) {
        const std::int64_t to = std::min(end, at + static_cast<std::int64_t>(kBlock));
        auto piece = read(at, to, buf);
        if (!piece) return piece.error();
        at = to;
        if (!base64) {
            if (Status s = w->feed(*piece); !s) return s.error();
            continue;
        }
        check.feed(*piece);
        out.resize(g_mime_encoding_outlen(&st, piece->size()) + 16);
        out.resize(decode::step(&st, piece->data(), piece->size(), out.data()));
        if (Status s = w->feed(out); !s) return s.error();
    }
    Stored r;
    r.form = base64 ? check.end() : std::optional<Form>(Form{});
    r.size = w->size();
    // Not in a form that can be made again, or smaller than it looked: the writer's temporary
    // file goes with it, and no file is left that no message references.
    if (!r.form || r.size < min) return r;
    auto name = w->commit();
    if (!name) return name.error();
    r.name = std::move(*name);
    return r;
}

// The note readers that do not follow external bodies show (RFC 2046 5.2.3 suggests one).
std::string note_part(const std::string &filename, const std::string &type, std::size_t size, const std::string &url,
                      const std::string &expiry)
{
    std::string text = "This attachment is stored outside the message (RFC 2017).\n";
    text += "File: " + (filename.empty() ? std::string("(no name)") : filename) + "\n";
    text += "Type: " + type + "\nSize: " + std::to_string(size) + " bytes\nLink: " + url + "\n";
    if (!expiry.empty()) text += "Available until: " + expiry + "\n";
    bool plain = true;
    std::size_t line = 0;
    for (unsigned char c : text) {
        line = c == '\n' ? 0 : line + 1;
        plain = plain && c < 128 && c != '\r' && line < 900;
    }
    std::string out = "Content-Type: text/plain; charset=utf-8\nContent-Disposition: inline\n";
    if (plain) return out + "Content-Transfer-Encoding: 7bit\n\n" + text;
    std::string b64((text.size() + 2) / 3 * 4, '\0');
    b64.resize(base64::encode(reinterpret_cast<const unsigned char *>(text.data()), text.size(), b64.data()));
    out += "Content-Transfer-Encoding: base64\n\n";
    base64::append_lines(b64, out);
    return out;
}

} // namespace

Status OffloadPass::apply(MessageContext &ctx)
{
    if (!ctx.message()) return ok();
    return opts_.restore ? restore(ctx) : offload(ctx);
}

namespace {

struct PartPlan {
    const Node &n;
    std::int64_t start, begin, end; // the part's first header, its content, the content's end
    std::string header;             // its header block as read, without the empty line
};

// The part's header block and content, when it can be given back exactly; else why not.
std::variant<PartPlan, std::string> plan_part(const MessageContext &ctx, const Node &n)
{
    auto span = ctx.content_span(n);
    auto start = ctx.part_start(n);
    if (!span || !start) return std::string("structure");
    auto head = ctx.source().slice(*start, span->first);
    // Its header block starts right after its delimiter line (RFC 2046 5.1.1): nothing GMime
    // skipped lies between them, which the part put back would lose.
    auto before = ctx.source().slice(std::max(ctx.segment().msg_begin, *start - 1024), *start);
    if (!head || !before || before->empty() || before->back() != '\n') return std::string("structure");
    const std::size_t line = before->find_last_of('\n', before->size() >= 2 ? before->size() - 2 : 0);
    if (before->compare(line == std::string::npos ? 0 : line + 1, 2, "--") != 0) return std::string("structure");
    const std::string eol = eol_of(ctx), blank = eol + eol;
    if (head->size() < blank.size() || head->compare(head->size() - blank.size(), blank.size(), blank) != 0)
        return std::string("line-ends");
    if (offload::edited(ctx, *start, span->second)) return std::string("edited");
    if (ctx.kept(n) || ctx.kept(n, "content-type")) return std::string("signed");
    return PartPlan{n, *start, span->first, span->second, head->substr(0, head->size() - eol.size())};
}

// A boundary no enclosing multipart's delimiter is a prefix of (RFC 2046 5.1.1).
bool boundary_free(const MessageContext &ctx, const Node &n, const std::string &boundary)
{
    return !has_ancestor(ctx, n, [&](const Node &p) {
        if (p.kind != Node::Kind::Multipart) return false;
        const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(p.object));
        return b && boundary.compare(0, std::strlen(b), b) == 0;
    });
}

} // namespace

namespace {

Status offload_part(MessageContext &ctx, const OffloadOptions &opts_, const offload::Store &store, const PartPlan &p,
                    bool base64)
{
    auto stored = store_part(ctx, store, p.begin, p.end, base64, opts_.min);
    if (!stored) return Error{Code::TempFail, "offload store: " + stored.error().message};
    if (!stored->form) {
        report(ctx, left(p.n, "encoding"));
        return ok();
    }
    if (stored->name.empty()) return ok(); // smaller than --offload-min once decoded
    const std::string eol = eol_of(ctx);
    const std::string boundary = std::string(offload::kBoundaryPrefix) + stored->name.substr(0, 24);
    if (!boundary_free(ctx, p.n, boundary)) {
        report(ctx, left(p.n, "boundary"));
        return ok();
    }
    const char *fn = g_mime_part_get_filename(GMIME_PART(p.n.object));
    const std::string filename = fn ? fn : "";
    const std::string url = offload::fill_url(opts_.url, stored->name, offload::path_safe(filename));
    GMimeContentType *ct = g_mime_object_get_content_type(p.n.object);
    GCharPtr essence(ct ? g_mime_content_type_get_mime_type(ct) : nullptr);
    const std::string expiry = opts_.expire > 0 ? offload::rfc5322_date(std::time(nullptr) + opts_.expire) : "";

    std::string lf = "Content-Type: multipart/alternative;\n\tboundary=\"" + boundary + "\"\n\n";
    lf += "--" + boundary + "\n" + note_part(filename, essence ? essence.get() : "application/octet-stream",
                                            stored->size, url, expiry);
    lf += "--" + boundary + "\nContent-Type: message/external-body; access-type=URL;\n\t" + rfc2017::parameter(url);
    lf += ";\n\tsize=" + std::to_string(stored->size);
    if (!expiry.empty()) lf += ";\n\texpiration=\"" + expiry + "\"";
    lf += ";\n\tx-mimeuri-offload=\"1 " + stored->name + " " + stored->form->text() + "\"\n\n";
    // RFC 2046 5.2.3: the phantom header, then an empty line and the (blank) phantom body.
    std::string text = with_eol(lf, eol) + p.header + eol + "--" + boundary + "--";
    if (Status s = ctx.replace_span(p.start, p.end, std::move(text)); !s) {
        if (s.error().code == Code::Software) return s;
        report(ctx, left(p.n, s.error().message));
        return ok();
    }
    report(ctx, {p.n.section, OffloadEntry::Action::Offloaded, stored->name, static_cast<std::int64_t>(stored->size), url, {}, {}});
    return ok();
}

} // namespace

Status OffloadPass::offload(MessageContext &ctx)
{
    std::optional<std::string> html;
    std::optional<offload::Store> store;
    for (const Node &n : ctx.nodes()) {
        if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object) || !g_mime_part_get_content(GMIME_PART(n.object)))
            continue;
        if (auto t = ctx.check_time(); !t) return t;
        auto span = ctx.content_span(n);
        if (!span) continue;
        const bool base64 = g_mime_part_get_content_encoding(GMIME_PART(n.object)) == GMIME_CONTENT_ENCODING_BASE64;
        const auto raw = static_cast<std::size_t>(span->second - span->first);
        if ((base64 ? raw / 4 * 3 + 3 : raw) < opts_.min) continue; // too small, whatever it decodes to
        std::string why = why_not(ctx, n, html);
        auto plan = why.empty() ? plan_part(ctx, n) : std::variant<PartPlan, std::string>(why);
        if (auto *w = std::get_if<std::string>(&plan)) {
            OffloadEntry e = left(n, *w);
            if (*w == "signed") e.kept = ctx.kept(n) ? *ctx.kept(n) : *ctx.kept(n, "content-type");
            report(ctx, std::move(e));
            continue;
        }
        if (!store) {
            auto s = offload::Store::open(opts_.dir, opts_.key, true);
            if (!s) return Error{Code::TempFail, s.error().message};
            store = std::move(*s);
        }
        if (Status s = offload_part(ctx, opts_, *store, std::get<PartPlan>(plan), base64); !s) return s;
    }
    return ok();
}

} // namespace mimeuri
