// The message/external-body pass (RFC 2046 5.2.3, RFC 2017): reads every external-body
// part, validates it, and writes access-type=URL parameters in the RFC 2017 form.
#pragma once

#include "pass_options.hh"

#include <string>
#include <utility>
#include <vector>

namespace mimeuri {

struct ExternalBodyOptions {
    enum class Mode { Off, Check, Normalize } mode{Mode::Normalize};
    std::vector<std::pair<std::string, std::string>> url_map; // prefix FROM -> TO, first match wins
    // Retrieval schemes (RFC 2017 2: the URL must retrieve something). No mailto, no file.
    std::vector<std::string> schemes{"http", "https", "ftp", "ftps", "sftp", "tftp"};
    bool legacy_to_url{false};
};

class ExternalBodyPass final : public Pass {
public:
    explicit ExternalBodyPass(ExternalBodyOptions opts) : opts_(std::move(opts)) {}
    std::string_view name() const override { return "external-body"; }
    InertHint inert_hint() const override { return {{"message/external-body"}, 0, {}}; }
    Status apply(MessageContext &ctx) override;

private:
    ExternalBodyOptions opts_;
};

namespace rfc2017 {

constexpr std::size_t max_word = 40; // RFC 2017 3.1

// 3.1, extraction: the URL parameter's value without its quotes and all linear white space.
std::string extract(std::string_view value);
// 3.1 (1): %-encodes SPACE, CTLs, '"', '\' and 8-bit octets; nothing else (an existing
// %20 stays %20).
std::string encode(std::string_view url);
// 3.1 (2): substrings of at most 40 characters; a %XX escape is never split.
std::vector<std::string> words(std::string_view encoded);
// The parameter as written into a header (LF line ends): URL="word<LF><TAB>word..."
std::string parameter(std::string_view url);

} // namespace rfc2017

// What the pass registry knows of the external-body pass (external_body_options.cc).
PassRow external_body_row();

} // namespace mimeuri
