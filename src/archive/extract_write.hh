// --cid=extract, the writing half (RFC 2387 section 6, the receiving agent): the files a
// pass recorded for one message go into a folder of their own, TOP/NUMBER, written when
// the run takes the message (in message order, once), never while it is planned.
#pragma once

#include "result.hh"

#include <cstddef>
#include <string>
#include <vector>

namespace mimeuri {

// A file of a message's folder: its name there and its bytes.
struct OutputFile {
    std::string name;
    std::string bytes;
    template <class Io, class Self> static void fields(Io &io, Self &f) { io(f.name, f.bytes); }
};

// Writes files into top/number (creating top and top/number as needed) and returns that
// folder. Everything is opened relative to directory descriptors and nothing is followed:
// a symbolic link planted at top, at top/number or at a file name inside it is refused, as
// is a top/number that is not a directory or belongs to another user, and no existing
// file is overwritten (O_EXCL). On an error, what this call created is removed again.
// Errors: CantCreate, or TempFail for a full disk or quota, or IoErr for a failed write.
Result<std::string> write_extraction(const std::string &top, std::size_t number, const std::vector<OutputFile> &files);

// The top folder's own files, once the run is done: index.html, the run's messages threaded
// (rows: the records made as each folder was planned, archive_contents.hh), mimeuri.css (the
// pages' stylesheet), and pages.tsv, a line "N<TAB>Message-ID" per page (what `mimeuri index
// --pages=DIR` records, so that a later run's mid: links can name these pages); then each
// page's links to the previous and next message of its thread, written into the room its
// header keeps for them. Opened as above: top must not be a symbolic link, no link is
// followed, and an existing file is never overwritten (CantCreate).
Status write_top_files(const std::string &top, const std::string &rows, const std::string &pages);

} // namespace mimeuri
