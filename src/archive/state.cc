// `mimeuri archive`: the archive's state (state.hh).
#include "state.hh"

#include <glib.h>
#include <sqlite3.h>

#include <ctime>

namespace mimeuri::archive {

namespace {

// The schema, created once. messages.thread is the address of the thread's first message
// (its root); parents the ids a message names (References, the last first, then
// In-Reply-To), so that a parent that comes after its replies takes their threads in.
constexpr const char *kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages(addr TEXT PRIMARY KEY, message_id TEXT NOT NULL, sha256 TEXT NOT NULL,
  epoch INTEGER NOT NULL, month TEXT NOT NULL, thread TEXT NOT NULL, record TEXT NOT NULL, from_line TEXT NOT NULL,
  quoted INTEGER NOT NULL, seq INTEGER NOT NULL, nav TEXT NOT NULL DEFAULT '', tail TEXT NOT NULL, bytes BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS messages_id ON messages(message_id, seq);
CREATE INDEX IF NOT EXISTS messages_date ON messages(epoch, addr);
CREATE INDEX IF NOT EXISTS messages_month ON messages(month, epoch, addr);
CREATE INDEX IF NOT EXISTS messages_thread ON messages(thread, epoch, addr);
CREATE INDEX IF NOT EXISTS messages_seq ON messages(seq);
CREATE TABLE IF NOT EXISTS parents(addr TEXT NOT NULL, parent_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS parents_id ON parents(parent_id);
CREATE INDEX IF NOT EXISTS parents_addr ON parents(addr);
CREATE TABLE IF NOT EXISTS threads(root TEXT PRIMARY KEY, newest INTEGER NOT NULL, month TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS threads_newest ON threads(newest, root);
CREATE INDEX IF NOT EXISTS threads_month ON threads(month, newest);
CREATE TABLE IF NOT EXISTS months(month TEXT PRIMARY KEY, messages INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending(addr TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS dirty(kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY(kind, key));
)";

constexpr const char *kColumns = "addr, message_id, sha256, thread, record, from_line, quoted, epoch, seq, nav, tail";

class Stmt {
public:
    Stmt(sqlite3 *db, const char *sql) : db_(db)
    {
        if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
    }
    ~Stmt() { sqlite3_finalize(s_); }
    Stmt(const Stmt &) = delete;
    Stmt &operator=(const Stmt &) = delete;
    template <class... A> Stmt &bind(const A &...a)
    {
        int k = 0;
        (one(++k, a), ...);
        return *this;
    }
    // SQLITE_ROW: true; SQLITE_DONE: false; else an error.
    Result<bool> step()
    {
        if (!s_) return fail();
        const int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        return fail();
    }
    Status run()
    {
        auto r = step();
        if (!r) return r.error();
        return ok();
    }
    std::string text(int col) const
    {
        const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(s_, col));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))) : std::string();
    }
    std::string blob(int col) const
    {
        const auto *p = static_cast<const char *>(sqlite3_column_blob(s_, col));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))) : std::string();
    }
    Stmt &bind_blob(int k, const std::string &v)
    {
        sqlite3_bind_blob64(s_, k, v.data(), v.size(), SQLITE_STATIC);
        return *this;
    }
    long long integer(int col) const { return sqlite3_column_int64(s_, col); }
    Stored stored() const
    {
        Stored s;
        s.addr = text(0), s.message_id = text(1), s.sha = text(2), s.thread = text(3), s.record = text(4);
        s.from_line = text(5), s.quoted = integer(6) != 0, s.epoch = integer(7), s.seq = integer(8), s.nav = text(9);
        s.tail = text(10);
        return s;
    }

private:
    void one(int k, const std::string &v) { sqlite3_bind_text(s_, k, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
    void one(int k, long long v) { sqlite3_bind_int64(s_, k, v); }
    Error fail() const { return Error{Code::IoErr, std::string("archive state: ") + sqlite3_errmsg(db_)}; }
    sqlite3 *db_;
    sqlite3_stmt *s_{nullptr};
};

Result<std::vector<std::string>> texts(Stmt &q)
{
    std::vector<std::string> out;
    for (;;) {
        auto r = q.step();
        if (!r) return r.error();
        if (!*r) return out;
        out.push_back(q.text(0));
    }
}

Result<std::vector<std::string>> column(sqlite3 *db, const char *sql, const std::string &arg)
{
    Stmt q(db, sql);
    q.bind(arg);
    return texts(q);
}

Result<std::vector<Stored>> rows(Stmt &q)
{
    std::vector<Stored> out;
    for (;;) {
        auto r = q.step();
        if (!r) return r.error();
        if (!*r) return out;
        out.push_back(q.stored());
    }
}

std::string select(const std::string &rest) { return std::string("SELECT ") + kColumns + " FROM messages " + rest; }

} // namespace

std::string month_of(long long epoch)
{
    if (epoch == 0) return "undated";
    const std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    if (!::gmtime_r(&t, &tm)) return "undated";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon % 12) + 1);
    return buf;
}

Result<State> State::open(const std::string &path)
{
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return Error{Code::CantCreate, "cannot open " + path + ": " + why};
    }
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    // A message removed (--remove: a private one added by accident) leaves no bytes behind
    // in the file's free pages.
    sqlite3_exec(db, "PRAGMA secure_delete = ON", nullptr, nullptr, nullptr);
    sqlite3_busy_timeout(db, 60000);
    State st(db);
    if (Status s = st.exec(kSchema); !s) return s.error();
    return st;
}

State::State(State &&o) noexcept : db_(o.db_) { o.db_ = nullptr; }

State::~State() { sqlite3_close(db_); }

Status State::exec(const std::string &sql)
{
    char *err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return ok();
    std::string why = err ? err : "error";
    sqlite3_free(err);
    return Error{Code::IoErr, "archive state: " + why};
}

Result<std::string> State::meta(const std::string &key)
{
    Stmt q(db_, "SELECT value FROM meta WHERE key = ?");
    auto r = q.bind(key).step();
    if (!r) return r.error();
    return *r ? q.text(0) : std::string();
}

Status State::set_meta(const std::string &key, const std::string &value)
{
    return Stmt(db_, "INSERT OR REPLACE INTO meta VALUES (?, ?)").bind(key, value).run();
}

Result<bool> State::has(const std::string &message_id, const std::string &sha)
{
    Stmt q(db_, "SELECT 1 FROM messages WHERE message_id = ? AND sha256 = ?");
    return q.bind(message_id, sha).step();
}

Result<bool> State::addr_taken(const std::string &addr)
{
    Stmt q(db_, "SELECT 1 FROM messages WHERE addr = ?");
    return q.bind(addr).step();
}

Result<std::vector<std::string>> State::addrs_of_id(const std::string &message_id)
{
    return column(db_, "SELECT addr FROM messages WHERE message_id = ? ORDER BY seq", message_id);
}

Result<std::optional<Stored>> State::get(const std::string &addr)
{
    Stmt q(db_, select("WHERE addr = ?").c_str());
    auto r = q.bind(addr).step();
    if (!r) return r.error();
    return *r ? std::optional<Stored>(q.stored()) : std::nullopt;
}

Result<std::string> State::bytes_of(const std::string &addr)
{
    Stmt q(db_, "SELECT bytes FROM messages WHERE addr = ?");
    auto r = q.bind(addr).step();
    if (!r) return r.error();
    return *r ? q.blob(0) : std::string();
}

Result<std::vector<std::string>> State::threads_naming(const std::string &message_id)
{
    return column(db_, "SELECT DISTINCT m.thread FROM parents p JOIN messages m ON m.addr = p.addr WHERE p.parent_id = ?",
                  message_id);
}

Status State::insert(const Stored &s, const std::string &bytes, const std::vector<std::string> &parents)
{
    const std::string month = month_of(s.epoch);
    Stmt q(db_, "INSERT INTO messages (addr, message_id, sha256, epoch, month, thread, record, from_line, quoted, tail, seq, bytes) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM messages), ?)");
    q.bind(s.addr, s.message_id, s.sha, s.epoch, month, s.thread, s.record, s.from_line, static_cast<long long>(s.quoted),
           s.tail);
    q.bind_blob(11, bytes);
    if (Status r = q.run(); !r) return r;
    for (const std::string &p : parents)
        if (Status r = Stmt(db_, "INSERT INTO parents VALUES (?, ?)").bind(s.addr, p).run(); !r) return r;
    return Stmt(db_, "INSERT INTO months VALUES (?, 1) ON CONFLICT(month) DO UPDATE SET messages = messages + 1")
        .bind(month)
        .run();
}

Status State::remove(const std::string &addr)
{
    auto got = get(addr);
    if (!got) return got.error();
    if (!*got) return ok();
    const std::string month = month_of((*got)->epoch);
    for (const char *sql : {"DELETE FROM messages WHERE addr = ?", "DELETE FROM parents WHERE addr = ?",
                            "DELETE FROM pending WHERE addr = ?"})
        if (Status r = Stmt(db_, sql).bind(addr).run(); !r) return r;
    if (Status r = Stmt(db_, "UPDATE months SET messages = messages - 1 WHERE month = ?").bind(month).run(); !r) return r;
    return Stmt(db_, "DELETE FROM months WHERE messages <= 0").run();
}

Status State::retag_thread(const std::string &from, const std::string &to)
{
    return Stmt(db_, "UPDATE messages SET thread = ? WHERE thread = ?").bind(to, from).run();
}

Status State::set_nav(const std::string &addr, const std::string &nav)
{
    return Stmt(db_, "UPDATE messages SET nav = ? WHERE addr = ?").bind(nav, addr).run();
}

Result<std::vector<Stored>> State::thread_members(const std::string &root)
{
    Stmt q(db_, select("WHERE thread = ? ORDER BY epoch, addr").c_str());
    q.bind(root);
    return rows(q);
}

Result<std::optional<long long>> State::thread_newest(const std::string &root)
{
    Stmt q(db_, "SELECT newest FROM threads WHERE root = ?");
    auto r = q.bind(root).step();
    if (!r) return r.error();
    return *r ? std::optional<long long>(q.integer(0)) : std::nullopt;
}

Status State::record_thread(const std::string &root, std::optional<long long> newest)
{
    if (!newest) return Stmt(db_, "DELETE FROM threads WHERE root = ?").bind(root).run();
    return Stmt(db_, "INSERT OR REPLACE INTO threads VALUES (?, ?, ?)").bind(root, *newest, month_of(*newest)).run();
}

Result<std::pair<std::string, std::string>> State::date_neighbours(long long epoch, const std::string &addr)
{
    std::pair<std::string, std::string> out;
    Stmt p(db_, "SELECT addr FROM messages WHERE (epoch, addr) < (?, ?) ORDER BY epoch DESC, addr DESC LIMIT 1");
    auto r = p.bind(epoch, addr).step();
    if (!r) return r.error();
    if (*r) out.first = p.text(0);
    Stmt n(db_, "SELECT addr FROM messages WHERE (epoch, addr) > (?, ?) ORDER BY epoch, addr LIMIT 1");
    r = n.bind(epoch, addr).step();
    if (!r) return r.error();
    if (*r) out.second = n.text(0);
    return out;
}

Result<std::vector<Stored>> State::month_messages(const std::string &month)
{
    Stmt q(db_, select("WHERE month = ? ORDER BY epoch, addr").c_str());
    q.bind(month);
    return rows(q);
}

Result<std::vector<std::string>> State::month_threads(const std::string &month)
{
    return column(db_, "SELECT root FROM threads WHERE month = ? ORDER BY newest DESC, root DESC", month);
}

Result<std::vector<std::pair<std::string, long long>>> State::months()
{
    Stmt q(db_, "SELECT month, messages FROM months ORDER BY month DESC");
    std::vector<std::pair<std::string, long long>> out;
    for (;;) {
        auto r = q.step();
        if (!r) return r.error();
        if (!*r) return out;
        out.emplace_back(q.text(0), q.integer(1));
    }
}

Result<std::vector<std::string>> State::newest_threads(std::size_t n)
{
    Stmt q(db_, "SELECT root FROM threads ORDER BY newest DESC, root DESC LIMIT ?");
    q.bind(static_cast<long long>(n));
    return texts(q);
}

Result<std::vector<Stored>> State::newest_messages(std::size_t n)
{
    Stmt q(db_, select("ORDER BY epoch DESC, addr DESC LIMIT ?").c_str());
    q.bind(static_cast<long long>(n));
    return rows(q);
}

Result<long long> State::count()
{
    Stmt q(db_, "SELECT coalesce(sum(messages), 0) FROM months");
    auto r = q.step();
    if (!r) return r.error();
    return q.integer(0);
}

Status State::add_pending(const std::string &addr) { return Stmt(db_, "INSERT OR IGNORE INTO pending VALUES (?)").bind(addr).run(); }

Status State::done_pending(const std::string &addr) { return Stmt(db_, "DELETE FROM pending WHERE addr = ?").bind(addr).run(); }

Result<std::vector<std::string>> State::pending()
{
    Stmt q(db_, "SELECT addr FROM pending ORDER BY addr");
    return texts(q);
}

Status State::add_dirty(const std::string &kind, const std::string &key)
{
    return Stmt(db_, "INSERT OR IGNORE INTO dirty VALUES (?, ?)").bind(kind, key).run();
}

Status State::done_dirty(const std::string &kind, const std::string &key)
{
    return Stmt(db_, "DELETE FROM dirty WHERE kind = ? AND key = ?").bind(kind, key).run();
}

Result<std::vector<std::string>> State::dirty(const std::string &kind)
{
    return column(db_, "SELECT key FROM dirty WHERE kind = ? ORDER BY key", kind);
}

} // namespace mimeuri::archive
