// The offload pass's restoring half (--offload-restore, offload.hh): each part the pass made
// is put back as it was read, its content made of the stored file, which is checked
// against its name first. A part whose file is missing or does not match stays as it is,
// reported as an error (--offload-restore implies --strict: the exit status says so).
#include "offload.hh"

#include "cturi.hh"
#include "offload_report.hh"
#include "offload_store.hh"
#include "streamed_body.hh"

#include <gmime/gmime.h>

namespace mimeuri {

namespace {

// One part the offload pass made: its x-mimeuri-offload parameter read.
struct Made {
    std::int64_t start{0}, end{0}; // the multipart/alternative, from its first header to its close delimiter
    std::string header;            // the phantom header: the original part's header block
    std::string name;
    offload::Form form;
};

const char *param_of(GMimeObject *o, const char *name)
{
    GMimeContentType *ct = g_mime_object_get_content_type(o);
    return ct ? g_mime_content_type_get_parameter(ct, name) : nullptr;
}

// The part the offload pass made at node i, when it is one and is as the pass wrote it.
std::optional<Made> made_at(const MessageContext &ctx, std::size_t i, const std::string &eol)
{
    const Node &m = ctx.nodes()[i];
    if (m.kind != Node::Kind::Multipart || m.top_level()) return std::nullopt;
    const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(m.object));
    if (!b || std::string_view(b).substr(0, offload::kBoundaryPrefix.size()) != offload::kBoundaryPrefix) return std::nullopt;
    // Its second child, the external body (the note before it is a leaf).
    if (i + 2 >= ctx.nodes().size() || ctx.nodes()[i + 2].parent != static_cast<int>(i)) return std::nullopt;
    const Node &ext = ctx.nodes()[i + 2];
    if (ext.kind != Node::Kind::Leaf || !GMIME_IS_PART(ext.object)) return std::nullopt;
    const char *marker = param_of(ext.object, "x-mimeuri-offload");
    if (!marker) return std::nullopt;
    std::string_view v(marker);
    if (v.substr(0, 2) != "1 " || v.size() < 2 + 64 + 1) return std::nullopt;
    Made made;
    made.name = std::string(v.substr(2, 64));
    auto form = offload::Form::parse(v.substr(2 + 64 + 1));
    if (!offload::is_name(made.name) || !form) return std::nullopt;
    made.form = *form;
    auto start = ctx.part_start(m);
    auto span = ctx.content_span(ext);
    if (!start || !span) return std::nullopt;
    const std::string tail = eol + "--" + b + "--";
    auto after = ctx.source().slice(span->second, span->second + static_cast<std::int64_t>(tail.size()));
    auto header = ctx.source().slice(span->first, span->second);
    if (!after || *after != tail || !header || header->size() < eol.size() ||
        header->compare(header->size() - eol.size(), eol.size(), eol) != 0)
        return std::nullopt;
    made.start = *start;
    made.end = span->second + static_cast<std::int64_t>(tail.size());
    made.header = std::move(*header);
    return made;
}

void report_restore(MessageContext &ctx, const Node &n, OffloadEntry::Action action, const std::string &name,
                    const std::string &reason = {})
{
    ctx.report().section<OffloadReport>().entries.push_back({n.section, action, name, {}, {}, reason, {}});
}

} // namespace

Status OffloadPass::restore(MessageContext &ctx)
{
    const std::string eol = ctx.eol() == Eol::CRLF ? "\r\n" : "\n";
    std::optional<offload::Store> store;
    for (std::size_t i = 0; i < ctx.nodes().size(); ++i) {
        auto made = made_at(ctx, i, eol);
        if (!made) continue;
        const Node &n = ctx.nodes()[i];
        if (offload::edited(ctx, made->start, made->end)) {
            report_restore(ctx, n, OffloadEntry::Action::Left, made->name, "edited");
            continue;
        }
        if (!store) {
            auto s = offload::Store::open(opts_.dir, opts_.key, false);
            if (!s) return Error{Code::TempFail, s.error().message};
            store = std::move(*s);
        }
        // Checked whole before the output is written; its bytes are copied into the output
        // only as it is written (never held), checked again as they are copied.
        auto file = store->checked(made->name);
        if (!file) {
            const Code c = file.error().code;
            const std::string why = c == Code::NoInput ? "missing" : c == Code::DataErr ? "mismatch" : "unreadable";
            report_restore(ctx, n, OffloadEntry::Action::Left, made->name, why);
            ctx.report().add_error(n.section, ErrorCode::Invalid, "offloaded part not restored: " + file.error().message);
            continue;
        }
        StreamedBody body;
        body.text = made->header + eol;
        body.crlf = ctx.eol() == Eol::CRLF;
        body.file = {file->path, file->size, file->sha256, made->form.base64 ? made->form.line : 0, made->form.trail};
        if (Status r = ctx.replace_span(made->start, made->end, std::move(body)); !r) {
            if (r.error().code == Code::Software) return r;
            report_restore(ctx, n, OffloadEntry::Action::Left, made->name, r.error().message);
            continue;
        }
        report_restore(ctx, n, OffloadEntry::Action::Restored, made->name);
    }
    return ok();
}

InertHint OffloadPass::inert_hint() const
{
    if (opts_.restore) return {{"message/external-body"}, 0, {}};
    return {};
}

} // namespace mimeuri
