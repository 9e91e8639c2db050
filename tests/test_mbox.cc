#include "fdio.hh"
#include "helpers.hh"
#include "mbox.hh"

#include <doctest/doctest.h>
#include <chrono>
#include <thread>
#include <unistd.h>

using namespace mimeuri;

static std::vector<std::string> messages(const std::string &mbox, std::vector<Segment> *segs = nullptr)
{
    Source s = Source::from_bytes(mbox, "t");
    auto r = split(s, Format::Mbox);
    REQUIRE(r.ok());
    std::vector<std::string> out;
    for (auto &seg : *r) out.push_back(mbox.substr(seg.msg_begin, seg.msg_end - seg.msg_begin));
    if (segs) *segs = *r;
    return out;
}

TEST_CASE("mbox: messages split at From lines after an empty line")
{
    std::string mb = "From a@b Mon Jan  1 00:00:00 2024\nSubject: 1\n\nbody\nFrom here on\n>From quoted\n\n"
                     "From c@d Mon Jan  1 00:00:00 2024\nSubject: 2\n\nbody\n";
    std::vector<Segment> segs;
    auto m = messages(mb, &segs);
    REQUIRE(m.size() == 2);
    // "From here on" follows a non-empty line: it is body text, not a separator.
    CHECK(m[0] == "Subject: 1\n\nbody\nFrom here on\n>From quoted\n");
    CHECK(m[1] == "Subject: 2\n\nbody\n");
    CHECK(segs[0].begin == 0);
    CHECK(mb.compare(segs[1].begin, 7, "From c@") == 0);
}

TEST_CASE("mbox: CRLF separators and a message with no header block")
{
    std::string mb = "From x\r\nSubject: a\r\n\r\nA\r\n\r\nFrom y\r\nSubject: b\r\n\r\nB\r\n\r\n"
                     "From z\r\nno header block here, just text\r\n\r\nFrom w\r\nSubject: d\r\n\r\nD\r\n";
    auto m = messages(mb);
    REQUIRE(m.size() == 4);
    CHECK(m[0] == "Subject: a\r\n\r\nA\r\n");
    CHECK(m[2] == "no header block here, just text\r\n");
    CHECK(m[3] == "Subject: d\r\n\r\nD\r\n");
}

TEST_CASE("mbox: data before the first From line is kept as a message of its own")
{
    auto m = messages("junk\n\nFrom x\nSubject: a\n\nA\n");
    REQUIRE(m.size() == 2);
    CHECK(m[0] == "junk\n");
    CHECK(m[1] == "Subject: a\n\nA\n");
}

TEST_CASE("mbox: From lines split across read chunks are found")
{
    std::string mb = "From x\nSubject: a\n\n" + std::string((1 << 20) - 22, 'a') + "\n\nFrom y\nSubject: b\n\nB\n";
    for (int shift = 0; shift < 8; ++shift) {
        std::string t = mb;
        t.insert(20, std::string(static_cast<std::size_t>(shift), 'b'));
        auto m = messages(t);
        REQUIRE(m.size() == 2);
        CHECK(m[1] == "Subject: b\n\nB\n");
    }
}

TEST_CASE("single message format is one segment over everything")
{
    Source s = Source::from_bytes("From x\nSubject: a\n\nA\n", "t");
    auto r = split(s, Format::Message);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].msg_begin == 0);
    CHECK((*r)[0].msg_end == s.size());
    CHECK(looks_like_mbox(s).value());
}

TEST_CASE("mboxcl2: a Content-Length that lands on the next From_ line is trusted")
{
    // Dovecot leaves body lines starting "From " unescaped (RECIPES 5); Content-Length says
    // where the body ends.
    std::string body1 = "first line\n\nFrom the blank line, unescaped\n";
    std::string mb = "From a@x  Sat Nov 21 00:00:00 2026\nSubject: 1\nContent-Length: " + std::to_string(body1.size()) +
                     "\n\n" + body1 + "\nFrom b@x  Sat Nov 21 00:00:01 2026\nSubject: 2\nContent-Length: 2\n\nB\n";
    auto m = messages(mb);
    REQUIRE(m.size() == 2);
    CHECK(m[0] == "Subject: 1\nContent-Length: " + std::to_string(body1.size()) + "\n\n" + body1);
    CHECK(m[1] == "Subject: 2\nContent-Length: 2\n\nB\n");
}

TEST_CASE("mboxcl2: a Content-Length that does not land on a From_ line changes nothing")
{
    std::string mb = "From a@x Sat Nov 21 00:00:00 2026\nSubject: 1\nContent-Length: 3\n\nbody\n\nFrom b@x Sat Nov 21 00:00:01 2026\n"
                     "Subject: 2\n\nB\n";
    auto m = messages(mb);
    REQUIRE(m.size() == 2); // the mboxo rule decides
    CHECK(m[0] == "Subject: 1\nContent-Length: 3\n\nbody\n");
}

TEST_CASE("mboxcl2: a header block longer than the first read still finds its Content-Length")
{
    // The header block is read 4 KiB first and 64 KiB when it does not end there; check the
    // boundary falling inside a line, right after a line (pad 4077: the X-Pad line ends at
    // byte 4096; 4057: the empty line does), and a header block past 64 KiB.
    std::string body1 = "x\n\nFrom inside the body\n";
    for (std::size_t pad : {4000u, 4057u, 4058u, 4076u, 4077u, 4078u, 70000u}) {
        CAPTURE(pad);
        std::string head = "Subject: 1\nX-Pad: " + std::string(pad, 'p') + "\nContent-Length: " +
                           std::to_string(body1.size()) + "\n\n";
        std::string mb = "From a@x Sat Nov 21 00:00:00 2026\n" + head + body1 + "\nFrom b@x Sat Nov 21 00:00:01 2026\n"
                         "Subject: 2\n\nB\n";
        auto m = messages(mb);
        if (pad < 65536) {
            REQUIRE(m.size() == 2); // Content-Length kept "From inside the body" in the body
            CHECK(m[0] == head + body1);
        } else {
            CHECK(m.size() == 3); // past 64 KiB it is not looked for: the mboxo rule splits
        }
    }
}

TEST_CASE("Splitter: a piece at a time gives the same segments as split, each knowing where the next begins")
{
    // Leading data, mboxo separators, CRLF, a Content-Length body with a "From " line in it,
    // a headerless message and no final newline.
    std::string body = "x\n\nFrom inside\n";
    std::string mb = "leading text\n\nFrom a@x Sat Nov 21 00:00:00 2026\nSubject: 1\n\nbody\nFrom not a separator\n\n"
                     "From b@x Sat Nov 21 00:00:00 2026\r\nSubject: 2\r\n\r\nbody\r\n\r\n"
                     "From c@x Sat Nov 21 00:00:00 2026\nContent-Length: " + std::to_string(body.size()) + "\n\n" + body +
                     "From d@x Sat Nov 21 00:00:00 2026\nno header block\n\n\n"
                     "From e@x Sat Nov 21 00:00:00 2026\nSubject: last";
    Source s = Source::from_bytes(mb, "t");
    auto whole = split(s, Format::Mbox);
    REQUIRE(whole.ok());
    REQUIRE(whole->size() == 6);
    for (std::size_t i = 0; i < whole->size(); ++i) {
        CAPTURE(i);
        CHECK((*whole)[i].next == (i + 1 < whole->size() ? (*whole)[i + 1].begin : static_cast<std::int64_t>(mb.size())));
    }
    CHECK(mb.substr((*whole)[3].msg_begin, (*whole)[3].msg_end - (*whole)[3].msg_begin) ==
          "Content-Length: " + std::to_string(body.size()) + "\n\n" + body);
    for (std::int64_t budget : {1, 2, 7, 40, 1000}) {
        CAPTURE(budget);
        Splitter sp(s, Format::Mbox);
        std::vector<Segment> got;
        int steps = 0;
        for (;;) {
            auto r = sp.step(got, budget);
            REQUIRE(r.ok());
            ++steps;
            if (*r) break;
        }
        CHECK(sp.done());
        CHECK((budget == 1000 || steps > 1));
        REQUIRE(got.size() == whole->size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CAPTURE(i);
            CHECK(got[i].begin == (*whole)[i].begin);
            CHECK(got[i].msg_begin == (*whole)[i].msg_begin);
            CHECK(got[i].msg_end == (*whole)[i].msg_end);
            CHECK(got[i].next == (*whole)[i].next);
        }
    }
}

TEST_CASE("Splitter: on generated mboxes, any step budget gives the segments split gives")
{
    // Inputs made of the pieces the split rule looks at, in random order (fixed seed).
    const char *pieces[] = {"From a@x Sat Nov 21 00:00:00 2026\n", "From ", "\n", "\r\n", "\n\n", "x", "Subject: s\n",
                            "Content-Length: 0\n", "Content-Length: 3\n", "Content-Length: 12\n", ">From q\n", "body line\n"};
    std::uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    for (int round = 0; round < 2000; ++round) {
        std::string mb = round % 3 ? "From a@x Sat Nov 21 00:00:00 2026\n" : "";
        for (std::uint32_t n = 4 + next() % 40; n > 0; --n) mb += pieces[(next() >> 8) % std::size(pieces)];
        Source s = Source::from_bytes(mb, "t");
        auto whole = split(s, Format::Mbox);
        REQUIRE(whole.ok());
        const std::int64_t budget = 1 + static_cast<std::int64_t>((next() >> 8) % 50);
        Splitter sp(s, Format::Mbox);
        std::vector<Segment> got;
        for (;;) {
            auto r = sp.step(got, budget);
            REQUIRE(r.ok());
            if (*r) break;
        }
        CAPTURE(mb);
        CAPTURE(budget);
        REQUIRE(got.size() == whole->size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i].begin == (*whole)[i].begin);
            CHECK(got[i].msg_begin == (*whole)[i].msg_begin);
            CHECK(got[i].msg_end == (*whole)[i].msg_end);
            CHECK(got[i].next == (i + 1 < got.size() ? got[i + 1].begin : static_cast<std::int64_t>(mb.size())));
            CHECK(got[i].begin <= got[i].msg_begin);
            CHECK(got[i].msg_begin <= got[i].msg_end);
            CHECK(got[i].msg_end <= got[i].next);
        }
    }
}

TEST_CASE("Splitter: a piped mbox arriving in pieces, with pauses, gives the segments split gives")
{
    // The generated mboxes above and long mboxcl2 header blocks, sent through a pipe a few
    // bytes at a time with pauses, spooled from the first byte (threshold 0): the splitter
    // meets the input's end as it is so far at every kind of place (in a From line, an
    // empty line, a Content-Length header) and must wait or end its step, never take it
    // for the end.
    const char *pieces[] = {"From a@x Sat Nov 21 00:00:00 2026\n", "From ", "\n", "\r\n", "\n\n", "x", "Subject: s\n",
                            "Content-Length: 0\n", "Content-Length: 3\n", "Content-Length: 12\n", ">From q\n", "body line\n"};
    std::uint32_t seed = 777;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    std::vector<std::string> inputs;
    for (int round = 0; round < 150; ++round) {
        std::string mb = round % 3 ? "From a@x Sat Nov 21 00:00:00 2026\n" : "";
        for (std::uint32_t n = 4 + next() % 40; n > 0; --n) mb += pieces[(next() >> 8) % std::size(pieces)];
        inputs.push_back(mb);
    }
    const std::string body = "x\n\nFrom inside the body\n";
    for (std::size_t pad : {4057u, 4077u, 4078u, 70000u})
        inputs.push_back("From a@x Sat Nov 21 00:00:00 2026\nSubject: 1\nX-Pad: " + std::string(pad, 'p') +
                         "\nContent-Length: " + std::to_string(body.size()) + "\n\n" + body +
                         "\nFrom b@x Sat Nov 21 00:00:01 2026\nSubject: 2\n\nB\n");
    for (const std::string &mb : inputs) {
        CAPTURE(mb.substr(0, 300));
        auto whole = split(Source::from_bytes(mb, "t"), Format::Mbox);
        REQUIRE(whole.ok());
        const std::size_t piece = 1 + (next() >> 8) % (mb.size() > 10000 ? 3000 : 40);
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        std::thread sender([&] {
            for (std::size_t at = 0; at < mb.size(); at += piece) {
                write_all(fds[1], mb.data() + at, std::min(piece, mb.size() - at));
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            ::close(fds[1]);
        });
        auto s = Source::read_fd(fds[0], "-", 0);
        ::close(fds[0]);
        REQUIRE(s.ok());
        const std::int64_t budget = 1 + static_cast<std::int64_t>((next() >> 8) % 50);
        Splitter sp(*s, Format::Mbox);
        std::vector<Segment> got;
        for (;;) {
            auto r = sp.step(got, budget);
            REQUIRE(r.ok());
            if (*r) break;
        }
        sender.join();
        REQUIRE(got.size() == whole->size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i].begin == (*whole)[i].begin);
            CHECK(got[i].msg_begin == (*whole)[i].msg_begin);
            CHECK(got[i].msg_end == (*whole)[i].msg_end);
            CHECK(got[i].next == (*whole)[i].next);
        }
    }
}

TEST_CASE("mboxcl2: whether a header block may hold a Content-Length, read line by line as HeaderFields reads it")
{
    // A Content-Length counts only as a field of the block (not folded, not in the body),
    // with something after its colon; a block the buffer ends inside may hold one further on.
    const std::pair<std::string, bool> cases[] = {
        {"From: a\nContent-Length: 5\n\nbody\n", true},
        {"From: a\ncontent-length:5\r\n\r\n", true},
        {"From: a\n\nContent-Length: 5\n", false},
        {"From: a\r\n\r\nContent-Length: 5\n", false},
        {"From: a\n X-Fold: Content-Length: 5\n\n", false},
        {"From: a\nContent-Length:\nTo: b\n\n", false}, // nothing after the colon on its line
        {"From: a\nX-Content-Length: 5\n\n", false},
        {"From: a\nTo: b\n", true},  // the buffer ends inside the block
        {"From: a\n\r", true},       // a lone CR with no LF ends the input, not the block
        {"", true},
    };
    for (const auto &c : cases) { // (not a structured binding: clang 14 cannot capture one in CAPTURE)
        const std::string &head = c.first;
        CAPTURE(head);
        CHECK(may_have_content_length(head) == c.second);
    }
}

namespace {

// Each message's Message-ID as the inert copy reads it, from what the split read of its header
// block (Segment::head), against plain_message_id's own reading of the message alone.
void heads_agree(const std::string &mbox, std::size_t &read)
{
    std::vector<Segment> segs;
    const auto m = messages(mbox, &segs);
    for (std::size_t i = 0; i < segs.size(); ++i) {
        CAPTURE(i);
        CAPTURE(m[i].substr(0, 200));
        const auto alone = plain_message_id(m[i]);
        CHECK(plain_message_id(m[i], segs[i].msg_begin, segs[i].head) == alone);
        if (!segs[i].head) continue;
        CHECK(segs[i].head->at == segs[i].msg_begin);
        if (segs[i].head->end <= static_cast<std::int64_t>(m[i].size())) {
            ++read;
            CHECK(alone.has_value()); // read as plain where plain_message_id reads it so
        }
    }
}

} // namespace

// Issue 53: the split reads each message's header block for a Content-Length; the same reading
// gives the inert copy the block's Message-ID (on the parent, plain_message_id read the block
// again: 9.4 M instructions on the corpus mbox).
TEST_CASE("mbox: the split hands on each plain header block as plain_message_id reads it")
{
    const std::string from = "From a@b Mon Jan  1 00:00:00 2024\n";
    std::string mb = from + "Subject: 1\nMessage-ID: <one@x>\n\nbody\n\n" +
                     from + "Message-ID: <a@x>\nmessage-id:\r\n <two@x>\r\nTo: b\r\n\r\nbody\r\n\n" + // the last one, folded
                     from + "Subject: no id\n\n\n" +
                     from + "Message-ID: <three@x>\nNot a field\n\nbody\n\n" +         // not plain
                     from + "Message-ID: <four@x>\nX: a\rb\n\nbody\n\n" +              // a bare CR
                     from + "Message-ID: <five@x>\nX: a" + std::string(1, '\0') + "\n\nbody\n\n" + // a NUL
                     from + "Message-ID:  \"odd id\" \n\nbody\n\n" +                  // GMime's reading
                     from + "Message-ID: <six@x>\nSubject: headers only\n\n" +        // the block ends in the separator
                     from + "Message-ID: <seven@x>\n";                                // and at the input's end
    std::vector<Segment> segs;
    const auto m = messages(mb, &segs);
    REQUIRE(m.size() == 9);
    const char *ids[] = {"one@x", "two@x", "", nullptr, nullptr, nullptr, "odd id", nullptr, nullptr};
    for (std::size_t i = 0; i < m.size(); ++i) {
        CAPTURE(i);
        const auto got = plain_message_id(m[i], segs[i].msg_begin, segs[i].head);
        CHECK(got == plain_message_id(m[i]));
        if (i < 3 || i == 6) {
            REQUIRE(segs[i].head);
            CHECK(segs[i].head->end <= static_cast<std::int64_t>(m[i].size()));
        }
        if (ids[i] && i != 6) CHECK(got == std::optional<std::string>(ids[i]));
    }
    for (std::size_t i : {3, 4, 5}) CHECK_FALSE(segs[i].head);
    // Headers only: the split read on into the separator line, past the message: not used.
    REQUIRE(segs[7].head);
    CHECK(segs[7].head->end > static_cast<std::int64_t>(m[7].size()));
    CHECK_FALSE(plain_message_id(m[7], segs[7].msg_begin, segs[7].head));
    // Read at another offset (the message read from a later line on): not used.
    CHECK(plain_message_id(m[0].substr(11), segs[0].msg_begin + 11, segs[0].head) == plain_message_id(m[0].substr(11)));
    std::size_t read = 0;
    heads_agree(mb, read);
    CHECK(read == 4);
}

TEST_CASE("mbox: the header blocks the split hands on, over every corpus message")
{
    std::string mb;
    for (const auto &row : testing::corpus_index()) {
        mb += "From corpus Mon Jan  1 00:00:00 2024\n";
        std::string m = testing::read_file(std::string(MIMEURI_CORPUS) + "/" + row.at(0));
        if (m.empty() || m.back() != '\n') m += '\n';
        mb += m + "\n";
    }
    if (mb.empty()) return testing::skip("corpus not found at " MIMEURI_CORPUS);
    std::size_t read = 0;
    heads_agree(mb, read);
    MESSAGE(read << " header blocks read by the split");
    CHECK(read > 100);
}
