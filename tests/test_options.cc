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

namespace {

// Every entry of every table, bound to *o and *p.
OptionTable all_options(Options &o, PassOptions &p)
{
    OptionTable t = core_option_table(o);
    t += pass_option_table(p);
    return t;
}

// What every entry reads back after a parse: two parses that agree here set the same
// options (inputs aside).
std::vector<std::string> shown(const Options &o, const PassOptions &p)
{
    Options oc = o;
    PassOptions pc = p;
    std::vector<std::string> out;
    for (const auto &s : all_options(oc, pc).options) out.push_back(s.long_name + "=" + s.access.show());
    return out;
}

// A value for the entry unlike its default, written as the command line and as the
// configuration file take it.
struct Sample {
    std::vector<std::string> args; // command line
    std::string value;             // configuration value
};

Sample sample(const OptionSpec &s)
{
    const std::string opt = "--" + s.long_name;
    switch (s.kind) {
    case OptionKind::Flag: return {{opt}, "true"};
    case OptionKind::String: return {{opt + "=X-{id}"}, "X-{id}"};
    case OptionKind::Path: return {{opt + "=some/where"}, "some/where"};
    case OptionKind::Choice: {
        // The first word that is not the default.
        Options o;
        PassOptions p;
        std::string now;
        for (const auto &e : all_options(o, p).options)
            if (e.long_name == s.long_name) now = e.access.show();
        for (std::size_t i = 0; i < s.choices.size(); ++i)
            if (std::to_string(i) != now) return {{opt + "=" + s.choices[i]}, s.choices[i]};
        return {};
    }
    case OptionKind::Int:
    case OptionKind::Size: return {{opt + "=7"}, "7"};
    case OptionKind::Double: return {{opt + "=2.5"}, "2.5"};
    case OptionKind::List: return {{opt + "=Ab, cd"}, "Ab, cd"};
    case OptionKind::Repeated: return {{opt + "=a=b", opt + "=c=d"}, "a=b;c=d"};
    }
    return {};
}

} // namespace

TEST_CASE("every option in the configuration file means what it means on the command line")
{
    // Goes over the tables themselves, so that no option can be added without this.
    Options o0;
    PassOptions p0;
    const OptionTable table = all_options(o0, p0);
    const auto defaults = shown(Options{}, PassOptions{});
    testing::TempDir d;
    // Enough for the rules between options (--changed-list needs --in-place) to hold.
    const std::vector<std::string> context{"--in-place", "a.eml"};
    std::size_t covered = 0;
    for (const auto &s : table.options) {
        if (s.group.empty()) continue;
        CAPTURE(s.long_name);
        Sample x = sample(s);
        REQUIRE_FALSE(x.args.empty());

        PassOptions cp;
        auto args = context;
        args.insert(args.end(), x.args.begin(), x.args.end());
        auto cl = parse_all(args, &cp);
        REQUIRE_MESSAGE(cl.ok(), cl.error().message);

        PassOptions fp;
        std::string conf = d.file(s.long_name + ".conf", "[" + s.group + "]\n" + s.key + "=" + x.value + "\n");
        args = context;
        args.push_back("--config=" + conf);
        auto cf = parse_all(args, &fp);
        REQUIRE_MESSAGE(cf.ok(), cf.error().message);

        const auto from_line = shown(cl->options, cp), from_file = shown(cf->options, fp);
        CHECK(from_line == from_file);
        CHECK(from_line != defaults); // the sample did change something
        ++covered;
    }
    CHECK(covered >= 30);
}

TEST_CASE("mid-url implies mid=repair, from the configuration file as from the command line")
{
    testing::TempDir d;
    PassOptions p;
    auto o = parse_all({"--config=" + d.file("a.conf", "[references]\nmid-url=https://a.example/{id}\n")}, &p);
    REQUIRE(o.ok());
    CHECK(p.refs.mid_url == "https://a.example/{id}");
    CHECK(p.refs.mid == RefOptions::Mid::Repair);

    // Unless the same source says which mode, in either order.
    for (auto text : {"[references]\nmid=check\nmid-url=https://a.example/{id}\n",
                      "[references]\nmid-url=https://a.example/{id}\nmid=check\n"}) {
        PassOptions q;
        REQUIRE(parse_all({"--config=" + d.file("b.conf", text)}, &q).ok());
        CHECK(q.refs.mid == RefOptions::Mid::Check);
    }
    for (auto args : std::vector<std::vector<std::string>>{{"--mid=check", "--mid-url=https://a.example/{id}"},
                                                           {"--mid-url=https://a.example/{id}", "--mid=check"}}) {
        PassOptions q;
        REQUIRE(parse_all(args, &q).ok());
        CHECK(q.refs.mid == RefOptions::Mid::Check);
    }
    // The command line wins: its --mid over the file's implication, and its --mid-url's
    // implication over the file's mid.
    PassOptions q;
    REQUIRE(parse_all({"--config=" + d.file("c.conf", "[references]\nmid-url=https://a.example/{id}\n"), "--mid=off"},
                      &q)
                .ok());
    CHECK(q.refs.mid == RefOptions::Mid::Off);
    PassOptions r;
    REQUIRE(parse_all({"--config=" + d.file("d.conf", "[references]\nmid=off\n"), "--mid-url=https://a.example/{id}"},
                      &r)
                .ok());
    CHECK(r.refs.mid == RefOptions::Mid::Repair);
}

TEST_CASE("the rules between options hold for the configuration file too")
{
    testing::TempDir d;
    // Checked once every source was read: the message names the options, not the file.
    for (std::string text : {"[references]\nmid-url=https://a.example/\n", "[references]\ncid=extract\n"}) {
        CAPTURE(text);
        auto o = parse({"--config=" + d.file("x.conf", text)});
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Usage);
    }
    // Checked as it is read: the message names the file, the group and the key.
    for (std::string text : {"[mimeuri]\njobs=0\n", "[mimeuri]\nmax-time=0\n", "[mimeuri]\nmax-parts=-1\n",
                      "[mimeuri]\nlock-timeout=-1\n", "[labels]\nheader=a:b\n", "[external-body]\nurl-map=nothing\n",
                      "[mimeuri]\npasses=,\n", "[mimeuri]\njobs=two\n", "[mimeuri]\nstrict=maybe\n"}) {
        CAPTURE(text);
        std::string conf = d.file("x.conf", text);
        auto o = parse({"--config=" + conf});
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Usage);
        CHECK(o.error().message.find(conf) != std::string::npos);
    }
    // An extract folder in the file completes --cid=extract on the command line.
    PassOptions p;
    REQUIRE(parse_all({"--config=" + d.file("e.conf", "[references]\nextract-dir=out\n"), "--cid=extract"}, &p).ok());
    CHECK(p.refs.extract_dir == "out");
}

TEST_CASE("--help lists every option of the tables, with its default; --help and --version are no errors")
{
    PassOptions p;
    auto h = parse_all({"--help"}, &p);
    REQUIRE(h.ok());
    REQUIRE(h->print_and_exit);
    const std::string &text = *h->print_and_exit;
    Options o0;
    PassOptions p0;
    for (const auto &s : all_options(o0, p0).options) {
        CAPTURE(s.long_name);
        CHECK(text.find("--" + s.long_name) != std::string::npos);
        if (s.short_name) CHECK(text.find(std::string{'-', s.short_name, ','}) != std::string::npos);
        if (!s.default_text.empty()) CHECK(text.find("(default: " + s.default_text + ")") != std::string::npos);
    }
    CHECK(text.find("--version") != std::string::npos);

    auto v = parse_all({"--version"}, &p);
    REQUIRE(v.ok());
    REQUIRE(v->print_and_exit);
    CHECK(v->print_and_exit->rfind("mimeuri ", 0) == 0);
    auto run = parse_all({}, &p);
    REQUIRE(run.ok());
    CHECK_FALSE(run->print_and_exit);
}

TEST_CASE("a short option's argument may be glued to it")
{
    auto o = parse({"-j2", "-vf", "mbox", "-ppasses,x", "-vj3", "a.eml"});
    REQUIRE(o.ok());
    CHECK(o->jobs == 3);
    CHECK(o->verbose);
    CHECK(o->format == Format::Mbox);
    CHECK(o->passes == std::vector<std::string>{"passes", "x"});
    CHECK(o->inputs == std::vector<std::string>{"a.eml"});
    CHECK(parse({"-j2x"}).error().code == Code::Usage);
    auto dash = parse({"--", "-j2"});
    REQUIRE(dash.ok());
    CHECK(dash->inputs == std::vector<std::string>{"-j2"});
}
