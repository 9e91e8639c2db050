// A new multipart/related (RFC 2387) around an HTML part: what the data: pass (data.cc: a lone
// HTML entity retyped into one, its images after it) and the related pass (related.cc: one
// spliced around the HTML part or its alternative, the parts it names moved in) both make.
// Its boundary is chosen here, and its Content-Type value and delimiter lines written here;
// each pass places them where its structure needs them.
#pragma once

#include "message.hh"

#include <initializer_list>
#include <string>
#include <string_view>

namespace mimeuri {

// SHA-256 in lower-case hex, as GLib's g_compute_checksum_for_data writes it, of the pieces
// one after the other: on the CPU's SHA instructions where it has them (sha256.hh), else GLib's.
std::string hex_sha256(std::initializer_list<std::string_view> pieces);

struct NewRelated {
    std::string boundary;

    // Chooses the boundary of a new multipart/related around `html`: prefix and the first 24
    // hex digits of the SHA-256 of `seed` (the same bytes, the same boundary on every run),
    // then "_1", "_2", ... until no text of `bodies` (what goes inside) holds "--" and it, and
    // neither it nor the boundary of a multipart around `html` is a prefix of the other
    // (RFC 2046 5.1.1: a delimiter must not occur within the encapsulated parts).
    static NewRelated around(const MessageContext &ctx, const Node &html, std::string_view prefix,
                             std::initializer_list<std::string_view> seed, std::initializer_list<std::string_view> bodies);

    // The Content-Type field's value, from its leading space, without a line end.
    std::string content_type(std::string_view root_type) const
    {
        return " multipart/related; boundary=\"" + boundary + "\"; type=\"" + std::string(root_type) + "\"";
    }
    // A part's delimiter line, and the close delimiter (without its line end).
    std::string delimiter() const { return "--" + boundary + "\n"; }
    std::string close() const { return "--" + boundary + "--"; }
};

} // namespace mimeuri
