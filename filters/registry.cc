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
    // An index that cannot be read now (missing while a nightly one is renamed into place,
    // a copy cut short, not SQLite, not mimeuri's) is a condition of the moment, not of the
    // configuration: the command line and the service (at its start and on SIGHUP) say so in
    // one line and go on. Each message whose mid: references need it then fails as
    // --on-error says (passed as it came, or 75 / 451), and the next such message opens it
    // again: never a usage error (64) or a missing input (66) that a pipe transport bounces.
    // A notmuch this mimeuri cannot load at all (built without it) stays an error.
    const char *then = "; messages whose mid: references need it are handled as --on-error says until it can be read";
    for (const std::string &path : pass_opts.refs.mid_indexes)
        if (Status s = refs::check_mid_index(path); !s) g_warning("--mid-index: %s%s", s.error().message.c_str(), then);
    if (!pass_opts.refs.notmuch.empty())
        if (Status s = refs::check_notmuch(pass_opts.refs.notmuch); !s) {
            if (!refs::notmuch_available() || s.error().code != Code::NoInput)
                return Error{s.error().code, "--notmuch: " + s.error().message};
            g_warning("--notmuch: %s%s", s.error().message.c_str(), then);
        }
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
    return passes;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts)
{
    if (Status s = check_passes(opts, pass_opts); !s) return s.error();
    return build_passes(opts, pass_opts);
}

} // namespace mimeuri
