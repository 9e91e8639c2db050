// Maildir file names (issue 12): a rewritten message keeps its unique name and flags, with
// the S= (size) and W= (size with CRLF line ends) fields Dovecot trusts made right, and is
// found again when an IMAP server renamed it (flags changed, new/ -> cur/) meanwhile.
#pragma once

#include "result.hh"

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace mimeuri::maildir {

// Whether path is a Maildir: a folder with cur/ or new/.
bool is_maildir(const std::string &path);

// The message files of the Maildir dir, sorted: the regular files of cur/ and new/ whose
// names do not start with "." (symbolic links followed).
std::vector<std::string> message_files(const std::string &dir);

// The unique part of a Maildir file name: what comes before the first ',' (fields such as
// S= and W=, Maildir++) and ':' (the info, ":2,FLAGS").
std::string_view unique_part(std::string_view name);

// The file now holding inode (dev, ino), looked for in cur/ and new/ of the Maildir `path`
// is in, under the same unique part (a rename keeps both); empty when there is none.
std::string locate(const std::string &path, dev_t dev, ino_t ino);

// The file of the Maildir `path` is in that now has path's unique part, in cur/ or new/: the
// same message, renamed by an IMAP server (flags changed, new/ -> cur/) since path was
// listed. Empty when no file has it (expunged), or more than one does.
std::string find_renamed(const std::string &path);

// path with the S= and W= fields of its name, where it has them, set to size and vsize.
std::string with_sizes(const std::string &path, std::uint64_t size, std::uint64_t vsize);

// A file's size, and its size with every bare LF counted as CRLF (Dovecot's W=).
struct Sizes {
    std::uint64_t size{0};
    std::uint64_t vsize{0};
};
Result<Sizes> sizes_of(const std::string &path);

} // namespace mimeuri::maildir
