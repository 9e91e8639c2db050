// One decode and one scan of an HTML part per message (filters/html_share.hh, issue 53): the
// references pass keeps its scan, the data and related passes take it instead of decoding and
// scanning the part again, and report what they report when each reads the part itself.
#include "data.hh"
#include "data_report.hh"
#include "html_share.hh"
#include "references.hh"
#include "related.hh"
#include "related_report.hh"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace mimeuri;

namespace {

// An HTML part in a multipart/related naming its image and an image outside the set (the
// related pass reports it), with a data: image (the data pass reports it).
std::string message(const std::string &html_extra = "")
{
    return "Message-ID: <share@example.org>\n"
           "MIME-Version: 1.0\n"
           "Content-Type: multipart/mixed; boundary=m\n"
           "\n"
           "--m\n"
           "Content-Type: multipart/related; boundary=r\n"
           "\n"
           "--r\n"
           "Content-Type: text/html; charset=utf-8\n"
           "\n"
           "<p><img src=\"cid:in@x\"><img src=\"cid:out@x\"><img src=\"cid:none@x\">\n"
           "<img src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\"></p>\n" +
           html_extra +
           "--r\n"
           "Content-Type: image/png\n"
           "Content-ID: <in@x>\n"
           "Content-Transfer-Encoding: base64\n"
           "\n"
           "iVBORw0KGgo=\n"
           "--r--\n"
           "--m\n"
           "Content-Type: image/png\n"
           "Content-ID: <out@x>\n"
           "Content-Disposition: attachment\n"
           "Content-Transfer-Encoding: base64\n"
           "\n"
           "iVBORw0KGgo=\n"
           "--m--\n";
}

struct Run {
    std::unique_ptr<Source> src;
    std::unique_ptr<MessageContext> ctx;
};

Run parsed(const std::string &bytes)
{
    Run r;
    r.src = std::make_unique<Source>(Source::from_bytes(bytes, "t.eml"));
    r.ctx = MessageContext::parse(*r.src, Segment{0, 0, r.src->size()}, 1, false, Limits{});
    REQUIRE(r.ctx->message());
    return r;
}

std::vector<std::string> data_entries(const MessageContext &ctx)
{
    std::vector<std::string> out;
    if (const auto *s = ctx.report().find_section(DataReport::kind()))
        for (const DataEntry &e : static_cast<const DataReport *>(s)->entries)
            out.push_back(e.part + "|" + e.attr + "|" + e.type + "|" + std::to_string(e.size.value_or(-1)) + "|" +
                          e.reason + "|" + std::to_string(static_cast<int>(e.action)) + "|" + e.cid);
    return out;
}

std::vector<std::string> related_entries(const MessageContext &ctx)
{
    std::vector<std::string> out;
    if (const auto *s = ctx.report().find_section(RelatedReport::kind()))
        for (const RelatedEntry &e : static_cast<const RelatedReport *>(s)->entries)
            out.push_back(e.part + "|" + e.url + "|" + e.target + "|" + (e.outside ? "out" : "in") + "|" +
                          e.disposition.value_or("-") + "|" + e.reason);
    return out;
}

} // namespace

TEST_CASE("HtmlShare: the data and related passes take the references pass's scan, and report as if each read the part")
{
    for (const bool pieces : {false, true}) {
        CAPTURE(pieces);
        RefOptions ro;
        ro.cid = RefOptions::Cid::Check;
        if (pieces) ro.piece_min = 0; // scanned as it is decoded, a block at a time
        ReferencesPass refs(ro);
        DataPass data{DataOptions{}};
        RelatedPass related{RelatedOptions{}};
        // Each pass alone: it reads and scans the part itself.
        Run alone_data = parsed(message()), alone_related = parsed(message());
        REQUIRE(data.apply(*alone_data.ctx).ok());
        REQUIRE(related.apply(*alone_related.ctx).ok());
        // The three in order, as a run with a report has them.
        Run all = parsed(message());
        REQUIRE(refs.apply(*all.ctx).ok());
        REQUIRE(data.apply(*all.ctx).ok());
        REQUIRE(related.apply(*all.ctx).ok());
        const auto d = data_entries(*all.ctx), r = related_entries(*all.ctx);
        REQUIRE(d.size() == 1);
        REQUIRE(r.size() == 2); // cid:in@x (no disposition) and cid:out@x (outside the set, an attachment)
        CHECK(d == data_entries(*alone_data.ctx));
        CHECK(r == related_entries(*alone_related.ctx));
        const HtmlShare &share = HtmlShare::of(*all.ctx);
        CHECK(share.kept_scans() == 1);  // the references pass's
        CHECK(share.taken_scans() == 2); // by the data pass and the related pass
        CHECK(share.decodes() == 0);     // no whole part read again: only its head, once
        // Alone, the data pass read the part and kept its scan, which the related pass took.
        Run data_first = parsed(message());
        REQUIRE(data.apply(*data_first.ctx).ok());
        REQUIRE(related.apply(*data_first.ctx).ok());
        CHECK(related_entries(*data_first.ctx) == r);
        CHECK(HtmlShare::of(*data_first.ctx).decodes() == 1);
        CHECK(HtmlShare::of(*data_first.ctx).kept_scans() == 1);
        CHECK(HtmlShare::of(*data_first.ctx).taken_scans() == 1);
    }
}

TEST_CASE("HtmlShare: a part the references pass converted from its charset is scanned again, not taken")
{
    // UTF-16 (a byte-order mark): the references pass reads it converted to UTF-8; the others
    // convert and scan it themselves.
    std::string utf16 = "\xff\xfe";
    for (char c : std::string("<img src=\"cid:out@x\">")) utf16 += std::string{c, '\0'};
    std::string bytes = message();
    const std::string html = "<p><img src=\"cid:in@x\">";
    bytes.replace(bytes.find(html), html.size(), utf16);
    RefOptions ro;
    ro.cid = RefOptions::Cid::Check;
    ReferencesPass refs(ro);
    RelatedPass related{RelatedOptions{}};
    Run all = parsed(bytes), alone = parsed(bytes);
    REQUIRE(refs.apply(*all.ctx).ok());
    REQUIRE(related.apply(*all.ctx).ok());
    REQUIRE(related.apply(*alone.ctx).ok());
    CHECK(HtmlShare::of(*all.ctx).kept_scans() == 0);
    CHECK(related_entries(*all.ctx) == related_entries(*alone.ctx));
}
