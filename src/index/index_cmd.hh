// The index subcommand: mimeuri index -o INDEX FILE...
#pragma once

namespace mimeuri {

// argv[0] is "index". Returns 0, 64 (usage), 66 (an input missing), 74 (I/O), 75 (the
// index locked by another writer for too long): a sysexits status.
int run_index_command(int argc, char **argv);

} // namespace mimeuri
