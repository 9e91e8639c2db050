// RFC 2017: the URL-parameter writer and reader, the round-trip property, re-parsing by
// GMime and by Python's email package, and the pass's report.
#include "external_body.hh"
#include "helpers.hh"

#include <doctest/doctest.h>
#include <json-glib/json-glib.h>

#include <random>

using namespace mimeuri;

namespace {

std::string url_of_length(std::size_t n)
{
    std::string u = "http://example.org/";
    if (n < u.size()) return u.substr(0, n);
    while (u.size() < n) u += static_cast<char>('a' + u.size() % 26);
    return u;
}

// Every URL-word of a written parameter, and the URL read back from it.
std::vector<std::string> written_words(const std::string &param)
{
    REQUIRE(param.rfind("URL=\"", 0) == 0);
    REQUIRE(param.back() == '"');
    std::vector<std::string> out;
    std::string inner = param.substr(5, param.size() - 6), w;
    for (char c : inner) {
        if (c == '\n' || c == '\t' || c == ' ') {
            if (!w.empty()) out.push_back(w);
            w.clear();
        } else {
            w += c;
        }
    }
    if (!w.empty()) out.push_back(w);
    return out;
}

std::string random_url(std::mt19937 &rng)
{
    std::uniform_int_distribution<int> len(0, 300), byte(1, 255), kind(0, 9);
    std::string u = "http://example.org/";
    for (int n = len(rng); n > 0; --n) {
        int k = kind(rng);
        if (k == 0) u += "%20";
        else if (k < 3) u += static_cast<char>(byte(rng));
        else u += static_cast<char>('a' + byte(rng) % 26);
    }
    return u;
}

} // namespace

TEST_CASE("3.1 (1): exactly SPACE, CTLs, quote, backslash and 8-bit are encoded")
{
    CHECK(rfc2017::encode("http://x/a b") == "http://x/a%20b");
    CHECK(rfc2017::encode("http://x/%20") == "http://x/%20"); // already encoded: left alone
    CHECK(rfc2017::encode("\"\\\t\x7f\xc3\xa9") == "%22%5C%09%7F%C3%A9");
    CHECK(rfc2017::encode("ftp://x/~a;type=i?q=1&r#f") == "ftp://x/~a;type=i?q=1&r#f");
    CHECK(rfc2017::extract("\"ftp://a/b/\r\n\t c/ d\"") == "ftp://a/b/c/d");
}

TEST_CASE("URL lengths 0, 1, 40, 41, 80, 81 and 1000: words of at most 40")
{
    for (std::size_t n : {0, 1, 40, 41, 80, 81, 1000}) {
        CAPTURE(n);
        std::string u = url_of_length(n);
        std::string p = rfc2017::parameter(u);
        auto words = written_words(p);
        std::string joined;
        for (const auto &w : words) {
            CHECK(w.size() <= rfc2017::max_word);
            joined += w;
        }
        CHECK(joined == u);
        CHECK(words.size() == (n + 39) / 40); // the only "/" is too early to move a break
    }
    // A %XX escape is never cut between words.
    std::string pct = std::string(39, 'a') + "%C3%A9";
    for (const auto &w : rfc2017::words(pct))
        for (std::size_t at = w.find('%'); at != std::string::npos; at = w.find('%', at + 1))
            CHECK(at + 2 < w.size());
    CHECK(rfc2017::words(pct)[0] == std::string(39, 'a'));
}

TEST_CASE("round trip: read(write(u)) == encode(u), every word at most 40, for generated URLs")
{
    std::mt19937 rng(2017);
    for (int i = 0; i < 5000; ++i) {
        std::string u = random_url(rng);
        std::string p = rfc2017::parameter(u);
        for (const auto &w : written_words(p)) REQUIRE(w.size() <= rfc2017::max_word);
        CHECK(rfc2017::extract(p.substr(4)) == rfc2017::encode(u));
    }
}

TEST_CASE("GMime and Python's email package recover the URL from what mimeuri writes")
{
    std::mt19937 rng(1996);
    testing::TempDir d;
    std::vector<std::string> urls;
    std::string mbox;
    for (int i = 0; i < 200; ++i) {
        std::string u = random_url(rng);
        urls.push_back(rfc2017::encode(u));
        // A message with a non-conforming URL parameter (RFC 2231 form) for mimeuri to rewrite.
        std::string pct;
        static const char hex[] = "0123456789ABCDEF";
        for (unsigned char c : u) {
            pct += '%';
            pct += hex[c >> 4];
            pct += hex[c & 15];
        }
        mbox += "From x@example.org Sat Nov 21 00:00:00 2026\nMessage-ID: <" + std::to_string(i) +
                "@example.org>\nContent-Type: message/external-body; access-type=URL;\n URL*0*=utf-8''" + pct +
                "\n\nContent-Type: text/plain\n\n\n";
    }
    std::string in = d.file("in.mbox", mbox);
    auto r = testing::mimeuri(testing::quote(in) + " -o " + testing::quote(d / "out.mbox"));
    REQUIRE(r.status == 0);
    std::string out = testing::read_file(d / "out.mbox");
    CHECK(out.find("URL*") == std::string::npos); // never RFC 2231 for URL on output

    // GMime: the parameter as GMime decodes it, white space removed (RFC 2017 3.1).
    GMimeStream *stream = g_mime_stream_mem_new_with_buffer(out.data(), out.size());
    GMimeParser *parser = g_mime_parser_new_with_stream(stream);
    g_mime_parser_set_format(parser, GMIME_FORMAT_MBOX);
    std::size_t i = 0;
    while (!g_mime_parser_eos(parser)) {
        GMimeMessage *m = g_mime_parser_construct_message(parser, nullptr);
        if (!m) break;
        GMimeContentType *ct = g_mime_object_get_content_type(g_mime_message_get_mime_part(m));
        const char *v = g_mime_content_type_get_parameter(ct, "URL");
        REQUIRE(v);
        REQUIRE(i < urls.size());
        CHECK(rfc2017::extract(v) == urls[i]);
        ++i;
        g_object_unref(m);
    }
    CHECK(i == urls.size());
    g_object_unref(parser);
    g_object_unref(stream);

    // Python's email package, when python3 is there (it comes with meson).
    if (testing::sh("command -v python3").status != 0) return testing::skip("python3 not found: the Python re-parse");
    std::string script = d.file("read.py", "import mailbox, re, sys\n"
                                           "for m in mailbox.mbox(sys.argv[1]):\n"
                                           "    print(re.sub(r'\\s', '', m.get_param('url')))\n");
    auto py = testing::sh("python3 " + testing::quote(script) + " " + testing::quote(d / "out.mbox"));
    REQUIRE(py.status == 0);
    std::string expected;
    for (const auto &u : urls) expected += u + "\n";
    CHECK(py.out == expected);
}

namespace {

struct Run {
    testing::Proc proc;
    std::vector<JsonObject *> entries;
    std::vector<JsonParser *> parsers;
    ~Run()
    {
        for (auto *p : parsers) g_object_unref(p);
    }
};

// The external_bodies entries of every message of a --check run.
void check_run(Run &run, const std::string &args, const std::string &message)
{
    testing::TempDir d;
    std::string f = d.file("m.eml", message);
    run.proc = testing::mimeuri("--check " + args + " " + testing::quote(f));
    REQUIRE(run.proc.status == 0);
    std::size_t pos = 0;
    while (pos < run.proc.out.size()) {
        auto nl = run.proc.out.find('\n', pos);
        JsonParser *p = json_parser_new();
        run.parsers.push_back(p);
        REQUIRE(json_parser_load_from_data(p, run.proc.out.data() + pos, static_cast<gssize>(nl - pos), nullptr));
        JsonArray *a = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "external_bodies");
        for (guint i = 0; i < json_array_get_length(a); ++i) run.entries.push_back(json_array_get_object_element(a, i));
        pos = nl + 1;
    }
}

std::string str(JsonObject *o, const char *m)
{
    if (!json_object_has_member(o, m) || json_object_get_null_member(o, m)) return "<null>";
    return json_object_get_string_member(o, m);
}

} // namespace

TEST_CASE("report: statuses, reasons and the phantom header block")
{
    std::string msg = "Subject: r\nContent-Type: multipart/mixed; boundary=b\n\n"
                      "--b\nContent-Type: message/external-body; access-type=URL; URL=\"http://x.example/ok\"\n\n"
                      "Content-Type: text/plain\nContent-ID: <in@x>\nContent-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==\n\n"
                      "--b\nContent-Type: message/external-body; access-type=URL; URL=\"mailto:a@example.org\"\n\n"
                      "Content-Type: text/plain\n\n"
                      "--b\nContent-Type: message/external-body; access-type=URL\n\nContent-Type: text/plain\n\n"
                      "--b\nContent-Type: message/external-body; access-type=URL; URL=\"file:///etc/passwd\"\n\n\n"
                      "--b\nContent-Type: message/external-body; access-type=URL; URL=\"http://x.example/" +
                      std::string(50, 'a') + "\"\n\nContent-Type: text/plain\n\nnot blank\n"
                      "--b\nContent-Type: message/external-body; access-type=content-id\n\nContent-ID: <target@x>\n\n"
                      "--b\nContent-Type: text/plain\nContent-ID: <target@x>\n\nthe body\n"
                      "--b\nContent-Type: message/external-body; access-type=TFTP; site=t.example; name=boot.img; "
                      "mode=octet\n\nContent-Type: application/octet-stream\n\n"
                      "--b\nContent-Type: message/external-body; access-type=ftp; site=f.example; directory=/pub/x; "
                      "name=\"a b.txt\"; mode=ascii\n\nContent-Type: text/plain\n\n"
                      "--b--\n";
    Run check;
    check_run(check, "--external-body=check", msg);
    REQUIRE(check.entries.size() == 8);
    auto *e = check.entries.data();
    CHECK(str(e[0], "status") == "ok");
    CHECK(str(e[0], "url") == "http://x.example/ok");
    JsonObject *inner = json_object_get_object_member(e[0], "inner");
    CHECK(std::string(json_object_get_string_member(inner, "content-md5")) == "Q2hlY2sgSW50ZWdyaXR5IQ==");
    CHECK(str(e[1], "status") == "disallowed");
    CHECK(str(e[2], "status") == "invalid");
    CHECK(str(e[2], "reason").find("mandatory") != std::string::npos);
    CHECK(str(e[3], "status") == "disallowed"); // file: is not in the default allow-list
    CHECK(str(e[3], "reason").find("no inner header block") != std::string::npos);
    CHECK(str(e[4], "status") == "invalid"); // --check: a word of 67 characters
    CHECK(str(e[4], "reason").find("longer than 40") != std::string::npos);
    CHECK(str(e[4], "reason").find("phantom body not empty") != std::string::npos);
    CHECK(str(e[5], "access_type") == "content-id");
    CHECK(str(e[5], "status") == "ok");
    CHECK(str(e[5], "url") == "cid:target%40x");
    CHECK(str(e[5], "reason") == "resolves to part 7");
    CHECK(str(e[6], "access_type") == "tftp");

    Run normalize;
    check_run(normalize, "--external-body=normalize --legacy-to-url --external-body-schemes=http,file,tftp", msg);
    REQUIRE(normalize.entries.size() == 8);
    CHECK(str(normalize.entries[3], "status") == "ok"); // file allowed now
    CHECK(str(normalize.entries[4], "status") == "normalized");
    CHECK(str(normalize.entries[6], "status") == "converted");
    CHECK(str(normalize.entries[6], "url") == "tftp://t.example/boot.img;mode=octet");
    CHECK(json_object_has_member(normalize.entries[6], "original"));
    // ftp (RFC 2046 5.2.3.1): an absolute directory's "/" is %2F (RFC 1738 3.2.2), a space
    // in the name encoded, ascii mode as ;type=a.
    CHECK(str(normalize.entries[7], "status") == "converted");
    CHECK(str(normalize.entries[7], "url") == "ftp://f.example/%2Fpub/x/a%20b.txt;type=a");
}

TEST_CASE("the corpus's external-body messages: read, reported, untouched by default")
{
    const char *files[] = {"mailgun-flanker/message-external-body.eml", "python-cpython/msg_36.txt",
                           "stalwartlabs-mail-parser/rfc/001.eml"};
    std::size_t entries = 0;
    for (const char *rel : files) {
        std::string path = std::string(MIMEURI_CORPUS) + "/" + rel;
        if (!g_file_test(path.c_str(), G_FILE_TEST_EXISTS)) {
            testing::skip("corpus file missing: " + std::string(rel));
            continue;
        }
        CAPTURE(rel);
        auto out = testing::mimeuri(testing::quote(path));
        CHECK(out.status == 0);
        CHECK(out.out == testing::read_file(path)); // no access-type=URL: nothing to normalize
        Run run;
        check_run(run, "", testing::read_file(path));
        entries += run.entries.size();
        // Only a Content-Type that does not parse has no access type, and then it is invalid.
        for (auto *e : run.entries)
            if (str(e, "access_type") == "<null>") CHECK(str(e, "status") == "invalid");
        // Converted, every anon-ftp part becomes a URL within the 40-character words.
        auto conv = testing::mimeuri("--legacy-to-url " + testing::quote(path));
        CHECK(conv.status == 0);
        std::size_t at = 0;
        while ((at = conv.out.find("URL=\"", at)) != std::string::npos) {
            auto end = conv.out.find('"', at + 5);
            auto words = written_words(conv.out.substr(at, end - at + 1));
            for (const auto &w : words) CHECK(w.size() <= 40);
            at = end;
        }
    }
    if (entries) CHECK(entries == 2 + 2 + 3);
    // mail-server's phantom body is the request to send (RFC 2046 5.2.3.4): no note.
    Run cpython;
    std::string msg36 = std::string(MIMEURI_CORPUS) + "/python-cpython/msg_36.txt";
    if (g_file_test(msg36.c_str(), G_FILE_TEST_EXISTS)) {
        check_run(cpython, "", testing::read_file(msg36));
        REQUIRE(cpython.entries.size() == 2);
        CHECK(str(cpython.entries[0], "access_type") == "mail-server");
        CHECK(str(cpython.entries[0], "reason") == "<null>");
    }
}
