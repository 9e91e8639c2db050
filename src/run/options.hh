// Run options: built from the configuration file (GKeyFile) and then the command line
// (GOption), the command line winning, both read through one option table
// (option_table.hh). The core declares its own options here; each pass declares its own
// in filters/ and hands its table to parse_options.
#pragma once

#include "mbox.hh"
#include "message.hh"
#include "option_table.hh"
#include "result.hh"
#include "signatures.hh"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

enum class OnError { Pass, TempFail };

struct Options {
    std::vector<std::string> inputs; // empty: standard input
    Format format{Format::Auto};
    std::string output;              // -o PATH; empty: standard output
    bool in_place{false};
    bool force_read_only{false};     // --in-place also rewrites files with no owner write bit
    double lock_timeout{30};         // --lock-timeout: seconds to wait for an mbox's locks
    std::string changed_list;        // --changed-list=FILE: the paths rewritten, one a line
    std::string report_path;         // --report=PATH
    std::size_t report_max{0};       // --report-max: entries of each list a run's report line holds; 0: all
    bool check{false};
    bool strict{false};
    OnError on_error{OnError::Pass};
    Limits limits;
    std::size_t spool_threshold{1u << 20};
    std::vector<std::string> passes{"all"}; // pass names, "all" or "none"
    bool verbose{false};
    int jobs{1};          // messages processed in parallel
    bool jobs_given{false}; // --jobs (or jobs=) was set; if not, the service plans one per CPU
    bool syslog{false};   // one line per message to syslog/journald (LOG_MAIL)
    bool progress{false}; // progress line and summary on stderr (set when it is a terminal)
    SignedMode signed_mode{SignedMode::Keep}; // --signed: signed content kept, or rewritten
    std::string milter;   // --milter=SOCKET: run as a milter service on SOCKET
    std::string user;     // --user: with --milter, the user to run as once the socket is open
    std::string pidfile;  // --pidfile: with --milter, where to write the service's pid
    double milter_timeout{360};   // --milter-timeout: seconds an MTA connection may stay silent
    int milter_client_connections{256}; // --milter-client-connections: per client address (TCP); 0: no bound
    std::string stats_path; // --stats: with --milter, where the service writes its counters (Prometheus text)
};

// What the command line takes from outside the core.
struct CommandLineSetup {
    std::string default_config;          // read when it exists, unless --config or --no-config; "": none
    std::vector<std::string> pass_names; // what --passes takes besides all and none (the registry's)
    std::string policy; // with --milter: a [policy:NAME] group read over [milter] (ConfigRead::policy)
    // --check-config: every problem of every configuration file and of the rules between
    // options is appended here, one line each, and the parse goes on with what did take.
    std::vector<std::string> *problems{nullptr};
};

// The core's options, writing into `o` (which must outlive the table).
OptionTable core_option_table(Options &o, const CommandLineSetup &setup = {});

// What parse_options found: either options to run with, or a text to print on standard
// output before exiting with status 0 (--help, --version, --print-config).
struct ParsedOptions {
    Options options;
    std::optional<std::string> print_and_exit;
    std::vector<std::string> config_files; // the configuration files read, in order
    std::vector<std::string> policies;     // their [policy:NAME] groups, in order (ConfigRead::policies)
};

// Parses argv (after any subcommand) with the core's table and `extra` (the passes'
// tables, bound to the caller's structs): the configuration files first (--config, else
// setup.default_config when it exists), then the command line, which wins. Errors are
// usage errors (Code::Usage), or Code::Config for a configuration file.
Result<ParsedOptions> parse_options(int argc, char **argv, OptionTable extra = {}, const CommandLineSetup &setup = {});

} // namespace mimeuri
