// The ct2uri and uri2ct subcommands.
#pragma once

namespace mimeuri {

// argv[0] is the subcommand name. Prints one result per argument per line (an empty line
// for an argument that cannot be mapped, with its reason on stderr); "-" reads one
// argument per line from stdin. Returns 0, 64 (usage) or 65 (an argument not mappable).
int run_cturi_command(int argc, char **argv);

} // namespace mimeuri
