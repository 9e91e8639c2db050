#include "helpers.hh"
#include "options.hh"
#include "external_body.hh"
#include "labels.hh"
#include "references.hh"
#include "registry.hh"
#include "settings.hh"

#include <doctest/doctest.h>

#include <thread>

using namespace mimeuri;

// Parses args with the core's and the passes' tables, as main does but with `default_config`
// for the default configuration file; the passes' settings go to *passes.
static Result<ParsedOptions> parse_all(std::vector<std::string> args, PassOptions *passes,
                                       const std::string &default_config = {})
{
    args.insert(args.begin(), "mimeuri");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    CommandLineSetup setup{default_config, pass_names()};
    return parse_options(static_cast<int>(args.size()), argv.data(), pass_option_table(*passes), setup);
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
             {"--passes=refs"},
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
    OptionTable t = core_option_table(o, CommandLineSetup{"", pass_names()});
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
    if (s.long_name == "data-domain") return {{opt + "=mail.example.org"}, "mail.example.org"}; // a domain only
    if (s.long_name == "remote-proxy") return {{opt + "=https://camo.example"}, "https://camo.example"}; // an http(s) URL only
    if (s.long_name == "offload-expire") return {{opt + "=30d"}, "30d"};                         // a duration only
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
        for (const auto &word : words_of(s))
            if (word != now) return {{opt + "=" + word}, word};
        return {};
    }
    case OptionKind::Int:
    case OptionKind::Size: return {{opt + "=7"}, "7"};
    case OptionKind::Double: return {{opt + "=2.5"}, "2.5"};
    case OptionKind::List:
        // A list of words (--passes): two of them.
        if (!s.choices.empty()) return {{opt + "=" + s.choices[0] + ", " + s.choices[1]}, s.choices[0] + ", " + s.choices[1]};
        return {{opt + "=Ab, cd"}, "Ab, cd"};
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

        const auto from_line = shown(cl->options, cp);
        CHECK(from_line != defaults); // the sample did change something
        // Under its long name in [mimeuri] and in its own group, and under its own key there.
        for (const auto &where : std::vector<std::pair<std::string, std::string>>{
                 {"mimeuri", s.long_name}, {s.group, s.long_name}, {s.group, s.key}}) {
            const std::string &group = where.first, &key = where.second; // (no structured binding: clang 14 lets CAPTURE take none)
            CAPTURE(group);
            CAPTURE(key);
            PassOptions fp;
            std::string conf = d.file(s.long_name + ".conf", "[" + group + "]\n" + key + "=" + x.value + "\n");
            args = context;
            args.push_back("--config=" + conf);
            auto cf = parse_all(args, &fp);
            REQUIRE_MESSAGE(cf.ok(), cf.error().message);
            CHECK(from_line == shown(cf->options, fp));
        }
        ++covered;
    }
    CHECK(covered >= 30);
}

TEST_CASE("a choice's word is looked up beside its value, whatever the enum's order")
{
    // Declared in another order than the words: set by the word, shown as the word.
    enum class Shade { Dark, Light, Mid };
    Shade shade = Shade::Dark;
    OptionAccess a = bind_choice(shade, {{"light", Shade::Light}, {"mid", Shade::Mid}, {"dark", Shade::Dark}});
    CHECK(a.words == std::vector<std::string>{"light", "mid", "dark"});
    CHECK(a.show() == "dark");
    OptionValue v;
    v.name = "--shade";
    v.text = "mid";
    REQUIRE(a.set(v));
    CHECK(shade == Shade::Mid);
    CHECK(a.show() == "mid");
    v.text = "light";
    REQUIRE(a.set(v));
    CHECK(a.show() == "light");
    v.text = "grey";
    CHECK_FALSE(a.set(v));

    // Every choice option of the tables: each word set is the word shown (--print-config).
    Options o;
    PassOptions p;
    for (auto &e : all_options(o, p).options) {
        if (e.kind != OptionKind::Choice) continue;
        CAPTURE(e.long_name);
        REQUIRE_FALSE(e.access.words.empty());
        for (const auto &word : e.access.words) {
            OptionValue w;
            w.name = "--" + e.long_name;
            w.text = word;
            REQUIRE(e.access.set(w));
            CHECK(e.access.show() == word);
        }
    }
}

TEST_CASE("sizes: bytes, or K, M, G (KiB, MiB, GiB) as admins write mail limits; what overflows is an error")
{
    // A pair, not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    for (const auto &c : std::vector<std::pair<std::string, std::size_t>>{
             {"4096", 4096}, {"0", 0}, {"1K", 1024}, {"1k", 1024}, {"3M", 3u << 20}, {"2G", std::size_t{2} << 30},
             {"5KiB", 5 * 1024}, {"1mib", 1u << 20}}) {
        CAPTURE(c.first);
        PassOptions p;
        REQUIRE(parse_all({"--cid=inline", "--inline-max=" + c.first}, &p).ok());
        CHECK(p.of<RefOptions>().inline_max == c.second);
    }
    for (const std::string bad : {"1.5M", "M", "-1K", "1KB", "1 K", "0x10", "9000000000G", ""}) {
        CAPTURE(bad);
        PassOptions p;
        auto r = parse_all({"--cid=inline", "--inline-max=" + bad}, &p);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("is not a size") != std::string::npos);
    }
}

TEST_CASE("mid-url implies mid=repair, from the configuration file as from the command line")
{
    testing::TempDir d;
    PassOptions p;
    auto o = parse_all({"--config=" + d.file("a.conf", "[references]\nmid-url=https://a.example/{id}\n")}, &p);
    REQUIRE(o.ok());
    CHECK(p.of<RefOptions>().mid_url == "https://a.example/{id}");
    CHECK(p.of<RefOptions>().mid == RefOptions::Mid::Repair);

    // Unless the same source says which mode, in either order.
    for (auto text : {"[references]\nmid=check\nmid-url=https://a.example/{id}\n",
                      "[references]\nmid-url=https://a.example/{id}\nmid=check\n"}) {
        PassOptions q;
        REQUIRE(parse_all({"--config=" + d.file("b.conf", text)}, &q).ok());
        CHECK(q.of<RefOptions>().mid == RefOptions::Mid::Check);
    }
    for (auto args : std::vector<std::vector<std::string>>{{"--mid=check", "--mid-url=https://a.example/{id}"},
                                                           {"--mid-url=https://a.example/{id}", "--mid=check"}}) {
        PassOptions q;
        REQUIRE(parse_all(args, &q).ok());
        CHECK(q.of<RefOptions>().mid == RefOptions::Mid::Check);
    }
    // The command line wins: its --mid over the file's implication, and its --mid-url's
    // implication over the file's mid.
    PassOptions q;
    REQUIRE(parse_all({"--config=" + d.file("c.conf", "[references]\nmid-url=https://a.example/{id}\n"), "--mid=off"},
                      &q)
                .ok());
    CHECK(q.of<RefOptions>().mid == RefOptions::Mid::Off);
    PassOptions r;
    REQUIRE(parse_all({"--config=" + d.file("d.conf", "[references]\nmid=off\n"), "--mid-url=https://a.example/{id}"},
                      &r)
                .ok());
    CHECK(r.of<RefOptions>().mid == RefOptions::Mid::Repair);
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
    // Checked as it is read: a configuration error (EX_CONFIG) naming the file, the line,
    // the group and the key.
    for (std::string text : {"[mimeuri]\njobs=0\n", "[mimeuri]\nmax-time=0\n", "[mimeuri]\nmax-parts=-1\n",
                      "[mimeuri]\nlock-timeout=-1\n", "[labels]\nheader=a:b\n", "[external-body]\nurl-map=nothing\n",
                      "[mimeuri]\npasses=,\n", "[mimeuri]\njobs=two\n", "[mimeuri]\nstrict=maybe\n"}) {
        CAPTURE(text);
        std::string conf = d.file("x.conf", text);
        auto o = parse({"--config=" + conf});
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Config);
        CHECK(o.error().message.find(conf + ":2: [") != std::string::npos);
    }
    // An extract folder in the file completes --cid=extract on the command line.
    PassOptions p;
    REQUIRE(parse_all({"--config=" + d.file("e.conf", "[references]\nextract-dir=out\n"), "--cid=extract"}, &p).ok());
    CHECK(p.of<RefOptions>().extract_dir == "out");
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
    auto o = parse({"-j2", "-vf", "mbox", "-preferences,labels", "-vj3", "a.eml"});
    REQUIRE(o.ok());
    CHECK(o->jobs == 3);
    CHECK(o->verbose);
    CHECK(o->format == Format::Mbox);
    CHECK(o->passes == std::vector<std::string>{"references", "labels"});
    CHECK(o->inputs == std::vector<std::string>{"a.eml"});
    CHECK(parse({"-j2x"}).error().code == Code::Usage);
    auto dash = parse({"--", "-j2"});
    REQUIRE(dash.ok());
    CHECK(dash->inputs == std::vector<std::string>{"-j2"});
}

TEST_CASE("a long option typed with one dash is a usage error, not bundled short options")
{
    for (std::string word : {"-check", "-jobs=2", "-passes", "-help", "-version"}) {
        CAPTURE(word);
        auto o = parse({word, "a.eml"});
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Usage);
        const std::string name = word.substr(1, word.find('=') - 1);
        CHECK(o.error().message.find("did you mean --" + name + "?") != std::string::npos);
        CHECK(o.error().message.find("--help") != std::string::npos);
    }
    // Short options still bundle, and an option's argument is never taken for an option.
    auto b = parse({"-cv", "a.eml"});
    REQUIRE(b.ok());
    CHECK(b->check);
    CHECK(b->verbose);
    auto v = parse({"-o", "-check", "a.eml"});
    REQUIRE_MESSAGE(v.ok(), v.error().message);
    CHECK(v->output == "-check");
    auto l = parse({"--report", "-jobs", "a.eml"});
    REQUIRE_MESSAGE(l.ok(), l.error().message);
    CHECK(l->report_path == "-jobs");
}

TEST_CASE("a mistyped option: a usage error naming the closest option and --help")
{
    struct Case {
        std::vector<std::string> args;
        const char *suggested; // "": no suggestion
    };
    for (const auto &c : std::vector<Case>{{{"--chek"}, "--check"},
                                           {{"--jbos=2"}, "--jobs"},
                                           {{"--extrnal-body=check"}, "--external-body"},
                                           {{"--verbos"}, "--verbose"},
                                           {{"--in-plac", "a.eml"}, "--in-place"},
                                           {{"--print-conf"}, "--print-config"},
                                           {{"-chekc"}, "--check"},
                                           {{"--no-such-option"}, ""},
                                           {{"-x"}, ""}}) {
        CAPTURE(c.args[0]);
        auto o = parse(c.args);
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Usage);
        const std::string &m = o.error().message;
        CHECK(m.find(c.args[0].substr(0, c.args[0].find('='))) != std::string::npos);
        CHECK(m.find("mimeuri --help") != std::string::npos);
        if (*c.suggested) CHECK(m.find(std::string("did you mean ") + c.suggested + "?") != std::string::npos);
        else CHECK(m.find("did you mean") == std::string::npos);
    }
}

TEST_CASE("closest: edit distance, a swap counting one, or a unique prefix; nothing far off")
{
    const std::vector<std::string> names{"check", "cid", "jobs", "in-place", "inline-max", "inline-types", "labels"};
    CHECK(closest("chek", names) == "check");
    CHECK(closest("chekc", names) == "check"); // one swap
    CHECK(closest("jbos", names) == "jobs");
    CHECK(closest("cdi", names) == "cid");
    CHECK(closest("lab", names) == "labels"); // a unique prefix
    CHECK(closest("in", names).empty());      // three options start so
    CHECK(closest("no-such-option", names).empty());
    CHECK(closest("x", names).empty());
}

TEST_CASE("--help names the passes --passes takes (from the registry), the exit codes, and FILE once")
{
    PassOptions p;
    auto h = parse_all({"--help"}, &p);
    REQUIRE(h.ok());
    const std::string &text = *h->print_and_exit;
    REQUIRE_FALSE(pass_names().empty());
    std::string listed = "Comma-separated passes to run (";
    for (std::size_t i = 0; i < pass_names().size(); ++i) listed += (i ? ", " : "") + pass_names()[i];
    CHECK(text.find(listed + ", in this order)") != std::string::npos);
    for (const char *code : {" 64 usage", " 65 data error", "66 missing input", " 70 internal error", " 73 cannot",
                             " 74 I/O error", "75 temporary failure", " 78 configuration error"})
        CHECK_MESSAGE(text.find(code) != std::string::npos, code);
    CHECK(text.find("[FILE") != std::string::npos);
    CHECK(text.find("[FILE") == text.rfind("[FILE"));
    CHECK(text.find("--bash-completion") == std::string::npos); // hidden: for the build
    // What --passes takes is checked against the same names.
    for (const auto &name : pass_names()) CHECK(parse({"--passes=" + name}).ok());
    auto bad = parse({"--passes=references,refs"});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("unknown item 'refs'") != std::string::npos);
}

TEST_CASE("--version also names the GMime, GLib and gumbo versions")
{
    PassOptions p;
    auto v = parse_all({"--version"}, &p);
    REQUIRE(v.ok());
    const std::string &text = *v->print_and_exit;
    CHECK(text.rfind("mimeuri ", 0) == 0);
    auto ver = [](unsigned a, unsigned b, unsigned c) {
        return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
    };
    CHECK(text.find("GMime " + ver(GMIME_MAJOR_VERSION, GMIME_MINOR_VERSION, GMIME_MICRO_VERSION)) != std::string::npos);
    CHECK(text.find("GLib " + ver(GLIB_MAJOR_VERSION, GLIB_MINOR_VERSION, GLIB_MICRO_VERSION)) != std::string::npos);
    CHECK(text.find("gumbo 0.") != std::string::npos);
}

TEST_CASE("the default configuration file: read when it exists; --config replaces it, --no-config skips it")
{
    testing::TempDir d;
    const std::string def = d.file("mimeuri.conf", "[mimeuri]\njobs=3\n");
    const std::string other = d.file("other.conf", "[mimeuri]\nstrict=yes\n");
    PassOptions p;
    auto read = parse_all({}, &p, def);
    REQUIRE(read.ok());
    CHECK(read->options.jobs == 3);
    auto replaced = parse_all({"--config=" + other}, &p, def);
    REQUIRE(replaced.ok());
    CHECK(replaced->options.jobs == 1);
    CHECK(replaced->options.strict);
    auto skipped = parse_all({"--no-config"}, &p, def);
    REQUIRE(skipped.ok());
    CHECK(skipped->options.jobs == 1);
    auto missing = parse_all({}, &p, d / "absent.conf");
    REQUIRE(missing.ok());
    CHECK(missing->options.jobs == 1);
    // A bad default file is an error like any other, but --help still answers.
    const std::string bad = d.file("bad.conf", "[mimeuri]\njobs=many\n");
    auto b = parse_all({}, &p, bad);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().code == Code::Config);
    CHECK(parse_all({"--help"}, &p, bad).ok());
    CHECK(parse_all({"--no-config"}, &p, bad).ok());
}

TEST_CASE("configuration keys: the long option's name in [mimeuri] or the pass's group; one option set once")
{
    testing::TempDir d;
    PassOptions p;
    auto o = parse_all({"--config=" + d.file("a.conf", "[mimeuri]\ncid=inline\nlabels=top\nexternal-body-schemes=HTTPS\n"
                                                        "verbose=on\n[references]\nsummary-header=yes\n"
                                                        "[external-body]\nmode=check\n[labels]\nlabel-header=X-T\n")},
                       &p);
    REQUIRE_MESSAGE(o.ok(), o.error().message);
    CHECK(p.of<RefOptions>().cid == RefOptions::Cid::Inline);
    CHECK(p.of<LabelOptions>().mode == LabelOptions::Mode::Top);
    CHECK(p.of<ExternalBodyOptions>().schemes == std::vector<std::string>{"https"});
    CHECK(o->options.verbose);
    CHECK(p.of<RefOptions>().summary_header);
    CHECK(p.of<ExternalBodyOptions>().mode == ExternalBodyOptions::Mode::Check);
    CHECK(p.of<LabelOptions>().header == "X-T");

    // Each (group, key) names exactly one option, so no key is read two ways.
    Options o0;
    PassOptions p0;
    const OptionTable table = all_options(o0, p0);
    for (const auto &s : table.options) {
        if (s.group.empty()) continue;
        for (const auto &where : std::vector<std::pair<std::string, std::string>>{
                 {"mimeuri", s.long_name}, {s.group, s.long_name}, {s.group, s.key}}) {
            const std::string &group = where.first, &key = where.second; // (no structured binding: clang 14 lets CAPTURE take none)
            std::size_t named = 0;
            for (const auto &e : table.options)
                named += !e.group.empty() && ((e.group == group && (e.key == key || e.long_name == key)) ||
                                              (group == "mimeuri" && e.long_name == key));
            CHECK_MESSAGE(named == 1, std::string(group + " " + key));
        }
    }
}

TEST_CASE("booleans in the configuration file: true/false, yes/no, on/off, 1/0")
{
    testing::TempDir d;
    for (const auto &wv : std::vector<std::pair<std::string, bool>>{
             {"true", true}, {"yes", true}, {"on", true}, {"1", true}, {"Yes", true}, {"TRUE", true},
             {"false", false}, {"no", false}, {"off", false}, {"0", false}}) {
        const std::string &word = wv.first; // (no structured binding: clang 14 lets CAPTURE take none)
        const bool value = wv.second;
        CAPTURE(word);
        auto o = parse({"--config=" + d.file("b.conf", "[mimeuri]\nstrict=" + word + "\n")});
        REQUIRE_MESSAGE(o.ok(), o.error().message);
        CHECK(o->strict == value);
    }
}

TEST_CASE("a bad configuration file: EX_CONFIG, naming the file, the line and the key")
{
    testing::TempDir d;
    struct Case {
        std::string text;
        int line;
        const char *says;
    };
    for (const auto &c : std::vector<Case>{
             {"# comment\n[mimeuri]\njobs=2\n\nformat=maildir\n", 5, "[mimeuri] format"},
             {"[mimeuri]\ncdi=repair\n", 2, "unknown key 'cdi' in [mimeuri]: did you mean cid?"},
             {"[mimeuri]\n[refrences]\ncid=check\n", 2, "unknown group [refrences]: did you mean [references]?"},
             {"[labels]\nmode=top\n[mimeuri]\nlabels=all\n", 4, "sets --labels again ([labels] mode on line 2"},
             {"[mimeuri]\njobs=2\nthis is no key\n", 3, ""},
             {"jobs=2\n", 1, ""},
             {"[mimeuri]\nstrict=maybe\n", 2, "'maybe' is not a boolean"},
             {"[references]\ncid=inline\ninline-max=-3\n", 3, "[references] inline-max: '-3' is not a size"},
             {"[references]\ncid=inline\ninline-max=2T\n", 3, "[references] inline-max: '2T' is not a size"},
         }) {
        CAPTURE(c.text);
        const std::string conf = d.file("bad.conf", c.text);
        auto o = parse({"--config=" + conf});
        REQUIRE_FALSE(o.ok());
        CHECK(o.error().code == Code::Config);
        CHECK(exit_status(o.error().code) == 78);
        CHECK(o.error().message.find(conf + ":" + std::to_string(c.line) + ":") != std::string::npos);
        CHECK(o.error().message.find(c.says) != std::string::npos);
    }
    auto missing = parse({"--config=" + d / "absent.conf"});
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == Code::Config);
    CHECK(missing.error().message.find("absent.conf") != std::string::npos);
}

TEST_CASE("--print-config: the settings in effect, as a file that reads back to the same settings")
{
    testing::TempDir d;
    const std::string conf = d.file("in.conf", "[mimeuri]\njobs=2\nmax-time=2.5\n[references]\nmid-url=https://a/{id}\n"
                                               "[external-body]\nurl-map=a=b;c\\;d=e\n");
    PassOptions p;
    auto o = parse_all({"--config=" + conf, "--labels=top", "--print-config"}, &p);
    REQUIRE_MESSAGE(o.ok(), o.error().message);
    REQUIRE(o->print_and_exit);
    const std::string text = *o->print_and_exit;
    CHECK(text.find("then " + conf + ", then the command line") != std::string::npos);
    for (const char *line : {"\n[mimeuri]\n", "\njobs=2\n", "\nmax-time=2.5\n", "\nmid=repair\n", "\nlabels=top\n",
                             "\nurl-map=a=b;c\\;d=e;\n", "\n#report=\n", "\nformat=auto\n", "\n[labels]\n"})
        CHECK_MESSAGE(text.find(line) != std::string::npos, line);

    // Read back alone, it gives the same settings, and prints the same again.
    const std::string printed = d.file("printed.conf", text);
    PassOptions q;
    auto back = parse_all({"--no-config", "--config=" + printed, "--print-config"}, &q);
    REQUIRE_MESSAGE(back.ok(), back.error().message);
    CHECK(shown(back->options, q) == shown(o->options, p));
    const std::string again = *back->print_and_exit;
    // The same, but for where each setting came from (the first file, then the printed one).
    CHECK(text.find("\n# from " + conf + ":2\njobs=2\n") != std::string::npos);
    CHECK(again.find("\n# from " + printed + ":") != std::string::npos);
    CHECK(text.find("\n[mimeuri]") == text.find("\n[")); // the settings start at their first group
    CHECK(testing::printed_settings(again) == testing::printed_settings(text));
    // Only printed when asked.
    PassOptions r;
    auto run = parse_all({"--config=" + conf}, &r);
    REQUIRE(run.ok());
    CHECK_FALSE(run->print_and_exit);
}

namespace {

std::string doc(const std::string &path) { return testing::read_file(std::string(MIMEURI_TESTDATA) + "/../" + path); }

// A name as a man page writes it: every '-' escaped.
std::string man_escaped(const std::string &s)
{
    std::string out;
    for (char c : s) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

} // namespace

TEST_CASE("the man pages name every option and every configuration key")
{
    const std::string page1 = doc("docs/man/mimeuri.1"), page5 = doc("docs/man/mimeuri.conf.5");
    // Every option --help shows, hidden ones aside.
    PassOptions p;
    auto h = parse_all({"--help"}, &p);
    REQUIRE(h.ok());
    const std::string &help = *h->print_and_exit;
    std::size_t options = 0;
    for (std::size_t pos = help.find("\n  -"); pos != std::string::npos; pos = help.find("\n  -", pos + 1)) {
        std::size_t b = help.find("--", pos), e = help.find_first_of("= \n", b);
        const std::string name = help.substr(b, e - b);
        CHECK_MESSAGE(page1.find(man_escaped(name)) != std::string::npos, name);
        ++options;
    }
    CHECK(options >= 40);
    Options o0;
    PassOptions p0;
    for (const auto &s : all_options(o0, p0).options) {
        if (s.group.empty()) continue;
        CHECK_MESSAGE(page5.find(".BR " + man_escaped(s.long_name) + " ") != std::string::npos, s.long_name);
        if (s.key != s.long_name)
            CHECK_MESSAGE(page5.find("(or \" " + man_escaped(s.key) + " \")") != std::string::npos, s.key);
    }
}

TEST_CASE("the example configuration shows every key, commented out, and is a good file with all of them on")
{
    const std::string example = doc("docs/examples/mimeuri.conf");
    Options o0;
    PassOptions p0;
    std::string uncommented;
    std::size_t pos = 0;
    while (pos < example.size()) {
        std::size_t nl = example.find('\n', pos);
        std::string line = example.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.size() > 1 && line[0] == '#' && line.find('=') != std::string::npos && line.find(' ') > line.find('='))
            line = line.substr(1);
        uncommented += line + "\n";
    }
    for (const auto &s : all_options(o0, p0).options) {
        if (s.group.empty()) continue;
        CHECK_MESSAGE(example.find("\n#" + s.long_name + "=") != std::string::npos, s.long_name);
        CHECK_MESSAGE(uncommented.find("\n" + s.long_name + "=") != std::string::npos, s.long_name);
    }
    testing::TempDir d;
    PassOptions p;
    auto all_on = parse_all({"--config=" + d.file("on.conf", uncommented)}, &p);
    REQUIRE_MESSAGE(all_on.ok(), all_on.error().message);
    // As shipped, it changes nothing.
    PassOptions q;
    auto shipped = parse_all({"--config=" + d.file("shipped.conf", example)}, &q);
    REQUIRE(shipped.ok());
    CHECK(shown(shipped->options, q) == shown(Options{}, PassOptions{}));
}

// Issue 30: the service ignored the default configuration file (it parsed its arguments
// again without it, at the start and on SIGHUP). Every entry point now loads through one
// SettingsLoader; these hold it to the command line's reading.
TEST_CASE("the service reads the default configuration file, at its start and on reload, as the command line does")
{
    testing::TempDir d;
    const std::string conf = d.file("mimeuri.conf", "[mimeuri]\non-error = tempfail\n[references]\nsummary-header = yes\n");
    const SettingsLoader service({"mimeuri", "--milter=unix:" + d / "m.sock", "--user=nobody"}, conf);
    const SettingsLoader command_line({"mimeuri", "a.eml"}, conf);
    for (const SettingsLoader *l : {&service, &command_line}) {
        auto s = l->load();
        REQUIRE_MESSAGE(s.ok(), s.error().message);
        REQUIRE(s->settings);
        CHECK(s->settings->opts.on_error == OnError::TempFail);
        CHECK(s->settings->pass_opts.of<RefOptions>().summary_header);
    }
    // A reload is the same load again: it sees the file as it is now.
    testing::write_file(conf, "[mimeuri]\non-error = pass\n");
    auto again = service.load();
    REQUIRE(again.ok());
    CHECK(again->settings->opts.on_error == OnError::Pass);
    CHECK_FALSE(again->settings->pass_opts.of<RefOptions>().summary_header);
    // A bad file at a reload is an error (the service keeps the settings it has).
    testing::write_file(conf, "[mimeuri]\non-error = sometimes\n");
    auto bad = service.load();
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == Code::Config);
    // --no-config: the file is not read.
    testing::write_file(conf, "[mimeuri]\non-error = tempfail\n");
    auto none = SettingsLoader({"mimeuri", "--no-config", "a.eml"}, conf).load();
    REQUIRE(none.ok());
    CHECK(none->settings->opts.on_error == OnError::Pass);
}

TEST_CASE("--print-config shows the --jobs the service runs with")
{
    testing::TempDir d;
    const unsigned cpus = std::max(2u, std::thread::hardware_concurrency());
    auto shown_jobs = [&](std::vector<std::string> args) {
        auto s = SettingsLoader(std::move(args)).load();
        REQUIRE(s.ok());
        REQUIRE(s->print_and_exit);
        auto at = s->print_and_exit->find("\njobs=");
        REQUIRE(at != std::string::npos);
        return std::stoi(s->print_and_exit->substr(at + 6));
    };
    CHECK(shown_jobs({"mimeuri", "--print-config"}) == 1);
    CHECK(shown_jobs({"mimeuri", "--milter=unix:" + d / "m.sock", "--print-config"}) == static_cast<int>(cpus));
    // Given, it is what is given, for the service too.
    CHECK(shown_jobs({"mimeuri", "--milter=unix:" + d / "m.sock", "--jobs=1", "--print-config"}) == 1);
    auto run = SettingsLoader({"mimeuri", "--milter=unix:" + d / "m.sock"}).load();
    REQUIRE(run.ok());
    CHECK(run->settings->opts.jobs == static_cast<int>(cpus));
}

TEST_CASE("an index that cannot be read now does not stop the load: the command line and the service go on alike")
{
    // Missing while a nightly index is renamed into place, or a file that is no index: the
    // load (a run's start, the service's start, a SIGHUP) goes on; each message that needs
    // the index then follows --on-error (tests/test_hostile_run.cc runs it end to end).
    testing::TempDir d;
    const std::string not_index = d.file("no.db", "not an index\n");
    for (const std::string &path : {d / "missing.db", not_index}) {
        CAPTURE(path);
        for (std::vector<std::string> args : {std::vector<std::string>{"mimeuri", "--mid-index=" + path, "a.eml"},
                                              {"mimeuri", "--milter=unix:" + d / "m.sock", "--mid-index=" + path}}) {
            auto s = SettingsLoader(args).load();
            REQUIRE(s.ok());
            CHECK(s->settings->pass_opts.of<RefOptions>().mid_indexes == std::vector<std::string>{path});
        }
    }
    // Building the passes opens nothing.
    Options o;
    PassOptions p;
    p.of<RefOptions>().mid_indexes = {d / "missing.db"};
    CHECK(build_passes(o, p).size() == make_passes(Options{}, PassOptions{})->size());
}

TEST_CASE("[milter]: the service reads it over [mimeuri]; the command line never reads it")
{
    testing::TempDir d;
    // What the issue met: a report meant for the service, which a delivery run (procmail,
    // as a user) then tried to write too. In [milter] only the service sees it.
    const std::string conf =
        d.file("mimeuri.conf", "[mimeuri]\non-error = tempfail\njobs = 3\n[references]\nmid = check\n"
                               "[milter]\nreport = /var/log/mimeuri/report.jsonl\nsyslog = yes\njobs = 4\n"
                               "mid-url = https://lists.example.test/{id}\nlabels = top\n");
    const SettingsLoader service({"mimeuri", "--milter=unix:" + d / "m.sock"}, conf);
    const SettingsLoader command_line({"mimeuri", "a.eml"}, conf);
    auto s = service.load();
    REQUIRE_MESSAGE(s.ok(), s.error().message);
    const Settings &sv = *s->settings;
    CHECK(sv.opts.report_path == "/var/log/mimeuri/report.jsonl");
    CHECK(sv.opts.syslog);
    CHECK(sv.opts.jobs == 4);                            // over [mimeuri]'s 3
    CHECK(sv.opts.on_error == OnError::TempFail);        // [mimeuri] still applies
    CHECK(sv.pass_opts.of<RefOptions>().mid == RefOptions::Mid::Repair); // a pass's key, and its implication, its own
    CHECK(sv.pass_opts.of<RefOptions>().mid_url == "https://lists.example.test/{id}");

    auto c = command_line.load();
    REQUIRE_MESSAGE(c.ok(), c.error().message);
    const Settings &cl = *c->settings;
    CHECK(cl.opts.report_path.empty());
    CHECK_FALSE(cl.opts.syslog);
    CHECK(cl.opts.jobs == 3);
    CHECK(cl.opts.on_error == OnError::TempFail);
    CHECK(cl.pass_opts.of<RefOptions>().mid == RefOptions::Mid::Check);
    CHECK(cl.pass_opts.of<RefOptions>().mid_url.empty());

    // The service's command line still wins over [milter].
    auto jobs2 = SettingsLoader({"mimeuri", "--milter", "unix:" + d / "m.sock", "--jobs=2"}, conf).load();
    REQUIRE(jobs2.ok());
    CHECK(jobs2->settings->opts.jobs == 2);
    CHECK(jobs2->settings->opts.syslog); // "--milter SOCKET" is the service too
}

TEST_CASE("[milter]: a bad key or value there stops the service, names the file, the line and the group; not a delivery run")
{
    testing::TempDir d;
    struct Bad {
        const char *text;
        const char *said;
    };
    for (const Bad &bad : {Bad{"[milter]\nreprot = /tmp/r\n", "mimeuri.conf:2: unknown key 'reprot' in [milter]: did you mean report?"},
                           Bad{"[milter]\njobs = many\n", "mimeuri.conf:2: [milter] jobs"},
                           Bad{"[milter]\nmilter = unix:/x\n", "unknown key 'milter' in [milter]"},
                           Bad{"[milter]\non-error = pass\non-error = tempfail\n", "[milter] on-error sets --on-error again"}}) {
        CAPTURE(bad.text);
        const std::string conf = d.file("mimeuri.conf", bad.text);
        auto s = SettingsLoader({"mimeuri", "--milter=unix:" + d / "m.sock"}, conf).load();
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().code == Code::Config);
        CHECK_MESSAGE(s.error().message.find(bad.said) != std::string::npos, s.error().message);
        // A delivery run reading the same file is not the service: it goes on.
        auto c = SettingsLoader({"mimeuri", "a.eml"}, conf).load();
        CHECK_MESSAGE(c.ok(), c.error().message);
    }
    // [milter] may set what [mimeuri] sets (it wins); [mimeuri] and [references] may not
    // both set one option, [milter] aside.
    const std::string twice = d.file("twice.conf", "[mimeuri]\nmid = check\n[references]\nmid = repair\n");
    auto t = SettingsLoader({"mimeuri", "--milter=unix:" + d / "m.sock"}, twice).load();
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message.find("sets --mid again") != std::string::npos);
}

TEST_CASE("--print-config shows [milter] as the files hold it, marked: applied for the service only")
{
    testing::TempDir d;
    const std::string conf = d.file("mimeuri.conf", "[mimeuri]\nverbose = yes\n[milter]\nreport = /srv/r.jsonl\n");
    auto printed = [&](std::vector<std::string> args) {
        auto s = SettingsLoader(std::move(args), conf).load();
        REQUIRE_MESSAGE(s.ok(), s.error().message);
        REQUIRE(s->print_and_exit);
        return *s->print_and_exit;
    };
    const std::string cl = printed({"mimeuri", "--print-config"});
    const std::string sv = printed({"mimeuri", "--milter=unix:" + d / "m.sock", "--print-config"});
    const std::string group = "\n[milter]\n# The service's own settings (mimeuri --milter reads them over [mimeuri]; ";
    CHECK(cl.find(group + "a command-line run does not read them)\nreport=/srv/r.jsonl\n") != std::string::npos);
    CHECK(sv.find(group + "applied above)\nreport=/srv/r.jsonl\n") != std::string::npos);
    CHECK(cl.find("\n#report=\n") != std::string::npos); // not in effect for the command line
    // In effect in [mimeuri] for the service, and shown in [milter] as written.
    const auto first = sv.find("\nreport=/srv/r.jsonl\n");
    REQUIRE(first != std::string::npos);
    CHECK(first < sv.find("\n[references]\n"));
    CHECK(sv.find("\nreport=/srv/r.jsonl\n", first + 1) > sv.find("\n[milter]\n"));
    CHECK(sv.find("([milter] over the rest: this is the service)") != std::string::npos);
    CHECK(cl.find("this is the service") == std::string::npos);
    // Nothing in [milter]: said so.
    const std::string none = d.file("none.conf", "[mimeuri]\n");
    auto n = SettingsLoader({"mimeuri", "--print-config"}, none).load();
    REQUIRE(n.ok());
    CHECK(n->print_and_exit->find("a command-line run does not read them): none set\n") != std::string::npos);
}
