// Builds the passes a run uses, in the order they run, and gathers their options.
#pragma once

#include "data.hh"
#include "external_body.hh"
#include "labels.hh"
#include "option_table.hh"
#include "options.hh"
#include "pass.hh"
#include "references.hh"

#include <memory>
#include <vector>

namespace mimeuri {

// Every pass's settings; each pass declares its own options (the *_options.cc files).
struct PassOptions {
    RefOptions refs;
    LabelOptions labels;
    ExternalBodyOptions external_body;
    DataOptions data;
};

// One table per pass, writing into the pass's own struct (which must outlive the table).
OptionTable references_option_table(RefOptions &o);
OptionTable external_body_option_table(ExternalBodyOptions &o);
OptionTable labels_option_table(LabelOptions &o);
OptionTable data_option_table(DataOptions &o);

// All of them, in the order --help shows them: what parse_options takes besides the core's.
OptionTable pass_option_table(PassOptions &o);

// The names --passes accepts, in running order.
const std::vector<std::string> &pass_names();

// What is checked once, when the settings are loaded (at a run's start, the service's start
// and each reload): the pass names, and that every --mid-index and --notmuch can be read.
Status check_passes(const Options &opts, const PassOptions &pass_opts);

// The passes for settings check_passes accepted, in running order: made per run, and in
// the service per message (their state, the mid: index, never carries over), without
// opening the indexes again only to check them.
std::vector<std::unique_ptr<Pass>> build_passes(const Options &opts, const PassOptions &pass_opts);

// Both, for callers that hold settings nobody checked (tests, benches).
Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts);

} // namespace mimeuri
