// The pages --cid=extract writes are the mail's HTML made inert: what a browser would run or
// fetch of its own accord is taken out, in one pass of a streaming tokenizer (the WHATWG
// states that html_tokenizer.cc reads references by: data, tag open, tag name, the attribute
// states, comments, bogus comments, DOCTYPE, CDATA in SVG, RCDATA, RAWTEXT, script data,
// PLAINTEXT), with no tree. Every token kept is written again in one canonical spelling: a
// tag as <name attr="value"> (names of plain ASCII only, each value decoded as gumbo decodes
// it, then escaped: & < > "), text with every '<' escaped, <style> text with no '<' at all.
// So no '<' reaches the output but those of the tags written here, and a second reading
// (the browser's, in whatever namespace or state it is in) finds no tag, attribute or URL
// that was not checked here: the checks are made on the very values written. Cutting bytes
// out of the text instead could join two halves into a new tag ("<scr<script></script>ipt>").
//
// Taken out, each counted:
//   scripts  <script> (HTML: its script data; SVG: with its content), <noscript>, <template>,
//            all of <math> and SVG's integration points and animation elements (the
//            namespace changes that the known "mutation XSS" readings need, and <set>/
//            <animate> that write an href), each with everything in it;
//   handlers every on* attribute;
//   urls     every attribute whose value is a javascript:, vbscript: or livescript: URL as
//            WHATWG URL parsing reads it (leading C0 controls and spaces stripped, tabs and
//            newlines removed, the scheme in any case), and data: URLs where a page navigates
//            or frames (href, action, formaction, src of anything but an image);
//   refresh  <meta http-equiv=refresh> (every <meta> goes: the page says its own charset);
//   base     <base> (a <link> other than a stylesheet of the archive goes too, uncounted);
//   frames   <iframe> (srcdoc too), <frame>, <frameset>, <object>, <embed>, <applet>, <portal>;
//   forms    <form> becomes <div> and every action/formaction is dropped;
//   remote   what would load from the network when the page opens: an image's src/srcset, a
//            background or poster naming a URL with a scheme other than data: (an image
//            keeps an alt text showing its URL), a remote stylesheet <link>.
// Comments are dropped, and so are crossorigin and integrity (which make a browser refuse the
// archive's own files from a file: page). Attribute names that are not plain ([A-Za-z0-9_:.-]) are dropped.
// tests/sanitize_check.cc is the oracle: gumbo's tree of the output holds none of the above.
#pragma once

#include "html_refs.hh"

#include <cstddef>
#include <string>
#include <string_view>

namespace mimeuri::html {

struct SanitizeCounts {
    std::size_t scripts{0}, handlers{0}, urls{0}, refresh{0}, base{0}, frames{0}, forms{0}, remote{0};
    std::size_t total() const { return scripts + handlers + urls + refresh + base + frames + forms + remote; }
    // "scripts=2 handlers=1 ..." of the non-zero counts; "" for none.
    std::string describe() const;
};

struct SanitizeOptions {
    bool allow_remote_images{false}; // --extract-remote-images: keep remote image URLs
    ParseLimits limits;
};

struct Sanitized {
    std::string html; // the body's content and the head's <style>/<link>, UTF-8
    SanitizeCounts removed;
    Stop stop{Stop::None}; // always None: the pass is linear, with no tree to bound
};

// The scheme of a URL as WHATWG URL parsing reads it: leading and trailing C0 controls and
// spaces stripped, every tab, LF and CR removed, lower case; "" when it has none.
std::string url_scheme(std::string_view url);

// javascript:, vbscript: or livescript:, as url_scheme reads it.
bool is_script_url(std::string_view url);

// An absolute URL that is not data:, cid: or mid: (a request to somewhere else).
bool is_remote_url(std::string_view url);

// Sanitises utf8 (HTML, UTF-8). Errors: Code::TempFail for a failed allocation. Linear in
// the text; memory: the output and the current tag.
Result<Sanitized> sanitize(std::string_view utf8, const SanitizeOptions &opts);

// text as HTML text: & < > " escaped.
std::string escape_text(std::string_view text);

} // namespace mimeuri::html
