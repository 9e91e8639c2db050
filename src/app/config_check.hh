// NAME
//   config_check: --check-config, what `postfix check`, `opendkim -n` and `named-checkconf`
//   are to their services.
// SYNOPSIS
//   mimeuri [--milter=SOCKET --user=USER --pidfile=FILE] [--config=FILE] --check-config
// DESCRIPTION
//   The settings are loaded as the run (or, with --milter, the service: [milter] applied)
//   would load them: every configuration file, the command line, the passes' checks (an
//   --mid-index or --notmuch that opens). The load goes on past each problem of a file (a
//   line that does not read, an unknown key, a value out of range, a bad policy, a policy
//   defined twice), each one line naming its file and line, as `postfix check` does. Then what can be
//   known before a start: the socket's syntax and folder, the user and its group, the files
//   the run or the service would write (--report, --pidfile, --extract-dir) as the user that
//   writes them. Every problem is one line; none: the run or the service would start.
#pragma once

#include "settings.hh"

#include <string>
#include <vector>

namespace mimeuri {

// The problems of loaded settings, one line each (none: good).
std::vector<std::string> config_problems(const Settings &s);

// --check-config: loads with `loader`, prints one line per problem on standard error
// ("mimeuri: " first) and returns 78 (EX_CONFIG), or prints what would start on standard
// output and returns 0.
int check_config(const SettingsLoader &loader);

// Whether the command line asks for --check-config.
bool wants_check_config(const SettingsLoader &loader);

} // namespace mimeuri
