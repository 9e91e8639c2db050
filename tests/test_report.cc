// The report's JSON (MessageReport::to_json), one entry type at a time. Every expected line is
// written by hand from README.md ("Report", "cid: and mid: references", "message/external-body",
// "Signed mail"): member names and order, nulls, and which members are left out.
#include "report.hh"

#include "data_report.hh"

#include <doctest/doctest.h>
#include <json-glib/json-glib.h>

#include <memory>
#include <set>
#include <string>

using namespace mimeuri;

namespace {

// The README's example report: message 1 of in.mbox, nothing found.
MessageReport base()
{
    MessageReport r;
    r.number = 1;
    r.source = "in.mbox";
    r.message_id = "x@example.org";
    return r;
}

// The README's line with `tail` in place of its closing "}" (the arrays that follow).
std::string line(const std::string &refs, const std::string &bodies, const std::string &labels,
                 const std::string &errors, const std::string &tail = "")
{
    return "{\"index\":1,\"source\":\"in.mbox\",\"offset\":0,\"message_id\":\"x@example.org\",\"changed\":false,\"refs\":[" + refs +
           "],\"external_bodies\":[" + bodies + "],\"labels\":[" + labels + "],\"errors\":[" + errors + "]" + tail +
           "}";
}

} // namespace

TEST_CASE("report: the README's example line; message_id null when there is none")
{
    MessageReport r = base();
    CHECK(r.to_json() == "{\"index\":1,\"source\":\"in.mbox\",\"offset\":0,\"message_id\":\"x@example.org\",\"changed\":false,"
                         "\"refs\":[],\"external_bodies\":[],\"labels\":[],\"errors\":[]}");
    r.message_id.clear();
    r.changed = true;
    r.number = 12;
    r.offset = 4096; // its "From " line in the input
    CHECK(r.to_json() == "{\"index\":12,\"source\":\"in.mbox\",\"offset\":4096,\"message_id\":null,\"changed\":true,"
                         "\"refs\":[],\"external_bodies\":[],\"labels\":[],\"errors\":[]}");
}

TEST_CASE("report: refs entries")
{
    MessageReport r = base();
    RefEntry a; // a cid: repaired, its target in this message
    a.part = "1";
    a.attr = "img@src";
    a.url = "cid:<img@x>";
    a.kind = RefEntry::Kind::Cid;
    a.status = RefEntry::Status::Resolved;
    a.action = RefEntry::Action::Repaired;
    a.target = "2";
    RefEntry b; // a mid: to another message
    b.part = "1";
    b.attr = "a@href";
    b.url = "mid:m@x/c@x";
    b.kind = RefEntry::Kind::Mid;
    b.status = RefEntry::Status::Resolved;
    b.target = "2";
    b.target_message = "m@x";
    b.target_source = "b.mbox"; // where that message lives: its input and offset
    b.target_offset = 172;
    RefEntry c; // a dangling location reference
    c.part = "1.1";
    c.attr = "style";
    c.url = "pic.png";
    c.kind = RefEntry::Kind::Location;
    c.status = RefEntry::Status::Dangling;
    RefEntry d; // in signed content: kept
    d.part = "1";
    d.attr = "img@src";
    d.url = "cid:a@x";
    d.status = RefEntry::Status::Ambiguous;
    d.action = RefEntry::Action::Kept;
    d.reason = "signed";
    d.kept = "smime";
    RefEntry e; // a cid: only a Content-Location names (Blink's MHTML), extracted
    e.part = "1";
    e.attr = "img@src";
    e.url = "cid:b@x";
    e.matched = "content-location";
    e.status = RefEntry::Status::Resolved;
    e.action = RefEntry::Action::Extracted;
    e.target = "3";
    r.refs = {a, b, c, d, e};
    CHECK(r.to_json() ==
          line("{\"part\":\"1\",\"attr\":\"img@src\",\"url\":\"cid:<img@x>\",\"kind\":\"cid\",\"status\":\"resolved\","
               "\"action\":\"repaired\",\"target\":\"2\",\"target_message\":null,\"target_source\":null,\"target_offset\":null},"
               "{\"part\":\"1\",\"attr\":\"a@href\",\"url\":\"mid:m@x/c@x\",\"kind\":\"mid\",\"status\":\"resolved\","
               "\"action\":\"none\",\"target\":\"2\",\"target_message\":\"m@x\",\"target_source\":\"b.mbox\",\"target_offset\":172},"
               "{\"part\":\"1.1\",\"attr\":\"style\",\"url\":\"pic.png\",\"kind\":\"location\",\"status\":\"dangling\","
               "\"action\":\"none\",\"target\":null,\"target_message\":null,\"target_source\":null,\"target_offset\":null},"
               "{\"part\":\"1\",\"attr\":\"img@src\",\"url\":\"cid:a@x\",\"kind\":\"cid\",\"status\":\"ambiguous\","
               "\"action\":\"kept\",\"reason\":\"signed\",\"kept\":\"smime\",\"target\":null,\"target_message\":null,\"target_source\":null,\"target_offset\":null},"
               "{\"part\":\"1\",\"attr\":\"img@src\",\"url\":\"cid:b@x\",\"kind\":\"cid\",\"status\":\"resolved\","
               "\"matched\":\"content-location\",\"action\":\"extracted\",\"target\":\"3\",\"target_message\":null,\"target_source\":null,\"target_offset\":null}",
               "", "", ""));
    CHECK(r.dangling() == 1);
    CHECK(r.dangling_mid() == 0);
    r.refs[1].status = RefEntry::Status::Dangling;
    CHECK(r.dangling_mid() == 1);
}

TEST_CASE("report: external_bodies entries")
{
    MessageReport r = base();
    ExternalBodyEntry a; // access-type=URL, normalized
    a.part = "2";
    a.access_type = "url";
    a.url = "http://example.org/~user/a%20b.txt";
    a.url_before = "http://example.org/~user/a b.txt";
    a.inner = ExternalBodyEntry::Fields{};
    ExternalBodyEntry::set_field(*a.inner, "content-type", "text/plain");
    ExternalBodyEntry::set_field(*a.inner, "content-id", "<x@y>");
    ExternalBodyEntry::set_field(*a.inner, "content-type", "image/png"); // replaced in its place
    a.status = ExternalBodyEntry::Status::Normalized;
    ExternalBodyEntry b; // anon-ftp converted, in signed content: kept
    b.part = "3";
    b.access_type = "anon-ftp";
    b.url = "ftp://ftp.example.org/pub/f.txt";
    b.inner = ExternalBodyEntry::Fields{};
    b.original = ExternalBodyEntry::Fields{{"access-type", "ANON-FTP"}, {"site", "ftp.example.org"}, {"name", "f.txt"}};
    b.kept = "dkim";
    b.status = ExternalBodyEntry::Status::Kept;
    b.reason = "legacy access type";
    ExternalBodyEntry c; // a Content-Type that cannot be parsed
    c.part = "4";
    c.status = ExternalBodyEntry::Status::Invalid;
    c.reason = "Content-Type not parseable: x";
    ExternalBodyEntry d; // a pass that stopped before deciding: no status, no reason
    d.part = "5";
    r.external_bodies = {a, b, c, d};
    CHECK(r.to_json() ==
          line("",
               "{\"part\":\"2\",\"access_type\":\"url\",\"url\":\"http://example.org/~user/a%20b.txt\","
               "\"url_before\":\"http://example.org/~user/a b.txt\","
               "\"inner\":{\"content-type\":\"image/png\",\"content-id\":\"<x@y>\"},"
               "\"status\":\"normalized\",\"reason\":null},"
               "{\"part\":\"3\",\"access_type\":\"anon-ftp\",\"url\":\"ftp://ftp.example.org/pub/f.txt\","
               "\"url_before\":null,\"inner\":{},"
               "\"original\":{\"access-type\":\"ANON-FTP\",\"site\":\"ftp.example.org\",\"name\":\"f.txt\"},"
               "\"kept\":\"dkim\",\"status\":\"kept\",\"reason\":\"legacy access type\"},"
               "{\"part\":\"4\",\"access_type\":null,\"url\":null,\"url_before\":null,\"status\":\"invalid\","
               "\"reason\":\"Content-Type not parseable: x\"},"
               "{\"part\":\"5\",\"access_type\":null,\"url\":null,\"url_before\":null}",
               "", ""));
}

TEST_CASE("report: labels and errors entries")
{
    MessageReport r = base();
    r.labels = {{"TEXT", "ContentType:multipart/mixed?boundary=\"b\"", std::nullopt},
                {"1", "ContentType:text/plain", "pgp"}};
    r.add_error("", ErrorCode::Limit, "references: time limit");
    r.add_error("2.1", ErrorCode::Html, "bad markup");
    CHECK(r.error_count() == 2);
    CHECK(r.to_json() ==
          line("", "",
               "{\"part\":\"TEXT\",\"label\":\"ContentType:multipart/mixed?boundary=\\\"b\\\"\"},"
               "{\"part\":\"1\",\"label\":\"ContentType:text/plain\",\"kept\":\"pgp\"}",
               "{\"part\":\"\",\"code\":\"limit\",\"message\":\"references: time limit\"},"
               "{\"part\":\"2.1\",\"code\":\"html\",\"message\":\"bad markup\"}"));
}

TEST_CASE("report: kept, unreferenced and signatures follow, in the order first set")
{
    MessageReport r = base();
    r.add_kept("2", "content-id", "dkim");
    r.set_unreferenced({{"3", "TEXT"}});
    r.add_kept("", "summary-header", "dkim"); // the member is already there
    SignatureEntry s; // the README's example
    s.kind = "dkim";
    s.part = "3";
    s.state = SignatureEntry::State::Intact;
    s.kept = true;
    s.domain = "example.org";
    s.selector = "sel";
    SignatureEntry t;
    t.kind = "smime";
    t.part = "TEXT";
    t.state = SignatureEntry::State::Broken;
    t.detail = "broken by this run's edits (--signed=rewrite)";
    r.set_signatures({s, t});
    CHECK(r.to_json() ==
          line("", "", "", "",
               ",\"kept\":[{\"part\":\"2\",\"edit\":\"content-id\",\"kept\":\"dkim\"},"
               "{\"part\":\"\",\"edit\":\"summary-header\",\"kept\":\"dkim\"}],"
               "\"unreferenced\":[{\"part\":\"3\",\"related\":\"TEXT\"}],"
               "\"signatures\":[{\"kind\":\"dkim\",\"part\":\"3\",\"state\":\"intact\",\"kept\":true,"
               "\"domain\":\"example.org\",\"selector\":\"sel\"},"
               "{\"kind\":\"smime\",\"part\":\"TEXT\",\"state\":\"broken\",\"kept\":false,"
               "\"detail\":\"broken by this run's edits (--signed=rewrite)\"}]"));

    MessageReport u = base(); // unreferenced first (the references pass), kept after it
    u.set_unreferenced({});
    u.add_kept("", "summary-header", "arc");
    u.set_signatures({});
    CHECK(u.to_json() == line("", "", "", "",
                              ",\"unreferenced\":[],\"kept\":[{\"part\":\"\",\"edit\":\"summary-header\",\"kept\":\"arc\"}],"
                              "\"signatures\":[]"));
}

TEST_CASE("report: strings are escaped as JSON, invalid UTF-8 replaced by U+FFFD")
{
    MessageReport r = base();
    r.source = "a \"b\" \\ c\n\x01";
    r.message_id = "\xff@\xc3\xa9"; // an invalid byte, then a valid é
    CHECK(r.to_json() == "{\"index\":1,\"source\":\"a \\\"b\\\" \\\\ c\\n\\u0001\",\"offset\":0,\"message_id\":\"\xef\xbf\xbd@\xc3\xa9\","
                         "\"changed\":false,\"refs\":[],\"external_bodies\":[],\"labels\":[],\"errors\":[]}");
}

TEST_CASE("report: every octet escaped as JSON wants it (U+001F too), and the line reads back")
{
    // The expected escape of each ASCII octet, by hand from RFC 8259 7: the two-character
    // escapes where there is one, \u00xx for the other control characters (U+001F included:
    // json-glib's generator, which wrote the report before, left it raw, which is not JSON),
    // DEL as \u007f as before (allowed raw, kept for the same bytes), the rest as it is.
    auto expected = [](int c) -> std::string {
        switch (c) {
        case 0: return "\xef\xbf\xbd"; // not UTF-8 text: replaced, as any invalid octet
        case '\b': return "\\b";
        case '\f': return "\\f";
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case 0x7f: return "\\u007f";
        default: break;
        }
        if (c < 0x20) {
            char u[8];
            g_snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
            return u;
        }
        if (c >= 0x80) return "\xef\xbf\xbd";
        return std::string(1, static_cast<char>(c));
    };
    for (int c = 0; c < 256; ++c) {
        CAPTURE(c);
        MessageReport r = base();
        r.source = std::string("<") + static_cast<char>(c) + ">";
        CHECK(r.to_json() == "{\"index\":1,\"source\":\"<" + expected(c) +
                                 ">\",\"offset\":0,\"message_id\":\"x@example.org\",\"changed\":false,\"refs\":[],"
                                 "\"external_bodies\":[],\"labels\":[],\"errors\":[]}");
    }
    // All of ASCII in one string: json-glib's parser reads the line back to it.
    MessageReport r = base();
    std::string all;
    for (int c = 1; c < 128; ++c) all += static_cast<char>(c);
    r.source = all;
    std::string line = r.to_json();
    std::unique_ptr<JsonParser, decltype(&g_object_unref)> parser(json_parser_new(), g_object_unref);
    REQUIRE(json_parser_load_from_data(parser.get(), line.data(), static_cast<gssize>(line.size()), nullptr));
    JsonObject *o = json_node_get_object(json_parser_get_root(parser.get()));
    CHECK(std::string(json_object_get_string_member(o, "source")) == all);
}

TEST_CASE("report: a line with many entries is handed on in pieces as it is made, never held whole")
{
    MessageReport rep;
    rep.number = 1;
    rep.source = "in.eml";
    // Long URLs: a line holds at most MessageReport::kListMax entries of a list.
    for (std::size_t i = 0; i < MessageReport::kListMax; ++i) {
        RefEntry r;
        r.part = "1";
        r.attr = "img@src";
        r.url = "cid:image" + std::to_string(i) + "-" + std::string(400, 'x') + "@example.org";
        rep.refs.push_back(r);
    }
    const std::string whole = rep.to_json();
    REQUIRE(whole.size() > 4 * (64 << 10));
    std::string out, got;
    std::size_t pieces = 0, largest = 0;
    const std::function<Status(std::string &)> flush = [&](std::string &b) {
        ++pieces;
        largest = std::max(largest, b.size());
        got += b;
        b.clear();
        return ok();
    };
    REQUIRE(rep.write_json(out, &flush));
    got += out;
    CHECK(got == whole);
    CHECK(pieces >= 4);
    CHECK(largest < (64 << 10) + 1024); // handed on once past 64 KiB, between two entries
    // A write that fails stops the handing on, and its error comes back.
    std::size_t calls = 0;
    const std::function<Status(std::string &)> full = [&](std::string &b) -> Status {
        ++calls;
        b.clear();
        return Error{Code::TempFail, "disk full"};
    };
    out.clear();
    auto s = rep.write_json(out, &full);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Code::TempFail);
    CHECK(calls == 1);
}

TEST_CASE("report: a long list is cut at kListMax entries, the count of the rest in \"omitted\"")
{
    MessageReport rep;
    rep.number = 1;
    rep.source = "in.eml";
    for (int i = 0; i < 1234; ++i) {
        RefEntry r;
        r.part = "1";
        r.attr = "img@src";
        r.url = "cid:image" + std::to_string(i) + "@example.org";
        rep.refs.push_back(r);
    }
    for (std::size_t i = 0; i < MessageReport::kListMax; ++i) rep.add_error("", ErrorCode::Limit, "e" + std::to_string(i));
    for (int i = 0; i < 501; ++i) rep.section<DataReport>().entries.push_back({.part = "1", .attr = "img@src", .type = "image/png"});
    const std::string line = rep.to_json();
    // Read back by a second reader (json-glib): the lists and the counts.
    std::unique_ptr<JsonParser, decltype(&g_object_unref)> parser(json_parser_new(), g_object_unref);
    REQUIRE(json_parser_load_from_data(parser.get(), line.data(), static_cast<gssize>(line.size()), nullptr));
    JsonObject *o = json_node_get_object(json_parser_get_root(parser.get()));
    CHECK(json_array_get_length(json_object_get_array_member(o, "refs")) == MessageReport::kListMax);
    CHECK(json_array_get_length(json_object_get_array_member(o, "errors")) == MessageReport::kListMax);
    CHECK(json_array_get_length(json_object_get_array_member(o, "data")) == MessageReport::kListMax);
    JsonObject *refs0 = json_array_get_object_element(json_object_get_array_member(o, "refs"), 0);
    CHECK(std::string(json_object_get_string_member(refs0, "url")) == "cid:image0@example.org"); // the first kept
    REQUIRE(json_object_has_member(o, "omitted"));
    JsonObject *omitted = json_object_get_object_member(o, "omitted");
    CHECK(json_object_get_int_member(omitted, "refs") == 1234 - 500);
    CHECK(json_object_get_int_member(omitted, "data") == 1);
    CHECK_FALSE(json_object_has_member(omitted, "errors")); // exactly kListMax: nothing left out
    CHECK(json_object_get_size(omitted) == 2);
    // The counts in memory keep every entry (the summary, the service's counters).
    CHECK(rep.refs.size() == 1234);
    CHECK(rep.error_count() == MessageReport::kListMax);
    // A run on the command line writes every entry (kNoListMax), or as many as --report-max.
    const std::string whole = rep.to_json(MessageReport::kNoListMax);
    REQUIRE(json_parser_load_from_data(parser.get(), whole.data(), static_cast<gssize>(whole.size()), nullptr));
    o = json_node_get_object(json_parser_get_root(parser.get()));
    CHECK(json_array_get_length(json_object_get_array_member(o, "refs")) == 1234);
    CHECK(json_array_get_length(json_object_get_array_member(o, "data")) == 501);
    CHECK_FALSE(json_object_has_member(o, "omitted"));
    const std::string ten = rep.to_json(10);
    REQUIRE(json_parser_load_from_data(parser.get(), ten.data(), static_cast<gssize>(ten.size()), nullptr));
    o = json_node_get_object(json_parser_get_root(parser.get()));
    CHECK(json_array_get_length(json_object_get_array_member(o, "errors")) == 10);
    CHECK(json_object_get_int_member(json_object_get_object_member(o, "omitted"), "refs") == 1234 - 10);
    CHECK(json_object_get_int_member(json_object_get_object_member(o, "omitted"), "errors") == 500 - 10);
    // A line under the bound has no "omitted".
    MessageReport small;
    small.refs.resize(3);
    CHECK(small.to_json().find("omitted") == std::string::npos);
}

TEST_CASE("every error code has a word of its own, the one the report writes")
{
    std::set<std::string> words;
    for (int i = 0; i < kErrorCodes; ++i) {
        const auto code = static_cast<ErrorCode>(i);
        const std::string word = json_name(code);
        CAPTURE(i);
        CHECK_FALSE(word.empty());
        CHECK(word.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string::npos);
        CHECK(words.insert(word).second); // a code missing from the table would borrow another's
        CHECK_FALSE(std::string(what_it_means(code)).empty());
    }
    MessageReport r;
    r.add_error("1", ErrorCode::HtmlWorkLimit, "x");
    r.add_error("", ErrorCode::PartLimit, "y");
    const std::string line = r.to_json();
    CHECK(line.find("\"code\":\"html-work-limit\"") != std::string::npos);
    CHECK(line.find("\"code\":\"part-limit\"") != std::string::npos);
    CHECK(std::string(what_it_means(ErrorCode::PartLimit)) == "over --max-parts");
}
