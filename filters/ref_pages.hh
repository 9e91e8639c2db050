// The reference pass and --cid=extract's pages: what the pass asks of them, as an interface it
// is given (RefOptions::pages), made above the passes (src/archive/extract.hh), so that the
// pass plans no page, names no file and knows no folder of its own: it asks where a message's
// page and files are (for its mid: links and a reply's images), and hands each message's
// references to extract to the pages, which plan the message's folder (the files the run
// writes when it takes the plan: MessageContext::at_take).
#pragma once

#include "message.hh"
#include "ref_index.hh"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri::refs {

struct PendingExtract; // ref_part.hh

class Pages {
public:
    virtual ~Pages() = default;
    // A message of the run met (indexed), in run order.
    virtual void saw(std::size_t input_no, std::size_t number) = 0;
    // The folder of message `number` (1-based) of input input_no.
    virtual std::size_t folder(std::size_t input_no, std::size_t number) const = 0;
    // The file of part `section` of the page in folder; nullopt when not known.
    virtual std::optional<std::string> file(std::size_t folder, const std::string &section) const = 0;
    // The message's folder planned: its pages (page_node: the part that is its page, -1 for
    // none) and the files the extracts name, left for the run's take (ctx.at_take()).
    virtual void plan(MessageContext &ctx, const MessageIndex &ix, const std::vector<PendingExtract> &extracts,
                      int page_node, std::size_t folder) = 0;
};

// How the pass gets its pages: for the extract folder dir (as given), and whether the pages
// may load remote images (--extract-remote-images).
using MakePages = std::unique_ptr<Pages> (*)(const std::string &dir, bool allow_remote_images);

// The relative URL from a page in folder `from_dir` to the file `to` (both absolute paths,
// compared as written), each segment %-encoded.
std::string relative_url(const std::string &from_dir, const std::string &to);

} // namespace mimeuri::refs
