// Content-Transfer-Encodings written by passes (RFC 2045 6.7, 6.8), in LF line ends: the
// message's own line ends are restored when the body is spliced in.
#pragma once

#include <string>
#include <string_view>

namespace mimeuri::transfer {

// Base64 in lines of 76 characters, each ending in LF.
std::string base64_lines(std::string_view bytes);

// Quoted-printable of text, written with LF line ends. The message's own line break (CRLF
// when crlf, else LF) is a hard line break; any other CR or LF is encoded (=0D, =0A), so the
// text decodes back byte for byte in a message of that convention. Lines are at most 76
// characters. No encoded line starts with "-", "." or "From " (that octet is =XX-encoded),
// so nothing, whatever it decodes to, can read as a MIME delimiter line or an mbox From_
// line: the structure around the part stays the same.
std::string quoted_printable(std::string_view text, bool crlf);

} // namespace mimeuri::transfer
