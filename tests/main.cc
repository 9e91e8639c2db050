#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "helpers.hh"

#include <cstdio>
#include <gmime/gmime.h>

int main(int argc, char **argv)
{
    g_mime_init();
    doctest::Context ctx(argc, argv);
    int rc = ctx.run();
    // doctest counts a skipped test as passed: say which did not run, and why.
    if (!testing::skips().empty()) {
        std::fprintf(stderr, "%zu test(s) skipped (MIMEURI_STRICT_TESTS=1 makes a skip fail):\n", testing::skips().size());
        for (const auto &why : testing::skips()) std::fprintf(stderr, "  skipped: %s\n", why.c_str());
    }
    g_mime_shutdown();
    return rc;
}
