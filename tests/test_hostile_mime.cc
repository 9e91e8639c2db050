// Hostile input: crafted messages an outside sender or a local user could send.
// Each case checks the promised result: structure unchanged, parts intact, limits held.
// This file: what is written into bodies and headers, content windows, mbox lengths, and
// the limits that must hold while GMime parses.
#include "helpers.hh"
#include "message.hh"
#include "transfer.hh"

#include <doctest/doctest.h>

#include <gmime/gmime.h>

#include <string>
#include <vector>

using testing::quote;

namespace {

testing::Proc run(const std::string &args, const std::string &stdin_path = {}) { return testing::mimeuri(args, stdin_path); }

// Lines of s (LF-separated; a CR before the LF is kept in the line).
std::vector<std::string> lines_of(const std::string &s)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < s.size()) {
        auto nl = s.find('\n', pos);
        if (nl == std::string::npos) nl = s.size();
        out.push_back(s.substr(pos, nl - pos));
        pos = nl + 1;
    }
    return out;
}

// How many lines start with the delimiter "--" + boundary (RFC 2046 5.1.1 reads a prefix).
int delimiter_lines(const std::string &msg, const std::string &boundary)
{
    int n = 0;
    for (const auto &l : lines_of(msg))
        if (l.rfind("--" + boundary, 0) == 0) ++n;
    return n;
}

bool has_line_starting(const std::string &msg, const std::string &prefix)
{
    for (const auto &l : lines_of(msg))
        if (l.rfind(prefix, 0) == 0) return true;
    return false;
}

std::string qp_html_message(const std::string &qp_html)
{
    return "Message-ID: <qp@x>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=b\n\n"
           "--b\nContent-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n" +
           qp_html +
           "\n--b\nContent-Type: image/png\nContent-ID: <img@x>\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n"
           "--b--\n";
}

} // namespace

TEST_CASE("quoted-printable: no encoded line starts with '-', 'From ' or '.', lines at most 76, decodes back")
{
    const std::vector<std::string> texts = {
        "a\n--b\nX-Injected: yes\n",
        "--b--",
        std::string(74, 'x') + "--b\n",  // a soft line break lands just before the dashes
        std::string(75, 'y') + "From me\n",
        "From here\n.\n. \n",
        "tab\t\nspace \nend=\xff\x01",
        "crlf\r\nline\r\n--b\r\n",
    };
    for (const auto &text : texts)
        for (bool crlf : {false, true}) {
            CAPTURE(crlf);
            std::string enc = mimeuri::transfer::quoted_printable(text, crlf);
            for (const auto &l : lines_of(enc)) {
                CHECK(l.size() <= 76);
                CHECK(l.rfind("-", 0) != 0);
                CHECK(l.rfind("From ", 0) != 0);
                CHECK(l.rfind(".", 0) != 0);
                CHECK(l.find('\r') == std::string::npos);
                if (!l.empty()) CHECK((l.back() != ' ' && l.back() != '\t'));
            }
            // In the message, LF line ends become the message's; decoding gives the text back
            // byte for byte (a CR or LF that is not the message's line break was =XX-encoded).
            std::string wire;
            for (char c : enc) {
                if (c == '\n' && crlf) wire += '\r';
                wire += c;
            }
            GMimeEncoding st;
            g_mime_encoding_init_decode(&st, GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
            std::string dec(wire.size() + 16, '\0');
            dec.resize(g_mime_encoding_flush(&st, wire.data(), wire.size(), dec.data()));
            CHECK(dec == text);
        }
}

TEST_CASE("structure injection through quoted-printable HTML: a decoded LF and a boundary stay content")
{
    testing::TempDir d;
    // =0A decodes to LF: the decoded HTML holds "--b" and a header at line starts.
    const std::string html = "<html><body><img src=3D\"cid:<img@x>\" alt=3D\"x=0A--b=0AX-Injected: yes=0A=0A<scri=\n"
                             "pt>alert(1)</script>=0A--b--=0A\">tail</body></html>";
    const std::string m = qp_html_message(html);
    std::string f = d.file("m.eml", m);
    for (const char *mode : {"--cid=repair", "--cid=inline"}) {
        CAPTURE(mode);
        auto r = run(std::string(mode) + " --report=" + quote(d / "r") + " " + quote(f));
        CHECK(r.status == 0);
        CHECK(r.out != m); // the reference was repaired or inlined
        CHECK(delimiter_lines(r.out, "b") == delimiter_lines(m, "b"));
        testing::MimeTree before = testing::mime_tree(m), after = testing::mime_tree(r.out);
        CHECK(after.types == before.types);
        REQUIRE(after.leaves.size() == before.leaves.size());
        // The HTML decodes to what it was, but for the reference itself.
        const std::string &h = after.leaves[0];
        CHECK(h.find("x\n--b\nX-Injected: yes\n\n<script>alert(1)</script>\n--b--\n") != std::string::npos);
        CHECK(h.find("cid:<img@x>") == std::string::npos);
        CHECK(after.leaves[1] == before.leaves[1]);
    }
}

TEST_CASE("a body that would hold an enclosing delimiter line is refused, not written")
{
    testing::TempDir d;
    // 8bit HTML: the rewrite splices the HTML as it is, so a delimiter can come only from
    // what the pass writes; a boundary that the HTML already holds as text (not at a line
    // start) must not become one. Here the nested boundary "b" is a prefix of "bb".
    const std::string m = "Message-ID: <n@x>\nContent-Type: multipart/mixed; boundary=bb\n\n--bb\n"
                          "Content-Type: multipart/related; boundary=b\n\n--b\nContent-Type: text/html\n\n"
                          "<img src=\"cid:<img@x>\"> --bb not a line start\n--b\nContent-Type: image/png\n"
                          "Content-ID: <img@x>\n\nAAAA\n--b--\n--bb--\n";
    auto r = run("- ", d.file("m.eml", m));
    CHECK(r.status == 0);
    CHECK(delimiter_lines(r.out, "b") == delimiter_lines(m, "b"));
    CHECK(r.out.find("src=\"cid:img@x\"") != std::string::npos);
}

TEST_CASE("a cid: or Content-Location URL with %0A%20 never reaches a generated header")
{
    testing::TempDir d;
    for (const char *id : {"abc%0A%20@x", "abc%0A%20%0A%20@x", "abc@x%0A%20%0A%20", "abc%0D%0AX-Injected:%20yes@x", "%0A%20"}) {
        CAPTURE(id);
        std::string m = std::string("Message-ID: <l@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                                    "Content-Type: text/html\n\n<img src=\"cid:") + id +
                        "\">\n--b\nContent-Type: image/png\nContent-Location: cid:" + id + "\n\nAAAA\n--b--\n";
        auto r = run("", d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK_FALSE(has_line_starting(r.out, "X-Injected"));
        // Every header line is a field or a continuation with text on it.
        bool in_headers = true;
        for (const auto &l : lines_of(r.out)) {
            if (l.rfind("--b", 0) == 0) {
                in_headers = true;
                continue;
            }
            if (l.empty()) {
                in_headers = false;
                continue;
            }
            if (!in_headers) continue;
            if (l[0] == ' ' || l[0] == '\t') CHECK(l.find_first_not_of(" \t") != std::string::npos);
            else CHECK(l.find(':') != std::string::npos);
        }
        CHECK(delimiter_lines(r.out, "b") == 3);
    }
}

TEST_CASE("header values: the one header check refuses a folded line of white space only")
{
    using mimeuri::check_header_value;
    CHECK(check_header_value("Content-ID", " <a@b>\n").ok());
    CHECK(check_header_value("Content-ID", " <a\n b@c>\n").ok()); // folding with text on the line
    CHECK_FALSE(check_header_value("Content-ID", " <a\n \n b@c>\n").ok());
    CHECK_FALSE(check_header_value("Content-ID", " <a\n\t\t\n b@c>\n").ok());
    CHECK_FALSE(check_header_value("Content-ID", " <a@b>\n \n").ok());
    CHECK_FALSE(check_header_value("Content-ID", " <a\nX-Injected: yes>\n").ok());
    CHECK_FALSE(check_header_value("Content-ID", " <a\r\n b>\n").ok());
}

TEST_CASE("truncated base64 HTML: a CRLF delimiter line in an LF message keeps the part's last bytes")
{
    testing::TempDir d;
    const std::string html = "<html><body><img src=\"cid:<img@x>\"> hello world end</body></html>";
    gchar *encoded = g_base64_encode(reinterpret_cast<const guchar *>(html.data()), html.size());
    std::string enc = encoded;
    g_free(encoded);
    std::string wrapped;
    for (std::size_t i = 0; i < enc.size(); i += 60) wrapped += enc.substr(i, 60) + "\n";
    // Every line ending of the two delimiter lines around the part: LF or CRLF.
    for (const char *before_eol : {"\n", "\r\n"})
        for (const char *after_eol : {"\n", "\r\n"})
            for (const char *content_eol : {"\n", "\r\n"}) {
                CAPTURE(before_eol);
                CAPTURE(after_eol);
                CAPTURE(content_eol);
                std::string body = wrapped;
                if (std::string(content_eol) == "\r\n") {
                    body.clear();
                    for (std::size_t i = 0; i < enc.size(); i += 60) body += enc.substr(i, 60) + "\r\n";
                }
                std::string m = std::string("Message-ID: <t@x>\nContent-Type: multipart/related; boundary=b\n\n--b") +
                                before_eol + "Content-Type: text/html\nContent-Transfer-Encoding: base64\n\n" + body +
                                "--b" + after_eol + "Content-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
                auto r = run("", d.file("m.eml", m));
                CHECK(r.status == 0);
                // Decoded here, not by GMime: GMime's own reading of such a part is what cut it.
                auto from = r.out.find("base64\n\n");
                REQUIRE(from != std::string::npos);
                from += 8;
                auto to = r.out.find("\n--b", from);
                REQUIRE(to != std::string::npos);
                gsize len = 0;
                guchar *raw = g_base64_decode(r.out.substr(from, to - from).c_str(), &len);
                std::string decoded(reinterpret_cast<const char *>(raw), len);
                g_free(raw);
                std::string want = html;
                want.replace(want.find("cid:<img@x>"), 11, "cid:img@x");
                CHECK(decoded == want);
                // The new encoding stands alone between the headers and the delimiter: nothing
                // of the old one is left behind it.
                std::string b64 = mimeuri::transfer::base64_lines(want);
                b64.pop_back();
                CHECK((r.out.find("base64\n\n" + b64 + "\n--b" + after_eol) != std::string::npos ||
                       r.out.find("base64\n\n" + b64 + "\r\n--b" + after_eol) != std::string::npos));
            }
}

TEST_CASE("a header block that ends the input with no line break: added headers go on lines of their own")
{
    testing::TempDir d;
    for (const char *eol : {"\n", "\r\n"}) {
        CAPTURE(eol);
        std::string m = std::string("Message-ID: <g@x>") + eol + "Content-Type: text/html" + eol + "Subject: last";
        auto r = run("--labels=top --summary-header", d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out.rfind(m, 0) == 0);
        std::string added = r.out.substr(m.size());
        CHECK(added == std::string(eol) + "Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0" + eol +
                           "Content-Type-URI: ContentType:text/html");
        // The header block still parses into the same fields plus the two.
        auto c = run("--check", d.file("out.eml", r.out));
        CHECK(c.out.find("\"message_id\":\"g@x\"") != std::string::npos);
    }
}

TEST_CASE("a result header that ends the input with no line break is replaced in place, and what is added after it stays in the header")
{
    // Found by fuzz_filter: the planted Content-Type-URI was replaced by a field ending in a
    // line break, the summary header was added after the block with one of its own before it:
    // an empty line, and Mimeuri-Refs in the body.
    testing::TempDir d;
    for (const char *eol : {"\n", "\r\n"}) {
        CAPTURE(eol);
        std::string m = std::string("Message-ID: <g@x>") + eol + "Content-Type-URI: ContentType:text/junk";
        auto r = run("--labels=top --summary-header", d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == std::string("Message-ID: <g@x>") + eol + "Content-Type-URI: ContentType:text/plain?charset=\"us-ascii\"" + eol +
                           "Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0");
        // Only the summary header is added when the label is already right.
        std::string right = std::string("Message-ID: <g@x>") + eol + "Content-Type-URI: ContentType:text/plain?charset=\"us-ascii\"";
        r = run("--labels=top --summary-header", d.file("r.eml", right));
        CHECK(r.out == right + eol + "Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0");
    }
}

TEST_CASE("a removed copy that was the last field, with no line break: what is added after the block stays in the header")
{
    // Found by fuzz_filter: of two planted Content-Type-URI fields the first was replaced (its
    // line break kept) and the second, which ended the input with no line break, removed; the
    // summary header then came after a line break of its own: an empty line, and Mimeuri-Refs
    // in the body.
    testing::TempDir d;
    const std::string label = "Content-Type-URI: ContentType:text/plain?charset=\"us-ascii\"";
    const std::string summary = "Mimeuri-Refs: resolved=0 dangling=0 ambiguous=0";
    for (const char *eol : {"\n", "\r\n"}) {
        CAPTURE(eol);
        const std::string head = std::string("Message-ID: <g@x>") + eol;
        // The label planted twice, then the summary header planted twice.
        std::string m = head + "Content-Type-URI: a" + eol + "Content-Type-URI: b";
        auto r = run("--labels=top --summary-header", d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == head + label + eol + summary);
        // Here the first copy, replaced, keeps its line break, and the block now ends with it.
        m = head + label + eol + "Mimeuri-Refs: x" + eol + "Mimeuri-Refs: y";
        r = run("--labels=top --summary-header", d.file("s.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == head + label + eol + summary + eol);
        // The fuzzer's own input: a CR inside the values, NULs after the last one.
        m = std::string("Subject: stale") + eol + "Content-Type-URI: Con\rtentUype:text stale" + eol +
            std::string("Content-Type-URI: Con\rtn\x10\0\0\0", 28);
        r = run("--labels=all --summary-header", d.file("f.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == std::string("Subject: stale") + eol + label + eol + summary);
    }
}

TEST_CASE("mboxcl2: a changed message's Content-Length is updated, so every reader splits the output as the input")
{
    testing::TempDir d;
    std::string b = "--b\nContent-Type: text/html\n\n<html><img src=\"cid:<img@x>\">\n\nFrom the start\n</html>\n"
                    "--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
    std::string m = "From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <c1@x>\nContent-Type: multipart/related; "
                    "boundary=b\nContent-Length: " +
                    std::to_string(b.size()) + "\n\n" + b + "\nFrom b@x Mon Jan  1 00:00:00 2024\nMessage-ID: <c2@x>\n\nsecond\n";
    std::string in = d.file("in.mbox", m);
    auto r = run("--format=mbox", in);
    REQUIRE(r.status == 0);
    std::string out = d.file("out.mbox", r.out);
    // The new body's length, counted here from the output.
    auto hdr_end = r.out.find("\n\n") + 2;
    auto next = r.out.find("\nFrom b@x");
    CHECK(r.out.find("Content-Length: " + std::to_string(next - hdr_end) + "\n") != std::string::npos);
    CHECK(r.out.find("\nFrom the start\n") != std::string::npos); // mboxcl2 is not quoted
    // mimeuri reads the output as two messages, the first unchanged now.
    auto c = run("--check", out);
    CHECK(c.out.find("\"index\":2,") != std::string::npos);
    CHECK(c.out.find("\"index\":3,") == std::string::npos);
    CHECK(c.out.find("\"changed\":true") == std::string::npos);
    // Python's mailbox (From_ lines only) splits input and output alike.
    auto py = testing::sh("python3 -c 'import mailbox,sys; print(len(mailbox.mbox(sys.argv[1])), "
                          "len(mailbox.mbox(sys.argv[2])))' " +
                          quote(in) + " " + quote(out));
    std::string counts = py.out;
    auto sp = counts.find(' ');
    CHECK(counts.substr(0, sp) == counts.substr(sp + 1, counts.find('\n') - sp - 1));
}

TEST_CASE("limits hold while parsing: a million parts or a 300 MB part header are not handed to GMime")
{
    testing::TempDir d;
    {
        std::string m = "Message-ID: <many@x>\nContent-Type: multipart/mixed; boundary=b\n\n";
        for (int i = 0; i < 1000000; ++i) m += "--b\n\nx\n";
        m += "--b--\n";
        std::string f = d.file("many.eml", m);
        gint64 t0 = g_get_monotonic_time();
        auto r = testing::sh(testing::address_limit("400000") + testing::bin() + " --report=" + quote(d / "r") + " " + quote(f) +
                             " > " + quote(d / "out") + "; echo $?");
        double secs = static_cast<double>(g_get_monotonic_time() - t0) / 1e6;
        CHECK(r.out == "0\n");
        CHECK(testing::read_file(d / "out") == m);
        CHECK(testing::read_file(d / "r").find("\"code\":\"part-limit\"") != std::string::npos);
        CHECK(secs < 5);
    }
    {
        // Written by the shell: 300 MB of folded header lines in a part.
        std::string f = d / "bighdr.eml";
        testing::sh("{ printf 'Message-ID: <big@x>\\nContent-Type: multipart/mixed; boundary=b\\n\\n--b\\nX-Big: a\\n'; "
                    "yes ' yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy' | head -c 314572800; "
                    "printf '\\nbody\\n--b--\\n'; } > " +
                    quote(f));
        gint64 t0 = g_get_monotonic_time();
        auto r = testing::sh(testing::address_limit("400000") + testing::bin() + " --report=" + quote(d / "r2") + " " + quote(f) +
                             " | cmp -s - " + quote(f) + "; echo $?");
        double secs = static_cast<double>(g_get_monotonic_time() - t0) / 1e6;
        CHECK(r.out == "0\n");
        CHECK(testing::read_file(d / "r2").find("\"code\":\"header-limit\"") != std::string::npos);
        CHECK(secs < 10);
    }
}

TEST_CASE("limits hold while parsing: header fields are counted per block and per message, not only their bytes")
{
    testing::TempDir d;
    // 25,000 parts of 100 four-byte fields (10 MB): within --max-header-bytes and the
    // delimiter bound, it took GMime 0.9 GB and 4 s (36 s on a loaded machine) under --max-time=2.
    auto make = [](int parts, int fields, const std::string &field) {
        std::string block;
        for (int k = 0; k < fields; ++k) block += field;
        std::string m = "Message-ID: <fields@x>\nContent-Type: multipart/mixed; boundary=b\n\n";
        for (int i = 0; i < parts; ++i) m += "--b\n" + block + "\nx\n";
        return m + "--b--\n";
    };
    struct Case {
        const char *what;
        std::string message;
        std::string args;
        const char *cause; // nullptr: within the limits
    };
    const std::vector<Case> cases{
        {"the issue's 10 MB", make(25000, 100, "a:b\n"), "", "header fields in the message (10 x --max-header-fields)"},
        {"CRLF and other names", make(2000, 60, "X-Y: 1\r\n"), "", "header fields in the message"},
        {"one block of 10,001 fields", make(1, 10001, "a:b\n"), "", "fields in one header block (--max-header-fields)"},
        {"one block of 10,000 fields", make(1, 10000, "a:b\n"), "", nullptr},
        {"folded fields count once", make(1, 6000, "a:b\n c\n"), "", nullptr},
        {"a smaller limit", make(3, 6, "a:b\n"), "--max-header-fields=5", "fields in one header block"},
        {"a smaller limit, per message", make(11, 5, "a:b\n"), "--max-header-fields=5", "header fields in the message"},
        // At the edge of the prescan's count of LFs (a message with fewer LFs than a limit
        // allows is not scanned): the last field, with no LF, counts too.
        {"six fields, five LFs", "Message-ID: <e@x>\na:b\na:b\na:b\na:b\na:b", "--max-header-fields=5",
         "fields in one header block"},
        {"five fields, four LFs", "Message-ID: <e@x>\na:b\na:b\na:b\na:b", "--max-header-fields=5", nullptr},
    };
    for (const Case &c : cases) {
        CAPTURE(c.what);
        const std::string f = d.file("f.eml", c.message);
        gint64 t0 = g_get_monotonic_time();
        auto r = testing::sh(testing::address_limit("400000") + testing::bin() + " --max-time=2 " + c.args + " --report=" +
                             quote(d / "r") + " " + quote(f) + " > " + quote(d / "out") + "; echo $?");
        const double secs = static_cast<double>(g_get_monotonic_time() - t0) / 1e6;
        CHECK(r.out == "0\n");
        CHECK(testing::read_file(d / "out") == c.message);
        const std::string rep = testing::read_file(d / "r");
        if (c.cause) {
            CHECK(rep.find("\"code\":\"header-limit\"") != std::string::npos);
            CHECK(rep.find(c.cause) != std::string::npos);
            CHECK(secs < 3);
        } else {
            CHECK(rep.find("header-limit") == std::string::npos);
        }
    }
}

TEST_CASE("a body line over --max-header-bytes is no header block unless a message/ type makes the body one")
{
    // Issue 31 (11). Minified HTML: one 1.2 MiB first line with no white space before its
    // first ':'. It is a text/html body, which no reader parses as a header block (RFC 2046
    // 5.1: only a message/ type's body starts with one), so it must not be "header block
    // larger than --max-header-bytes": the message is processed, the reference repaired.
    testing::TempDir d;
    const std::string line = "<html><head><style>body{margin:0}</style></head><body><img src=\"cid:&lt;img@x&gt;\">" +
                             std::string(1200 * 1024, 'x') + "</body></html>";
    const std::string head = "Message-ID: <min@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n";
    const std::string tail = "\n--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
    for (const char *type_c : {"text/html", "text/html; charset=utf-8", "TEXT/HTML"}) {
        const std::string type = type_c;
        CAPTURE(type);
        const std::string m = head + "Content-Type: " + type + "\n\n" + line + tail;
        auto r = run("--report=" + quote(d / "r"), d.file("m.eml", m));
        CHECK(r.status == 0);
        const std::string rep = testing::read_file(d / "r");
        CHECK(rep.find("header-limit") == std::string::npos);
        CHECK(rep.find("\"action\":\"repaired\"") != std::string::npos);
        // The part is written back quoted-printable (a line over 998 octets): read it decoded.
        auto tree = testing::mime_tree(r.out);
        REQUIRE(tree.leaves.size() == 2);
        CHECK(tree.leaves[0].find("<img src=\"cid:img@x\">") != std::string::npos);
        // A single-part message the same way.
        const std::string single = "Message-ID: <one@x>\nContent-Type: " + type + "\n\n" + line + "\n";
        r = run("--report=" + quote(d / "r1"), d.file("one.eml", single));
        CHECK(r.status == 0);
        CHECK(testing::read_file(d / "r1").find("header-limit") == std::string::npos);
    }
    // Where the body is a header block (message/rfc822, and a digest's part with no
    // Content-Type, RFC 2046 5.1.5), a field that long is still over the limit.
    const std::string field = "X-Long: " + std::string(1200 * 1024, 'y');
    for (const std::string &m : {head + "Content-Type: message/rfc822\n\n" + field + "\n\nbody" + tail,
                                "Message-ID: <dg@x>\nContent-Type: multipart/digest; boundary=b\n\n--b\n\n" + field +
                                    "\n\nbody\n--b--\n",
                                head + "Content-Type: text/plain\nContent-Type: message/rfc822\n\n" + field + "\n\nbody" + tail,
                                head + "Content-Type:\n message/rfc822\n\n" + field + "\n\nbody" + tail}) {
        auto r = run("--report=" + quote(d / "r2"), d.file("emb.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == m);
        CHECK(testing::read_file(d / "r2").find("\"code\":\"header-limit\"") != std::string::npos);
    }
}

TEST_CASE("forged result headers: mimeuri's Mimeuri-Refs and type label are the only ones of their names")
{
    testing::TempDir d;
    const std::string m = "Message-ID: <f@x>\nMimeuri-Refs: resolved=9 dangling=0 ambiguous=0\n"
                          "Content-Type-URI: ContentType:text/plain\nContent-Type: multipart/related; boundary=b\n"
                          "Mimeuri-Refs: resolved=1 dangling=0 ambiguous=0\n\n--b\nContent-Type: text/html\n"
                          "Content-Type-URI: ContentType:image/png\n\n<img src=\"cid:nothere@x\">\n--b--\n";
    auto r = run("--summary-header --labels=all", d.file("m.eml", m));
    REQUIRE(r.status == 0);
    auto count = [&](const std::string &field) {
        int n = 0;
        for (const auto &l : lines_of(r.out)) n += l.rfind(field, 0) == 0;
        return n;
    };
    CHECK(count("Mimeuri-Refs:") == 1);
    CHECK(r.out.find("Mimeuri-Refs: resolved=0 dangling=1 ambiguous=0\n") != std::string::npos);
    CHECK(r.out.find("resolved=9") == std::string::npos);
    CHECK(count("Content-Type-URI:") == 2); // the top and the HTML part, each its own
    CHECK(r.out.find("Content-Type-URI: ContentType:text/plain\n") == std::string::npos);
    CHECK(r.out.find("Content-Type-URI: ContentType:image/png\n") == std::string::npos);
    // Run again over its own output: nothing to change.
    auto again = run("--summary-header --labels=all", d.file("out.eml", r.out));
    CHECK(again.out == r.out);
}

TEST_CASE("forged result headers with white space before the colon are ours too: replaced, never left beside ours")
{
    // Issue 31 (1). RFC 5322 4.5.3 (obs-optional: field-name *WSP ":"): "Mimeuri-Refs :" is
    // the field Mimeuri-Refs to every reader (GMime, Dovecot, Python), so a Sieve rule would
    // read the forged value. It must be treated as our field, as the exact form is.
    testing::TempDir d;
    for (const char *ws : {" ", "\t", "  \t"}) {
        CAPTURE(std::string(ws).size());
        const std::string sp(ws);
        const std::string m = "Message-ID: <f@x>\nMimeuri-Refs" + sp +
                              ": resolved=1 dangling=0 ambiguous=0\nContent-Type-URI" + sp +
                              ": ContentType:text/plain\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                              "Content-Type: text/html\nContent-Type-URI" + sp +
                              ": ContentType:image/png\n\n<img src=\"cid:nothere@x\">\n--b--\n";
        auto r = run("--summary-header --labels=all", d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK(r.err.find("invalid header name") == std::string::npos);
        // Fields as a reader names them: the name before ':' with trailing white space dropped.
        auto fields = [&](const std::string &want) {
            std::vector<std::string> values;
            for (const auto &l : lines_of(r.out)) {
                auto colon = l.find(':');
                if (colon == std::string::npos || l.empty() || l[0] == ' ' || l[0] == '\t') continue;
                std::string name = l.substr(0, colon);
                while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
                if (g_ascii_strcasecmp(name.c_str(), want.c_str()) == 0) values.push_back(l.substr(colon + 1));
            }
            return values;
        };
        auto refs = fields("Mimeuri-Refs");
        REQUIRE(refs.size() == 1);
        CHECK(refs[0] == " resolved=0 dangling=1 ambiguous=0");
        auto labels = fields("Content-Type-URI");
        REQUIRE(labels.size() == 2); // the top and the HTML part, each its own
        CHECK(labels[0].find("multipart/related") != std::string::npos);
        CHECK(labels[1].find("text/html") != std::string::npos);
        // GMime, as a reader, agrees.
        GMimeStream *s = g_mime_stream_mem_new_with_buffer(r.out.data(), r.out.size());
        GMimeParser *p = g_mime_parser_new_with_stream(s);
        GMimeMessage *msg = g_mime_parser_construct_message(p, nullptr);
        REQUIRE(msg);
        const char *v = g_mime_object_get_header(GMIME_OBJECT(msg), "Mimeuri-Refs");
        REQUIRE(v);
        CHECK(std::string(v) == "resolved=0 dangling=1 ambiguous=0");
        g_object_unref(msg);
        g_object_unref(p);
        g_object_unref(s);
        // Run again over its own output: nothing to change.
        auto again = run("--summary-header --labels=all", d.file("out.eml", r.out));
        CHECK(again.out == r.out);
    }
}

TEST_CASE("a message a later pass fails: the report claims no action the output does not hold")
{
    // Issue 31 (10). The references pass repairs cid:<img@x>; then --labels=all fails the
    // message (a digest part with no header block of its own, where the label cannot go).
    // The message passes as it came, so no reference may be reported "repaired" (README:
    // an action is reported only for an edit that is in the output).
    testing::TempDir d;
    const std::string m = "Message-ID: <d@x>\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
                          "Content-Type: multipart/related; boundary=c\n\n--c\nContent-Type: text/html\n\n"
                          "<img src=\"cid:&lt;img@x&gt;\">\n--c\nContent-Type: image/png\nContent-ID: <img@x>\n\n"
                          "AAAA\n--c--\n--b\nContent-Type: multipart/digest; boundary=d\n\n--d\n\nSubject: inner\n\n"
                          "hello\n--d--\n--b--\n";
    for (const char *args_c : {"--labels=all", "--labels=all --summary-header", ""}) {
        const std::string args = args_c;
        CAPTURE(args);
        auto r = run(args + " --report=" + quote(d / "r"), d.file("m.eml", m));
        CHECK(r.status == 0);
        const std::string rep = testing::read_file(d / "r");
        const bool changed = rep.find("\"changed\":true") != std::string::npos;
        CHECK(changed == (r.out != m));
        if (!changed) {
            CHECK(r.out == m);
            CHECK(rep.find("\"action\":\"repaired\"") == std::string::npos);
        } else {
            CHECK(rep.find("\"action\":\"repaired\"") != std::string::npos);
            CHECK(r.out.find("<img src=\"cid:img@x\">") != std::string::npos);
        }
    }
}

// A multipart/related message: an HTML part (base64, Content-Type text/html followed by
// charset_param) and the image its reference names, <img@x>.
static std::string related_html_b64(const std::string &charset_param, std::string_view html)
{
    gchar *b64 = g_base64_encode(reinterpret_cast<const guchar *>(html.data()), html.size());
    std::string m = "Message-ID: <u@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                    "Content-Type: text/html" + charset_param + "\nContent-Transfer-Encoding: base64\n\n" + b64 +
                    "\n--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
    g_free(b64);
    return m;
}

TEST_CASE("UTF-7, UTF-16 and ISO-2022-JP HTML: references are checked, and the report claims no repair")
{
    testing::TempDir d;
    for (const char *charset : {"utf-7", "utf-16le", "iso-2022-jp"}) {
        CAPTURE(charset);
        gsize len = 0;
        gchar *html = g_convert("<img src=\"CID:<img@x>\">", -1, charset, "UTF-8", nullptr, &len, nullptr);
        REQUIRE(html);
        std::string m = related_html_b64(std::string("; charset=") + charset, std::string_view(html, len));
        g_free(html);
        for (const char *mode : {"", "--cid=inline --drop-inlined"}) {
            CAPTURE(mode);
            auto r = run(std::string(mode) + " --report=" + quote(d / "r"), d.file("m.eml", m));
            CHECK(r.status == 0);
            CHECK(r.out == m);
            std::string rep = testing::read_file(d / "r");
            CHECK(rep.find("\"status\":\"resolved\",\"action\":\"none\"") != std::string::npos);
            CHECK(rep.find("\"code\":\"charset\"") != std::string::npos);
        }
    }
}

TEST_CASE("charsets by what they are, not how they are spelt: aliases, byte-order marks and <meta> keep non-ASCII text checked only")
{
    // Issue 31 (2). WHATWG Encoding: UTF-16BE/LE and ISO-2022-JP are the encodings that are
    // not ASCII-compatible (plus UTF-7, UTF-32 and EBCDIC, which iconv also reads); their
    // labels include csunicode, iso-10646-ucs-2, unicode, csiso2022jp. A byte-order mark
    // decides before any label (WHATWG "decode", BOM sniffing), and an unlabelled HTML part
    // is read by its <meta> (HTML 13.2.3.2, prescan). Each such part is checked, never
    // rewritten, so the text stays what it was.
    testing::TempDir d;
    auto convert = [](const std::string &utf8, const char *to) {
        gsize len = 0;
        gchar *out = g_convert(utf8.data(), static_cast<gssize>(utf8.size()), to, "UTF-8", nullptr, &len, nullptr);
        REQUIRE(out);
        std::string s(out, len);
        g_free(out);
        return s;
    };
    const std::string img = "<p>\xE6\x97\xA5\xE6\x9C\xAC</p><img src=\"CID:&lt;img@x&gt;\">"; // "日本", then the reference
    const std::string le = convert(img, "UTF-16LE"), be = convert(img, "UTF-16BE");
    struct Case {
        std::string what;
        std::string charset_param; // "" for none
        std::string html;          // the part's bytes
    };
    std::vector<Case> cases = {
        {"csunicode, BOM", "; charset=csunicode", "\xFF\xFE" + le},
        {"iso-10646-ucs-2, no BOM", "; charset=iso-10646-ucs-2", le},
        {"utf16, BOM", "; charset=utf16", "\xFE\xFF" + be},
        {"unicode, BOM", "; charset=unicode", "\xFF\xFE" + le},
        {"csISO2022JP", "; charset=csISO2022JP", convert(img, "ISO-2022-JP")},
        {"us-ascii, UTF-16 BOM", "; charset=us-ascii", "\xFF\xFE" + le},
        {"no charset, UTF-16 BOM", "", "\xFE\xFF" + be},
        {"no charset, <meta charset>", "",
         "<html><head><meta charset=\"iso-2022-jp\"></head><body>" + convert(img, "ISO-2022-JP") + "</body></html>"},
        {"no charset, <meta http-equiv>", "",
         "<html><head><meta http-equiv=Content-Type content='text/html; charset=ISO-2022-JP'></head><body>" +
             convert(img, "ISO-2022-JP") + "</body></html>"},
    };
    // Character references in the <meta>'s values are decoded first, as Chromium reads them
    // (document.characterSet is ISO-2022-JP for each of these in Chromium 156).
    for (const char *meta : {"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=&quot;iso-2022-jp&quot;\">",
                             "<meta http-equiv=content-type content=\"text/html; charset=&#34;ISO-2022-JP&#34;\">",
                             "<meta http-equiv=content-type content=\"text/html; charset=&#x22;iso-2022-jp&#x22;\">",
                             "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=&apos;iso-2022-jp&apos;\">",
                             "<meta http-equiv=\"Content-Type\" content='text/html;charset=&QUOT;iso-2022-jp&QUOT;'>",
                             "<meta http-equiv=\"Content-&#84;ype\" content=\"text/html; charset=iso&#45;2022&#x2D;jp\">",
                             "<meta charset=\"iso&#45;2022-jp\">", "<meta charset=&#105;so-2022-jp>",
                             "<meta content=\"text/html; charset=&quot;iso-2022-jp&quot;\" http-equiv=\"content-type\">",
                             "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=&quot;iso-2022-jp&quot\">"})
        cases.push_back({meta, "", std::string("<html><head>") + meta + "</head><body>" + convert(img, "ISO-2022-JP") + "</body></html>"});
    // Past the first 1024 bytes while only head elements came first (Chromium 156 takes it,
    // its text and styles read as text; not after a body element).
    const std::string pad(3000, 'x');
    for (const std::string &before : {"<title>" + pad + "<p></title>", "<style>p{}/*" + pad + "<div>*/</style>",
                                      "<!--" + pad + "--><link rel=x href=y>", "<script>" + pad + "</script>"})
        cases.push_back({"head of 3000 bytes, then <meta>", "",
                         "<html><head>" + before + "<meta charset=\"iso-2022-jp\"></head><body>" + convert(img, "ISO-2022-JP") +
                             "</body></html>"});
    for (const Case &c : cases) {
        CAPTURE(c.what);
        const std::string m = related_html_b64(c.charset_param, c.html);
        for (const char *mode : {"", "--cid=inline --drop-inlined"}) {
            CAPTURE(mode);
            auto r = run(std::string(mode) + " --report=" + quote(d / "r"), d.file("m.eml", m));
            CHECK(r.status == 0);
            CHECK(r.out == m);
            const std::string rep = testing::read_file(d / "r");
            CHECK(rep.find("\"action\":\"repaired\"") == std::string::npos);
            CHECK(rep.find("\"action\":\"inlined\"") == std::string::npos);
            CHECK(rep.find("\"code\":\"charset\"") != std::string::npos);
        }
    }
    // A <meta> after a body element past the first 1024 bytes is no charset to Chromium: repaired.
    std::string lines; // (in lines: a line over 998 bytes would make the part re-encoded)
    for (int i = 0; i < 60; ++i) lines += std::string(50, 'x') + "\n";
    for (const std::string &before : {"<body><p>" + lines + "</p>", "<head><title>t</title></head><body><p>" + lines + "</p>"}) {
        const std::string html = "<html>" + before + "<meta charset=\"iso-2022-jp\"><img src=\"CID:&lt;img@x&gt;\"></body></html>";
        const std::string m = "Message-ID: <a@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                              "Content-Type: text/html\n\n" + html + "\n--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
        auto r = run("", d.file("m.eml", m));
        CHECK(r.status == 0);
        std::string want = m;
        want.replace(want.find("CID:&lt;img@x&gt;"), 17, "cid:img@x");
        CHECK(r.out == want);
    }
    // ASCII-compatible charsets, however spelt (Shift_JIS's 0x5C and 0x7E included), are
    // still repaired in place, their other bytes untouched.
    for (const char *cs : {"shift_jis", "csShiftJIS", "iso-8859-1", "latin1", "euc-jp", "utf-8", "windows-1252"}) {
        CAPTURE(cs);
        const std::string html = std::string(cs).find("jis") != std::string::npos || std::string(cs).find("JIS") != std::string::npos ||
                                         std::string(cs) == "euc-jp"
                                     ? convert(img, cs)
                                     : std::string("<p>x</p><img src=\"CID:&lt;img@x&gt;\">");
        const std::string m = "Message-ID: <a@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                              "Content-Type: text/html; charset=" + std::string(cs) + "\n\n" + html +
                              "\n--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
        auto r = run("--report=" + quote(d / "r"), d.file("m.eml", m));
        CHECK(r.status == 0);
        std::string want = m;
        want.replace(want.find("CID:&lt;img@x&gt;"), 17, "cid:img@x");
        CHECK(r.out == want);
    }
}

TEST_CASE("a clearsigned (inline PGP) block in a text part keeps the part as it is, and is reported")
{
    // Issue 31 (8), without gpg (tests/test_signed.cc verifies a real one): RFC 4880 7's
    // "-----BEGIN PGP SIGNED MESSAGE-----" makes the text after it signed, whatever encodes it.
    testing::TempDir d;
    const std::string clear = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n<p><img src=\"CID:&lt;img@x&gt;\"></p>\n"
                              "-----BEGIN PGP SIGNATURE-----\n\niHUEARYIAB0WIQQ=\n=abcd\n-----END PGP SIGNATURE-----\n";
    gchar *b64 = g_base64_encode(reinterpret_cast<const guchar *>(clear.data()), clear.size());
    const std::string encoded = b64;
    g_free(b64);
    for (const std::string &cte : {std::string("7bit"), std::string("base64")}) {
        CAPTURE(cte);
        const std::string m = "Message-ID: <pgp@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                              "Content-Type: text/html\nContent-Transfer-Encoding: " + cte + "\n\n" +
                              (cte == "7bit" ? clear : encoded + "\n") +
                              "--b\nContent-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
        auto r = run("--report=" + quote(d / "r"), d.file("m.eml", m));
        CHECK(r.status == 0);
        CHECK(r.out == m);
        const std::string rep = testing::read_file(d / "r");
        CHECK(rep.find("\"action\":\"kept\"") != std::string::npos);
        CHECK(rep.find("\"kind\":\"pgp\",\"part\":\"1\"") != std::string::npos);
        // Without a report (signatures analysed on first need) the same output.
        CHECK(run("", d.file("m.eml", m)).out == m);
    }
}

TEST_CASE("--drop-inlined never leaves a multipart with no parts")
{
    testing::TempDir d;
    // The related part's only other child is inlined; the image sits alone in a nested
    // multipart/mixed that would be left empty.
    const std::string m = "Message-ID: <e@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                          "Content-Type: text/html\n\n<img src=\"cid:img@x\">\n--b\n"
                          "Content-Type: multipart/mixed; boundary=c\n\n--c\nContent-Type: image/png\n"
                          "Content-ID: <img@x>\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n--c--\n--b--\n";
    auto r = run("--cid=inline --drop-inlined", d.file("m.eml", m));
    CHECK(r.status == 0);
    CHECK(r.out.find("data:image/png;base64,iVBORw0KGgo=") != std::string::npos);
    CHECK(delimiter_lines(r.out, "c") == 2); // "--c" and "--c--": the multipart keeps its part
    auto py = testing::sh("python3 -c 'import email,sys; m=email.message_from_binary_file(open(sys.argv[1],\"rb\")); "
                          "print(sum(len(p.defects) for p in m.walk()))' " +
                          quote(d.file("out.eml", r.out)));
    CHECK(py.out == "0\n");
}

TEST_CASE("deep nesting: no part lies past the walk's reach unreported; --max-depth stops below GMime's own limits")
{
    testing::TempDir d;
    for (int levels : {600, 1100}) {
        CAPTURE(levels);
        // message/rfc822 inside message/rfc822 (GMime stops at 512), and multiparts (1024).
        std::string rfc = "Message-ID: <d@x>\n";
        for (int i = 0; i < levels; ++i) rfc += "Content-Type: message/rfc822\n\nMessage-ID: <d" + std::to_string(i) + "@x>\n";
        rfc += "Content-Type: text/html\n\n<img src=\"CID:<x@y>\">\n";
        std::string mp = "Message-ID: <m@x>\nContent-Type: multipart/mixed; boundary=b0\n\n";
        for (int i = 1; i < levels; ++i)
            mp += "--b" + std::to_string(i - 1) + "\nContent-Type: multipart/mixed; boundary=b" + std::to_string(i) + "\n\n";
        mp += "--b" + std::to_string(levels - 1) + "\nContent-Type: text/html\n\nx\n--b" + std::to_string(levels - 1) + "--\n";
        for (int i = levels - 2; i >= 0; --i) mp += "--b" + std::to_string(i) + "--\n";
        for (const std::string &m : {rfc, mp}) {
            auto r = run("--check --max-depth=500 --max-parts=100000", d.file("m.eml", m));
            CHECK(r.status == 0);
            CHECK(r.out.find("\"code\":\"depth-limit\"") != std::string::npos);
        }
    }
    std::string small = d.file("s.eml", "Subject: s\n\nhi\n");
    CHECK(run("--max-depth=501 " + quote(small)).status == 64);
    CHECK(run("--max-depth=500 " + quote(small)).status == 0);
}

TEST_CASE("a part with two Content-Type fields that disagree is left as it is, by every pass, and reported")
{
    testing::TempDir d;
    // GMime reads the last field (text/plain), Python and Thunderbird the first (text/html).
    const std::string m = "Message-ID: <2ct@x>\nContent-Type: multipart/related; boundary=b\n\n--b\n"
                          "Content-Type: text/html\nContent-Type: text/plain\n\n<img src=\"CID:<img@x>\">\n--b\n"
                          "Content-Type: image/png\nContent-ID: <img@x>\n\nAAAA\n--b--\n";
    auto r = run("--labels=all --report=" + quote(d / "r"), d.file("m.eml", m));
    CHECK(r.status == 0);
    std::string rep = testing::read_file(d / "r");
    CHECK(rep.find("\"code\":\"content-type-conflict\"") != std::string::npos);
    // The part's bytes are as they came: no label inside it, no reference rewritten.
    auto part = r.out.find("--b\nContent-Type: text/html\nContent-Type: text/plain\n\n<img src=\"CID:<img@x>\">\n--b\n");
    CHECK(part != std::string::npos);
    // Fields that agree are no conflict.
    const std::string same = "Message-ID: <s@x>\nContent-Type: text/plain\nContent-Type: TEXT/plain\n\nhi\n";
    auto s = run("--check", d.file("s.eml", same));
    CHECK(s.out.find("content-type-conflict") == std::string::npos);
}
