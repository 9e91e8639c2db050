// The reference pass, step 3: one HTML part (see ref_part.hh).
#include "ref_part.hh"
#include "ref_part_rewriter.hh"

#include "charsets.hh"
#include "html_share.hh"
#include "ref_pages.hh"
#include "html_tokenizer.hh"
#include "text.hh"
#include "streamed_body.hh"
#include "transfer.hh"

#include <gmime/gmime.h>

#include <cstdint>
#include <cstring>
#include <optional>

namespace mimeuri::refs {

namespace {

bool starts_ci(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && g_ascii_strncasecmp(s.data(), p.data(), p.size()) == 0;
}

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

// Whether an id can stand between the brackets of a Content-ID header as it is: printable
// ASCII, no white space, no brackets or quotes (RFC 5322 3.6.4 msg-id), so that nothing a
// URL decodes to can fold or end the header. Other ids get a generated Content-ID instead.
bool msg_id_text(std::string_view id)
{
    if (id.empty()) return false;
    for (char c : id) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u >= 127 || c == '<' || c == '>' || c == '"' || c == '\\') return false;
    }
    return true;
}

// RFC 2392: mid:message-id[/content-id], each %-encoded, "/" inside an id encoded.
std::string canonical_mid_url(const Target &t)
{
    GCharPtr e1(g_uri_escape_string(t.mid.c_str(), "!$&'()*+,;=:@", FALSE));
    std::string url = std::string("mid:") + e1.get();
    if (!t.mid_cid.empty()) {
        GCharPtr e2(g_uri_escape_string(t.mid_cid.c_str(), "!$&'()*+,;=:@", FALSE));
        url += std::string("/") + e2.get();
    }
    return url;
}

RefEntry::Status report_status(RefStatus s)
{
    switch (s) {
    case RefStatus::Resolved: return RefEntry::Status::Resolved;
    case RefStatus::Dangling: return RefEntry::Status::Dangling;
    case RefStatus::Ambiguous: return RefEntry::Status::Ambiguous;
    }
    return RefEntry::Status::Dangling;
}

// --mid-url: the template with every "{id}" replaced by the reference's %-encoded Message-ID.
std::string mid_url_for(const std::string &tmpl, const std::string &url)
{
    auto slash = url.find('/', 4);
    std::string id = strip_brackets(unescape(url.substr(4, slash == std::string::npos ? std::string::npos : slash - 4)));
    GCharPtr enc(g_uri_escape_string(id.c_str(), nullptr, FALSE));
    std::string out = tmpl;
    for (auto at = out.find("{id}"); at != std::string::npos; at = out.find("{id}", at + std::strlen(enc.get())))
        out.replace(at, 4, enc.get());
    return out;
}

} // namespace

namespace detail {

// The part's text: decoded, and in UTF-8 when its encoding is not ASCII-compatible (its
// label, a byte-order mark or a <meta>: sniff_html_encoding); then it is checked only.
std::optional<Content> PartRewriter::load(bool &rewritable, std::string &described)
{
    auto bytes = ctx_.decoded_content(hn_, opts_.html_max);
    if (!bytes) {
        tally_.unread = "part " + hn_.section + ": " + bytes.error().message;
        ctx_.report().add_error(hn_.section, ErrorCode::HtmlLimit,
                                bytes.error().message + " (--html-max " + std::to_string(opts_.html_max) +
                                    "); references not looked at");
        return std::nullopt;
    }
    const HtmlEncoding enc = sniff_html_encoding(charset(), bytes->view()); // the prescan reads what it needs
    rewritable = enc.ascii_compatible;
    described = enc.described;
    if (!rewritable) tally_.unread = "part " + hn_.section + ": charset " + enc.described;
    if (!rewritable && !enc.convert_from.empty()) {
        keep_charset(enc.convert_from); // its module stays loaded for the next part (charsets.hh)
        gsize written = 0;
        GCharPtr conv(g_convert(bytes->data(), static_cast<gssize>(bytes->size()), "UTF-8", enc.convert_from.c_str(),
                                nullptr, &written, nullptr));
        if (conv) {
            converted_ = true;
            return Content::owned(std::string(conv.get(), written));
        }
    }
    return std::move(*bytes);
}

// The scan of a large part in pieces: true and out set when the tokenizer answered, with the
// scan find() makes of the whole (a part with no reference has no cid: or mid: one, where
// find() skips the parse); false: find() is to read it whole.
// A part of over opts_.piece_min bytes in an ASCII-compatible charset is scanned as it is
// decoded, a block at a time (MessageContext::decoded_pieces, html::PieceTokenizer): it is
// read whole only if a reference in it is to change, or the tokenizer cannot say (gumbo then
// reads it, as find() does), or one tag, comment or <style> text in it is over
// opts_.piece_carry.
Result<bool> PartRewriter::find_in_pieces(std::optional<html::Scan> &out)
{
    if (GMIME_IS_PART(hn_.object) &&
        g_mime_part_get_content_encoding(GMIME_PART(hn_.object)) == GMIME_CONTENT_ENCODING_UUENCODE)
        return false;
    if (ascii_compatibility(charset()) == AsciiCompat::No) return false;
    auto span = ctx_.content_span(hn_);
    if (!span || static_cast<std::size_t>(span->second - span->first) < opts_.piece_min) return false;
    // A byte-order mark or a <meta> in its first 1024 bytes, or in a head that goes on past
    // them, may say otherwise: read whole then (also when the head goes on past 64 KiB).
    constexpr std::size_t kHeadMax = 64 * 1024;
    std::string head;
    (void)ctx_.decoded_pieces(hn_, opts_.html_max, [&](std::string_view piece) {
        head.append(piece.substr(0, kHeadMax - head.size()));
        return head.size() < kHeadMax;
    }, opts_.piece_block);
    const HtmlEncoding enc = sniff_html_encoding(charset(), head);
    if (!enc.ascii_compatible || (enc.head_open && head.size() >= kHeadMax)) return false;
    html::PieceTokenizer tokenizer(opts_.max_refs, opts_.piece_carry);
    Status late = ok();
    auto read = ctx_.decoded_pieces(hn_, opts_.html_max, [&](std::string_view piece) {
        if (Status t = ctx_.check_time(); !t) {
            late = t;
            return false;
        }
        return tokenizer.feed(piece);
    }, opts_.piece_block);
    if (!late) return late.error();
    if (!read) return false; // find() reports it as it comes
    auto r = tokenizer.finish();
    if (!r.scan) return false;
    out = std::move(*r.scan);
    return true;
}

// Finds the references; out stays empty when there are none to look at (or the part is
// reported and left).
Status PartRewriter::find(std::string_view html, std::optional<html::Scan> &out)
{
    // No reference can be in a part without "id:" (cid:, mid:, any case), a numeric
    // character reference for c, i, d, m or ':', &colon;, or a backslash (a CSS escape):
    // skip the HTML5 parse then, unless locations are in play.
    if (!ix_.any_location && !ix_.any_related_id && !html::may_hold_reference(html)) return ok();
    if (css_) { // url() and @import as in a <style> element; linear, at most --max-refs
        html::ScanBuilder b(opts_.max_refs);
        b.style_text(0, html);
        out = b.finish();
        if (out->truncated) tally_.unread = "part " + hn_.section + ": over --max-refs";
        if (out->truncated)
            ctx_.report().add_error(hn_.section, ErrorCode::RefLimit,
                                    "more than " + std::to_string(opts_.max_refs) + " references; the rest not looked at");
        return ok();
    }
    html::ParseLimits limits;
    limits.max_refs = opts_.max_refs;
    limits.max_bytes = html::memory_cap(html.size(), opts_.html_max);
    limits.out_of_time = [this] { return ctx_.out_of_time(); };
    auto scan = html::scan_refs(html, limits); // the streaming tokenizer, gumbo where it cannot say
    if (!scan) {
        if (scan.error().code == Code::TempFail) return scan.error(); // out of memory: --on-error decides
        tally_.unread = "part " + hn_.section + ": " + scan.error().message;
        ctx_.report().add_error(hn_.section, ErrorCode::Html, scan.error().message);
        return ok();
    }
    if (scan->stop != html::Stop::None) { // a limit: the message passes as it came
        ctx_.report().add_error(hn_.section, html::stop_kind(scan->stop), scan->stop_message);
        return Error::limit(scan->stop_message);
    }
    if (scan->truncated) {
        tally_.unread = "part " + hn_.section + ": over --max-refs";
        ctx_.report().add_error(hn_.section, ErrorCode::RefLimit,
                                "more than " + std::to_string(opts_.max_refs) + " references; the rest not looked at");
    }
    out = std::move(*scan);
    return ok();
}

// What the reference is and what it points at; nullopt for a reference the options leave
// alone, and for an ordinary link that is no reference into the message.
std::optional<Decision> PartRewriter::resolve_ref(const html::Ref &ref, const std::string &base)
{
    Decision d;
    if (starts_ci(ref.url, "cid:")) {
        if (opts_.cid == RefOptions::Cid::Off) return std::nullopt;
        d.kind = Kind::Cid;
        d.target = resolver_.cid(ref.url, node_, ref.padded);
        // Found in a message the reply answers, among those indexed so far: as for mid: below.
        // Not found, and a message it answers not indexed (yet): planned again once the
        // input is, whatever came (the census of ids counts what an mbox holds, not which
        // worker indexed it), so that --jobs=1 and --jobs=2 give one answer.
        if (d.target.match == Match::Thread && d.target.in_run) ctx_.wait_for(d.target.message_id);
        else if (d.target.status == RefStatus::Dangling && !d.target.unknown_id.empty()) ctx_.wait_for({});
    } else if (starts_ci(ref.url, "mid:")) {
        if (opts_.mid == RefOptions::Mid::Off) return std::nullopt;
        d.kind = Kind::Mid;
        d.target = resolver_.mid(ref.url, node_);
        // A later message of the input may still carry it: the run plans this message again
        // once the input is indexed, if that id was seen meanwhile. A mid:msg/cid whose
        // message was found but has no such part waits on that message's id (a later copy
        // would make it ambiguous), not on nothing (which plans it again whatever came).
        if (d.target.status == RefStatus::Dangling)
            ctx_.wait_for(!d.target.unknown_id.empty() ? d.target.unknown_id : d.target.message_id);
        // Answered by the run's messages indexed so far: a later copy of the id would make it
        // ambiguous, so it waits on that id too (src/run/taker.cc, ForwardHold::may_replan).
        else if (d.target.in_run)
            ctx_.wait_for(d.target.message_id);
    } else {
        if ((!ix_.any_location && !ix_.any_related_id) || opts_.cid == RefOptions::Cid::Off) return std::nullopt;
        if (starts_ci(ref.url, "data:") || starts_ci(ref.url, "javascript:") || starts_ci(ref.url, "mailto:") ||
            ref.url[0] == '#')
            return std::nullopt;
        d.target = resolver_.location(ref.url, base, node_);
        if (d.target.status == RefStatus::Dangling) return std::nullopt;
        d.kind = Kind::Location;
    }
    return d;
}

// A stable cid: URL for a target: its Content-ID as written, else one given to it.
std::string PartRewriter::canonical(int target)
{
    const IndexedPart &tp = ix_.parts[static_cast<std::size_t>(target)];
    std::string id = !tp.cid_raw.empty() ? tp.cid_raw : tp.cid_clean;
    if (id.empty())
        for (auto &[node, gen] : tally_.new_content_ids)
            if (node == target) id = gen;
    if (id.empty()) {
        // A unique, stable Content-ID for a part that has none (RFC 2392 needs one).
        std::string seed = ctx_.report().message_id + "|" + tp.section + "|" + tp.location;
        GCharPtr sum(g_compute_checksum_for_string(G_CHECKSUM_SHA1, seed.c_str(), -1));
        id = std::string("mimeuri.") + std::string(sum.get()).substr(0, 16) + "@mimeuri.invalid";
        tally_.new_content_ids.emplace_back(target, id);
    }
    return canonical_cid_url(id);
}

// The action for a cid: or location reference resolved to an entity of this message.
void PartRewriter::decide_local(std::size_t ri, Decision &d)
{
    const Target &t = d.target;
    const Node &target = ctx_.nodes()[static_cast<std::size_t>(t.node)];
    const IndexedPart &tp = ix_.parts[static_cast<std::size_t>(t.node)];
    if (opts_.cid == RefOptions::Cid::Inline) {
        inline_target(target, d);
        if (d.action != Action::Inlined) tally_.kept_targets.insert(t.node);
    } else if (opts_.cid == RefOptions::Cid::Extract && !opts_.extract_dir.empty()) {
        pending_.refs.emplace_back(ri, t.node);
        d.action = Action::Extracted;
    } else {
        tally_.kept_targets.insert(t.node);
    }
    const bool checking = opts_.cid == RefOptions::Cid::Check;
    if (d.action == Action::None && !checking && d.kind == Kind::Cid && !t.named_id.empty() && tp.cid_clean.empty() &&
        tp.cid_raw.empty() && msg_id_text(t.named_id)) {
        // The target lacks the Content-ID the URL names: it gets it (and a malformed URL its form).
        bool known = false;
        for (auto &[node, gen] : tally_.new_content_ids) known = known || node == t.node;
        if (!known) tally_.new_content_ids.emplace_back(t.node, t.named_id);
        if (t.broken) d.new_url = canonical_cid_url(t.named_id);
        d.action = Action::Repaired;
    }
    if (d.action == Action::None && !checking) {
        if (t.broken) { // a malformed cid:, or a Content-ID written without its scheme
            d.new_url = canonical(t.node);
            d.action = Action::Repaired;
        } else if (d.kind == Kind::Location && opts_.location_to_cid) {
            // Valid as written (RFC 2557): rewritten only when asked.
            d.new_url = canonical(t.node);
            d.action = Action::Rewritten;
        }
    }
}

// --cid=extract, a mid: reference resolved: in the page, a link to the page (or for
// mid:msg/cid the file) the extract holds for its target, when it holds one; the message
// itself is not changed. Otherwise the reason: "no-page" (the target message has no page:
// no text/html part, an embedded message, a message only an index knows of, from no earlier
// extract), "no-file" (mid:msg/cid: that part was not written as a file, or its page is not
// planned yet: a later input's).
void PartRewriter::decide_page_link(std::size_t ri, Decision &d)
{
    const Target &t = d.target;
    if (t.message_id.empty()) { // this message, or one embedded in it
        const bool own = ix_.messages.front().node == t.node && t.mid_cid.empty();
        if (own && tally_.page_node >= 0) {
            pending_.links.emplace_back(ri, std::string());
            d.action = Action::Extracted;
        } else if (!t.mid_cid.empty()) {
            decide_local(ri, d); // the part's file, as for a cid:
        } else {
            d.reason = "no-page";
        }
        return;
    }
    std::string url;
    if (t.in_run && t.html) {
        const std::size_t folder = tally_.pages->folder(t.input_no, t.number);
        if (t.mid_cid.empty()) {
            url = "../" + std::to_string(folder) + "/index.html";
        } else if (auto file = tally_.pages->file(folder, t.section)) {
            GCharPtr e(g_uri_escape_string(file->c_str(), nullptr, FALSE));
            url = "../" + std::to_string(folder) + "/" + e.get();
        }
    } else if (!t.in_run && !t.page.empty() && t.mid_cid.empty()) {
        url = relative_url(tally_.folder_path, t.page);
    }
    if (url.empty()) {
        d.reason = t.mid_cid.empty() || !(t.in_run && t.html) ? "no-page" : "no-file";
        return;
    }
    pending_.links.emplace_back(ri, std::move(url));
    d.action = Action::Extracted;
}

void PartRewriter::decide(const html::Ref &ref, std::size_t ri, Decision &d)
{
    const Target &t = d.target;
    if (t.node >= 0 && t.message_id.empty()) tally_.referenced.insert(t.node);
    if (d.kind == Kind::Mid && extracting() && opts_.mid_url.empty()) { // (--mid-url: the web archive's links)
        if (t.status == RefStatus::Resolved) decide_page_link(ri, d);
        else d.reason = status_name(t.status);
    } else if (d.kind == Kind::Mid) {
        if (opts_.mid == RefOptions::Mid::Repair) {
            if (!opts_.mid_url.empty()) {
                d.new_url = mid_url_for(opts_.mid_url, ref.url);
                d.action = Action::Rewritten;
            } else if (t.status == RefStatus::Resolved && t.broken) {
                d.new_url = canonical_mid_url(t);
                d.action = Action::Repaired;
            }
        }
    } else if (t.match == Match::Thread) { // a part of a message it answers: a link in a page
        if (extracting()) decide_page_link(ri, d);
        else if (opts_.cid == RefOptions::Cid::Inline) d.reason = "other-message";
    } else if (t.status == RefStatus::Resolved && t.node >= 0 && t.message_id.empty()) {
        decide_local(ri, d);
    }
    // A reference the mode would act on, had it one target: why it did not.
    const bool acting = opts_.cid == RefOptions::Cid::Inline || opts_.cid == RefOptions::Cid::Extract ||
                        (opts_.cid == RefOptions::Cid::Repair && t.broken);
    if (t.status != RefStatus::Resolved && (d.kind == Kind::Mid ? opts_.mid == RefOptions::Mid::Repair && opts_.mid_url.empty() && t.broken : acting))
        d.reason = status_name(t.status);
    if (d.action != Action::None && d.action != Action::Extracted && html_kept()) {
        d.action = Action::Kept;
        d.reason = "signed";
        d.new_url.clear();
        if (t.node >= 0) tally_.kept_targets.insert(t.node);
    }
    if (!d.new_url.empty()) {
        reps_.push_back({ri, d.new_url});
        rep_refs_.push_back({ctx_.report().refs.size(), t.node});
        rep_blobs_.push_back(d.blob);
    }
}

void PartRewriter::report(const html::Ref &ref, const html::Holder &holder, const Decision &d)
{
    const Target &t = d.target;
    RefEntry e;
    e.part = hn_.section;
    e.attr = holder.attribute ? holder.element + "@" + holder.attr : css_ ? "css" : "style";
    e.url = ref.url;
    e.kind = d.kind;
    // A URL that is a part's Content-Location resolves to it whatever its scheme (RFC 2557
    // 8.2; Blink's MHTML names parts "Content-Location: cid:..." and refers to them so, and
    // browsers load them): resolved, inlined and extracted like any other, "matched" saying
    // how. Repair still gives the part the Content-ID the URL names, for readers that match
    // a cid: URL against Content-IDs only (RFC 2557 8.3).
    const RefStatus status = t.status;
    if (status == RefStatus::Resolved) ++tally_.resolved;
    else if (status == RefStatus::Dangling) ++tally_.dangling;
    else ++tally_.ambiguous;
    e.status = report_status(status);
    e.matched = match_name(t.match);
    e.action = d.action;
    e.reason = d.reason;
    if (d.action == Action::Kept) e.kept = *html_kept();
    if (t.node >= 0 && t.message_id.empty()) e.target = ix_.parts[static_cast<std::size_t>(t.node)].section;
    else if (!t.message_id.empty() && t.status == RefStatus::Resolved) e.target = t.section;
    if (!t.message_id.empty()) e.target_message = t.message_id;
    if (!t.message_id.empty() && t.offset >= 0) {
        e.target_source = t.source;
        e.target_offset = t.offset;
    }
    ctx_.report().refs.push_back(std::move(e));
}

// The report claims no change that is not in the output: a replacement that is not made
// goes back to "none", and its target stays (--drop-inlined keeps it).
void PartRewriter::unclaim(std::size_t k, const char *reason)
{
    auto [entry, target] = rep_refs_[k];
    ctx_.report().refs[entry].action = Action::None;
    ctx_.report().refs[entry].reason = reason; // the part's error says more
    if (target >= 0) tally_.kept_targets.insert(target);
}

// Makes the replacements and writes the part back in its transfer encoding.
Status PartRewriter::write(std::string_view html, const html::Scan &scan, bool rewritable, const std::string &described)
{
    auto unclaim_all = [&](const char *reason) {
        for (std::size_t k = 0; k < reps_.size(); ++k) unclaim(k, reason);
    };
    if (!rewritable) {
        unclaim_all("charset");
        ctx_.report().add_error(hn_.section, ErrorCode::Charset,
                                "charset " + described + " is not ASCII-compatible: references checked, not rewritten");
        return ok();
    }
    html::Rewritten rewritten;
    std::optional<StreamedBody> body = with_payloads(html, scan, rewritten);
    for (auto &r : reps_) std::string().swap(r.url); // in the rewrite now: not held twice
    for (std::size_t k : rewritten.skipped) {
        unclaim(k, "html-rewrite");
        ctx_.report().add_error(hn_.section, ErrorCode::HtmlRewrite,
                                "reference " + scan.refs[reps_[k].ref].url + " not rewritten: its bytes cannot be replaced alone");
    }
    if (!body && rewritten.html == html) return ok(); // nothing actually changed: no edit
    if (!transfer::can_write_back(g_mime_part_get_content_encoding(GMIME_PART(hn_.object)))) {
        unclaim_all("encoding");
        ctx_.report().add_error(hn_.section, ErrorCode::Encoding, "transfer encoding not rewritable: references checked only");
        return ok();
    }
    std::string text = body ? std::string() : std::move(rewritten.html);
    if (body) std::string().swap(rewritten.html); // the body holds its own text
    if (body && css_) { // a stylesheet is inlined as its text: held (it is at most --inline-max)
        auto whole = body->content_text(reader_of(ctx_.source()));
        if (!whole) return whole.error();
        text = std::move(*whole);
        body.reset();
    }
    if (Status s = body ? transfer::write_back(ctx_, hn_, std::move(*body)) : transfer::write_back(ctx_, hn_, text); !s) {
        if (s.error().code == Code::Software) return s;
        unclaim_all("rewrite");
        ctx_.report().add_error(hn_.section, ErrorCode::Rewrite, s.error().message + "; references not rewritten");
    } else if (css_) {
        tally_.css_text[node_] = std::move(text);
    }
    return ok();
}

Status PartRewriter::run()
{
    bool rewritable = true;
    std::string charset;
    std::optional<Content> html;
    std::optional<html::Scan> scan;
    auto pieces = css_ ? Result<bool>(false) : find_in_pieces(scan);
    if (!pieces) return pieces.error();
    if (!*pieces) {
        html = load(rewritable, charset);
        if (!html) return ok();
        if (Status s = find(html->view(), scan); !s) return s;
        if (!scan && !is_page()) return ok();
        if (!scan) scan.emplace(); // the page, with no reference in it: written as it is
    }
    std::string base = ix_.parts[static_cast<std::size_t>(node_)].base;
    if (scan->base_href)
        if (std::string b = resolve(base, *scan->base_href); !b.empty()) base = b;
    pending_.html_node = node_;
    // At most an entry per reference: room made at once, not by doubling (at 100,000
    // references in one part, 53 MB held instead of 69, and no 34 MB copy beside it while it
    // grows); still geometric over many parts.
    auto &entries = ctx_.report().refs;
    if (const std::size_t need = entries.size() + scan->refs.size(); need > entries.capacity())
        entries.reserve(std::max(need, entries.capacity() + entries.capacity() / 2));
    pending_.css = css_;
    pending_.base = base;
    if (scan->truncated) tally_.unread = "part " + hn_.section + ": over --max-refs";
    if (opts_.drop_inlined)
        for (const html::Ref &r : scan->refs) tally_.read_urls.push_back(r.url);
    for (std::size_t ri = 0; ri < scan->refs.size(); ++ri) {
        // Before each reference: one may cost a lookup in an index on disk (--mid-index,
        // --notmuch), so the clock is read by work, not every thousand references.
        if (auto t = ctx_.check_time(); !t) return t;
        const html::Ref &ref = scan->refs[ri];
        auto d = resolve_ref(ref, base);
        if (!d) continue;
        if (d->kind == Kind::Cid) { // for the related pass, which resolves cid: URLs so too (HtmlShare)
            if (cid_nodes_.empty()) cid_nodes_.assign(scan->refs.size(), HtmlShare::kUnresolved);
            const bool here = d->target.status == RefStatus::Resolved && d->target.message_id.empty();
            cid_nodes_[ri] = here ? d->target.node : -1;
        }
        decide(ref, ri, *d);
        report(ref, scan->holders[ref.holder], *d);
    }
    const bool page = !pending_.refs.empty() || !pending_.links.empty() || is_page();
    if (!html && (page || !reps_.empty())) { // read in pieces, and to change: whole now
        charset.clear(); // ASCII-compatible (find_in_pieces): rewritable
        auto bytes = ctx_.decoded_content(hn_, opts_.html_max);
        if (!bytes) return bytes.error(); // read before: the input changed, or the machine failed
        html = std::move(*bytes);
    }
    if (page) {
        // The message's own edits too (--mid-url's links); the page is made of the part as read.
        if (!reps_.empty())
            if (Status s = write(html->view(), *scan, rewritable, charset); !s) return s;
        pending_.html = std::move(*html).take();
        pending_.scan = std::move(*scan);
        tally_.extracts.push_back(std::move(pending_));
        return ok();
    }
    Status s = reps_.empty() ? ok() : write(html->view(), *scan, rewritable, charset);
    // The scan of the part's decoded bytes as they are: the data and related passes read the
    // same bytes and take it instead of making it again (HtmlShare).
    if (s && !css_ && !converted_) HtmlShare::of(ctx_).keep_scan(node_, opts_.html_max, std::move(*scan), std::move(cid_nodes_));
    return s;
}

} // namespace detail

using detail::PartRewriter;

Status rewrite_html_part(MessageContext &ctx, const RefOptions &opts, const MessageIndex &ix, const Resolver &resolver,
                         int node, Tally &tally)
{
    const Node &hn = ctx.nodes()[static_cast<std::size_t>(node)];
    if (hn.kind != Node::Kind::Leaf || !is_type(hn, "text", "html")) return ok();
    if (auto t = ctx.check_time(); !t) return t;
    return PartRewriter(ctx, opts, ix, resolver, node, tally).run();
}

Status rewrite_css_part(MessageContext &ctx, const RefOptions &opts, const MessageIndex &ix, const Resolver &resolver,
                        int node, Tally &tally)
{
    const Node &n = ctx.nodes()[static_cast<std::size_t>(node)];
    if (n.kind != Node::Kind::Leaf || !is_type(n, "text", "css") || ix.related_of(node) < 0) return ok();
    if (auto t = ctx.check_time(); !t) return t;
    return PartRewriter(ctx, opts, ix, resolver, node, tally, true).run();
}

} // namespace mimeuri::refs
