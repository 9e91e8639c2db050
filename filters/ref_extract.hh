// The reference pass, --cid=extract, the planning half (RFC 2387 section 6, the receiving
// agent): each HTML part with references to extract becomes a page (index.html for the
// first, part-SECTION.html for the others) whose references name files written beside it,
// one per target part, under safe, unique names. The files are recorded on the message
// (MessageContext::add_output_file); the run writes them when it takes the message
// (src/extract.hh).
#pragma once

#include "ref_part.hh"

#include <string>

namespace mimeuri::refs {

// A file name that cannot escape its folder: no separators, no "..", no control, format
// or bidirectional characters, no leading dot, at most 100 bytes of valid UTF-8; fallback
// when nothing is left (or the name is "index.html").
std::string safe_name(std::string name, const std::string &fallback);

// Records the files for the pending extracts of the message; ctx.output_dir becomes top.
void plan_extraction(MessageContext &ctx, const MessageIndex &ix, const std::vector<PendingExtract> &extracts,
                     const std::string &top);

} // namespace mimeuri::refs
