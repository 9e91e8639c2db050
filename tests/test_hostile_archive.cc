// --cid=extract against hostile mail, issue 48: files beside the pages that a browser would
// run (every extension of /etc/mime.types and of Chromium's table), a text page cut at a NUL,
// a thread index made quadratic by References, thread links lost behind a long Subject.
#include "helpers.hh"

#include "archive_contents.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using testing::quote;

namespace {

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

// ext (lower case, no dot) -> the types a table names for it; the tables are laid out as
// /etc/mime.types: a type, then its extensions.
void read_types(const std::string &path, std::map<std::string, std::set<std::string>> &by_ext)
{
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string type, ext;
        words >> type;
        while (words >> ext) by_ext[ext].insert(type);
    }
}

// What a browser never runs, by the tables themselves (not mimeuri's list): images but SVG,
// fonts, audio, video, CSS, PDF, plain text.
bool inert_type(const std::string &t)
{
    if (t == "text/css" || t == "application/pdf" || t == "text/plain") return true;
    if (t.rfind("image/", 0) == 0) return t.find("svg") == std::string::npos;
    return t.rfind("font/", 0) == 0 || t.rfind("audio/", 0) == 0 || t.rfind("video/", 0) == 0;
}

// A page referencing one part per (name, type): each part XHTML with a script, which runs
// wherever a browser takes the file for HTML, XHTML or XML.
std::string parts_message(const std::vector<std::pair<std::string, std::string>> &parts)
{
    std::string html = "--b\nContent-Type: text/html\n\n<p>", body;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const std::string id = "p" + std::to_string(k) + "@x";
        html += "<img src=\"cid:" + id + "\">";
        body += "--b\nContent-Type: " + parts[k].second + "\nContent-ID: <" + id +
                ">\nContent-Disposition: inline; filename=\"" + parts[k].first +
                "\"\n\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><script>top.__xss=1</script></body></html>\n";
    }
    return "From: a@x\nSubject: parts\nMessage-ID: <parts@x>\nMIME-Version: 1.0\n"
           "Content-Type: multipart/related; boundary=b\n\n" + html + "\n" + body + "--b--\n";
}

std::string lower(std::string s)
{
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::vector<std::string> files_in(const std::string &dir)
{
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("extract: every extension of /etc/mime.types and of Chromium's table is written under one that never runs")
{
    std::map<std::string, std::set<std::string>> by_ext;
    if (!std::filesystem::exists("/etc/mime.types")) {
        testing::skip("no /etc/mime.types (Debian package media-types)");
        return;
    }
    read_types("/etc/mime.types", by_ext);
    read_types(std::string(MIMEURI_TESTDATA) + "/extensions/chromium.types", by_ext);
    // Python's http.server: its own table (.xpdl is XML there) and the files it reads.
    testing::TempDir t;
    auto py = testing::sh("python3 -c 'import mimetypes\nfor s in (True, False):\n"
                          "  for e, t in mimetypes.MimeTypes().types_map[s].items(): print(t, e[1:])' > " + quote(t / "py.types"));
    REQUIRE(py.status == 0);
    read_types(t / "py.types", by_ext);
    REQUIRE(by_ext.size() > 900);
    REQUIRE(by_ext.count("xhtm"));
    REQUIRE(by_ext.count("xpdl"));
    std::vector<std::pair<std::string, std::string>> parts;
    for (const auto &[ext, types] : by_ext)
        for (const char *type : {"application/octet-stream", "application/x-anything"}) {
            parts.push_back({"f" + std::to_string(parts.size()) + "." + ext, type});
            // Other spellings: upper case, a trailing dot, two extensions.
            if (ext == "xhtm" || ext == "xpdl" || ext == "html" || ext == "js") {
                std::string upper = ext;
                for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                parts.push_back({"g" + std::to_string(parts.size()) + "." + upper, type});
                parts.push_back({"g" + std::to_string(parts.size()) + ".png." + ext, type});
                parts.push_back({"g" + std::to_string(parts.size()) + "." + ext + ".", type});
            }
        }
    testing::TempDir d;
    const std::string f = d.file("m.eml", parts_message(parts));
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
    REQUIRE(r.status == 0);
    const std::vector<std::string> files = files_in(d / "out/1");
    CHECK(files.size() == parts.size() + 1); // and index.html
    std::size_t bad = 0;
    for (const std::string &name : files) {
        if (name == "index.html") continue;
        const std::string ext = lower(name.substr(name.rfind('.') + 1));
        const auto types = by_ext.find(ext);
        bool inert = types != by_ext.end();
        if (inert)
            for (const std::string &t : types->second) inert = inert && inert_type(t);
        if (!inert && ++bad <= 20) FAIL_CHECK("written as " << name << ": a browser may run it");
    }
    CHECK(bad == 0);
}

TEST_CASE("extract: a part keeps an extension of the allow list that agrees with its type, else gets .txt")
{
    const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), woff = "wOFF\0\1\0\0";
    struct Case {
        const char *name, *type;
        std::string bytes;
        const char *written;
    } cases[] = {
        {"a.png", "image/png", png, "a.png"},
        {"b.png", "image/x-png", png, "b.png"},                 // an image type the table does not know
        {"c.png", "application/octet-stream", png, "c.png"},    // the bytes show a PNG
        {"d.png", "application/x-anything", png, "d.png.txt"},  // a type that is no image
        {"e.png", "application/octet-stream", "<html>", "e.png.txt"},
        {"f.woff", "application/octet-stream", woff, "f.woff"}, // a font by its signature
        {"g.css", "text/css", "p{}", "g.css"},
        {"h.pdf", "application/octet-stream", "%PDF-1.4", "h.pdf"},
        {"i.xhtm", "image/png", png, "i.xhtm.png"},
        {"j.svg", "image/svg+xml", "<svg/>", "j.svg.txt"},
        {"k.json", "application/json", "{}", "k.json.txt"},
        {"l.ttf", "application/x-font-ttf", "\0\1", "l.ttf"},           // an older font type
        {"m.woff", "application/font-woff", woff, "m.woff"},
        {"n.eot", "application/vnd.ms-fontobject", "x", "n.eot.txt"},   // not on the allow list
        {"o.woff", "application/x-anything", woff, "o.woff.txt"},
        {"noext", "application/x-anything", "x", "noext.txt"},
    };
    std::string html = "--b\nContent-Type: text/html\n\n<p>", body;
    for (std::size_t k = 0; k < std::size(cases); ++k) {
        html += "<img src=\"cid:p" + std::to_string(k) + "@x\">";
        body += "--b\nContent-Type: " + std::string(cases[k].type) + "\nContent-ID: <p" + std::to_string(k) +
                "@x>\nContent-Transfer-Encoding: base64\nContent-Disposition: inline; filename=" + cases[k].name + "\n\n";
        gchar *b64 = g_base64_encode(reinterpret_cast<const guchar *>(cases[k].bytes.data()), cases[k].bytes.size());
        body += std::string(b64) + "\n";
        g_free(b64);
    }
    testing::TempDir d;
    const std::string f = d.file("m.eml", "From: a@x\nSubject: s\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary=b\n\n" +
                                              html + "\n" + body + "--b--\n");
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
    REQUIRE(r.status == 0);
    const std::vector<std::string> files = files_in(d / "out/1");
    for (const Case &c : cases) {
        CAPTURE(c.name);
        CHECK(std::count(files.begin(), files.end(), c.written) == 1);
    }
}

TEST_CASE("extract: a text/plain message's page holds the whole text, each NUL as U+FFFD")
{
    struct Case {
        const char *headers;
        std::string body;
    } cases[] = {
        {"Content-Type: text/plain; charset=utf-8\n", std::string("before\0after the NUL\n", 21)},
        {"Content-Type: text/plain; charset=iso-8859-1\n", std::string("\0\0caf\xe9 after two\n", 17)},
        {"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n", "aGlkZGVuAGFmdGVyIHRoZSBOVUw=\n"},
        {"Content-Type: text/plain; format=flowed\n", std::string("flowed \nline\0after the NUL\n", 26)},
    };
    for (const Case &c : cases) {
        testing::TempDir d;
        const std::string f = d.file("m.eml", "From: a@x\nSubject: s\nMIME-Version: 1.0\n" + std::string(c.headers) + "\n" + c.body);
        auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
        REQUIRE(r.status == 0);
        const std::string page = testing::read_file(d / "out/1/index.html");
        CAPTURE(page);
        CHECK(page.find('\0') == std::string::npos);
        CHECK(has(page, "\xEF\xBF\xBD"));
        CHECK((has(page, "after the NUL") || has(page, "caf\xC3\xA9 after two")));
        CHECK(has(page, "</pre>"));
    }
}

namespace {

// Threads as the index made them before it was linear (a walk up from each candidate), with
// the same bound on the ids read: the reference the linear threading is held to.
mimeuri::Threads walked_threads(std::vector<mimeuri::ArchiveEntry> entries)
{
    // Parents found the old way, then handed to thread_archive as the only id each names.
    const std::size_t n = entries.size();
    std::map<std::string, std::size_t> by_id;
    for (std::size_t i = 0; i < n; ++i)
        if (!entries[i].message_id.empty()) by_id.emplace(entries[i].message_id, i);
    std::vector<std::size_t> parent(n, n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < entries[i].parents.size() && k < mimeuri::kMaxParentIds; ++k) {
            auto it = by_id.find(entries[i].parents[k]);
            if (it == by_id.end() || it->second == i) continue;
            bool mine = false; // is i at or above the candidate?
            for (std::size_t up = it->second; up < n && !mine; up = parent[up]) mine = up == i;
            if (mine) continue;
            parent[i] = it->second;
            break;
        }
    for (std::size_t i = 0; i < n; ++i) {
        entries[i].message_id = "u" + std::to_string(i);
        entries[i].parents.clear();
    }
    for (std::size_t i = 0; i < n; ++i)
        if (parent[i] < n) entries[i].parents.push_back(entries[parent[i]].message_id);
    return mimeuri::thread_archive(entries);
}

mimeuri::ArchiveEntry entry(std::size_t folder, const std::string &id, std::vector<std::string> parents)
{
    mimeuri::ArchiveEntry e;
    e.folder = folder;
    e.epoch = static_cast<long long>(folder % 7);
    e.message_id = id;
    e.parents = std::move(parents);
    return e;
}

} // namespace

TEST_CASE("thread_archive: the threads of a walk up from each candidate, over random shapes with cycles and duplicates")
{
    std::uint32_t seed = 48;
    auto rnd = [&](std::uint32_t below) {
        seed = seed * 1664525u + 1013904223u;
        return (seed >> 8) % below;
    };
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 1 + rnd(40), ids = 1 + rnd(50);
        std::vector<mimeuri::ArchiveEntry> entries;
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::string> parents(rnd(round % 3 == 0 ? 60 : 5));
            for (auto &p : parents) p = "m" + std::to_string(rnd(static_cast<std::uint32_t>(ids)));
            entries.push_back(entry(i + 1, rnd(8) ? "m" + std::to_string(rnd(static_cast<std::uint32_t>(ids))) : "", parents));
        }
        const mimeuri::Threads got = mimeuri::thread_archive(entries), want = walked_threads(entries);
        CAPTURE(round);
        CHECK(got.order == want.order);
        CHECK(got.depth == want.depth);
        CHECK(got.thread == want.thread);
    }
}

TEST_CASE("thread_archive: linear in the ids named: 4,000 messages whose last 20 name 20,000 of their own replies")
{
    // Message k replies to k+1 (a thread read backwards); each of the last 20 names, nearest
    // first, 20,000 of its own replies, each of which the walk up took the thread's depth.
    const std::size_t n = 4000;
    std::vector<mimeuri::ArchiveEntry> entries;
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<std::string> parents;
        if (k + 20 >= n)
            for (std::size_t r = 0; r < 20000; ++r) parents.push_back("m" + std::to_string(r % 100)); // the deepest
        if (k + 1 < n) parents.push_back("m" + std::to_string(k + 1));
        entries.push_back(entry(k + 1, "m" + std::to_string(k), parents));
    }
    const auto start = std::chrono::steady_clock::now();
    const mimeuri::Threads t = mimeuri::thread_archive(entries);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(t.order.size() == n);
    MESSAGE("thread_archive: " << seconds << " s");
    CHECK(seconds < 1.0); // 0.0x s linear; the walk took 30 s and more
}

TEST_CASE("extract: a long Subject keeps the thread links of its page (1,700 bytes, 10 KB, and 2,000 '&')")
{
    auto folded = [](const std::string &word, std::size_t times) {
        std::string s;
        for (std::size_t k = 0; k < times; ++k) s += (k && k % 10 == 0 ? "\n " : "") + word;
        return s;
    };
    for (const std::string &subject : {folded("long-word ", 170), folded("ten-kilobytes ", 730), folded("&&&&&&&&&& ", 200)}) {
        CAPTURE(subject.size());
        std::string mbox;
        for (int k = 1; k <= 3; ++k)
            mbox += "From a@x Mon Jan  1 00:00:00 2024\nFrom: a@x\nSubject: " + subject + "\nDate: Mon, 1 Jan 2024 00:0" +
                    std::to_string(k) + ":00 +0000\nMessage-ID: <t" + std::to_string(k) + "@x>\n" +
                    (k > 1 ? "References: <t" + std::to_string(k - 1) + "@x>\n" : "") + "\ntext " + std::to_string(k) + "\n\n";
        testing::TempDir d;
        const std::string f = d.file("t.mbox", mbox);
        auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
        REQUIRE(r.status == 0);
        const std::string p1 = testing::read_file(d / "out/1/index.html"), p2 = testing::read_file(d / "out/2/index.html"),
                          p3 = testing::read_file(d / "out/3/index.html");
        CHECK(p1.find("<!--mimeuri-nav-->") > 2048);
        CHECK(has(p1, "<a rel=\"next\" href=\"../2/index.html\">"));
        CHECK(has(p2, "<a rel=\"prev\" href=\"../1/index.html\">"));
        CHECK(has(p2, "<a rel=\"next\" href=\"../3/index.html\">"));
        CHECK(has(p3, "<a rel=\"prev\" href=\"../2/index.html\">"));
    }
}

// An external body's URL on a page (issue 51: an offloaded attachment's link): only http and
// https become a link, escaped as an attribute; javascript:, data: and file: stay text-free.
TEST_CASE("extract: an external body is linked only for an http or https URL, escaped")
{
    const std::string head = "From: a@x\nSubject: s\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n"
                             "--b\nContent-Type: text/html\n\n<p>hi</p>\n--b\n"
                             "Content-Type: message/external-body; access-type=URL;\n URL=\"";
    const std::string tail = "\"\n\nContent-Type: application/pdf\n\n--b--\n";
    struct Case {
        std::string url;
        const char *href; // the link the page must hold; "" for none
    } cases[] = {
        {"https://files.example.org/ab/r.pdf", "href=\"https://files.example.org/ab/r.pdf\""},
        {"http://f.example/a\n b?x=1&y=2", "href=\"http://f.example/ab?x=1&amp;y=2\""},
        {"javascript:alert(1)", ""},
        {"data:text/html,<script>alert(1)</script>", ""},
        {"file:///etc/passwd", ""},
        {"https://f.example/<img src=x onerror=alert(1)>", ""},
    };
    for (const Case &c : cases) {
        CAPTURE(c.url);
        testing::TempDir d;
        const std::string f = d.file("m.eml", head + c.url + tail);
        auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(d / "out") + " " + quote(f));
        REQUIRE(r.status == 0);
        const std::string page = testing::read_file(d / "out/1/index.html");
        CAPTURE(page);
        CHECK(has(page, "message/external-body"));
        if (*c.href) CHECK(has(page, c.href));
        CHECK_FALSE(has(page, "javascript:"));
        CHECK_FALSE(has(page, "href=\"data:"));
        CHECK_FALSE(has(page, "href=\"file:"));
        CHECK_FALSE(has(page, "<img src=x"));
    }
}
