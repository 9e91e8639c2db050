// The reference pass, step 3, --cid=inline: a resolved target as a data: URI, or the reason
// it stays a reference (type, size); the payloads held while small, else decoded again from
// the input as the output is written (streamed_body.hh), so that memory is bounded by the
// largest part inlined; canonical base64 is copied, not decoded (base64.hh). Entry points:
// PartRewriter::inline_target and with_payloads, called from ref_part.cc's decide and write.
#include "ref_part_rewriter.hh"

#include "base64.hh"
#include "charsets.hh"

#include <gmime/gmime.h>

namespace mimeuri::refs::detail {

namespace {

bool inline_allowed(const std::string &type, const std::vector<std::string> &allow)
{
    // Never markup or scripts, whatever the allow-list says (SVG can carry scripts).
    if (type == "text/html" || type == "application/xhtml+xml" || type == "image/svg+xml" ||
        type.find("javascript") != std::string::npos || type.find("ecmascript") != std::string::npos)
        return false;
    for (const auto &a : allow) {
        if (a == type) return true;
        if (a.size() > 2 && a.compare(a.size() - 2, 2, "/*") == 0 && type.compare(0, a.size() - 1, a, 0, a.size() - 1) == 0)
            return true;
    }
    return false;
}

// A base64 target whose text is canonical (base64.hh): its data: URL's payload is that text
// with its line breaks removed, copied as the output is written, never decoded here nor
// there (and never held: memory holds none of it). nullopt: not such a target, decoded as
// before; an error: over cap, where decoding would have said so (the same limits as
// MessageContext::decoded_content: the raw content within twice the cap, the bytes within it).
std::optional<Result<StreamedBody::Blob>> copied_blob(const MessageContext &ctx, const Node &target, std::size_t cap)
{
    if (!GMIME_IS_PART(target.object) || !g_mime_part_get_content(GMIME_PART(target.object)) ||
        g_mime_part_get_content_encoding(GMIME_PART(target.object)) != GMIME_CONTENT_ENCODING_BASE64)
        return std::nullopt;
    auto span = ctx.content_span(target);
    if (!span) return std::nullopt;
    const auto raw = static_cast<std::size_t>(span->second - span->first);
    const std::size_t raw_most = cap > (SIZE_MAX - 65536) / 2 ? SIZE_MAX : cap * 2 + 65536;
    if (raw > raw_most) return Result<StreamedBody::Blob>(Error::limit("over --inline-max"));
    base64::Unbroken text;
    const SpanReader read = reader_of(ctx.source());
    std::string buf;
    constexpr std::int64_t kBlock = std::int64_t{256} << 10;
    for (std::int64_t at = span->first; at < span->second; at += kBlock) {
        auto bytes = read(at, std::min(span->second, at + kBlock), buf);
        if (!bytes || !text.feed(*bytes, nullptr)) return std::nullopt;
    }
    if (!text.canonical()) return std::nullopt;
    if (text.decoded_size() > cap) return Result<StreamedBody::Blob>(Error::limit("over --inline-max"));
    StreamedBody::Blob b;
    b.held = false;
    b.copied = true;
    b.begin = span->first;
    b.end = span->second;
    b.encoding = GMIME_CONTENT_ENCODING_BASE64;
    b.size = text.decoded_size();
    return Result<StreamedBody::Blob>(std::move(b));
}

} // namespace

// --cid=inline: the target as a data: URI, or the reason it stays a reference: its type
// (not in --inline-types, or a multipart), its size (over --inline-max). A part declared
// application/octet-stream whose first bytes are an image a browser would show (it sniffs
// them so) is inlined as that image type, the reason saying so ("sniffed:image/png").
void PartRewriter::inline_target(const Node &target, Decision &d)
{
    std::string type = mime_type(target);
    if (target.kind != Node::Kind::Leaf || !GMIME_IS_PART(target.object)) {
        d.reason = "type";
        return;
    }
    bool sniffed = false;
    if (!inline_allowed(type, opts_.inline_types) && type == "application/octet-stream") {
        // Its first bytes only, whatever its size (so that an image over --inline-max says
        // "size"); uuencoded content is decoded whole, so there the cap holds.
        const bool uu = g_mime_part_get_content_encoding(GMIME_PART(target.object)) == GMIME_CONTENT_ENCODING_UUENCODE;
        std::string head;
        (void)ctx_.decoded_pieces(target, uu ? opts_.inline_max : SIZE_MAX, [&](std::string_view piece) {
            head.append(piece.substr(0, 16 - head.size()));
            return head.size() < 16;
        }, 4096);
        if (std::string image = sniff_image(head); !image.empty() && inline_allowed(image, opts_.inline_types)) {
            type = image;
            sniffed = true;
        }
    }
    if (!inline_allowed(type, opts_.inline_types)) {
        d.reason = "type";
        return;
    }
    if (auto known = blob_of_.find(d.target.node); known != blob_of_.end()) {
        d.blob = known->second; // inlined before: the same bytes
    } else if (auto copy = tally_.css_text.count(d.target.node) ? std::nullopt : copied_blob(ctx_, target, opts_.inline_max);
               copy) {
        if (*copy) {
            blobs_.push_back(std::move(**copy));
            d.blob = static_cast<int>(blobs_.size() - 1);
            blob_of_.emplace(d.target.node, d.blob);
        }
    } else if (auto large = large_blob(d.target.node); large) {
        d.blob = *large;
    } else {
        auto bytes = ctx_.decoded_content(target, opts_.inline_max);
        auto css = tally_.css_text.find(d.target.node);
        if (bytes && css != tally_.css_text.end()) {
            if (css->second.size() > opts_.inline_max) bytes = Error::limit("over --inline-max");
            else bytes = Content::borrowed(css->second); // its own references inlined
        }
        if (bytes) d.blob = blob_for(d.target.node, std::move(*bytes), css != tally_.css_text.end());
    }
    if (d.blob < 0) {
        d.reason = "size";
        return;
    }
    d.new_url.append("data:").append(type).append(";base64,");
    d.action = Action::Inlined;
    if (sniffed) d.reason = "sniffed:" + type;
    tally_.inlined_targets.insert(d.target.node);
}

// The payload of a target's data: URLs (one per target, however often it is referred to):
// its decoded bytes held while the part's held bytes stay within kInlineHeldMax (and always
// a rewritten stylesheet's or uuencoded content, which the input does not hold as such),
// else its span in the input, decoded again when the output is written. Content with no
// transfer encoding to undo is never held: the input has it as it is.
int PartRewriter::blob_for(int node, Content bytes, bool css)
{
    if (auto it = blob_of_.find(node); it != blob_of_.end()) return it->second;
    const Node &target = ctx_.nodes()[static_cast<std::size_t>(node)];
    StreamedBody::Blob b;
    b.size = bytes.size();
    const GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(target.object));
    const bool decoded = enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
    auto span = css || enc == GMIME_CONTENT_ENCODING_UUENCODE || !g_mime_part_get_content(GMIME_PART(target.object))
                    ? Result<std::pair<std::int64_t, std::int64_t>>(Error{Code::DataErr, "held"})
                    : ctx_.content_span(target);
    if (span && (!decoded || held_ + b.size > kInlineHeldMax)) {
        b.held = false;
        b.begin = span->first;
        b.end = span->second;
        b.encoding = static_cast<int>(enc);
    } else {
        b.bytes = std::move(bytes).take();
        held_ += b.size;
    }
    blobs_.push_back(std::move(b));
    blob_of_.emplace(node, static_cast<int>(blobs_.size() - 1));
    return static_cast<int>(blobs_.size() - 1);
}

// A target whose content is over kInlineHeldMax as it is in the input (base64,
// quoted-printable or none) is never read whole: its decoded size is counted a piece at a
// time (the same limits and errors as decoded_content), and it is decoded again when the
// output is written. nullopt: not such a target; -1: over --inline-max (or unreadable).
std::optional<int> PartRewriter::large_blob(int node)
{
    const Node &target = ctx_.nodes()[static_cast<std::size_t>(node)];
    if (tally_.css_text.count(node) || !GMIME_IS_PART(target.object) || !g_mime_part_get_content(GMIME_PART(target.object)))
        return std::nullopt;
    const GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(target.object));
    if (enc == GMIME_CONTENT_ENCODING_UUENCODE) return std::nullopt;
    auto span = ctx_.content_span(target);
    if (!span || static_cast<std::size_t>(span->second - span->first) <= kInlineHeldMax) return std::nullopt;
    StreamedBody::Blob b;
    Status s = ctx_.decoded_pieces(target, opts_.inline_max, [&](std::string_view piece) {
        b.size += piece.size();
        return true;
    });
    if (!s) return -1;
    b.held = false;
    b.begin = span->first;
    b.end = span->second;
    b.encoding = static_cast<int>(enc);
    blobs_.push_back(std::move(b));
    blob_of_.emplace(node, static_cast<int>(blobs_.size() - 1));
    return static_cast<int>(blobs_.size() - 1);
}

// The rewrite, with each data: URL's payload left out of the text: the replacements that
// inline carry a marker in its place (letters and digits, which no escaping of a URL changes,
// and a '=' where the payload ends in padding, since whether an unquoted value needs quotes
// depends on it), found in the rewritten text and cut out of it. nullopt when no payload is
// in the rewrite (then `rewritten` is the whole text).
std::optional<StreamedBody> PartRewriter::with_payloads(std::string_view html, const html::Scan &scan,
                                                        html::Rewritten &rewritten)
{
    std::vector<std::size_t> inlining;
    for (std::size_t k = 0; k < reps_.size(); ++k)
        if (rep_blobs_[k] >= 0) inlining.push_back(k);
    if (inlining.empty()) {
        rewritten = html::rewrite(html, scan, reps_);
        return std::nullopt;
    }
    std::vector<std::string> heads; // "data:TYPE;base64,"
    for (std::size_t k : inlining) heads.push_back(reps_[k].url);
    // A marker that the text does not hold; found exactly once per replacement made, or tried
    // again with another (a URL's head could hold one, or the bytes beside it end like one).
    for (unsigned attempt = 0; attempt < 64; ++attempt) {
        const std::string nonce = "MimeuriPayload" + std::to_string(attempt) + "q";
        if (html.find(nonce) != std::string_view::npos) continue;
        for (std::size_t i = 0; i < inlining.size(); ++i) {
            const int blob = rep_blobs_[inlining[i]];
            const bool padded = blobs_[static_cast<std::size_t>(blob)].size % 3 != 0;
            reps_[inlining[i]].url = heads[i] + nonce + std::to_string(blob) + (padded ? "p=" : "n");
        }
        rewritten = html::rewrite(html, scan, reps_);
        std::size_t made = inlining.size();
        for (std::size_t k : rewritten.skipped) made -= rep_blobs_[k] >= 0 ? 1 : 0;
        StreamedBody body;
        std::map<int, int> slot; // blobs_ index -> body.blobs index
        const std::string &t = rewritten.html;
        std::size_t at = 0, found = 0;
        bool bad = false;
        for (std::size_t hit = t.find(nonce); !bad && hit != std::string::npos; hit = t.find(nonce, at)) {
            std::size_t d = hit + nonce.size(), e = d;
            while (e < t.size() && e - d < 9 && t[e] >= '0' && t[e] <= '9') ++e;
            const int blob = e > d ? std::stoi(t.substr(d, e - d)) : -1;
            const std::size_t end = t.compare(e, 1, "n") == 0 ? e + 1 : t.compare(e, 2, "p=") == 0 ? e + 2 : 0;
            bad = blob < 0 || static_cast<std::size_t>(blob) >= blobs_.size() || end == 0;
            if (bad) break;
            body.text.append(t, at, hit - at);
            auto [it, fresh] = slot.emplace(blob, static_cast<int>(slot.size()));
            body.pieces.push_back({body.text.size(), it->second});
            at = end;
            ++found;
        }
        if (bad || found != made) continue;
        if (found == 0) return std::nullopt; // every one skipped: the text has no marker
        body.text.append(t, at);
        body.blobs.resize(slot.size());
        for (auto &[from, to] : slot) body.blobs[static_cast<std::size_t>(to)] = std::move(blobs_[static_cast<std::size_t>(from)]);
        return body;
    }
    rewritten.html = std::string(html); // no marker found to use: nothing changes
    rewritten.skipped.clear();
    for (std::size_t k = 0; k < reps_.size(); ++k) rewritten.skipped.push_back(k);
    return std::nullopt;
}

} // namespace mimeuri::refs::detail
