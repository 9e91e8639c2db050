// Corpus identity: every file of ../shared/corpus goes through mimeuri with all passes off
// and comes out byte-identical, read from a file and from a pipe.
#include "helpers.hh"

#include <doctest/doctest.h>

#include <fstream>

namespace {

std::vector<std::string> corpus_files()
{
    std::vector<std::string> out;
    for (const auto &row : testing::corpus_index()) out.push_back(row.at(0));
    return out;
}

} // namespace

TEST_CASE("corpus identity, file and pipe")
{
    auto files = corpus_files();
    if (files.empty()) {
        MESSAGE("corpus not found at " MIMEURI_CORPUS "; corpus suite skipped");
        return;
    }
    // One shell loop per input mode keeps this to two process trees per file.
    testing::TempDir d;
    std::size_t same_file = 0, same_pipe = 0;
    std::vector<std::string> failures;
    for (const auto &rel : files) {
        std::string path = std::string(MIMEURI_CORPUS) + "/" + rel;
        std::string bytes = testing::read_file(path);
        for (bool pipe : {false, true}) {
            auto r = pipe ? testing::mimeuri("--passes=none", path, true)
                          : testing::mimeuri("--passes=none " + testing::quote(path));
            bool empty_input = bytes.empty();
            bool status_ok = empty_input ? r.status == 65 : r.status == 0;
            if (r.out == bytes && status_ok) {
                ++(pipe ? same_pipe : same_file);
            } else {
                failures.push_back(rel + (pipe ? " (pipe)" : " (file)") + " status " + std::to_string(r.status) +
                                   " " + r.err);
            }
        }
    }
    for (std::size_t i = 0; i < failures.size() && i < 20; ++i) MESSAGE(failures[i]);
    MESSAGE("corpus identity: file " << same_file << "/" << files.size() << ", pipe " << same_pipe << "/"
                                     << files.size());
    CHECK(same_file == files.size());
    CHECK(same_pipe == files.size());
}
