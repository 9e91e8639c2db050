// The type-label pass: adds a URI-form label of each part's Content-Type
// (draft-eastlake-cturi) as a header, on the top-level entity or on every part.
#pragma once

#include "pass_options.hh"

#include <string>

namespace mimeuri {

struct LabelOptions {
    enum class Mode { Off, Top, All } mode{Mode::Off};
    enum class Format { Uri, Urc } format{Format::Uri};
    std::string header{"Content-Type-URI"};
};

class LabelsPass final : public Pass {
public:
    explicit LabelsPass(LabelOptions opts) : opts_(std::move(opts)) {}
    std::string_view name() const override { return "labels"; }
    Status apply(MessageContext &ctx) override;

private:
    LabelOptions opts_;
};

// The label text for one Content-Type value (a raw header value, folded or not).
Result<std::string> make_label(std::string_view content_type, LabelOptions::Format format);
// Folds a label into a raw header value (" a&\n\tb\n") at "&" boundaries only, each line
// at most 998 octets with the header name on the first; an error if a piece is longer.
Result<std::string> fold_label(std::string_view header, std::string_view label);

// What the pass registry knows of the type-label pass (labels_options.cc).
PassRow labels_row();

} // namespace mimeuri
