// The engine's copy of a message no pass can change (MessageContext::parse, InertCheck): the
// pre-check must be certain. Every corpus message, every golden and crafted input, and
// messages written to sit on the pre-check's edges are planned twice, with and without the
// fast path, and the plans (edits, counts, unprocessed, Message-ID, what mid: waits for) and
// the run's mid: index must be the same. The fast path runs only when no report or summary
// line is asked for: with one, every message is parsed whole, as before. Each is planned both
// where the run keeps a mid: index (--mid=repair: a Content-ID or an embedded message is then
// parsed, for the index) and where it keeps none (the default --mid=check with nothing
// reported: Engine::wants_index), where it copies those too.
#include "engine.hh"
#include "external_body.hh"
#include "mbox.hh"
#include "message_id.hh"
#include "references.hh"
#include "streamed_body.hh"

#include <doctest/doctest.h>

#include <glib.h>

#include <fstream>
#include <sstream>

using namespace mimeuri;

namespace {

std::vector<std::unique_ptr<Pass>> default_passes(RefOptions::Mid mid = RefOptions::Mid::Check)
{
    RefOptions refs;
    refs.mid = mid;
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(refs));
    passes.push_back(std::make_unique<ExternalBodyPass>(ExternalBodyOptions{}));
    return passes;
}

// Two engines over the same messages, one with the fast path: same plans, same index.
// mid: Repair, the run keeps an index (the default here, as the twins compare it); Check,
// none (the run's default with nothing reported).
struct Twins {
    explicit Twins(RefOptions::Mid mid = RefOptions::Mid::Repair) : fast_passes(default_passes(mid)), full_passes(default_passes(mid))
    {
        REQUIRE(fast.wants_index() == (mid == RefOptions::Mid::Repair));
        REQUIRE(full.wants_index() == fast.wants_index());
    }
    std::vector<std::unique_ptr<Pass>> fast_passes, full_passes;
    Engine fast{fast_passes, EngineConfig{}}, full{full_passes, config()};
    std::size_t messages = 0, copied = 0, without_gmime = 0;

    static EngineConfig config()
    {
        EngineConfig c;
        c.copy_inert = false;
        return c;
    }

    void plan(const Source &src, const Segment &seg, std::size_t number, bool in_mbox, const std::string &what)
    {
        CAPTURE(what);
        CAPTURE(number);
        MessageAt at{src, seg, number, in_mbox, 0};
        Plan a = fast.plan(at, true), b = full.plan(at, true);
        ++messages;
        auto ctx = MessageContext::parse(src, seg, number, in_mbox, Limits{}, fast.inert_check());
        if (ctx->headers_only()) ++copied;
        if (ctx->headers_only() && !ctx->message()) {
            ++without_gmime;
            // The Message-ID read without GMime is GMime's (the plans compare it too).
            auto whole = MessageContext::parse(src, seg, number, in_mbox, Limits{}, nullptr);
            const char *id = whole->message() ? g_mime_message_get_message_id(whole->message()) : nullptr;
            CHECK(ctx->report().message_id == std::string(id ? id : ""));
        }
        CHECK(a.cause == b.cause);
        CHECK(a.message_id == b.message_id);
        CHECK(a.unprocessed == b.unprocessed);
        CHECK(a.dangling == b.dangling);
        CHECK(a.dangling_mid == b.dangling_mid);
        CHECK(a.waits == b.waits);
        CHECK(a.at_take == b.at_take);
        REQUIRE(a.edits.size() == b.edits.size());
        for (std::size_t i = 0; i < a.edits.size(); ++i) {
            CHECK(a.edits[i].begin == b.edits[i].begin);
            CHECK(a.edits[i].end == b.edits[i].end);
            CHECK(*edit_text(a.edits[i], reader_of(src)) == *edit_text(b.edits[i], reader_of(src)));
        }
    }
    void plan_bytes(const std::string &bytes, const std::string &what)
    {
        Source src = Source::from_bytes(bytes, what);
        Segment seg;
        seg.msg_end = seg.next = static_cast<std::int64_t>(bytes.size());
        plan(src, seg, 1, false, what);
    }
    void plan_file(const std::string &path)
    {
        auto src = Source::open_path(path, 1 << 20);
        REQUIRE(src.ok());
        auto mbox = looks_like_mbox(*src);
        const bool in_mbox = mbox.ok() && *mbox;
        auto segs = split(*src, in_mbox ? Format::Mbox : Format::Message);
        REQUIRE(segs.ok());
        for (std::size_t i = 0; i < segs->size(); ++i) plan(*src, (*segs)[i], i + 1, in_mbox, path);
    }
    void same_index() { CHECK(fast.save_index() == full.save_index()); }
};

std::vector<std::string> files_in(const std::string &dir, const std::string &suffix)
{
    std::vector<std::string> out;
    GDir *d = g_dir_open(dir.c_str(), 0, nullptr);
    if (!d) return out;
    while (const char *n = g_dir_read_name(d)) {
        std::string name = n, path = dir + "/" + name;
        if (g_file_test(path.c_str(), G_FILE_TEST_IS_DIR)) {
            auto more = files_in(path, suffix);
            out.insert(out.end(), more.begin(), more.end());
        } else if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            out.push_back(path);
        }
    }
    g_dir_close(d);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("inert copy: messages on the edges of the pre-check plan as the full engine plans them")
{
    const std::string head = "From: a@example.org\nMessage-ID: <edge@example.org>\nMIME-Version: 1.0\n";
    // Copied only where the run keeps no index: Content-IDs and embedded messages (the index
    // would list them), whatever the Content-Type fields inside hold that no pass edits.
    const std::vector<std::string> copied_without_index = {
        head + "Content-Type: Message\n /rfc822\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-ID: <top@example.org>\n\ntext\n",
        head + "Content-Id:<top@example.org>\n\ntext\n",
        head + "Content-Type: message/global\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: message/news\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: message/rfc2822\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/delivery-status\n\nx\n--b\n"
               "Content-Type: message/rfc822\n\nMessage-ID: <inner@x>\n\nbody\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\nMessage-ID: <in@x>\n"
               "Content-Type: multipart/mixed; boundary=c\n\n--c\nContent-ID: <c@x>\nContent-Type: image/png\n\nPNG\n--c--\n"
               "--b\nContent-Type: Message/RFC822 (c); x=y\n\nMessage-ID: <in2@x>\n\nsecond\n--b--\n",
        head + "Content-Type: message/rfc822\n\nMessage-ID: <in@x>\nContent-Type: message/global\n\nMessage-ID: <in2@x>\n\ntwo deep\n",
        head + "Content-Type: message/rfc822\n\nFrom: b@x\n\nan embedded message with no Message-ID\n",
        head + "Content-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\nTWVzc2FnZS1JRDogPGluQHg+Cgpib2R5Cg==\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-ID: <a@x>\n\nx\n--b\nContent-Id:<a@x>\n\ny\n--b--\n",
    };
    // Never copied: digest (its parts are embedded messages with no field of their own), a
    // comment before the '/', message/partial, a subtype GMime does not know, an embedded
    // message holding HTML with a reference or an external body.
    const std::vector<std::string> never_copied = {
        head + "Content-Type: multipart/digest; boundary=b\n\n--b\n\nMessage-ID: <inner@x>\n\nbody\n--b--\n",
        head + "Content-Type: message (x) / rfc822\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: message/partial; id=x; number=1\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: message/rfc822\n\nMessage-ID: <in@x>\nContent-Type: text/html\n\n<img src=cid:x>\n",
        head + "Content-Type: message/rfc822\n\nMessage-ID: <in@x>\nContent-Type: message/external-body; access-type=URL; "
               "URL=\"http://x/ a\"\n\nContent-Type: text/plain\n\n",
        head + "Content-Type: message/rfc822x\n\nMessage-ID: <in@x>\n\nnot GMime's\n",
    };
    std::vector<std::string> edges = {
        head + "\nplain text, nothing to do\n",
        head + "Content-Type: text/plain\n\nhtml in the text, and message/rfc822 and content-id: not fields\n",
        head + "Content-Type: text/\n html\n\n<img src=\"cid:&lt;x@y&gt;\">\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\n\n<img src=\"cid:&lt;x@y&gt;\">\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\n\nContent-Type: text/html in a body\n--b--\n",
        head + "content-type\t:text/html\n\n<img src=\"cid:&lt;x@y&gt;\">\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--b\nContent-Type: application/pdf\n\n%PDF\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: multipart/alternative; boundary=c\n\n--c\nContent-Type: text/plain\n\nx\n--c--\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\nContent-Type: application/pdf\n\nconflict\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n--b\nContent-Type: application/pdf\n\nno empty line between\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n \nContent-Type: text/html\n\nwhite space line\n--b--\n",
        head + "Content-Type: TEXT/HTML\n\n<img src=\"cid:&lt;x@y&gt;\">\n",
        head + "Content-Type: text / (comment) Html\n\n<img src=\"cid:&lt;x@y&gt;\">\n",
        head + "Content-Type: text/plain\nContent-Type: text/html\n\n<img src=\"cid:&lt;x@y&gt;\">\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\n\nno type: text/plain\n--b\n\nsecond\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/external-body; access-type=URL; URL=\"http://x/ a\"\n\nContent-Type: text/plain\n\n--b--\n",
        "Message-ID: <first@x>\nMessage-ID: <second@x>\n\ntwo ids\n",
        "Message-ID:\n <folded@x>\n\nfolded\n",
        "Message-ID: <no-body@x>",
        "Message-ID: <no-blank@x>\nSubject: x",
        "\n\nno header block at all\n",
        "not a header\nMessage-ID: <late@x>\n\nbody\n",
        "Message-ID: <crlf@x>\r\nContent-Type: text/plain\r\n\r\nbody\r\n",
        "Message-ID: <cr@x>\rContent-Type: text/html\r\r<img src=cid:x>\r",
        "From: a\nMessage-ID: <x@y>\nContent-Type: multipart/mixed; boundary=b\n\n" + std::string("--b\n\nx\n") +
            std::string(20, '-') + "\n--b--\n",
        head + "DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s; h=from; bh=AAAA; b=AAAA\n\nsigned body\n",
        // The Message-ID read without GMime (plain header blocks) or by it (the rest).
        "Message-ID: =?utf-8?B?PGVuY29kZWRAeD4=?=\n\nan encoded word\n",
        "Message-ID: <a@x> (a comment)\n\ncomment\n",
        "Message-ID: (first) <b@x>\n\ncomment first\n",
        "Message-ID:\n\nempty\n",
        "Message-ID: not an id at all\n\nbare words\n",
        "Message-ID: <8bit-\xc3\xa9t\xe9@x>\n\neight-bit\n",
        std::string("Message-ID: <nul@x>\0<after-nul@x>\n\nNUL\n", 39),
        "Message-ID: <bare\rcr@x>\n\nbare CR\n",
        "Message-ID : <blank-before-colon@x>\n\nblank\n",
        "X-A:\n\tfolded\n continued\nMessage-ID: <after-folds@x>\n\nfolds\n",
        " leading continuation\nMessage-ID: <lead@x>\n\nleading\n",
        "Message-ID: <a@x>\nmessage-id: <lower-last@x>\n\nlast wins\n",
        "Message-ID: <a@x>\nMessage-ID:<b@x\n >\n\tjunk\nSubject: s\n\nlast folded\n",
        "Message-IDs: <not-the-name@x>\n\nlonger name\n",
        "Resent-Message-ID: <resent@x>\n\nresent only\n",
        "Message-ID: <crlf-plain@x>\r\nSubject: s\r\n\r\nCRLF\r\n",
        "Message-ID: <mixed@x>\r\nSubject: s\n\r\nmixed ends\n",
        "Message-ID: <x@y>\nno colon here\n\ninvalid line\n",
        "Message-ID: <end@x>\n",
        "Message-ID: <ctl\x01@x>\nX\x7fY: z\n\ncontrol\n",
        "Message-ID: <" + std::string(3000, 'l') + "@x>\n\nlong line\n",
        // HTML no reference can be made of (copied), and what could make one (parsed whole).
        head + "Content-Type: text/html\n\n<p>no reference <a href=\"http://x/\">here</a>&nbsp;&#160;</p>\n",
        head + "Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--b\n"
               "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n<p>a=3Db</p>\n--b--\n",
        head + "Content-Type: text/html\n\n<img src=\"cid:x@y\">\n",
        head + "Content-Type: text/html\n\n<img src=\"&#99;id:x@y\">\n",
        head + "Content-Type: text/html\n\n<img src=\"cid&colon;x@y\">\n",
        head + "Content-Type: text/html\n\n<p style=\"background:url(\\63 id:x@y)\">\n",
        head + "Content-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<img src=3D\"=63id:x@y\">\n",
        head + "Content-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<img src=3D\"ci=\nd:x@y\">\n",
        head + "Content-Type: text/html\nContent-Transfer-Encoding: base64\n\nPGltZyBzcmM9ImNpZDp4QHkiPgo=\n",
        head + "Content-Type: text/html\nContent-Transfer-Encoding: x-uuencode\n\nbegin 644 x\n`\nend\n",
        head + "Content-Type: text/html; charset=utf-16le\n\n<\0i\0m\0g\0>\0\n",
        head + "Content-Type: text/html; charset*=''utf-16\n\n<p>x</p>\n",
        head + "Content-Type: multipart/related; boundary=b\n\n--b\nContent-Type: text/html\n\n<img src=\"a.png\">\n--b\n"
               "Content-Type: image/png\nContent-Location: a.png\n\nPNG\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\n\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\n<p>a header?</p>\n\nx\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\r\n\r\n<p>x&#10</p>\r\n--b--\r\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\n\n<p>&#99\n--b--\n",
        head + "Content-Type: message/rfc822\n\nContent-Type: text/html\n\n<p>x</p>\n",
        // Report types GMime reads as leaves (copied), and the embedded messages (parsed).
        head + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\n\n--b\n\nfailed\n--b\n"
               "Content-Type: message/delivery-status\n\nReporting-MTA: dns; x\n\nFinal-Recipient: rfc822; a@x\n--b\n"
               "Content-Type: text/rfc822-headers\n\nMessage-ID: <inner@x>\n--b--\n",
        head + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: Message / Disposition-Notification (c)\n\n"
               "Message-ID: <inner@x>\n\nx\n--b\nContent-Type: message/feedback-report;x=y\n\nMessage-ID: <in2@x>\n--b--\n",
        head + "Content-Type: message/rfc822-headers\n\nMessage-ID: <inner@x>\n",
        head + "Content-Type: message/\n global-headers\n\nMessage-ID: <inner@x>\n",
        head + "Content-Type: message/delivery-statusx\n\nMessage-ID: <inner@x>\n\nbody\n",
        head + "Content-Type: message/delivery-status/rfc822\n\nMessage-ID: <inner@x>\n\nbody\n",
    };
    edges.insert(edges.end(), copied_without_index.begin(), copied_without_index.end());
    edges.insert(edges.end(), never_copied.begin(), never_copied.end());
    for (RefOptions::Mid mid : {RefOptions::Mid::Repair, RefOptions::Mid::Check}) {
        Twins t(mid);
        for (const auto &m : edges) t.plan_bytes(m, m.substr(0, 80));
        t.same_index();
        MESSAGE(t.copied << " of " << t.messages << " edge messages copied without a full parse, " << t.without_gmime
                          << " without GMime, " << std::string(t.fast.wants_index() ? "with" : "without") << " an index");
        CHECK(t.copied >= (t.fast.wants_index() ? 5 : 15));
        CHECK(t.without_gmime >= (t.fast.wants_index() ? 17 : 27));
        CHECK(t.without_gmime < t.copied);
    }
    // Which are copied: embedded messages and Content-IDs only where no index is kept; an
    // embedded message holding HTML with a reference or an external body, message/partial
    // or a subtype GMime does not know, never.
    auto copied = [&](const std::string &m, RefOptions::Mid mid) {
        std::vector<std::unique_ptr<Pass>> passes = default_passes(mid);
        Engine e(passes, EngineConfig{});
        Source src = Source::from_bytes(m, "edge");
        Segment seg;
        seg.msg_end = seg.next = static_cast<std::int64_t>(m.size());
        return MessageContext::parse(src, seg, 1, false, Limits{}, e.inert_check())->headers_only();
    };
    for (const std::string &m : copied_without_index) {
        CAPTURE(m);
        CHECK(copied(m, RefOptions::Mid::Check));
        CHECK_FALSE(copied(m, RefOptions::Mid::Repair));
    }
    for (const std::string &m : never_copied) {
        CAPTURE(m);
        CHECK_FALSE(copied(m, RefOptions::Mid::Check));
    }
    // Limits that bind, with and without the inert copy: parsed whole and reported either way.
    auto unprocessed_either_way = [&](const std::string &m, int max_depth, std::size_t max_parts) {
        for (bool copy : {true, false}) {
            std::vector<std::unique_ptr<Pass>> passes = default_passes();
            EngineConfig c;
            c.copy_inert = copy;
            c.limits.max_depth = max_depth;
            c.limits.max_parts = max_parts;
            Engine e(passes, c);
            CHECK(plan_message(e, m).unprocessed);
        }
    };
    // Nested multiparts against a small --max-depth.
    unprocessed_either_way("Message-ID: <nested@x>\nContent-Type: multipart/mixed; boundary=a\n\n--a\n"
                           "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: multipart/mixed; boundary=c\n\n"
                           "--c\n\ndeep\n--c--\n--b--\n--a--\n",
                           2, 10000);
    // Delimiter lines against a small --max-parts.
    std::string many = "Message-ID: <many@x>\nContent-Type: multipart/mixed; boundary=b\n\n";
    for (int i = 0; i < 20; ++i) many += "--b\n\npart\n";
    unprocessed_either_way(many + "--b--\n", 64, 5);
    // Embedded messages (copied where no index is kept): each body is an entity of its own
    // after no delimiter line (three messages, seven entities, four delimiter lines), and each
    // is one level deeper.
    std::string embedded = "Message-ID: <emb@x>\nContent-Type: multipart/mixed; boundary=b\n\n";
    for (int i = 0; i < 3; ++i) embedded += "--b\nContent-Type: message/rfc822\n\nFrom: x\n\nbody\n";
    unprocessed_either_way(embedded + "--b--\n", 64, 6);
    unprocessed_either_way("Message-ID: <deep@x>\nContent-Type: message/rfc822\n\nContent-Type: message/rfc822\n\n"
                           "Content-Type: message/rfc822\n\nFrom: x\n\ndeep\n",
                           2, 10000);
}

TEST_CASE("inert copy: a field name too long for GMime's read buffer is left to GMime, which fails the message")
{
    // GMime fails a message whose field name does not fit its 4 KiB buffer (4,224 bytes and
    // more, checked here); the copy without GMime must not take it for a message (fuzz_filter
    // found it: testdata/fuzz-regressions). Names up to a line's 998 bytes are read without it.
    Twins t;
    for (std::size_t n : {997u, 998u, 999u, 4223u, 4224u, 9000u}) {
        const std::string m = "From: user@test.com\n" + std::string(n, 'T') + ": v\nMessage-ID: <n@x>\n\nbody\n";
        t.plan_bytes(m, "a field name of " + std::to_string(n) + " bytes");
        Source src = Source::from_bytes(m, "long");
        Segment seg;
        seg.msg_end = seg.next = static_cast<std::int64_t>(m.size());
        auto whole = MessageContext::parse(src, seg, 1, false, Limits{}, nullptr);
        CHECK((whole->message() == nullptr) == (n >= 4224)); // where GMime's limit lies today
    }
    CHECK(t.messages == 6);
    CHECK(t.without_gmime == 2); // 997 and 998
}

TEST_CASE("inert copy: HTML that no reference can be made of is copied; what could make one is parsed")
{
    const std::string head = "From: a@example.org\nMessage-ID: <html@example.org>\nMIME-Version: 1.0\n";
    const std::string alt = head + "Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--b\n";
    const std::vector<std::pair<std::string, bool>> cases = {
        {head + "Content-Type: text/html\n\n<p>none <a href=\"http://x/\">here</a>&nbsp;&#160;&amp;</p>\n", true},
        {alt + "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n<p>a=3Db</p>\n--b--\n", true},
        {alt + "Content-Type: text/html\nContent-Transfer-Encoding: 8bit\n\n<p>\xc3\xa9</p>\n--b--\n", true},
        {head + "Content-Type: text/html\n\n<img src=\"cid:x@y\">\n", false},
        {head + "Content-Type: text/html\n\n<a href=\"MID:x@y\">\n", false},
        {head + "Content-Type: text/html\n\n<img src=\"&#99;id:x@y\">\n", false},
        {head + "Content-Type: text/html\n\n<img src=\"ci&#X64;:x@y\">\n", false},
        {head + "Content-Type: text/html\n\n<img src=\"cid&colon;x@y\">\n", false},
        {head + "Content-Type: text/html\n\n<p style=\"background:url(\\63 id:x@y)\">\n", false},
        {head + "Content-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<img src=3D\"=63id:x@y\">\n", false},
        {head + "Content-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<img src=3D\"ci=\nd:x@y\">\n", false},
        // base64: decoded as GMime decodes it for the pass (issue 53), "<p></p>" and "<img src="cid:x@y">".
        {head + "Content-Type: text/html\nContent-Transfer-Encoding: base64\n\nPHA+PC9wPgo=\n", true},
        {head + "Content-Type: text/html\nContent-Transfer-Encoding: base64\n\nPGltZyBzcmM9ImNpZDp4QHkiPgo=\n", false},
        // The structure walk (src/mime/structure.cc) reads only the HTML parts: a Content-ID
        // on an image, a backslash or "&#" in a plain-text part, a signature line "-- ", an
        // image in base64 and the epilogue of a nested multipart stop nothing any more.
        {head + "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/alternative; boundary=i\n\n"
                "--i\nContent-Type: text/plain\n\nC:\\dir &#99;id:x\n-- \nsig\n--i\nContent-Type: text/html\n\n<p>x</p>\n"
                "--i--\n\n--o\nContent-Type: image/png\nContent-Transfer-Encoding: base64\nContent-ID: <i@x>\n\niVBORw0K\n--o--\n",
         false}, // the Content-ID, where the run keeps an index
        {head + "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/alternative; boundary=i\n\n"
                "--i\nContent-Type: text/plain\n\nC:\\dir &#99;id:x\n-- \nsig\n--i\nContent-Type: text/html\n\n<p>x</p>\n"
                "--i--\n\n--o\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\niVBORw0K\n--o--\n",
         true},
        {head + "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/alternative; boundary=i\n\n"
                "--i\nContent-Type: text/plain\n\nx\n--i\nContent-Type: text/html\n\n<img src=cid:a>\n"
                "--i--\n\n--o\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\niVBORw0K\n--o--\n",
         false},
        // A delimiter line that only begins like one, an unclosed multipart: not the walk's to
        // read; the line check decides, as before (it copies the second).
        {alt + "Content-Type: text/html\n\n<p>x</p>\n--bx\n--b--\n", false},
        {alt + "Content-Type: text/html\n\n<p>x</p>\n", true},
        {head + "Content-Type: text/html\nContent-Transfer-Encoding: quoted-printable (yes)\n\n<p>x</p>\n", false},
        {head + "Content-Type: text/html; charset=UTF-16LE\n\n<p>x</p>\n", false},
        {head + "Content-Type: text/html; charset*=''utf-8\n\n<p>x</p>\n", false},
        {head + "Content-Type: text/html; charset==?us-ascii?Q?utf-7?=\n\n<p>x</p>\n", false},
        {alt + "Content-Type: text/html\nContent-Location: http://x/a.html\n\n<p>x</p>\n--b--\n", false},
        {alt + "Content-Type: text/html\n\n--b--\n", false},
        {alt + "Content-Type: text/html\n<p>not a field</p>\n\nx\n--b--\n", false},
        {head + "Content-Type: text/html\nContent-ID: <h@x>\n\n<p>x</p>\n", false},
        // A Content-ID inside a multipart/related: the pass then reads every URL of the HTML
        // as a Content-ID written without its scheme may be one (any_related_id), and repairs
        // this one to "cid:i@x"; where the run keeps no index too (the Twins below).
        {head + "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n\n<img src=\"i@x\">\n"
                "--r\nContent-Type: image/png\nContent-ID: <i@x>\nContent-Transfer-Encoding: base64\n\niVBORw0K\n--r--\n",
         false},
        {head + "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/related; boundary=r\n\n--r\n"
                "Content-Type: text/html\n\n<img src=\"i@x\">\n--r\nContent-Type: message/rfc822\n\nContent-Type: image/png\n"
                "Content-ID: <i@x>\n\nx\n--r--\n\n--o--\n",
         false},
    };
    std::vector<std::unique_ptr<Pass>> passes = default_passes(RefOptions::Mid::Repair); // the Content-ID case
    Engine engine(passes, EngineConfig{});
    REQUIRE(engine.inert_check() != nullptr);
    for (const auto &c : cases) {
        const auto &m = c.first;
        const auto &copied = c.second; // (no structured binding: clang 14 lets CAPTURE take none)
        CAPTURE(m);
        Source src = Source::from_bytes(m, "edge");
        Segment seg;
        seg.msg_end = seg.next = static_cast<std::int64_t>(m.size());
        CHECK(MessageContext::parse(src, seg, 1, false, Limits{}, engine.inert_check())->headers_only() == copied);
    }
    // Beyond --html-max the pass reports the part: parsed whole.
    RefOptions small;
    small.html_max = 64;
    std::vector<std::unique_ptr<Pass>> limited;
    limited.push_back(std::make_unique<ReferencesPass>(small));
    Engine capped(limited, EngineConfig{});
    const std::string big = head + "Content-Type: text/html\n\n<p>" + std::string(100, 'x') + "</p>\n";
    Source src = Source::from_bytes(big, "big");
    Segment seg;
    seg.msg_end = seg.next = static_cast<std::int64_t>(big.size());
    CHECK_FALSE(MessageContext::parse(src, seg, 1, false, Limits{}, capped.inert_check())->headers_only());
    // With the passes that only scan, and another that edits HTML too, nothing is skipped;
    // with an index and without.
    for (RefOptions::Mid mid : {RefOptions::Mid::Repair, RefOptions::Mid::Check}) {
        Twins t(mid);
        for (const auto &[m, copied] : cases) t.plan_bytes(m, m.substr(0, 80));
        t.same_index();
    }
}

TEST_CASE("inert copy: every corpus message, golden case and crafted input plans the same with and without it")
{
    std::vector<std::string> files;
    std::ifstream index(std::string(MIMEURI_CORPUS) + "/INDEX.tsv");
    std::string line;
    std::getline(index, line);
    while (std::getline(index, line)) files.push_back(std::string(MIMEURI_CORPUS) + "/" + line.substr(0, line.find('\t')));
    const bool corpus = !files.empty();
    if (!corpus) MESSAGE("corpus not found at " MIMEURI_CORPUS "; only the test data");
    for (const auto &f : files_in(std::string(MIMEURI_TESTDATA) + "/cases", "input.eml")) files.push_back(f);
    for (const auto &f : files_in(std::string(MIMEURI_TESTDATA) + "/../fuzz/crafted", ".eml")) files.push_back(f);
    for (RefOptions::Mid mid : {RefOptions::Mid::Repair, RefOptions::Mid::Check}) {
        Twins t(mid);
        for (const auto &f : files) t.plan_file(f);
        t.same_index();
        MESSAGE(t.copied << " of " << t.messages << " messages copied without a full parse, " << t.without_gmime
                          << " without GMime, " << std::string(t.fast.wants_index() ? "with" : "without") << " an index");
        // It is the common case in real mail (the test data alone is mostly crafted to change).
        if (corpus) CHECK(t.copied * 4 > t.messages);
        if (corpus) CHECK(t.without_gmime * 2 > t.copied);
    }
}

TEST_CASE("inert copy: HTML whose every cid: URL is one part's Content-ID as written is copied where no index is kept")
{
    const std::string head = "From: a@example.org\nMessage-ID: <cid@example.org>\nMIME-Version: 1.0\n"
                             "Content-Type: multipart/related; boundary=r\n\n--r\nContent-Type: text/html\n";
    const std::string image = "--r\nContent-Type: image/png\nContent-ID: <i@x>\nContent-Transfer-Encoding: base64\n\niVBORw0K\n";
    const std::vector<std::pair<std::string, bool>> cases = {
        {head + "\n<img src=\"cid:i@x\"><a href=\"http://example.org/\">x</a>\n" + image + "--r--\n", true},
        {head + "Content-Transfer-Encoding: base64\n\nPGltZyBzcmM9ImNpZDppQHgiPgo=\n" + image + "--r--\n", true}, // <img src="cid:i@x">
        {head + "\n<img src=\"cid:I@x\">\n" + image + "--r--\n", false},   // another case: repaired
        {head + "\n<img src=\"cid:<i@x>\">\n" + image + "--r--\n", false}, // brackets: repaired
        {head + "\n<img src=\" cid:i@x\">\n" + image + "--r--\n", false},  // padded
        {head + "\n<img src=\"cid:j@x\">\n" + image + "--r--\n", false},   // dangling: reported
        {head + "\n<img src=\"cid:i@x\">\n" + image + image + "--r--\n", false}, // two parts hold it
        {head + "\n<img src=\"i@x\">\n" + image + "--r--\n", false},       // the Content-ID without cid:
        {head + "\n<img src=\"i%40x\">\n" + image + "--r--\n", false},     // ... %-encoded
        {head + "\n<img src=\"cid:i@x\"><a href=\"mid:m@x\">m</a>\n" + image + "--r--\n", false}, // mid: waits
        {head + "\n<img src=\"cid:i@x\">\n--r\nContent-Type: image/png\nContent-ID: i@x\n\nx\n--r--\n", false},
        {head + "Content-Type: text/html; charset=utf-16le\n\n<img src=\"cid:i@x\">\n" + image + "--r--\n", false},
        // A multipart/related with a Content-Transfer-Encoding, as some senders write it:
        // GMime reads its parts all the same (the line check stopped at the base64 image).
        {"From: a@example.org\nMessage-ID: <cid@example.org>\nMIME-Version: 1.0\nContent-Type: multipart/related; "
         "boundary=r\nContent-Transfer-Encoding: quoted-printable\n\n--r\nContent-Type: text/html\n\n<img src=\"cid:i@x\">\n" +
             image + "--r--\n",
         true},
        // A Content-ID without '@' (Gmail's "<ii_...>"): GMime reads it as written.
        {head + "\n<img src=\"cid:ii_1507\">\n--r\nContent-Type: image/png\nContent-ID: <ii_1507>\n\nx\n--r--\n", true},
        {head + "\n<img src=\"cid:ii_1507\">\n--r\nContent-Type: image/png\nContent-ID: <ii 1507>\n\nx\n--r--\n", false},
    };
    std::vector<std::unique_ptr<Pass>> passes = default_passes(RefOptions::Mid::Check);
    Engine engine(passes, EngineConfig{});
    REQUIRE(engine.inert_check() != nullptr);
    for (const auto &c : cases) {
        const auto &m = c.first;
        const auto &copied = c.second;
        CAPTURE(m);
        Source src = Source::from_bytes(m, "cid");
        Segment seg;
        seg.msg_end = seg.next = static_cast<std::int64_t>(m.size());
        CHECK(MessageContext::parse(src, seg, 1, false, Limits{}, engine.inert_check())->headers_only() == copied);
    }
    for (RefOptions::Mid mid : {RefOptions::Mid::Repair, RefOptions::Mid::Check}) {
        Twins t(mid);
        for (const auto &[m, copied] : cases) t.plan_bytes(m, m.substr(0, 80));
        t.same_index();
    }
}

TEST_CASE("inert copy: a plain <id> is read as GMime reads it, without GMime")
{
    // plain_angle_id answers only where GMime's unfold, decode_text and decode_message_id
    // give the same: each value is compared with those three calls (the slow path of
    // message_id_of_value), and the forms it must leave to GMime give nothing.
    auto gmime = [](const std::string &raw) {
        gchar *unfolded = g_mime_utils_header_unfold(raw.c_str());
        gchar *decoded = g_mime_utils_header_decode_text(nullptr, unfolded);
        gchar *id = g_mime_utils_decode_message_id(decoded);
        std::string out = id ? id : "";
        g_free(id);
        g_free(decoded);
        g_free(unfolded);
        return out;
    };
    for (const char *plain : {" <a@b>\n", "<a@b>", " \t<a.b.c@d.e-f>\r\n", " <ii_1507>\n", " <x!#$%&'*+-/=?^_`{|}~@y.z>\n",
                              " <a@b>  \n", " <1234.5678@[x]>\n"}) {
        CAPTURE(plain);
        const auto id = plain_angle_id(plain);
        if (std::string(plain).find('[') != std::string::npos) {
            CHECK(!id);
            continue;
        }
        REQUIRE(id);
        CHECK(*id == gmime(plain));
        CHECK(message_id_of_value(plain) == gmime(plain));
    }
    for (const char *other : {" <a..b@c>\n", " <.a@c>\n", " <a@b.>\n", " <a@@b>\n", " <@b>\n", " <a@>\n", " <\"q r\"@b>\n",
                              " <a@b> (c)\n", " (c) <a@b>\n", " <a b@c>\n", " a@b\n", " <>\n", " <a@b\n", " =?us-ascii?q?<a@b>?=\n",
                              " \n <a@b>\n", " <a@b>\n <c@d>\n"}) {
        CAPTURE(other);
        CHECK(!plain_angle_id(other));
        CHECK(message_id_of_value(other) == gmime(other)); // GMime's own reading, whatever it is
    }
}

TEST_CASE("inert copy: a message of one line (bare CRs, old Mac mail) gets GMime's Message-ID without GMime")
{
    // GMime reads a message whose only LF ends it as one header field, bare CRs and all:
    // no Message-ID unless that field is one (then GMime reads it). The twins compare the
    // copy's Message-ID with GMime's whole parse, and the plans.
    Twins t(RefOptions::Mid::Check);
    const std::pair<std::string, bool> cases[] = {
        {"Return-Path: <>\rMessage-ID: <a@b>\rSubject: x\r\rbody\r\n", true},
        {"Received: from x\r\tby y\rContent-Type: text/html\r\r<a href=\"cid:x\">\r\n", true},
        {"Subject: one field and no body\n", true},
        {"Message-ID: <a@b>\rSubject: x\r\rbody\r\n", false}, // GMime's reading
        {"Bad name: x\rMessage-ID: <a@b>\r\n", false},
        {"Subject: x\rMessage-ID: <a@b>\r\nSubject: y\n\nbody\n", false}, // two lines: the plain reading
    };
    for (const auto &c : cases) { // (not a structured binding: clang 14 cannot capture one in CAPTURE)
        const std::string &m = c.first;
        CAPTURE(m);
        CHECK(plain_message_id(m).has_value() == c.second);
        t.plan_bytes(m, m.substr(0, 40));
    }
    CHECK(t.messages == 6);
    CHECK(t.without_gmime == 3); // the first three
}
