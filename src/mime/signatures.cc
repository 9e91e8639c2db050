#include "signatures.hh"

#include "gobj.hh"
#include "text.hh"

#include <algorithm>
#include <cstring>
#include <deque>

namespace mimeuri {

using State = SignatureEntry::State;

namespace dkim {

std::optional<Signature> parse(std::string_view value)
{
    Signature sig;
    std::vector<std::string> seen;
    bool have_b = false;
    std::size_t pos = 0;
    while (pos <= value.size()) {
        std::size_t semi = value.find(';', pos);
        if (semi == std::string_view::npos) semi = value.size();
        std::string_view spec = value.substr(pos, semi - pos);
        pos = semi + 1;
        std::size_t eq = spec.find('=');
        std::string name = text::ascii_lower(text::without_space(spec.substr(0, eq == std::string_view::npos ? spec.size() : eq)));
        if (name.empty() && eq == std::string_view::npos) continue; // a trailing ";"
        if (eq == std::string_view::npos) return std::nullopt;
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) return std::nullopt; // RFC 6376 3.2
        seen.push_back(name);
        std::string v;
        for (char c : spec.substr(eq + 1))
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') v += c;
        if (name == "a") sig.a = text::ascii_lower(v);
        else if (name == "bh") sig.bh = v;
        else if (name == "b") have_b = !v.empty();
        else if (name == "d") sig.d = v;
        else if (name == "s") sig.s = v;
        else if (name == "c") sig.c = text::ascii_lower(v);
        else if (name == "l") {
            if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
            sig.l = std::stoull(v);
        } else if (name == "h") {
            for (std::size_t b = 0; b <= v.size();) {
                std::size_t colon = std::min(v.find(':', b), v.size());
                if (colon > b) sig.h.push_back(text::ascii_lower(std::string_view(v).substr(b, colon - b)));
                b = colon + 1;
            }
        }
    }
    if (!have_b || sig.bh.empty() || sig.h.empty() || sig.a.empty()) return std::nullopt;
    return sig;
}

} // namespace dkim

namespace {

constexpr std::int64_t kChunk = 65536;

// Where the fields of a message's header block start and end, and its body starts.
struct Block {
    std::int64_t begin{-1}, end{-1}, body{-1};
};

Block header_block(const MessageContext &ctx, GMimeMessage *msg)
{
    Block b;
    GMimeObject *body = g_mime_message_get_mime_part(msg);
    for (GMimeObject *o : {GMIME_OBJECT(msg), body}) {
        GMimeHeaderList *hl = o ? g_mime_object_get_header_list(o) : nullptr;
        for (int i = 0; hl && i < g_mime_header_list_get_count(hl); ++i) {
            GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
            auto raw = ctx.raw_header(h);
            if (!raw) continue;
            std::int64_t off = g_mime_header_get_offset(h);
            b.begin = b.begin < 0 ? off : std::min(b.begin, off);
            b.end = std::max(b.end, off + static_cast<std::int64_t>(raw->size()));
        }
    }
    if (b.end < 0) return b;
    auto blank = ctx.source().slice(b.end, std::min(ctx.segment().msg_end, b.end + 2));
    b.body = b.end;
    if (blank && blank->compare(0, 2, "\r\n") == 0) b.body += 2;
    else if (blank && !blank->empty() && (*blank)[0] == '\n') b.body += 1;
    return b;
}

// Where an entity starts: its first field, or its content when it has none.
std::int64_t entity_begin(const MessageContext &ctx, std::size_t idx)
{
    const Node &n = ctx.nodes()[idx];
    if (n.parent >= 0 && ctx.nodes()[static_cast<std::size_t>(n.parent)].kind == Node::Kind::MessagePart)
        return header_block(ctx, n.message).begin;
    std::int64_t begin = -1;
    GMimeHeaderList *hl = MessageContext::headers_of(n);
    for (int i = 0; hl && i < g_mime_header_list_get_count(hl); ++i) {
        std::int64_t off = g_mime_header_get_offset(g_mime_header_list_get_header_at(hl, i));
        if (off >= ctx.segment().msg_begin) begin = begin < 0 ? off : std::min(begin, off);
    }
    if (begin >= 0) return begin;
    if (n.kind == Node::Kind::Leaf)
        if (auto span = ctx.content_span(n)) return span->first;
    for (std::size_t c = idx + 1; c < ctx.nodes().size(); ++c) // a multipart with no fields
        if (ctx.nodes()[c].parent == static_cast<int>(idx)) return entity_begin(ctx, c);
    return -1;
}

// Where an entity ends: the line break before the next delimiter of its multipart (RFC 2046
// 5.1.1: that break belongs to the delimiter), or its enclosing message's end.
std::int64_t entity_end(const MessageContext &ctx, std::size_t idx)
{
    const Node &n = ctx.nodes()[idx];
    if (n.kind == Node::Kind::Leaf)
        if (auto span = ctx.content_span(n)) return span->second;
    if (n.parent < 0) return ctx.segment().msg_end;
    const Node &p = ctx.nodes()[static_cast<std::size_t>(n.parent)];
    if (p.kind != Node::Kind::Multipart) return entity_end(ctx, static_cast<std::size_t>(n.parent));
    const char *boundary = g_mime_multipart_get_boundary(GMIME_MULTIPART(p.object));
    std::int64_t from = entity_begin(ctx, idx);
    if (!boundary || from < 0) return entity_end(ctx, static_cast<std::size_t>(n.parent));
    const std::string delim = std::string("\n--") + boundary;
    const std::int64_t stop = ctx.segment().msg_end;
    for (std::int64_t pos = from; pos < stop;) {
        auto chunk = ctx.source().slice(pos, std::min(stop, pos + kChunk + static_cast<std::int64_t>(delim.size())));
        if (!chunk || chunk->empty()) break;
        std::size_t at = chunk->find(delim);
        if (at != std::string::npos) {
            std::int64_t end = pos + static_cast<std::int64_t>(at);
            if (at > 0 && (*chunk)[at - 1] == '\r') --end;
            return end;
        }
        pos += kChunk;
    }
    return entity_end(ctx, static_cast<std::size_t>(n.parent));
}

// The digests of a message's body under one reading (algorithm, canonicalization, l=, the
// mbox's ">From " quoting taken off or not), each computed once per message: a list message
// often carries its author's DKIM signature, the list's and an ARC seal's, all asking for the
// same relaxed SHA-256 body hash.
struct BodyDigests {
    GChecksumType type;
    dkim::Canon canon;
    std::optional<std::uint64_t> l;
    bool unquote;
    std::vector<std::string> digests;
    std::string error; // the body could not be read
};

const BodyDigests &body_digests(const MessageContext &ctx, std::deque<BodyDigests> &memo, const BodyDigests &want,
                                std::int64_t begin, std::int64_t end)
{
    for (const BodyDigests &d : memo)
        if (d.type == want.type && d.canon == want.canon && d.l == want.l && d.unquote == want.unquote) return d;
    BodyDigests d = want;
    dkim::BodyHash hash(d.type, d.canon, d.l, d.unquote);
    // A window or an input in memory is read where it lies; a file in pieces.
    const std::string_view whole = end > begin ? ctx.source().view(begin, end) : std::string_view();
    if (!whole.empty()) hash.update(whole);
    else
        for (std::int64_t pos = begin; pos < end && d.error.empty(); pos += kChunk) {
            auto chunk = ctx.source().slice(pos, std::min(end, pos + kChunk));
            if (chunk) hash.update(*chunk);
            else d.error = chunk.error().message;
        }
    if (d.error.empty()) d.digests = hash.finish();
    memo.push_back(std::move(d));
    return memo.back();
}

// The body hash state of one signature, and why.
std::pair<SignatureEntry::State, std::string> check_body_hash(const MessageContext &ctx, const dkim::Signature &sig,
                                                    std::int64_t begin, std::int64_t end, std::deque<BodyDigests> &memo)
{
    GChecksumType type;
    if (sig.a == "rsa-sha256" || sig.a == "ed25519-sha256") type = G_CHECKSUM_SHA256;
    else if (sig.a == "rsa-sha1") type = G_CHECKSUM_SHA1;
    else return {State::Unverifiable, "algorithm " + sig.a + " not known"};
    // RFC 6376 3.5: c= is header/body; a header algorithm alone leaves the body "simple". A
    // signature whose header algorithm is unknown cannot verify whatever its body hash says.
    std::size_t slash = sig.c.find('/');
    std::string header_canon = sig.c.substr(0, slash);
    std::string body_canon = slash == std::string::npos ? "" : sig.c.substr(slash + 1);
    if (!header_canon.empty() && header_canon != "simple" && header_canon != "relaxed")
        return {State::Unverifiable, "canonicalization " + sig.c + " not known"};
    dkim::Canon canon;
    if (body_canon.empty() || body_canon == "simple") canon = dkim::Canon::Simple;
    else if (body_canon == "relaxed") canon = dkim::Canon::Relaxed;
    else return {State::Unverifiable, "canonicalization " + sig.c + " not known"};
    gsize want_len = 0;
    guchar *want = g_base64_decode(sig.bh.c_str(), &want_len);
    std::string wanted(reinterpret_cast<const char *>(want), want_len);
    g_free(want);
    const BodyDigests &as_read = body_digests(ctx, memo, {type, canon, sig.l, false, {}, {}}, begin, end);
    if (!as_read.error.empty()) return {State::Unverifiable, "body unreadable: " + as_read.error};
    const auto &got = as_read.digests;
    if (std::find(got.begin(), got.end(), wanted) != got.end()) return {State::Intact, ""};
    // In an mbox that quotes "From " lines, a ">From " line may be the mailbox's doing or the
    // sender's: both readings are hashed (the second only when the first does not match), and
    // the signature tells which one it signed.
    if (ctx.from_quoted()) {
        const BodyDigests &unquoted = body_digests(ctx, memo, {type, canon, sig.l, true, {}, {}}, begin, end);
        const auto &u = unquoted.digests;
        if (std::find(u.begin(), u.end(), wanted) != u.end()) return {State::Intact, "\">From\" quoting added by the mbox"};
    }
    if (got.empty()) return {State::Broken, "l= is longer than the body"};
    return {State::Broken, "body hash does not match"};
}

// RFC 4880 7, the cleartext signature framework: text that holds this line is signed as it
// stands, an inline PGP signature in a text part (any reader that finds it checks the text
// between it and the signature). Looked for anywhere in the decoded content, not only at a
// line's start: an HTML part may put it after a tag, and keeping too much is safe.
bool clearsigned(const MessageContext &ctx, const Node &n)
{
    static constexpr std::string_view marker = "-----BEGIN PGP SIGNED MESSAGE-----";
    bool found = false;
    std::string carry; // the end of the piece before: a marker cut by a piece end
    (void)ctx.decoded_pieces(n, std::size_t{1} << 40, [&](std::string_view piece) {
        carry.append(piece.substr(0, marker.size()));
        if (carry.find(marker) != std::string::npos || piece.find(marker) != std::string_view::npos) {
            found = true;
            return false;
        }
        carry.assign(piece.substr(piece.size() - std::min(piece.size(), marker.size() - 1)));
        return true;
    });
    return found;
}

} // namespace

void protect_conflicting_types(MessageContext &ctx)
{
    const auto &nodes = ctx.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        GMimeHeaderList *hl = MessageContext::headers_of(nodes[i]);
        std::vector<const char *> raws; // each Content-Type field's raw value
        for (int k = 0; hl && k < g_mime_header_list_get_count(hl); ++k) {
            GMimeHeader *h = g_mime_header_list_get_header_at(hl, k);
            if (g_ascii_strcasecmp(g_mime_header_get_name(h), "Content-Type") != 0) continue;
            const char *raw = g_mime_header_get_raw_value(h);
            raws.push_back(raw ? raw : "");
        }
        if (raws.size() < 2) continue; // (the common case: nothing to compare, nothing parsed)
        std::vector<std::string> seen; // "type/subtype;boundary" of each
        for (const char *raw : raws) {
            GMimeContentType *ct = g_mime_content_type_parse(nullptr, raw);
            std::string key;
            if (ct) {
                char *type = g_mime_content_type_get_mime_type(ct);
                const char *b = g_mime_content_type_get_parameter(ct, "boundary");
                key = text::ascii_lower(type ? type : "") + ";" + (b ? b : "");
                g_free(type);
                g_object_unref(ct);
            }
            seen.push_back(std::move(key));
        }
        if (std::all_of(seen.begin(), seen.end(), [&](const std::string &k) { return k == seen.front(); })) continue;
        std::int64_t begin = entity_begin(ctx, i);
        if (begin < 0) continue;
        ctx.protect({begin, entity_end(ctx, i), {}, "content-type-conflict", true});
        ctx.report().add_error(nodes[i].section, ErrorCode::ContentTypeConflict,
                               "Content-Type fields that disagree (GMime reads the last, Python and Thunderbird the "
                               "first): the part is left as it is");
    }
}

namespace {

// The kind of signature or encryption that keeps entity n whole ("pgp", "smime", "signed",
// "encrypted"), or "" for none; inline_pgp: a clearsigned text part.
std::string crypto_kind(const MessageContext &ctx, const Node &n, bool &inline_pgp)
{
    inline_pgp = false;
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    if (!ct) return {};
    if (g_mime_content_type_is_type(ct, "multipart", "signed")) {
        const char *proto = g_mime_content_type_get_parameter(ct, "protocol");
        std::string p = text::ascii_lower(proto ? proto : "");
        return p == "application/pgp-signature" ? "pgp" : p.find("pkcs7-signature") != std::string::npos ? "smime" : "signed";
    }
    if (g_mime_content_type_is_type(ct, "multipart", "encrypted")) return "encrypted";
    if (g_mime_content_type_is_type(ct, "application", "pkcs7-mime") ||
        g_mime_content_type_is_type(ct, "application", "x-pkcs7-mime")) {
        const char *st = g_mime_content_type_get_parameter(ct, "smime-type");
        std::string t = text::ascii_lower(st ? st : "");
        return t == "enveloped-data" || t == "authenveloped-data" ? "encrypted" : "smime";
    }
    if (n.kind == Node::Kind::Leaf && g_mime_content_type_is_type(ct, "text", "*") && clearsigned(ctx, n)) {
        inline_pgp = true; // inline: the part is kept whole, as a multipart/signed entity is
        return "pgp";
    }
    return {};
}

} // namespace

// DKIM-Signature and ARC-Message-Signature fields of one message.
// body_at: the node whose entity the message is (its end found only when needed), -1 for the top.
void Signatures::message_signatures(MessageContext &ctx, GMimeMessage *msg, const std::string &part, int body_at)
{
    const bool enforce = mode_ == SignedMode::Keep;
    const std::int64_t msg_end = ctx.segment().msg_end;
    GMimeHeaderList *hl = g_mime_object_get_header_list(GMIME_OBJECT(msg));
    Block block;
    std::int64_t body_end = msg_end;
    std::deque<BodyDigests> memo; // (a deque: what it holds stays where it is)
    for (int i = 0; hl && i < g_mime_header_list_get_count(hl); ++i) {
        GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
        const char *name = g_mime_header_get_name(h);
        const bool is_dkim = name && g_ascii_strcasecmp(name, "DKIM-Signature") == 0;
        const bool is_arc = name && g_ascii_strcasecmp(name, "ARC-Message-Signature") == 0;
        if (!is_dkim && !is_arc) continue;
        if (block.end < 0) {
            block = header_block(ctx, msg);
            body_end = body_at < 0 ? msg_end : entity_end(ctx, static_cast<std::size_t>(body_at));
        }
        Found f;
        f.kind = is_dkim ? "dkim" : "arc";
        f.part = part;
        const char *raw = g_mime_header_get_raw_value(h);
        auto sig = dkim::parse(raw ? raw : "");
        if (!sig) {
            f.state = State::Broken;
            f.detail = "not a valid signature field (RFC 6376 3.5)";
        } else {
            f.domain = sig->d;
            f.selector = sig->s;
            std::tie(f.state, f.detail) = check_body_hash(ctx, *sig, block.body, body_end, memo);
            // An unverifiable one may verify for someone who knows its algorithm: kept too.
            if (f.state != State::Broken && block.body >= 0) {
                f.protections.push_back(ctx.protect({block.body, body_end, {}, f.kind, enforce}));
                std::vector<std::string> names = sig->h;
                names.push_back(text::ascii_lower(name));
                f.protections.push_back(ctx.protect({block.begin, block.end, std::move(names), f.kind, enforce}));
            }
        }
        found_.push_back(std::move(f));
    }
}

// Entity i, signed or encrypted as `kind` says: kept whole.
void Signatures::crypto_entity(MessageContext &ctx, std::size_t i, const std::string &kind, bool inline_pgp)
{
    const bool enforce = mode_ == SignedMode::Keep;
    const Node &n = ctx.nodes()[i];
    Found f;
    f.kind = kind;
    f.part = n.section;
    f.state = State::Unverifiable;
    f.detail = inline_pgp ? "an inline PGP signed block (RFC 4880 7); mimeuri does not check it; the part is kept whole"
                          : "mimeuri does not check cryptographic signatures; the entity is kept whole";
    if (n.top_level()) {
        // The message's own fields are outside what RFC 1847 signs: fields may be added
        // there, but the body and the fields that describe it stay as they are.
        Block b = header_block(ctx, ctx.message());
        if (b.body >= 0) {
            f.protections.push_back(ctx.protect({b.body, ctx.segment().msg_end, {}, kind, enforce}));
            f.protections.push_back(ctx.protect(
                {b.begin, b.end, {"content-type", "content-transfer-encoding", "mime-version"}, kind, enforce}));
        }
    } else {
        std::int64_t begin = entity_begin(ctx, i);
        if (begin >= 0) f.protections.push_back(ctx.protect({begin, entity_end(ctx, i), {}, kind, enforce}));
    }
    found_.push_back(std::move(f));
}

Signatures Signatures::analyse(MessageContext &ctx, SignedMode mode)
{
    Signatures out;
    out.mode_ = mode;
    if (!ctx.message()) return out;
    const auto &nodes = ctx.nodes();
    std::vector<std::size_t> crypto; // entities kept whole: nothing inside is looked at again
    auto inside_crypto = [&](std::size_t idx) {
        for (int p = static_cast<int>(idx); p >= 0; p = nodes[static_cast<std::size_t>(p)].parent)
            if (std::find(crypto.begin(), crypto.end(), static_cast<std::size_t>(p)) != crypto.end()) return true;
        return false;
    };
    out.message_signatures(ctx, ctx.message(), "", -1);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (inside_crypto(i)) continue;
        if (n.kind == Node::Kind::MessagePart) {
            GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(n.object));
            if (inner) out.message_signatures(ctx, inner, n.section, static_cast<int>(i));
            continue;
        }
        bool inline_pgp = false;
        const std::string kind = crypto_kind(ctx, n, inline_pgp);
        if (kind.empty()) continue;
        crypto.push_back(i);
        out.crypto_entity(ctx, i, kind, inline_pgp);
    }
    return out;
}

void Signatures::report(MessageContext &ctx) const
{
    std::vector<SignatureEntry> list;
    for (const Found &f : found_) {
        bool broken_now = false;
        for (std::size_t p : f.protections) broken_now = broken_now || ctx.touched(p);
        SignatureEntry e;
        e.kind = f.kind;
        e.part = f.part;
        e.state = broken_now ? State::Broken : f.state;
        e.kept = mode_ == SignedMode::Keep && !f.protections.empty();
        e.domain = f.domain;
        e.selector = f.selector;
        e.detail = broken_now ? "broken by this run's edits (--signed=rewrite)" : f.detail;
        list.push_back(std::move(e));
    }
    ctx.report().set_signatures(std::move(list));
}

} // namespace mimeuri
