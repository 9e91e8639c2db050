// The reference pass, beyond the run: messages looked up by Message-ID in an index made by
// `mimeuri index` (--mid-index, src/index/mid_store.hh) or in a notmuch database (--notmuch), so
// that mid: and mid:msg/cid (RFC 2392) resolve against an archive larger than one run.
//
// A lookup that fails (an unreadable index, a notmuch error) throws: the message is then
// handled as --on-error says. A reference is never reported dangling because an index
// could not be read.
#pragma once

#include "ref_index.hh"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimeuri::refs {

class ExternalIndex {
public:
    virtual ~ExternalIndex() = default;
    // The message with exactly this Message-ID (Entry::count 2: more than one has it); its
    // Content-IDs only with cids. Null when none has it. The entry is the index's: valid
    // until its next find, find_ci or done.
    virtual const RunIndex::Entry *find(const std::string &id, bool cids = true) = 0;
    // The Message-ID it holds that is id but for the case of the domain (the least of
    // several), if any.
    virtual std::optional<std::string> find_ci(const std::string &id) = 0;
    // The message's references are looked up: what was held for them can go.
    virtual void done() {}
    // The message's deadline (MessageContext::out_of_time), asked as a lookup works, not only
    // between lookups: a lookup past it throws TimeLimit. Empty: none.
    virtual void set_deadline(std::function<bool()> out_of_time) { (void)out_of_time; }
};

// A lookup stopped at the message's time limit (--max-time): the message passes as it came,
// reported, as with any limit.
struct TimeLimit : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using ExternalIndexes = std::vector<std::unique_ptr<ExternalIndex>>;

// An index made by `mimeuri index`, opened read-only on first use in each process (a
// forked worker opens its own connection: SQLite's must not cross a fork) and kept open for
// the process's later messages: what another process writes to it is seen at the next
// message, and a file put in its place (a rename) is opened anew then.
std::unique_ptr<ExternalIndex> open_mid_index(const std::string &path);
// Whether path opens as such an index; the error names the file and the cause.
Status check_mid_index(const std::string &path);

// A notmuch database (--notmuch=DATABASE: its mail root or its .notmuch folder), read-only
// through libnotmuch, opened on first use in each process. mid:ID finds the message notmuch
// has under ID (notmuch keeps one message for all its copies); mid:ID/CID the part of
// that message's file with Content-ID CID. Only built with libnotmuch (notmuch_available()).
bool notmuch_available();
std::unique_ptr<ExternalIndex> open_notmuch(const std::string &database);
Status check_notmuch(const std::string &database);

} // namespace mimeuri::refs
