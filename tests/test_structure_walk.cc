// The structure walk (src/mime/structure.cc) against GMime's parse: where the walk reads a
// message, it finds the entities GMime finds, in the same order, of the same types, and each
// leaf's content where GMime's content stream has it (after MessageContext::content_span's
// correction of the line break before a delimiter line). Over every corpus message, every
// golden case's input and the kept fuzz regressions, and crafted edges.
#include "helpers.hh"
#include "structure.hh"

#include <doctest/doctest.h>

#include <gmime/gmime.h>

#include <glib.h>

using namespace mimeuri;

namespace {

struct Seen {
    WalkEntity::Kind kind;
    std::string type; // type/subtype, lower case
    std::int64_t begin{0}, end{0};
};

void visit(GMimeObject *o, const std::string &m, std::vector<Seen> &out)
{
    GMimeContentType *ct = g_mime_object_get_content_type(o);
    gchar *t = g_ascii_strdown(g_mime_content_type_get_media_type(ct), -1);
    gchar *s = g_ascii_strdown(g_mime_content_type_get_media_subtype(ct), -1);
    Seen seen{WalkEntity::Kind::Leaf, std::string(t) + "/" + s};
    g_free(t);
    g_free(s);
    if (GMIME_IS_MULTIPART(o)) {
        seen.kind = WalkEntity::Kind::Multipart;
        out.push_back(seen);
        for (int i = 0; i < g_mime_multipart_get_count(GMIME_MULTIPART(o)); ++i)
            visit(g_mime_multipart_get_part(GMIME_MULTIPART(o), i), m, out);
    } else if (GMIME_IS_MESSAGE_PART(o)) {
        seen.kind = WalkEntity::Kind::Message;
        out.push_back(seen);
        GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));
        if (inner && g_mime_message_get_mime_part(inner)) visit(g_mime_message_get_mime_part(inner), m, out);
    } else if (GMIME_IS_PART(o)) {
        GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o));
        GMimeStream *st = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
        if (st) {
            seen.begin = st->bound_start;
            seen.end = st->bound_end < 0 ? static_cast<std::int64_t>(m.size()) : st->bound_end;
            // GMime drops two bytes before a delimiter line that ends in CRLF, even after a
            // bare LF (MessageContext::content_span): the real line break.
            const auto e = static_cast<std::size_t>(seen.end);
            if (e < m.size() && m.compare(e, 3, "\n--") != 0 && m.compare(e, 4, "\r\n--") != 0)
                for (std::size_t i = e; i < std::min(m.size(), e + 3); ++i)
                    if (m[i] == '\n') {
                        seen.end = static_cast<std::int64_t>(i > e && m[i - 1] == '\r' ? i - 1 : i);
                        break;
                    }
        }
        out.push_back(seen);
    }
}

// GMime's entities of m, in document order.
std::vector<Seen> gmime_entities(const std::string &m)
{
    std::vector<Seen> out;
    GMimeStream *s = g_mime_stream_mem_new_with_buffer(m.data(), m.size());
    GMimeParser *p = g_mime_parser_new_with_stream(s);
    g_mime_parser_set_persist_stream(p, TRUE);
    g_mime_parser_set_format(p, GMIME_FORMAT_MESSAGE);
    GMimeMessage *msg = g_mime_parser_construct_message(p, nullptr);
    if (msg && g_mime_message_get_mime_part(msg)) visit(g_mime_message_get_mime_part(msg), m, out);
    if (msg) g_object_unref(msg);
    g_object_unref(p);
    g_object_unref(s);
    return out;
}

// Whether the walk, where it reads m, agrees with GMime; counts the messages it reads.
void agrees(const std::string &m, std::size_t &walked)
{
    auto w = walk_structure(m, 10000, 64);
    // The walk into a vector kept from message to message (the inert check's) reads the same.
    static std::vector<WalkEntity> kept;
    const bool again = walk_structure(m, 10000, 64, kept);
    CHECK(again == w.has_value());
    if (!w) return;
    REQUIRE(kept.size() == w->size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
        CHECK(kept[i].kind == (*w)[i].kind);
        CHECK(kept[i].type + "/" + kept[i].subtype == (*w)[i].type + "/" + (*w)[i].subtype);
        CHECK(kept[i].content_begin == (*w)[i].content_begin);
        CHECK(kept[i].content_end == (*w)[i].content_end);
    }
    ++walked;
    const std::vector<Seen> g = gmime_entities(m);
    REQUIRE(w->size() == g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
        CAPTURE(i);
        const WalkEntity &e = (*w)[i];
        CHECK(e.kind == g[i].kind);
        CHECK(e.type + "/" + e.subtype == g[i].type);
        if (e.kind != WalkEntity::Kind::Leaf || e.content_begin == e.content_end) continue;
        CHECK(static_cast<std::int64_t>(e.content_begin) == g[i].begin);
        CHECK(static_cast<std::int64_t>(e.content_end) == g[i].end);
    }
}

} // namespace

TEST_CASE("structure walk: the entities GMime finds, where the walk reads a message")
{
    const std::string head = "From: a@x\nMessage-ID: <w@x>\nMIME-Version: 1.0\n";
    const std::vector<std::pair<std::string, bool>> edges = {
        {head + "\nplain\n", true},
        {head + "Content-Type: multipart/mixed; boundary=\"o o\"\n\npre\n--o o\nContent-Type: multipart/alternative;\n"
                " boundary=i\n\n--i\n\nt\n-- \n--i  \nContent-Type: TEXT/Html\r\n\r\n<p>\r\n--i--\n\n--o o\n"
                "Content-Type: message/rfc822\n\nSubject: in\nContent-Type: text/html\n\n<b>\n--o o--\nepilogue\n",
         true},
        {head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/delivery-status\n\nx\n--b--\n", true},
        {head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--bc\n--b--\n", false},
        // Not closed: ended by the end of the input, or by a parent's delimiter line.
        {head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nunclosed\n", true},
        {head + "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/alternative; boundary=i\n\n"
                "--i\n\nt\n--o\nContent-Type: text/html\n\n<p>\n--o--\n",
         true},
        {head + "Content-Type: multipart/mixed; boundary=b\n\nonly a preamble\n", true},
        {head + "Content-Type: multipart/mixed; boundary*=b\n\n--b\n\nx\n--b--\n", false},
        {head + "Content-Type: multipart/digest; boundary=b\n\n--b\n\nSubject: s\n\nx\n--b--\n", false},
        {head + "Content-Type: message/partial; id=x\n\nSubject: s\n", false},
        {head + "Content-Type: text/html (comment)\n\n<p>\n", false},
        {head + "Content-Type: text/html\nContent-Type: text/plain\n\n<p>\n", false},
        {head + "Not a field\n\nbody\n", false},
        {head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n--b--\n", false},
    };
    for (const auto &edge : edges) {
        CAPTURE(edge.first);
        std::size_t walked = 0;
        agrees(edge.first, walked);
        CHECK(walked == (edge.second ? 1u : 0u));
    }
}

TEST_CASE("structure walk: every corpus message, golden input and fuzz regression as GMime reads it")
{
    std::vector<std::string> paths;
    for (const auto &row : testing::corpus_index()) paths.push_back(std::string(MIMEURI_CORPUS) + "/" + row.at(0));
    if (paths.empty()) return testing::skip("corpus not found at " MIMEURI_CORPUS);
    for (const char *dir : {MIMEURI_TESTDATA "/cases", MIMEURI_TESTDATA "/fuzz-regressions"}) {
        GDir *d = g_dir_open(dir, 0, nullptr);
        if (!d) continue;
        while (const char *n = g_dir_read_name(d)) {
            const std::string p = std::string(dir) + "/" + n;
            paths.push_back(g_file_test(p.c_str(), G_FILE_TEST_IS_DIR) ? p + "/input.eml" : p);
        }
        g_dir_close(d);
    }
    std::size_t walked = 0, read = 0;
    for (const std::string &p : paths) {
        if (!g_file_test(p.c_str(), G_FILE_TEST_IS_REGULAR)) continue;
        CAPTURE(p);
        const std::string m = testing::read_file(p);
        ++read;
        agrees(m, walked);
    }
    MESSAGE(walked << " of " << read << " messages walked");
    CHECK(walked * 2 > read); // the walk reads most real mail
}

// Issue 53: the inert check walks message after message into one vector; its buffer, once
// large enough, is never allocated again (on the parent, each walk returned a new vector: its
// growth and its frees were 1.4% of the default job's instructions on the corpus mbox).
TEST_CASE("structure walk: a vector walked into again keeps its buffer")
{
    const std::string head = "From: a@x\nMessage-ID: <w@x>\nMIME-Version: 1.0\n";
    const std::string multi = head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n"
                                     "--b\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
                                     "<p>\n--b\n\ny\n--b--\n";
    const std::string plain = head + "\nbody\n";
    std::vector<WalkEntity> out;
    REQUIRE(walk_structure(multi, 10000, 64, out));
    REQUIRE(out.size() == 4);
    const WalkEntity *buffer = out.data();
    const std::size_t capacity = out.capacity();
    REQUIRE(walk_structure(plain, 10000, 64, out));
    CHECK(out.size() == 1);
    CHECK(out[0].type == "text");
    CHECK(out.data() == buffer);
    REQUIRE(walk_structure(multi, 10000, 64, out));
    CHECK(out.size() == 4);
    CHECK(out[2].subtype == "html");
    CHECK(out[2].charset == "utf-8");
    CHECK(out[2].encoding == "quoted-printable");
    CHECK(out.data() == buffer);
    CHECK(out.capacity() == capacity);
    // Not sure of a message: false, and the next walk starts afresh.
    CHECK_FALSE(walk_structure(head + "Not a field\n\nbody\n", 10000, 64, out));
    REQUIRE(walk_structure(plain, 10000, 64, out));
    CHECK(out.size() == 1);
}
