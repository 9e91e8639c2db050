#include "charsets.hh"
#include "helpers.hh"
#include "message.hh"
#include "output.hh"

#include <doctest/doctest.h>

#include <glib.h>
#include <link.h>

#include <cstring>

using namespace mimeuri;

namespace {

struct Parsed {
    std::unique_ptr<Source> owned; // the context refers to it: keep it in place
    std::unique_ptr<MessageContext> ctx;
    const Source &src;
};

Parsed parse(const std::string &bytes, Limits limits = {})
{
    auto src = std::make_unique<Source>(Source::from_bytes(bytes, "t.eml"));
    Segment seg{0, 0, src->size()};
    auto ctx = MessageContext::parse(*src, seg, 1, false, limits);
    const Source &ref = *src;
    return {std::move(src), std::move(ctx), ref};
}

std::string spliced(const Parsed &p)
{
    testing::TempDir d;
    std::string path = d / "out";
    auto sink = Sink::atomic(path);
    REQUIRE(sink.ok());
    std::vector<const Edit *> edits;
    for (const auto &e : p.ctx->edits()) edits.push_back(&e);
    REQUIRE(write_spliced(*sink, p.src, 0, p.src.size(), edits).ok());
    REQUIRE(sink->commit().ok());
    return testing::read_file(path);
}

std::vector<std::string> sections(const MessageContext &ctx)
{
    std::vector<std::string> out;
    for (const auto &n : ctx.nodes()) out.push_back(n.section);
    return out;
}

const Node &node(const MessageContext &ctx, const std::string &section)
{
    for (const auto &n : ctx.nodes())
        if (n.section == section) return n;
    FAIL("no part " << section);
    throw 0;
}

GMimeHeader *header(const Node &n, const char *name)
{
    return g_mime_header_list_get_header(MessageContext::headers_of(n), name);
}

const std::string nested =
    "From: a@example.org\n"
    "Message-ID: <top@example.org>\n"
    "Content-Type: multipart/mixed; boundary=\"outer\"\n"
    "\n"
    "preamble\n"
    "--outer\n"
    "Content-Type: text/plain\n"
    "\n"
    "one\n"
    "--outer\n"
    "Content-Type: message/rfc822\n"
    "\n"
    "Subject: inner\n"
    "Message-ID: <inner@example.org>\n"
    "Content-Type: multipart/alternative; boundary=\"inner\"\n"
    "\n"
    "--inner\n"
    "Content-Type: text/plain\n"
    "\n"
    "alt 1\n"
    "--inner\n"
    "Content-Type: text/html\n"
    "\n"
    "<p>alt 2</p>\n"
    "--inner--\n"
    "--outer\n"
    "Content-Type: message/external-body; access-type=URL; URL=\"http://x.test/a\"\n"
    "\n"
    "Content-Type: text/plain\n"
    "\n"
    "--outer\n"
    "\n"
    "no headers here\n"
    "--outer--\n"
    "epilogue\n";

} // namespace

TEST_CASE("parts are named by IMAP section numbers, descending into message/rfc822")
{
    auto p = parse(nested);
    REQUIRE(p.ctx->message());
    CHECK(p.ctx->report().message_id == "top@example.org");
    // RFC 3501 6.4.5: the top multipart is the body (TEXT); an embedded message's
    // multipart body is N.TEXT and its parts N.1, N.2.
    CHECK(sections(*p.ctx) == std::vector<std::string>{"TEXT", "1", "2", "2.TEXT", "2.1", "2.2", "3", "4"});
    CHECK(node(*p.ctx, "2").kind == Node::Kind::MessagePart);
    CHECK(node(*p.ctx, "3").kind == Node::Kind::Leaf); // external-body is a leaf
    CHECK(node(*p.ctx, "2.2").depth == 3);
    CHECK(p.ctx->report().error_count() == 0);
    CHECK_FALSE(p.ctx->changed());

    auto single = parse("Subject: s\n\nbody\n");
    CHECK(sections(*single.ctx) == std::vector<std::string>{"1"});
}

TEST_CASE("nesting past --max-depth is left untouched and reported")
{
    auto p = parse(nested, Limits{2});
    CHECK(sections(*p.ctx) == std::vector<std::string>{"TEXT", "1", "2", "2.TEXT", "3", "4"});
    // Each skipped subtree is reported once, by its root.
    REQUIRE(p.ctx->report().error_count() == 2);
    std::string json = p.ctx->report().to_json();
    CHECK(json.find("{\"part\":\"2.1\",\"code\":\"depth-limit\"") != std::string::npos);
    CHECK(json.find("{\"part\":\"2.2\",\"code\":\"depth-limit\"") != std::string::npos);
}

TEST_CASE("deep nesting does not exhaust the stack")
{
    std::string m = "Subject: deep\n";
    int levels = 2000;
    for (int i = 0; i < levels; ++i)
        m += "Content-Type: multipart/mixed; boundary=\"b" + std::to_string(i) + "\"\n\n--b" + std::to_string(i) + "\n";
    m += "Content-Type: text/plain\n\nleaf\n";
    for (int i = levels - 1; i >= 0; --i) m += "--b" + std::to_string(i) + "--\n";
    auto p = parse(m);
    REQUIRE(p.ctx->message());
    CHECK(p.ctx->nodes().size() <= 65);
    CHECK(p.ctx->report().error_count() >= 1);
}

TEST_CASE("a message with no header block is unparseable and reported, not fatal")
{
    auto p = parse("just words\nand more words\n");
    CHECK_FALSE(p.ctx->message());
    CHECK(p.ctx->report().to_json().find("\"unparseable\"") != std::string::npos);
}

TEST_CASE("replace_header rewrites one header's bytes and nothing else")
{
    auto p = parse(nested);
    const Node &ext = node(*p.ctx, "3");
    GMimeHeader *ct = header(ext, "Content-Type");
    REQUIRE(ct);
    auto raw = p.ctx->raw_header(ct);
    REQUIRE(raw.ok());
    CHECK(*raw == "Content-Type: message/external-body; access-type=URL; URL=\"http://x.test/a\"\n");
    REQUIRE(p.ctx->replace_header(ct, " message/external-body; access-type=URL;\n URL=\"http://x.test/b\"\n").ok());
    std::string expected = nested;
    auto at = expected.find("Content-Type: message/external-body");
    expected.replace(at, raw->size(),
                     "Content-Type: message/external-body; access-type=URL;\n URL=\"http://x.test/b\"\n");
    CHECK(spliced(p) == expected);
}

TEST_CASE("add_header appends to the entity's header block, in the message's line endings")
{
    std::string crlf;
    for (char c : nested) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    auto p = parse(crlf);
    REQUIRE(p.ctx->eol() == Eol::CRLF);
    // Top level: after the last header of the message, whichever list holds it.
    REQUIRE(p.ctx->add_header(node(*p.ctx, "TEXT"), "X-Top", " 1").ok());
    // A part with no headers: the header goes before the blank line.
    REQUIRE(p.ctx->add_header(node(*p.ctx, "4"), "X-Bare", " 2").ok());
    // A part inside the embedded message.
    REQUIRE(p.ctx->add_header(node(*p.ctx, "2.2"), "X-Inner", " 3").ok());
    std::string expected = crlf;
    auto ins = [&](const std::string &after, const std::string &text) {
        auto at = expected.find(after);
        REQUIRE(at != std::string::npos);
        expected.insert(at + after.size(), text);
    };
    ins("boundary=\"outer\"\r\n", "X-Top: 1\r\n");
    ins("--inner\r\nContent-Type: text/html\r\n", "X-Inner: 3\r\n");
    ins("Content-Type: text/plain\r\n\r\n--outer\r\n", "X-Bare: 2\r\n");
    CHECK(spliced(p) == expected);
}

TEST_CASE("header values that would inject a header or break the line limit are refused")
{
    CHECK(check_header_value("X-A", " ok\n\tfolded\n").ok());
    CHECK_FALSE(check_header_value("X-A", " a\nBcc: evil@example.org\n").ok());
    CHECK_FALSE(check_header_value("X-A", " a\r\n").ok());
    CHECK_FALSE(check_header_value("X-A", std::string(" a\0b\n", 5)).ok());
    CHECK_FALSE(check_header_value("X A", " a\n").ok());
    CHECK_FALSE(check_header_value("X-A", " " + std::string(994, 'x') + "\n").ok());
    CHECK(check_header_value("X-A", " " + std::string(993, 'x') + "\n").ok()); // 4+1+993 = 998
    auto p = parse(nested);
    CHECK_FALSE(p.ctx->add_header(node(*p.ctx, "1"), "X-Evil", " a\nBcc: x@y\n").ok());
    CHECK_FALSE(p.ctx->changed());
}

TEST_CASE("replace_body swaps a leaf's content and keeps the structure around it")
{
    auto p = parse(nested);
    REQUIRE(p.ctx->replace_body(node(*p.ctx, "2.2"), "<p>new</p>\nFrom me\n").ok());
    std::string expected = nested;
    auto at = expected.find("<p>alt 2</p>");
    expected.replace(at, 12, "<p>new</p>\nFrom me");
    CHECK(spliced(p) == expected);
    // Overlapping edits are a bug in a pass, refused rather than written.
    CHECK_FALSE(p.ctx->replace_body(node(*p.ctx, "2.2"), "x").ok());
}

TEST_CASE("CR-only messages are never rewritten")
{
    auto p = parse("Subject: a\rContent-Type: text/plain\r\rbody\r");
    CHECK(p.ctx->eol() == Eol::CR);
    if (p.ctx->message() && !p.ctx->nodes().empty())
        CHECK_FALSE(p.ctx->add_header(p.ctx->nodes()[0], "X-A", " 1").ok());
    CHECK_FALSE(p.ctx->changed());
}

namespace {

// Whether the process has the gconv module `file` (e.g. "KOI8-R.so") loaded.
bool gconv_loaded(const char *file)
{
    struct Query {
        const char *file;
        bool found;
    } q{file, false};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
            auto *query = static_cast<Query *>(data);
            const char *slash = std::strrchr(info->dlpi_name, '/');
            if (slash && std::strstr(info->dlpi_name, "/gconv/") && std::strcmp(slash + 1, query->file) == 0) query->found = true;
            return 0;
        },
        &q);
    return q.found;
}

// A converter from `charset` opened and closed, as GMime does for a header value, and then
// other modules' converters released: glibc unloads a module no converter holds once others
// have been released twice more (gconv_dl.c).
void convert_and_move_on(const char *charset)
{
    for (const char *cs : {charset, "CP1253", "KOI8-R", "CP1253", "KOI8-R", "CP1253"}) {
        GIConv cd = g_iconv_open("UTF-8", cs);
        REQUIRE(cd != reinterpret_cast<GIConv>(-1));
        g_iconv_close(cd);
    }
}

} // namespace

TEST_CASE("charsets: the converters a message's header values need stay loaded after its parse")
{
    CHECK(encoded_word_charsets("Subject: =?ISO-2022-JP?B?GyRC?= =?iso-8859-1*en?q?x?= =?iso-2022-jp?B?eA==?=\n"
                                "X: =?bad?X?y?= a=?b ?= =??Q?x?= =?a b?Q?x?= =?koi8-r?Q?") ==
          std::vector<std::string>{"ISO-2022-JP", "iso-8859-1", "koi8-r"});
    // The premise: a module no converter holds is unloaded (IBM1047: no test message uses it).
    convert_and_move_on("IBM1047");
    CHECK(!gconv_loaded("IBM1047.so"));
    // A message whose Subject GMime decodes from ISO-8859-13: its module stays.
    auto p = parse("Subject: =?ISO-8859-13?Q?=E0ia?=\n\nbody\n");
    REQUIRE(p.ctx);
    convert_and_move_on("ISO-8859-13");
    CHECK(gconv_loaded("ISO8859-13.so"));
    // An 8-bit header value: GMime's fallback, ISO-8859-1, stays.
    auto eight_bit = parse("Subject: caf\xe9\n\nbody\n");
    convert_and_move_on("ISO-8859-1");
    CHECK(gconv_loaded("ISO8859-1.so"));
    CHECK(keep_charset("iso-8859-13"));
    CHECK(!keep_charset("UTF-8"));
    CHECK(!keep_charset("x-no-such-charset"));
}
