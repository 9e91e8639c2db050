// `mimeuri archive`: what is made from the state, never from the mail again: each page's
// navigation (written into the room its header keeps after kNavMarker), a thread's page and
// mbox, the month pages by date and by thread, the top index and the Atom feed. Pure: text
// in, text out. Every page carries the archive's Content-Security-Policy first in its head.
#pragma once

#include "archive_contents.hh"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri::archive {

// A message as the views show it: its record read back, its address and date's month.
struct Shown {
    ArchiveEntry e;
    std::string month;
};
Shown shown(const std::string &addr, const std::string &record);

struct Nav {
    std::string prev_thread, next_thread, prev_date, next_date; // addresses, "" for none
    std::string thread;                                        // the thread's root address
    std::string month;                                         // by-date/MONTH.html
};
std::string nav_html(const Nav &n);

// The page with its navigation replaced by nav (the room --cid=extract's writer left, or the
// navigation an earlier run wrote, up to kNavEnd); nullopt when the page holds neither
// before its "<main" (not a page mimeuri wrote).
inline constexpr std::string_view kNavEnd = "<!--/mimeuri-nav-->";
std::optional<std::string> with_nav(std::string_view page, const std::string &nav);

// threads/ROOT.html: the thread nested, linked to its mbox.
std::string thread_page(const std::string &root, const std::vector<ArchiveEntry> &members);
// by-date/MONTH.html: the month's messages by date.
std::string date_page(const std::string &month, const std::vector<Shown> &messages);
// by-thread/MONTH.html: the threads whose newest message is of that month, newest first
// (each thread's members, in threads' order).
std::string month_threads_page(const std::string &month, const std::vector<std::vector<ArchiveEntry>> &threads);
// index.html: the months, the newest threads, the feed.
std::string top_page(long long messages, const std::vector<std::pair<std::string, long long>> &months,
                     const std::vector<std::vector<ArchiveEntry>> &newest_threads);

// feed.atom (RFC 4287): the newest messages, newest first; feed_id a urn:uuid.
std::string atom_feed(const std::string &feed_id, const std::vector<Shown> &newest);
// RFC 3339 in UTC ("2026-11-27T01:48:00Z").
std::string rfc3339(long long epoch);
// A urn:uuid (RFC 4122 section 4.3's form, version 5 bits) made from a name: the same name,
// the same id, so an entry's id is permanent.
std::string name_uuid(std::string_view name);

// One message of a thread's mbox: its From_ line (or one made for a message from a file,
// "From MAILER-DAEMON" and its date in asctime form), its bytes (as read from an mbox; from a
// file, mboxrd-quoted: a line matching ">*From " gets one more '>'), and what followed it in
// its mbox (else a line break when it ends without one, and the empty separator line).
std::string mbox_chunk(const std::string &from_line, std::string_view bytes, bool quoted, const std::string &tail,
                       long long epoch);

} // namespace mimeuri::archive
