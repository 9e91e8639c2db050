// NAME: content_type.hh -- the Content-Type field value: read and written (RFC 2045, RFC 2231).
// SYNOPSIS: scan_content_type (the syntax, with where each parameter is),
//   parse_mime_content_type (values decoded, RFC 2231 continuations joined, charsets to
//   UTF-8), format_content_type; and the checks the type-label mapping (cturi.hh) shares.
// Its names are in namespace cturi, the vocabulary of the label mapping built on it.
#pragma once

#include "result.hh"

#include <cstddef>
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
    std::vector<ParamSpan> params;
};

// The RFC 2045 syntax layer of parse_content_type, keeping where each parameter is.
Result<ScannedContentType> scan_content_type(std::string_view text);

// Parses a Content-Type value with RFC 2045/2231 rules: comments, quoted strings,
// quoted-pairs, folding, RFC 2231 continuations and charsets (converted to UTF-8).
// Accepts a leading "Content-Type:".
Result<ContentType> parse_mime_content_type(std::string_view text);
// "type/subtype; name="value"": values quoted with quoted-pairs; a value with 8-bit
// octets is written in RFC 2231 form (name*=utf-8''...). CR, LF and NUL are refused.
Result<std::string> format_content_type(const ContentType &ct);

// One level of URL decoding: %XX (either hex case) becomes the octet; a lone "%" stays.
std::string decode(std::string_view s);

bool iequals(std::string_view a, std::string_view b);

// --- Shared with the label mapping (cturi.cc).
Error fail(const std::string &why); // a DataErr
bool is_ws(char c);
bool istarts(std::string_view s, std::string_view prefix); // case-insensitive
bool tspecial(char c);                                       // RFC 2045 tspecials
bool is_token(std::string_view s);
// A Content-Type parameter name: a token without "*", which RFC 2231 reserves.
bool is_param_name(std::string_view s);
// Section 6: what URL decoding produced must not carry CR, LF or NUL into a header.
Status header_safe(std::string_view what, std::string_view s);
// A MIME type or subtype bound for a header: no white space, controls, "/", ";" or quotes.
Status type_safe(std::string_view what, std::string_view s);
// A parameter named twice is ambiguous: not a Content-Type to map.
Status distinct_names(const ContentType &ct);

} // namespace mimeuri::cturi
