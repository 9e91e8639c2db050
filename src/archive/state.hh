// `mimeuri archive`: the archive's state, an SQLite file of its own (DIR/.mimeuri/state.sqlite,
// rollback journal, as the Message-ID index): every message's address, Message-ID, the
// SHA-256 of its bytes, its date, thread, header record and original bytes; the months; and
// the journal that makes a run killed at any point finished by the next one (pending pages
// to move into place, derived files to write again). One transaction decides an add: before
// it nothing of the add is visible, after it the next run completes it.
#pragma once

#include "result.hh"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace mimeuri::archive {

struct Stored {
    std::string addr, message_id, sha, thread;
    std::string record;    // archive_record's line (archive_contents.hh), folder 0
    std::string from_line; // the mbox "From " line (with its line break), or "" (a file)
    bool quoted{false};    // the bytes are as an mbox held them (From-quoted)
    long long epoch{0};
    long long seq{0};      // the order messages were added in
    std::string nav;       // the navigation last written into its page
    std::string tail;      // what followed the message in its mbox (the empty separator line)
};

// "YYYY-MM" (UTC) of a date, "undated" for none.
std::string month_of(long long epoch);

class State {
public:
    static Result<State> open(const std::string &path);
    State(State &&) noexcept;
    State &operator=(State &&) = delete;
    ~State();

    Status exec(const std::string &sql);
    Status begin() { return exec("BEGIN IMMEDIATE"); }
    Status commit() { return exec("COMMIT"); }
    void rollback() { (void)exec("ROLLBACK"); }

    Result<std::string> meta(const std::string &key);
    Status set_meta(const std::string &key, const std::string &value);

    // Whether a message of this id and these bytes is there.
    Result<bool> has(const std::string &message_id, const std::string &sha);
    Result<bool> addr_taken(const std::string &addr);
    // The addresses of the messages with this id, in the order they came.
    Result<std::vector<std::string>> addrs_of_id(const std::string &message_id);
    Result<std::optional<Stored>> get(const std::string &addr);
    Result<std::string> bytes_of(const std::string &addr);
    // The threads whose messages name message_id as a parent (replies that came first).
    Result<std::vector<std::string>> threads_naming(const std::string &message_id);

    Status insert(const Stored &s, const std::string &bytes, const std::vector<std::string> &parents);
    Status remove(const std::string &addr);
    Status retag_thread(const std::string &from, const std::string &to);
    Status set_nav(const std::string &addr, const std::string &nav);

    // By date (then address): the same order however the messages came.
    Result<std::vector<Stored>> thread_members(const std::string &root);
    // The thread's newest date as recorded (nullopt: no such thread); recording it (nullopt:
    // the thread is gone).
    Result<std::optional<long long>> thread_newest(const std::string &root);
    Status record_thread(const std::string &root, std::optional<long long> newest);
    // Before and after by (date, address).
    Result<std::pair<std::string, std::string>> date_neighbours(long long epoch, const std::string &addr);
    Result<std::vector<Stored>> month_messages(const std::string &month);
    Result<std::vector<std::string>> month_threads(const std::string &month); // by newest, newest first
    Result<std::vector<std::pair<std::string, long long>>> months(); // month, messages; newest first
    Result<std::vector<std::string>> newest_threads(std::size_t n);
    Result<std::vector<Stored>> newest_messages(std::size_t n);
    Result<long long> count();

    // The journal.
    Status add_pending(const std::string &addr);
    Status done_pending(const std::string &addr);
    Result<std::vector<std::string>> pending();
    Status add_dirty(const std::string &kind, const std::string &key);
    Status done_dirty(const std::string &kind, const std::string &key);
    Result<std::vector<std::string>> dirty(const std::string &kind);

private:
    explicit State(sqlite3 *db) : db_(db) {}
    sqlite3 *db_{nullptr};
};

} // namespace mimeuri::archive
