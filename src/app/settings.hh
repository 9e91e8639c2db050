// NAME
//   settings: the one configuration loader of every entry point.
// SYNOPSIS
//   SettingsLoader loader(argc, argv, MIMEURI_SYSCONFDIR "/mimeuri.conf");
//   auto loaded = loader.load();       // at a run's start, the service's start, each SIGHUP
// DESCRIPTION
//   The defaults, then the configuration files (--config FILE..., else the default file when
//   it exists, unless --no-config), then the command line, which wins; the core's options and
//   every pass's, read through one option table; then what is checked once (the pass names,
//   that each --mid-index and --notmuch can be read). The command line, the service at its
//   start and the service on SIGHUP all call load() on the same loader, so they read the same
//   files the same way, and --print-config shows what each of them runs with.
#pragma once

#include "milter_policy.hh"
#include "options.hh"
#include "registry.hh"
#include "result.hh"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

struct Settings;

// A [policy:NAME] group (milter_policy.hh): what it matches, and the settings it chooses
// (the service's with the group's keys over [milter]).
struct Policy {
    std::string name;
    PolicyMatch match;
    std::shared_ptr<const Settings> settings;
};

struct Settings {
    Options opts;
    PassOptions pass_opts; // every pass's settings, bound to the option table while loading
    std::vector<Policy> policies; // the service's, in file order (none for a run)

    // The first policy that matches the envelope, or nullptr: the settings themselves.
    const Policy *policy_for(const Envelope &env) const;
};

// A load's result: settings to run with, or a text to print on standard output before
// exiting 0 (--help, --version, --print-config, --bash-completion).
struct LoadedSettings {
    std::unique_ptr<Settings> settings;
    std::optional<std::string> print_and_exit;
};

class SettingsLoader {
public:
    // argv as main received it (argv[0] the program); default_config "" for none.
    SettingsLoader(int argc, char **argv, std::string default_config);
    explicit SettingsLoader(std::vector<std::string> args, std::string default_config = {});

    // Reads everything again: the files as they are now, then the command line kept; with
    // --milter, each [policy:NAME] group as settings of its own.
    // Errors: Code::Usage for the command line, Code::Config for a file, the pass
    // checks' own codes (an unreadable --mid-index). With `problems` (--check-config), every
    // problem of every file and every policy is one line there, and the load goes on past
    // each; without it the first is the error.
    Result<LoadedSettings> load(std::vector<std::string> *problems = nullptr) const;

    const std::vector<std::string> &args() const { return args_; }

private:
    std::vector<std::string> args_;
    std::string default_config_;
};

} // namespace mimeuri
