#include "registry.hh"

#include "external_body.hh"
#include "labels.hh"
#include "references.hh"

#include <algorithm>

namespace mimeuri {

const std::vector<std::string> &pass_names()
{
    static const std::vector<std::string> names{"references", "external-body", "labels"};
    return names;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts)
{
    const auto &known = pass_names();
    bool all = false, none = false;
    for (const auto &n : opts.passes) {
        if (n == "all") all = true;
        else if (n == "none") none = true;
        else if (std::find(known.begin(), known.end(), n) == known.end())
            return Error{Code::Usage, "unknown pass '" + n + "' in --passes"};
    }
    if (none && opts.passes.size() > 1) return Error{Code::Usage, "--passes=none cannot be combined with names"};
    std::vector<std::unique_ptr<Pass>> passes;
    if (none) return passes;
    auto wanted = [&](const std::string &n) {
        return all || std::find(opts.passes.begin(), opts.passes.end(), n) != opts.passes.end();
    };
    if (wanted("references") && (opts.refs.cid != RefOptions::Cid::Off || opts.refs.mid != RefOptions::Mid::Off))
        passes.push_back(std::make_unique<ReferencesPass>(opts.refs));
    if (wanted("external-body") && opts.external_body.mode != ExternalBodyOptions::Mode::Off)
        passes.push_back(std::make_unique<ExternalBodyPass>(opts.external_body));
    if (wanted("labels") && opts.labels.mode != LabelOptions::Mode::Off)
        passes.push_back(std::make_unique<LabelsPass>(opts.labels));
    return passes;
}

} // namespace mimeuri
