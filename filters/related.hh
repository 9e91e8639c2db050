// The related pass (--related): parts an HTML part references (cid:, and Content-Location
// as the references pass resolves it, RFC 2557) that sit outside the HTML part's
// multipart/related, or whose disposition is attachment or none, so that readers list them
// as attachments instead of showing them in place (mailpit #589, enmime #382, Roundcube #5905).
//
// check reports them. repair moves them (RFC 2387): an HTML part in a related set gets them
// before its closing delimiter; an HTML part in none (or its multipart/alternative) and
// the parts it references become one multipart/related: a multipart/mixed that holds
// nothing else is retyped in place (its Content-Type the only change), else a new
// multipart/related is spliced around the HTML entity and the referenced parts. Each
// referenced part is marked inline (its Content-Disposition edited raw, or added). A moved
// part's bytes are copied as read; only boundaries and the dispositions are new. Never
// across messages, never a part two related sets reference, never under a kept signature.
#pragma once

#include "pass_options.hh"
#include "ref_index.hh"

#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

struct RelatedOptions {
    enum class Mode { Off, Check, Repair } mode{Mode::Check};
};

class RelatedPass final : public Pass {
public:
    explicit RelatedPass(RelatedOptions opts) : opts_(opts) {}
    std::string_view name() const override { return "related"; }
    Status apply(MessageContext &ctx) override;
    // HTML parts; --related=check edits nothing, --related=repair only where a reference may be.
    InertHint inert_hint() const override;

private:
    RelatedOptions opts_;
    refs::RunIndex none_; // the resolver's run index: empty (mid: is not this pass's)
};

namespace related {

// A Content-Disposition raw value (" attachment; filename=x\n") with its disposition type
// made "inline", its parameters and folding kept.
std::string inline_disposition(std::string_view raw_value);
// A multipart Content-Type raw value with its type made multipart/related and a type
// parameter (RFC 2387 3.1) for root_type added; "" when it holds one already.
std::string related_content_type(std::string_view raw_value, std::string_view root_type);
// Bytes in the message's line ends as LF text that insert_lines turns back into exactly
// them; nullopt when it would not (a bare LF in a CRLF message).
std::optional<std::string> to_lf(std::string_view bytes, bool crlf);

} // namespace related

// What the pass registry knows of the related pass (related_options.cc).
PassRow related_row();

} // namespace mimeuri
