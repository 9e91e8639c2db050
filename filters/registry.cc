#include "registry.hh"

#include <algorithm>

namespace mimeuri {

OptionTable pass_option_table(PassOptions &o)
{
    OptionTable t = references_option_table(o.refs);
    t += external_body_option_table(o.external_body);
    t += labels_option_table(o.labels);
    return t;
}

const std::vector<std::string> &pass_names()
{
    static const std::vector<std::string> names{"references", "external-body", "labels"};
    return names;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts)
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
    if (wanted("references") && (pass_opts.refs.cid != RefOptions::Cid::Off || pass_opts.refs.mid != RefOptions::Mid::Off)) {
        // An index that cannot be read stops the run before any message is read.
        if (pass_opts.refs.mid != RefOptions::Mid::Off)
            for (const std::string &path : pass_opts.refs.mid_indexes)
                if (Status s = refs::check_mid_index(path); !s) return Error{s.error().code, "--mid-index: " + s.error().message};
        if (pass_opts.refs.mid != RefOptions::Mid::Off && !pass_opts.refs.notmuch.empty())
            if (Status s = refs::check_notmuch(pass_opts.refs.notmuch); !s) return Error{s.error().code, "--notmuch: " + s.error().message};
        passes.push_back(std::make_unique<ReferencesPass>(pass_opts.refs));
    }
    if (wanted("external-body") && pass_opts.external_body.mode != ExternalBodyOptions::Mode::Off)
        passes.push_back(std::make_unique<ExternalBodyPass>(pass_opts.external_body));
    if (wanted("labels") && pass_opts.labels.mode != LabelOptions::Mode::Off)
        passes.push_back(std::make_unique<LabelsPass>(pass_opts.labels));
    return passes;
}

} // namespace mimeuri
