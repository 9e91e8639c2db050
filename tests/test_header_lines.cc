// The one reader of header lines and fields (src/input/header_lines.hh), on the inputs its callers
// meet: CRLF and LF, folded fields, no final line break, a NUL, a bare CR, white space
// before the colon, a block with no empty line, a folded first line.
#include "header_lines.hh"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace mimeuri;
using namespace std::string_literals;

namespace {

struct Read {
    std::vector<Field> fields;
    std::size_t end{0};
    bool by_empty_line{false};
};

Read read(std::string_view m, std::size_t at = 0)
{
    Read r;
    HeaderFields h(m, at);
    for (Field f; h.next(f);) r.fields.push_back(f);
    r.end = h.end();
    r.by_empty_line = h.ended_by_empty_line();
    return r;
}

// The fields read, name and value each, against the table.
void check_fields(const Read &r, const std::vector<std::pair<std::string_view, std::string_view>> &want)
{
    REQUIRE(r.fields.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(r.fields[i].name == want[i].first);
        CHECK(r.fields[i].value == want[i].second);
    }
}

} // namespace

TEST_CASE("header_lines: lines, with and without a final LF, CRLF kept in text, content() drops it")
{
    const std::string_view m = "a\r\nb\n\r\nc";
    Lines lines(m);
    std::vector<Line> got;
    for (Line l; lines.next(l);) got.push_back(l);
    REQUIRE(got.size() == 4);
    CHECK(got[0].text == "a\r");
    CHECK(got[0].content() == "a");
    CHECK(got[0].next == 3);
    CHECK(got[1].text == "b");
    CHECK(got[2].empty());
    CHECK_FALSE(got[3].lf);
    CHECK(got[3].text == "c");
    CHECK(got[3].next == m.size());
    // A bare CR is a byte of its line, not a line break; a last line "x\r" keeps its CR.
    Lines bare("x\ry\rz\r");
    Line l;
    REQUIRE(bare.next(l));
    CHECK(l.text == "x\ry\rz\r");
    CHECK(l.content() == "x\ry\rz\r");
    CHECK_FALSE(bare.next(l));
    CHECK_FALSE(Lines("").next(l));
}

TEST_CASE("header_lines: fields of an LF block, folded, and where the body starts")
{
    const std::string_view m = "From: a@b\nSubject: one\n\ttwo\n  three\nX:\n\nbody\nNot: a field\n";
    Read r = read(m);
    check_fields(r, {{"From", " a@b\n"}, {"Subject", " one\n\ttwo\n  three\n"}, {"X", "\n"}});
    CHECK(r.fields[0].raw == "From: a@b\n");
    CHECK(r.fields[1].first.text == "Subject: one");
    CHECK(r.by_empty_line);
    CHECK(m.substr(r.end) == "body\nNot: a field\n");
}

TEST_CASE("header_lines: CRLF block; value spans keep CRLF; an empty CRLF line ends it")
{
    const std::string_view m = "A: 1\r\nB: 2\r\n 3\r\n\r\nbody";
    Read r = read(m);
    check_fields(r, {{"A", " 1\r\n"}, {"B", " 2\r\n 3\r\n"}});
    CHECK(r.fields[1].raw == "B: 2\r\n 3\r\n");
    CHECK(r.fields[1].begin == 6);
    CHECK(r.fields[1].end == 16);
    CHECK(m.substr(r.end) == "body");
    CHECK(r.by_empty_line);
}

TEST_CASE("header_lines: a block that ends at the end of the input, with or without a final LF")
{
    Read r = read("A: 1\nB: 2");
    REQUIRE(r.fields.size() == 2);
    CHECK(r.fields[1].value == " 2");
    CHECK_FALSE(r.fields[1].first.lf);
    CHECK_FALSE(r.by_empty_line);
    CHECK(r.end == 9);
    Read folded = read("A: 1\n 2\n");
    REQUIRE(folded.fields.size() == 1);
    CHECK(folded.fields[0].value == " 1\n 2\n");
    CHECK_FALSE(folded.by_empty_line);
    CHECK(folded.end == 8);
    Read none = read("");
    CHECK(none.fields.empty());
    CHECK(none.end == 0);
    Read empty_first = read("\r\nA: 1\n");
    CHECK(empty_first.fields.empty());
    CHECK(empty_first.by_empty_line);
    CHECK(empty_first.end == 2);
}

TEST_CASE("header_lines: white space before the colon, no colon, NUL, bare CR, a folded first line")
{
    const std::string m = "Subject : x\nno colon here\nN\0L: v\0w\nC: a\rb\n x\r\n"s;
    Read r = read(m);
    REQUIRE(r.fields.size() == 4);
    CHECK(r.fields[0].name == "Subject ");
    CHECK(r.fields[0].value == " x\n");
    CHECK_FALSE(r.fields[1].has_colon());
    CHECK(r.fields[1].name.empty());
    CHECK(r.fields[1].first.text == "no colon here");
    CHECK(r.fields[2].name == "N\0L"s);
    CHECK(r.fields[2].value == " v\0w\n"s);
    CHECK(r.fields[3].value == " a\rb\n x\r\n");
    CHECK_FALSE(r.by_empty_line);
    // A block starting with white space: that line and its folds are one field, an orphan.
    Read o = read(" lead: x\n\tmore\nA: 1\n\n");
    REQUIRE(o.fields.size() == 2);
    CHECK(o.fields[0].orphan());
    CHECK(o.fields[0].raw == " lead: x\n\tmore\n");
    CHECK(o.fields[0].name == " lead");
    CHECK_FALSE(o.fields[1].orphan());
    // A line of white space only folds too (readers differ; the callers decide).
    Read ws = read("A: 1\n \nB: 2\n\n");
    REQUIRE(ws.fields.size() == 2);
    CHECK(ws.fields[0].raw == "A: 1\n \n");
}

TEST_CASE("header_lines: a block read from an offset, and skip()")
{
    const std::string_view m = "preamble\n--b\nContent-Type: text/html\n\n<p>";
    HeaderFields h(m, 13);
    Field f;
    REQUIRE(h.next(f));
    CHECK(f.name == "Content-Type");
    CHECK(f.begin == 13);
    CHECK(h.skip() == m.size() - 3);
    CHECK(h.ended_by_empty_line());
    CHECK_FALSE(h.next(f));
}

TEST_CASE("header_lines: field_end takes the line at `at` and its folds, whatever it holds")
{
    const std::string_view m = "A: 1\n 2\n\t3\nB: 4\n";
    CHECK(field_end(m, 0) == 11);
    CHECK(field_end(m, 11) == m.size());
    CHECK(field_end(m, m.size()) == m.size());
    CHECK(field_end("A: 1\n 2", 0) == 7);       // to the end of the input
    CHECK(field_end("\n x\nB: 1\n", 0) == 4);    // an empty first line folds as well
    CHECK(field_end("A: 1\r\n 2\r\nB\r\n", 0) == 10);
}

TEST_CASE("header_lines: a lone CR with no LF as the last line ends the input, not the block")
{
    Read r = read("A: 1\n\r");
    REQUIRE(r.fields.size() == 1);
    CHECK_FALSE(r.by_empty_line);
    CHECK(r.end == 6);
    Read crlf = read("A: 1\n\r\nB");
    CHECK(crlf.by_empty_line);
    CHECK(crlf.end == 7);
}
