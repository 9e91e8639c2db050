// The reference pass, beyond the run: the indexes mid: consults after the run's own
// messages (see ref_external.hh).
#include "ref_external.hh"

#include "mbox.hh"
#include "source.hh"

#include <atomic>
#include <gmodule.h>
#include <mutex>
#include <type_traits>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef MIMEURI_HAVE_NOTMUCH
#include <notmuch.h>
#endif

namespace mimeuri::refs {

namespace {

// Which process this is, as a number that changes in every child after a fork: a connection
// opened before a fork belongs to the parent. Cheaper than getpid(), a system call on each
// lookup (9% of a --mid-index run's time).
unsigned fork_generation()
{
    static std::atomic<unsigned> generation{0};
    static const int registered = ::pthread_atfork(nullptr, nullptr, [] { generation.fetch_add(1); });
    (void)registered;
    return generation.load(std::memory_order_relaxed);
}

class MidStoreFile final : public ExternalIndex {
public:
    explicit MidStoreFile(std::string path) : path_(std::move(path)) {}

    const RunIndex::Entry *find(const std::string &id, bool cids) override
    {
        MidStore &st = reading();
        auto c = found_.find(id);
        if (c != found_.end() && (c->second.with_cids || !cids || !c->second.entry)) return c->second.get();
        auto found = st.find(id, cids);
        if (!found) fail(found.error());
        if (c == found_.end()) {
            make_room();
            c = found_.try_emplace(id).first;
        }
        c->second.with_cids = cids;
        c->second.entry.reset();
        if (*found) c->second.entry = RunIndex::entry_of(std::move((*found)->first), (*found)->count);
        return c->second.get();
    }

    std::optional<std::string> find_ci(const std::string &id) override
    {
        MidStore &st = reading();
        if (auto c = found_ci_.find(id); c != found_ci_.end()) return c->second;
        auto found = st.find_ci(id);
        if (!found) fail(found.error());
        make_room();
        found_ci_[id] = *found;
        return *found;
    }

    void done() override
    {
        if (store_ && gen_ == fork_generation()) store_->end_read();
        reading_ = false;
    }

    void set_deadline(std::function<bool()> out_of_time) override
    {
        deadline_ = std::move(out_of_time);
        if (store_ && gen_ == fork_generation()) store_->set_interrupt(deadline_);
    }

private:
    [[noreturn]] static void fail(const Error &e)
    {
        if (e.kind == Kind::Limit) throw TimeLimit(e.message);
        throw std::runtime_error("--mid-index: " + e.message);
    }

    // What was looked up is kept from message to message (threads refer to the same messages
    // again and again) for as long as nobody writes to the index: each message's read
    // transaction starts by asking SQLite whether another connection has committed since,
    // and forgets all of it if so. At most kKept answers, then it starts afresh: memory stays
    // flat however large the archive.
    static constexpr std::size_t kKept = 16384;
    struct Cached {
        std::optional<RunIndex::Entry> entry; // nullopt: no message has the id
        bool with_cids{false};
        const RunIndex::Entry *get() const { return entry ? &*entry : nullptr; }
    };

    void make_room()
    {
        if (found_.size() + found_ci_.size() >= kKept) forget();
    }
    void forget()
    {
        found_.clear();
        found_ci_.clear();
    }

    // The store, inside this message's read transaction. At the first lookup of a message,
    // a file at the path that is not the one opened (replaced by a rename, as an index made
    // again elsewhere and moved in) is opened anew; writes to the file itself are seen
    // through SQLite's data_version below.
    MidStore &reading()
    {
        if (!reading_ && store_ && gen_ == fork_generation() && !same_file()) {
            store_.reset();
        }
        MidStore &st = store();
        if (reading_) return st;
        if (Status s = st.begin_read(); !s) fail(s.error());
        auto v = st.data_version();
        if (!v) fail(v.error());
        if (*v != version_) {
            forget();
            version_ = *v;
        }
        reading_ = true;
        return st;
    }

    MidStore &store()
    {
        if (!store_ || gen_ != fork_generation()) {
            // A connection opened before a fork is left alone (closing it could drop the
            // parent's locks); this process opens its own, and forgets what the other found.
            if (store_ && gen_ != fork_generation()) (void)store_.release();
            auto s = MidStore::open_read(path_);
            if (!s) fail(s.error());
            store_ = std::make_unique<MidStore>(std::move(*s));
            store_->set_interrupt(deadline_);
            gen_ = fork_generation();
            struct stat st {};
            opened_ = ::stat(path_.c_str(), &st) == 0 ? std::pair{st.st_dev, st.st_ino} : std::pair<dev_t, ino_t>{};
            forget();
            reading_ = false;
            version_ = -1;
        }
        return *store_;
    }

    bool same_file() const
    {
        struct stat st {};
        return ::stat(path_.c_str(), &st) == 0 && std::pair{st.st_dev, st.st_ino} == opened_;
    }

    std::string path_;
    std::unique_ptr<MidStore> store_;
    std::pair<dev_t, ino_t> opened_{}; // the file store_ has open
    std::function<bool()> deadline_;
    unsigned gen_{0};
    bool reading_{false};
    std::int64_t version_{-1};
    std::unordered_map<std::string, Cached> found_;
    std::unordered_map<std::string, std::optional<std::string>> found_ci_;
};

#ifdef MIMEURI_HAVE_NOTMUCH

// libnotmuch, loaded (GModule) the first time --notmuch needs it, not linked: every other
// run starts without it and what it brings (Xapian's relocations and page faults were a
// fifth of a one-message run's start-up; bench/README.md).
struct NotmuchApi {
    decltype(&notmuch_database_open_with_config) open_with_config{};
    decltype(&notmuch_status_to_string) status_to_string{};
    decltype(&notmuch_database_destroy) destroy{};
    decltype(&notmuch_database_find_message) find_message{};
    decltype(&notmuch_message_get_filename) get_filename{};
    decltype(&notmuch_message_destroy) message_destroy{};
    decltype(&notmuch_database_reopen) reopen{};
};

Result<const NotmuchApi *> notmuch_api()
{
    static NotmuchApi api;
    static std::string error;
    static std::once_flag once;
    std::call_once(once, [] {
        const char *name = "libnotmuch.so." G_STRINGIFY(LIBNOTMUCH_MAJOR_VERSION);
        GModule *m = g_module_open(name, static_cast<GModuleFlags>(G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL));
        if (!m) {
            error = g_module_error();
            return;
        }
        g_module_make_resident(m);
        auto take = [&](const char *symbol, auto &fn) {
            gpointer p = nullptr;
            if (!g_module_symbol(m, symbol, &p) || !p) {
                if (error.empty()) error = std::string(name) + " has no " + symbol;
                return;
            }
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
        };
        take("notmuch_database_open_with_config", api.open_with_config);
        take("notmuch_status_to_string", api.status_to_string);
        take("notmuch_database_destroy", api.destroy);
        take("notmuch_database_find_message", api.find_message);
        take("notmuch_message_get_filename", api.get_filename);
        take("notmuch_message_destroy", api.message_destroy);
        take("notmuch_database_reopen", api.reopen);
    });
    if (!error.empty()) return Error{Code::Usage, "not available: " + error + " (Debian: apt-get install libnotmuch5)"};
    return &api;
}

// The database opened read-only, with no notmuch configuration file read (config_path ""):
// what a user's ~/.notmuch-config says must not change what mimeuri resolves.
Result<notmuch_database_t *> open_notmuch_db(const std::string &path)
{
    auto nm = notmuch_api();
    if (!nm) return nm.error();
    notmuch_database_t *db = nullptr;
    char *msg = nullptr;
    // libnotmuch takes absolute paths only.
    GCharPtr abs(g_canonicalize_filename(path.c_str(), nullptr));
    notmuch_status_t st =
        (*nm)->open_with_config(abs.get(), NOTMUCH_DATABASE_MODE_READ_ONLY, "", nullptr, &db, &msg);
    if (st != NOTMUCH_STATUS_SUCCESS) {
        std::string why = msg ? msg : (*nm)->status_to_string(st);
        std::free(msg);
        while (!why.empty() && why.back() == '\n') why.pop_back();
        return Error{Code::NoInput, path + ": cannot open the notmuch database: " + why};
    }
    std::free(msg);
    return db;
}

class NotmuchIndex final : public ExternalIndex {
public:
    explicit NotmuchIndex(std::string path) : path_(std::move(path)) {}
    ~NotmuchIndex() override
    {
        if (db_ && gen_ == fork_generation()) (*notmuch_api())->destroy(db_); // loaded: it opened db_
    }

    // The file is parsed for its Content-IDs only when a mid:msg/cid asks; the cache holds
    // only such complete answers.
    const RunIndex::Entry *find(const std::string &id, bool cids) override
    {
        if (auto c = cache_.find(id); c != cache_.end()) return c->second ? &*c->second : nullptr;
        notmuch_message_t *msg = nullptr;
        notmuch_database_t *database = db(); // loads the library, or throws
        const NotmuchApi &nm = **notmuch_api();
        notmuch_status_t st = nm.find_message(database, id.c_str(), &msg);
        if (st != NOTMUCH_STATUS_SUCCESS)
            throw std::runtime_error(path_ + ": notmuch lookup: " + nm.status_to_string(st));
        std::optional<RunIndex::Entry> out;
        if (msg) {
            const char *file = nm.get_filename(msg);
            StoredMessage m;
            m.message_id = id;
            m.source = file ? file : "";
            nm.message_destroy(msg);
            // The Content-IDs of its parts, from the file notmuch names (any copy will do).
            if (cids) m.cids = content_ids(m.source, id);
            out = RunIndex::entry_of(m, 1);
        }
        if (!cids) {
            last_ = std::move(out);
            return last_ ? &*last_ : nullptr;
        }
        if (cache_.size() >= 256) cache_.clear();
        auto &held = cache_.emplace(id, std::move(out)).first->second;
        return held ? &*held : nullptr;
    }

    // notmuch compares ids exactly: the id with its domain in lower case is tried too.
    std::optional<std::string> find_ci(const std::string &id) override
    {
        std::string key = mid_ci_key(id);
        if (key.empty() || key == id || !find(key, false)) return std::nullopt;
        return key;
    }

    // The next lookup is another message's: it sees what `notmuch new` added since.
    void done() override { stale_ = true; }

private:
    notmuch_database_t *db()
    {
        if (db_ && gen_ == fork_generation() && stale_) {
            // Kept open from message to message (opening costs more than the lookups);
            // reopened (cheap: Xapian reads its version file) for each message's first.
            cache_.clear();
            notmuch_status_t st = (*notmuch_api())->reopen(db_, NOTMUCH_DATABASE_MODE_READ_ONLY);
            if (st != NOTMUCH_STATUS_SUCCESS)
                throw std::runtime_error(path_ + ": cannot open the notmuch database again: " +
                                         (*notmuch_api())->status_to_string(st));
        }
        stale_ = false;
        if (!db_ || gen_ != fork_generation()) {
            // One opened before a fork belongs to the parent: left alone, not destroyed.
            auto d = open_notmuch_db(path_);
            if (!d) throw std::runtime_error(d.error().message);
            db_ = *d;
            gen_ = fork_generation();
        }
        return db_;
    }

    std::vector<std::pair<std::string, std::string>> content_ids(const std::string &file, const std::string &id)
    {
        auto src = Source::open_path(file, std::size_t{8} << 20);
        if (!src) throw std::runtime_error(path_ + ": " + src.error().message);
        Segment seg;
        seg.msg_end = seg.next = src->size();
        auto ctx = MessageContext::parse(*src, seg, 1, false, Limits{});
        if (!ctx->message()) return {};
        for (StoredMessage &m : messages_of(*ctx))
            if (m.section.empty() && m.message_id == id) return std::move(m.cids);
        return {};
    }

    std::string path_;
    notmuch_database_t *db_{nullptr};
    unsigned gen_{0};
    bool stale_{false};
    std::map<std::string, std::optional<RunIndex::Entry>> cache_;
    std::optional<RunIndex::Entry> last_; // an answer without Content-IDs, not kept
};

#endif

// The index of each path, one per process, kept from message to message: the service (and a
// run's workers) build their passes anew for each message, and opening an index costs more
// than a message's lookups (bench/milter_index.sh). A message's passes hold a SharedIndex
// that forwards to it; one message at a time uses it (planning is not threaded).
class SharedIndex final : public ExternalIndex {
public:
    explicit SharedIndex(std::shared_ptr<ExternalIndex> index) : index_(std::move(index)) {}
    const RunIndex::Entry *find(const std::string &id, bool cids) override { return index_->find(id, cids); }
    std::optional<std::string> find_ci(const std::string &id) override { return index_->find_ci(id); }
    void done() override { index_->done(); }
    void set_deadline(std::function<bool()> out_of_time) override { index_->set_deadline(std::move(out_of_time)); }

private:
    std::shared_ptr<ExternalIndex> index_;
};

template <class Index> std::shared_ptr<ExternalIndex> kept(const std::string &path)
{
    static std::mutex m;
    static std::map<std::string, std::shared_ptr<ExternalIndex>> opened;
    std::lock_guard l(m);
    auto &index = opened[path];
    if (!index) index = std::make_shared<Index>(path);
    return index;
}

} // namespace

bool notmuch_available()
{
#ifdef MIMEURI_HAVE_NOTMUCH
    return true;
#else
    return false;
#endif
}

std::unique_ptr<ExternalIndex> open_notmuch(const std::string &database)
{
#ifdef MIMEURI_HAVE_NOTMUCH
    return std::make_unique<SharedIndex>(kept<NotmuchIndex>(database));
#else
    (void)database;
    return nullptr;
#endif
}

Status check_notmuch(const std::string &database)
{
#ifdef MIMEURI_HAVE_NOTMUCH
    auto db = open_notmuch_db(database);
    if (!db) return db.error();
    (*notmuch_api())->destroy(*db);
    return ok();
#else
    (void)database;
    return Error{Code::Usage, "not available: this mimeuri was built without libnotmuch "
                              "(meson setup -Dnotmuch=enabled, with libnotmuch-dev installed)"};
#endif
}


std::unique_ptr<ExternalIndex> open_mid_index(const std::string &path)
{
    return std::make_unique<SharedIndex>(kept<MidStoreFile>(path));
}

Status check_mid_index(const std::string &path)
{
    auto s = MidStore::open_read(path);
    if (!s) return s.error();
    // A first query reads the schema: a truncated or foreign file fails here, not mid-run.
    if (auto f = s->find(""); !f) return f.error();
    return ok();
}

} // namespace mimeuri::refs
