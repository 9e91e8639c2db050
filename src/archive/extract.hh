// --cid=extract above the passes (issue 50): the pages the references pass is given
// (refs::Pages, filters/ref_pages.hh: where each message's folder is, the files of the pages
// planned so far, a message's folder planned) and what the run does with a folder when it
// takes the message's plan (a TakeHook, src/mime/engine.hh: the folder written; at the run's
// end the top's index.html, pages.tsv and the pages' thread links). Nothing of it is in the
// run or the core: a plan carries its folder as opaque bytes (Plan::at_take).
#pragma once

#include "engine.hh"
#include "extract_write.hh"
#include "ref_pages.hh"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mimeuri::archive {

// One message's folder as its plan carries it (Plan::at_take), by this field list.
struct FolderFiles {
    std::string top;               // the top extract folder
    std::vector<OutputFile> files; // the message's own folder's files
    std::size_t number{0};         // that folder's number under top
    std::string row;               // the message's row in top's index.html (archive_record)
    template <class Io, class Self> static void fields(Io &io, Self &x) { io(x.top, x.files, x.number, x.row); }
};
// A plan's at_take bytes read back; throws std::exception on bytes it cannot read.
FolderFiles folder_of(const std::string &at_take);

// --cid=extract's pages for the references pass (RefOptions::pages): each message with a
// page in folder N, N its number in the run (its number in its input, after the messages of
// the inputs before it): a function of where the message is, never of when it was planned or
// taken, so a page can name another before that one is written. The run plans extract
// messages in order in one process (PassRow::files_beside's one_process: --jobs=1), so the
// pages also know the files of each folder planned so far, for mid:msg/cid links and a
// reply's images.
std::unique_ptr<refs::Pages> extract_pages(const std::string &dir, bool allow_remote_images);

// What the run does with the folders when it takes their plans (run()'s take_hook): each
// written once, in message order (write_extraction); at the run's end the top folder's own
// files (write_top_files). A folder that cannot be written fails its message: the
// references it claimed are not extracted after all, and the error says why.
class ExtractFiles final : public TakeHook {
public:
    Status take(Plan &plan) override;
    Status finish() override;

private:
    std::size_t folders_{0}; // folders numbered as taken, for a plan that carries no number
    std::string top_;        // the top folder, the rows of its index.html, the lines of
    std::string rows_;       // its pages.tsv
    std::string pages_;
};

} // namespace mimeuri::archive
