// The data: pass (--data): finds every data: URI of an HTML or CSS part and reports it
// (check), or turns each data: image into a cid: reference to a new inline part of a
// multipart/related (attach), so that readers that show no data: image (Gmail's web client,
// Outlook for Windows) show it, and a data: image no longer counts towards Gmail's clipping.
//
// Structure (RFC 2387): a lone text/html entity (the message's, or one in a
// multipart/alternative or a multipart/mixed) becomes a multipart/related whose first part is
// the HTML, its own Content-Type and Content-Transfer-Encoding moved in; an HTML part already
// in a multipart/related gets its new parts there, before the closing delimiter. Every other
// byte stays as it was (edits are splices, docs/design.md).
#pragma once

#include "pass_options.hh"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

struct DataOptions {
    enum class Mode { Off, Check, Attach } mode{Mode::Check};
    std::size_t max{10u << 20}; // --data-max: the largest image (decoded bytes) attached
    std::string domain;         // --data-domain: the Content-IDs' right side; empty: the From address's domain
};

class DataPass final : public Pass {
public:
    explicit DataPass(DataOptions opts) : opts_(std::move(opts)) {}
    std::string_view name() const override { return "data"; }
    Status apply(MessageContext &ctx) override;
    // HTML and CSS parts. --data=check edits nothing (and what it reports needs a report,
    // which no inert copy is made with); --data=attach edits only a part whose bytes may
    // spell "data:" (data_may_hold_uri).
    InertHint inert_hint() const override;

private:
    DataOptions opts_;
};

namespace data {

// A data: URL (WHATWG Fetch, "data: URL processor"): its media type and its payload decoded
// (percent-decoding, then forgiving-base64 with ";base64").
struct DataUrl {
    std::string type;         // the essence, lower case; "text/plain" when none is given
    bool base64{false};
    std::optional<std::size_t> size; // decoded bytes; none: the payload does not decode
    std::string bytes;        // the payload, when it decodes and is at most the cap
    bool over{false};         // decodes, but to more than the cap: bytes left empty
    // With bytes: the payload's base64 without its white space, when that is canonical
    // (src/util/base64.hh): the bytes' base64 as an encoder writes it, so it is copied (a
    // new part's lines re-wrapped) rather than the bytes encoded again; else empty.
    std::string text;
};

// Whether url starts with "data:" (any case).
bool is_data_url(std::string_view url);
// Parses a data: URL; the payload is kept only up to cap bytes (its size is counted beyond).
DataUrl parse_data_url(std::string_view url, std::size_t cap);
// The image type of bytes by their signature, as browsers sniff an image (WHATWG MIME
// Sniffing 6.1: ICO/CUR, BMP, GIF, WebP, PNG, JPEG); "" when none matches.
std::string sniff_image(std::string_view bytes);
// False only when bytes cannot hold a data: URI for the HTML or CSS tokenizer: no "ta:" in
// any case, no numeric character reference to d, a, t or ':', no "&colon", no backslash
// (a CSS escape) and no "srcdoc" (an <iframe srcdoc> document is decoded once more).
bool may_hold_data_uri(std::string_view bytes);
// A file name extension for an image type ("png"); "bin" when the type names none known.
std::string extension_for(std::string_view type);

} // namespace data

// What the pass registry knows of the data: pass (data_options.cc).
PassRow data_row();

} // namespace mimeuri
