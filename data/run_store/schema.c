/* The run database's schema and its versions: opening a file checks what it
 * is before anything writes to it (a read-only look first), creates the
 * tables in a new file, migrates an older one, and refuses a newer or a
 * foreign one. docs/run_database.md documents every table and column. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>

#include "tw/error.h"
#include "store_internal.h"

#define BUSY_TIMEOUT_MS 10000

/* ---- version 1 ------------------------------------------------------------ */

#define SUMMARY_COLUMNS                                                                                              \
    "count, nan_count, first_step, last_step, first_wall_time, last_wall_time, first_value, last_value, min_value, " \
    "max_value, min_step, max_step"

static const char schema_v1[] =
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'stopped', 'failed', 'interrupted')),"
    "  start_time REAL NOT NULL,"
    "  end_time REAL,"
    "  host TEXT NOT NULL,"
    "  pid INTEGER NOT NULL,"
    "  process_start_time INTEGER NOT NULL,"
    "  model_json TEXT,"
    "  hparams_json TEXT,"
    "  metrics_json TEXT,"
    "  notes TEXT NOT NULL DEFAULT '',"
    "  logs_lost_from_step INTEGER,"
    "  logs_lost_reason TEXT);"
    "CREATE TABLE tags ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('scalar', 'histogram', 'text', 'graph')),"
    "  UNIQUE (run_id, name));"
    "CREATE TABLE scalar_chunks ("
    "  id INTEGER PRIMARY KEY,"
    "  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
    "  count INTEGER NOT NULL,"
    "  nan_count INTEGER NOT NULL,"
    "  first_step INTEGER NOT NULL,"
    "  last_step INTEGER NOT NULL,"
    "  first_wall_time REAL NOT NULL,"
    "  last_wall_time REAL NOT NULL,"
    "  first_value REAL,"
    "  last_value REAL,"
    "  min_value REAL,"
    "  max_value REAL,"
    "  min_step INTEGER,"
    "  max_step INTEGER,"
    "  points BLOB NOT NULL);"
    /* Cursors walk a tag's chunks by id. Level-of-detail queries scan a
     * range of one of the two covering indexes: they hold every summary
     * column, so whole chunks cost an index entry, not a table row. */
    "CREATE INDEX scalar_chunks_by_tag ON scalar_chunks (tag_id);"
    "CREATE INDEX scalar_chunks_by_step ON scalar_chunks (tag_id, first_step, last_step, " SUMMARY_COLUMNS ");"
    "CREATE INDEX scalar_chunks_by_wall_time ON scalar_chunks (tag_id, first_wall_time, last_wall_time, "
    SUMMARY_COLUMNS ");"
    "CREATE TABLE histograms ("
    "  id INTEGER PRIMARY KEY,"
    "  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
    "  step INTEGER NOT NULL,"
    "  wall_time REAL NOT NULL,"
    "  count REAL NOT NULL,"
    "  min_value REAL,"
    "  max_value REAL,"
    "  sum REAL,"
    "  sum_squares REAL,"
    "  nbuckets INTEGER NOT NULL,"
    "  buckets BLOB NOT NULL);"
    "CREATE INDEX histograms_by_step ON histograms (tag_id, step);"
    "CREATE TABLE texts ("
    "  id INTEGER PRIMARY KEY,"
    "  tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
    "  step INTEGER NOT NULL,"
    "  wall_time REAL NOT NULL,"
    "  body TEXT NOT NULL);"
    "CREATE INDEX texts_by_tag ON texts (tag_id);";

static int create_v1(sqlite3 *db, const char *path)
{
    char *stamp = g_strdup_printf("PRAGMA application_id = %d", TW_APPLICATION_ID);
    int status = tw__store_exec(db, path, schema_v1) || tw__store_exec(db, path, stamp) ? -1 : 0;
    g_free(stamp);
    return status;
}

/* ---- version 2: why a run failed ------------------------------------------- */

static int migrate_v2(sqlite3 *db, const char *path)
{
    return tw__store_exec(db, path, "ALTER TABLE runs ADD COLUMN failure_reason TEXT");
}

/* ---- version 3: run management and sweeps ---------------------------------- */

/* A colour the person chose ("#rrggbb", NULL: the palette's by order), a
 * pin, the sweep a run is a trial of, and when the window moved it to the
 * trash (deleted for good when the window closes; NULL: not trashed). */
static int migrate_v3(sqlite3 *db, const char *path)
{
    return tw__store_exec(db, path,
                          "ALTER TABLE runs ADD COLUMN color TEXT;"
                          "ALTER TABLE runs ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;"
                          "ALTER TABLE runs ADD COLUMN sweep TEXT;"
                          "ALTER TABLE runs ADD COLUMN trashed_at REAL;");
}
/* ---- tables added when absent --------------------------------------------- */

/* Image summaries (tw_summary_image, imported event files' images): a
 * table of their own, by run and tag name, since tags.kind's CHECK lists
 * the kinds of version 1. Created on every open for writing rather than as
 * a schema version, so files of other versions open as before; a
 * read-only reader of a file without it reads no images. */
static const char images_table[] =
    "CREATE TABLE IF NOT EXISTS images ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
    "  tag TEXT NOT NULL,"
    "  step INTEGER NOT NULL,"
    "  sample INTEGER NOT NULL,"
    "  wall_time REAL NOT NULL,"
    "  width INTEGER NOT NULL,"
    "  height INTEGER NOT NULL,"
    "  format TEXT NOT NULL,"
    "  data BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS images_by_tag ON images (run_id, tag, step, sample);";

/* Tensor summaries (tw_summary_tensor: an evaluation's confusion matrix,
 * ...), as images: their own table by run and tag name, added when absent.
 * shape is a JSON array; data the values row-major, little-endian, as the
 * dtype holds them. */
static const char tensors_table[] =
    "CREATE TABLE IF NOT EXISTS tensors ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
    "  tag TEXT NOT NULL,"
    "  step INTEGER NOT NULL,"
    "  wall_time REAL NOT NULL,"
    "  dtype TEXT NOT NULL,"
    "  shape TEXT NOT NULL,"
    "  data BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS tensors_by_tag ON tensors (run_id, tag, step);";

/* steps[v] takes schema v to v + 1. */
static const tw_migration schema_steps[TW_SCHEMA_VERSION] = {create_v1, migrate_v2, migrate_v3};

/* ---- helpers -------------------------------------------------------------- */

int tw__store_sqlite_error(sqlite3 *db, const char *path, const char *what)
{
    return tw_error_set("%s: %s: %s", path, what, sqlite3_errmsg(db));
}

int tw__store_exec(sqlite3 *db, const char *path, const char *sql)
{
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) == SQLITE_OK)
        return 0;
    tw_error_set("%s: %s", path, message ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    return -1;
}

/* The single integer a PRAGMA or query returns; -1 with a message. */
static int query_int(sqlite3 *db, const char *path, const char *sql, int64_t *value)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        *value = sqlite3_column_int64(stmt, 0);
    else if (rc == SQLITE_NOTADB)
        tw_error_set("%s: not a run database (not an SQLite file)", path);
    else
        tw__store_sqlite_error(db, path, "cannot read the file");
    sqlite3_finalize(stmt);
    return rc == SQLITE_ROW ? 0 : -1;
}

int tw__store_schema_version(sqlite3 *db, const char *path)
{
    int64_t version = -1;
    return query_int(db, path, "PRAGMA user_version", &version) ? -1 : (int)version;
}

static int set_user_version(sqlite3 *db, const char *path, int version)
{
    char *sql = g_strdup_printf("PRAGMA user_version = %d", version);
    int status = tw__store_exec(db, path, sql);
    g_free(sql);
    return status;
}

/* ---- versions ------------------------------------------------------------- */

/* Whether this program can use a file of that version (0: a new file). */
static int check_version(const char *path, int64_t version, int latest, bool read_only)
{
    if (version > latest)
        return tw_error_set("%s: written by a newer Tensor Workbench (schema %lld; this one reads up to %d)", path,
                            (long long)version, latest);
    if (version < 0)
        return tw_error_set("%s: unknown run database schema %lld", path, (long long)version);
    if (read_only && version == 0)
        return tw_error_set("%s: an empty file, not a run database yet", path);
    /* A read-only open reads an older file as it is (the columns it lacks
     * read as NULL): it may be in a folder nobody can write to. */
    return 0;
}

int tw__store_migrate(sqlite3 *db, const char *path, const tw_migration *steps, int latest)
{
    int64_t version = 0;
    if (tw__store_exec(db, path, "BEGIN IMMEDIATE"))
        return -1;
    int status = query_int(db, path, "PRAGMA user_version", &version);
    if (status == 0)
        status = check_version(path, version, latest, false);
    for (int v = (int)version; status == 0 && v < latest; v++)
        status = steps[v](db, path) || set_user_version(db, path, v + 1) ? -1 : 0;
    if (status == 0)
        return tw__store_exec(db, path, "COMMIT");
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* What a file is, judged from a read-only connection: ours (its schema
 * version checked), empty (version 0), or refused. */
static int inspect(sqlite3 *db, const char *path, bool read_only)
{
    int64_t application_id = 0, version = 0, objects = 0;
    if (query_int(db, path, "PRAGMA application_id", &application_id) ||
        query_int(db, path, "PRAGMA user_version", &version) ||
        query_int(db, path, "SELECT count(*) FROM sqlite_master", &objects))
        return -1;
    if (application_id == TW_APPLICATION_ID)
        return check_version(path, version, TW_SCHEMA_VERSION, read_only);
    if (application_id == 0 && objects == 0)
        return check_version(path, 0, TW_SCHEMA_VERSION, read_only);
    return tw_error_set("%s: not a run database (an SQLite file of another program); it was left untouched", path);
}

/* ---- connecting ----------------------------------------------------------- */

static int configure(sqlite3 *db, const char *path, bool read_only)
{
    if (tw__store_exec(db, path, "PRAGMA foreign_keys = ON"))
        return -1;
    if (read_only)
        return 0;
    if (tw__store_exec(db, path, "PRAGMA synchronous = NORMAL"))
        return -1;
    /* Answers the mode it is in: "wal", or the old mode when it could not
     * switch (a file system without shared memory, say). */
    sqlite3_stmt *stmt = NULL;
    int ok = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &stmt, NULL) == SQLITE_OK &&
             sqlite3_step(stmt) == SQLITE_ROW &&
             g_ascii_strcasecmp((const char *)sqlite3_column_text(stmt, 0), "wal") == 0;
    if (!ok)
        tw__store_sqlite_error(db, path, "cannot switch to write-ahead logging");
    sqlite3_finalize(stmt);
    return ok ? 0 : -1;
}

/* The busy timeout comes before the first query: a file another process
 * is creating, migrating or checkpointing is locked for a moment, and
 * without it that query fails at once with "database is locked". Readers
 * and writers alike wait. */
static sqlite3 *open_file(const char *path, const char *name, int flags)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(name, &db, flags, NULL) != SQLITE_OK) {
        tw_error_set("%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    return db;
}

/* Whether a read-only connection cannot read the file as it is: a file in
 * write-ahead-log mode needs its -shm beside it, which a folder (or mount)
 * we cannot write to does not let SQLite create. */
static bool needs_immutable(sqlite3 *db)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    rc &= 0xff;
    return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

/* The file opened as immutable: no locks, no side files. Only when the
 * -shm could neither be opened nor created, so no writer can be using it
 * (a writer always has the -shm). */
static sqlite3 *open_immutable(const char *path)
{
    char *escaped = g_uri_escape_string(path, "/", TRUE);
    char *uri = g_strconcat("file:", escaped, "?immutable=1", NULL);
    sqlite3 *db = open_file(path, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
    g_free(uri);
    g_free(escaped);
    return db;
}

/* An existing file, opened read-only and inspected: the connection to keep
 * when reading, or NULL when it is refused (untouched). */
static sqlite3 *open_checked(const char *path, bool read_only)
{
    sqlite3 *db = open_file(path, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    if (db && needs_immutable(db)) {
        sqlite3_close(db);
        db = open_immutable(path);
    }
    if (db && (inspect(db, path, read_only) || (read_only && configure(db, path, true)))) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static sqlite3 *open_for_writing(const char *path)
{
    sqlite3 *db = open_file(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    if (!db)
        return NULL;
    if (sqlite3_db_readonly(db, "main") == 1)
        tw_error_set("%s: cannot write to the file (it is read-only)", path);
    else if (configure(db, path, false) == 0 && tw__store_migrate(db, path, schema_steps, TW_SCHEMA_VERSION) == 0 &&
             tw__store_exec(db, path, images_table) == 0 &&
             tw__store_exec(db, path, tensors_table) == 0 && tw__store_mark_interrupted(db, path) == 0)
        return db;
    sqlite3_close(db);
    return NULL;
}

sqlite3 *tw__store_connect(const char *path, bool read_only)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT || read_only) {
            tw_error_set("%s: %s", path, errno == ENOENT ? "no such file" : g_strerror(errno));
            return NULL;
        }
        return open_for_writing(path);
    }
    if (S_ISDIR(st.st_mode)) {
        tw_error_set("%s: is a folder, not a run database", path);
        return NULL;
    }
    /* SQLite would wait forever opening a FIFO with no writer, and read a
     * device as an empty file. */
    if (!S_ISREG(st.st_mode)) {
        tw_error_set("%s: is not a regular file (a device, pipe or socket), not a run database", path);
        return NULL;
    }
    sqlite3 *db = open_checked(path, read_only);
    if (!db || read_only)
        return db;
    sqlite3_close(db);
    return open_for_writing(path);
}

bool tw_run_store_is_new(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0)
        return true;
    /* not open_checked: its inspection refuses exactly this state */
    sqlite3 *db = open_file(path, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    int64_t version = -1;
    bool fresh = db && query_int(db, path, "PRAGMA user_version", &version) == 0 && version == 0;
    sqlite3_close(db);
    return fresh;
}
