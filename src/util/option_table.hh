// One declarative table of options (after notmuch's notmuch_opt_desc_t): each entry names
// its long and short option, its configuration group and key, its kind, the default shown
// in --help, and one setter. The GOption entries, the configuration file reader and the
// --help text are all made from the table, and the command line and the configuration
// file go through the same setter, so an option means the same thing in both.
#pragma once

#include "result.hh"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

enum class OptionKind {
    Flag,     // --name; in the configuration file true or false
    String,   // --name=TEXT
    Path,     // --name=PATH (a file name: no charset conversion)
    Choice,   // --name=WORD, one of the words bind_choice declares
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
    std::int64_t number{0};        // Int, Size
    double real{0};                // Double
    std::vector<std::string> list; // List, Repeated: the whole list from one source
};

// Where an entry's value goes, and how to read it back: `show` gives the value as the
// configuration file writes it (--print-config), but for a Repeated entry, whose show gives
// the key-file list (keyfile_list below).
struct OptionAccess {
    std::function<Status(const OptionValue &)> set;
    std::function<std::string()> show;
    std::vector<std::string> words{}; // a Choice's words, in the order shown (bind_choice)
};

// "Setting this option also sets `option` to `value`, unless `option` is itself given
// in the same source" (the command line, or one configuration file), e.g. --mid-url
// implies --mid=repair.
struct OptionImplies {
    std::string option;
    std::string value;
};

// The configuration file's group for every option, whichever layer declares it.
inline const std::string kMainGroup = "mimeuri";
// The service's own group: keys as in [mimeuri] (any option's long name), read by the
// service (--milter) only, over the rest of the file; the command line never reads it, so
// that a setting meant for the service (its report, its syslog, its workers) does not
// apply to a delivery run reading the same file.
inline const std::string kServiceGroup = "milter";
// The service's policies, groups [policy:NAME]: match keys (kPolicyMatchKeys, read by the
// service: src/app/milter_policy.hh) and keys as in [milter], read over [milter] for the
// messages the policy matches. Only the service reads them, one at a time (ConfigRead::policy).
inline const std::string kPolicyPrefix = "policy:";
inline const std::vector<std::string> kPolicyMatchKeys{"client",        "sender-domain", "recipient-domain",
                                                          "authenticated", "daemon-name",   "daemon-port"};

struct OptionSpec {
    std::string long_name;            // "jobs" for --jobs
    char short_name{0};               // 'j' for -j; 0: none
    std::string group;                // its own configuration group ("mimeuri", "references"); "": not in the file
    std::string key;                  // its key there, besides its long name (kept for old files: [labels] mode)
    OptionKind kind{OptionKind::Flag};
    std::vector<std::string> choices; // List: the items allowed (--passes); a Choice's are its access's words
    std::string default_text;         // shown in --help as "(default: ...)"; "": nothing shown
    std::string help;
    std::string arg_name;             // "N", "PATH"; "": Choice shows its words a|b|c
    OptionAccess access;
    std::optional<OptionImplies> implies{};
    bool hidden{false};               // not in --help nor in the shell completion (for the build)
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

// A Choice entry's words, each beside the value it stands for (notmuch's keyword tables):
// the setter looks the word up, `show` the value, so no enum's order matters.
template <typename E> using ChoiceWords = std::vector<std::pair<std::string, E>>;

template <typename E> OptionAccess bind_choice(E &field, ChoiceWords<E> table)
{
    std::vector<std::string> words;
    for (const auto &[word, value] : table) words.push_back(word);
    return {[&field, table](const OptionValue &v) -> Status {
                for (const auto &[word, value] : table)
                    if (word == v.text) {
                        field = value;
                        return ok();
                    }
                return usage_error(v.name + ": no such word '" + v.text + "'");
            },
            [&field, table] {
                for (const auto &[word, value] : table)
                    if (value == field) return word;
                return std::string();
            },
            std::move(words)};
}

// The words an entry takes: a Choice's (bind_choice), a List's (OptionSpec::choices).
const std::vector<std::string> &words_of(const OptionSpec &s);

std::string join(const std::vector<std::string> &items, const char *sep);

// A real number as the configuration file takes it back: "30", "2.5" (not "30.000000").
std::string show_real(double value);
// Items as one key-file list value ("a;b\;c" for a and b;c), as GKeyFile reads it back.
std::string keyfile_list(const std::vector<std::string> &items);

// The candidate nearest to `word` by edit distance (a swap of two neighbours counts one),
// or one that `word` starts uniquely; "" when none is near enough to be a likely typo.
std::string closest(const std::string &word, const std::vector<std::string> &candidates);

// What --help says besides the options.
struct CommandLineText {
    const char *parameters;        // after "Usage: mimeuri [OPTION...]"
    const char *description;       // after the options
    const char *summary{nullptr};  // between the usage line and the options
};

// Reads argv (argv[0] the program) through the table, in order, each option through its
// setter, then the implications; the words that are no options go to `rest`.
Status parse_command_line(const OptionTable &t, const CommandLineText &text, int argc, char **argv,
                          std::vector<std::string> &rest);

// The --help text: every entry of the table, with its default.
std::string command_line_help(const OptionTable &t, const CommandLineText &text);

// How a configuration file is read: as the command line reads it, or as the service does
// ([milter] too, over the rest); what its [milter] group holds, for --print-config.
struct ConfigRead {
    bool service{false};                    // in: read and apply [milter]
    std::vector<std::string> service_lines; // out: "key=value" per key of [milter], as written, files in order
    std::string policy;                     // in: with service, a [policy:NAME] group to read over [milter]
    std::vector<std::string> policies;      // out: the [policy:NAME] groups, files and groups in order, each once
    std::vector<std::string> policy_places; // out: where each is first defined ("FILE:LINE"), as policies
    std::vector<std::string> problems;      // out: every problem of every file read, one line each
    std::map<std::string, std::string> origins; // out: long option name -> "FILE:LINE" that set it last
};

// Reads one configuration file through the table. A key is an entry's long option name,
// in [mimeuri] or in the entry's own group, or the entry's own key there. Unknown groups
// and keys, values that do not convert, and one option set twice are errors (Code::Config)
// that name the file, the line (else the group) and the key. The reading goes on past each
// (`postfix check`, `opendkim -n`): a line GKeyFile cannot read is one problem and read as
// a comment, a key that does not take is one and left unset; the Status is the first, and
// read->problems gets them all. For the service (read->service), a [policy:NAME] defined
// twice, in this file or an earlier one, is a problem naming both places. [milter] (kServiceGroup) is
// read last and only when read->service: each of its keys may set again an option the file
// set elsewhere (it wins), and its implications are its own (--mid-url there implies
// --mid=repair even when [references] sets mid); its lines are collected either way.
Status load_config_file(const OptionTable &t, const std::string &path, ConfigRead *read = nullptr);

// "FILE:LINE" of `group`'s header, or of `key` in it, in the configuration file `path`;
// "FILE" when it is not found (messages about a file read with GKeyFile alone).
std::string config_place(const std::string &path, const std::string &group, const std::string &key = {});

// The settings in effect as a configuration file (--print-config): every entry with a
// group, under its long name, in its own group; `header` (comment lines) first. Empty
// texts, paths and lists are written commented out: not set.
// origins: where each setting came from (ConfigRead::origins), said in a comment above it.
std::string config_text(const OptionTable &t, const std::string &header,
                        const std::map<std::string, std::string> *origins = nullptr);

// A bash completion script for the table's long options and their values, and the
// subcommands at the first word.
std::string bash_completion(const OptionTable &t, const std::vector<std::string> &subcommands);

} // namespace mimeuri
