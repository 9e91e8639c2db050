// --cid=extract, the planning half (RFC 2387 section 6, the receiving agent): a message's
// folder. Each HTML part with references to extract becomes a page (index.html for the
// message's page part, part-SECTION.html for the others) whose references name files
// written beside it, one per target part, under safe, unique names. Planned for the
// references pass by the pages it is given (extract.hh, filters/ref_pages.hh); the run
// writes the files when it takes the message (extract_write.hh).
#pragma once

#include "extract_write.hh"
#include "ref_part.hh"

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mimeuri::refs {

// A file name that cannot escape its folder: no separators, no "..", no control, format
// or bidirectional characters, no leading dot, at most 100 bytes of valid UTF-8; fallback
// when nothing is left (or the name is "index.html").
std::string safe_name(std::string name, const std::string &fallback);

// The name a part of type (its own, or for application/octet-stream the image, font or PDF its
// bytes show) is written under beside the pages: name, with an extension of its type when the
// type has one; then kept only when its extension is on an allow list of what never runs
// (images but SVG, fonts, audio, video, .css, .pdf, .txt) and agrees with type, else with
// ".txt" after it; an HTML part's (a page, sanitised) ends in .html or .htm.
std::string inert_name(const std::string &name, const std::string &type);

// wanted, or wanted with "-2", "-3"... before its extension: the first not in used (which
// gets it). A page's name is chosen so, never assumed free.
std::string choose_name(std::set<std::string> &used, const std::string &wanted);

// The files of the message's folder: one per target of the extracts (named by inert_name; an
// HTML target is a page), and the pages (page_writer.hh): index.html for the message
// (page_node, the part that is its page, else its text, else its list of parts),
// part-SECTION.html for each other HTML part, every page sanitised (html_sanitize.hh).
// written: the file each part was written as, by section (for Pages::file).
struct PlannedFolder {
    std::vector<OutputFile> files;
    std::map<std::string, std::string> written;
};
PlannedFolder plan_folder(MessageContext &ctx, const MessageIndex &ix, const std::vector<PendingExtract> &extracts,
                          int page_node, bool allow_remote_images);

} // namespace mimeuri::refs
