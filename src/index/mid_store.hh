// The persistent Message-ID index (`mimeuri index`, `--mid-index`): where each message of an
// archive lives (input name, byte offset, position) under its Message-ID, with the
// Content-IDs of its parts, so that mid: and mid:msg/cid references (RFC 2392) resolve
// across runs and shards. Kept in SQLite (docs/design.md says why): looked up through its
// B-tree indexes, never loaded whole, merged into by later runs.
#pragma once

#include "result.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace mimeuri {

class MessageContext;

// One message (the top-level one or an embedded message/rfc822) under its Message-ID.
struct StoredMessage {
    std::string message_id;   // as GMime decodes it (what the run's own index keys on)
    std::string source;       // the input's name as it was given (a Maildir's file: its path)
    std::int64_t offset{0};   // of the message in its input (an mbox: its "From " line)
    std::size_t number{1};    // 1-based position in its input (the report's "index")
    std::string section;      // "" for a top-level message, else its message/rfc822 part
    std::vector<std::pair<std::string, std::string>> cids; // Content-ID (decoded) -> section
    std::string page; // a lookup's: the page an --cid=extract run wrote for it (pages table)
};

// The Message-IDs of a parsed message and of the messages embedded in it, each with the
// Content-IDs of its own parts, in document order (those without a Message-ID left out).
// The run's index (filters/ref_index.cc) and `mimeuri index` both read messages this way.
std::vector<StoredMessage> messages_of(const MessageContext &ctx);

// The local part as written and the domain in lower case (RFC 5322: the domain compares
// case-insensitively); "" for an id without "@".
std::string mid_ci_key(const std::string &id);

class MidStore {
public:
    // Read-only, for lookups (--mid-index). A file that is not such an index is an error
    // (Code::Usage: the option names the wrong file); a missing one Code::NoInput.
    static Result<MidStore> open_read(const std::string &path);
    // For `mimeuri index`: created when missing, merged into otherwise. Waits up to
    // busy_ms for another writer.
    static Result<MidStore> open_write(const std::string &path, int busy_ms = 60000);

    MidStore(MidStore &&) noexcept;
    MidStore &operator=(MidStore &&) noexcept;
    MidStore(const MidStore &) = delete;
    MidStore &operator=(const MidStore &) = delete;
    ~MidStore();

    const std::string &path() const { return path_; }

    // --- Lookups.
    struct Found {
        StoredMessage first; // the message with this id; when count is 2, one of them
        int count{0};        // how many messages have it (2 stands for "more than one")
    };
    // The message(s) with exactly this Message-ID; with cids and one message, its
    // Content-IDs. Of several, which one comes is not defined: the id is ambiguous then, and
    // the caller reports no target (no ORDER BY: its sorter cost more than the lookup).
    Result<std::optional<Found>> find(const std::string &id, bool cids = true);
    // Of the Message-IDs equal to id but for the case of the domain, the least (as the run's
    // own index picks, filters/ref_index.cc); nullopt when none.
    Result<std::optional<std::string>> find_ci(const std::string &id);
    // Lookups between begin_read() and end_read() share one read transaction: one lock taken
    // and one check of the file for a message's references, not one per statement. A writer
    // waits for end_read() (called after each message).
    Status begin_read();
    void end_read();
    // A question asked every few thousand steps of a lookup: true stops it, and the lookup
    // returns an Error::limit (the time limit, --max-time). Empty: none.
    void set_interrupt(std::function<bool()> stop);
    // Inside a read transaction: a number that changes when another connection has
    // committed since (PRAGMA data_version), so that what was looked up earlier can be kept
    // while it does not.
    Result<std::int64_t> data_version();

    // --- Writing (open_write).
    // What the index knows of an input file.
    struct FileState {
        std::int64_t id{0};
        std::string path;
        std::int64_t size{0};
        std::int64_t mtime_ns{0};
        std::int64_t messages{0}; // messages indexed from it (with or without a Message-ID)
        std::string tail;         // a digest of its last bytes as indexed ("" unknown)
    };
    Result<std::optional<FileState>> file(const std::string &path);
    // The inputs indexed so far, as they were named: each file given alone, each Maildir.
    Result<std::vector<std::string>> inputs();
    // Every file indexed from the Maildir `dir`, keyed by unique part (maildir.hh).
    Result<std::vector<std::pair<std::string, FileState>>> maildir_files(const std::string &dir);
    // A file (re)indexed: its old rows go, a fresh record is made; returns its id.
    Result<std::int64_t> begin_file(const std::string &path, std::int64_t size, std::int64_t mtime_ns,
                                     const std::string &maildir, const std::string &unique);
    // An mbox that grew by messages appended to it: its record keeps its rows, takes the new
    // size and mtime; the new messages are added after it. Returns its id.
    Result<std::int64_t> grow_file(std::int64_t file, std::int64_t size, std::int64_t mtime_ns);
    Status add(std::int64_t file, const StoredMessage &m);
    // The page an --cid=extract run wrote for the message with this id (an absolute path).
    Status add_page(const std::string &message_id, const std::string &path);
    // tail: the file's digest (index_cmd.cc), to tell next time whether it only grew.
    Status end_file(std::int64_t file, std::int64_t messages, const std::string &tail = {});
    // A file that failed between begin_file (or grow_file) and end_file: its rows and record
    // go back to what they were before, so that it is read again next time.
    void abandon_file();
    // A Maildir file the IMAP server renamed (flags, new/ -> cur/): the same message, moved.
    Status rename_file(std::int64_t file, const std::string &path);
    Status forget_file(std::int64_t file);
    // Writes are grouped into transactions of a few thousand messages; commit() ends one.
    Status commit();

    // Counts, for the summary line and the benchmark.
    Result<std::int64_t> count_messages();

private:
    MidStore() = default;
    // open_write's last step: a new index's schema made, an older one's brought up to date.
    Status make_schema(bool empty);
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string path_;
};

} // namespace mimeuri
