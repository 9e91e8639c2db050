// What the milter service asks of the MTA (src/app/milter_edit.hh): header requests checked by
// applying them the way libmilter documents them (smfi_chgheader: the index-th field of that
// name, from 1, NULL deletes; smfi_insheader: index fields above it; smfi_addheader: at the
// end), and the body streamed in chunks against apply_edits.
#include "engine.hh"
#include "milter_edit.hh"
#include "milter_texts.hh"
#include "record.hh"
#include "streamed_body.hh"

#include <doctest/doctest.h>

#include <glib.h>

#include <cerrno>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <unistd.h>
#include <string>
#include <vector>

using namespace mimeuri;

namespace {

using Fields = std::vector<HeaderField>;

// The MTA's side, applying each request to the block as it is at that moment (Postfix and
// sendmail do; the ops are ordered so that the block as it was gives the same result).
Fields apply_ops(Fields f, const std::vector<HeaderOp> &ops)
{
    auto crlf = [](const std::string &v) {
        std::string out;
        for (char c : v) {
            if (c == '\n') out += '\r';
            out += c;
        }
        return out;
    };
    for (const HeaderOp &op : ops) {
        switch (op.kind) {
        case HeaderOp::Kind::Append: f.push_back({op.name, crlf(op.value)}); break;
        case HeaderOp::Kind::Insert:
            REQUIRE(op.index >= 0);
            REQUIRE(static_cast<std::size_t>(op.index) <= f.size());
            f.insert(f.begin() + op.index, {op.name, crlf(op.value)});
            break;
        case HeaderOp::Kind::Change:
        case HeaderOp::Kind::Delete: {
            int seen = 0;
            bool found = false;
            for (std::size_t i = 0; i < f.size(); ++i) {
                if (g_ascii_strcasecmp(f[i].name.c_str(), op.name.c_str()) != 0 || ++seen != op.index) continue;
                if (op.kind == HeaderOp::Kind::Delete) f.erase(f.begin() + static_cast<std::ptrdiff_t>(i));
                else f[i].value = crlf(op.value);
                found = true;
                break;
            }
            REQUIRE(found);
            break;
        }
        }
    }
    return f;
}

std::string show(const Fields &f)
{
    std::string s;
    for (const auto &x : f) s += x.name + ":" + x.value + " | ";
    return s;
}

void check_roundtrip(const Fields &before, const Fields &after)
{
    auto ops = header_ops(before, after);
    REQUIRE(ops);
    Fields got = apply_ops(before, *ops);
    CAPTURE(show(before));
    CAPTURE(show(after));
    CAPTURE(show(got));
    CHECK(got == after);
}

} // namespace

TEST_CASE("parse_fields: names, raw values with their leading space, folded lines, CRLF or LF")
{
    Fields f = parse_fields("From: a@b\r\nSubject:  two\r\n\tlines\r\nX-Empty:\nReceived: x\n y\n");
    REQUIRE(f.size() == 4);
    CHECK(f[0] == HeaderField{"From", " a@b"});
    CHECK(f[1] == HeaderField{"Subject", "  two\r\n\tlines"});
    CHECK(f[2] == HeaderField{"X-Empty", ""});
    CHECK(f[3] == HeaderField{"Received", " x\r\n y"});
}

TEST_CASE("header_ops: a field added at the end is an append; several keep their order")
{
    Fields before = {{"From", " a"}, {"Subject", " s"}};
    Fields after = before;
    after.push_back({"Mimeuri-Refs", " resolved=1 dangling=0 ambiguous=0"});
    after.push_back({"Content-Type-URI", " ContentType:text/plain"});
    auto ops = header_ops(before, after);
    REQUIRE(ops);
    REQUIRE(ops->size() == 2);
    CHECK((*ops)[0].kind == HeaderOp::Kind::Append);
    CHECK((*ops)[0].name == "Mimeuri-Refs");
    CHECK((*ops)[1].name == "Content-Type-URI");
    check_roundtrip(before, after);
}

TEST_CASE("header_ops: a value changed in place is one smfi_chgheader of that occurrence")
{
    Fields before = {{"Received", " one"}, {"X", " x"}, {"received", " two"}, {"Content-Type", " message/external-body"}};
    Fields after = before;
    after[2].value = " two, changed\r\n folded";
    auto ops = header_ops(before, after);
    REQUIRE(ops);
    REQUIRE(ops->size() == 1);
    CHECK((*ops)[0].kind == HeaderOp::Kind::Change);
    CHECK((*ops)[0].index == 2); // the second Received, names compared without case
    CHECK((*ops)[0].value == " two, changed\n folded"); // libmilter takes LF line breaks
    check_roundtrip(before, after);
}

TEST_CASE("header_ops: removals and insertions in the middle, indices counted from the bottom up")
{
    Fields before = {{"A", " 1"}, {"B", " 1"}, {"A", " 2"}, {"B", " 2"}, {"A", " 3"}, {"C", " c"}};
    Fields after = {{"A", " 1"}, {"N", " new"}, {"B", " 1"}, {"B", " 2"}, {"A", " 3, changed"}, {"M", " m"}, {"C", " c"}};
    check_roundtrip(before, after);
    auto ops = header_ops(before, after);
    REQUIRE(ops);
    for (const HeaderOp &op : *ops) CHECK(op.kind != HeaderOp::Kind::Append); // C stays last
}

TEST_CASE("header_ops: no change, no request; the empty block")
{
    Fields f = {{"From", " a"}};
    auto ops = header_ops(f, f);
    REQUIRE(ops);
    CHECK(ops->empty());
    check_roundtrip({}, {{"X", " y"}});
    check_roundtrip({{"X", " y"}}, {});
}

TEST_CASE("header_ops: random edits of random blocks come back the same through the MTA's rules")
{
    std::mt19937 rng(7);
    const char *names[] = {"A", "a", "B", "Received", "Mimeuri-Refs"};
    for (int round = 0; round < 3000; ++round) {
        Fields before;
        int n = static_cast<int>(rng() % 8);
        for (int i = 0; i < n; ++i) before.push_back({names[rng() % 5], " v" + std::to_string(rng() % 3)});
        Fields after = before;
        int edits = static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            std::size_t at = after.empty() ? 0 : rng() % (after.size() + 1);
            switch (rng() % 3) {
            case 0: after.insert(after.begin() + static_cast<std::ptrdiff_t>(at), {names[rng() % 5], " new"}); break;
            case 1:
                if (at < after.size()) after.erase(after.begin() + static_cast<std::ptrdiff_t>(at));
                break;
            default:
                if (at < after.size()) after[at].value = " changed" + std::to_string(e);
            }
        }
        CAPTURE(round);
        check_roundtrip(before, after);
    }
}

TEST_CASE("split_edits: header edits, body edits, and an edit across the empty line refused")
{
    MessageSplit at{10, 12};
    auto s = split_edits({{0, 3, "x"}, {10, 10, "Y: z\r\n"}, {12, 15, "b"}}, at);
    REQUIRE(s);
    CHECK(s->header.size() == 2);
    CHECK(s->body.size() == 1);
    CHECK_FALSE(split_edits({{9, 11, ""}}, at));
    CHECK_FALSE(split_edits({{11, 13, ""}}, at));
}

TEST_CASE("stream_edited: the body in chunks equals apply_edits, for every chunk size")
{
    std::string msg = "Head: x\r\n\r\nline one\r\nline two <img src=\"CID:&lt;a@b&gt;\">\r\nend\r\n";
    const auto from = static_cast<std::int64_t>(msg.find("\r\n\r\n") + 4);
    const auto ref = static_cast<std::int64_t>(msg.find("CID:"));
    const auto end = static_cast<std::int64_t>(msg.find("end"));
    std::vector<Edit> edits = {{from + 2, from + 5, "NE"}, {ref, ref + 19, "cid:a@b"}, {end, end, "+"}};
    std::string want = apply_edits(msg, edits).substr(from);
    ReadAt read = [&](std::int64_t off, char *buf, std::size_t len) -> Result<std::size_t> {
        std::size_t n = std::min(len, msg.size() - static_cast<std::size_t>(off));
        std::copy_n(msg.data() + off, n, buf);
        return n;
    };
    for (std::size_t chunk : {1u, 3u, 7u, 64u, 65535u}) {
        std::string got;
        std::size_t biggest = 0;
        auto s = stream_edited(read, from, static_cast<std::int64_t>(msg.size()), edits, [&](std::string_view c) {
            got += c;
            biggest = std::max(biggest, c.size());
            return true;
        }, chunk);
        REQUIRE(s);
        CHECK(got == want);
        CHECK(biggest <= chunk);
    }
    std::vector<Edit> overlapping = {{from, from + 5, ""}, {from + 3, from + 6, ""}};
    CHECK_FALSE(stream_edited(read, from, static_cast<std::int64_t>(msg.size()), overlapping,
                              [](std::string_view) { return true; }));
}

namespace {

// A memfd holding `bytes`, as the front hands a message to a worker.
struct MemFile {
    int fd;
    explicit MemFile(const std::string &bytes, unsigned flags = 0) : fd(::memfd_create("test", flags))
    {
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    }
    ~MemFile() { ::close(fd); }
    ReadAt reader() const
    {
        return [fd = fd](std::int64_t off, char *buf, std::size_t len) -> Result<std::size_t> {
            ssize_t n = ::pread(fd, buf, len, off);
            if (n < 0) return Error{Code::IoErr, "pread"};
            return static_cast<std::size_t>(n);
        };
    }
};

std::string streamed(const ReadAt &read, std::int64_t from, std::int64_t size, const std::vector<Edit> &edits,
                     const std::vector<TextAt> &texts, std::size_t chunk)
{
    std::string got;
    std::size_t biggest = 0;
    auto s = stream_edited(read, from, size, edits, texts, [&](std::string_view c) {
        biggest = std::max(biggest, c.size());
        got += c;
        return true;
    }, chunk);
    REQUIRE(s);
    CHECK(biggest <= chunk);
    return got;
}

} // namespace

TEST_CASE("spool_texts: a plan's large texts go into the message's file past its end, the plan keeps none; the body streamed from there is the same")
{
    // A header edit, a body edit of 100,000 bytes and a small one: over kPlanTextMax in all.
    const std::string msg = "Head: x\r\nSubject: s\r\n\r\nline one\r\n<p>old part</p>\r\nend\r\n";
    const auto from = static_cast<std::int64_t>(msg.find("\r\n\r\n") + 4);
    const auto part = static_cast<std::int64_t>(msg.find("<p>"));
    const auto end = static_cast<std::int64_t>(msg.find("end"));
    std::string big;
    for (int k = 0; big.size() < 100'000; ++k) big += "<p>new line " + std::to_string(k) + "</p>\r\n";
    Plan plan;
    plan.edits = {{0, 9, "Head: y\r\n"}, {part, part + 15, big}, {end, end, "+"}};
    const std::string want = apply_edits(msg, plan.edits);
    MemFile file(msg);
    auto texts = milter::spool_texts(plan, file.fd, static_cast<std::int64_t>(msg.size()));
    REQUIRE(texts);
    REQUIRE(texts->size() == 3);
    for (const Edit &e : plan.edits) CHECK(e.text.empty());
    // Through the wire and back, as the front reads them.
    Plan back = deserialize(serialize(plan));
    auto places = milter::text_places(back, milter::deserialize_texts(milter::serialize_texts(*texts)),
                                      static_cast<std::int64_t>(msg.size()));
    REQUIRE(places);
    auto parts = split_edits(back.edits, {from - 4, from - 2}, *places, file.reader());
    REQUIRE(parts);
    REQUIRE(parts->header.size() == 1);
    CHECK(parts->header[0].text == "Head: y\r\n"); // read back
    REQUIRE(parts->body.size() == 2);
    for (std::size_t chunk : {1u, 7u, 4096u, 65536u}) {
        CAPTURE(chunk);
        CHECK(streamed(file.reader(), from, static_cast<std::int64_t>(msg.size()), parts->body, parts->body_text,
                       chunk) == want.substr(static_cast<std::size_t>(from)));
    }
}

TEST_CASE("spool_texts: a small plan stays whole; a file that takes no writes leaves the plan whole and says so")
{
    const std::string msg = "A: b\r\n\r\nbody\r\n";
    Plan small;
    small.edits = {{8, 12, "BODY"}};
    MemFile file(msg);
    auto none = milter::spool_texts(small, file.fd, static_cast<std::int64_t>(msg.size()));
    REQUIRE(none);
    CHECK(none->empty());
    CHECK(small.edits[0].text == "BODY");

    Plan large;
    large.edits = {{8, 12, std::string(milter::kPlanTextMax + 1, 'x')}};
    MemFile sealed(msg, MFD_ALLOW_SEALING);
    REQUIRE(::fcntl(sealed.fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW) == 0);
    auto refused = milter::spool_texts(large, sealed.fd, static_cast<std::int64_t>(msg.size()));
    CHECK_FALSE(refused);
    CHECK(large.edits[0].text.size() == milter::kPlanTextMax + 1);
}

TEST_CASE("spool_texts: a streamed body's text and held inlined parts become spans of the file, written the same")
{
    // An HTML part that inlines two parts held decoded (--cid=inline), 40,000 bytes each.
    const std::string msg = "A: b\r\n\r\n<img src=x>\r\n";
    StreamedBody body;
    body.text = "<img src=\"data:image/png;base64,\"><img src=\"data:image/png;base64,\">\n";
    body.pieces = {{32, 0}, {66, 1}};
    body.cte = StreamedBody::Cte::QuotedPrintable;
    body.crlf = true;
    body.had_nl = true;
    for (char c : {'a', 'b'}) {
        StreamedBody::Blob b;
        b.bytes = std::string(40'000, c);
        b.size = b.bytes.size();
        body.blobs.push_back(b);
    }
    Plan plan;
    Edit e{8, 21, {}};
    e.streamed = std::make_shared<const StreamedBody>(body);
    plan.edits = {e};
    MemFile file(msg);
    auto read = file.reader();
    const SpanReader spans = [&](std::int64_t b, std::int64_t en, std::string &into) -> Result<std::string_view> {
        into.resize(static_cast<std::size_t>(en - b));
        auto n = read(b, into.data(), into.size());
        if (!n || *n != into.size()) return Error{Code::IoErr, "short"};
        return std::string_view(into);
    };
    auto want = edit_text(plan.edits[0], spans);
    REQUIRE(want);
    auto texts = milter::spool_texts(plan, file.fd, static_cast<std::int64_t>(msg.size()));
    REQUIRE(texts);
    CHECK(texts->empty()); // no text of its own
    Plan back = deserialize(serialize(plan));
    REQUIRE(back.edits[0].streamed);
    CHECK(back.edits[0].streamed->text.empty());
    CHECK(back.edits[0].streamed->text_size == body.text.size());
    CHECK(back.edits[0].streamed->text_at >= static_cast<std::int64_t>(msg.size()));
    for (const StreamedBody::Blob &b : back.edits[0].streamed->blobs) {
        CHECK_FALSE(b.held);
        CHECK(b.begin >= static_cast<std::int64_t>(msg.size()));
    }
    auto got = edit_text(back.edits[0], spans);
    REQUIRE(got);
    CHECK(*got == *want);
}

TEST_CASE("text_places: a list that names an edit the plan has not, one with a text, or bytes of the message is refused")
{
    Plan plan;
    plan.edits = {{10, 20, {}}, {30, 40, "kept"}};
    auto ok_places = milter::text_places(plan, {{0, 100, 5}}, 100);
    REQUIRE(ok_places);
    CHECK((*ok_places)[0].at == 100);
    CHECK((*ok_places)[1].size == 0);
    CHECK(milter::text_places(plan, {}, 100)->empty());
    CHECK_FALSE(milter::text_places(plan, {{2, 100, 5}}, 100));          // no such edit
    CHECK_FALSE(milter::text_places(plan, {{1, 100, 5}}, 100));          // it has a text
    CHECK_FALSE(milter::text_places(plan, {{0, 99, 5}}, 100));           // the message's bytes
    CHECK_FALSE(milter::text_places(plan, {{0, 100, 5}, {0, 105, 5}}, 100)); // twice
    CHECK_FALSE(milter::text_places(plan, {{0, 100, 0}}, 100));          // empty
    // A list whose count its bytes do not hold is refused, not allocated.
    Record r;
    r.put(std::size_t{1'000'000'000'000});
    CHECK_THROWS(milter::deserialize_texts(r.take()));
}
