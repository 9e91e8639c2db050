// The persistent Message-ID index in SQLite (see mid_store.hh).
//
// Schema (user_version 1):
//   files(id, path UNIQUE, size, mtime_ns, messages, maildir, uniq, tail)  what was indexed,
//       for incremental runs: a file with the same size and mtime is not read again; a
//       Maildir file is also known by its unique part, so a rename by the IMAP server is a
//       move; tail, an mbox's digest (index_cmd.cc), tells one that only grew.
//   messages(id, file, number, offset, section, message_id, ci_key)  one row per Message-ID
//       found (top-level and embedded messages); ci_key only where the domain has capitals.
//       messages_lookup covers the lookup by Message-ID.
//   cids(message, content_id, section)  the Content-IDs of each message's own parts.
//   pages(message_id, path)  the page an --cid=extract run wrote for a message (its
//       DIR/N/index.html, absolute), from that folder's pages.tsv (mimeuri index --pages).
//       Added later without a new format number: an older mimeuri ignores the table, and an
//       index without it opens (no pages known); open_write adds it.
#include "mid_store.hh"

#include "mid_schema.hh"

#include "message.hh"
#include "text.hh"

#include <gmime/gmime.h>
#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <set>
#include <string_view>

namespace mimeuri {

namespace {

constexpr int kSchemaVersion = 1;
constexpr int kApplicationId = 0x6d696d75; // "mimu": `file` and a reader tell it from other SQLite files
constexpr int kBatch = 5000;               // messages per transaction

// The lookup by Message-ID reads this index alone (it holds every column the lookup
// needs but the file's path): no second B-tree search in the messages table. Indexes made
// before it had messages_id(message_id): open_write() replaces that one (a lookup over an
// index not yet migrated is as right, and slower).
const char *kLookupIndex = "CREATE INDEX IF NOT EXISTS messages_lookup ON messages(message_id, file, offset, number, section); "
                           "DROP INDEX IF EXISTS messages_id;";

// The case-insensitive lookup (find_ci) takes the least id under a key from this index in
// one B-tree search, however many messages share the id; indexes made before it had
// messages_ci(ci_key), over which the least id meant reading every row of the key (a
// poisoned index: an id held 300,000 times). open_write() replaces that one.
const char *kCiIndex = "CREATE INDEX IF NOT EXISTS messages_ci_id ON messages(ci_key, message_id) WHERE ci_key IS NOT NULL; "
                       "DROP INDEX IF EXISTS messages_ci;";

const char *kPagesTable = "CREATE TABLE IF NOT EXISTS pages(message_id TEXT PRIMARY KEY, path TEXT NOT NULL) WITHOUT ROWID; ";

const char *kSchema = R"(
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  messages INTEGER NOT NULL DEFAULT 0,
  maildir TEXT,
  uniq TEXT,
  tail TEXT);
CREATE INDEX IF NOT EXISTS files_maildir ON files(maildir, uniq) WHERE maildir IS NOT NULL;
CREATE TABLE IF NOT EXISTS messages(
  id INTEGER PRIMARY KEY,
  file INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  section TEXT NOT NULL,
  message_id TEXT NOT NULL,
  ci_key TEXT);
CREATE INDEX IF NOT EXISTS messages_lookup ON messages(message_id, file, offset, number, section);
CREATE INDEX IF NOT EXISTS messages_ci_id ON messages(ci_key, message_id) WHERE ci_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_file ON messages(file);
CREATE TABLE IF NOT EXISTS cids(
  message INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  content_id TEXT NOT NULL,
  section TEXT NOT NULL,
  PRIMARY KEY(message, content_id)) WITHOUT ROWID;
)";


// Not named bind: std::bind, found through a std::string argument, would be chosen.
void put(sqlite3_stmt *s, int i, const std::string &v) { sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
void put(sqlite3_stmt *s, int i, std::int64_t v) { sqlite3_bind_int64(s, i, v); }

} // namespace

std::string mid_ci_key(const std::string &id)
{
    auto at = id.rfind('@');
    return at == std::string::npos ? std::string() : id.substr(0, at) + text::ascii_lower(id.substr(at));
}

std::vector<StoredMessage> messages_of(const MessageContext &ctx)
{
    std::vector<StoredMessage> out;
    auto stored = [&](const char *id, const std::string &section) -> StoredMessage * {
        if (!id || !*id) return nullptr;
        StoredMessage &s = out.emplace_back();
        s.message_id = id;
        s.source = ctx.at().source;
        s.offset = ctx.at().offset;
        s.number = ctx.at().number;
        s.section = section;
        return &s;
    };
    // An inert message read without GMime (MessageContext::headers_only): its Message-ID only
    // (it has no Content-ID and no embedded message).
    if (!ctx.message()) {
        if (ctx.headers_only()) stored(ctx.report().message_id.c_str(), "");
        return out;
    }
    auto add_one = [&](GMimeMessage *m, const std::string &section) {
        StoredMessage *s = stored(g_mime_message_get_message_id(m), section);
        if (!s) return;
        std::set<std::string_view> seen; // views into GMime's strings, alive with ctx
        for (const Node &n : ctx.nodes()) {
            if (n.message != m) continue;
            const char *cid = g_mime_object_get_content_id(n.object);
            // The first part with a Content-ID answers for it, as in the run's index.
            if (cid && seen.insert(cid).second) s->cids.emplace_back(cid, n.section);
        }
    };
    add_one(ctx.message(), "");
    for (const Node &n : ctx.nodes())
        if (n.kind == Node::Kind::MessagePart)
            if (GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(n.object))) add_one(inner, n.section);
    return out;
}

struct MidStore::Impl {
    sqlite3 *db{nullptr};
    bool writing{false};
    bool in_tx{false};
    bool has_pages{false}; // the pages table is there (an older index has none)
    int pending{0};
    // Prepared once, keyed by the address of the query's text (a literal at each call site):
    // no string built and compared on every lookup.
    std::unordered_map<const char *, Stmt> stmts;

    ~Impl()
    {
        stmts.clear();
        if (db) sqlite3_close_v2(db);
    }
    // Asked every kProgressSteps virtual-machine steps of a statement (set_interrupt): the
    // clock read by work done, so that no single lookup outlasts the message's deadline.
    std::function<bool()> stop;
    static constexpr int kProgressSteps = 4096;
    static int progress(void *self)
    {
        try {
            auto *im = static_cast<Impl *>(self);
            return im->stop && im->stop() ? 1 : 0;
        } catch (...) {
            return 1; // never unwind through SQLite
        }
    }
    // Locked by a writer for longer than we wait, or out of disk: a retry may pass.
    Code code() const
    {
        int rc = sqlite3_errcode(db);
        return (rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_FULL) ? Code::TempFail : Code::IoErr;
    }
    // Before a lookup too: one that is short never reaches the progress handler.
    std::optional<Error> stopped(const std::string &path) const
    {
        if (stop && stop()) return Error::limit(path + ": lookup stopped at the time limit (--max-time)");
        return std::nullopt;
    }
    Error fail(const std::string &what, const std::string &path) const
    {
        if (sqlite3_errcode(db) == SQLITE_INTERRUPT)
            return Error::limit(path + ": " + what + " stopped at the time limit (--max-time)");
        return Error{code(), path + ": " + what + ": " + sqlite3_errmsg(db)};
    }
    Result<sqlite3_stmt *> prepare(const char *sql, const std::string &path)
    {
        auto it = stmts.find(sql);
        if (it == stmts.end()) {
            sqlite3_stmt *s = nullptr;
            if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
                return fail("cannot prepare a query", path);
            it = stmts.emplace(sql, Stmt(s)).first;
        }
        sqlite3_reset(it->second.get());
        sqlite3_clear_bindings(it->second.get());
        return it->second.get();
    }
    Status exec(const char *sql, const std::string &path)
    {
        char *msg = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
            std::string m = msg ? msg : sqlite3_errmsg(db);
            sqlite3_free(msg);
            return Error{code(), path + ": " + m};
        }
        return ok();
    }
    // A file's rows between begin_file (or grow_file) and end_file, in a savepoint of the
    // batch's transaction: a file that fails half-way is rolled back alone (abandon_file),
    // and what the run commits afterwards never holds it half indexed under its new size.
    Status begin_one_file(const std::string &path)
    {
        if (Status s = begin(path); !s) return s;
        return exec("SAVEPOINT one_file", path);
    }
    Status begin(const std::string &path)
    {
        if (in_tx) return ok();
        // IMMEDIATE: the write lock now (waiting busy_timeout for another writer), not at
        // the first insert half-way through a file.
        if (Status s = exec("BEGIN IMMEDIATE", path); !s) return s;
        in_tx = true;
        return ok();
    }
};

MidStore::MidStore(MidStore &&) noexcept = default;
MidStore &MidStore::operator=(MidStore &&) noexcept = default;
MidStore::~MidStore()
{
    // An open transaction is rolled back by the close: only what commit() wrote stays.
}

Result<MidStore> MidStore::open_read(const std::string &path)
{
    if (::g_file_test(path.c_str(), G_FILE_TEST_IS_DIR))
        return Error{Code::Usage, path + ": a folder, not a mimeuri index (made by mimeuri index -o FILE)"};
    if (!::g_file_test(path.c_str(), G_FILE_TEST_EXISTS)) return Error{Code::NoInput, path + ": no such index"};
    MidStore st;
    st.path_ = path;
    st.impl_ = std::make_unique<Impl>();
    // Read-only: never creates nor changes the file, and a lookup never takes the write lock.
    int rc = sqlite3_open_v2(path.c_str(), &st.impl_->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) return Error{Code::NoInput, path + ": cannot open the index: " + sqlite3_errstr(rc)};
    sqlite3 *db = st.impl_->db;
    // The file is data from wherever it came: no function in its schema runs with side
    // effects, the schema cannot be written (defensive), and no value read is larger than a
    // lookup needs (check_schema and find do the rest).
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValue);
    sqlite3_busy_timeout(st.impl_->db, 10000); // a writer committing
    // Pages read through a mapping, not copied into SQLite's cache (bench/README.md).
    (void)st.impl_->exec("PRAGMA mmap_size=1073741824", path);
    auto app = pragma_int(st.impl_->db, "PRAGMA application_id", path);
    if (!app) return app.error();
    if (*app != kApplicationId) return Error{Code::Usage, path + ": not a mimeuri index (made by mimeuri index -o FILE)"};
    auto ver = pragma_int(st.impl_->db, "PRAGMA user_version", path);
    if (!ver) return ver.error();
    if (*ver != kSchemaVersion)
        return Error{Code::Usage, path + ": an index of format " + std::to_string(*ver) + ", this mimeuri reads format " +
                                      std::to_string(kSchemaVersion) + "; make it again with mimeuri index"};
    if (Status s = check_schema(db, path); !s) return s.error();
    auto pages = schema_has(st.impl_->db, "pages", path);
    if (!pages) return pages.error();
    st.impl_->has_pages = *pages;
    return st;
}

namespace {

// The index file opened for writing as Postfix's safe_open opens a file it will write (and
// as --cid=extract opens what it writes): a symbolic link is never followed (SQLite opens a
// path through links, so a link planted in a shared folder would make a root run create or
// rewrite the file it names); an existing file must be a regular file with no other hard
// link, owned (for root) by the user running. A file missing is created here, exclusively,
// so that the file SQLite opens is the one checked. Returns whether it was created.
Result<bool> check_index_path(const std::string &path, struct stat &st)
{
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return Error{Code::CantCreate, path + ": a symbolic link; not followed (give the index's own path)"};
        if (!S_ISREG(st.st_mode)) return Error{Code::Usage, path + ": not a regular file; not a mimeuri index"};
        if (st.st_nlink != 1) return Error{Code::CantCreate, path + ": has other hard links; not writing to it"};
        if (::geteuid() == 0 && st.st_uid != 0)
            return Error{Code::CantCreate, path + ": owned by another user (uid " + std::to_string(st.st_uid) +
                                               "); not writing to it as root"};
        return false;
    }
    if (errno != ENOENT) return Error{Code::CantCreate, path + ": " + std::strerror(errno)};
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return Error{Code::CantCreate, path + ": cannot create the index: " + std::strerror(errno)};
    const int rc = ::fstat(fd, &st);
    ::close(fd);
    if (rc != 0) return Error{Code::CantCreate, path + ": " + std::strerror(errno)};
    return true;
}

} // namespace

Result<MidStore> MidStore::open_write(const std::string &path, int busy_ms)
{
    struct stat before {};
    auto created = check_index_path(path, before);
    if (!created) return created.error();
    // A file made here and never made an index (the open or the first commit failed) goes
    // again, so that the next run does not find an empty file it must refuse.
    struct Unmake {
        const std::string &path;
        const struct stat &made;
        bool armed;
        ~Unmake()
        {
            struct stat now {};
            if (armed && ::lstat(path.c_str(), &now) == 0 && now.st_dev == made.st_dev && now.st_ino == made.st_ino &&
                now.st_size == 0)
                ::unlink(path.c_str());
        }
    } unmake{path, before, *created};
    MidStore st;
    st.path_ = path;
    st.impl_ = std::make_unique<Impl>();
    st.impl_->writing = true;
    // NOFOLLOW: SQLite refuses a link put there since (its journal it opens O_NOFOLLOW).
    int rc = sqlite3_open_v2(path.c_str(), &st.impl_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) return Error{Code::CantCreate, path + ": cannot open the index: " + sqlite3_errstr(rc)};
    sqlite3_db_config(st.impl_->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(st.impl_->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_busy_timeout(st.impl_->db, busy_ms);
    Impl &im = *st.impl_;
    auto app = pragma_int(im.db, "PRAGMA application_id", path);
    if (!app) return app.error();
    auto ver = pragma_int(im.db, "PRAGMA user_version", path);
    if (!ver) return ver.error();
    auto tables = pragma_int(im.db, "SELECT count(*) FROM sqlite_schema", path);
    if (!tables) return tables.error();
    // The file SQLite has open (it has read it by now) is the one checked: not one swapped in.
    if (struct stat now {}; ::lstat(path.c_str(), &now) != 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino)
        return Error{Code::CantCreate, path + ": replaced while it was opened; not writing to it"};
    // A file that was there but holds no index (empty, or an SQLite file with no tables) is
    // someone else's: not taken over. Only the file made here starts empty.
    if (*tables == 0 && !*created)
        return Error{Code::Usage, path + ": not a mimeuri index (an empty file or an SQLite file with no tables); "
                                         "not writing to it (give a new name, or the index's own)"};
    if (*tables > 0 && *app != kApplicationId)
        return Error{Code::Usage, path + ": an SQLite file that is not a mimeuri index; not writing to it"};
    if (*tables > 0 && *ver != kSchemaVersion)
        return Error{Code::Usage, path + ": an index of format " + std::to_string(*ver) + ", this mimeuri writes format " +
                                      std::to_string(kSchemaVersion) + "; index into a new file"};
    // A rollback journal (not WAL): the index stays one self-contained file, to be copied to
    // shared storage and read there read-only (WAL needs a writable -shm beside it).
    // synchronous=NORMAL: a commit is durable once its journal is synced.
    // An index merged into is read by the same rules as one looked up: its schema is what
    // mimeuri writes (a trigger would run as whoever indexes), nothing in it trusted.
    if (*tables > 0)
        if (Status s = check_schema(im.db, path); !s) return s.error();
    if (Status s = im.exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; PRAGMA journal_mode=DELETE", path); !s)
        return s.error();
    if (Status s = st.make_schema(*tables == 0); !s) return s.error();
    unmake.armed = unmake.armed && *tables != 0;
    im.has_pages = true; // made by make_schema when it was missing
    return st;
}

Status MidStore::make_schema(bool empty)
{
    Impl &im = *impl_;
    const std::string &path = path_;
    if (empty) {
        if (Status s = im.begin(path); !s) return s;
        std::string init = std::string(kSchema) + kPagesTable + "PRAGMA application_id=" + std::to_string(kApplicationId) +
                           "; PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";";
        if (Status s = im.exec(init.c_str(), path); !s) return s;
        return commit();
    }
    // Indexes made before the lookup index, the files' tail and the pages table: brought up
    // to date here, in one transaction (the format number stays: older and newer readers
    // answer alike).
    auto lookup = schema_has(im.db, "messages_lookup", path);
    if (!lookup) return lookup.error();
    auto ci = schema_has(im.db, "messages_ci_id", path);
    if (!ci) return ci.error();
    auto tail = pragma_int(im.db, "SELECT count(*) FROM pragma_table_info('files') WHERE name = 'tail'", path);
    if (!tail) return tail.error();
    auto pages = schema_has(im.db, "pages", path);
    if (!pages) return pages.error();
    if (*lookup && *ci && *tail != 0 && *pages) return ok();
    if (Status s = im.begin(path); !s) return s;
    if (!*lookup)
        if (Status s = im.exec(kLookupIndex, path); !s) return s;
    if (!*ci)
        if (Status s = im.exec(kCiIndex, path); !s) return s;
    if (*tail == 0)
        if (Status s = im.exec("ALTER TABLE files ADD COLUMN tail TEXT", path); !s) return s;
    if (!*pages)
        if (Status s = im.exec(kPagesTable, path); !s) return s;
    return commit();
}

Status MidStore::begin_read()
{
    if (impl_->in_tx) return ok();
    if (Status s = impl_->exec("BEGIN", path_); !s) return s;
    impl_->in_tx = true;
    return ok();
}

void MidStore::end_read()
{
    if (!impl_->in_tx || impl_->writing) return;
    for (auto &[sql, st] : impl_->stmts) sqlite3_reset(st.get());
    (void)impl_->exec("COMMIT", path_);
    impl_->in_tx = false;
}

Result<std::int64_t> MidStore::data_version()
{
    auto q = impl_->prepare("PRAGMA data_version", path_);
    if (!q) return q.error();
    if (sqlite3_step(*q) != SQLITE_ROW) return impl_->fail("lookup", path_);
    std::int64_t v = sqlite3_column_int64(*q, 0);
    sqlite3_reset(*q);
    return v;
}

Result<std::optional<MidStore::Found>> MidStore::find(const std::string &id, bool cids)
{
    if (auto e = impl_->stopped(path_)) return *e;
    auto q = impl_->prepare("SELECT m.id, f.path, m.offset, m.number, m.section FROM messages m JOIN files f ON f.id = m.file "
                            "WHERE m.message_id = ?1 LIMIT 2",
                            path_);
    if (!q) return q.error();
    sqlite3_stmt *s = *q;
    put(s, 1, id);
    std::optional<Found> found;
    std::int64_t row = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (found) {
            found->count = 2;
            break;
        }
        found.emplace();
        found->count = 1;
        row = sqlite3_column_int64(s, 0);
        StoredMessage &m = found->first;
        m.message_id = id;
        m.source = text_of(s, 1);
        m.offset = sqlite3_column_int64(s, 2);
        m.number = static_cast<std::size_t>(sqlite3_column_int64(s, 3));
        m.section = text_of(s, 4);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return impl_->fail("lookup", path_);
    sqlite3_reset(s);
    if (found && found->count == 1 && found->first.section.empty() && impl_->has_pages) {
        auto p = impl_->prepare("SELECT path FROM pages WHERE message_id = ?1", path_);
        if (!p) return p.error();
        put(*p, 1, id);
        if ((rc = sqlite3_step(*p)) == SQLITE_ROW) found->first.page = text_of(*p, 0);
        else if (rc != SQLITE_DONE) return impl_->fail("lookup", path_);
        sqlite3_reset(*p);
    }
    if (!found || !cids || found->count > 1) return found;
    auto c = impl_->prepare("SELECT content_id, section FROM cids WHERE message = ?1", path_);
    if (!c) return c.error();
    put(*c, 1, row);
    std::size_t bytes = found->first.source.size() + found->first.page.size();
    while ((rc = sqlite3_step(*c)) == SQLITE_ROW) {
        bytes += static_cast<std::size_t>(sqlite3_column_bytes(*c, 0)) + static_cast<std::size_t>(sqlite3_column_bytes(*c, 1));
        if (bytes > kMaxAnswer) {
            sqlite3_reset(*c);
            return Error{Code::DataErr, path_ + ": lookup: the message's Content-IDs in the index come to more than " +
                                            std::to_string(kMaxAnswer >> 20) + " MiB; not an index mimeuri wrote"};
        }
        found->first.cids.emplace_back(text_of(*c, 0), text_of(*c, 1));
    }
    if (rc != SQLITE_DONE) return impl_->fail("lookup", path_);
    sqlite3_reset(*c);
    return found;
}

Result<std::optional<std::string>> MidStore::find_ci(const std::string &id)
{
    if (auto e = impl_->stopped(path_)) return *e;
    std::string key = mid_ci_key(id);
    if (key.empty()) return std::optional<std::string>();
    // The least of the ids whose key is `key`: those written with a lower-case domain (their
    // key is the id itself, not stored) and those with capitals (key stored). Two searches of
    // one row each (messages_lookup, messages_ci_id), whatever number of messages share an id:
    // a min() over both sets read every row of them.
    std::optional<std::string> out;
    auto q = impl_->prepare("SELECT 1 FROM messages WHERE message_id = ?1 LIMIT 1", path_);
    if (!q) return q.error();
    put(*q, 1, key);
    int rc = sqlite3_step(*q);
    if (rc == SQLITE_ROW) out = key;
    else if (rc != SQLITE_DONE) return impl_->fail("lookup", path_);
    sqlite3_reset(*q);
    auto c = impl_->prepare("SELECT message_id FROM messages WHERE ci_key = ?1 ORDER BY message_id LIMIT 1", path_);
    if (!c) return c.error();
    put(*c, 1, key);
    rc = sqlite3_step(*c);
    if (rc == SQLITE_ROW) {
        std::string least = text_of(*c, 0);
        if (!out || least < *out) out = std::move(least);
    } else if (rc != SQLITE_DONE) {
        return impl_->fail("lookup", path_);
    }
    sqlite3_reset(*c);
    return out;
}

void MidStore::set_interrupt(std::function<bool()> stop)
{
    impl_->stop = std::move(stop);
    sqlite3_progress_handler(impl_->db, impl_->stop ? Impl::kProgressSteps : 0, impl_->stop ? &Impl::progress : nullptr,
                             impl_.get());
}

Result<std::optional<MidStore::FileState>> MidStore::file(const std::string &path)
{
    auto q = impl_->prepare("SELECT id, size, mtime_ns, messages, tail FROM files WHERE path = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, path);
    std::optional<FileState> out;
    int rc = sqlite3_step(*q);
    if (rc == SQLITE_ROW)
        out = FileState{sqlite3_column_int64(*q, 0), path, sqlite3_column_int64(*q, 1), sqlite3_column_int64(*q, 2),
                        sqlite3_column_int64(*q, 3), text_of(*q, 4)};
    else if (rc != SQLITE_DONE)
        return impl_->fail("lookup", path_);
    sqlite3_reset(*q);
    return out;
}

Result<std::vector<std::pair<std::string, MidStore::FileState>>> MidStore::maildir_files(const std::string &dir)
{
    auto q = impl_->prepare("SELECT uniq, id, path, size, mtime_ns, messages FROM files WHERE maildir = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, dir);
    std::vector<std::pair<std::string, FileState>> out;
    int rc;
    while ((rc = sqlite3_step(*q)) == SQLITE_ROW)
        out.emplace_back(text_of(*q, 0), FileState{sqlite3_column_int64(*q, 1), text_of(*q, 2), sqlite3_column_int64(*q, 3),
                                                   sqlite3_column_int64(*q, 4), sqlite3_column_int64(*q, 5)});
    if (rc != SQLITE_DONE) return impl_->fail("lookup", path_);
    sqlite3_reset(*q);
    return out;
}

Result<std::vector<std::string>> MidStore::inputs()
{
    auto q = impl_->prepare("SELECT path FROM files WHERE maildir IS NULL UNION "
                            "SELECT DISTINCT maildir FROM files WHERE maildir IS NOT NULL",
                            path_);
    if (!q) return q.error();
    std::vector<std::string> out;
    int rc;
    while ((rc = sqlite3_step(*q)) == SQLITE_ROW) out.push_back(text_of(*q, 0));
    if (rc != SQLITE_DONE) return impl_->fail("lookup", path_);
    sqlite3_reset(*q);
    return out;
}

Result<std::int64_t> MidStore::begin_file(const std::string &path, std::int64_t size, std::int64_t mtime_ns,
                                          const std::string &maildir, const std::string &unique)
{
    if (Status s = impl_->begin_one_file(path_); !s) return s.error();
    // Its old messages (and their Content-IDs) go with the old record (ON DELETE CASCADE).
    auto del = impl_->prepare("DELETE FROM files WHERE path = ?1", path_);
    if (!del) return del.error();
    put(*del, 1, path);
    if (sqlite3_step(*del) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    auto ins = impl_->prepare("INSERT INTO files(path, size, mtime_ns, maildir, uniq) VALUES(?1, ?2, ?3, ?4, ?5)", path_);
    if (!ins) return ins.error();
    put(*ins, 1, path);
    put(*ins, 2, size);
    put(*ins, 3, mtime_ns);
    if (maildir.empty()) sqlite3_bind_null(*ins, 4);
    else put(*ins, 4, maildir);
    if (unique.empty()) sqlite3_bind_null(*ins, 5);
    else put(*ins, 5, unique);
    if (sqlite3_step(*ins) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(impl_->db));
}

Status MidStore::add_page(const std::string &message_id, const std::string &path)
{
    if (Status s = impl_->begin(path_); !s) return s;
    auto q = impl_->prepare("INSERT OR REPLACE INTO pages(message_id, path) VALUES(?1, ?2)", path_);
    if (!q) return q.error();
    put(*q, 1, message_id);
    put(*q, 2, path);
    const int rc = sqlite3_step(*q);
    sqlite3_reset(*q);
    if (rc != SQLITE_DONE) return impl_->fail("cannot record a page", path_);
    return ok();
}

Status MidStore::add(std::int64_t file, const StoredMessage &m)
{
    if (Status s = impl_->begin(path_); !s) return s;
    auto ins = impl_->prepare("INSERT INTO messages(file, number, offset, section, message_id, ci_key) "
                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                              path_);
    if (!ins) return ins.error();
    put(*ins, 1, file);
    put(*ins, 2, static_cast<std::int64_t>(m.number));
    put(*ins, 3, m.offset);
    put(*ins, 4, m.section);
    put(*ins, 5, m.message_id);
    std::string key = mid_ci_key(m.message_id);
    if (key.empty() || key == m.message_id) sqlite3_bind_null(*ins, 6);
    else put(*ins, 6, key);
    if (sqlite3_step(*ins) != SQLITE_DONE) return impl_->fail("cannot add to the index", path_);
    std::int64_t row = sqlite3_last_insert_rowid(impl_->db);
    for (const auto &[cid, section] : m.cids) {
        auto c = impl_->prepare("INSERT OR IGNORE INTO cids(message, content_id, section) VALUES(?1, ?2, ?3)", path_);
        if (!c) return c.error();
        put(*c, 1, row);
        put(*c, 2, cid);
        put(*c, 3, section);
        if (sqlite3_step(*c) != SQLITE_DONE) return impl_->fail("cannot add to the index", path_);
    }
    ++impl_->pending;
    return ok();
}

Result<std::int64_t> MidStore::grow_file(std::int64_t file, std::int64_t size, std::int64_t mtime_ns)
{
    if (Status s = impl_->begin_one_file(path_); !s) return s.error();
    auto q = impl_->prepare("UPDATE files SET size = ?2, mtime_ns = ?3, tail = NULL WHERE id = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, file);
    put(*q, 2, size);
    put(*q, 3, mtime_ns);
    if (sqlite3_step(*q) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    return file;
}

Status MidStore::end_file(std::int64_t file, std::int64_t messages, const std::string &tail)
{
    auto q = impl_->prepare("UPDATE files SET messages = ?2, tail = ?3 WHERE id = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, file);
    put(*q, 2, messages);
    if (tail.empty()) sqlite3_bind_null(*q, 3);
    else put(*q, 3, tail);
    if (sqlite3_step(*q) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    if (Status s = impl_->exec("RELEASE one_file", path_); !s) return s;
    // A file's rows and its record commit together: an interrupted run leaves no file half
    // indexed (it is read again next time).
    if (impl_->pending >= kBatch) return commit();
    return ok();
}

void MidStore::abandon_file()
{
    // Its record as it was before begin_file or grow_file: the next run reads it again.
    (void)impl_->exec("ROLLBACK TO one_file; RELEASE one_file", path_);
}

Status MidStore::rename_file(std::int64_t file, const std::string &path)
{
    if (Status s = impl_->begin(path_); !s) return s;
    auto q = impl_->prepare("UPDATE files SET path = ?2 WHERE id = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, file);
    put(*q, 2, path);
    if (sqlite3_step(*q) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    return ok();
}

Status MidStore::forget_file(std::int64_t file)
{
    if (Status s = impl_->begin(path_); !s) return s;
    auto q = impl_->prepare("DELETE FROM files WHERE id = ?1", path_);
    if (!q) return q.error();
    put(*q, 1, file);
    if (sqlite3_step(*q) != SQLITE_DONE) return impl_->fail("cannot update the index", path_);
    return ok();
}

Status MidStore::commit()
{
    if (!impl_->in_tx) return ok();
    if (Status s = impl_->exec("COMMIT", path_); !s) return s;
    impl_->in_tx = false;
    impl_->pending = 0;
    return ok();
}

Result<std::int64_t> MidStore::count_messages() { return pragma_int(impl_->db, "SELECT count(*) FROM messages", path_); }

} // namespace mimeuri
