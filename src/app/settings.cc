// The one configuration loader (settings.hh).
#include "settings.hh"


#include <algorithm>
#include <glib.h>

namespace mimeuri {
namespace {

// Where the files' [policy:NAME] groups are: the groups in order, and the files read.
struct PolicyGroups {
    std::vector<std::string> groups;
    std::vector<std::string> files;
};

// One load: the defaults, the files (with --milter [milter] over them, and `policy`'s group
// over that), the command line.
Result<LoadedSettings> load_one(std::vector<std::string> copy, const std::string &default_config,
                                const std::string &policy, PolicyGroups *found, std::vector<std::string> *problems)
{
    // parse_options takes a C argv; GOption may permute it, so each load reads a copy.
    std::vector<char *> argv;
    for (auto &a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);

    LoadedSettings loaded;
    loaded.settings = std::make_unique<Settings>();
    Settings &s = *loaded.settings;
    CommandLineSetup setup;
    setup.default_config = default_config;
    setup.pass_names = pass_names();
    setup.policy = policy;
    setup.problems = problems;
    auto parsed = parse_options(static_cast<int>(copy.size()), argv.data(), pass_option_table(s.pass_opts), setup);
    if (!parsed) return parsed.error();
    if (parsed->print_and_exit) {
        loaded.print_and_exit = std::move(parsed->print_and_exit);
        return loaded;
    }
    s.opts = std::move(parsed->options);
    if (found) *found = {std::move(parsed->policies), std::move(parsed->config_files)};
    if (Status c = check_passes(s.opts, s.pass_opts); !c) return c.error();
    // The milter changes mail in flight and takes no plan in a run that writes files beside
    // it: it refuses a setting that makes a pass write some, rather than report them
    // written and write nothing. Files that depend on the planning order are planned by one
    // process.
    for (const FilesBeside &f : files_beside(s.pass_opts)) {
        if (!s.opts.milter.empty() && !f.setting.empty())
            return usage_error(f.setting + " writes files beside a run over files; the milter (--milter) cannot");
        if (f.one_process) s.opts.jobs = 1;
    }
    return loaded;
}

// The file that holds `group` (the first of them: a second is the file reader's problem,
// load_config_file).
std::string file_of(const std::vector<std::string> &files, const std::string &group)
{
    std::string holder;
    for (const auto &path : files) {
        GKeyFile *kf = g_key_file_new();
        if (holder.empty() && g_key_file_load_from_file(kf, path.c_str(), G_KEY_FILE_NONE, nullptr) &&
            g_key_file_has_group(kf, group.c_str()))
            holder = path;
        g_key_file_free(kf);
    }
    return holder;
}

// Appends to `to` each line of `lines` it does not hold yet: every policy's load reads the
// same files again, and says their problems again.
void add_new(std::vector<std::string> &to, const std::vector<std::string> &lines)
{
    for (const auto &l : lines)
        if (std::find(to.begin(), to.end(), l) == to.end()) to.push_back(l);
}

} // namespace

const Policy *Settings::policy_for(const Envelope &env) const
{
    for (const Policy &p : policies)
        if (p.match.matches(env)) return &p;
    return nullptr;
}

SettingsLoader::SettingsLoader(int argc, char **argv, std::string default_config)
    : args_(argv, argv + argc), default_config_(std::move(default_config))
{
}

SettingsLoader::SettingsLoader(std::vector<std::string> args, std::string default_config)
    : args_(std::move(args)), default_config_(std::move(default_config))
{
}

Result<LoadedSettings> SettingsLoader::load(std::vector<std::string> *all_problems) const
{
    PolicyGroups found;
    auto loaded = load_one(args_, default_config_, "", &found, all_problems);
    if (!loaded || !loaded->settings || loaded->settings->opts.milter.empty()) return loaded;
    // The service: each policy's settings are the service's with its group read over [milter].
    std::vector<std::string> problems;
    for (const std::string &group : found.groups) {
        const std::string name = group.substr(kPolicyPrefix.size());
        const std::size_t before = problems.size();
        const std::string path = file_of(found.files, group);
        if (name.empty() || name.size() > 63 || name.find_first_of(" \t\"\\") != std::string::npos)
            problems.push_back(config_place(path, group) + ": [" + group +
                               "]: a policy's name is 1 to 63 characters, no blank, quote or backslash");
        PolicyMatch match = read_policy_match(path, group, problems);
        std::vector<std::string> own_problems;
        auto own = load_one(args_, default_config_, group, nullptr, all_problems ? &own_problems : nullptr);
        if (!own) problems.push_back(own.error().message);
        for (const auto &p : own_problems) // what the first load said already is not said again
            if (std::find(all_problems->begin(), all_problems->end(), p) == all_problems->end()) add_new(problems, {p});
        if (problems.size() > before || !own) continue;
        loaded->settings->policies.push_back({name, std::move(match), std::shared_ptr<const Settings>(std::move(own->settings))});
    }
    if (problems.empty()) return loaded;
    if (all_problems) {
        add_new(*all_problems, problems);
        return loaded;
    }
    return Error{Code::Config, problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) +
                                                                            " more: mimeuri --check-config lists them)"
                                                                      : std::string())};
}

} // namespace mimeuri
