/* Where a --mid-index lookup's time goes (bench/archive.sh): the two queries MidStore::find
 * makes for each mid: reference (src/index/mid_store.cc, copied here word for word), run for the
 * same Message-IDs in four ways over the same index:
 *   autocommit   each statement its own read transaction, as --mid-index runs today
 *   transaction  every lookup inside one read transaction (BEGIN ... COMMIT)
 *   immutable    the file opened as file:INDEX?immutable=1 (no locks, no change checks)
 *   msg-only     autocommit, but the Content-ID query skipped (a mid: without /cid)
 *   tx+mmap      one read transaction, and the file mapped (PRAGMA mmap_size=1 GiB)
 *   tx+cache     one read transaction, and a 64 MiB page cache (PRAGMA cache_size=-65536)
 *   tx+mmap+unordered           tx+mmap, the lookup without ORDER BY (no sorter)
 *   tx+mmap+unordered+msg-only  the same, the Content-ID query skipped
 * Prints "MODE microseconds-per-lookup". Message-IDs are read from standard input, one a
 * line.  Build: cc -O2 -o mid_lookup bench/mid_lookup.c -lsqlite3
 * Usage: mid_lookup INDEX < ids */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *kFind = "SELECT m.id, f.path, m.offset, m.number, m.section FROM messages m JOIN files f ON f.id = m.file "
                           "WHERE m.message_id = ?1 ORDER BY m.file, m.number, m.id LIMIT 2";
/* The same lookup without the ORDER BY (a temporary B-tree sorter for each lookup): when
 * two rows come, the id is ambiguous and which comes first does not matter. */
static const char *kFindUnordered = "SELECT m.id, f.path, m.offset, m.number, m.section FROM messages m JOIN files f ON f.id = m.file "
                                    "WHERE m.message_id = ?1 LIMIT 2";
static const char *kCids = "SELECT content_id, section FROM cids WHERE message = ?1";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(sqlite3 *db, const char *what)
{
    fprintf(stderr, "mid_lookup: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    exit(1);
}

/* Returns how many of the ids were found. */
static long run(const char *uri, int flags, int one_tx, int cids, const char *pragma, const char *find, char **ids,
                long n, double *secs)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(uri, &db, flags, NULL) != SQLITE_OK) die(db, "open");
    sqlite3_busy_timeout(db, 10000);
    if (pragma && sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK) die(db, "pragma");
    sqlite3_stmt *f = NULL, *c = NULL;
    if (sqlite3_prepare_v3(db, find, -1, SQLITE_PREPARE_PERSISTENT, &f, NULL) != SQLITE_OK) die(db, "prepare");
    if (sqlite3_prepare_v3(db, kCids, -1, SQLITE_PREPARE_PERSISTENT, &c, NULL) != SQLITE_OK) die(db, "prepare");
    long found = 0;
    double t0 = now();
    if (one_tx && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) die(db, "begin");
    for (long i = 0; i < n; ++i) {
        sqlite3_reset(f);
        sqlite3_clear_bindings(f);
        sqlite3_bind_text(f, 1, ids[i], -1, SQLITE_TRANSIENT);
        sqlite3_int64 row = -1;
        int rc;
        while ((rc = sqlite3_step(f)) == SQLITE_ROW)
            if (row < 0) row = sqlite3_column_int64(f, 0);
        if (rc != SQLITE_DONE) die(db, "step");
        sqlite3_reset(f);
        if (row < 0) continue;
        ++found;
        if (!cids) continue;
        sqlite3_reset(c);
        sqlite3_clear_bindings(c);
        sqlite3_bind_int64(c, 1, row);
        while ((rc = sqlite3_step(c)) == SQLITE_ROW) (void)sqlite3_column_text(c, 0);
        if (rc != SQLITE_DONE) die(db, "step");
        sqlite3_reset(c);
    }
    if (one_tx && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die(db, "commit");
    *secs = now() - t0;
    sqlite3_finalize(f);
    sqlite3_finalize(c);
    sqlite3_close(db);
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mid_lookup INDEX < ids\n");
        return 64;
    }
    long n = 0, cap = 1024;
    char **ids = malloc(cap * sizeof *ids);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[n++] = strdup(line);
    }
    if (n == 0) return 0;
    char *uri = sqlite3_mprintf("file:%s?immutable=1", argv[1]);
    const int ro = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    struct {
        const char *name, *path;
        int flags, one_tx, cids;
        const char *pragma, *find;
    } modes[] = {
        {"autocommit", argv[1], ro, 0, 1, NULL, kFind},
        {"transaction", argv[1], ro, 1, 1, NULL, kFind},
        {"immutable", uri, ro | SQLITE_OPEN_URI, 0, 1, NULL, kFind},
        {"msg-only", argv[1], ro, 0, 0, NULL, kFind},
        {"tx+mmap", argv[1], ro, 1, 1, "PRAGMA mmap_size=1073741824", kFind},
        {"tx+cache", argv[1], ro, 1, 1, "PRAGMA cache_size=-65536", kFind},
        {"tx+mmap+unordered", argv[1], ro, 1, 1, "PRAGMA mmap_size=1073741824", kFindUnordered},
        {"tx+mmap+unordered+msg-only", argv[1], ro, 1, 0, "PRAGMA mmap_size=1073741824", kFindUnordered},
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; ++m) {
        double best = 1e9, secs;
        long found = 0;
        for (int r = 0; r < 3; ++r) {
            found = run(modes[m].path, modes[m].flags, modes[m].one_tx, modes[m].cids, modes[m].pragma, modes[m].find, ids, n,
                        &secs);
            if (secs < best) best = secs;
        }
        printf("%s %.2f %ld/%ld\n", modes[m].name, best * 1e6 / n, found, n);
    }
    sqlite3_free(uri);
    return 0;
}
