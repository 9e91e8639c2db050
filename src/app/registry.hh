// Builds the passes a run uses, in the order they run, and gathers their options.
#pragma once

#include "options.hh"
#include "pass.hh"
#include "pass_options.hh"

#include <memory>
#include <vector>

namespace mimeuri {

// All of them, in the order --help shows them: what parse_options takes besides the core's.
OptionTable pass_option_table(PassOptions &o);

// The names --passes accepts, in running order.
const std::vector<std::string> &pass_names();

// The edits each pass's entries say were made in a message, in running order (the service's
// counters, by pass).
std::vector<std::size_t> pass_edits(const MessageReport &report);

// What is checked once, when the settings are loaded (at a run's start, the service's start
// and each reload): the pass names, and that every --mid-index and --notmuch can be read.
Status check_passes(const Options &opts, const PassOptions &pass_opts);

// The passes for settings check_passes accepted, in running order: made per run, and in
// the service per message (their state, the mid: index, never carries over), without
// opening the indexes again only to check them.
std::vector<std::unique_ptr<Pass>> build_passes(const Options &opts, const PassOptions &pass_opts);

// What each pass writes beside the run with these settings (PassRow::files_beside), in
// running order: the passes that declare any.
std::vector<FilesBeside> files_beside(const PassOptions &pass_opts);

// Both, for callers that hold settings nobody checked (tests, benches).
Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts);

} // namespace mimeuri
