#include "helpers.hh"
#include "options.hh"
#include "registry.hh"

#include <doctest/doctest.h>

using namespace mimeuri;

// Parses args with the core's and the passes' tables; the passes' settings go to *passes.
static Result<ParsedOptions> parse_all(std::vector<std::string> args, PassOptions *passes)
{
    args.insert(args.begin(), "mimeuri");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return parse_options(static_cast<int>(args.size()), argv.data(), pass_option_table(*passes));
}

static Result<Options> parse(std::vector<std::string> args)
{
    PassOptions passes;
    auto r = parse_all(std::move(args), &passes);
    if (!r) return r.error();
    return r->options;
}

TEST_CASE("defaults")
{
    auto o = parse({});
    REQUIRE(o.ok());
    CHECK(o->on_error == OnError::Pass);
    CHECK(o->format == Format::Auto);
    CHECK(o->limits.max_depth == 64);
    CHECK(o->inputs.empty());
    CHECK(o->passes == std::vector<std::string>{"all"});
}

TEST_CASE("the configuration file sets what the command line does not")
{
    testing::TempDir d;
    std::string conf = d.file("m.conf", "[mimeuri]\non-error=tempfail\nmax-depth=10\nformat=mbox\n");
    auto o = parse({"--config=" + conf, "--max-depth=20", "a.eml", "b.eml"});
    REQUIRE(o.ok());
    CHECK(o->on_error == OnError::TempFail);
    CHECK(o->format == Format::Mbox);
    CHECK(o->limits.max_depth == 20);
    CHECK(o->inputs == std::vector<std::string>{"a.eml", "b.eml"});
}

TEST_CASE("usage errors")
{
    testing::TempDir d;
    for (auto args : std::vector<std::vector<std::string>>{
             {"--on-error=explode"},
             {"--format=maildir"},
             {"--max-depth=0"},
             {"--no-such-option"},
             {"--in-place"},
             {"--in-place", "-o", "x", "a"},
             {"--check", "-o", "x"},
             {"--config=/nonexistent.conf"},
             {"--config=" + d.file("bad.conf", "[mimeuri]\nno-such-key=1\n")},
             {"--config=" + d.file("bad2.conf", "[typo]\nformat=mbox\n")},
         }) {
        auto o = parse(args);
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Usage);
    }
}
