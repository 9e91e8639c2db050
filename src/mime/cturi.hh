// Mapping between MIME Content-Types and URIs (draft-eastlake-cturi-03), both directions,
// with the closure rules, plus URC data representation tags (Jarnefors 1993, rule 8).
// Pure C++: no GMime or GLib types in the interface. See docs/cturi.md for the decisions
// taken where the draft is ambiguous.
#pragma once

#include "content_type.hh"
#include "result.hh"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::cturi {


// RFC 2045 section 4 troublesome characters: 0-32, 127 and ()<>@,;:\/[]?%#"=.
bool troublesome(unsigned char c);
// One level of URL encoding of the troublesome characters and of 8-bit octets (which no
// URI may carry raw); upper-case hex. in_query also encodes "&", the query separator.
std::string encode(std::string_view s, bool in_query = false);

// A Content-Type value (parse_mime_content_type, content_type.hh), or a URC representation
// tag ("/text/plain/charset:x").
Result<ContentType> parse_content_type(std::string_view text);

// Section 2: Content-Type to URI.
Result<std::string> ct2uri(const ContentType &ct);
Result<std::string> ct2uri(std::string_view content_type);
// Section 3: URI to Content-Type. Accepts <...>, white space anywhere (removed), and a
// URC representation tag. A relative URI is an error (1.2 (2)).
Result<ContentType> uri2ct(std::string_view uri);
Result<std::string> uri2ct_string(std::string_view uri);

// URC representation tag: "/" type "/" subtype *("/" attribute ":" value), with the
// troublesome characters (which include "/" and ":") %-encoded.
std::string to_urc(const ContentType &ct);

// The closure relations (docs/cturi.md): Content-Types compared with type and subtype
// case-insensitive (the top-level type ignored in the uri. tree, 2.3), parameter names
// case-insensitive, parameter order ignored (RFC 2046 5.1), values exact except the
// URL-encoded fields (URI-body, URI-fragment, and every value of a uri.-tree or
// URI-body Content-Type), compared after one level of decoding.
bool equivalent(const ContentType &a, const ContentType &b);
// URIs compared up to the case of the scheme, the double quotes around query values,
// and the encoding of the MIME-type query value (compared decoded).
bool equivalent_uri(std::string_view a, std::string_view b);

} // namespace mimeuri::cturi
