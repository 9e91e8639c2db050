// The offload pass's restoring half (--offload-restore, offload.hh): each part the pass made
// is put back as it was read, its content made of the stored file, which is checked
// against its name first. A part whose file is missing or does not match stays as it is,
// reported as an error (--offload-restore implies --strict: the exit status says so).
#include "offload.hh"

#include "cturi.hh"
#include "offload_report.hh"
#include "offload_store.hh"

#include <gmime/gmime.h>

#include <algorithm>

namespace mimeuri {

namespace offload {

void FormWriter::put(std::string_view text, std::string &out)
{
    for (std::size_t at = 0; at < text.size();) {
        if (col_ == form_.line) {
            out += eol_;
            col_ = 0;
        }
        const std::size_t n = std::min(text.size() - at, form_.line - col_);
        out.append(text.substr(at, n));
        col_ += n;
        at += n;
    }
}

void FormWriter::feed(std::string_view piece, std::string &out)
{
    if (!form_.base64) {
        out.append(piece);
        return;
    }
    carry_.append(piece);
    const std::size_t whole = carry_.size() / 3 * 3;
    std::string b64(whole / 3 * 4, '\0');
    base64::encode(reinterpret_cast<const unsigned char *>(carry_.data()), whole, b64.data());
    carry_.erase(0, whole);
    put(b64, out);
}

void FormWriter::end(std::string &out)
{
    if (!form_.base64) return;
    std::string b64((carry_.size() + 2) / 3 * 4, '\0');
    b64.resize(base64::encode(reinterpret_cast<const unsigned char *>(carry_.data()), carry_.size(), b64.data()));
    carry_.clear();
    put(b64, out);
    for (std::size_t i = 0; i < form_.trail; ++i) out += eol_;
}

} // namespace offload

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
        // Made whole before it is used: a file that fails half way leaves the part as it is.
        std::string text = made->header + eol;
        offload::FormWriter writer(made->form, eol);
        Status s = store->read_checked(made->name, [&](std::string_view piece) -> Status {
            writer.feed(piece, text);
            return ok();
        });
        if (!s) {
            const std::string why = s.error().code == Code::NoInput ? "missing" : s.error().code == Code::DataErr ? "mismatch" : "unreadable";
            report_restore(ctx, n, OffloadEntry::Action::Left, made->name, why);
            ctx.report().add_error(n.section, ErrorCode::Invalid, "offloaded part not restored: " + s.error().message);
            continue;
        }
        writer.end(text);
        if (Status r = ctx.replace_span(made->start, made->end, std::move(text)); !r) {
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
