// NAME: error_code.hh -- the codes of the report's "errors" entries.
// SYNOPSIS: ErrorCode, json_name(ErrorCode), what_it_means(ErrorCode).
// One enum (as Postfix's CLEANUP_STAT_*), one table of the words the report writes and the
// summary line says: no caller passes or compares a code as text.
#pragma once

namespace mimeuri {

enum class ErrorCode {
    Limit,               // a pass stopped at a limit (time, size, references)
    Invalid,             // a pass found the input invalid
    ContentLength,       // an mboxcl2 Content-Length that does not hold
    Internal,            // the plan could not be made (a bug, or a worker gone)
    Failed,              // the service could not plan the message
    Extract,             // extracted files could not be written
    ContentTypeConflict, // a signed entity whose Content-Type GMime reads otherwise
    Unparseable,         // no message to parse (empty, CR-only, no header block)
    Unreadable,          // the prescan could not read the input
    HeaderLimit,         // a header block over --max-header-bytes
    DepthLimit,          // nesting over --max-depth
    PartLimit,           // parts over --max-parts
    Rewrite,             // a part's rewrite was refused (it would change the structure)
    Drop,                // a part could not be removed
    HtmlLimit,           // an HTML part over --html-max
    RefLimit,            // references over --max-refs
    Html,                // the HTML could not be read
    HtmlTimeLimit,       // the HTML parser stopped at --max-time
    HtmlMemoryLimit,     // the HTML parser stopped at its memory cap
    HtmlNestingLimit,    // the HTML parser stopped at its stack bound
    HtmlWorkLimit,       // NUL-started attribute names needing more parses than allowed
    Charset,             // a charset that could not be decoded
    HtmlRewrite,         // the HTML part could not be written back
    Encoding,            // a transfer encoding that cannot be rewritten
    Label,               // a label that could not be made or written
};
constexpr int kErrorCodes = static_cast<int>(ErrorCode::Label) + 1;
constexpr bool wire_valid(ErrorCode c) { return c <= ErrorCode::Label; } // wire.hh

// The word the report writes: "limit", "html-time-limit", ...
const char *json_name(ErrorCode c);
// What the summary line says of it: "over --max-parts"; the word itself when nothing more.
const char *what_it_means(ErrorCode c);

} // namespace mimeuri
