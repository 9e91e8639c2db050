// Run options: built from the configuration file (GKeyFile) and then the command line
// (GOption), the command line winning.
#pragma once

#include "external_body.hh"
#include "labels.hh"
#include "references.hh"
#include "mbox.hh"
#include "message.hh"
#include "result.hh"
#include "signatures.hh"

#include <cstddef>
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
    bool check{false};
    bool strict{false};
    OnError on_error{OnError::Pass};
    Limits limits;
    std::size_t spool_threshold{8u << 20};
    std::vector<std::string> passes{"all"}; // pass names, "all" or "none"
    bool verbose{false};
    int jobs{1};          // messages processed in parallel
    bool syslog{false};   // one line per message to syslog/journald (LOG_MAIL)
    bool progress{false}; // progress line and summary on stderr (set when it is a terminal)
    SignedMode signed_mode{SignedMode::Keep}; // --signed: signed content kept, or rewritten
    LabelOptions labels;
    ExternalBodyOptions external_body;
    RefOptions refs;
};

// Parses argv (after any subcommand). --help and --version print and return an Error
// with Code::Ok.
Result<Options> parse_options(int argc, char **argv);

} // namespace mimeuri
