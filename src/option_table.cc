// Reading an OptionTable from the command line (GOption) and from a configuration file
// (GKeyFile). Both turn the text they read into an OptionValue with one conversion
// (convert below) and hand it to the entry's one setter.
#include "option_table.hh"

#include "gobj.hh"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>

namespace mimeuri {

OptionTable &OptionTable::operator+=(OptionTable other)
{
    for (auto &o : other.options) options.push_back(std::move(o));
    for (auto &c : other.checks) checks.push_back(std::move(c));
    return *this;
}

Error usage_error(std::string message) { return Error{Code::Usage, std::move(message)}; }

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

namespace {

struct OptionContextDeleter {
    void operator()(GOptionContext *c) const { g_option_context_free(c); }
};
struct KeyFileDeleter {
    void operator()(GKeyFile *k) const { g_key_file_unref(k); }
};
using StrvPtr = std::unique_ptr<char *, void (*)(char **)>;

bool takes_argument(const OptionSpec &s) { return s.kind != OptionKind::Flag; }

std::string arg_description(const OptionSpec &s)
{
    if (!takes_argument(s)) return {};
    if (!s.arg_name.empty()) return s.arg_name;
    return join(s.choices, "|");
}

const OptionSpec *find_long(const OptionTable &t, const std::string &name)
{
    for (const auto &s : t.options)
        if (s.long_name == name) return &s;
    return nullptr;
}

// The text of a value, as either source wrote it, in the entry's kind. A Flag and a
// Repeated value are read by the caller (they have no single text).
Result<OptionValue> convert(const OptionSpec &s, const std::string &text, std::string name)
{
    OptionValue v;
    v.name = std::move(name);
    v.text = text;
    switch (s.kind) {
    case OptionKind::Flag:
    case OptionKind::String:
    case OptionKind::Path:
    case OptionKind::Repeated:
        break;
    case OptionKind::Choice: {
        for (std::size_t i = 0; i < s.choices.size(); ++i)
            if (s.choices[i] == text) {
                v.number = static_cast<std::int64_t>(i);
                return v;
            }
        std::string names;
        for (std::size_t i = 0; i < s.choices.size(); ++i) {
            if (i > 0) names += i + 1 == s.choices.size() ? " or " : ", ";
            names += s.choices[i];
        }
        return usage_error(v.name + " must be " + names + ", not '" + text + "'");
    }
    case OptionKind::Int:
    case OptionKind::Size: {
        // Decimal only, as GKeyFile reads integers (GOption alone would also take 0x10
        // and 010 as octal).
        GError *err = nullptr;
        gint64 n = 0;
        if (!g_ascii_string_to_signed(text.c_str(), 10, G_MININT64, G_MAXINT64, &n, &err)) {
            g_clear_error(&err);
            return usage_error(v.name + ": '" + text + "' is not an integer");
        }
        if (s.kind == OptionKind::Size && n < 0) return usage_error(v.name + " must not be negative");
        v.number = n;
        break;
    }
    case OptionKind::Double: {
        // g_ascii_strtod: a '.' decimal point whatever the locale, in both sources.
        char *end = nullptr;
        errno = 0;
        v.real = g_ascii_strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno == ERANGE)
            return usage_error(v.name + ": '" + text + "' is not a number");
        break;
    }
    case OptionKind::List: {
        char **parts = g_strsplit(text.c_str(), ",", -1);
        for (char **p = parts; *p; ++p) {
            std::string item = g_strstrip(*p);
            if (!item.empty()) v.list.push_back(std::move(item));
        }
        g_strfreev(parts);
        break;
    }
    }
    return v;
}

// One source (the command line, or one configuration file): what it set, so that an
// implication yields to an option the same source gives itself.
class Source {
public:
    explicit Source(const OptionTable &t) : table_(t) {}

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
    return ctx;
}

// "-j2" as "-j 2", "-vj2" as "-vj 2": GOption takes a short option's argument only from
// the next word.
std::vector<std::string> split_glued(const OptionTable &t, int argc, char **argv)
{
    std::vector<std::string> out;
    bool options_done = false;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (i == 0 || options_done || a.size() < 3 || a[0] != '-' || a[1] == '-') {
            if (a == "--") options_done = true;
            out.push_back(std::move(a));
            continue;
        }
        std::size_t cut = 0;
        for (std::size_t k = 1; k < a.size() && !cut; ++k) {
            const OptionSpec *s = nullptr;
            for (const auto &e : t.options)
                if (e.short_name && e.short_name == a[k]) s = &e;
            if (!s) break; // unknown: GOption says so
            if (takes_argument(*s)) cut = k + 1;
        }
        if (cut && cut < a.size()) {
            out.push_back(a.substr(0, cut));
            out.push_back(a.substr(cut));
        } else {
            out.push_back(std::move(a));
        }
    }
    return out;
}

} // namespace

Status parse_command_line(const OptionTable &t, const CommandLineText &text, int argc, char **argv,
                          std::vector<std::string> &rest)
{
    std::vector<std::string> words = split_glued(t, argc, argv);
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
    if (!parsed) return Error::from_gerror(Code::Usage, err);
    for (char **r = remaining; r && *r; ++r) rest.emplace_back(*r);

    Source source(t);
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

Status load_config_file(const OptionTable &t, const std::string &path)
{
    std::unique_ptr<GKeyFile, KeyFileDeleter> kf(g_key_file_new());
    GError *err = nullptr;
    if (!g_key_file_load_from_file(kf.get(), path.c_str(), G_KEY_FILE_NONE, &err))
        return Error::from_gerror(Code::Usage, err, "cannot load configuration " + path);
    gsize ngroups = 0;
    StrvPtr groups(g_key_file_get_groups(kf.get(), &ngroups), g_strfreev);
    Source source(t);
    for (gsize g = 0; g < ngroups; ++g) {
        const std::string group = groups.get()[g];
        bool known_group = false;
        for (const auto &s : t.options) known_group = known_group || s.group == group;
        // Unknown groups and keys are errors, so that a typo does not silently change
        // what a filter does.
        if (!known_group) return usage_error(path + ": unknown group [" + group + "]");
        gsize nkeys = 0;
        StrvPtr keys(g_key_file_get_keys(kf.get(), group.c_str(), &nkeys, nullptr), g_strfreev);
        for (gsize k = 0; k < nkeys; ++k) {
            const char *key = keys.get()[k];
            const OptionSpec *spec = nullptr;
            for (const auto &s : t.options)
                if (s.group == group && s.key == key) spec = &s;
            if (!spec) return usage_error(path + ": unknown key '" + std::string(key) + "' in [" + group + "]");
            std::string name = path + ": [" + group + "] " + key;
            GError *e = nullptr;
            OptionValue value;
            value.name = name;
            if (spec->kind == OptionKind::Flag) {
                value.flag = g_key_file_get_boolean(kf.get(), group.c_str(), key, &e);
            } else if (spec->kind == OptionKind::Repeated) {
                gsize n = 0;
                StrvPtr list(g_key_file_get_string_list(kf.get(), group.c_str(), key, &n, &e), g_strfreev);
                for (gsize m = 0; list && m < n; ++m) value.list.emplace_back(list.get()[m]);
            } else {
                GCharPtr text(g_key_file_get_string(kf.get(), group.c_str(), key, &e));
                if (!e) {
                    auto c = convert(*spec, text ? text.get() : "", name);
                    if (!c) return c.error();
                    value = std::move(*c);
                }
            }
            if (e) return Error::from_gerror(Code::Usage, e, name);
            if (auto s = source.set(*spec, value); !s) return s;
        }
    }
    return source.finish(path + ": ");
}

} // namespace mimeuri
