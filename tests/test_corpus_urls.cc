// Differential over the corpus: every cid: and mid: URL in a URL attribute of every HTML part,
// as gumbo and the URL Standard read it (tests/url_oracle.hh), against what the scanner
// reports (find_refs and the streaming tokenizer's scan_refs); on each part as it is and on
// variants where every "cid:" and "mid:" is spelt with what the URL parser drops.
#include "helpers.hh"
#include "html_refs.hh"
#include "html_tokenizer.hh"
#include "mbox.hh"
#include "message.hh"
#include "tokenizer_agrees.hh"
#include "url_oracle.hh"

#include <doctest/doctest.h>

#include <gmime/gmime.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace mimeuri;

namespace {

// Every "cid:" / "mid:" (any case) in html rewritten by f(the four bytes).
std::string respell(const std::string &html, const std::function<std::string(std::string_view)> &f)
{
    std::string out;
    for (std::size_t i = 0; i < html.size();) {
        if (i + 4 <= html.size() && testing::cid_or_mid(std::string_view(html).substr(i, 4))) {
            out += f(std::string_view(html).substr(i, 4));
            i += 4;
        } else {
            out += html[i++];
        }
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> scanned(const html::Scan &scan)
{
    std::vector<std::pair<std::string, std::string>> got;
    for (const html::Ref &r : scan.refs) {
        const html::Holder &h = scan.holders[r.holder];
        if (h.attribute && h.attr != "style" && testing::cid_or_mid(r.url)) got.emplace_back(h.attr, r.url);
    }
    std::sort(got.begin(), got.end());
    return got;
}

} // namespace

TEST_CASE("differential over the corpus's HTML: URL attributes as gumbo and the URL Standard read them, and respelt")
{
    std::vector<std::string> files;
    for (const auto &cols : testing::corpus_index())
        if (cols.size() > 2 && cols[2] == "1") files.push_back(cols[0]);
    if (files.empty()) return testing::skip("corpus not found at " MIMEURI_CORPUS);
    const std::vector<std::function<std::string(std::string_view)>> spellings = {
        [](std::string_view s) { return std::string(s); },
        [](std::string_view s) { return std::string(s.substr(0, 2)) + "&#9;" + std::string(s.substr(2)); },
        [](std::string_view s) { return " &#1;" + std::string(s.substr(0, 1)) + "\n" + std::string(s.substr(1)); },
        [](std::string_view s) { return std::string(s.substr(0, 3)) + "&NewLine;" + std::string(s.substr(3)); },
        [](std::string_view s) { return "&#x1F;" + std::string(s.substr(0, 1)) + "\r\n" + std::string(s.substr(1, 2)) + "&Tab;:"; },
    };
    std::size_t parts = 0, urls = 0, mismatches = 0;
    for (const std::string &rel : files) {
        CAPTURE(rel);
        auto src = Source::open_path(std::string(MIMEURI_CORPUS) + "/" + rel, 1 << 20);
        REQUIRE(src.ok());
        auto mbox = looks_like_mbox(*src);
        auto segs = split(*src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
        REQUIRE(segs.ok());
        for (std::size_t i = 0; i < segs->size(); ++i) {
            auto ctx = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{});
            if (!ctx->message()) continue;
            for (const Node &n : ctx->nodes()) {
                if (n.kind != Node::Kind::Leaf) continue;
                GMimeContentType *ct = g_mime_object_get_content_type(n.object);
                if (!ct || !g_mime_content_type_is_type(ct, "text", "html")) continue;
                auto bytes = ctx->decoded_content(n, 8u << 20);
                if (!bytes) continue;
                const std::string original(bytes->view());
                if (original.find('\0') != std::string::npos) continue; // NUL-started names: the scanner mends gumbo there
                ++parts;
                for (std::size_t k = 0; k < spellings.size(); ++k) {
                    const std::string html = k == 0 ? original : respell(original, spellings[k]);
                    if (k > 0 && html == original) break; // no cid: or mid: to respell
                    const auto want = testing::oracle_urls(html);
                    urls += want.size();
                    for (int way = 0; way < 2; ++way) {
                        auto scan = way == 0 ? html::find_refs(html, html::ParseLimits{}) : html::scan_refs(html, html::ParseLimits{});
                        REQUIRE(scan);
                        if (scanned(*scan) != want) {
                            ++mismatches;
                            CAPTURE(k);
                            CAPTURE(way);
                            CHECK(scanned(*scan) == want);
                        }
                    }
                    if (!want.empty()) CHECK(html::may_hold_reference(html));
                }
            }
        }
    }
    MESSAGE(parts << " HTML parts, " << urls << " cid: and mid: URLs compared, " << mismatches << " mismatches");
    CHECK(parts > 400);
    CHECK(urls > 500);
    CHECK(mismatches == 0);
}

// The tokenizer against gumbo on every HTML part of the corpus (tests/tokenizer_agrees.hh).
TEST_CASE("tokenizer: every HTML part of the corpus, as gumbo reads it")
{
    const std::string corpus = MIMEURI_CORPUS;
    std::ifstream index(corpus + "/INDEX.tsv");
    if (!index) {
        return testing::skip("corpus not found at " MIMEURI_CORPUS);
    }
    std::string line;
    std::getline(index, line);
    std::size_t parts = 0, answered = 0;
    std::map<std::string, int> why; // what sent a part to gumbo
    while (std::getline(index, line)) {
        std::stringstream ss(line);
        std::string path, size, has_html;
        std::getline(ss, path, '\t');
        std::getline(ss, size, '\t');
        std::getline(ss, has_html, '\t');
        if (has_html != "1") continue;
        auto src = Source::open_path(corpus + "/" + path, 1 << 20);
        REQUIRE(src.ok());
        mimeuri::Segment seg;
        seg.msg_end = seg.next = src->size();
        auto ctx = MessageContext::parse(*src, seg, 1, false, Limits{});
        if (!ctx->message()) continue;
        for (const Node &n : ctx->nodes()) {
            GMimeContentType *ct = g_mime_object_get_content_type(n.object);
            if (n.kind != Node::Kind::Leaf || !ct || !g_mime_content_type_is_type(ct, "text", "html")) continue;
            auto html = ctx->decoded_content(n, 32u << 20);
            if (!html) continue;
            CAPTURE(path);
            ++parts;
            const std::string text(html->view());
            if (testing::agrees(text)) ++answered;
            else ++why[html::tokenize_refs(text, 1000000).fallback];
        }
    }
    MESSAGE(answered << " of " << parts << " corpus HTML parts read by the tokenizer, the rest by gumbo");
    for (const auto &[reason, n] : why) MESSAGE(n << " to gumbo for " << reason);
    CHECK(parts > 400);
    CHECK(answered * 2 > parts); // the fast path is the common one
}
