// `mimeuri archive`: the pages of the messages an add brings, made by the extraction the
// filter's --cid=extract makes (the references pass, its sanitiser and page writer, planned
// by the engine in order), one folder per message named by its permanent address.
//
// --cid=extract numbers its folders by a message's place in the run, and links a mid: it
// resolves in the run to "../N/...". Here the batch is planned as one run (so those links
// work between the messages added together) and each such link is then given the address of
// the message it names. Pages are never planned again: the messages a new one answers or
// names by mid: are read back from the state and indexed beside the batch (intake.cc), so
// that a reply's images and a mid: link go to a message an earlier night added.
#pragma once

#include "engine.hh"
#include "extract_write.hh"
#include "files.hh"

#include <string>
#include <vector>

namespace mimeuri::archive {

struct PlannedPage {
    std::vector<OutputFile> files; // the folder's files, links already given addresses
    std::string row;               // archive_record's line (archive_contents.hh)
    std::string message_id;        // as the engine read it
    std::string cause;             // why it has no page (the message is not added)
};

// The pages of messages (their bytes, in order), whose folders will be addrs. `known` are
// messages an earlier add wrote (the ones the batch answers, with their addresses): indexed
// with the batch, never planned, so that a reply's cid: found in the message it answers
// (`"matched":"thread"`) links that message's file where an earlier run wrote it.
struct KnownMessage {
    std::string bytes, addr;
};
std::vector<PlannedPage> plan_pages(const std::vector<std::string_view> &messages, const std::vector<std::string> &addrs,
                                    const std::string &stage, const std::vector<KnownMessage> &known = {});

// In a page's HTML, each "../N/" that starts a URL (after '"', '\'' or '(') and names the
// run's message N (1-based: the batch, then the known messages) becomes "../ADDR/".
std::string give_addresses(std::string_view html, const std::vector<std::string> &addrs);

} // namespace mimeuri::archive
