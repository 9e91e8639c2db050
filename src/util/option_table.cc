// Reading an OptionTable from the command line (GOption) and from a configuration file
// (GKeyFile). Both turn the text they read into an OptionValue with one conversion
// (convert below) and hand it to the entry's one setter.
#include "option_table.hh"

#include "config_lines.hh"
#include "gobj.hh"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace mimeuri {

OptionTable &OptionTable::operator+=(OptionTable other)
{
    for (auto &o : other.options) options.push_back(std::move(o));
    for (auto &c : other.checks) checks.push_back(std::move(c));
    return *this;
}

Error usage_error(std::string message) { return Error{Code::Usage, std::move(message)}; }

const std::vector<std::string> &words_of(const OptionSpec &s)
{
    return s.kind == OptionKind::Choice ? s.access.words : s.choices;
}

OptionAccess bind_flag(bool &field)
{
    return {[&field](const OptionValue &v) {
                field = v.flag;
                return ok();
            },
            [&field] { return std::string(field ? "true" : "false"); }};
}

OptionAccess bind_text(std::string &field)
{
    return {[&field](const OptionValue &v) {
                field = v.text;
                return ok();
            },
            [&field] { return field; }};
}

OptionAccess bind_int(int &field, int min, int max)
{
    return {[&field, min, max](const OptionValue &v) -> Status {
                if (v.number < min || v.number > max)
                    return usage_error(v.name + " must be between " + std::to_string(min) + " and " +
                                       std::to_string(max));
                field = static_cast<int>(v.number);
                return ok();
            },
            [&field] { return std::to_string(field); }};
}

OptionAccess bind_size(std::size_t &field)
{
    return {[&field](const OptionValue &v) {
                field = static_cast<std::size_t>(v.number);
                return ok();
            },
            [&field] { return std::to_string(field); }};
}

OptionAccess bind_lower_list(std::vector<std::string> &field)
{
    return {[&field](const OptionValue &v) {
                field = v.list;
                for (auto &item : field)
                    for (char &c : item) c = static_cast<char>(g_ascii_tolower(c));
                return ok();
            },
            [&field] { return join(field, ","); }};
}

std::string join(const std::vector<std::string> &items, const char *sep)
{
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += sep;
        out += items[i];
    }
    return out;
}

std::string show_real(double value)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_ascii_formatd(buf, sizeof buf, "%.15g", value);
}

namespace {

struct KeyFileDeleter {
    void operator()(GKeyFile *k) const { g_key_file_unref(k); }
};
using KeyFilePtr = std::unique_ptr<GKeyFile, KeyFileDeleter>;

// A value as it stands in a key file, escaped by GKeyFile itself.
std::string keyfile_value(const std::string &text, const std::vector<std::string> *list = nullptr)
{
    KeyFilePtr kf(g_key_file_new());
    if (list) {
        std::vector<const char *> items;
        for (const auto &i : *list) items.push_back(i.c_str());
        g_key_file_set_string_list(kf.get(), "g", "k", items.data(), items.size());
    } else {
        g_key_file_set_string(kf.get(), "g", "k", text.c_str());
    }
    GCharPtr raw(g_key_file_get_value(kf.get(), "g", "k", nullptr));
    return raw ? raw.get() : "";
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
// two neighbours ("chekc") each count one.
std::size_t edit_distance(const std::string &a, const std::string &b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

} // namespace

std::string keyfile_list(const std::vector<std::string> &items) { return keyfile_value({}, &items); }

std::string closest(const std::string &word, const std::vector<std::string> &candidates)
{
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const auto &c : candidates) {
        std::size_t d = edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    // A third of the word may be wrong ("chek", "jbos", "extrnal-body"); more is no typo.
    if (best_d != std::string::npos && best_d <= std::max<std::size_t>(1, word.size() / 3)) return best;
    std::string prefixed;
    for (const auto &c : candidates)
        if (word.size() >= 2 && c.rfind(word, 0) == 0) {
            if (!prefixed.empty()) return {}; // "--in": in-place, inline-types, ...
            prefixed = c;
        }
    return prefixed;
}

namespace {

struct OptionContextDeleter {
    void operator()(GOptionContext *c) const { g_option_context_free(c); }
};
using StrvPtr = std::unique_ptr<char *, void (*)(char **)>;

bool takes_argument(const OptionSpec &s) { return s.kind != OptionKind::Flag; }

std::string arg_description(const OptionSpec &s)
{
    if (!takes_argument(s)) return {};
    if (!s.arg_name.empty()) return s.arg_name;
    return join(words_of(s), "|");
}

const OptionSpec *find_long(const OptionTable &t, const std::string &name)
{
    for (const auto &s : t.options)
        if (s.long_name == name) return &s;
    return nullptr;
}

const OptionSpec *find_short(const OptionTable &t, char c)
{
    for (const auto &s : t.options)
        if (s.short_name && s.short_name == c) return &s;
    return nullptr;
}

std::vector<std::string> long_names(const OptionTable &t)
{
    std::vector<std::string> names;
    for (const auto &s : t.options)
        if (!s.hidden) names.push_back(s.long_name);
    return names;
}

// The text of a value, as either source wrote it, in the entry's kind. A Flag and a
// A size: decimal bytes, or a number with K, M or G (KiB, MiB, GiB: powers of 1024, as
// `du -h`, Postfix's and Dovecot's limits read them; `1M` is 1048576). Admins write
// `offload-min = 1M` as they write `message_size_limit`; a bare number stays bytes.
std::optional<gint64> size_of(const std::string &text)
{
    std::string digits = text;
    int shift = 0;
    auto ends_with = [&](std::string_view tail) {
        return digits.size() > tail.size() && g_ascii_strcasecmp(digits.c_str() + digits.size() - tail.size(), std::string(tail).c_str()) == 0;
    };
    for (const auto &[tail, bits] : {std::pair{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"K", 10}, {"M", 20}, {"G", 30}}) {
        if (ends_with(tail)) {
            digits.resize(digits.size() - std::string_view(tail).size());
            shift = bits;
            break;
        }
    }
    GError *err = nullptr;
    guint64 n = 0;
    if (!g_ascii_string_to_unsigned(digits.c_str(), 10, 0, G_MAXINT64 >> shift, &n, &err)) {
        g_clear_error(&err);
        return std::nullopt;
    }
    return static_cast<gint64>(n << shift);
}

// Repeated value are read by the caller (they have no single text), but for a Flag an
// implication sets ("true": --offload-restore implies --strict).
Result<OptionValue> convert(const OptionSpec &s, const std::string &text, std::string name)
{
    OptionValue v;
    v.name = std::move(name);
    v.text = text;
    switch (s.kind) {
    case OptionKind::Flag:
        v.flag = text == "true";
        break;
    case OptionKind::String:
    case OptionKind::Path:
    case OptionKind::Repeated:
        break;
    case OptionKind::Choice: {
        const auto &words = words_of(s);
        if (std::find(words.begin(), words.end(), text) != words.end()) return v;
        std::string names;
        for (std::size_t i = 0; i < words.size(); ++i) {
            if (i > 0) names += i + 1 == words.size() ? " or " : ", ";
            names += words[i];
        }
        return usage_error(v.name + " must be " + names + ", not '" + text + "'");
    }
    case OptionKind::Int: {
        // Decimal only, as GKeyFile reads integers (GOption alone would also take 0x10
        // and 010 as octal).
        GError *err = nullptr;
        gint64 n = 0;
        if (!g_ascii_string_to_signed(text.c_str(), 10, G_MININT64, G_MAXINT64, &n, &err)) {
            g_clear_error(&err);
            return usage_error(v.name + ": '" + text + "' is not an integer");
        }
        v.number = n;
        break;
    }
    case OptionKind::Size: {
        const auto n = size_of(text);
        if (!n) return usage_error(v.name + ": '" + text + "' is not a size (bytes, or a number with K, M or G)");
        v.number = *n;
        break;
    }
    case OptionKind::Double: {
        // g_ascii_strtod: a '.' decimal point whatever the locale, in both sources.
        char *end = nullptr;
        errno = 0;
        v.real = g_ascii_strtod(text.c_str(), &end);
        // inf, nan and what overflows a double are no numbers of seconds (a conversion of
        // them to a duration is undefined behaviour).
        if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v.real))
            return usage_error(v.name + ": '" + text + "' is not a finite number");
        break;
    }
    case OptionKind::List: {
        char **parts = g_strsplit(text.c_str(), ",", -1);
        for (char **p = parts; *p; ++p) {
            std::string item = g_strstrip(*p);
            if (!item.empty()) v.list.push_back(std::move(item));
        }
        g_strfreev(parts);
        // A list of words (--passes): each one of choices, said where it is written.
        for (const auto &item : v.list)
            if (!s.choices.empty() && std::find(s.choices.begin(), s.choices.end(), item) == s.choices.end()) {
                std::string near = closest(item, s.choices);
                return usage_error(v.name + ": unknown item '" + item + "'" +
                                   (near.empty() ? "" : " (did you mean " + near + "?)") + "; known: " +
                                   join(s.choices, ", "));
            }
        break;
    }
    }
    return v;
}

// One source (the command line, or one configuration file): what it set, so that an
// implication yields to an option the same source gives itself.
class SettingsSource {
public:
    explicit SettingsSource(const OptionTable &t) : table_(t) {}

    Status set(const OptionSpec &s, const OptionValue &v)
    {
        seen_.insert(s.long_name);
        if (s.implies) implied_.push_back(&s);
        return s.access.set(v);
    }

    Status finish(const std::string &where)
    {
        for (const OptionSpec *s : implied_) {
            if (seen_.count(s->implies->option)) continue;
            const OptionSpec *target = find_long(table_, s->implies->option);
            if (!target) return Error{Code::Software, "--" + s->long_name + " implies an unknown option"};
            auto v = convert(*target, s->implies->value, where + "--" + s->long_name + " (implying --" +
                                                             target->long_name + "=" + s->implies->value + ")");
            if (!v) return v.error();
            if (auto st = target->access.set(*v); !st) return st;
        }
        implied_.clear();
        return ok();
    }

private:
    const OptionTable &table_;
    std::set<std::string> seen_;
    std::vector<const OptionSpec *> implied_;
};

// The command line as GOption reports it: every option with its text, in order.
struct Collected {
    const OptionTable *table{nullptr};
    std::vector<std::pair<const OptionSpec *, std::string>> seen;
};

gboolean collect(const gchar *option_name, const gchar *value, gpointer data, GError **)
{
    auto *c = static_cast<Collected *>(data);
    std::string name = option_name;
    for (const auto &s : c->table->options)
        if (name == "--" + s.long_name || (s.short_name && name == std::string{'-', s.short_name})) {
            c->seen.emplace_back(&s, value ? value : "");
            return TRUE;
        }
    return FALSE; // not reached: GOption only calls back for the entries it was given
}

// GOption entries for the table; the strings they point to live in `texts`.
struct Entries {
    std::vector<std::string> texts;
    std::vector<GOptionEntry> entries;
};

void make_entries(const OptionTable &t, GOptionEntry remaining, Entries &out)
{
    out.texts.reserve(t.options.size() * 2);
    for (const auto &s : t.options) {
        std::string help = s.help;
        if (!s.default_text.empty()) help += " (default: " + s.default_text + ")";
        out.texts.push_back(std::move(help));
        const char *desc = out.texts.back().c_str();
        std::string arg = arg_description(s);
        out.texts.push_back(std::move(arg));
        const char *arg_desc = out.texts.back().empty() ? nullptr : out.texts.back().c_str();
        int flags = 0;
        if (!takes_argument(s)) flags |= G_OPTION_FLAG_NO_ARG;
        if (s.kind == OptionKind::Path) flags |= G_OPTION_FLAG_FILENAME;
        if (s.hidden) flags |= G_OPTION_FLAG_HIDDEN;
        out.entries.push_back({s.long_name.c_str(), s.short_name, flags, G_OPTION_ARG_CALLBACK,
                               reinterpret_cast<gpointer>(&collect), desc, arg_desc});
    }
    out.entries.push_back(remaining);
    out.entries.push_back({nullptr, 0, 0, G_OPTION_ARG_NONE, nullptr, nullptr, nullptr});
}

std::unique_ptr<GOptionContext, OptionContextDeleter> make_context(const OptionTable &t, const CommandLineText &text,
                                                                   Collected &collected, GOptionEntry remaining,
                                                                   Entries &entries)
{
    make_entries(t, remaining, entries);
    std::unique_ptr<GOptionContext, OptionContextDeleter> ctx(g_option_context_new(text.parameters));
    // --help is an entry of the table like any other, so that parsing never exits.
    g_option_context_set_help_enabled(ctx.get(), FALSE);
    GOptionGroup *group = g_option_group_new("main", "", "", &collected, nullptr);
    g_option_group_add_entries(group, entries.entries.data());
    g_option_context_set_main_group(ctx.get(), group);
    g_option_context_set_description(ctx.get(), text.description);
    if (text.summary) g_option_context_set_summary(ctx.get(), text.summary);
    return ctx;
}

const char *const kSeeHelp = " (mimeuri --help lists the options)";

Error unknown_option(const OptionTable &t, const std::string &word, const std::string &name)
{
    std::string near = closest(name, long_names(t));
    return usage_error("unknown option " + word + (near.empty() ? "" : ": did you mean --" + near + "?") + kSeeHelp);
}

// The words GOption will read, checked and made plain first, because GOption alone takes a
// short option's argument only from the next word ("-j2" as "-j 2", "-vj2" as "-vj 2"),
// reads "-check" as -c -h -e -c -k, and says nothing helpful of a typo. A word that is an
// option's argument ("-o -x") is left alone.
Result<std::vector<std::string>> prepare_argv(const OptionTable &t, int argc, char **argv)
{
    std::vector<std::string> out;
    if (argc > 0) out.emplace_back(argv[0]);
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool value_follows = false;
        if (options_done || a.size() < 2 || a[0] != '-') {
            out.push_back(std::move(a));
            continue;
        }
        if (a == "--") {
            options_done = true;
            out.push_back(std::move(a));
            continue;
        }
        const std::string name = a.substr(a[1] == '-' ? 2 : 1, a.find('=') - (a[1] == '-' ? 2 : 1));
        if (a[1] == '-') {
            const OptionSpec *s = find_long(t, name);
            if (!s) return unknown_option(t, "--" + name, name);
            value_follows = takes_argument(*s) && a.find('=') == std::string::npos;
            out.push_back(std::move(a));
        } else if (a.size() > 2 && find_long(t, name)) {
            return usage_error(a + ": a long option takes two dashes: did you mean --" + name + "?" + kSeeHelp);
        } else {
            std::size_t cut = 0;
            for (std::size_t k = 1; k < a.size() && !cut; ++k) {
                const OptionSpec *s = find_short(t, a[k]);
                if (!s) {
                    std::string near = closest(name, long_names(t));
                    return usage_error("unknown option -" + std::string(1, a[k]) + (a.size() > 2 ? " in " + a : "") +
                                       (near.empty() ? "" : ": did you mean --" + near + "?") + kSeeHelp);
                }
                if (takes_argument(*s)) cut = k + 1;
            }
            if (cut && cut < a.size()) {
                out.push_back(a.substr(0, cut));
                out.push_back(a.substr(cut));
            } else {
                value_follows = cut != 0;
                out.push_back(std::move(a));
            }
        }
        if (value_follows && i + 1 < argc) out.emplace_back(argv[++i]);
    }
    return out;
}

} // namespace

Status parse_command_line(const OptionTable &t, const CommandLineText &text, int argc, char **argv,
                          std::vector<std::string> &rest)
{
    auto prepared = prepare_argv(t, argc, argv);
    if (!prepared) return prepared.error();
    std::vector<std::string> &words = *prepared;
    // GOption removes what it parsed from the array it is given and writes into the
    // words: hand it an array of its own, pointing into `words`.
    std::vector<char *> args;
    for (auto &w : words) args.push_back(w.data());
    args.push_back(nullptr);
    int n = static_cast<int>(words.size());
    char **v = args.data();
    gchar **remaining = nullptr;
    Collected collected{&t, {}};
    Entries entries;
    auto ctx = make_context(t, text, collected,
                            {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &remaining, nullptr, nullptr},
                            entries);
    GError *err = nullptr;
    bool parsed = g_option_context_parse(ctx.get(), &n, &v, &err);
    StrvPtr rguard(remaining, g_strfreev);
    if (!parsed) {
        Error e = Error::from_gerror(Code::Usage, err);
        e.message += kSeeHelp;
        return e;
    }
    for (char **r = remaining; r && *r; ++r) rest.emplace_back(*r);

    SettingsSource source(t);
    for (std::size_t i = 0; i < collected.seen.size(); ++i) {
        const auto &[spec, raw] = collected.seen[i];
        std::string name = "--" + spec->long_name;
        OptionValue value;
        if (spec->kind == OptionKind::Flag) {
            value.name = name;
            value.flag = true;
        } else if (spec->kind == OptionKind::Repeated) {
            // The whole list at its first occurrence: it replaces the configuration's.
            bool first = true;
            for (std::size_t j = 0; j < i; ++j) first = first && collected.seen[j].first != spec;
            if (!first) continue;
            value.name = name;
            for (std::size_t j = i; j < collected.seen.size(); ++j)
                if (collected.seen[j].first == spec) value.list.push_back(collected.seen[j].second);
        } else {
            auto c = convert(*spec, raw, name);
            if (!c) return c.error();
            value = std::move(*c);
        }
        if (auto s = source.set(*spec, value); !s) return s;
    }
    return source.finish("");
}

std::string command_line_help(const OptionTable &t, const CommandLineText &text)
{
    Collected collected{&t, {}};
    Entries entries;
    gchar **remaining = nullptr;
    auto ctx = make_context(t, text, collected,
                            {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &remaining, nullptr, nullptr},
                            entries);
    GCharPtr help(g_option_context_get_help(ctx.get(), TRUE, nullptr));
    return help ? help.get() : "";
}

namespace {

// The booleans GKeyFile takes (true, false, 1, 0) and those admins write (yes, no, on, off).
std::optional<bool> parse_bool(std::string text)
{
    text = g_strstrip(text.data());
    for (char &c : text) c = static_cast<char>(g_ascii_tolower(c));
    for (const char *yes : {"true", "yes", "on", "1"})
        if (text == yes) return true;
    for (const char *no : {"false", "no", "off", "0"})
        if (text == no) return false;
    return std::nullopt;
}

// The entry a key names in a group: its long name in [mimeuri] or in its own group, or
// its own key there.
const OptionSpec *find_config_key(const OptionTable &t, const std::string &group, const std::string &key)
{
    for (const auto &s : t.options)
        if (!s.group.empty() && ((s.group == group && (s.key == key || s.long_name == key)) ||
                                 (group == kMainGroup && s.long_name == key)))
            return &s;
    return nullptr;
}

Error config_error(std::string message) { return Error{Code::Config, std::move(message)}; }

// The value of `key` in `group` as the entry's kind reads it; name says where, in messages.
Result<OptionValue> config_value(GKeyFile *kf, const OptionSpec &spec, const std::string &group, const std::string &key,
                                 const std::string &name)
{
    GError *err = nullptr;
    OptionValue value;
    value.name = name;
    if (spec.kind == OptionKind::Flag) {
        GCharPtr text(g_key_file_get_string(kf, group.c_str(), key.c_str(), &err));
        if (!text) return Error::from_gerror(Code::Config, err, name);
        auto b = parse_bool(text.get());
        if (!b)
            return config_error(name + ": '" + std::string(text.get()) +
                                "' is not a boolean (true or false, yes or no, on or off, 1 or 0)");
        value.flag = *b;
    } else if (spec.kind == OptionKind::Repeated) {
        gsize n = 0;
        StrvPtr list(g_key_file_get_string_list(kf, group.c_str(), key.c_str(), &n, &err), g_strfreev);
        if (err) return Error::from_gerror(Code::Config, err, name);
        for (gsize m = 0; list && m < n; ++m) value.list.emplace_back(list.get()[m]);
    } else {
        GCharPtr text(g_key_file_get_string(kf, group.c_str(), key.c_str(), &err));
        if (!text) return Error::from_gerror(Code::Config, err, name);
        auto c = convert(spec, text.get(), name);
        if (!c) return config_error(c.error().message);
        value = std::move(*c);
    }
    return value;
}

} // namespace

namespace {

// The file's groups in the order they are read: [milter] last, over the rest of the file, as
// a source of its own (its implications, and setting again what another group set, are its
// own), and only where the service reads it (read->service); its lines kept for
// --print-config either way. A policy already defined (in this file or an earlier one) is
// one problem per header, naming the first place, for the service that reads policies.
std::vector<std::string> groups_in_order(GKeyFile *kf, const std::string &path, const ConfigLines &lines,
                                         ConfigRead *read, bool &has_service, std::vector<std::string> &problems)
{
    gsize ngroups = 0;
    StrvPtr groups(g_key_file_get_groups(kf, &ngroups), g_strfreev);
    std::vector<std::string> order;
    for (gsize g = 0; g < ngroups; ++g) {
        const std::string group = groups.get()[g];
        if (group == kServiceGroup) has_service = true;
        else if (group.rfind(kPolicyPrefix, 0) != 0) order.push_back(group);
        else if (read) {
            std::vector<std::size_t> at = lines.headers(group);
            auto was = std::find(read->policies.begin(), read->policies.end(), group);
            std::string first = path + ":" + std::to_string(at.empty() ? 0 : at.front());
            if (was == read->policies.end()) {
                read->policies.push_back(group);
                read->policy_places.push_back(first);
                at.erase(at.begin(), at.begin() + std::min<std::size_t>(1, at.size()));
            } else {
                first = read->policy_places[static_cast<std::size_t>(was - read->policies.begin())];
            }
            for (std::size_t again : at)
                if (read->service)
                    problems.push_back(path + ":" + std::to_string(again) + ": [" + group + "] is defined again: it is "
                                       "first defined at " + first + " (a policy's name is its own)");
        }
    }
    if (has_service) {
        gsize nkeys = 0;
        StrvPtr keys(g_key_file_get_keys(kf, kServiceGroup.c_str(), &nkeys, nullptr), g_strfreev);
        for (gsize k = 0; read && k < nkeys; ++k) {
            GCharPtr raw_value(g_key_file_get_value(kf, kServiceGroup.c_str(), keys.get()[k], nullptr));
            read->service_lines.push_back(std::string(keys.get()[k]) + "=" + (raw_value ? raw_value.get() : ""));
        }
        if (read && read->service) order.push_back(kServiceGroup);
    }
    if (read && read->service && !read->policy.empty() && g_key_file_has_group(kf, read->policy.c_str()))
        order.push_back(read->policy); // over [milter], as a source of its own
    return order;
}

// The file as GKeyFile reads it. GKeyFile stops at the first line it cannot read: each such
// line is a problem of its own and is read as a comment, so that the rest is still checked.
KeyFilePtr read_keyfile(std::string text, const std::string &path, std::vector<std::string> &problems)
{
    GError *err = nullptr;
    for (KeyFilePtr kf(g_key_file_new());; kf.reset(g_key_file_new())) {
        if (g_key_file_load_from_data(kf.get(), text.data(), text.size(), G_KEY_FILE_NONE, &err)) return kf;
        const std::size_t bad = ConfigLines(text).first_invalid();
        problems.push_back(Error::from_gerror(Code::Config, err, path + (bad ? ":" + std::to_string(bad) : "")).message);
        err = nullptr;
        std::size_t pos = 0;
        for (std::size_t n = 1; bad && n < bad && pos != std::string::npos; ++n)
            if ((pos = text.find('\n', pos)) != std::string::npos) ++pos;
        if (!bad || pos == std::string::npos) return nullptr; // not found: nothing more is read
        text.insert(pos, "#");
    }
}

// What is said of a key no entry takes in `group` (read as [mimeuri] when `service`).
std::string unknown_key(const OptionTable &t, const std::string &group, const std::string &key, bool service)
{
    std::vector<std::string> names;
    for (const auto &s : t.options)
        if (!s.group.empty() && (group == kMainGroup || service || s.group == group)) names.push_back(s.long_name);
    std::string near = closest(key, names);
    return "unknown key '" + key + "' in [" + group + "]" + (near.empty() ? "" : ": did you mean " + near + "?") +
           " (keys are the long options' names: mimeuri --help)";
}

} // namespace

Status load_config_file(const OptionTable &t, const std::string &path, ConfigRead *read)
{
    gchar *raw = nullptr;
    gsize len = 0;
    GError *err = nullptr;
    std::vector<std::string> problems;
    auto done = [&]() -> Status { // in line order, as `postfix check` lists them
        auto line_of = [&](const std::string &p) {
            return p.rfind(path + ":", 0) == 0 ? std::strtoul(p.c_str() + path.size() + 1, nullptr, 10) : 0;
        };
        std::stable_sort(problems.begin(), problems.end(), [&](auto &a, auto &b) { return line_of(a) < line_of(b); });
        if (problems.empty()) return ok();
        if (read) read->problems.insert(read->problems.end(), problems.begin(), problems.end());
        return config_error(problems.front());
    };
    if (!g_file_get_contents(path.c_str(), &raw, &len, &err)) {
        problems.push_back(Error::from_gerror(Code::Config, err, "cannot read the configuration file").message);
        return done();
    }
    GCharPtr owned(raw);
    const ConfigLines lines(std::string(raw, len));
    auto at = [&](std::size_t line) { return path + (line ? ":" + std::to_string(line) : std::string()) + ": "; };
    KeyFilePtr kf = read_keyfile(std::string(raw, len), path, problems);
    if (!kf) return done();

    std::vector<std::string> groups_known{kMainGroup};
    for (const auto &s : t.options)
        if (!s.group.empty() && std::find(groups_known.begin(), groups_known.end(), s.group) == groups_known.end())
            groups_known.push_back(s.group);
    groups_known.push_back(kServiceGroup);

    bool has_service = false;
    const std::vector<std::string> order = groups_in_order(kf.get(), path, lines, read, has_service, problems);
    SettingsSource file_source(t), service_source(t), policy_source(t);
    std::map<const OptionSpec *, std::pair<std::string, std::size_t>> set_by, service_set_by, policy_set_by;
    for (const std::string &group : order) {
        const bool policy = group.rfind(kPolicyPrefix, 0) == 0, service = group == kServiceGroup || policy;
        SettingsSource &before = policy && has_service ? service_source : file_source;
        if (service)
            if (auto st = before.finish(path + ": "); !st) problems.push_back(st.error().message);
        SettingsSource &source = policy ? policy_source : service ? service_source : file_source;
        auto &set_by_here = policy ? policy_set_by : service ? service_set_by : set_by;
        // Unknown groups and keys are errors, so that a typo does not silently change
        // what a filter does.
        if (!policy && std::find(groups_known.begin(), groups_known.end(), group) == groups_known.end()) {
            std::string near = closest(group, groups_known);
            problems.push_back(at(lines.find(group)) + "unknown group [" + group + "]" +
                               (near.empty() ? "" : ": did you mean [" + near + "]?") +
                               " (groups: " + join(groups_known, ", ") + ")");
            continue;
        }
        gsize nkeys = 0;
        StrvPtr keys(g_key_file_get_keys(kf.get(), group.c_str(), &nkeys, nullptr), g_strfreev);
        for (gsize k = 0; k < nkeys; ++k) {
            const std::string key = keys.get()[k];
            if (policy && std::count(kPolicyMatchKeys.begin(), kPolicyMatchKeys.end(), key)) continue; // the service's
            const std::size_t line = lines.find(group, key);
            const std::string name = at(line) + "[" + group + "] " + key;
            const OptionSpec *spec = find_config_key(t, service ? kMainGroup : group, key);
            if (!spec) {
                problems.push_back(at(line) + unknown_key(t, group, key, service));
                continue;
            }
            // The same option under two names (a pass's group and [mimeuri]) is a mistake
            // whichever was meant to win.
            if (auto was = set_by_here.find(spec); was != set_by_here.end()) {
                problems.push_back(name + " sets --" + spec->long_name + " again (" + was->second.first +
                                   (was->second.second ? " on line " + std::to_string(was->second.second) : "") +
                                   " set it)");
                continue;
            }
            set_by_here[spec] = {"[" + group + "] " + key, line};

            auto value = config_value(kf.get(), *spec, group, key, name);
            if (!value) problems.push_back(value.error().message);
            else if (auto st = source.set(*spec, *value); !st) problems.push_back(st.error().message);
            else if (read) read->origins[spec->long_name] = at(line).substr(0, at(line).size() - 2);
        }
    }
    const bool policy_read = read && read->service && !order.empty() && order.back().rfind(kPolicyPrefix, 0) == 0;
    SettingsSource &last = policy_read ? policy_source : read && read->service && has_service ? service_source : file_source;
    if (auto st = last.finish(path + ": "); !st) problems.push_back(st.error().message);
    return done();
}

std::string config_place(const std::string &path, const std::string &group, const std::string &key)
{
    gchar *raw = nullptr;
    gsize len = 0;
    if (!g_file_get_contents(path.c_str(), &raw, &len, nullptr)) return path;
    GCharPtr owned(raw);
    const std::size_t line = ConfigLines(std::string(raw, len)).find(group, key);
    return path + (line ? ":" + std::to_string(line) : std::string());
}

std::string config_text(const OptionTable &t, const std::string &header, const std::map<std::string, std::string> *origins)
{
    std::vector<std::string> groups{kMainGroup};
    for (const auto &s : t.options)
        if (!s.group.empty() && std::find(groups.begin(), groups.end(), s.group) == groups.end())
            groups.push_back(s.group);
    std::string out = header;
    for (const auto &group : groups) {
        out += "\n[" + group + "]\n";
        for (const auto &s : t.options) {
            if (s.group != group) continue;
            std::string shown = s.access.show();
            if (s.kind != OptionKind::Repeated) shown = keyfile_value(shown);
            bool unset = shown.empty() && (s.kind == OptionKind::String || s.kind == OptionKind::Path ||
                                           s.kind == OptionKind::Repeated);
            if (origins)
                if (auto o = origins->find(s.long_name); o != origins->end()) out += "# from " + o->second + "\n";
            out += (unset ? "#" : "") + s.long_name + "=" + shown + "\n";
        }
    }
    return out;
}

} // namespace mimeuri
