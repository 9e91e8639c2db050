// Base64 text copied where it need not be decoded (issue 44): a part that is base64 in the
// input and goes out as base64 (a data: URL's payload, a new part's 76-column lines) is the
// same text when the input is canonical, so it is copied, checked on the way, not decoded
// and encoded again. Canonical (RFC 4648 3.5, and what a decoder then an encoder give back):
// only the alphabet (A-Z a-z 0-9 + /) and line breaks (CR, LF: any number, anywhere);
// '=' padding only to end the last quantum ("xx==" or "xxx="), nothing but line breaks after
// it; a whole number of quanta; the last quantum's unused bits zero. Anything else (white
// space, '-' or '_', a stray '=', a short last quantum) is not canonical: the caller decodes
// and encodes as before. Checked against GMime's decoder and GLib's encoder by
// tests/test_base64_copy.cc and fuzz/fuzz_base64_copy.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mimeuri::base64 {

// Base64 text read in pieces (cut anywhere): the octets that are not line breaks passed on,
// and whether the whole is canonical.
class Unbroken {
public:
    // Appends in's text but its line breaks to out (when out is not null); false, from the
    // first octet that makes the text not canonical on (out then holds part of it).
    bool feed(std::string_view in, std::string *out);
    // Whether the text fed, ended here, is canonical.
    bool canonical() const { return !bad_ && chars_ % 4 == 0; }
    // The size of what it decodes to (when canonical).
    std::size_t decoded_size() const { return chars_ / 4 * 3 - pad_; }
    // Octets of text so far (alphabet and padding, no line breaks).
    std::size_t chars() const { return chars_; }

private:
    bool octet(unsigned char c); // one octet that is not alphabet (slow path)
    std::size_t chars_{0};
    std::size_t pad_{0};
    unsigned last_{0}; // the last alphabet octet's value
    bool bad_{false};
};

// Whether text (line breaks allowed, as above) is canonical; its decoded size in *size.
bool canonical(std::string_view text, std::size_t *size = nullptr);

// The base64 of in[0, size), padded, written at out (which has room for (size + 2) / 3 * 4
// octets); returns how many were written. Two octets of text a table lookup (12 bits); the
// same text as GLib's g_base64_encode (tests/test_transfer.cc, fuzz/fuzz_base64_copy.cc).
std::size_t encode(const unsigned char *in, std::size_t size, char *out);

// Canonical text without line breaks (a data: URL's payload) in lines of 76 characters,
// each ending in LF: what transfer::base64_lines gives for the bytes it decodes to.
void append_lines(std::string_view unbroken, std::string &out);

} // namespace mimeuri::base64
