#include "registry.hh"

#include <algorithm>

namespace mimeuri {

OptionTable pass_option_table(PassOptions &o)
{
    OptionTable t = references_option_table(o.refs);
    t += external_body_option_table(o.external_body);
    t += labels_option_table(o.labels);
    t += data_option_table(o.data);
    return t;
}

const std::vector<std::string> &pass_names()
{
    static const std::vector<std::string> names{"references", "external-body", "labels", "data"};
    return names;
}

namespace {

// Whether --passes names the pass `name` (or all of them).
bool wanted(const Options &opts, const std::string &name)
{
    for (const auto &n : opts.passes)
        if (n == "all" || n == name) return true;
    return false;
}

bool references_run(const Options &opts, const PassOptions &p)
{
    return wanted(opts, "references") && (p.refs.cid != RefOptions::Cid::Off || p.refs.mid != RefOptions::Mid::Off);
}

} // namespace

Status check_passes(const Options &opts, const PassOptions &pass_opts)
{
    const auto &known = pass_names();
    bool none = false;
    for (const auto &n : opts.passes) {
        if (n == "none") none = true;
        else if (n != "all" && std::find(known.begin(), known.end(), n) == known.end())
            return Error{Code::Usage, "unknown pass '" + n + "' in --passes"};
    }
    if (none && opts.passes.size() > 1) return Error{Code::Usage, "--passes=none cannot be combined with names"};
    if (none || !references_run(opts, pass_opts) || pass_opts.refs.mid == RefOptions::Mid::Off) return ok();
    // An index that cannot be read stops the run (or the service's start, or its reload)
    // before any message is read.
    for (const std::string &path : pass_opts.refs.mid_indexes)
        if (Status s = refs::check_mid_index(path); !s) return Error{s.error().code, "--mid-index: " + s.error().message};
    if (!pass_opts.refs.notmuch.empty())
        if (Status s = refs::check_notmuch(pass_opts.refs.notmuch); !s)
            return Error{s.error().code, "--notmuch: " + s.error().message};
    return ok();
}

std::vector<std::unique_ptr<Pass>> build_passes(const Options &opts, const PassOptions &pass_opts)
{
    std::vector<std::unique_ptr<Pass>> passes;
    if (references_run(opts, pass_opts)) passes.push_back(std::make_unique<ReferencesPass>(pass_opts.refs));
    if (wanted(opts, "external-body") && pass_opts.external_body.mode != ExternalBodyOptions::Mode::Off)
        passes.push_back(std::make_unique<ExternalBodyPass>(pass_opts.external_body));
    if (wanted(opts, "labels") && pass_opts.labels.mode != LabelOptions::Mode::Off)
        passes.push_back(std::make_unique<LabelsPass>(pass_opts.labels));
    // Last: it leaves a part another pass rewrote (edits are splices on the input).
    if (wanted(opts, "data") && pass_opts.data.mode != DataOptions::Mode::Off)
        passes.push_back(std::make_unique<DataPass>(pass_opts.data));
    return passes;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts)
{
    if (Status s = check_passes(opts, pass_opts); !s) return s.error();
    return build_passes(opts, pass_opts);
}

} // namespace mimeuri
