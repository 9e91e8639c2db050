// Corpus identity: every file of ../shared/corpus goes through mimeuri with all passes off
// and comes out byte-identical, read from a file and from a pipe, with exit status 0 (65 for
// an empty file).
//
// One shell per input mode loops over the files (a process tree per file was most of this
// suite's time). Under the sanitizers, where each start of the binary costs about ten times
// as much, every 8th file runs through the binary (a fixed, spread-out sample); the whole
// corpus runs through the same code in-process there by the other corpus cases.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <sstream>

namespace {

constexpr std::size_t stride = testing::sanitized ? 8 : 1;

std::vector<std::string> corpus_files()
{
    std::vector<std::string> out;
    std::size_t i = 0;
    for (const auto &row : testing::corpus_index())
        if (i++ % stride == 0) out.push_back(std::string(MIMEURI_CORPUS) + "/" + row.at(0));
    return out;
}

// Runs the binary over every file listed in `list`, reading each from the file itself or
// through `cat |`, and prints one line per file that does not come out identical.
std::vector<std::string> differing(const std::string &list, bool pipe, const testing::TempDir &d)
{
    std::string run = pipe ? "cat \"$f\" | " + testing::bin() + " --passes=none"
                           : testing::bin() + " --passes=none \"$f\"";
    std::string script = "while IFS= read -r f; do\n"
                         "  " + run + " >" + testing::quote(d / "out") + " 2>" + testing::quote(d / "err") +
                         "; s=$?\n"
                         "  want=0; [ -s \"$f\" ] || want=65\n"
                         "  if [ $s -ne $want ] || ! cmp -s " + testing::quote(d / "out") + " \"$f\"; then\n"
                         "    printf '%s status %s: %s\\n' \"$f\" $s \"$(head -c 300 " + testing::quote(d / "err") +
                         " | tr '\\n' ' ')\"\n"
                         "  fi\n"
                         "done <" + testing::quote(list);
    testing::Proc r = testing::sh(script);
    REQUIRE(r.status == 0);
    std::vector<std::string> lines;
    std::istringstream ss(r.out);
    for (std::string l; std::getline(ss, l);) lines.push_back(l);
    return lines;
}

} // namespace

TEST_CASE("corpus identity, file and pipe")
{
    auto files = corpus_files();
    if (files.empty()) {
        return testing::skip("corpus not found at " MIMEURI_CORPUS);
    }
    testing::TempDir d;
    std::string list;
    for (const auto &f : files) {
        REQUIRE(f.find('\n') == std::string::npos);
        list += f + "\n";
    }
    std::string list_path = d.file("files", list);
    for (bool pipe : {false, true}) {
        auto bad = differing(list_path, pipe, d);
        for (std::size_t i = 0; i < bad.size() && i < 20; ++i) MESSAGE(bad[i]);
        MESSAGE("corpus identity (" << (pipe ? "pipe" : "file") << "): " << files.size() - bad.size() << "/"
                                    << files.size() << " identical"
                                    << (stride > 1 ? " (every " + std::to_string(stride) + "th file)" : ""));
        CHECK(bad.empty());
    }
}

// --data=attach over the corpus's HTML messages: a message comes out as the run without the
// pass makes it, byte for byte, unless the report says an image was attached (and then it
// is changed).
TEST_CASE("corpus: --data=attach changes exactly the messages whose data: images it attaches")
{
    std::string list;
    std::size_t n = 0, i = 0;
    for (const auto &row : testing::corpus_index()) {
        if (i++ % stride != 0 || row.size() < 3 || row[2] != "1") continue;
        list += std::string(MIMEURI_CORPUS) + "/" + row.at(0) + "\n";
        ++n;
    }
    if (n == 0) return testing::skip("corpus not found at " MIMEURI_CORPUS);
    testing::TempDir d;
    const std::string files = d.file("files", list), a = d / "a", b = d / "b", r = d / "r";
    const std::string script = "while IFS= read -r f; do\n"
                               "  " + testing::bin() + " --data=attach --report=" + testing::quote(r) + " \"$f\" >" +
                               testing::quote(a) + " 2>/dev/null\n"
                               "  " + testing::bin() + " --data=off \"$f\" >" + testing::quote(b) + " 2>/dev/null\n"
                               "  if grep -q '\"action\":\"attached\"' " + testing::quote(r) + "; then\n"
                               "    echo attached; cmp -s " + testing::quote(a) + " " + testing::quote(b) +
                               " && echo \"$f: reported attached, but unchanged\"\n"
                               "  elif ! cmp -s " + testing::quote(a) + " " + testing::quote(b) + "; then\n"
                               "    echo \"$f: changed, nothing reported attached\"\n"
                               "  fi\n"
                               "done <" + testing::quote(files);
    testing::Proc p = testing::sh(script);
    REQUIRE(p.status == 0);
    std::size_t attached = 0;
    std::istringstream ss(p.out);
    for (std::string l; std::getline(ss, l);) {
        if (l == "attached") ++attached;
        else FAIL_CHECK(l);
    }
    MESSAGE("corpus --data=attach: " << n << " HTML messages, " << attached << " with data: images attached");
    if (stride == 1) CHECK(attached >= 1); // thunderbird's 05-inline-image-data-uri.eml at least
}
