// Mapping between MIME Content-Types and URIs (draft-eastlake-cturi-03), both directions,
// with the closure rules, plus URC data representation tags (Jarnefors 1993, rule 8).
// Pure C++: no GMime or GLib types in the interface. See docs/cturi.md for the decisions
// taken where the draft is ambiguous.
#pragma once

#include "result.hh"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::cturi {

struct Param {
    std::string name;
    std::string value; // decoded: quotes, quoted-pairs and RFC 2231 removed
    bool operator==(const Param &) const = default;
};

struct ContentType {
    std::string type;
    std::string subtype;
    std::vector<Param> params; // in input order
};

// RFC 2045 section 4 troublesome characters: 0-32, 127 and ()<>@,;:\/[]?%#"=.
bool troublesome(unsigned char c);
// One level of URL encoding of the troublesome characters and of 8-bit octets (which no
// URI may carry raw); upper-case hex. in_query also encodes "&", the query separator.
std::string encode(std::string_view s, bool in_query = false);
// One level of URL decoding: %XX (either hex case) becomes the octet; a lone "%" stays.
std::string decode(std::string_view s);

// One parameter as written: [begin, end) spans from its ";" to the end of its value, in
// the text given to scan_content_type. name is as written (RFC 2231 "*" suffixes kept);
// value has its quotes and quoted-pairs removed (folding line breaks dropped).
struct ParamSpan {
    std::size_t begin{0};
    std::size_t end{0};
    std::string name;
    std::string value;
    bool quoted{false};
};

struct ScannedContentType {
    std::string type;
    std::string subtype;
    std::size_t type_end{0}; // offset just past the subtype
    std::vector<ParamSpan> params;
};

// The RFC 2045 syntax layer of parse_content_type, keeping where each parameter is.
Result<ScannedContentType> scan_content_type(std::string_view text);

// Parses a Content-Type value with RFC 2045/2231 rules: comments, quoted strings,
// quoted-pairs, folding, RFC 2231 continuations and charsets (converted to UTF-8).
// Accepts a leading "Content-Type:" and a URC representation tag ("/text/plain/charset:x").
Result<ContentType> parse_content_type(std::string_view text);
// "type/subtype; name="value"": values quoted with quoted-pairs; a value with 8-bit
// octets is written in RFC 2231 form (name*=utf-8''...). CR, LF and NUL are refused.
Result<std::string> format_content_type(const ContentType &ct);

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

bool iequals(std::string_view a, std::string_view b);

} // namespace mimeuri::cturi
