// What an index file may be (src/index/mid_store.cc opens it): its schema exactly the one
// mimeuri writes, and the bounds of what a value read from it may be (src/index/mid_schema.cc).
#pragma once

#include "result.hh"

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mimeuri {

struct StmtFree {
    void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFree>;

// What a value read from an index may be (SQLITE_LIMIT_LENGTH on a reading connection): a
// path, a Message-ID, a Content-ID, a section. Larger is no index mimeuri wrote (a header
// field is at most --max-header-bytes, 1 MiB by default); the lookup fails (--on-error).
inline constexpr int kMaxValue = 4 << 20;
// What one lookup may return in all (its Content-IDs): a message of --max-parts entities
// holds far less.
inline constexpr std::size_t kMaxAnswer = 32u << 20;

// A text column of the current row (a NULL is "").
std::string text_of(sqlite3_stmt *s, int col);
// The integer a one-row query answers (a PRAGMA, a count); Code::Usage when the file
// answers none (not a mimeuri index).
Result<std::int64_t> pragma_int(sqlite3 *db, const char *sql, const std::string &path);
// Whether the index's schema holds a table or index of that name (one an older index lacks).
Result<bool> schema_has(sqlite3 *db, const std::string &name, const std::string &path);
// An index file is data, never code: its schema must be exactly what mimeuri writes (no
// view, trigger, virtual table, hidden or generated column, default but ours). Code::Usage:
// not a mimeuri index.
Status check_schema(sqlite3 *db, const std::string &path);

} // namespace mimeuri
