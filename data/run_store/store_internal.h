/* Run database internals shared by the store (readers, runs, migrations)
 * and the summary writer. The schema itself is in schema.c and documented
 * in docs/run_database.md. Not installed.
 *
 * For the summary writer: the chunk summary has first_value and
 * last_value (a level-of-detail column reports its first and last point
 * without decoding), the rule that a chunk's steps and wall times never go
 * down (tw__chunk_accepts says when to start a new chunk; the level-of-detail
 * reader relies on it), tw__chunk_bind with TW_CHUNK_COLUMNS (the one way to
 * write a chunk row) and tw__histogram_bind for histogram rows, the
 * migration table, and tw__store_connect marking
 * interrupted runs itself when it opens for writing.
 *
 * For the store: histograms count NaN values apart from the buckets
 * (summary.h). The writer stores count = the values that are not NaN (the
 * buckets' total, so rebinning adds up) and the NaNs in nan_count. Buckets
 * are written as
 * nbuckets little-endian float64 counts (as chunk.c's arrays); graphs go
 * into texts (kind 'graph' on the tag).
 *
 * Decisions (see docs/run_database.md for the why):
 * - Scalars are stored in chunks: one row per run of up to
 *   TW_CHUNK_POINTS consecutive points of one tag, holding three packed
 *   little-endian arrays (int64 steps, float64 wall times, float64 values:
 *   NaN and +-Inf survive, which SQLite's REAL column would not: it turns
 *   NaN into NULL) plus the chunk's summary (count, first/last step and
 *   wall time and value, min/max value and their steps, NaN count). Within
 *   a chunk steps and wall times never go down (a step going back, as in a
 *   resumed run, starts a new chunk), so [first, last] bounds every point of
 *   the chunk on either axis. Ingest is then a
 *   few row writes per flush, not one per point, and a level-of-detail
 *   query reads summaries for whole chunks inside a column and decodes only
 *   the chunks that straddle column edges.
 * - The writer keeps each tag's last chunk open: later flushes rewrite that
 *   row (same id) until it is full, so slowly written series still end up
 *   in full chunks. Readers' cursors are (chunk id, index in chunk).
 * - Histograms, text and graphs are one row per record.
 * - Every SQL statement binds its values; names are never spliced into SQL.
 */
#ifndef TW_RUN_STORE_INTERNAL_H
#define TW_RUN_STORE_INTERNAL_H

#include <glib.h>
#include <sqlite3.h>

#include "tw/run_store.h"

#define TW_SCHEMA_VERSION 3
/* PRAGMA application_id: "TWB1", so `file` and we can tell our files. */
#define TW_APPLICATION_ID 0x54574231
#define TW_CHUNK_POINTS 512
#define TW_HISTOGRAM_BUCKETS 64

/* A chunk being built or read: parallel arrays of n points. */
typedef struct {
    int n;
    int64_t steps[TW_CHUNK_POINTS];
    double wall_times[TW_CHUNK_POINTS];
    double values[TW_CHUNK_POINTS];
} tw_chunk;

/* The summary columns stored beside a chunk's arrays. */
typedef struct {
    int64_t count, nan_count;
    int64_t first_step, last_step;
    double first_wall_time, last_wall_time;
    double first_value, last_value;
    double min, max;            /* NaN when every value is NaN */
    int64_t min_step, max_step; /* the smallest step holding the extreme; -1 when every value is NaN */
} tw_chunk_summary;

void tw__chunk_summarize(const tw_chunk *c, tw_chunk_summary *s);
/* Whether a point can be appended to c: c is not full and neither the step
 * nor the wall time goes down. Otherwise the writer starts a new chunk. */
bool tw__chunk_accepts(const tw_chunk *c, int64_t step, double wall_time);
/* The columns a chunk row is written with, in tw__chunk_bind's order:
 *   "INSERT INTO scalar_chunks(tag_id, " TW_CHUNK_COLUMNS ") VALUES(?1, " TW_CHUNK_PARAMS(2) ")"
 *   "UPDATE scalar_chunks SET (" TW_CHUNK_COLUMNS ") = (" TW_CHUNK_PARAMS(1) ") WHERE id = ?14"
 * tw__chunk_bind binds the summary and the packed points (NaN as NULL in
 * the summary columns) to the 13 parameters from index `first` on. */
#define TW_CHUNK_COLUMNS                                                                                              \
    "count, nan_count, first_step, last_step, first_wall_time, last_wall_time, first_value, last_value, "            \
    "min_value, max_value, min_step, max_step, points"
#define TW_CHUNK_NCOLUMNS 13
int tw__chunk_bind(sqlite3_stmt *stmt, int first, const tw_chunk *c);
/* Pack into one blob (malloc'd, *size bytes) and back; unpack checks the
 * size against n and fails (-1, message naming the file at path and the
 * chunk) on a bad blob. */
void *tw__chunk_pack(const tw_chunk *c, int *size);
int tw__chunk_unpack(const char *path, const void *blob, int size, int64_t chunk_id, tw_chunk *c);

/* Histogram rows: the columns in tw__histogram_bind's order (9 parameters
 * from `first` on, NaN as NULL) and reading them back from a statement
 * that selects them from column `first` on. The buckets are a blob of
 * nbuckets little-endian float64 counts. */
#define TW_HISTOGRAM_COLUMNS "step, wall_time, count, min_value, max_value, sum, sum_squares, nbuckets, buckets"
#define TW_HISTOGRAM_NCOLUMNS 9
int tw__histogram_bind(sqlite3_stmt *stmt, int first, const tw_histogram *h);
int tw__histogram_read(const char *path, sqlite3_stmt *stmt, int first, int64_t id, tw_histogram *h);

/* Open the file (creating and migrating it unless read-only), in WAL mode
 * with a busy timeout, refusing newer or foreign files. On success the
 * connection is ready for the statements of schema.c's tables; opened for
 * writing, it has also marked the dead writers' runs as interrupted. It is
 * opened without SQLite's per-call mutex: one thread at a time uses it. */
sqlite3 *tw__store_connect(const char *path, bool read_only);

/* Migrations: steps[v] takes a file from schema v to v + 1 (steps[0]
 * creates the tables in an empty file); tw__store_migrate runs those from
 * the file's user_version up to `latest` in one transaction and sets
 * user_version. schema.c holds the real table; tests pass their own. */
typedef int (*tw_migration)(sqlite3 *db, const char *path);
int tw__store_migrate(sqlite3 *db, const char *path, const tw_migration *steps, int latest);

/* The file's schema version (PRAGMA user_version): a read-only store
 * reads older files as they are. -1 with a message on error. */
int tw__store_schema_version(sqlite3 *db, const char *path);

/* A store handle (tw/run_store.h). */
struct tw_run_store {
    sqlite3 *db;
    char *path;
    bool read_only;
    int version; /* the file's schema */
    GHashTable *statements; /* SQL text -> its prepared statement (statements.c) */
};

/* The store's statement for this SQL, prepared on its first use and kept
 * (statements.c); an SQLite result code, the message
 * in sqlite3_errmsg as after sqlite3_prepare_v2. Used in place of
 * prepare and finalize: tw__store_statement_done (NULL accepted) resets
 * it and clears its bindings, which every use must do before the statement is asked for again.
 * tw__store_run steps one with no result (BEGIN, COMMIT): SQLITE_DONE,
 * or the error's code with no message set. The table is made by tw__store_statements_new
 * and destroyed before the connection closes. */
int tw__store_statement(tw_run_store *store, const char *sql, sqlite3_stmt **stmt);
void tw__store_statement_done(sqlite3_stmt *stmt);
int tw__store_run(tw_run_store *store, const char *sql);
/* BEGIN for a reader's consistent view, unless one is open already (the
 * caller's tw_run_store_read_begin): *began says whether to end it with
 * tw__store_read_end. SQLITE_DONE or an error code. */
int tw__store_read_begin(tw_run_store *store, bool *began);
void tw__store_read_end(tw_run_store *store, bool began);
GHashTable *tw__store_statements_new(void);

/* When a run last wrote: the wall time of its newest row (scalar chunk,
 * histogram, text), or its start time when it has none; NaN on error. An
 * interrupted run ends there, not when the file is next opened. */
double tw__run_last_row_time(sqlite3 *db, int64_t run_id);

/* Mark as interrupted every running run of this host whose process is gone
 * (its pid no longer runs, or runs with another start time). */
int tw__store_mark_interrupted(sqlite3 *db, const char *path);

/* This process's identity as the store records it. */
const char *tw__store_host(void);
/* In clock ticks since boot, from /proc/PID/stat; -1 when no such process
 * (or a zombie). */
int64_t tw__process_start_time(int64_t pid);
/* Whether a running run's writer is known to be dead: same host, and its
 * pid is gone or runs with another start time. */
bool tw__writer_dead(const char *host, int64_t pid, int64_t process_start_time);

/* The names stored in runs.status and tags.kind, and back (-1: unknown). */
const char *tw__series_kind_name(tw_series_kind kind);
int tw__series_kind_parse(const char *name);
int tw__run_status_parse(const char *name);

/* REAL values with NaN as NULL (SQLite would turn NaN into NULL anyway),
 * and back. */
int tw__bind_real(sqlite3_stmt *stmt, int index, double value);
double tw__column_real(sqlite3_stmt *stmt, int index);

/* Run a statement with no result, with a message naming the file on error. */
int tw__store_exec(sqlite3 *db, const char *path, const char *sql);
int tw__store_sqlite_error(sqlite3 *db, const char *path, const char *what);

#endif
