// The reference pass, step 3, inside: PartRewriter, which reads one HTML (or CSS) part,
// decides each reference's action and writes the part back. Declared here for the two files
// that define it: ref_part.cc (find, resolve, decide, report, write) and ref_inline.cc
// (--cid=inline's data: URIs: which targets inline, their bytes held or streamed).
#pragma once

#include "ref_pages.hh"
#include "ref_part.hh"
#include "streamed_body.hh"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mimeuri::refs::detail {

using Kind = RefEntry::Kind;
using Action = RefEntry::Action;

struct Decision {
    Kind kind{Kind::Cid};
    Target target;
    Action action{Action::None};
    std::string new_url;
    std::string reason; // why the mode did not act (RefEntry::reason)
    int blob{-1};       // inlined: new_url is the data: URL's head, this part its payload
};

// --cid=inline's decoded parts, held for the part's content while they come to at most this
// many bytes; beyond, a part is decoded again from the input as the output is written (so
// that memory is bounded by the largest part inlined, not by all of them).
#ifndef MIMEURI_INLINE_HELD_MAX
#define MIMEURI_INLINE_HELD_MAX (std::size_t{1} << 20)
#endif
constexpr std::size_t kInlineHeldMax = MIMEURI_INLINE_HELD_MAX;

class PartRewriter {
public:
    PartRewriter(MessageContext &ctx, const RefOptions &opts, const MessageIndex &ix, const Resolver &resolver, int node,
                 Tally &tally, bool css = false)
        : ctx_(ctx), opts_(opts), ix_(ix), resolver_(resolver), node_(node), hn_(ctx.nodes()[static_cast<std::size_t>(node)]),
          tally_(tally), css_(css)
    {
    }
    Status run();

private:
    std::string charset() const
    {
        const char *cs = g_mime_object_get_content_type_parameter(hn_.object, "charset");
        return cs ? cs : "";
    }
    std::optional<Content> load(bool &rewritable, std::string &described);
    Result<bool> find_in_pieces(std::optional<html::Scan> &out);
    Status find(std::string_view html, std::optional<html::Scan> &out);
    std::optional<Decision> resolve_ref(const html::Ref &ref, const std::string &base);
    void decide_local(std::size_t ri, Decision &d);
    void decide_page_link(std::size_t ri, Decision &d);
    void inline_target(const Node &target, Decision &d);
    void decide(const html::Ref &ref, std::size_t ri, Decision &d);
    std::string canonical(int target);
    void report(const html::Ref &ref, const html::Holder &holder, const Decision &d);
    Status write(std::string_view html, const html::Scan &scan, bool rewritable, const std::string &described);
    void unclaim(std::size_t k, const char *reason);
    bool is_page() const { return extracting() && !css_ && node_ == tally_.page_node; }
    bool extracting() const { return opts_.cid == RefOptions::Cid::Extract && !opts_.extract_dir.empty() && tally_.pages; }
    int blob_for(int node, Content bytes, bool css);
    std::optional<int> large_blob(int node);
    std::optional<StreamedBody> with_payloads(std::string_view html, const html::Scan &scan, html::Rewritten &rewritten);

    MessageContext &ctx_;
    const RefOptions &opts_;
    const MessageIndex &ix_;
    const Resolver &resolver_;
    const int node_;
    const Node &hn_;
    Tally &tally_;
    const bool css_; // a stylesheet part: its text is CSS, not HTML
    // Signed content: references found and reported, not changed. Asked only when a
    // reference would change (the question may start the signature analysis).
    const std::optional<std::string> &html_kept()
    {
        if (!html_kept_) html_kept_ = ctx_.kept(hn_);
        return *html_kept_;
    }
    std::optional<std::optional<std::string>> html_kept_;
    std::vector<html::Replacement> reps_;
    std::vector<std::pair<std::size_t, int>> rep_refs_; // per replacement: its report entry, its target
    std::vector<int> rep_blobs_;                        // per replacement: its data: URL's payload, or -1
    bool converted_{false};                             // load() gave the text converted to UTF-8
    std::vector<int> cid_nodes_;                        // per reference: HtmlShare::keep_scan's cid_nodes
    std::vector<StreamedBody::Blob> blobs_;             // the parts inlined
    std::map<int, int> blob_of_;                        // target node -> index in blobs_
    std::size_t held_{0};                               // decoded bytes held in blobs_
    PendingExtract pending_;
};

} // namespace mimeuri::refs::detail
