// One decode and one scan of an HTML part per message (html_share.hh).
#include "html_share.hh"

namespace mimeuri {

HtmlShare &HtmlShare::of(MessageContext &ctx)
{
    std::shared_ptr<void> &slot = ctx.shared();
    if (!slot) slot = std::make_shared<HtmlShare>();
    return *static_cast<HtmlShare *>(slot.get());
}

Result<Content> &HtmlShare::decoded(const MessageContext &ctx, const Node &n, std::size_t cap)
{
    const int node = static_cast<int>(&n - ctx.nodes().data());
    auto it = decoded_.find(node);
    if (it != decoded_.end() && it->second.cap == cap) return it->second.content;
    ++decodes_;
    Decoded d{cap, ctx.decoded_content(n, cap)};
    if (it != decoded_.end()) it->second = std::move(d); // another cap: the later one kept
    else it = decoded_.emplace(node, std::move(d)).first;
    return it->second.content;
}

const std::string *HtmlShare::head(const MessageContext &ctx, const Node &n, std::size_t cap)
{
    constexpr std::size_t kHead = 1024;
    const int node = static_cast<int>(&n - ctx.nodes().data());
    auto it = heads_.find(node);
    if (it == heads_.end()) {
        std::optional<std::string> head;
        if (auto d = decoded_.find(node); d != decoded_.end() && d->second.cap == cap) {
            if (d->second.content) head = std::string(d->second.content->view().substr(0, kHead));
        } else {
            std::string h;
            Status s = ctx.decoded_pieces(n, cap, [&](std::string_view piece) {
                h.append(piece.substr(0, kHead - h.size()));
                return h.size() < kHead;
            }, 4096);
            if (s) head = std::move(h);
        }
        it = heads_.emplace(node, std::move(head)).first;
    }
    return it->second ? &*it->second : nullptr;
}

const html::Scan *HtmlShare::keep_scan(int node, std::size_t html_max, html::Scan scan, std::vector<int> cid_nodes)
{
    if (scan.truncated || scan.stop != html::Stop::None) return nullptr;
    if (!cid_nodes.empty() && cid_nodes.size() != scan.refs.size()) cid_nodes.clear();
    ++kept_;
    return &scans_.insert_or_assign(node, Scanned{html_max, std::move(scan), std::move(cid_nodes)}).first->second.scan;
}

const std::vector<int> &HtmlShare::cid_nodes(int node) const
{
    static const std::vector<int> none;
    auto it = scans_.find(node);
    return it == scans_.end() ? none : it->second.cid_nodes;
}

const html::Scan *HtmlShare::scan(int node, std::size_t html_max, std::size_t max_refs) const
{
    auto it = scans_.find(node);
    if (it == scans_.end() || it->second.html_max != html_max || it->second.scan.refs.size() >= max_refs) return nullptr;
    ++taken_;
    return &it->second.scan;
}

} // namespace mimeuri
