#ifndef ENGRAM_CPOSTGRES_SHIM_H
#define ENGRAM_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

// libpq prints server notices (NOTICE, WARNING) to standard error unless told otherwise; the
// library never prints, so they are dropped.
static void engram_pq_ignore_notice(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

static inline void engram_pq_silence_notices(PGconn *conn) {
  PQsetNoticeProcessor(conn, engram_pq_ignore_notice, (void *)0);
}

// The PG_DIAG_* field codes are character-literal macros, which Swift does not import.
static inline int engram_pq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int engram_pq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int engram_pq_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int engram_pq_diag_message_hint(void) { return PG_DIAG_MESSAGE_HINT; }
static inline int engram_pq_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }

#endif
