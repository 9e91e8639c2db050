// The reference pass over every corpus message with a cid: reference or a Content-Location
// (INDEX.tsv has_cid_ref, has_content_location): no crash; no reference reported dangling
// while its target is in the message; in repair mode nothing outside HTML bodies changes
// but the headers the pass may add or change; counts as in testdata/corpus-refs.tsv.
#include "helpers.hh"
#include "mbox.hh"
#include "message.hh"
#include "references.hh"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace mimeuri;

namespace {

std::vector<std::string> selected_files()
{
    std::vector<std::string> out;
    for (const auto &cols : testing::corpus_index())
        if (cols.size() > 6 && (cols[3] == "1" || cols[6] == "1")) out.push_back(cols[0]);
    return out;
}

std::string loose(std::string s)
{
    GCharPtr u(g_uri_unescape_string(s.c_str(), nullptr));
    if (u) s = u.get();
    std::string out;
    for (char c : s)
        if (c != '<' && c != '>' && !g_ascii_isspace(c)) out += static_cast<char>(g_ascii_tolower(c));
    return out;
}

struct Counts {
    int resolved = 0, dangling = 0, ambiguous = 0;
    bool operator==(const Counts &) const = default;
};

} // namespace

TEST_CASE("references over the corpus's cid: and Content-Location messages")
{
    auto files = selected_files();
    if (files.empty()) {
        return testing::skip("corpus not found at " MIMEURI_CORPUS);
    }
    CHECK(files.size() == 83); // 64 with cid: references, 21 with Content-Location, 2 with both

    std::map<std::string, Counts> expected;
    {
        std::ifstream exp(std::string(MIMEURI_TESTDATA) + "/corpus-refs.tsv");
        std::string line;
        while (std::getline(exp, line)) {
            if (line.empty() || line[0] == '#') continue;
            std::stringstream ss(line);
            std::string path;
            Counts c;
            ss >> path >> c.resolved >> c.dangling >> c.ambiguous;
            expected[path] = c;
        }
    }
    std::ostringstream actual_table;
    int mismatches = 0, false_dangling = 0, stray_edits = 0, total_resolved = 0, total_dangling = 0;
    for (const auto &rel : files) {
        CAPTURE(rel);
        auto src = Source::open_path(std::string(MIMEURI_CORPUS) + "/" + rel, 1 << 20);
        REQUIRE(src.ok());
        auto mbox = looks_like_mbox(*src);
        auto segs = split(*src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
        REQUIRE(segs.ok());
        RefOptions check_opts;
        check_opts.cid = RefOptions::Cid::Check;
        ReferencesPass check(check_opts), repair{RefOptions{}};
        for (std::size_t i = 0; i < segs->size(); ++i) {
            auto ctx = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{});
            if (ctx->message()) {
                (void)check.cross_message()->add(*ctx);
                (void)repair.cross_message()->add(*ctx);
            }
        }
        Counts counts;
        for (std::size_t i = 0; i < segs->size(); ++i) {
            auto ctx = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{});
            if (!ctx->message()) continue;
            REQUIRE(check.apply(*ctx).ok());
            CHECK_FALSE(ctx->changed()); // check mode changes nothing
            // Every Content-ID of the message, at any depth, loosely.
            auto deep = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{1000000});
            std::set<std::string> ids;
            for (const Node &n : deep->nodes()) {
                if (const char *id = g_mime_object_get_content_id(n.object)) ids.insert(loose(id));
                // RFC 2557: a Content-Location naming the cid: URL is a target too.
                GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Location");
                const char *loc = h ? g_mime_header_get_raw_value(h) : nullptr;
                GCharPtr v(loc ? g_strstrip(g_strdup(loc)) : nullptr);
                if (v && g_ascii_strncasecmp(v.get(), "cid:", 4) == 0) ids.insert(loose(v.get() + 4));
            }
            for (const RefEntry &r : ctx->report().refs) {
                if (r.status == RefEntry::Status::Resolved) ++counts.resolved;
                else if (r.status == RefEntry::Status::Dangling) ++counts.dangling;
                else ++counts.ambiguous;
                // A cid: URL that only a Content-Location names resolves to it (RFC 2557 8.2).
                if (r.status == RefEntry::Status::Dangling && r.kind == RefEntry::Kind::Cid &&
                    ids.count(loose(r.url.substr(4)))) {
                    ++false_dangling;
                    MESSAGE("dangling but present: " << rel << " " << r.url);
                }
            }
            // Repair mode: every edit inside an HTML body, or a header of an HTML part
            // (Content-Transfer-Encoding) or a Content-ID added to a target.
            auto rctx = MessageContext::parse(*src, (*segs)[i], i + 1, false, Limits{});
            REQUIRE(repair.apply(*rctx).ok());
            for (const Edit &e : rctx->edits()) {
                bool inside_html = false;
                for (const Node &n : rctx->nodes()) {
                    if (n.kind != Node::Kind::Leaf) continue;
                    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
                    GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
                    GMimeStream *s = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
                    if (!s || !ct || !g_mime_content_type_is_type(ct, "text", "html")) continue;
                    if (e.begin >= s->bound_start && e.end <= s->bound_end) inside_html = true;
                }
                bool header_add = e.begin == e.end && e.text.rfind("Content-ID: <", 0) == 0;
                if (!inside_html && !header_add) {
                    ++stray_edits;
                    MESSAGE("edit outside HTML bodies: " << rel << " [" << e.begin << "," << e.end << ") " << e.text.substr(0, 60));
                }
            }
        }
        total_resolved += counts.resolved;
        total_dangling += counts.dangling;
        actual_table << rel << "\t" << counts.resolved << "\t" << counts.dangling << "\t" << counts.ambiguous << "\n";
        auto it = expected.find(rel);
        if (it == expected.end() || !(it->second == counts)) {
            ++mismatches;
            MESSAGE("counts differ from testdata/corpus-refs.tsv: " << rel << " " << counts.resolved << " "
                                                                     << counts.dangling << " " << counts.ambiguous);
        }
    }
    if (g_getenv("MIMEURI_WRITE_EXPECTATIONS")) testing::write_file(g_getenv("MIMEURI_WRITE_EXPECTATIONS"), actual_table.str());
    MESSAGE("corpus references: " << files.size() << " files, " << total_resolved << " resolved, " << total_dangling
                                   << " dangling");
    CHECK(false_dangling == 0);
    CHECK(stray_edits == 0);
    CHECK(mismatches == 0);
}

// Issue 34 item 3: a Chrome-saved page (msindwan iframes.mhtml) names its stylesheets
// href="cid:css-...@mhtml.blink", each a part's Content-Location. Inlined or extracted, they
// are resolved in the report, the summary header and --verbose alike.
TEST_CASE("a Chrome-saved MHTML's cid: Content-Locations are resolved in every mode")
{
    const std::string f = std::string(MIMEURI_CORPUS) + "/msindwan-mhtml2html/iframes.mhtml";
    if (!g_file_test(f.c_str(), G_FILE_TEST_EXISTS)) {
        return testing::skip("corpus not found at " MIMEURI_CORPUS);
    }
    for (const char *mode : {"check", "repair", "inline", "extract"}) {
        CAPTURE(mode);
        testing::TempDir d;
        auto run = testing::mimeuri(std::string("--verbose --summary-header --format=message --cid=") + mode +
                                    " --extract-dir=" + testing::quote(d / "x") + " --report=" + testing::quote(d / "r") +
                                    " " + testing::quote(f));
        CHECK(run.status == 0);
        CHECK(run.err.find(", 0 dangling references") != std::string::npos);
        if (std::string(mode) != "check") CHECK(run.out.find("Mimeuri-Refs: resolved=123 dangling=0 ambiguous=5") != std::string::npos);
        const std::string report = testing::read_file(d / "r");
        std::size_t blink = 0;
        for (std::size_t at = report.find("\"matched\":\"content-location\""); at != std::string::npos;
             at = report.find("\"matched\":\"content-location\"", at + 1)) {
            ++blink;
            // The entry's status comes just before, its action just after.
            CHECK(report.compare(at - 20, 19, "\"status\":\"resolved\"") == 0);
            const std::string action = report.substr(at + 29, 20);
            if (std::string(mode) == "inline") CHECK(action.rfind("\"action\":\"inlined\"", 0) == 0);
            if (std::string(mode) == "extract") CHECK(action.rfind("\"action\":\"extracted\"", 0) == 0);
        }
        CHECK(blink == 31);
        CHECK(report.find("\"status\":\"dangling\"") == std::string::npos);
    }
}
