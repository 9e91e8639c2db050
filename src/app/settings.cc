// The one configuration loader (settings.hh).
#include "settings.hh"

#include "references.hh"

namespace mimeuri {

SettingsLoader::SettingsLoader(int argc, char **argv, std::string default_config)
    : args_(argv, argv + argc), default_config_(std::move(default_config))
{
}

SettingsLoader::SettingsLoader(std::vector<std::string> args, std::string default_config)
    : args_(std::move(args)), default_config_(std::move(default_config))
{
}

Result<LoadedSettings> SettingsLoader::load() const
{
    // parse_options takes a C argv; GOption may permute it, so each load reads a copy.
    std::vector<std::string> copy = args_;
    std::vector<char *> argv;
    for (auto &a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);

    LoadedSettings loaded;
    loaded.settings = std::make_unique<Settings>();
    Settings &s = *loaded.settings;
    CommandLineSetup setup;
    setup.default_config = default_config_;
    setup.pass_names = pass_names();
    auto parsed = parse_options(static_cast<int>(copy.size()), argv.data(), pass_option_table(s.pass_opts), setup);
    if (!parsed) return parsed.error();
    if (parsed->print_and_exit) {
        loaded.print_and_exit = std::move(parsed->print_and_exit);
        return loaded;
    }
    s.opts = std::move(parsed->options);
    if (Status c = check_passes(s.opts, s.pass_opts); !c) return c.error();
    // The milter changes mail in flight and has no run whose end writes an archive's index:
    // it refuses --cid=extract rather than report "extracted" and write nothing.
    if (!s.opts.milter.empty() && s.pass_opts.of<RefOptions>().cid == RefOptions::Cid::Extract)
        return usage_error("--cid=extract writes an archive from a run over files; the milter (--milter) cannot");
    return loaded;
}

} // namespace mimeuri
