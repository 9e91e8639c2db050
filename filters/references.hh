// The reference pass: resolves cid:, mid: and Content-Location references in HTML parts
// (RFC 2392, RFC 2387, RFC 2557) and checks, repairs, inlines or extracts them.
#pragma once

#include "pass.hh"

#include <cstddef>
#include <map>
#include <unordered_map>
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
    bool summary_header{false};
    std::size_t html_max{32u << 20}; // decoded HTML bytes parsed per part
    std::size_t max_refs{1000000};   // references looked at per part
};

class ReferencesPass final : public Pass {
public:
    explicit ReferencesPass(RefOptions opts) : opts_(std::move(opts)) {}
    std::string_view name() const override { return "references"; }
    bool wants_index() const override { return opts_.mid != RefOptions::Mid::Off; }
    bool ordered() const override { return opts_.cid == RefOptions::Cid::Extract; }
    Status index(const MessageContext &ctx) override;
    std::string save_index() const override;
    void merge_index(const std::string &bytes) override;
    Status apply(MessageContext &ctx) override;

    // One message of the run, as mid: sees it.
    struct Indexed {
        std::size_t index{0};                  // the message's number in its input
        std::string section;                   // "" for a top-level message, else its part
        std::map<std::string, std::string> cids; // cleaned Content-ID -> section
        int count{0};                          // how many messages carry this Message-ID
        std::size_t input_no{0};               // run order, so that the first one wins
    };

private:
    RefOptions opts_;
    std::map<std::string, Indexed> run_index_; // by cleaned Message-ID
    // local part + lower-case domain -> the run_index_ key it stands for (RFC 5322 msg-id:
    // the domain compares case-insensitively)
    std::unordered_map<std::string, std::string> ci_index_;
    static std::string ci_key(const std::string &id);
    void add_indexed(const std::string &id, Indexed e);
    std::size_t extracted_messages_{0};
};

// "cid:" + the Content-ID %-encoded as RFC 2392 wants (an existing "%" becomes "%25").
std::string canonical_cid_url(const std::string &content_id);

} // namespace mimeuri
