// The offload pass's pieces (filters/offload.hh): the base64 forms a part can be given back
// in, checked against Python's base64.encodebytes (76-character lines) and by hand; the
// names, the URL template, the durations and the dates.
#include "offload.hh"
#include "helpers.hh"
#include "sha256.hh"
#include "streamed_body.hh"

#include <doctest/doctest.h>

#include <string>

#include <unistd.h>

using namespace mimeuri;
using namespace mimeuri::offload;

namespace {

std::optional<Form> form_of(const std::string &text, const std::string &eol, std::size_t cut)
{
    FormCheck c(eol);
    for (std::size_t at = 0; at < text.size(); at += cut) c.feed(std::string_view(text).substr(at, cut));
    return c.end();
}

std::string made(const Form &f, const std::string &bytes, const std::string &eol, std::size_t cut)
{
    Base64InLines w(f.line, f.trail, eol);
    std::string out;
    for (std::size_t at = 0; at < bytes.size(); at += cut) w.feed(std::string_view(bytes).substr(at, cut), out);
    w.end(out);
    return out;
}

} // namespace

TEST_CASE("offload: base64 forms that can be made again, and those that cannot")
{
    // "hello world, hello world!" (25 octets) in lines of 8: 36 characters, 4 full lines + 4.
    const std::string bytes = "hello world, hello world!";
    const std::string b64 = "aGVsbG8gd29ybGQsIGhlbGxvIHdvcmxkIQ=="; // base64.b64encode
    struct Row {
        std::string text, eol;
        std::optional<std::string> form;
    } rows[] = {
        {"aGVsbG8g\nd29ybGQs\nIGhlbGxv\nIHdvcmxk\nIQ==\n", "\n", "base64 8 1"},
        {"aGVsbG8g\r\nd29ybGQs\r\nIGhlbGxv\r\nIHdvcmxk\r\nIQ==", "\r\n", "base64 8 0"},
        {"aGVsbG8g\nd29ybGQs\nIGhlbGxv\nIHdvcmxk\nIQ==\n\n\n", "\n", "base64 8 3"},
        {b64 + "\n", "\n", "base64 36 1"},
        {"aGVsbG8g\nd29ybGQs\nIGhlbGxvIHdvcmxk\nIQ==\n", "\n", std::nullopt},   // a longer line
        {"aGVsbG8g\nd29y\nbGQsIGhl\nbGxvIHdvcmxkIQ==\n", "\n", std::nullopt},  // a short line inside
        {"aGVsbG8g\r\nd29ybGQs\nIGhlbGxv\nIHdvcmxk\nIQ==\n", "\n", std::nullopt}, // another line end
        {"aGVsbG8g\nd29ybGQs\n\nIGhlbGxv\nIHdvcmxk\nIQ==\n", "\n", std::nullopt}, // an empty line inside
        {"aGVsbG8g\nd29ybGQs\nIGhlbGxv\nIHdvcmxk\nIR==\n", "\n", std::nullopt},   // unused bits set
        {"aGVsbG8g d29ybGQs\n", "\n", std::nullopt},                            // a space
    };
    for (const Row &r : rows)
        for (std::size_t cut : {1u, 3u, 1000u}) {
            CAPTURE(r.text);
            CAPTURE(cut);
            auto f = form_of(r.text, r.eol, cut);
            REQUIRE(f.has_value() == r.form.has_value());
            if (!f) continue;
            CHECK(f->text() == *r.form);
            CHECK(Form::parse(f->text())->text() == *r.form);
            CHECK(made(*f, bytes, r.eol, cut) == r.text);
        }
}

TEST_CASE("offload: names, URLs, durations, dates")
{
    CHECK(path_safe("report 2026.pdf") == "report_2026.pdf");
    CHECK(path_safe("../../etc/passwd") == "_.._etc_passwd");
    CHECK(path_safe("") == "file");
    CHECK(path_safe("r\xc3\xa9sum\xc3\xa9.doc") == "r__sum__.doc");
    CHECK(fill_url("https://h/{name}/{filename}", "ab", "f.pdf") == "https://h/ab/f.pdf");
    CHECK(parse_duration("30d") == 30 * 86400);
    CHECK(parse_duration("3600") == 3600);
    CHECK(parse_duration("2w") == 14 * 86400);
    CHECK(!parse_duration("d"));
    CHECK(!parse_duration("3x"));
    CHECK(!parse_duration("1h2"));
    // RFC 5322 3.3, checked with `date -u -R -d @1800000000`.
    CHECK(rfc5322_date(1800000000) == "Fri, 15 Jan 2027 08:00:00 +0000");
    CHECK(Form::parse("raw").has_value());
    CHECK(!Form::parse("base64 0 1"));
    CHECK(!Form::parse("base64 76 1 x"));
}

// Restore copies a stored file into the output only as the output is written
// (StreamedBody::File), after the pass checked it against its name: the bytes copied are
// checked again against the size and SHA-256 taken then, so a file changed in between fails
// the write (a temporary failure) instead of making a message of other bytes.
TEST_CASE("offload: a stored file is copied into the output as taken when it was checked, or not at all")
{
    testing::TempDir d;
    const std::string path = d.path + "/f";
    const std::string bytes = "hello world, hello world!";
    auto put = [&](const std::string &b) { d.file("f", b); };
    Sha256 sha;
    sha.update(bytes.data(), bytes.size());
    StreamedBody body;
    body.text = "Content-Type: application/octet-stream\n\n";
    body.file = {path, bytes.size(), sha.digest(), 8, 1};
    auto written = [&]() -> Result<std::string> {
        std::string out;
        Status s = body.write(reader_of(std::string_view()), [&](std::string_view v) {
            out.append(v);
            return ok();
        });
        if (!s) return s.error();
        return out;
    };
    put(bytes);
    auto out = written();
    REQUIRE(out);
    // The form's base64 in lines of 8 (the first row of the forms' table above).
    CHECK(*out == body.text + "aGVsbG8g\nd29ybGQs\nIGhlbGxv\nIHdvcmxk\nIQ==\n");
    body.crlf = true;
    CHECK(*written() == body.text + "aGVsbG8g\r\nd29ybGQs\r\nIGhlbGxv\r\nIHdvcmxk\r\nIQ==\r\n");
    body.file.b64_line = 0; // raw
    CHECK(*written() == body.text + bytes);
    for (const std::string &other : {std::string("hello world, hello World!"), bytes + "x", bytes.substr(1)}) {
        CAPTURE(other);
        put(other);
        auto bad = written();
        REQUIRE(!bad);
        CHECK(bad.error().code == Code::TempFail);
    }
    ::unlink(path.c_str());
    auto gone = written();
    REQUIRE(!gone);
    CHECK(gone.error().code == Code::TempFail);
}
