// Builds the passes a run uses, in the order they run.
#pragma once

#include "options.hh"
#include "pass.hh"

#include <memory>
#include <vector>

namespace mimeuri {

// The names --passes accepts, in running order.
const std::vector<std::string> &pass_names();

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts);

} // namespace mimeuri
