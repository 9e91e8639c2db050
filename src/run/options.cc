// The core's options (input, output, limits, error policy, workers) and parse_options,
// which reads the configuration files and then the command line through the core's
// table and the passes'.
#include "options.hh"

#include "deadline.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <optional>
#include <thread>

#ifndef MIMEURI_VERSION
#define MIMEURI_VERSION "0"
#endif
#ifndef MIMEURI_GUMBO_VERSION
#define MIMEURI_GUMBO_VERSION "unknown"
#endif

namespace mimeuri {

namespace {

// What --passes takes: the registry's pass names, all and none (nothing checked without
// the names).
std::vector<std::string> passes_taken(const std::vector<std::string> &names)
{
    if (names.empty()) return {};
    std::vector<std::string> words = names;
    words.insert(words.end(), {"all", "none"});
    return words;
}

// The configuration files named on the command line (--config), read before it so that
// the command line wins; else the default one when it exists, unless --no-config.
std::vector<std::string> config_files(int argc, char **argv, const std::string &default_config)
{
    std::vector<std::string> paths;
    bool none = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") break;
        if (a == "--no-config") none = true;
        else if (a.rfind("--config=", 0) == 0) paths.push_back(a.substr(9));
        else if (a == "--config" && i + 1 < argc) paths.push_back(argv[++i]);
    }
    if (paths.empty() && !none && !default_config.empty() && g_file_test(default_config.c_str(), G_FILE_TEST_EXISTS))
        paths.push_back(default_config);
    // Drop-in files (issue 54 item 7, Debian's convention for settings that admins and other
    // packages both give): FILE.d/*.conf beside each file, in name order (bytes, as ls in the
    // C locale), after it; a later file's setting wins, as the command line's wins over all.
    std::vector<std::string> all;
    for (const auto &p : paths) {
        all.push_back(p);
        std::vector<std::string> drop_ins;
        if (GDir *dir = g_dir_open((p + ".d").c_str(), 0, nullptr)) {
            while (const char *n = g_dir_read_name(dir)) {
                const std::string name = n, full = p + ".d/" + name;
                if (name[0] != '.' && g_str_has_suffix(n, ".conf") && g_file_test(full.c_str(), G_FILE_TEST_IS_REGULAR))
                    drop_ins.push_back(full);
            }
            g_dir_close(dir);
        }
        std::sort(drop_ins.begin(), drop_ins.end());
        all.insert(all.end(), drop_ins.begin(), drop_ins.end());
    }
    return all;
}

// Whether the command line starts the service (--milter): the configuration files are
// then read as the service reads them, [milter] over the rest (they are read before the
// command line, hence this look ahead, as config_files' for --config).
bool service_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") break;
        if (a == "--milter" || a.rfind("--milter=", 0) == 0) return true;
    }
    return false;
}

// --max-time and --lock-timeout: the most seconds they take (deadline.hh).
std::string longest_text() { return show_real(kLongestSeconds) + " seconds"; }

std::string version_text()
{
    return "mimeuri " MIMEURI_VERSION "\nGMime " + std::to_string(gmime_major_version) + "." +
           std::to_string(gmime_minor_version) + "." + std::to_string(gmime_micro_version) + ", GLib " +
           std::to_string(glib_major_version) + "." + std::to_string(glib_minor_version) + "." +
           std::to_string(glib_micro_version) + ", gumbo " MIMEURI_GUMBO_VERSION "\n";
}

// The core options' checks across options, once every source is read (OptionTable::checks).
Status check_core_options(Options &o)
{
    if (o.in_place && !o.output.empty()) return usage_error("--in-place and --output exclude each other");
    if (o.in_place && o.inputs.empty()) return usage_error("--in-place needs FILE arguments");
    for (const auto &in : o.inputs)
        if (o.in_place && in == "-") return usage_error("--in-place cannot rewrite standard input");
    if (!o.changed_list.empty() && !o.in_place) return usage_error("--changed-list needs --in-place");
    if (!o.milter.empty() && (o.in_place || !o.output.empty() || o.check || !o.inputs.empty()))
        return usage_error("--milter takes its messages from the MTA: no FILE, -o, --in-place or --check");
    if (!o.user.empty() && o.milter.empty()) return usage_error("--user needs --milter");
    if (!o.pidfile.empty() && o.milter.empty()) return usage_error("--pidfile needs --milter");
    if (o.check && (o.in_place || !o.output.empty()))
        return usage_error("--check writes no messages; drop -o/--in-place");
    // "-" is standard output, as for FILE arguments, never a file named "-". Where standard
    // output carries the messages (no --check, -o or --in-place), or the service has none,
    // a report there would be mixed into the mail: refused, naming what to write instead.
    if (o.report_path == "-") {
        if (!o.milter.empty()) return usage_error("--report=-: the service has no standard output; name a file");
        if (!o.check && !o.in_place && o.output.empty())
            return usage_error("--report=-: standard output carries the messages; use --report=/dev/stderr or a file");
        o.report_path = "/dev/stdout";
    }
    // Not given: one message at a time on the command line; the service plans one per
    // CPU and at least two at once (one slow message does not hold up the next).
    if (!o.jobs_given && !o.milter.empty())
        o.jobs = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
    return ok();
}

} // namespace

OptionTable core_option_table(Options &o, const CommandLineSetup &setup)
{
    using K = OptionKind;
    OptionTable t;
    t.options = {
        {.long_name = "output", .short_name = 'o', .kind = K::Path, .default_text = "standard output",
         .help = "Write the result to PATH (atomically: temporary file, fsync, rename)", .arg_name = "PATH",
         .access = bind_text(o.output)},
        {.long_name = "in-place", .short_name = 'i', .kind = K::Flag, .default_text = "off",
         .help = "Rewrite each FILE atomically; files with nothing to change are not touched",
         .access = bind_flag(o.in_place)},
        {.long_name = "force-read-only", .group = "mimeuri", .key = "force-read-only", .kind = K::Flag,
         .default_text = "off: left as they were",
         .help = "With --in-place, also rewrite files whose owner has no write permission (0444)",
         .access = bind_flag(o.force_read_only)},
        {.long_name = "lock-timeout", .group = "mimeuri", .key = "lock-timeout", .kind = K::Double,
         .default_text = "30",
         .help = "With --in-place, seconds to wait for an mbox's locks (FILE.lock and fcntl, as procmail, Postfix "
                 "and Dovecot take them); then exit 75, the file untouched",
         .arg_name = "SECONDS",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (!(v.real >= 0)) return usage_error(v.name + " must not be negative");
                        if (v.real > kLongestSeconds) return usage_error(v.name + " must be at most " + longest_text());
                        o.lock_timeout = v.real;
                        return ok();
                    },
                    [&o] { return show_real(o.lock_timeout); }}},
        {.long_name = "changed-list", .group = "mimeuri", .key = "changed-list", .kind = K::Path,
         .default_text = "none",
         .help = "With --in-place, write the paths rewritten to FILE, one a line (for notmuch reindex, mu index)",
         .arg_name = "FILE", .access = bind_text(o.changed_list)},
        {.long_name = "format", .short_name = 'f', .group = "mimeuri", .key = "format", .kind = K::Choice,
         .default_text = "auto",
         .help = "Input format: auto (mbox when the input starts with a \"From \" line), message or mbox",
         .access = bind_choice(o.format, {{"auto", Format::Auto}, {"message", Format::Message}, {"mbox", Format::Mbox}})},
        {.long_name = "report", .short_name = 'r', .group = "mimeuri", .key = "report", .kind = K::Path,
         .default_text = "no report", .help = "Write one JSON object per message (JSON Lines) to PATH",
         .arg_name = "PATH", .access = bind_text(o.report_path)},
        {.long_name = "report-max", .group = "mimeuri", .key = "report-max", .kind = K::Size,
         .default_text = "0: every entry; the service 500",
         .help = "Most entries of each list (refs, errors, ...) a report line holds; the rest are counted in "
                 "\"omitted\" (0: every entry). The service's lines always hold at most 500",
         .arg_name = "N", .access = bind_size(o.report_max)},
        {.long_name = "check", .short_name = 'c', .kind = K::Flag, .default_text = "off",
         .help = "Write no messages, only the report, to standard output (or to --report)",
         .access = bind_flag(o.check)},
        {.long_name = "on-error", .group = "mimeuri", .key = "on-error", .kind = K::Choice,
         .default_text = "pass",
         .help = "On an internal error: pass (write the message's original bytes) or tempfail (exit 75, write "
                 "nothing for that input)",
         .access = bind_choice(o.on_error, {{"pass", OnError::Pass}, {"tempfail", OnError::TempFail}})},
        {.long_name = "signed", .group = "mimeuri", .key = "signed", .kind = K::Choice,
         .default_text = "keep",
         .help = "Signed content (multipart/signed, S/MIME, multipart/encrypted, and what an intact DKIM or ARC "
                 "body hash covers): keep it unchanged, or rewrite it for a re-signing downstream, the report "
                 "naming every signature broken",
         .access = bind_choice(o.signed_mode, {{"keep", SignedMode::Keep}, {"rewrite", SignedMode::Rewrite}})},
        {.long_name = "strict", .group = "mimeuri", .key = "strict", .kind = K::Flag, .default_text = "off",
         .help = "Exit 65 when a message could not be parsed or was left partly unprocessed",
         .access = bind_flag(o.strict)},
        {.long_name = "passes", .short_name = 'p', .group = "mimeuri", .key = "passes", .kind = K::List,
         .choices = passes_taken(setup.pass_names), .default_text = "all",
         .help = "Comma-separated passes to run" +
                 (setup.pass_names.empty() ? std::string() : " (" + join(setup.pass_names, ", ") + ", in this order)") +
                 ", \"all\" or \"none\"",
         .arg_name = "LIST",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (v.list.empty()) return usage_error(v.name + " needs at least one name (or none)");
                        o.passes = v.list;
                        return ok();
                    },
                    [&o] { return join(o.passes, ","); }}},
        {.long_name = "max-depth", .group = "mimeuri", .key = "max-depth", .kind = K::Int, .default_text = "64",
         .help = "Deepest MIME nesting visited; deeper parts are left untouched and reported", .arg_name = "N",
         .access = {[&o](const OptionValue &v) -> Status {
                        // GMime parses no deeper than 512 levels of message/rfc822 (1024 of
                        // multipart) and silently treats what lies below as content: a deeper
                        // limit would let parts go unvisited and unreported. At 500, the walk's
                        // own limit always binds first.
                        if (v.number < 1 || v.number > kMaxDepth)
                            return usage_error(v.name + " must be between 1 and " + std::to_string(kMaxDepth) +
                                               " (GMime parses no deeper than 512 levels of message/rfc822)");
                        o.limits.max_depth = static_cast<int>(v.number);
                        return ok();
                    },
                    [&o] { return std::to_string(o.limits.max_depth); }}},
        {.long_name = "max-parts", .group = "mimeuri", .key = "max-parts", .kind = K::Size,
         .default_text = "10000",
         .help = "Most MIME entities visited per message; the rest are left untouched and reported", .arg_name = "N",
         .access = bind_size(o.limits.max_parts)},
        {.long_name = "max-header-bytes", .group = "mimeuri", .key = "max-header-bytes", .kind = K::Size,
         .default_text = "1048576",
         .help = "Largest header block; a message with a larger one is passed through and reported",
         .arg_name = "BYTES", .access = bind_size(o.limits.max_header_bytes)},
        {.long_name = "max-header-fields", .group = "mimeuri", .key = "max-header-fields", .kind = K::Size,
         .default_text = "10000",
         .help = "Most header fields in one header block, and 10 times that in a message; a message with more is "
                 "passed through and reported",
         .arg_name = "N",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (v.number < 1) return usage_error(v.name + " must be at least 1");
                        o.limits.max_header_fields = static_cast<std::size_t>(v.number);
                        return ok();
                    },
                    [&o] { return std::to_string(o.limits.max_header_fields); }}},
        {.long_name = "max-time", .group = "mimeuri", .key = "max-time", .kind = K::Double, .default_text = "60",
         .help = "Seconds the passes may spend on one message; past that it is passed through and reported",
         .arg_name = "SECONDS",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (!(v.real > 0)) return usage_error(v.name + " must be positive");
                        if (v.real > kLongestSeconds) return usage_error(v.name + " must be at most " + longest_text());
                        o.limits.max_seconds = v.real;
                        return ok();
                    },
                    [&o] { return show_real(o.limits.max_seconds); }}},
        {.long_name = "spool-threshold", .group = "mimeuri", .key = "spool-threshold", .kind = K::Size,
         .default_text = "1048576",
         .help = "Bytes of piped input held in memory before spooling to a temporary file", .arg_name = "BYTES",
         .access = bind_size(o.spool_threshold)},
        {.long_name = "jobs", .short_name = 'j', .group = "mimeuri", .key = "jobs", .kind = K::Int,
         .default_text = "1; with --milter one per CPU, at least 2",
         .help = "Messages processed in parallel; output keeps input order", .arg_name = "N",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (Status s = bind_int(o.jobs, 1, 256).set(v); !s) return s;
                        o.jobs_given = true;
                        return ok();
                    },
                    [&o] { return std::to_string(o.jobs); }}},
        {.long_name = "syslog", .group = "mimeuri", .key = "syslog", .kind = K::Flag, .default_text = "off",
         .help = "Log one line per message (Message-ID, what changed) to syslog or journald, facility mail",
         .access = bind_flag(o.syslog)},
        // The service's socket and user belong to how it is started (the systemd unit), not
        // to the settings a reload reads again: command line only.
        {.long_name = "milter", .kind = K::String, .default_text = "off",
         .help = "Run as a milter service for Postfix or Sendmail on SOCKET (unix:/path, local:/path, "
                 "inet:PORT@HOST, inet6:PORT@HOST); every other option keeps its meaning, per message",
         .arg_name = "SOCKET", .access = bind_text(o.milter)},
        {.long_name = "user", .kind = K::String, .default_text = "none",
         .help = "With --milter, the user to run as once the socket is open (started as root)",
         .arg_name = "USER", .access = bind_text(o.user)},
        {.long_name = "pidfile", .kind = K::Path, .default_text = "none",
         .help = "With --milter, write the service's process id to FILE (for init systems that want one)",
         .arg_name = "FILE", .access = bind_text(o.pidfile)},
        {.long_name = "milter-timeout", .group = "mimeuri", .key = "milter-timeout", .kind = K::Double,
         .default_text = "360",
         .help = "With --milter, seconds an MTA connection may stay silent before it is closed (libmilter's "
                 "smfi_settimeout; above Postfix's smtpd_timeout of 300, so that a slow SMTP client's session "
                 "keeps its milter)",
         .arg_name = "SECONDS",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (!(v.real >= 1) || v.real > 86400) return usage_error(v.name + " must be between 1 and 86400");
                        o.milter_timeout = v.real;
                        return ok();
                    },
                    [&o] { return show_real(o.milter_timeout); }}},
        {.long_name = "milter-client-connections", .group = "mimeuri", .key = "milter-client-connections",
         .kind = K::Int, .default_text = "256",
         .help = "With --milter on TCP, connections open at once per client address; at the bound the client's "
                 "oldest connection that has sent nothing yet is closed, or the new one when all are in use (0: "
                 "no bound)",
         .arg_name = "N", .access = bind_int(o.milter_client_connections, 0, 65535)},
        {.long_name = "stats", .group = "mimeuri", .key = "stats", .kind = K::Path, .default_text = "none",
         .help = "With --milter, write the service's counters to FILE in Prometheus text format (for "
                 "node_exporter's textfile collector) every 10 seconds and at exit; SIGUSR1 logs them",
         .arg_name = "FILE", .access = bind_text(o.stats_path)},
        {.long_name = "verbose", .short_name = 'v', .group = "mimeuri", .key = "verbose", .kind = K::Flag,
         .default_text = "off",
         .help = "Also log the messages left partly unprocessed, each reference left as it is (with its "
                 "reason) and the summary; with --milter, each worker's end and peak memory",
         .access = bind_flag(o.verbose)},
        // Read before the command line (parse_options), so that the command line wins;
        // here only for --help and so that GOption accepts it.
        {.long_name = "config", .kind = K::Path,
         .default_text = setup.default_config.empty() ? "none" : setup.default_config + " when it exists",
         .help = "Read settings from a key file instead of the default one: keys are the long options' names, in "
                 "[mimeuri] or in a pass's own group; repeatable; FILE.d/*.conf are read after each "
                 "(--print-config shows the settings in effect and where each came from)",
         .arg_name = "FILE", .access = {[](const OptionValue &) { return ok(); }, [] { return std::string(); }}},
    };
    t.checks.push_back([&o] { return check_core_options(o); });
    return t;
}

namespace {

// --print-config: the settings in effect as a configuration file, and the [milter] group as
// the files hold it, marked (in effect above only for the service).
std::string settings_in_effect(const OptionTable &t, const std::vector<std::string> &configs,
                               const CommandLineSetup &setup, bool no_config, const ConfigRead &read)
{
    const bool service = read.service;
    std::string files = configs.empty() ? std::string("no configuration file") : join(configs, ", then ");
    if (configs.empty() && !setup.default_config.empty())
        files += no_config ? " (--no-config)" : " (" + setup.default_config + " does not exist)";
    std::string printed = "# mimeuri " MIMEURI_VERSION ": the settings in effect: the defaults, then " + files +
                          (service ? " ([milter] over the rest: this is the service)" : "") +
                          ", then the command line.\n# Keys are the long options' names; an unset one is commented "
                          "out.\n" +
                          config_text(t, "", &read.origins);
    printed += "\n[" + kServiceGroup + "]\n# The service's own settings (mimeuri --milter reads them over [mimeuri]; " +
               (service ? std::string("applied above") : std::string("a command-line run does not read them")) + ")" +
               (read.service_lines.empty() ? std::string(": none set") : std::string()) + "\n";
    for (const auto &line : read.service_lines) printed += line + "\n";
    if (!read.policies.empty()) // as written in the files; mimeuri.conf(5)
        printed += "\n# The service's policies, first match wins (" +
                   (service ? std::string("each message's settings by its envelope")
                            : std::string("a command-line run does not read them")) +
                   "): [" + join(read.policies, "], [") + "]\n";
    return printed;
}

} // namespace

Result<ParsedOptions> parse_options(int argc, char **argv, OptionTable extra, const CommandLineSetup &setup)
{
    ParsedOptions r;
    bool help = false, version = false, print_config = false, completion = false, no_config = false,
         check_config = false;
    OptionTable t;
    t += core_option_table(r.options, setup);
    t += std::move(extra);
    t += OptionTable{{
        {.long_name = "no-config", .kind = OptionKind::Flag,
         .help = "Read no default configuration file (only those --config names)", .access = bind_flag(no_config)},
        {.long_name = "print-config", .kind = OptionKind::Flag,
         .help = "Print the settings in effect as a configuration file and exit", .access = bind_flag(print_config)},
        // Acted on by the entry point (src/app/config_check.hh), which loads these settings.
        {.long_name = "check-config", .kind = OptionKind::Flag,
         .help = "Check the settings as the run (with --milter, the service) would load them: every file, the "
                 "socket, the user, the files to write, the indexes; one line per problem and exit 78, or exit 0",
         .access = bind_flag(check_config)},
        {.long_name = "bash-completion", .kind = OptionKind::Flag, .help = "Print a bash completion script and exit",
         .access = bind_flag(completion), .hidden = true},
        {.long_name = "version", .short_name = 'V', .kind = OptionKind::Flag,
         .help = "Print the version (and those of GMime, GLib and gumbo) and exit", .access = bind_flag(version)},
        {.long_name = "help", .short_name = 'h', .kind = OptionKind::Flag, .help = "Print this help and exit",
         .access = bind_flag(help)},
    }, {}};
    const std::string description =
        "With no FILE, or when FILE is -, read standard input.\n"
        "Subcommands: mimeuri ct2uri [--label-format=urc] ARG..., mimeuri uri2ct ARG...\n"
        "  map Content-Types and URIs (draft-eastlake-cturi); - reads one per line from stdin.\n"
        "  mimeuri index -o INDEX FILE... writes the Message-ID index --mid-index reads.\n"
        "Configuration: " +
        (setup.default_config.empty() ? std::string("--config=FILE") : setup.default_config + " when it exists") +
        "; keys are the long options' names (see mimeuri.conf(5)).\n"
        "Exit status (sysexits.h): 0 ok, 64 usage, 65 data error (--strict, or empty input),\n"
        "66 missing input, 70 internal error, 73 cannot create output, 74 I/O error,\n"
        "75 temporary failure (--on-error=tempfail, full disk), 78 configuration error.";
    const CommandLineText text{"[FILE...]", description.c_str(),
                               "Resolves cid: and mid: references, rewrites message/external-body URLs and labels "
                               "MIME parts, losslessly."};

    // The configuration files are read first, so that the command line overrides them. A
    // bad one is said once the command line is read: --help and --version still work.
    const std::vector<std::string> configs = config_files(argc, argv, setup.default_config);
    std::optional<Error> config_error;
    ConfigRead read;
    read.service = service_requested(argc, argv);
    read.policy = setup.policy;
    for (const auto &path : configs) // each file, past a bad one: --check-config lists them all
        if (auto s = load_config_file(t, path, &read); !s && !config_error) config_error = s.error();
    if (setup.problems) {
        setup.problems->insert(setup.problems->end(), read.problems.begin(), read.problems.end());
        config_error.reset();
    } else if (config_error && read.problems.size() > 1) {
        config_error->message += " (and " + std::to_string(read.problems.size() - 1) +
                                 " more: mimeuri --check-config lists them)";
    }
    if (auto s = parse_command_line(t, text, argc, argv, r.options.inputs); !s)
        return config_error ? *config_error : s.error();
    if (help) {
        r.print_and_exit = command_line_help(t, text);
        return r;
    }
    if (version) {
        r.print_and_exit = version_text();
        return r;
    }
    if (completion) {
        r.print_and_exit = bash_completion(t, {"ct2uri", "uri2ct", "index"});
        return r;
    }
    if (config_error) return *config_error;
    for (const auto &check : t.checks)
        if (auto s = check(); !s) {
            if (!setup.problems) return s.error();
            setup.problems->push_back(s.error().message);
        }
    for (int i = 1; i < argc; ++i) { // what the command line gives is its own, whatever a file said
        const std::string a = argv[i];
        if (a == "--") break;
        if (a.rfind("--", 0) == 0) read.origins.erase(a.substr(2, a.find('=') - 2));
        else if (a.size() > 1 && a[0] == '-')
            for (const auto &s : t.options)
                if (s.short_name == a[1]) read.origins.erase(s.long_name);
    }
    if (print_config) r.print_and_exit = settings_in_effect(t, configs, setup, no_config, read);
    r.config_files = configs;
    r.policies = std::move(read.policies);
    return r;
}

} // namespace mimeuri
