// One declarative table of options (after notmuch's notmuch_opt_desc_t): each entry names
// its long and short option, its configuration group and key, its kind, the default shown
// in --help, and one setter. The GOption entries, the configuration file reader and the
// --help text are all made from the table, and the command line and the configuration
// file go through the same setter, so an option means the same thing in both.
#pragma once

#include "result.hh"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

enum class OptionKind {
    Flag,     // --name; in the configuration file true or false
    String,   // --name=TEXT
    Path,     // --name=PATH (a file name: no charset conversion)
    Choice,   // --name=WORD, one of OptionSpec::choices
    Int,      // --name=N, a decimal integer
    Size,     // --name=N, a decimal integer that must not be negative
    Double,   // --name=X
    List,     // --name=A,B,C: comma-separated, each item stripped, empty items dropped
    Repeated, // --name=X given once or more; in the configuration file a ;-separated list
};

// A value as read from the command line or the configuration file, already converted to
// the entry's kind.
struct OptionValue {
    std::string name;              // how the user wrote it, for messages: "--jobs" or "f.conf: [mimeuri] jobs"
    bool flag{false};              // Flag
    std::string text;              // String, Path, Choice (the word)
    std::int64_t number{0};        // Int, Size; Choice: the word's index in choices
    double real{0};                // Double
    std::vector<std::string> list; // List, Repeated: the whole list from one source
};

// Where an entry's value goes, and how to read it back (for tests that compare two parses,
// and nothing else).
struct OptionAccess {
    std::function<Status(const OptionValue &)> set;
    std::function<std::string()> show;
};

// "Setting this option also sets `option` to `value`, unless `option` is itself given
// in the same source" (the command line, or one configuration file), e.g. --mid-url
// implies --mid=repair.
struct OptionImplies {
    std::string option;
    std::string value;
};

struct OptionSpec {
    std::string long_name;            // "jobs" for --jobs
    char short_name{0};               // 'j' for -j; 0: none
    std::string group;                // configuration group ("mimeuri", "references"); "": not in the file
    std::string key;                  // configuration key
    OptionKind kind{OptionKind::Flag};
    std::vector<std::string> choices; // Choice: the words allowed, in the order shown
    std::string default_text;         // shown in --help as "(default: ...)"; "": nothing shown
    std::string help;
    std::string arg_name;             // "N", "PATH"; "": Choice shows its words a|b|c
    OptionAccess access;
    std::optional<OptionImplies> implies{};
};

struct OptionTable {
    std::vector<OptionSpec> options;
    // Rules between options, checked once after every source was read.
    std::vector<std::function<Status()>> checks;

    OptionTable &operator+=(OptionTable other);
};

Error usage_error(std::string message);

// Accessors for an entry that writes one field as it is.
OptionAccess bind_flag(bool &field);
OptionAccess bind_text(std::string &field);
OptionAccess bind_int(int &field, int min, int max);
OptionAccess bind_size(std::size_t &field);
// A comma list whose items are lower-cased (types, schemes compare case-insensitively).
OptionAccess bind_lower_list(std::vector<std::string> &field);

// A Choice entry's field: the enum value at the index of the word in OptionSpec::choices.
template <typename E> OptionAccess bind_choice(E &field, std::vector<E> values)
{
    return {[&field, values](const OptionValue &v) {
                field = values.at(static_cast<std::size_t>(v.number));
                return ok();
            },
            [&field] { return std::to_string(static_cast<int>(field)); }};
}

std::string join(const std::vector<std::string> &items, const char *sep);

// What --help says besides the options.
struct CommandLineText {
    const char *parameters;  // after "Usage: mimeuri [OPTION...]"
    const char *description; // after the options
};

// Reads argv (argv[0] the program) through the table, in order, each option through its
// setter, then the implications; the words that are no options go to `rest`.
Status parse_command_line(const OptionTable &t, const CommandLineText &text, int argc, char **argv,
                          std::vector<std::string> &rest);

// The --help text: every entry of the table, with its default.
std::string command_line_help(const OptionTable &t, const CommandLineText &text);

// Reads one configuration file through the table; unknown groups and keys are errors.
Status load_config_file(const OptionTable &t, const std::string &path);

} // namespace mimeuri
