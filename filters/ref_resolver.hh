// The reference pass, step 2: what a cid:, mid: or location reference points at, given the
// message's index and the run's (ref_index.hh). Pure: no GMime, no edits, no report.
//
// cid: (RFC 2392) matches a Content-ID, exactly or with the domain in another case (then
// the reference is "broken": repair can rewrite it); mid: matches a Message-ID in this
// message, its embedded messages, then the rest of the run, and with "/content-id" a part
// of that message; any other URL matches a Content-Location after both are resolved
// (RFC 2557 5). Of several matches, choose() decides.
//
// Two ways of naming a part that RFC 2392 and 2557 do not define, common in real mail
// (issue 34 item 6), are matched only as a last resort, and only inside the referring
// part's own multipart/related, and only when exactly one part there matches: a relative
// URL with no scheme that is a Content-ID as written (<img src="image001.png"> for
// Content-ID: <image001.png>), and a cid: URL that no Content-ID or Content-Location names
// but that is a part's file name (Content-Disposition filename or Content-Type name).
//
// Last of all, a cid: that names nothing in its message is looked for in the messages that
// message answers (In-Reply-To, then References from the last: MessageIndex::answers), in
// the run's index and then the indexes on disk: a client that replies or forwards keeps
// <img src="cid:..."> and drops the part (issue 50). The first of them, nearest first, that
// holds a part with that Content-ID (exactly) is the target, "matched":"thread"; one
// whose Message-ID several messages carry is passed over (which one is meant is not known).
// RFC 2392 lets a cid: name only a part of its own message; the reference stays as written
// (the page of --cid=extract links the file of that message's folder).
#pragma once

#include "ref_external.hh"
#include "ref_index.hh"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace mimeuri::refs {

enum class RefStatus { Resolved, Dangling, Ambiguous };
const char *status_name(RefStatus s); // "resolved", "dangling", "ambiguous"

// How a reference matched its target when not as its scheme says (the report's "matched").
// Thread: a cid: that names no part of its message, found in a message it answers.
enum class Match { AsWritten, ContentLocation, ContentIdWithoutScheme, Filename, Thread };
const char *match_name(Match m); // "", "content-location", "content-id-without-scheme", "filename", "thread"

struct Target {
    RefStatus status{RefStatus::Dangling};
    int node{-1};             // the target entity in this message
    bool broken{false};       // matches, but not as RFC 2392 writes it: repair rewrites it
    std::string message_id;   // when the target is another message (of the run or an index)
    std::string section;      // target section in that message
    std::string source;       // where that message lives: its input
    std::int64_t offset{-1};  // ... and its offset there; -1 when several messages have the id
    std::string mid;          // mid: the Message-ID matched, as the message has it
    std::string mid_cid;      // mid: the Content-ID matched inside it
    Match match{Match::AsWritten};
    std::string named_id;     // a cid: matched by Content-Location or file name: the Content-ID
                              // it names (repair gives it to a target that has none)
    std::string unknown_id;   // mid: the Message-ID looked for and not (yet) in the run; a
                              // cid: that dangles, the nearest message it answers not found
    // mid: another message: its place in the run (input, 1-based number there), whether it
    // has a page of its own (--cid=extract), and the page an earlier run wrote (an index's).
    bool in_run{false};
    std::size_t input_no{0};
    std::size_t number{0};
    bool html{false};
    std::string page;
};

class Resolver {
public:
    ~Resolver();

    // externals: looked up in order after the run's own messages (--mid-index, --notmuch).
    Resolver(const MessageIndex &message, const RunIndex &run, const ExternalIndexes *externals = nullptr);
    Resolver(const Resolver &) = delete;
    Resolver &operator=(const Resolver &) = delete;

    // url starts with "cid:" (any case); padded: white space around it in its slot.
    Target cid(const std::string &url, int from, bool padded) const;
    // url starts with "mid:" (any case).
    Target mid(const std::string &url, int from) const;
    // Any other URL, resolved against base, compared with every Content-Location but from's own.
    Target location(const std::string &url, const std::string &base, int from) const;

    // Picks among the entities that match a reference made in entity `from`: those inside
    // the nearest enclosing multipart/related first, then the whole message; several in one
    // multipart/alternative resolve to the last (RFC 2046 5.1.4); several anywhere else are
    // ambiguous; none is dangling.
    void choose(std::vector<int> matches, int from, Target &t) const;

private:
    // The message's ids, locations and names by value, built at the first reference, so that
    // resolving R references in a message of P parts costs R + P lookups, not R x P
    // comparisons (issue 48 item 6: an MHTML page naming its 10,000 parts took 6 s). Each
    // list is in document order, as the scans it replaces found them.
    struct Lookup {
        using Map = std::unordered_map<std::string, std::vector<int>>;
        Map id;           // a part's cid_clean and cid_raw (of a part that has either)
        Map id_ci;        // the same, with the domain in lower case (same_id_ci_domain)
        Map location;     // a part's Content-Location (resolved, as the index holds it)
        Map location_unescaped; // the same with %XX decoded
        Map location_ci;  // Content-Location in ASCII lower case (cid: named by a location)
        Map file;         // a leaf's filename and Content-Type name
        Map message;      // an indexed message's Message-ID
        Map message_ci;   // the same, with the domain in lower case
    };
    // resolve(base, url), each pair once per message: a page names the same URLs from many
    // parts and stylesheets, and GLib's parse and rebuild is most of a location's cost.
    const std::string &resolved(const std::string &base, const std::string &url) const;
    mutable std::unordered_map<std::string, std::string> resolved_; // base's length, ':', base, url -> resolve()
    // The one part of from's own multipart/related set (not from, not in a related set
    // nested in it) among candidates (part numbers, in document order); -1 for none, for
    // several, and outside a related set.
    int unique_in_related(int from, const std::vector<int> &candidates) const;
    std::optional<Target> mid_here(const std::string &id, const std::string &content_id, int from, bool ci) const;
    // A message of the run, else of an index, with exactly (or, ci, but for the domain's case)
    // this Message-ID; count: how many carry it (the run's, or more that an index knows of).
    struct Other {
        std::string id; // as indexed
        RunIndex::Entry entry;
        int count{0};
        bool in_run{false};
    };
    std::optional<Other> other_message(const std::string &id, bool ci, bool cids) const;
    // A cid: (its Content-ID, cleaned) named by no part of message k: in the messages it answers.
    Target in_thread(const std::string &content_id, int k) const;
    // count: how many messages have the id (e's own count, or more that an index knows of).
    Target in_message(const std::string &found_id, const RunIndex::Entry &e, int count, const std::string &content_id) const;
    const Lookup &lookup() const;
    const MessageIndex &ix_;
    const RunIndex &run_;
    const ExternalIndexes *externals_;
    mutable std::unique_ptr<Lookup> lookup_; // built by lookup() when first needed
    // in_thread's: per message of ix_, the ids it answers and the messages found under them
    // (nullopt: in no index), looked up at its first dangling cid:, once for all of them.
    mutable std::map<int, std::pair<std::vector<std::string>, std::vector<std::optional<Other>>>> answered_;
};

} // namespace mimeuri::refs
