// `mimeuri archive DIR INPUT...`: a web archive that is added to as mail arrives
// (docs/archives.md). The steps, a file each:
//   archive_cmd.cc  the command line, the lock, the order of the steps
//   intake.cc       the inputs read (mboxes, Maildirs, message files), messages already
//                   there left out, addresses given, pages planned into the stage, and the
//                   one transaction that adds them (or removes messages: --remove)
//   finish.cc       the journal completed: pages moved into place, then what depends on
//                   them (navigation, threads, months, index, feed) written again
#pragma once

#include "files.hh"
#include "state.hh"

#include <string>
#include <vector>

namespace mimeuri::archive {

inline constexpr const char *kStateDir = ".mimeuri";
inline constexpr const char *kStage = ".mimeuri/stage";
// The top folder's temporary files, emptied at each run's start (Folder::use_scratch).
inline constexpr const char *kScratch = ".mimeuri/tmp";

struct Settings {
    std::size_t feed_size{20};
    std::size_t newest_threads{30};
    std::size_t batch{1000}; // messages a transaction (--batch)
    bool quiet{false};
};

struct Added {
    std::size_t read{0}, added{0}, already{0}, failed{0};
};

// Reads the inputs, plans the new messages' pages into the stage and records them (with the
// journal's entries), a transaction for each batch of at most batch_size messages.
Result<Added> intake(const Folder &top, State &st, const std::vector<std::string> &inputs, std::size_t batch_size);
// Removes every message with this Message-ID (one transaction; the files by finish()).
Result<std::size_t> remove_id(State &st, const std::string &message_id);
// Completes whatever the journal holds.
Status finish(const Folder &top, State &st, const Settings &s);

int run_archive_command(int argc, char **argv);

} // namespace mimeuri::archive

namespace mimeuri {
using archive::run_archive_command;
}
