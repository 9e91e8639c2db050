// --related=repair over the corpus's HTML messages, the pass alone: a message comes out as it
// went in, byte for byte (as the identity case shows --passes=none does), unless the report
// says a part was moved or marked (and then it is changed). One run per message, and only the
// messages with a part a reference can name (a Content-ID or a Content-Location, INDEX.tsv):
// the pass returns before reading the others (RelatedPass::apply); the corpus suite's time is CI's.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <sstream>

TEST_CASE("corpus: --related=repair changes exactly the messages whose referenced parts it moves or marks")
{
    constexpr std::size_t stride = testing::sanitized ? 8 : 1;
    std::string list;
    std::size_t n = 0, i = 0;
    for (const auto &row : testing::corpus_index()) {
        if (i++ % stride != 0 || row.size() < 11 || row[2] != "1" || (row[10] != "1" && row[6] != "1")) continue;
        list += std::string(MIMEURI_CORPUS) + "/" + row.at(0) + "\n";
        ++n;
    }
    if (n == 0) return testing::skip("corpus not found at " MIMEURI_CORPUS);
    testing::TempDir d;
    const std::string files = d.file("files", list), a = d / "a", r = d / "r";
    const std::string script = "while IFS= read -r f; do\n"
                               "  " + testing::bin() + " --passes=related --related=repair --report=" + testing::quote(r) +
                               " \"$f\" >" + testing::quote(a) + " 2>/dev/null\n"
                               "  if grep -q '\"action\":\"\\(moved\\|marked\\)\"' " + testing::quote(r) + "; then\n"
                               "    echo repaired; cmp -s " + testing::quote(a) + " \"$f\"" +
                               " && echo \"$f: reported moved, but unchanged\"\n"
                               "  elif ! cmp -s " + testing::quote(a) + " \"$f\"; then\n"
                               "    echo \"$f: changed, nothing reported moved\"\n"
                               "  fi\n"
                               "done <" + testing::quote(files);
    testing::Proc p = testing::sh(script);
    REQUIRE(p.status == 0);
    std::size_t repaired = 0;
    std::istringstream ss(p.out);
    for (std::string l; std::getline(ss, l);) {
        if (l == "repaired") ++repaired;
        else FAIL_CHECK(l);
    }
    MESSAGE("corpus --related=repair: " << n << " HTML messages with a part to name, " << repaired << " repaired");
    if (stride == 1) CHECK(repaired >= 1);
}
