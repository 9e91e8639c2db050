// The offload pass (issue 51; RFC 2017, RFC 2046 5.2.3): each large attachment is stored in
// a folder under a keyed hash of its bytes (offload_store.hh) and replaced by a
// multipart/alternative of a text/plain note (the file's name, size, link and expiry, for
// readers that do not follow external bodies) and a message/external-body;
// access-type=URL part whose phantom header is the original part's header, byte for byte.
// --offload-restore puts the part back, byte for byte: what the store holds and the
// x-mimeuri-offload parameter (below) are all it takes.
//
// The part replaced, from its first header to the end of its content, becomes (LF shown;
// the message's line ends are used):
//
//   Content-Type: multipart/alternative;
//   	boundary="=_mimeuri-offload-NAME24"
//
//   --=_mimeuri-offload-NAME24
//   Content-Type: text/plain; charset=utf-8          (the note)
//   ...
//   --=_mimeuri-offload-NAME24
//   Content-Type: message/external-body; access-type=URL;
//   	URL="..."; size=N; expiration="..."; x-mimeuri-offload="1 NAME FORM"
//
//   <the original header block, as read>
//
//   --=_mimeuri-offload-NAME24--
//
// FORM says how the original content is made of the stored bytes: "raw" (the bytes as they
// were: 7bit, 8bit, binary), or "base64 L T" (canonical base64 in lines of L characters,
// the message's line ends, T line ends after the last line). A part in any other form
// (quoted-printable, uuencode, base64 a decoder and encoder would not give back) is not
// offloaded: it could not be given back exactly.
#pragma once

#include "base64.hh"
#include "pass_options.hh"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

struct OffloadOptions {
    std::size_t min{0};       // --offload-min: 0 is off
    std::string dir;          // --offload-dir
    std::string url;          // --offload-url: {name}, {filename}
    std::string key;          // --offload-key; empty: the store's own
    std::int64_t expire{0};   // --offload-expire, seconds; 0: no expiration=
    bool restore{false};      // --offload-restore
};

class OffloadPass final : public Pass {
public:
    explicit OffloadPass(OffloadOptions opts) : opts_(std::move(opts)) {}
    std::string_view name() const override { return "offload"; }
    Status apply(MessageContext &ctx) override;
    // Restoring edits only our external bodies.
    InertHint inert_hint() const override;

private:
    Status offload(MessageContext &ctx); // offload.cc
    Status restore(MessageContext &ctx); // offload_restore.cc
    OffloadOptions opts_;
};

namespace offload {

constexpr std::string_view kBoundaryPrefix = "=_mimeuri-offload-";

// {filename}: the file name made safe in a URL path: letters, digits, '.', '-', '_' kept,
// anything else '_', no leading dot, at most 100 octets; "file" when nothing is left.
std::string path_safe(std::string_view filename);
// The URL of a stored file: the template with {name} and {filename} filled in.
std::string fill_url(std::string_view tmpl, std::string_view name, std::string_view filename);
// --offload-expire: N, Ns, Nm, Nh, Nd or Nw; nullopt when it is none of these.
std::optional<std::int64_t> parse_duration(std::string_view text);
// An RFC 5322 date-time (UTC), as RFC 2046 5.2.3's expiration parameter wants it.
std::string rfc5322_date(std::int64_t unix_seconds);

// Whether an edit a pass before this one made touches [begin, end]: such a part is left.
bool edited(const MessageContext &ctx, std::int64_t begin, std::int64_t end);

// How a part's content is made of its stored bytes (the FORM above).
struct Form {
    bool base64{false};
    std::size_t line{0};  // base64: characters in every line but the last
    std::size_t trail{0}; // base64: line ends after the last line
    std::string text() const;
    static std::optional<Form> parse(std::string_view text);
};

// Checks, a piece at a time, that base64 text is what Form{base64, L, T} makes of the bytes
// it decodes to, with line ends eol ("\n" or "\r\n").
class FormCheck {
public:
    explicit FormCheck(std::string_view eol) : eol_(eol) {}
    void feed(std::string_view piece);
    // The form, when the text had one.
    std::optional<Form> end() const;

private:
    std::string eol_;
    std::size_t eol_seen_{0}; // octets of a line end matched so far
    std::size_t col_{0};      // characters in the current line
    std::size_t line_{0};     // the first line's length
    std::size_t lines_{0};    // lines ended
    std::size_t trail_{0};    // line ends after a short (last) line, or empty lines
    bool short_{false};       // a line shorter than the first was ended
    bool bad_{false};
    base64::Unbroken b64_;
    void octet(char c);
};

} // namespace offload

// `mimeuri offload-verify DIR INPUT...` (offload_verify.cc); argv[0] is "offload-verify".
int run_offload_verify_command(int argc, char **argv);

// What the pass registry knows of the offload pass (offload_options.cc).
PassRow offload_row();

} // namespace mimeuri
