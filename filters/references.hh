// The reference pass: resolves cid:, mid: and Content-Location references in HTML parts
// (RFC 2392, RFC 2387, RFC 2557) and checks, repairs, inlines or extracts them.
//
// In steps, each in a file of its own: the message's index (ref_index.hh), the resolver
// (ref_resolver.hh), one HTML part's rewrite (ref_part.hh, re-encoding in
// src/transfer.hh), the extraction plan (ref_extract.hh; the run writes the files,
// src/extract.hh). This file runs them over a message and does what is left for the
// whole message: Content-IDs to add, inlined parts to drop, unreferenced parts, the
// Mimeuri-Refs summary.
#pragma once

#include "pass.hh"
#include "ref_external.hh"
#include "ref_index.hh"

#include <cstddef>
#include <string>
#include <vector>

namespace mimeuri {

struct RefOptions {
    enum class Cid { Off, Check, Repair, Inline, Extract } cid{Cid::Repair};
    enum class Mid { Off, Check, Repair } mid{Mid::Check};
    std::string mid_url;     // template, "{id}" is the %-encoded Message-ID; used in repair mode
    std::vector<std::string> inline_types{"image/*", "font/*", "audio/*", "video/*", "text/css"};
    std::size_t inline_max{1u << 20}; // decoded bytes
    bool drop_inlined{false};
    bool location_to_cid{false}; // repair: also rewrite valid Content-Location references to cid:
    std::string extract_dir;
    bool extract_remote_images{false}; // --extract-remote-images: pages may load remote images
    bool summary_header{false};
    std::size_t html_max{32u << 20}; // decoded HTML bytes parsed per part
    std::size_t max_refs{1000000};   // references looked at per part
    std::vector<std::string> mid_indexes; // --mid-index: made by `mimeuri index`, consulted in order
    std::string notmuch;                  // --notmuch: a notmuch database, consulted after them
};

class ReferencesPass final : public Pass {
public:
    explicit ReferencesPass(RefOptions opts);
    std::string_view name() const override { return "references"; }
    // --cid=extract numbers its pages by where the messages are in the run (refs::PageBook),
    // from the index: wanted then too.
    bool wants_index() const override { return opts_.mid != RefOptions::Mid::Off || extracting(); }
    // --mid=check changes nothing but what is reported of a mid: reference (PartRewriter::
    // decide): only --mid=repair (--mid-url), --cid=extract's page links and
    // --summary-header's field follow from the index.
    bool edits_from_index() const override
    {
        return opts_.mid == RefOptions::Mid::Repair || !opts_.mid_url.empty() || extracting() || opts_.summary_header;
    }
    // --cid=extract: the run numbers the folders as it takes messages, in one process (a
    // worker taking whole files with --in-place --jobs would keep a count of its own).
    bool ordered() const override { return opts_.cid == RefOptions::Cid::Extract; }
    // HTML parts only, unless --summary-header (a field on every message) or --cid=extract
    // (every message gets a page).
    std::vector<std::string> edited_types() const override
    {
        return opts_.summary_header || extracting() ? std::vector<std::string>{} : std::vector<std::string>{"text/html"};
    }
    // What it edits in an HTML part follows from references html::may_hold_reference finds
    // (ref_part.cc, PartRewriter::find), or from Content-Location; beyond --html-max a part
    // is reported instead.
    // With --cid=extract every message gets a page: none is inert.
    std::size_t edits_only_references_up_to() const override { return extracting() ? 0 : opts_.html_max; }
    bool may_hold_reference(std::string_view bytes) const override;
    Status index(const MessageContext &ctx) override;
    std::string save_index() const override;
    void merge_index(const std::string &bytes) override;
    Status apply(MessageContext &ctx) override;
    bool now_known(const std::string &key) const override;

private:
    bool extracting() const { return opts_.cid == RefOptions::Cid::Extract && !opts_.extract_dir.empty(); }
    RefOptions opts_;
    refs::PageBook pages_;     // --cid=extract: where the run's pages go
    refs::RunIndex run_index_; // the run's messages, as mid: sees them
    refs::ExternalIndexes externals_; // then these (--mid-index)
};

// "cid:" + the Content-ID %-encoded as RFC 2392 wants (an existing "%" becomes "%25").
std::string canonical_cid_url(const std::string &content_id);

} // namespace mimeuri
