// The reference pass, --cid=extract, the planning half (RFC 2387 section 6, the receiving
// agent): each HTML part with references to extract becomes a page (index.html for the
// first, part-SECTION.html for the others) whose references name files written beside it,
// one per target part, under safe, unique names. The files are recorded on the message
// (MessageContext::add_output_file); the run writes them when it takes the message
// (src/run/extract.hh).
#pragma once

#include "ref_part.hh"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri::refs {

// The relative URL from a page in folder `from_dir` to the file `to` (both absolute paths,
// compared as written), each segment %-encoded.
std::string relative_url(const std::string &from_dir, const std::string &to);

// A file name that cannot escape its folder: no separators, no "..", no control, format
// or bidirectional characters, no leading dot, at most 100 bytes of valid UTF-8; fallback
// when nothing is left (or the name is "index.html").
std::string safe_name(std::string name, const std::string &fallback);

// Records the files for the pending extracts of the message; ctx.output_dir becomes top.
// page_node: the part that is the message's page (index.html). Returns the files written,
// by section (for PageBook::planned).
std::map<std::string, std::string> plan_extraction(MessageContext &ctx, const MessageIndex &ix,
                                                   const std::vector<PendingExtract> &extracts, const std::string &top,
                                                   int page_node);

} // namespace mimeuri::refs
