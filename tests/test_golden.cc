// Golden cases: testdata/cases/NAME/{input.eml, args, expected.eml}, each expected file
// written by hand from the specs. Each case runs from a file and from a pipe.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

TEST_CASE("golden cases")
{
    namespace fs = std::filesystem;
    std::vector<fs::path> cases;
    for (const auto &e : fs::directory_iterator(std::string(MIMEURI_TESTDATA) + "/cases"))
        if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 10);
    for (const auto &dir : cases) {
        CAPTURE(dir.filename().string());
        std::string args = testing::read_file((dir / "args").string());
        args.erase(std::remove(args.begin(), args.end(), '\n'), args.end());
        std::string input = (dir / "input.eml").string();
        std::string expected = testing::read_file((dir / "expected.eml").string());
        auto byfile = testing::mimeuri(args + " " + testing::quote(input));
        CHECK(byfile.status == 0);
        CHECK(byfile.err == "");
        CHECK(byfile.out == expected);
        auto bypipe = testing::mimeuri(args, input, true);
        CHECK(bypipe.status == 0);
        CHECK(bypipe.out == expected);
        // Running again over the result changes nothing (a case says so when, by design,
        // it does: its not-idempotent file gives the reason).
        if (g_file_test((dir / "not-idempotent").c_str(), G_FILE_TEST_EXISTS)) continue;
        testing::TempDir d;
        std::string once = d.file("once.eml", byfile.out);
        CHECK(testing::mimeuri(args + " " + testing::quote(once)).out == byfile.out);
    }
}
