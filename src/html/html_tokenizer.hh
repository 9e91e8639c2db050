// A streaming HTML5 tokenizer for what the references pass reads: start tags and their
// attributes (raw spans and decoded values), and the text of <style> elements, at byte
// offsets, in one pass over the text with no tree. It follows the WHATWG tokenizer states for
// data, tags, attributes, comments, bogus comments, DOCTYPE, RCDATA, RAWTEXT and script data;
// character references in the values it keeps are decoded as gumbo decodes them.
//
// Tree construction changes what a tokenizer sees (MathML, <plaintext>, <template>,
// <select>, framesets) and which tags reach the tree at all (a stray <td>, a second <body> or
// <form>): on anything of the sort the tokenizer stops and says why, and the caller parses the
// text with gumbo instead (find_refs). Inside <svg> it reads SVG's own elements (self-closing
// tags, CDATA sections, end tags matched as gumbo matches them) and stops on anything that
// would leave foreign content (an HTML tag, an integration point, an end tag of no open SVG
// element). Where it finishes, its Scan is
// the one find_refs makes: tests/test_html_tokenizer.cc and fuzz/fuzz_html_tokenizer.cc hold
// it to that, gumbo being the oracle.
//
// Cost: linear. Every byte is looked at a bounded number of times (a search for '<', a
// quote or a '-' moves forward only); memory is the current tag's attributes, the open
// tables (one byte each), the open SVG elements (at most 512) and the references found,
// never a multiple of the text.
#pragma once

#include "html_refs.hh"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri::html {

struct TokenizerResult {
    std::optional<Scan> scan; // nullopt: the text needs gumbo
    std::string fallback;     // why, when it does
    std::size_t work{0};      // bytes stepped over, once each plus the bytes of each tag (tests)
};

// The references in html, as find_refs finds them, or why gumbo is needed.
TokenizerResult tokenize_refs(std::string_view html, std::size_t max_refs);

// The same, for a text that comes in pieces (a part decoded as it is read): memory is what
// the tokenizer holds plus the one construct (tag, comment, <style> text...) a piece ends in,
// never the text. feed() false: gumbo is needed, or that construct grew over max_carry bytes
// (the caller then reads the text whole); finish() then says why.
class PieceTokenizer {
public:
    explicit PieceTokenizer(std::size_t max_refs, std::size_t max_carry = std::size_t(-1));
    ~PieceTokenizer();
    PieceTokenizer(const PieceTokenizer &) = delete;
    PieceTokenizer &operator=(const PieceTokenizer &) = delete;
    bool feed(std::string_view piece);
    // With the last piece (which is read in place): the scan tokenize_refs makes of the whole
    // text, or why not.
    TokenizerResult finish(std::string_view last = {});

private:
    bool step(std::string_view piece, bool last);
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::size_t max_carry_;
};

// find_refs through the streaming tokenizer, and through gumbo where it cannot say.
Result<Scan> scan_refs(std::string_view html, const ParseLimits &limits);

} // namespace mimeuri::html
