// What an index file may be (mid_schema.hh).
#include "mid_schema.hh"

#include <glib.h>

#include <set>
#include <string_view>
#include <vector>

namespace mimeuri {

namespace {

// The columns of each table mimeuri writes: name and declared type, in order; a column with
// a default names it. A table may lack its trailing optional columns (an older index).
struct Column {
    const char *name, *type, *dflt = nullptr;
};
struct Table {
    const char *name;
    std::vector<Column> columns;
    std::size_t required; // columns an older index has
    bool optional;        // a table an older index lacks
};
const std::vector<Table> &tables_written()
{
    static const std::vector<Table> t{
        {"files",
         {{"id", "INTEGER"}, {"path", "TEXT"}, {"size", "INTEGER"}, {"mtime_ns", "INTEGER"}, {"messages", "INTEGER", "0"},
          {"maildir", "TEXT"}, {"uniq", "TEXT"}, {"tail", "TEXT"}},
         7, false},
        {"messages",
         {{"id", "INTEGER"}, {"file", "INTEGER"}, {"number", "INTEGER"}, {"offset", "INTEGER"}, {"section", "TEXT"},
          {"message_id", "TEXT"}, {"ci_key", "TEXT"}},
         7, false},
        {"cids", {{"message", "INTEGER"}, {"content_id", "TEXT"}, {"section", "TEXT"}}, 3, false},
        {"pages", {{"message_id", "TEXT"}, {"path", "TEXT"}}, 2, true},
    };
    return t;
}

} // namespace

std::string text_of(sqlite3_stmt *s, int col)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    return t ? std::string(reinterpret_cast<const char *>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, col)))
             : std::string();
}

Result<std::int64_t> pragma_int(sqlite3 *db, const char *sql, const std::string &path)
{
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
        return Error{Code::Usage, path + ": not a mimeuri index (" + sqlite3_errmsg(db) + ")"};
    Stmt hold(s);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) return Error{Code::Usage, path + ": not a mimeuri index (" + sqlite3_errmsg(db) + ")"};
    return static_cast<std::int64_t>(sqlite3_column_int64(s, 0));
}

// Whether the index's schema holds a table or index of that name (one an older index lacks).
Result<bool> schema_has(sqlite3 *db, const std::string &name, const std::string &path)
{
    const std::string sql = "SELECT count(*) FROM sqlite_schema WHERE name = '" + name + "'";
    auto n = pragma_int(db, sql.c_str(), path);
    if (!n) return n.error();
    return *n > 0;
}

// An index file is data, never code: its schema must be exactly what mimeuri writes (the
// tables above, with no hidden or generated column and no default but ours; indexes of ours
// over plain columns; no view, trigger or virtual table), since a lookup runs whatever the
// schema says (a view in place of `messages` that builds a 400 MB blob per row, a trigger, a
// default evaluated for each row read). Code::Usage: not a mimeuri index.
Status check_schema(sqlite3 *db, const std::string &path)
{
    const std::set<std::string> indexes{"messages_lookup", "messages_ci_id", "messages_file", "files_maildir",
                                        "messages_id", "messages_ci", // before open_write migrated them
                                        "sqlite_autoindex_files_1", "sqlite_autoindex_cids_1", "sqlite_autoindex_pages_1"};
    auto refuse = [&](const std::string &why) {
        return Error{Code::Usage, path + ": not a mimeuri index (" + why + "); not read"};
    };
    sqlite3_stmt *raw = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema", -1, &raw, nullptr) != SQLITE_OK)
        return refuse(sqlite3_errmsg(db));
    Stmt q(raw);
    std::set<std::string> tables;
    std::vector<std::string> index_names;
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        const std::string type = text_of(raw, 0), name = text_of(raw, 1), table = text_of(raw, 2), sql = text_of(raw, 3);
        bool ours = false;
        for (const Table &t : tables_written()) ours = ours || table == t.name;
        if (!ours) return refuse("a " + type + " on " + table + ", which mimeuri never writes");
        if (type == "table") {
            if (name != table || g_ascii_strncasecmp(sql.c_str(), "CREATE TABLE", 12) != 0)
                return refuse("table " + name + " is not a plain table");
            tables.insert(name);
        } else if (type == "index") {
            if (!indexes.count(name)) return refuse("an index " + name + " mimeuri never makes");
            index_names.push_back(name);
        } else {
            return refuse("a " + type + " " + name + " (mimeuri's index holds tables and indexes only)");
        }
    }
    if (rc != SQLITE_DONE) return refuse(sqlite3_errmsg(db));
    for (const Table &t : tables_written()) {
        if (!tables.count(t.name)) {
            if (t.optional) continue;
            return refuse(std::string("no table ") + t.name);
        }
        const std::string sql = std::string("SELECT name, type, hidden, dflt_value FROM pragma_table_xinfo('") + t.name + "')";
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return refuse(sqlite3_errmsg(db));
        Stmt c(raw);
        std::size_t n = 0;
        while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
            if (n >= t.columns.size()) return refuse(std::string("table ") + t.name + " has more columns than mimeuri's");
            const Column &want = t.columns[n++];
            const bool no_default = sqlite3_column_type(raw, 3) == SQLITE_NULL;
            if (text_of(raw, 0) != want.name || text_of(raw, 1) != want.type || sqlite3_column_int(raw, 2) != 0 ||
                (want.dflt ? no_default || text_of(raw, 3) != want.dflt : !no_default))
                return refuse(std::string("table ") + t.name + ": column " + text_of(raw, 0) + " is not mimeuri's");
        }
        if (rc != SQLITE_DONE) return refuse(sqlite3_errmsg(db));
        if (n < t.required) return refuse(std::string("table ") + t.name + " lacks columns");
    }
    // Indexes over plain columns only: an expression in one is code too.
    for (const std::string &name : index_names) {
        const std::string sql = "SELECT count(*) FROM pragma_index_xinfo('" + name + "') WHERE cid < -1";
        auto n = pragma_int(db, sql.c_str(), path);
        if (!n) return n.error();
        if (*n != 0) return refuse("index " + name + " is over an expression");
    }
    return ok();
}


} // namespace mimeuri
