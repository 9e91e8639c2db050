// Charset converters kept loaded for the life of the process.
//
// glibc's iconv_open loads the charset's module (gconv, a shared object) and iconv_close lets
// it go: a module no converter uses is unloaded once two other modules have been released
// (gconv_dl.c, TRIES_BEFORE_UNLOAD). GMime opens and closes a converter for every header value
// it decodes (an RFC 2047 word, an 8-bit value), and the references pass one for each HTML part
// in a charset that is not ASCII-compatible; so over a mailbox of mixed charsets each module was
// loaded and unloaded again and again (45 times over the 5,000-message bench mbox): dlopen,
// mmap, relocation, and a TLB flush at munmap, about 7% of the run's CPU on this machine.
//
// keep_charset holds one converter from the charset to UTF-8 open, never used and never
// closed, so its module stays loaded. At most kMaxKept charsets are kept and kMaxTried names
// looked at, so hostile input naming a thousand charsets costs a bounded number of loads.
// Thread-safe (the milter calls it from its threads).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

constexpr std::size_t kMaxKept = 32;
constexpr std::size_t kMaxTried = 256;

// Keeps a converter from `charset` (a MIME charset name, mapped to its iconv name as GMime maps
// it) to UTF-8 open. Returns whether one is open for it now (false for a name iconv does not
// know, UTF-8 and US-ASCII, which need no module, and once the bounds are reached).
bool keep_charset(std::string_view charset);

// The charsets of the RFC 2047 encoded words in `text` ("=?name?Q?" or "=?name*lang?B?"), in
// order of first appearance, each once; at most kMaxKept of them.
std::vector<std::string> encoded_word_charsets(std::string_view text);

// Before GMime parses the message `m`: the converters its header values will need kept, those
// of its encoded words, and GMime's fallbacks for 8-bit header values when its header block
// holds any (g_mime_utils_decode_8bit: the locale's charset, ISO-8859-1).
void keep_charsets_for(std::string_view m, std::size_t header_block_size);

// Whether text in a charset keeps ASCII's meaning byte for byte, so that markup can be read
// and edited in its bytes. Decided by what the charset is, not how it is spelt: WHATWG
// Encoding's labels for the encodings that are not ASCII-compatible (UTF-16BE/LE,
// ISO-2022-JP, "replacement"), then what iconv does with the name as GMime maps it: each
// printable ASCII byte and the shifts of the stateful encodings (ESC, SO, SI, "+") must
// decode to themselves, one for one (UTF-7, UTF-16/32 and UCS-2/4 under any alias, EBCDIC
// and ISO-2022-* fail). '\' and '~' are left out: Shift_JIS reads them as YEN SIGN and
// OVERLINE in glibc, and is ASCII-compatible to browsers. Unknown: a name neither knows.
enum class AsciiCompat { Yes, No, Unknown };
AsciiCompat ascii_compatibility(std::string_view charset);

// The encoding an HTML part's text is in, as far as it matters for editing it in place:
// WHATWG's sniffing adapted to mail. A byte-order mark decides first; then the MIME label;
// then, where the label is missing or unknown, a <meta> charset in the first 1024 bytes
// (HTML 13.2.3.2, "prescan a byte stream"; a <meta> naming UTF-16 means UTF-8 there), or
// past them while only head elements came before it (Chromium's rule). Any
// reading that is not ASCII-compatible makes the text checked only (so does a <meta> that
// contradicts a label: some readers follow it).
struct HtmlEncoding {
    bool ascii_compatible{true};
    std::string convert_from; // the iconv name to read the text from for checking; "" to read it as it is
    std::string described;    // for the report: the label, "UTF-16LE (byte-order mark)", "iso-2022-jp (<meta>)"
    // No <meta> charset found, and the bytes given end inside the head (or within the first
    // 1024 bytes), where Chromium would still take one: the caller gives the whole text.
    bool head_open{false};
};
HtmlEncoding sniff_html_encoding(std::string_view label, std::string_view head);

} // namespace mimeuri
