// One decode and one scan of an HTML part for every pass of a message that reads it (issue
// 53): the references pass keeps the scan it made (whole or in pieces), the data and related
// passes read the part's decoded bytes once between them and take that scan instead of
// making their own, where it is the scan they would make: of the same decoded bytes as they
// are (no charset conversion), complete (no limit stopped it, none truncated it), under the
// same --html-max. Kept on the MessageContext (MessageContext::shared), gone with it.
#pragma once

#include "html_refs.hh"
#include "message.hh"

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

class HtmlShare {
public:
    // The share of this message's passes (made on first use).
    static HtmlShare &of(MessageContext &ctx);

    // A leaf's content decoded as MessageContext::decoded_content gives it, at most cap bytes:
    // read at the first call for that node and cap, then the same result (valid while the
    // context lives).
    Result<Content> &decoded(const MessageContext &ctx, const Node &n, std::size_t cap);

    // The first 1024 bytes (or all, if fewer) of what decoded() gives, read in pieces and not
    // the whole part: what an encoding sniff reads (sniff_html_encoding). Null where the part
    // cannot be read.
    const std::string *head(const MessageContext &ctx, const Node &n, std::size_t cap);

    // Keeps a scan of node's decoded bytes as they are (no charset conversion) made with
    // html_max as --html-max (its memory cap), and returns it; one that is truncated or
    // stopped is not kept (null).
    // cid_nodes, where the references pass resolved the scan's references: per reference, the
    // node of this message its cid: URL resolves to (-1: none, dangling or ambiguous, or in
    // another message), kUnresolved for one not resolved as a cid: URL.
    const html::Scan *keep_scan(int node, std::size_t html_max, html::Scan scan, std::vector<int> cid_nodes = {});
    static constexpr int kUnresolved = -2;
    // Those of the scan kept for node (empty: none).
    const std::vector<int> &cid_nodes(int node) const;
    // The scan kept for node with that html_max, or null; null too where a scan stopped at
    // max_refs references would have been truncated.
    const html::Scan *scan(int node, std::size_t html_max, std::size_t max_refs = html::ParseLimits{}.max_refs) const;

    // How often a part was decoded and a scan kept, and a kept scan taken (the unit tests').
    std::size_t decodes() const { return decodes_; }
    std::size_t kept_scans() const { return kept_; }
    std::size_t taken_scans() const { return taken_; }

private:
    struct Decoded {
        std::size_t cap;
        Result<Content> content;
    };
    struct Scanned {
        std::size_t html_max;
        html::Scan scan;
        std::vector<int> cid_nodes;
    };
    std::map<int, Decoded> decoded_;
    std::map<int, Scanned> scans_;
    std::map<int, std::optional<std::string>> heads_;
    std::size_t decodes_{0}, kept_{0};
    mutable std::size_t taken_{0};
};

} // namespace mimeuri
