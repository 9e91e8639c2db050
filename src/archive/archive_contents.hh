// --cid=extract, the archive's top: its messages threaded, the contents page (its
// index.html), the stylesheet, and each page's links to the previous and next message of its thread.
//
// Threads as MHonArc and public-inbox make them: a message's parent is the nearest of its
// References (the last first), else its In-Reply-To, that the run holds (not itself, and not
// one of its own replies); a reply whose parent is missing starts a thread of its own. The
// contents page lists the threads newest first (by their newest message), each message's replies
// nested under it in date order. Previous and next are the neighbours in that reading order
// inside the thread.
//
// The run hands each message over as a record (one line, made when the message's folder is
// planned: extract.hh) so that the pages can be written as the run takes them and the threads
// made once at its end. Pure C++: no GMime.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

struct ArchiveEntry {
    std::size_t folder{0};
    std::string address;               // `mimeuri archive`: the folder's name (else folder's number)
    long long epoch{0};                // the Date, seconds since the epoch (0: none)
    std::string date;                  // as shown: "2026-11-27 01:48 UTC"; HTML text
    std::string message_id;            // without <>
    std::vector<std::string> parents;  // References, the last first, then In-Reply-To
    std::string from, subject;         // HTML text (escaped)
};

// One line (ending in '\n'); ids lose any tab, newline or unit separator.
std::string archive_record(const ArchiveEntry &e);
// The records in text (lines archive_record made); a malformed line is skipped.
std::vector<ArchiveEntry> read_archive_records(std::string_view text);

// The ids of a message's parents that are read, the nearest first: RFC 5322 3.6.4 makes the
// last of References the parent; the ones before it only stand in for parents the run does
// not hold. A sender's 20,000 References cost no more than these.
inline constexpr std::size_t kMaxParentIds = 32;

struct Threads {
    std::vector<std::size_t> order;       // entries in reading order (thread by thread)
    std::vector<std::size_t> depth;       // by position in order
    std::vector<std::size_t> thread;      // by position in order: which thread (0: the newest)
};
// In time linear in the messages and the ids they name (at most kMaxParentIds each).
Threads thread_archive(const std::vector<ArchiveEntry> &entries);

// The top index.html: the threads, each message a link to N/index.html.
std::string contents_page(const std::vector<ArchiveEntry> &entries, const Threads &t);

// The threads as nested lists (<ul class="mimeuri-thread">, one per thread), each message a
// link to prefix + its folder + "/index.html".
std::string thread_lists(const std::vector<ArchiveEntry> &entries, const Threads &t, const std::string &prefix);

// mimeuri.css, the pages' and the contents page's stylesheet.
std::string archive_stylesheet();

// The marker each message page holds in its header, followed by kNavRoom spaces that the
// run's end overwrites with the thread links (nav_links).
inline constexpr std::string_view kNavMarker = "<!--mimeuri-nav-->";
inline constexpr std::size_t kNavRoom = 160;

// The links written at the marker: previous and next in the thread (folders; 0 for none),
// at most kNavRoom bytes.
std::string nav_links(std::size_t prev, std::size_t next);

} // namespace mimeuri
