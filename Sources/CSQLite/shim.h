#ifndef ENGRAM_CSQLITE_SHIM_H
#define ENGRAM_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline int engram_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int n) {
  return sqlite3_bind_text(stmt, index, text, n, SQLITE_TRANSIENT);
}

static inline int engram_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *data, int n) {
  return sqlite3_bind_blob(stmt, index, data, n, SQLITE_TRANSIENT);
}

static inline void engram_sqlite3_result_text_transient(sqlite3_context *context, const char *text, int n) {
  sqlite3_result_text(context, text, n, SQLITE_TRANSIENT);
}

static inline void engram_sqlite3_result_blob_transient(sqlite3_context *context, const void *data, int n) {
  sqlite3_result_blob(context, data, n, SQLITE_TRANSIENT);
}

// sqlite3_config and sqlite3_db_config are variadic.
static inline int engram_sqlite3_db_config_defensive(sqlite3 *db, int on) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}

// Turns off SQLite's allocation statistics (a global mutex around every malloc and free).
// Only takes effect before SQLite initializes; returns SQLITE_MISUSE afterwards.
static inline int engram_sqlite3_config_memstatus(int on) {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

#endif
