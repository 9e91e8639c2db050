// Transfer-encoding decoders at memory speed (issue 44), exactly GMime's on every input:
// the same octets out and the same state (GMimeEncoding's state and save) after every step,
// however the text is cut into pieces. Base64 decodes whole quanta of the alphabet four
// octets at a time through tables and leaves to GMime's own step what it must judge (a
// quantum cut by a piece's end or an odd octet, '=' (the stream's end for GMime 3.2.13) and
// the last eight counted octets of a piece (older GMime scans back over them for a trailing
// '=': left to it, they read alike with either); quoted-printable copies the runs between
// '=' whole (memchr, memcpy) and follows GMime's state machine around each '='. Checked
// against GMime's by tests/test_base64_copy.cc and fuzz/fuzz_base64_copy.cc (in CI).
#pragma once

#include <gmime/gmime.h>

#include <cstddef>

namespace mimeuri::decode {

// g_mime_encoding_step for a decoding state: ours for base64 and quoted-printable, GMime's
// for anything else. out has room for g_mime_encoding_outlen(st, len).
std::size_t step(GMimeEncoding *st, const char *in, std::size_t len, char *out);

// g_mime_encoding_flush for a decoding state (which for these decoders is a step).
inline std::size_t flush(GMimeEncoding *st, const char *in, std::size_t len, char *out) { return step(st, in, len, out); }

// The two decoders alone, GMime's step functions' signatures.
std::size_t base64_step(const unsigned char *in, std::size_t len, unsigned char *out, int *state, guint32 *save);
std::size_t quoted_step(const unsigned char *in, std::size_t len, unsigned char *out, int *state, guint32 *save);

} // namespace mimeuri::decode
