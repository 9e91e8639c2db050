// The whole filter: bytes in, every pass in a mode chosen by the first byte, bytes out.
// Invariants: with the passes off the output is the input; every message that parsed still
// parses; no edit touches the body of a leaf that is not text/html; every URL-word written
// is at most 40 characters.
#include "external_body.hh"
#include "labels.hh"
#include "mbox.hh"
#include "message.hh"
#include "references.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mimeuri;

namespace {

std::string splice(const std::string &in, std::vector<Edit> edits)
{
    std::sort(edits.begin(), edits.end(), [](const Edit &a, const Edit &b) { return a.begin < b.begin; });
    std::string out;
    std::size_t pos = 0;
    for (const Edit &e : edits) {
        if (static_cast<std::size_t>(e.begin) < pos) std::abort(); // overlapping edits
        out.append(in, pos, static_cast<std::size_t>(e.begin) - pos);
        out += e.text;
        pos = static_cast<std::size_t>(e.end);
    }
    out.append(in, pos, std::string::npos);
    return out;
}

// The URL-words of an edit that replaces the Content-Type header of an external-body part.
void check_words(const std::string &text)
{
    for (std::size_t at = text.find("URL=\""); at != std::string::npos; at = text.find("URL=\"", at + 1)) {
        std::size_t word = 0;
        for (std::size_t i = at + 5; i < text.size() && text[i] != '"'; ++i) {
            char c = text[i];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') word = 0;
            else if (++word > 40) {
                std::fprintf(stderr, "URL-word over 40 in: %.300s\n", text.c_str());
                std::abort();
            }
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    g_mime_init();
    g_log_set_default_handler([](const gchar *, GLogLevelFlags, const gchar *, gpointer) {}, nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const unsigned mode = data[0];
    std::string input(reinterpret_cast<const char *>(data) + 1, size - 1);
    Source src = Source::from_bytes(input, "fuzz");
    auto mbox = looks_like_mbox(src);
    auto segs = split(src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
    if (!segs) return 0;

    RefOptions ro;
    ro.cid = static_cast<RefOptions::Cid>(1 + mode % 3); // check, repair, inline
    ro.mid = RefOptions::Mid::Repair;
    ro.summary_header = mode & 8;
    ExternalBodyOptions eo;
    eo.legacy_to_url = mode & 16;
    eo.url_map = {{"http:", "https:"}};
    LabelOptions lo;
    lo.mode = (mode & 32) ? LabelOptions::Mode::All : LabelOptions::Mode::Top;
    lo.format = (mode & 64) ? LabelOptions::Format::Urc : LabelOptions::Format::Uri;
    ReferencesPass refs(ro);
    ExternalBodyPass ext(eo);
    LabelsPass labels(lo);
    Limits limits;
    limits.max_seconds = 5;

    std::vector<Edit> all;
    for (std::size_t i = 0; i < segs->size(); ++i) {
        auto ctx = MessageContext::parse(src, (*segs)[i], i + 1, mbox.ok() && *mbox, limits);
        if (!ctx->message()) continue;
        (void)refs.index(*ctx);
        for (Pass *p : std::initializer_list<Pass *>{&refs, &ext, &labels})
            if (!p->apply(*ctx)) break;
        // Where the Content-Type headers of external-body parts start.
        std::vector<std::int64_t> ext_headers;
        for (const Node &n : ctx->nodes()) {
            GMimeContentType *ct = g_mime_object_get_content_type(n.object);
            if (!ct || !g_mime_content_type_is_type(ct, "message", "external-body")) continue;
            if (GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Type"))
                ext_headers.push_back(g_mime_header_get_offset(h));
        }
        for (const Edit &e : ctx->edits()) {
            // No edit inside the body of a leaf that is not HTML.
            for (const Node &n : ctx->nodes()) {
                if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object)) continue;
                GMimeContentType *ct = g_mime_object_get_content_type(n.object);
                if (ct && g_mime_content_type_is_type(ct, "text", "html")) continue;
                GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
                GMimeStream *s = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
                if (!s || s->bound_end < 0) continue;
                if (e.begin < s->bound_end && e.end > s->bound_start && e.begin != e.end) std::abort();
            }
            if (std::find(ext_headers.begin(), ext_headers.end(), e.begin) != ext_headers.end()) check_words(e.text);
            all.push_back(e);
        }
        // Output of this message still parses.
        std::string msg_in = input.substr(static_cast<std::size_t>((*segs)[i].msg_begin),
                                          static_cast<std::size_t>((*segs)[i].msg_end - (*segs)[i].msg_begin));
        std::vector<Edit> local;
        for (const Edit &e : ctx->edits()) local.push_back({e.begin - (*segs)[i].msg_begin, e.end - (*segs)[i].msg_begin, e.text});
        std::string msg_out = splice(msg_in, local);
        GMimeStream *ms = g_mime_stream_mem_new_with_buffer(msg_out.data(), msg_out.size());
        GMimeParser *parser = g_mime_parser_new_with_stream(ms);
        GMimeMessage *m = g_mime_parser_construct_message(parser, nullptr);
        if (!m) std::abort();
        g_object_unref(m);
        g_object_unref(parser);
        g_object_unref(ms);
    }
    // Passes off: the input itself.
    if (splice(input, {}) != input) std::abort();
    (void)splice(input, all);
    return 0;
}
