// The reference a canonical base64 copy is checked against (tests/test_base64_copy.cc,
// fuzz/fuzz_base64_copy.cc): GMime's decoder over the whole text, as
// MessageContext::decoded_content runs it, and GLib's encoder in one line, as the data: URL
// was written before copies.
#pragma once

#include <glib.h>
#include <gmime/gmime.h>

#include <string>
#include <string_view>

namespace base64_oracle {

inline std::string gmime_decode(std::string_view text)
{
    GMimeEncoding st;
    g_mime_encoding_init_decode(&st, GMIME_CONTENT_ENCODING_BASE64);
    std::string out(g_mime_encoding_outlen(&st, text.size()) + 16, '\0');
    out.resize(g_mime_encoding_flush(&st, text.data(), text.size(), out.data()));
    return out;
}

inline std::string glib_encode(std::string_view bytes)
{
    gchar *b = g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size());
    std::string r = b;
    g_free(b);
    return r;
}

// What the data: URL held before: GLib's base64 of GMime's decoding, in one line.
inline std::string reencoded(std::string_view text) { return glib_encode(gmime_decode(text)); }

} // namespace base64_oracle
