// The reference pass, --cid=extract, the planning half (RFC 2387 section 6, the receiving
// agent): each HTML part with references to extract becomes a page (index.html for the
// first, part-SECTION.html for the others) whose references name files written beside it,
// one per target part, under safe, unique names. The files are recorded on the message
// (MessageContext::extraction); the run writes them when it takes the message
// (src/run/extract.hh).
#pragma once

#include "ref_part.hh"

#include <cstddef>
#include <map>
#include <optional>
#include <set>
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

// The name a part of type (its own, or for application/octet-stream the image, font or PDF its
// bytes show) is written under beside the pages: name, with an extension of its type when the
// type has one; then kept only when its extension is on an allow list of what never runs
// (images but SVG, fonts, audio, video, .css, .pdf, .txt) and agrees with type, else with
// ".txt" after it; an HTML part's (a page, sanitised) ends in .html or .htm.
std::string inert_name(const std::string &name, const std::string &type);

// wanted, or wanted with "-2", "-3"... before its extension: the first not in used (which
// gets it). A page's name is chosen so, never assumed free.
std::string choose_name(std::set<std::string> &used, const std::string &wanted);

struct PageOptions {
    bool extracting{false};          // --cid=extract with a folder: else nothing is planned
    bool allow_remote_images{false}; // --extract-remote-images
};

// Records the files of the message's folder; ctx.extraction().top becomes top. The files: one per
// target of the pending extracts (named by inert_name; an HTML target is a page), and the pages (page_writer.hh): index.html for the message (page_node, the part
// that is its page, else its text, else its list of parts), part-SECTION.html for each other
// HTML part, every page sanitised (html_sanitize.hh). Returns the files written, by section
// (for PageBook::planned).
std::map<std::string, std::string> plan_extraction(MessageContext &ctx, const MessageIndex &ix,
                                                   const std::vector<PendingExtract> &extracts, const std::string &top,
                                                   int page_node, const PageOptions &po);

} // namespace mimeuri::refs
