// message: one message parsed and walked (message.hh).
//
// SYNOPSIS  MessageContext::parse(src, seg, ...): the steps open, detect_eol, parseable
//           (src/mime/prescan.cc's limits), copy_inert (src/mime/inert.cc) and construct (GMime), then
//           walk (the entities in document order, as Nodes); raw_header, header_block_end,
//           content_span, decoded_content and decoded_pieces locate a header or a leaf's
//           content in the input. The edits are src/mime/message_edit.cc's.
#include "message.hh"

#include "charsets.hh"
#include "decode.hh"
#include "header_lines.hh"
#include "inert.hh"
#include "streamed_body.hh"
#include "text.hh"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mimeuri {

namespace {

std::string join(const std::string &prefix, const std::string &part)
{
    return prefix.empty() ? part : prefix + "." + part;
}

} // namespace

std::unique_ptr<MessageContext> MessageContext::parse(const Source &src, const Segment &seg, std::size_t index,
                                                      bool in_mbox, const Limits &limits,
                                                      const InertCheck *inert, std::size_t input_no)
{
    std::unique_ptr<MessageContext> ctx(new MessageContext(src, seg));
    ctx->at_ = {src.name(), input_no, index, seg.begin};
    ctx->open(in_mbox, limits);
    ctx->report_.number = ctx->at_.number;
    ctx->report_.source = ctx->at_.source;
    ctx->report_.offset = ctx->at_.offset;
    ctx->detect_eol();
    if (!ctx->parseable()) return ctx;
    // A message no pass can change: its header block alone, read as GMime reads it (the
    // header fields do not depend on the body), for its Message-ID. The bytes are in memory
    // (a window) for messages up to kWindowMax; larger ones are parsed whole.
    if (inert && (ctx->src_->window() || ctx->src_->in_memory()) && ctx->copy_inert(*inert)) return ctx;
    if (!ctx->message_) ctx->message_ = ctx->construct(seg.msg_end);
    if (!ctx->message_) {
        ctx->report_.add_error("", ErrorCode::Unparseable, "no header block: not a message GMime can parse; passed through");
        return ctx;
    }
    if (const char *id = g_mime_message_get_message_id(ctx->message_.get())) ctx->report_.message_id = id;
    if (GMimeObject *body = g_mime_message_get_mime_part(ctx->message_.get()))
        ctx->walk(body, ctx->message_.get(), "", 0, -1);
    return ctx;
}

void MessageContext::open(bool in_mbox, const Limits &limits)
{
    const Source &src = *src_;
    in_mbox_ = in_mbox;
    // One read of the whole message instead of GMime's read and seek per 4 KiB block of a
    // file stream (and the prescan's and probes' own reads). Failing that, the file is read.
    if (!src.in_memory() && seg_.msg_end > seg_.msg_begin && seg_.msg_end - seg_.msg_begin <= kWindowMax)
        if (auto w = Source::window(src, seg_.msg_begin, seg_.msg_end)) {
            window_.emplace(std::move(*w));
            src_ = &*window_;
        }
    // Saved mail may start with lines of white space only before its header block. Python's
    // email parser reads each as a continuation line with no field before it and ignores it
    // (FirstHeaderLineIsContinuationDefect), and mailparser reads the fields after them;
    // GMime would find no header block. The message is read from its first other line: the
    // lines before stay in the output as they came (they lie outside every edit).
    {
        constexpr std::int64_t kMaxLeading = 64 * 1024;
        const std::int64_t head_end = std::min(seg_.msg_end, seg_.msg_begin + kMaxLeading);
        std::string read;
        std::string_view h = src_->view(seg_.msg_begin, head_end);
        if (h.empty() && head_end > seg_.msg_begin)
            if (auto got = src_->slice(seg_.msg_begin, head_end)) {
                read = std::move(*got);
                h = read;
            }
        std::size_t at = 0;
        for (;;) {
            std::size_t i = at;
            while (i < h.size() && (h[i] == ' ' || h[i] == '\t')) ++i;
            if (i == at) break; // not white space first: a field, or the empty line
            if (i < h.size() && h[i] == '\r') ++i;
            if (i >= h.size() || h[i] != '\n') break; // white space, then something
            at = i + 1;
        }
        seg_.msg_begin += static_cast<std::int64_t>(at);
    }
    // An mboxcl2 Content-Length, found when the input was split (it looks past the message).
    if (in_mbox) length_split_ = seg_.length_split;
    limits_ = limits;
    limits_.max_depth = std::min(limits.max_depth, kMaxDepth); // never past GMime's own
    start_clock();
}

// Line-ending convention, from the first line end within the first 64 KiB. Nearly every
// message has one in its first KiB: read more only when it does not.
void MessageContext::detect_eol()
{
    const Source &in = *src_;
    for (std::int64_t probe : {std::int64_t{1024}, std::int64_t{65536}}) {
        const std::int64_t probe_end = std::min(seg_.msg_end, seg_.msg_begin + probe);
        std::string read; // only when the message is not in memory
        std::string_view h = in.view(seg_.msg_begin, probe_end);
        if (h.empty()) {
            auto head = in.slice(seg_.msg_begin, probe_end);
            if (!head) break;
            read = std::move(*head);
            h = read;
        }
        auto nl = h.find('\n');
        if (nl != std::string::npos) {
            eol_ = nl > 0 && h[nl - 1] == '\r' ? Eol::CRLF : Eol::LF;
            break;
        }
        bool whole = seg_.msg_begin + static_cast<std::int64_t>(h.size()) >= seg_.msg_end;
        if (whole || probe == 65536) {
            if (h.find('\r') != std::string::npos) eol_ = Eol::CR;
            break;
        }
    }
}

// Whether the message may go to GMime; if not, the report says why and it passes through.
bool MessageContext::parseable()
{
    if (seg_.msg_end <= seg_.msg_begin) {
        report_.add_error("", ErrorCode::Unparseable, "empty message");
        return false;
    }
    // Old Mac mail: GMime reads the whole message as one header field, so no part, reference
    // or label can be found in it. Said, not silently reported as a message with none.
    if (eol_ == Eol::CR) {
        report_.add_error("", ErrorCode::Unparseable, "CR-only line ends (old Mac mail): its header fields and parts cannot be told apart; nothing in it was read; passed through");
        return false;
    }
    // Limits hold while parsing: a header block larger than --max-header-bytes anywhere in
    // the message, or more delimiter lines than --max-parts allows, is not handed to GMime
    // (which would hold it all in memory): the message is passed through and reported.
    auto over = prescan();
    if (!over || *over) {
        if (over) report_.add_error("", (*over)->code, (*over)->message + "; message left untouched");
        else report_.add_error("", ErrorCode::Unreadable, over.error().message + "; passed through");
        return false;
    }
    return true;
}

GPtr<GMimeMessage> MessageContext::construct(std::int64_t end) const
{
    const Source &in = *src_;
    // The charset converters GMime will open for the header values, kept loaded
    // (charsets.hh): where the bytes are in memory, which is all but the largest messages.
    if (in.window() || in.in_memory()) {
        std::string_view m = in.view(seg_.msg_begin, end);
        keep_charsets_for(m, header_block_size(m));
    }
    auto sub = GPtr<GMimeStream>::adopt(g_mime_stream_substream(in.stream(), seg_.msg_begin, end));
    auto parser = GPtr<GMimeParser>::adopt(g_mime_parser_new_with_stream(sub.get()));
    g_mime_parser_set_persist_stream(parser.get(), TRUE);
    g_mime_parser_set_format(parser.get(), GMIME_FORMAT_MESSAGE);
    return GPtr<GMimeMessage>::adopt(g_mime_parser_construct_message(parser.get(), nullptr));
}

// A message in memory that provably no pass can change: true when its plain header block gave
// its Message-ID (headers_only(), no GMime objects at all); else its header block alone may
// have been parsed (message_), or the whole message is still to be.
bool MessageContext::copy_inert(const InertCheck &inert)
{
    std::string_view m = src_->view(seg_.msg_begin, seg_.msg_end);
    if (!provably_inert(m, inert, limits_)) return false;
    // A plain header block needs no GMime objects at all (most of an inert message's cost
    // was building and freeing them); any other is read by GMime.
    if (auto id = plain_message_id(m, seg_.msg_begin, seg_.head)) { // (as the split read it, if it did)
        report_.message_id = std::move(*id);
        headers_only_ = true;
        return true;
    }
    message_ = construct(seg_.msg_begin + static_cast<std::int64_t>(header_block_size(m)));
    headers_only_ = message_.get() != nullptr; // else parsed whole below, and reported
    return false;
}

// prefix: the section of the message this entity is the body of ("" for the top level).
void MessageContext::walk(GMimeObject *obj, GMimeMessage *msg, const std::string &prefix, int depth, int parent)
{
    std::string section = GMIME_IS_MULTIPART(obj) ? join(prefix, "TEXT") : join(prefix, "1");
    // Children of a multipart are numbered under the multipart's own section: under the
    // message prefix for a message body, under its number for a nested multipart.
    struct Frame {
        GMimeObject *obj;
        std::string section;
        std::string child_prefix;
        int depth;
        int parent;
    };
    std::vector<Frame> stack{{obj, section, prefix, depth, parent}};
    // Depth-first, document order, iterative so that nesting never grows the C stack.
    while (!stack.empty()) {
        Frame f = std::move(stack.back());
        stack.pop_back();
        if (f.depth > limits_.max_depth) {
            report_.add_error(f.section, ErrorCode::DepthLimit,
                              "nesting deeper than " + std::to_string(limits_.max_depth) + " levels; left untouched");
            continue;
        }
        if (nodes_.size() >= limits_.max_parts) {
            report_.add_error(f.section, ErrorCode::PartLimit,
                              "more than " + std::to_string(limits_.max_parts) +
                                  " parts (--max-parts); this part and the rest left untouched");
            break;
        }
        Node n;
        n.object = f.obj;
        n.section = f.section;
        n.depth = f.depth;
        n.parent = f.parent;
        GMimeMessage *owner = msg;
        // Find the message this node belongs to: the nearest MessagePart ancestor's message.
        for (int p = f.parent; p >= 0; p = nodes_[static_cast<std::size_t>(p)].parent) {
            const Node &pn = nodes_[static_cast<std::size_t>(p)];
            if (pn.kind == Node::Kind::MessagePart) {
                owner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(pn.object));
                break;
            }
        }
        n.message = owner;
        int self = static_cast<int>(nodes_.size());
        if (GMIME_IS_MULTIPART(f.obj)) {
            n.kind = Node::Kind::Multipart;
            nodes_.push_back(n);
            GMimeMultipart *mp = GMIME_MULTIPART(f.obj);
            int count = g_mime_multipart_get_count(mp);
            for (int i = count - 1; i >= 0; --i) {
                GMimeObject *child = g_mime_multipart_get_part(mp, i);
                std::string cs = join(f.child_prefix, std::to_string(i + 1));
                stack.push_back({child, cs, cs, f.depth + 1, self});
            }
        } else if (GMIME_IS_MESSAGE_PART(f.obj)) {
            n.kind = Node::Kind::MessagePart;
            nodes_.push_back(n);
            GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(f.obj));
            GMimeObject *body = inner ? g_mime_message_get_mime_part(inner) : nullptr;
            if (body) {
                bool mp = GMIME_IS_MULTIPART(body);
                stack.push_back({body, mp ? join(f.section, "TEXT") : join(f.section, "1"), f.section,
                                 f.depth + 1, self});
            }
        } else {
            n.kind = Node::Kind::Leaf;
            nodes_.push_back(n);
        }
    }
}

GMimeHeaderList *MessageContext::headers_of(const Node &n) { return g_mime_object_get_header_list(n.object); }

Status MessageContext::check_time() const
{
    if (!out_of_time()) return ok();
    return Error::limit("time limit: more than --max-time seconds (" + std::to_string(limits_.max_seconds) +
                                    ") on this message");
}

Result<std::int64_t> MessageContext::header_end(std::int64_t offset) const
{
    // A header ends at the first line end not followed by SP or HTAB (RFC 5322 2.2.3):
    // field_end over the message where it is in memory, else over reads from offset that
    // grow until the field ends inside one, or the message does.
    if (offset >= seg_.msg_end) return seg_.msg_end;
    if (std::string_view m = src_->view(offset, seg_.msg_end); !m.empty())
        return offset + static_cast<std::int64_t>(field_end(m, 0));
    for (std::int64_t want = 4096;; want *= 2) {
        const std::int64_t stop = std::min(seg_.msg_end, offset + want);
        auto read = src_->slice(offset, stop);
        if (!read) return read.error();
        const std::size_t end = field_end(*read, 0);
        if (end < read->size() || stop == seg_.msg_end) return offset + static_cast<std::int64_t>(end);
    }
}

Result<std::string> MessageContext::raw_header(GMimeHeader *h) const
{
    std::int64_t off = g_mime_header_get_offset(h);
    if (off < seg_.msg_begin || off >= seg_.msg_end) return Error{Code::Software, "header has no source offset"};
    auto end = header_end(off);
    if (!end) return end.error();
    auto text = src_->slice(off, *end);
    if (!text) return text.error();
    const char *name = g_mime_header_get_raw_name(h);
    if (!name || text->compare(0, std::strlen(name), name) != 0)
        return Error{Code::Software, "header offset does not point at its name"};
    return text;
}

Result<std::int64_t> MessageContext::header_block_end(const Node &n) const
{
    std::int64_t end = -1;
    auto scan = [&](GMimeHeaderList *list) -> Status {
        if (!list) return ok();
        int count = g_mime_header_list_get_count(list);
        for (int i = 0; i < count; ++i) {
            GMimeHeader *h = g_mime_header_list_get_header_at(list, i);
            std::int64_t off = g_mime_header_get_offset(h);
            if (off < seg_.msg_begin || off >= seg_.msg_end) continue;
            auto e = header_end(off);
            if (!e) return e.error();
            end = std::max(end, *e);
        }
        return ok();
    };
    if (auto s = scan(headers_of(n)); !s) return s.error();
    if (n.top_level())
        if (auto s = scan(g_mime_object_get_header_list(GMIME_OBJECT(message_.get()))); !s) return s.error();
    if (end >= 0) return end;
    if (n.top_level()) return seg_.msg_begin; // a message with an empty header block
    if (n.kind == Node::Kind::Leaf && n.parent >= 0) {
        // A part with no headers: its (empty) header block ends where the empty line before
        // its content starts. That line is its own only after a delimiter line (a part of a
        // multipart) or after the empty line that ends the enclosing part's headers (an
        // embedded message with an empty header block). An embedded message with no empty
        // line at all has no header block to add to: its first line is content.
        auto span = content_span(n);
        if (!span) return span.error();
        const std::int64_t p = span->first, base = std::max(seg_.msg_begin, p - 1024);
        auto before = src_->slice(base, p);
        if (!before) return before.error();
        const std::string &w = *before;
        std::size_t i = w.size();
        if (i > 0 && w[i - 1] == '\n') {
            --i;
            if (i > 0 && w[i - 1] == '\r') --i;
            if (i > 0 && w[i - 1] == '\n') { // the empty line starts a line: look at the one before
                std::size_t prev_end = i - 1;
                if (prev_end > 0 && w[prev_end - 1] == '\r') --prev_end;
                auto nl = w.rfind('\n', i >= 2 ? i - 2 : 0);
                std::size_t prev_begin = (nl == std::string::npos || nl >= i - 1) ? 0 : nl + 1;
                if (prev_begin > 0 || base == seg_.msg_begin) {
                    std::string_view prev(w.data() + prev_begin, prev_end - prev_begin);
                    const Node &parent = nodes_[static_cast<std::size_t>(n.parent)];
                    bool own = parent.kind == Node::Kind::Multipart ? prev.substr(0, 2) == "--" : prev.empty();
                    if (own) return base + static_cast<std::int64_t>(i);
                }
            }
        }
        return Error{Code::DataErr, "part " + n.section + " has no header block of its own; nothing added there"};
    }
    return Error{Code::Software, "cannot locate the header block of part " + n.section};
}

Result<std::pair<std::int64_t, std::int64_t>> MessageContext::content_span(const Node &n) const
{
    if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object))
        return Error{Code::Software, "part " + n.section + " is not a leaf"};
    GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
    GMimeStream *s = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
    if (!s) return Error{Code::Software, "part " + n.section + " has no content stream"};
    std::int64_t begin = s->bound_start;
    std::int64_t end = s->bound_end < 0 ? seg_.msg_end : s->bound_end;
    if (begin < seg_.msg_begin || end > seg_.msg_end || end < begin)
        return Error{Code::Software, "part " + n.section + " has a content window outside its message"};
    if (end == seg_.msg_end) return std::make_pair(begin, end);
    // The content ends at the line break before a delimiter line ("--"). GMime drops two
    // bytes when the delimiter line ends in CRLF, even where the line break before it is a
    // bare LF: then the last content byte is cut off. Find the real line break.
    // One read covers every case: a line break within the next three bytes, and the two
    // dashes after it.
    auto after = src_->slice(end, std::min(seg_.msg_end, end + 5));
    if (!after) return after.error();
    const std::string &a = *after;
    if (a.compare(0, 3, "\n--") == 0 || a.compare(0, 4, "\r\n--") == 0) return std::make_pair(begin, end);
    for (std::size_t i = 0; i < std::min<std::size_t>(a.size(), 3); ++i) {
        if (a[i] != '\n') continue;
        if (a.compare(i + 1, 2, "--") != 0) break;
        std::size_t real = i > 0 && a[i - 1] == '\r' ? i - 1 : i;
        return std::make_pair(begin, end + static_cast<std::int64_t>(real));
    }
    return Error{Code::DataErr, "part " + n.section + ": cannot find where its content ends"};
}

namespace {

bool decodes(GMimeContentEncoding enc)
{
    return enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
}

// Decoding never makes content larger (base64 3/4, QP at most 1:1), but padding and white
// space may: content is read up to twice the cap.
Status within_cap(std::size_t raw_size, GMimeContentEncoding enc, std::size_t cap)
{
    // Saturating: a cap of SIZE_MAX (a sniff of the first bytes, whatever the size) wrapped
    // round to 65,534 bytes here once.
    const std::size_t most = !decodes(enc) ? cap : cap > (SIZE_MAX - 65536) / 2 ? SIZE_MAX : cap * 2 + 65536;
    if (raw_size > most) return Error::limit("part larger than the limit");
    return ok();
}

} // namespace

Result<Content> MessageContext::decoded_content(const Node &n, std::size_t cap) const
{
    if (!GMIME_IS_PART(n.object)) return Error{Code::DataErr, "not a leaf part"};
    if (!g_mime_part_get_content(GMIME_PART(n.object))) return Content(); // no body at all
    auto span = content_span(n);
    if (!span) return span.error();
    auto [begin, end] = *span;
    auto raw_size = static_cast<std::size_t>(end - begin);
    GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(n.object));
    if (enc == GMIME_CONTENT_ENCODING_UUENCODE) {
        // Its "begin" line is GMime's to find: decode through the part's own wrapper.
        GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
        if (raw_size > cap * 2 + 65536) return Error::limit("part larger than the limit");
        auto mem = GPtr<GMimeStream>::adopt(g_mime_stream_mem_new());
        if (g_mime_data_wrapper_write_to_stream(w, mem.get()) < 0) return Error{Code::DataErr, "cannot decode the part"};
        GByteArray *a = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem.get()));
        if (a->len > cap) return Error::limit("part larger than the limit");
        return Content::owned(std::string(reinterpret_cast<const char *>(a->data), a->len));
    }
    const bool encoded = decodes(enc);
    if (Status s = within_cap(raw_size, enc, cap); !s) return s.error();
    // The bytes where they are when the message is held in memory; else read.
    Content raw;
    if (std::string_view v = src_->view(begin, end); v.size() == raw_size) {
        raw = Content::borrowed(v);
    } else {
        auto read = src_->slice(begin, end);
        if (!read) return read.error();
        raw = Content::owned(std::move(*read));
    }
    if (!encoded) return raw;
    GMimeEncoding st;
    g_mime_encoding_init_decode(&st, enc);
    std::string out(g_mime_encoding_outlen(&st, raw.size()) + 16, '\0');
    std::size_t len = decode::flush(&st, raw.data(), raw.size(), out.data());
    out.resize(len);
    if (out.size() > cap) return Error::limit("part larger than the limit");
    return Content::owned(std::move(out));
}

Status MessageContext::decoded_pieces(const Node &n, std::size_t cap, const std::function<bool(std::string_view)> &sink,
                                      std::size_t block) const
{
    if (!GMIME_IS_PART(n.object)) return Error{Code::DataErr, "not a leaf part"};
    if (!g_mime_part_get_content(GMIME_PART(n.object))) return ok(); // no body at all
    GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(n.object));
    if (enc == GMIME_CONTENT_ENCODING_UUENCODE) {
        auto whole = decoded_content(n, cap);
        if (!whole) return whole.error();
        if (whole->size() > 0) sink(whole->view());
        return ok();
    }
    auto span = content_span(n);
    if (!span) return span.error();
    auto [begin, end] = *span;
    if (Status s = within_cap(static_cast<std::size_t>(end - begin), enc, cap); !s) return s;
    std::size_t total = 0;
    return decode_span(reader_of(*src_), begin, end, enc, block, [&](std::string_view piece) -> Result<bool> {
        total += piece.size();
        if (total > cap) return Error::limit("part larger than the limit");
        return sink(piece);
    });
}

} // namespace mimeuri
