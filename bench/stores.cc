// What one cold Message-ID lookup costs in three stores, for the same ids in the same order
// (bench/stores.sh; issue 17's "--mid-index lookups costing no more than the in-run index"):
//   hash    std::unordered_map in memory, keyed by Message-ID: the kind of table the run's own
//           index is (filters/ref_index.hh), built from the index's rows before the clock starts
//   lmdb    LMDB (Debian's liblmdb), one sub-database keyed by Message-ID with duplicates
//           (MDB_DUPSORT): the store bench/README.md and docs/design.md weigh against SQLite
//   sqlite  the mimeuri index file itself, MidStore::find's statement word for word (the
//           covering index messages_lookup, the file's path by a join, LIMIT 2 to see a second
//           copy), the index mapped (mmap_size) as a --mid-index run maps it
// Each lookup reads the answer (path, offset, number, section) and whether the id is held twice,
// as MidStore::find does; every ten lookups start a new read transaction (a message's ten links,
// as in bench/archive.sh's cold mbox). The ids: every Message-ID of the index, shuffled (seed 1),
// each looked up once; nothing is kept from one lookup to the next.
//
// Usage: stores INDEX STORE [ROUNDS]   STORE: hash, lmdb or sqlite. Prints
//   "STORE lookups found microseconds-per-lookup" (the best of ROUNDS, CPU time; 3 by default).
// Under `valgrind --tool=callgrind --instr-atstart=no` only the lookups are counted (the client
// requests below do nothing outside valgrind), so Ir / lookups is instructions per lookup.
#include <lmdb.h>
#include <sqlite3.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

struct Row {
    std::string id, path, section;
    long long offset = 0, number = 0;
};

[[noreturn]] void die(const char *what, const char *detail)
{
    std::fprintf(stderr, "stores: %s: %s\n", what, detail);
    std::exit(1);
}

double cpu_now()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

const char *kFind = "SELECT m.id, f.path, m.offset, m.number, m.section FROM messages m JOIN files f ON f.id = m.file "
                    "WHERE m.message_id = ?1 LIMIT 2";

std::vector<Row> read_rows(const char *index)
{
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(index, &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) die("open", sqlite3_errmsg(db));
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT m.message_id, f.path, m.offset, m.number, m.section FROM messages m JOIN files f ON f.id = m.file",
                           -1, &s, nullptr) != SQLITE_OK)
        die("read", sqlite3_errmsg(db));
    std::vector<Row> rows;
    auto text = [&](int c) { return std::string(reinterpret_cast<const char *>(sqlite3_column_text(s, c))); };
    while (sqlite3_step(s) == SQLITE_ROW) rows.push_back({text(0), text(1), text(4), sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3)});
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rows;
}

// LMDB's value: offset, number, then path and section each after its length.
std::string pack(const Row &r)
{
    std::string v(16, '\0');
    std::memcpy(v.data(), &r.offset, 8);
    std::memcpy(v.data() + 8, &r.number, 8);
    for (const std::string *s : {&r.path, &r.section}) {
        auto n = static_cast<std::uint32_t>(s->size());
        v.append(reinterpret_cast<const char *>(&n), 4).append(*s);
    }
    return v;
}

Row unpack(const std::string &id, const char *p)
{
    Row r;
    r.id = id;
    std::memcpy(&r.offset, p, 8);
    std::memcpy(&r.number, p + 8, 8);
    p += 16;
    for (std::string *s : {&r.path, &r.section}) {
        std::uint32_t n;
        std::memcpy(&n, p, 4);
        s->assign(p + 4, n);
        p += 4 + n;
    }
    return r;
}

struct Lmdb {
    MDB_env *env = nullptr;
    MDB_dbi dbi = 0;
    std::string dir;
    explicit Lmdb(const std::vector<Row> &rows)
    {
        char tmpl[] = "/tmp/mimeuri-stores-XXXXXX";
        if (!mkdtemp(tmpl)) die("mkdtemp", std::strerror(errno));
        dir = tmpl;
        if (mdb_env_create(&env) || mdb_env_set_mapsize(env, std::size_t{1} << 34) || mdb_env_set_maxdbs(env, 2))
            die("lmdb", "env");
        if (int rc = mdb_env_open(env, dir.c_str(), MDB_NOSYNC, 0600)) die("lmdb open", mdb_strerror(rc));
        MDB_txn *t = nullptr;
        mdb_txn_begin(env, nullptr, 0, &t);
        if (int rc = mdb_dbi_open(t, "ids", MDB_CREATE | MDB_DUPSORT, &dbi)) die("lmdb dbi", mdb_strerror(rc));
        for (const Row &r : rows) {
            std::string v = pack(r);
            MDB_val k{r.id.size(), const_cast<char *>(r.id.data())}, d{v.size(), v.data()};
            if (int rc = mdb_put(t, dbi, &k, &d, 0)) die("lmdb put", mdb_strerror(rc));
        }
        if (int rc = mdb_txn_commit(t)) die("lmdb commit", mdb_strerror(rc));
    }
    ~Lmdb()
    {
        mdb_env_close(env);
        for (const char *f : {"/data.mdb", "/lock.mdb"}) unlink((dir + f).c_str());
        rmdir(dir.c_str());
    }
};

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3) die("usage", "stores INDEX hash|lmdb|sqlite [ROUNDS]");
    const std::string store = argv[2];
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
    std::vector<Row> rows = read_rows(argv[1]);
    std::vector<std::string> ids;
    for (const Row &r : rows) ids.push_back(r.id);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(1));
    long found = 0;
    double best = 1e99;
    auto timed = [&](auto &&lookup_one, auto &&begin_tx, auto &&end_tx) {
        for (int round = 0; round < rounds; ++round) {
            found = 0;
            double t0 = cpu_now();
            CALLGRIND_START_INSTRUMENTATION;
            for (std::size_t i = 0; i < ids.size(); ++i) {
                if (i % 10 == 0) {
                    if (i) end_tx();
                    begin_tx();
                }
                Row r;
                int count = lookup_one(ids[i], r);
                found += count == 1 && !r.path.empty();
            }
            end_tx();
            CALLGRIND_STOP_INSTRUMENTATION;
            best = std::min(best, cpu_now() - t0);
            if (RUNNING_ON_VALGRIND) break; // one round is the count
        }
    };
    if (store == "hash") {
        std::unordered_map<std::string, Row> by_id;
        std::unordered_map<std::string, int> count;
        for (const Row &r : rows)
            if (++count[r.id] == 1) by_id.emplace(r.id, r);
        timed(
            [&](const std::string &id, Row &out) {
                auto it = by_id.find(id);
                if (it == by_id.end()) return 0;
                out = it->second;
                return count.find(id)->second > 1 ? 2 : 1;
            },
            [] {}, [] {});
    } else if (store == "lmdb") {
        Lmdb db(rows);
        MDB_txn *t = nullptr;
        if (int rc = mdb_txn_begin(db.env, nullptr, MDB_RDONLY, &t)) die("lmdb txn", mdb_strerror(rc));
        mdb_txn_reset(t);
        timed(
            [&](const std::string &id, Row &out) {
                MDB_cursor *c = nullptr;
                mdb_cursor_open(t, db.dbi, &c);
                MDB_val k{id.size(), const_cast<char *>(id.data())}, v;
                int n = 0;
                if (mdb_cursor_get(c, &k, &v, MDB_SET_KEY) == 0) {
                    out = unpack(id, static_cast<const char *>(v.mv_data));
                    n = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP) == 0 ? 2 : 1;
                }
                mdb_cursor_close(c);
                return n;
            },
            [&] { mdb_txn_renew(t); }, [&] { mdb_txn_reset(t); });
        mdb_txn_abort(t);
    } else if (store == "sqlite") {
        sqlite3 *db = nullptr;
        if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) die("open", sqlite3_errmsg(db));
        sqlite3_exec(db, "PRAGMA mmap_size=1073741824", nullptr, nullptr, nullptr);
        sqlite3_stmt *f = nullptr;
        if (sqlite3_prepare_v3(db, kFind, -1, SQLITE_PREPARE_PERSISTENT, &f, nullptr) != SQLITE_OK) die("prepare", sqlite3_errmsg(db));
        auto text = [&](int c) {
            const unsigned char *t = sqlite3_column_text(f, c);
            return std::string(reinterpret_cast<const char *>(t), static_cast<std::size_t>(sqlite3_column_bytes(f, c)));
        };
        timed(
            [&](const std::string &id, Row &out) {
                sqlite3_bind_text(f, 1, id.data(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
                int n = 0;
                while (sqlite3_step(f) == SQLITE_ROW)
                    if (++n == 1) out = Row{id, text(1), text(4), sqlite3_column_int64(f, 2), sqlite3_column_int64(f, 3)};
                sqlite3_reset(f);
                return std::min(n, 2);
            },
            [&] { sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr); }, [&] { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); });
        sqlite3_finalize(f);
        sqlite3_close(db);
    } else {
        die("unknown store", store.c_str());
    }
    std::printf("%s %zu %ld %.3f\n", store.c_str(), ids.size(), found, best * 1e6 / static_cast<double>(ids.size()));
    return 0;
}
