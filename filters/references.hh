// The reference pass: resolves cid:, mid: and Content-Location references in HTML parts
// (RFC 2392, RFC 2387, RFC 2557) and checks, repairs, inlines or extracts them.
//
// In steps, each in a file of its own: the message's index (ref_index.hh), the resolver
// (ref_resolver.hh), one HTML part's rewrite (ref_part.hh, re-encoding in
// src/mime/transfer.hh); with --cid=extract, the pages it is given (ref_pages.hh: planned
// and written above the passes, in src/archive/). This file runs them over a message and
// does what is left for the whole message: Content-IDs to add, inlined parts to drop,
// unreferenced parts, the Mimeuri-Refs summary.
#pragma once

#include "pass_options.hh"
#include "ref_external.hh"
#include "ref_index.hh"
#include "ref_pages.hh"

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
    // --cid=extract's pages, made above the passes: the entry point gives them
    // (src/app/registry.cc, src/archive/pages.cc: src/archive/extract.hh's).
    refs::MakePages pages{nullptr};
    bool summary_header{false};
    std::size_t html_max{32u << 20}; // decoded HTML bytes parsed per part
    std::size_t max_refs{1000000};   // references looked at per part
    // A part of over piece_min decoded bytes in an ASCII-compatible charset is scanned as it is
    // decoded, piece_block bytes at a time, and read whole only if one tag, comment or <style>
    // text in it is over piece_carry (ref_part.cc). No option sets them: the fuzzers make them
    // small (fuzz/fuzz_filter.cc), so that their small inputs take that path.
    std::size_t piece_min{std::size_t{1} << 20};
    std::size_t piece_carry{std::size_t{1} << 20};
    std::size_t piece_block{std::size_t{256} << 10};
    std::vector<std::string> mid_indexes; // --mid-index: made by `mimeuri index`, consulted in order
    std::string notmuch;                  // --notmuch: a notmuch database, consulted after them
};

// The pass, and its index across messages: mid: resolves against the run's other messages,
// and --cid=extract's pages (refs::Pages) are numbered by where the messages are in the run.
class ReferencesPass final : public Pass, private CrossMessageIndex {
public:
    explicit ReferencesPass(RefOptions opts);
    std::string_view name() const override { return "references"; }
    Status apply(MessageContext &ctx) override;
    InertHint inert_hint() const override;
    CrossMessageIndex *cross_message() override
    {
        return opts_.mid != RefOptions::Mid::Off || extracting() ? this : nullptr;
    }

private:
    // --mid=check changes nothing but what is reported of a mid: reference (PartRewriter::
    // decide): only --mid=repair (--mid-url), --cid=extract's page links and
    // --summary-header's field follow from the index.
    bool edits_from_index() const override
    {
        return opts_.mid == RefOptions::Mid::Repair || !opts_.mid_url.empty() || extracting() || opts_.summary_header;
    }
    void add(const MessageContext &ctx) override;
    std::string save() const override;
    void merge(const std::string &bytes) override;
    bool now_known(const std::string &key) const override;

    bool extracting() const { return opts_.cid == RefOptions::Cid::Extract && !opts_.extract_dir.empty(); }
    RefOptions opts_;
    std::unique_ptr<refs::Pages> pages_; // --cid=extract: where the run's pages go
    refs::RunIndex run_index_; // the run's messages, as mid: sees them
    refs::ExternalIndexes externals_; // then these (--mid-index)
};

// "cid:" + the Content-ID %-encoded as RFC 2392 wants (an existing "%" becomes "%25").
std::string canonical_cid_url(const std::string &content_id);

// What the pass registry knows of the references pass (references_options.cc).
PassRow references_row();

} // namespace mimeuri
