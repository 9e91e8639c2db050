// The reference pass, step 3: one HTML part. Its references are found (html_refs.hh),
// resolved (ref_resolver.hh), each given an action by the options (check, repair, inline,
// extract, rewrite a location to cid:, or kept for signed content), reported, and the
// replacements written back in the part's transfer encoding (transfer.hh). What the whole
// message needs afterwards (generated Content-IDs, parts inlined, files to extract, the
// counts for Mimeuri-Refs) is gathered in a Tally.
#pragma once

#include "html_refs.hh"
#include "ref_pages.hh"
#include "ref_resolver.hh"
#include "references.hh"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mimeuri::refs {

// An HTML part (or a stylesheet) whose references go to extracted files: the pages plan them (ref_pages.hh).
struct PendingExtract {
    int html_node{-1};
    bool css{false};                                 // a text/css part: its text is the target's file
    std::string html;                                // its text as scanned
    html::Scan scan;
    std::string base;                                // what its relative URLs resolve against
    std::vector<std::pair<std::size_t, int>> refs;   // ref index -> target node
    // mid: links to pages (--cid=extract): ref index -> the URL of another message's page or
    // file; "" for this message's own page ("#" on the page itself, else "index.html").
    std::vector<std::pair<std::size_t, std::string>> links;
};

struct Tally {
    std::size_t resolved{0}, dangling{0}, ambiguous{0};
    std::set<int> referenced;      // targets in this message
    std::set<int> inlined_targets; // inlined at least once
    std::set<int> kept_targets;    // still referenced as they are (--drop-inlined keeps them)
    std::vector<std::pair<int, std::string>> new_content_ids; // node -> the Content-ID it gets
    std::map<int, std::string> css_text; // a stylesheet as rewritten: what inlining it inlines
    std::vector<PendingExtract> extracts;
    // --drop-inlined: why an HTML or stylesheet part was not read whole ("" when each was),
    // and the URL of every reference the scans read (references.cc, drop_inlined).
    std::string unread;
    std::vector<std::string> read_urls;
    // --cid=extract: the run's pages, this message's folder (its absolute path too) and the
    // part that is its page (-1: none).
    const Pages *pages{nullptr};
    std::size_t folder{0};
    std::string folder_path;
    int page_node{-1};
};

// Does the above for the leaf text/html node `node`. Problems with the part are reported
// on ctx and the part left as it is; an Error is a limit (DataErr: the message passes as
// it came) or a failure of the machine (TempFail, Software).
Status rewrite_html_part(MessageContext &ctx, const RefOptions &opts, const MessageIndex &ix, const Resolver &resolver,
                         int node, Tally &tally);
// The same for a leaf text/css part of a multipart/related (a saved page's stylesheet):
// url() and @import, resolved against the part's own base (RFC 2557 5: its Content-
// Location). Run before the HTML parts, so that a stylesheet inlined into a page carries
// its own references inlined.
Status rewrite_css_part(MessageContext &ctx, const RefOptions &opts, const MessageIndex &ix, const Resolver &resolver,
                        int node, Tally &tally);

} // namespace mimeuri::refs
