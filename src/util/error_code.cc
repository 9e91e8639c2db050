// NAME: error_code.cc -- the words of the report's error codes (error_code.hh).
#include "error_code.hh"

namespace mimeuri {

namespace {

struct Words {
    ErrorCode code;
    const char *json;    // the report's word
    const char *summary; // the summary line's, or nullptr
};

// One row per code (tests/test_report.cc checks that each has a word of its own).
constexpr Words kWords[] = {
    {ErrorCode::Limit, "limit", "over a limit"},
    {ErrorCode::Invalid, "invalid", "invalid input"},
    {ErrorCode::ContentLength, "content-length", nullptr},
    {ErrorCode::Internal, "internal", "internal errors"},
    {ErrorCode::Failed, "failed", nullptr},
    {ErrorCode::Extract, "extract", "extraction failed"},
    {ErrorCode::ContentTypeConflict, "content-type-conflict", nullptr},
    {ErrorCode::Unparseable, "unparseable", nullptr},
    {ErrorCode::Unreadable, "unreadable", nullptr},
    {ErrorCode::HeaderLimit, "header-limit", nullptr},
    {ErrorCode::DepthLimit, "depth-limit", "over --max-depth"},
    {ErrorCode::PartLimit, "part-limit", "over --max-parts"},
    {ErrorCode::Rewrite, "rewrite", nullptr},
    {ErrorCode::Drop, "drop", nullptr},
    {ErrorCode::HtmlLimit, "html-limit", "over --html-max"},
    {ErrorCode::RefLimit, "ref-limit", "over --max-refs"},
    {ErrorCode::Html, "html", nullptr},
    {ErrorCode::HtmlTimeLimit, "html-time-limit", nullptr},
    {ErrorCode::HtmlMemoryLimit, "html-memory-limit", nullptr},
    {ErrorCode::HtmlNestingLimit, "html-nesting-limit", nullptr},
    {ErrorCode::HtmlWorkLimit, "html-work-limit", nullptr},
    {ErrorCode::Charset, "charset", nullptr},
    {ErrorCode::HtmlRewrite, "html-rewrite", nullptr},
    {ErrorCode::Encoding, "encoding", nullptr},
    {ErrorCode::Label, "label", nullptr},
};
static_assert(sizeof kWords / sizeof kWords[0] == kErrorCodes, "a word for every ErrorCode");

const Words &words_of(ErrorCode c)
{
    for (const Words &w : kWords)
        if (w.code == c) return w;
    return kWords[0];
}

} // namespace

const char *json_name(ErrorCode c) { return words_of(c).json; }

const char *what_it_means(ErrorCode c)
{
    const Words &w = words_of(c);
    return w.summary ? w.summary : w.json;
}

} // namespace mimeuri
