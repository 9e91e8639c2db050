// Every Content-Type header in ../shared/corpus: ct2uri must not fail on a valid one, and
// closure must hold for each.
#include "cturi.hh"
#include "helpers.hh"
#include "mbox.hh"
#include "message.hh"

#include <doctest/doctest.h>

#include <fstream>
#include <map>

using namespace mimeuri;

namespace {

std::vector<std::string> corpus_files()
{
    std::vector<std::string> out;
    for (const auto &row : testing::corpus_index()) out.push_back(row.at(0));
    return out;
}

// Collects the raw value of every Content-Type header of every part of every message.
void collect(const std::string &path, std::vector<std::pair<std::string, std::string>> &out)
{
    auto src = Source::open_path(path, 1 << 20);
    if (!src) return;
    auto mbox = looks_like_mbox(*src);
    auto segs = split(*src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
    if (!segs) return;
    for (std::size_t i = 0; i < segs->size(); ++i) {
        auto ctx = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{1000000});
        for (const auto &n : ctx->nodes()) {
            GMimeHeaderList *hl = MessageContext::headers_of(n);
            int count = g_mime_header_list_get_count(hl);
            for (int k = 0; k < count; ++k) {
                GMimeHeader *h = g_mime_header_list_get_header_at(hl, k);
                if (!cturi::iequals(g_mime_header_get_name(h), "Content-Type")) continue;
                const char *raw = g_mime_header_get_raw_value(h);
                out.emplace_back(path + " " + n.section, raw ? raw : "");
            }
        }
    }
}

} // namespace

TEST_CASE("every Content-Type header in the corpus maps to a URI and back")
{
    auto files = corpus_files();
    if (files.empty()) {
        return testing::skip("corpus not found at " MIMEURI_CORPUS);
    }
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto &f : files) collect(std::string(MIMEURI_CORPUS) + "/" + f, headers);
    std::size_t mapped = 0, invalid = 0, closure_failures = 0;
    std::vector<std::string> invalid_examples;
    for (const auto &[where, value] : headers) {
        auto ct = cturi::parse_content_type(value);
        if (!ct) {
            ++invalid;
            invalid_examples.push_back(ct.error().message + ": " + where + ": " + value);
            continue;
        }
        auto uri = cturi::ct2uri(*ct);
        if (!uri) {
            ++closure_failures;
            MESSAGE("ct2uri failed: " << where << ": " << value << ": " << uri.error().message);
            continue;
        }
        auto back = cturi::uri2ct(*uri);
        if (!back || !cturi::equivalent(*back, *ct)) {
            ++closure_failures;
            MESSAGE("closure failed: " << where << ": " << value << " -> " << *uri);
            continue;
        }
        ++mapped;
    }
    for (const auto &example : invalid_examples) MESSAGE("not a valid Content-Type: " << example);
    MESSAGE("corpus Content-Type headers: " << headers.size() << ", mapped with closure " << mapped << ", invalid "
                                            << invalid << ", closure failures " << closure_failures);
    CHECK(headers.size() > 6000);
    CHECK(closure_failures == 0);
}
