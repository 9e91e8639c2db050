#include "labels.hh"

#include "cturi.hh"
#include "text.hh"

namespace mimeuri {

namespace {

constexpr std::size_t max_line = 998; // RFC 5322 2.1.1

std::string unfolded(std::string_view raw)
{
    std::string out;
    for (char c : raw)
        if (c != '\r' && c != '\n') out += c;
    return out;
}


// RFC 2045 5.2 and RFC 2046 5.1.5: the Content-Type of a part that has none.
std::string default_content_type(const MessageContext &ctx, const Node &n)
{
    if (n.parent >= 0) {
        const Node &p = ctx.nodes()[static_cast<std::size_t>(n.parent)];
        if (p.kind == Node::Kind::Multipart) {
            GMimeContentType *pt = g_mime_object_get_content_type(p.object);
            if (pt && g_mime_content_type_is_type(pt, "multipart", "digest")) return "message/rfc822";
        }
    }
    return "text/plain; charset=us-ascii";
}

} // namespace

Result<std::string> make_label(std::string_view content_type, LabelOptions::Format format)
{
    auto ct = cturi::parse_content_type(content_type);
    if (!ct) return ct.error();
    // A part whose type is itself in the uri. tree is labelled with the URI it stands for.
    bool uri_tree = ct->subtype.size() > 4 && cturi::iequals(std::string_view(ct->subtype).substr(0, 4), "uri.");
    if (format == LabelOptions::Format::Urc && !uri_tree) return cturi::to_urc(*ct);
    return cturi::ct2uri(*ct);
}

Result<std::string> fold_label(std::string_view header, std::string_view label)
{
    // Pieces end after each "&"; a line holds as many pieces as fit.
    std::string out = " ";
    std::size_t line_len = header.size() + 2; // "Name: "
    std::size_t pos = 0;
    bool first_piece = true;
    while (pos < label.size()) {
        auto amp = label.find('&', pos);
        std::size_t end = amp == std::string_view::npos ? label.size() : amp + 1;
        std::string_view piece = label.substr(pos, end - pos);
        if (!first_piece && line_len + piece.size() > max_line) {
            out += "\n\t";
            line_len = 1;
        }
        if (line_len + piece.size() > max_line)
            return Error{Code::DataErr, "label has a piece of " + std::to_string(piece.size()) +
                                            " octets between '&' separators; longer than a header line may be"};
        out += piece;
        line_len += piece.size();
        first_piece = false;
        pos = end;
    }
    return out + "\n";
}

Status LabelsPass::apply(MessageContext &ctx)
{
    if (opts_.mode == LabelOptions::Mode::Off) return ok();
    for (const Node &n : ctx.nodes()) {
        if (opts_.mode == LabelOptions::Mode::Top && !n.top_level()) break;
        if (auto t = ctx.check_time(); !t) return t;
        GMimeHeaderList *hl = MessageContext::headers_of(n);
        GMimeHeader *ct_header = g_mime_header_list_get_header(hl, "Content-Type");
        std::string value = ct_header ? unfolded(ctx.header_value(ct_header)) : default_content_type(ctx, n);
        auto label = make_label(value, opts_.format);
        if (!label) {
            ctx.report().add_error(n.section, ErrorCode::Label, "Content-Type not mappable: " + label.error().message);
            continue;
        }
        ctx.report().labels.push_back({n.section, *label, std::nullopt});
        const std::size_t entry = ctx.report().labels.size() - 1;

        auto folded = fold_label(opts_.header, *label);
        if (!folded) {
            ctx.report().add_error(n.section, ErrorCode::Label, folded.error().message + "; not written");
            continue;
        }
        if (auto why = ctx.kept(n, opts_.header)) { // signed content: reported, not written
            ctx.report().labels[entry].kept = *why;
            continue;
        }
        // Idempotent, and ours alone: an equal label is left as it is, another replaced, and
        // any copy a sender planted beside it removed.
        Status s = ctx.set_sole_header(n, opts_.header, *folded);
        if (!s) {
            if (s.error().code == Code::Software) return s; // a bug: let --on-error decide
            ctx.report().add_error(n.section, ErrorCode::Label, s.error().message);
        }
    }
    return ok();
}

} // namespace mimeuri
