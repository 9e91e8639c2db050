// --cid=inline's rewritten parts made as the output is written (src/mime/streamed_body.cc): the
// encoders in pieces equal the encoders whole; an inlined message's output equals the bytes
// built whole by hand (data: URLs, the transfer encoding, line ends) whatever the part's
// encoding, line ends and size (parts held decoded, and parts decoded again from the input);
// the plan crosses processes and a service's chunked body unchanged; an input that changed
// before the output is written fails the message, never a half-made part committed.
#include "engine.hh"
#include "helpers.hh"
#include "milter_edit.hh"
#include "output.hh"
#include "references.hh"
#include "streamed_body.hh"
#include "transfer.hh"

#include <doctest/doctest.h>
#include <glib.h>
#include <unistd.h>

#include <random>

using namespace mimeuri;

namespace {

std::string b64(std::string_view bytes)
{
    GCharPtr e(g_base64_encode(reinterpret_cast<const guchar *>(bytes.data()), bytes.size()));
    return e.get();
}

std::string lines76(const std::string &flat)
{
    std::string out;
    for (std::size_t at = 0; at < flat.size(); at += 76) out.append(flat, at, 76).append("\n");
    return out;
}

std::string crlf(const std::string &lf)
{
    std::string out;
    for (char c : lf) c == '\n' ? out.append("\r\n") : out.append(1, c);
    return out;
}

// A related message: an HTML part (cte, LF) referring by cid: to each image twice, and the
// images (base64).
std::string message(const std::string &cte, const std::string &html_encoded, const std::vector<std::string> &images)
{
    std::string m = "Message-ID: <s@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"bb\"\n\n"
                    "--bb\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: " +
                    cte + "\n\n" + html_encoded + "\n";
    for (std::size_t i = 0; i < images.size(); ++i)
        m += "--bb\nContent-Type: image/png\nContent-ID: <i" + std::to_string(i) +
             "@x>\nContent-Transfer-Encoding: base64\n\n" + lines76(b64(images[i]));
    return m + "--bb--\n";
}

std::string html_of(std::size_t images, const char *prefix)
{
    std::string h = std::string(prefix) + "<html><body>\n";
    for (std::size_t r = 0; r < 2; ++r)
        for (std::size_t i = 0; i < images; ++i)
            h += "<p>From here -- <img src=\"cid:i" + std::to_string(i) + "@x\"> and .dot  \n";
    return h + "</body></html>";
}

std::vector<std::unique_ptr<Pass>> inlining()
{
    RefOptions o;
    o.cid = RefOptions::Cid::Inline;
    o.inline_max = 8u << 20;
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<ReferencesPass>(o));
    return passes;
}

} // namespace

TEST_CASE("quoted-printable and base64 in pieces equal the whole text encoded, wherever it is cut")
{
    std::mt19937 rng(32);
    const std::string alphabet = "ab -.F\r\n\t=\xff";
    for (int round = 0; round < 400; ++round) {
        std::string text;
        const std::size_t len = rng() % 400;
        for (std::size_t i = 0; i < len; ++i) {
            if (rng() % 9 == 0) text += "From ";
            else if (rng() % 13 == 0) text += std::string(rng() % 90, 'x');
            else text += alphabet[rng() % alphabet.size()];
        }
        for (bool crlf_eol : {false, true}) {
            transfer::QuotedPrintable qp(crlf_eol);
            transfer::Base64Lines lines;
            std::string q, l;
            for (std::size_t at = 0; at < text.size();) {
                const std::size_t n = std::min<std::size_t>(text.size() - at, rng() % 11);
                qp.feed(std::string_view(text).substr(at, n), q);
                lines.feed(std::string_view(text).substr(at, n), l);
                at += n;
            }
            qp.finish(q);
            lines.finish(l);
            CAPTURE(text);
            CHECK(q == transfer::quoted_printable(text, crlf_eol));
            CHECK(l == transfer::base64_lines(text));
        }
    }
}

TEST_CASE("an inlined part written as the output is written equals the part built whole")
{
    // Images under and over the held bytes' budget (1 MiB): held decoded, and decoded again
    // from the input; sizes of every remainder modulo 3 (the payload's padding).
    std::mt19937 rng(7);
    auto random_bytes = [&](std::size_t n) {
        std::string s(n, '\0');
        for (char &c : s) c = static_cast<char>(rng());
        return s;
    };
    const std::vector<std::string> images = {random_bytes(1000), random_bytes(1001), random_bytes(900 * 1024 + 2),
                                             random_bytes(1400 * 1024)};
    const std::string html = html_of(images.size(), "");
    std::string with_urls = html; // what --cid=inline makes of the HTML
    for (std::size_t i = 0; i < images.size(); ++i) {
        const std::string ref = "cid:i" + std::to_string(i) + "@x", url = "data:image/png;base64," + b64(images[i]);
        for (auto at = with_urls.find(ref); at != std::string::npos; at = with_urls.find(ref, at + url.size()))
            with_urls.replace(at, ref.size(), url);
    }
    struct Case {
        std::string cte, encoded, want_cte, want_body;
    };
    const std::string qp_in = transfer::quoted_printable(html, false);
    const Case cases[] = {
        {"quoted-printable", qp_in, "quoted-printable", transfer::quoted_printable(with_urls, false)},
        {"base64", lines76(b64(html)), "base64", lines76(b64(with_urls))},
        {"7bit", html, "quoted-printable", transfer::quoted_printable(with_urls, false)},
    };
    for (const Case &c : cases)
        for (bool crlf_eol : {false, true}) {
            CAPTURE(c.cte);
            CAPTURE(crlf_eol);
            std::string in = message(c.cte, c.encoded, images);
            std::string head_in = "Content-Transfer-Encoding: " + c.cte + "\n\n" + c.encoded + "\n";
            std::string want = in;
            want.replace(want.find(head_in), head_in.size(),
                         "Content-Transfer-Encoding: " + c.want_cte + "\n\n" + c.want_body + "\n");
            if (crlf_eol) {
                in = crlf(in);
                want = crlf(want);
            }
            auto passes = inlining();
            Engine engine(passes, EngineConfig{});
            Plan plan = plan_message(engine, in);
            REQUIRE_FALSE(plan.failed());
            bool streamed = false;
            for (const Edit &e : plan.edits) streamed = streamed || e.streamed;
            CHECK(streamed);
            CHECK(apply_edits(in, plan.edits) == want);
            // Between processes (--jobs, a service), and through a service's chunked body.
            Plan back = deserialize(serialize(plan));
            CHECK(apply_edits(in, back.edits) == want);
            ReadAt read = [&](std::int64_t off, char *buf, std::size_t len) -> Result<std::size_t> {
                std::size_t n = std::min(len, in.size() - static_cast<std::size_t>(off));
                std::copy_n(in.data() + off, n, buf);
                return n;
            };
            std::string chunked;
            REQUIRE(stream_edited(read, 0, static_cast<std::int64_t>(in.size()), back.edits, [&](std::string_view v) {
                chunked += v;
                return true;
            }, 4096));
            CHECK(chunked == want);
        }
}

TEST_CASE("an input changed before its inlined parts are written fails the output, which is not committed")
{
    std::string big(1500 * 1024, 'z');
    const std::string in = message("quoted-printable", html_of(1, ""), {big});
    testing::TempDir d;
    const std::string path = d.file("in.eml", in);
    auto src = Source::open_path(path, 1 << 20);
    REQUIRE(src.ok());
    auto segs = split(*src, Format::Message);
    REQUIRE(segs.ok());
    auto passes = inlining();
    Engine engine(passes, EngineConfig{});
    Plan plan = engine.plan({*src, segs->front(), 1, false, 0});
    REQUIRE_FALSE(plan.edits.empty());
    // The image's bytes change under the run (same size): its payload no longer decodes to
    // what was planned.
    std::string changed = in;
    const std::size_t image = changed.rfind("enp6");
    REQUIRE(image != std::string::npos);
    changed.replace(image - 4000, 4000, std::string(4000, '!'));
    {
        std::FILE *f = std::fopen(path.c_str(), "r+");
        REQUIRE(f);
        std::fwrite(changed.data(), 1, changed.size(), f);
        std::fclose(f);
    }
    const std::string target = d.file("out.eml", "old");
    auto sink = Sink::atomic(target);
    REQUIRE(sink.ok());
    std::vector<const Edit *> edits;
    for (const Edit &e : plan.edits) edits.push_back(&e);
    Status s = write_spliced(*sink, *src, 0, src->size(), edits);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Code::TempFail);
    sink->discard();
    CHECK(testing::read_file(target) == "old");
}
