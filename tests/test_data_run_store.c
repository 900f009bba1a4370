/* The run database: the schema and its versions (new, empty, newer,
 * foreign and non-SQLite files, the latter untouched to the byte),
 * migrations, interrupted runs (a dead pid, a live pid of another start
 * time, a zombie), runs listed, renamed, deleted with all their series and
 * annotated; scalars read after cursors across full chunks and a growing
 * open chunk, from the end cursor and by range, NaN and infinities kept; level-of-detail columns checked
 * against a pass over every point on random series; histograms and texts;
 * statements kept per connection read on across schema changes and errors.
 * Fixtures are written as the summary writer writes: chunks through
 * tw__chunk_accepts and tw__chunk_bind, rows with bound SQL. */
#include <float.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_store/store_internal.h"
#include "tw/error.h"

/* ---- scratch files -------------------------------------------------------- */

typedef struct {
    char *dir, *path;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    f->dir = g_dir_make_tmp("twb-run-store-XXXXXX", NULL);
    g_assert_nonnull(f->dir);
    f->path = g_build_filename(f->dir, "runs.db", NULL);
}

static void remove_tree(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        char *child = g_build_filename(path, name, NULL);
        if (g_file_test(child, G_FILE_TEST_IS_DIR))
            remove_tree(child);
        else
            g_assert_cmpint(g_remove(child), ==, 0);
        g_free(child);
    }
    if (d)
        g_dir_close(d);
    g_assert_cmpint(g_rmdir(path), ==, 0);
}

static void teardown(fixture *f, gconstpointer data)
{
    remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->path);
}

static int count_files(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    int n = 0;
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    return n;
}

static GBytes *file_bytes(const char *path)
{
    char *data = NULL;
    gsize size = 0;
    g_assert_true(g_file_get_contents(path, &data, &size, NULL));
    return g_bytes_new_take(data, size);
}

/* ---- raw SQL for fixtures ------------------------------------------------- */

static void exec(sqlite3 *db, const char *sql)
{
    char *message = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &message);
    if (rc != SQLITE_OK)
        g_error("%s: %s", sql, message);
}

static int64_t query_int(sqlite3 *db, const char *sql, int64_t arg)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    if (sqlite3_bind_parameter_count(stmt) > 0)
        sqlite3_bind_int64(stmt, 1, arg);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    int64_t value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
}

static double query_double(sqlite3 *db, const char *sql, int64_t arg)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, arg);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    double value = sqlite3_column_double(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
}

static sqlite3 *raw_open(const char *path)
{
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
    return db;
}

static int64_t add_run(sqlite3 *db, const char *name, const char *status, double start_time, const char *host,
                       int64_t pid, int64_t process_start_time)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db,
                                       "INSERT INTO runs (name, status, start_time, end_time, host, pid, "
                                       "process_start_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, status, -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 3, start_time);
    if (strcmp(status, "running") != 0)
        sqlite3_bind_double(stmt, 4, start_time + 60);
    sqlite3_bind_text(stmt, 5, host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 6, pid);
    sqlite3_bind_int64(stmt, 7, process_start_time);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
    return sqlite3_last_insert_rowid(db);
}

/* A finished run of this host. */
static int64_t add_finished_run(sqlite3 *db, const char *name, double start_time)
{
    return add_run(db, name, "finished", start_time, tw__store_host(), 1, 1);
}

static int64_t add_tag(sqlite3 *db, int64_t run_id, const char *name, const char *kind)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, "INSERT INTO tags (run_id, name, kind) VALUES (?1, ?2, ?3)", -1, &stmt,
                                       NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 3, kind, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
    return sqlite3_last_insert_rowid(db);
}

/* A scalar series written as the summary writer does: the last chunk stays
 * open and is rewritten (same id) on every flush until it cannot take the
 * next point. */
typedef struct {
    sqlite3 *db;
    int64_t tag_id, open_id; /* -1: the open chunk has no row yet */
    tw_chunk chunk;
} series_writer;

static void series_flush(series_writer *w)
{
    if (w->chunk.n == 0)
        return;
    sqlite3_stmt *stmt = NULL;
    const char *sql = w->open_id < 0
                          ? "INSERT INTO scalar_chunks (tag_id, " TW_CHUNK_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, "
                            "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
                          : "UPDATE scalar_chunks SET (" TW_CHUNK_COLUMNS ") = (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                            "?10, ?11, ?12, ?13, ?14) WHERE id = ?1";
    g_assert_cmpint(sqlite3_prepare_v2(w->db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, w->open_id < 0 ? w->tag_id : w->open_id);
    g_assert_cmpint(tw__chunk_bind(stmt, 2, &w->chunk), ==, 0);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
    if (w->open_id < 0)
        w->open_id = sqlite3_last_insert_rowid(w->db);
}

static void series_add(series_writer *w, tw_scalar_point p)
{
    if (!tw__chunk_accepts(&w->chunk, p.step, p.wall_time)) {
        series_flush(w);
        w->chunk.n = 0;
        w->open_id = -1;
    }
    int i = w->chunk.n++;
    w->chunk.steps[i] = p.step;
    w->chunk.wall_times[i] = p.wall_time;
    w->chunk.values[i] = p.value;
}

/* Adds the points in one transaction, then flushes the open chunk. */
static void series_write(series_writer *w, const tw_scalar_point *points, int64_t n)
{
    exec(w->db, "BEGIN");
    for (int64_t i = 0; i < n; i++)
        series_add(w, points[i]);
    series_flush(w);
    exec(w->db, "COMMIT");
}

static series_writer *series_writer_new(sqlite3 *db, int64_t tag_id)
{
    series_writer *w = g_new0(series_writer, 1);
    *w = (series_writer){.db = db, .tag_id = tag_id, .open_id = -1};
    return w;
}

static void add_histogram(sqlite3 *db, int64_t tag_id, const tw_histogram *h)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db,
                                       "INSERT INTO histograms (tag_id, " TW_HISTOGRAM_COLUMNS
                                       ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, tag_id);
    g_assert_cmpint(tw__histogram_bind(stmt, 2, h), ==, 0);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
}

static void add_text(sqlite3 *db, int64_t tag_id, int64_t step, const char *body)
{
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, "INSERT INTO texts (tag_id, step, wall_time, body) VALUES (?1, ?2, ?3, ?4)",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, tag_id);
    sqlite3_bind_int64(stmt, 2, step);
    sqlite3_bind_double(stmt, 3, 1000.0 + step);
    sqlite3_bind_text(stmt, 4, body, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
}

static tw_run_store *open_store(const char *path, unsigned flags)
{
    tw_run_store *store = tw_run_store_open(path, flags);
    if (!store)
        g_error("%s", tw_last_error());
    return store;
}

/* Opening fails with exactly this message. */
static void assert_open_fails(const char *path, unsigned flags, const char *message)
{
    tw_error_clear();
    g_assert_null(tw_run_store_open(path, flags));
    g_assert_cmpstr(tw_last_error(), ==, message);
}

/* ---- the schema and its versions ------------------------------------------ */

static void test_new_file(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    g_assert_cmpstr(tw_run_store_path(store), ==, f->path);
    sqlite3 *db = store->db;
    g_assert_cmpint(query_int(db, "PRAGMA user_version", 0), ==, TW_SCHEMA_VERSION);
    g_assert_cmpint(query_int(db, "PRAGMA application_id", 0), ==, TW_APPLICATION_ID);
    g_assert_cmpint(query_int(db, "PRAGMA foreign_keys", 0), ==, 1);
    g_assert_cmpint(query_int(db, "PRAGMA busy_timeout", 0), ==, 10000);
    g_assert_cmpint(query_int(db, "PRAGMA synchronous", 0), ==, 1); /* NORMAL */
    g_assert_cmpint(query_int(db,
                              "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                              "('runs', 'tags', 'scalar_chunks', 'histograms', 'texts')",
                              0),
                    ==, 5);
    sqlite3_stmt *stmt = NULL;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, NULL);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==, "wal");
    sqlite3_finalize(stmt);
    tw_run_info *runs = NULL;
    int n = -1;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    tw_run_info_free(runs, n);
    tw_run_store_close(store);

    /* Opened again, for reading and for writing: the same file. */
    store = open_store(f->path, TW_STORE_READ_ONLY);
    g_assert_cmpint(query_int(store->db, "PRAGMA user_version", 0), ==, TW_SCHEMA_VERSION);
    tw_run_store_close(store);
    tw_run_store_close(open_store(f->path, 0));
    tw_run_store_close(NULL);
}

/* An empty file becomes a run database; read-only, it is not one yet. */
static void test_empty_file(fixture *f, gconstpointer data)
{
    g_assert_true(tw_run_store_is_new(f->path)); /* absent */
    g_assert_true(g_file_set_contents(f->path, "", 0, NULL));
    g_assert_true(tw_run_store_is_new(f->path));
    char *message = g_strdup_printf("%s: an empty file, not a run database yet", f->path);
    assert_open_fails(f->path, TW_STORE_READ_ONLY, message);
    g_free(message);
    tw_run_store *store = open_store(f->path, 0);
    g_assert_cmpint(query_int(store->db, "PRAGMA user_version", 0), ==, TW_SCHEMA_VERSION);
    tw_run_store_close(store);
    g_assert_false(tw_run_store_is_new(f->path));

    /* So does an SQLite file without tables (as one being created looks
     * to a reader before the schema is committed). */
    char *other = g_build_filename(f->dir, "blank.db", NULL);
    sqlite3 *db = raw_open(other);
    exec(db, "CREATE TABLE t (a); DROP TABLE t");
    sqlite3_close(db);
    g_assert_true(tw_run_store_is_new(other));
    store = open_store(other, 0);
    g_assert_cmpint(query_int(store->db, "PRAGMA application_id", 0), ==, TW_APPLICATION_ID);
    tw_run_store_close(store);
    g_free(other);
}

static void test_missing_file(fixture *f, gconstpointer data)
{
    char *message = g_strdup_printf("%s: no such file", f->path);
    assert_open_fails(f->path, TW_STORE_READ_ONLY, message);
    g_free(message);
    g_assert_false(g_file_test(f->path, G_FILE_TEST_EXISTS));
    message = g_strdup_printf("%s: is a folder, not a run database", f->dir);
    assert_open_fails(f->dir, 0, message);
    g_free(message);
}

/* A newer schema is refused, for reading and writing, and left as it was. */
static void test_newer_file(fixture *f, gconstpointer data)
{
    tw_run_store_close(open_store(f->path, 0));
    sqlite3 *db = raw_open(f->path);
    exec(db, "PRAGMA user_version = 4");
    sqlite3_close(db);
    GBytes *before = file_bytes(f->path);
    char *message = g_strdup_printf("%s: written by a newer Tensor Workbench (schema 4; this one reads up to 3)",
                                    f->path);
    assert_open_fails(f->path, 0, message);
    assert_open_fails(f->path, TW_STORE_READ_ONLY, message);
    GBytes *after = file_bytes(f->path);
    g_assert_true(g_bytes_equal(before, after));
    g_free(message);
    g_bytes_unref(before);
    g_bytes_unref(after);

    db = raw_open(f->path);
    exec(db, "PRAGMA user_version = -2");
    sqlite3_close(db);
    message = g_strdup_printf("%s: unknown run database schema -2", f->path);
    assert_open_fails(f->path, 0, message);
    g_free(message);
}

/* Refused without a byte changed, and without a journal left beside it. */
static void assert_refused_untouched(fixture *f, const char *message_end)
{
    GBytes *before = file_bytes(f->path);
    int files = count_files(f->dir);
    char *message = g_strdup_printf("%s: %s", f->path, message_end);
    assert_open_fails(f->path, 0, message);
    assert_open_fails(f->path, TW_STORE_READ_ONLY, message);
    g_free(message);
    GBytes *after = file_bytes(f->path);
    g_assert_true(g_bytes_equal(before, after));
    g_assert_cmpint(count_files(f->dir), ==, files);
    g_bytes_unref(before);
    g_bytes_unref(after);
}

static void test_foreign_file(fixture *f, gconstpointer data)
{
    const char *foreign = "not a run database (an SQLite file of another program); it was left untouched";
    sqlite3 *db = raw_open(f->path);
    exec(db, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')");
    sqlite3_close(db);
    assert_refused_untouched(f, foreign);

    /* Another program's application_id, even without tables. */
    g_remove(f->path);
    db = raw_open(f->path);
    exec(db, "PRAGMA application_id = 1234; PRAGMA user_version = 1");
    sqlite3_close(db);
    assert_refused_untouched(f, foreign);
}

static void test_not_sqlite(fixture *f, gconstpointer data)
{
    GString *text = g_string_new("");
    for (int i = 0; i < 200; i++)
        g_string_append_printf(text, "line %d of a text file that is no database\n", i);
    g_assert_true(g_file_set_contents(f->path, text->str, (gssize)text->len, NULL));
    g_string_free(text, TRUE);
    assert_refused_untouched(f, "not a run database (not an SQLite file)");

    /* Random bytes, and SQLite's magic over garbage. */
    guint8 junk[8192];
    GRand *rand = g_rand_new_with_seed(5);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (guint8)g_rand_int(rand);
    g_rand_free(rand);
    g_assert_true(g_file_set_contents(f->path, (const char *)junk, sizeof junk, NULL));
    assert_refused_untouched(f, "not a run database (not an SQLite file)");
    memcpy(junk, "SQLite format 3", 16);
    g_assert_true(g_file_set_contents(f->path, (const char *)junk, sizeof junk, NULL));
    GBytes *before = file_bytes(f->path);
    g_assert_null(tw_run_store_open(f->path, 0));
    g_assert_nonnull(strstr(tw_last_error(), f->path));
    GBytes *after = file_bytes(f->path);
    g_assert_true(g_bytes_equal(before, after));
    g_bytes_unref(before);
    g_bytes_unref(after);
}

/* ---- migrations ----------------------------------------------------------- */

static int add_shade_column(sqlite3 *db, const char *path)
{
    return tw__store_exec(db, path, "ALTER TABLE runs ADD COLUMN shade TEXT NOT NULL DEFAULT 'blue'");
}

static int failing_step(sqlite3 *db, const char *path)
{
    tw__store_exec(db, path, "CREATE TABLE half_done (a)");
    return tw_error_set("%s: the step to schema 5 failed", path);
}

/* A version-4 step on top of the real schema: runs once, in a transaction;
 * a failing step leaves the file at its version with nothing of it. */
static void test_migrations(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    add_finished_run(store->db, "kept", 10);
    tw_run_store_close(store);

    sqlite3 *db = raw_open(f->path);
    const tw_migration steps[] = {NULL, NULL, NULL, add_shade_column, failing_step};
    g_assert_cmpint(tw__store_migrate(db, f->path, steps, 4), ==, 0);
    g_assert_cmpint(query_int(db, "PRAGMA user_version", 0), ==, 4);
    g_assert_cmpint(query_int(db, "SELECT count(*) FROM runs WHERE name = 'kept' AND shade = 'blue'", 0), ==, 1);
    g_assert_cmpint(tw__store_migrate(db, f->path, steps, 4), ==, 0); /* nothing to do */

    g_assert_cmpint(tw__store_migrate(db, f->path, steps, 5), ==, -1);
    char *message = g_strdup_printf("%s: the step to schema 5 failed", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(query_int(db, "PRAGMA user_version", 0), ==, 4);
    g_assert_cmpint(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'", 0), ==, 0);
    g_assert_cmpint(sqlite3_get_autocommit(db), ==, 1);

    /* A file newer than the steps known. */
    const tw_migration three_steps[] = {NULL, NULL, NULL};
    g_assert_cmpint(tw__store_migrate(db, f->path, three_steps, 3), ==, -1);
    message = g_strdup_printf("%s: written by a newer Tensor Workbench (schema 4; this one reads up to 3)", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    sqlite3_close(db);
}

/* ---- interrupted runs ----------------------------------------------------- */

static const char *run_status(sqlite3 *db, const char *name, char *buffer)
{
    sqlite3_stmt *stmt = NULL;
    sqlite3_prepare_v2(db, "SELECT status, end_time IS NULL FROM runs WHERE name = ?1", -1, &stmt, NULL);
    sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    g_snprintf(buffer, 32, "%s%s", sqlite3_column_text(stmt, 0), sqlite3_column_int(stmt, 1) ? "" : "+end");
    sqlite3_finalize(stmt);
    return buffer;
}

static tw_run_status info_status(tw_run_store *store, const char *name)
{
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, name, &run), ==, 0);
    tw_run_status status = run.status;
    g_assert_true(status == TW_RUN_RUNNING ? isnan(run.end_time) : run.end_time > 0);
    tw_run_info_clear(&run);
    return status;
}

static void test_process_start_time(void)
{
    int64_t mine = tw__process_start_time(getpid());
    g_assert_cmpint(mine, >, 0);
    g_assert_cmpint(tw__process_start_time(getpid()), ==, mine);
    g_assert_cmpint(tw__process_start_time(0), ==, -1);
    g_assert_cmpint(tw__process_start_time(INT32_MAX), ==, -1);
    g_assert_false(tw__writer_dead(tw__store_host(), getpid(), mine));
    g_assert_true(tw__writer_dead(tw__store_host(), getpid(), mine + 1));
    g_assert_false(tw__writer_dead("another-host.example", INT32_MAX, 1));
    g_assert_cmpstr(tw__store_host(), ==, g_get_host_name());
}

/* A child that lives until killed. */
static pid_t start_child(void)
{
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    while (tw__process_start_time(pid) < 0)
        g_usleep(1000);
    return pid;
}

static void test_interrupted(fixture *f, gconstpointer data)
{
    pid_t child = start_child();
    int64_t child_start = tw__process_start_time(child);
    const char *host = tw__store_host();
    tw_run_store *store = open_store(f->path, 0);
    sqlite3 *db = store->db;
    add_run(db, "dead-pid", "running", 1, host, INT32_MAX, 5);
    add_run(db, "reused-pid", "running", 2, host, child, child_start + 1);
    add_run(db, "alive", "running", 3, host, child, child_start);
    add_run(db, "mine", "running", 4, host, getpid(), tw__process_start_time(getpid()));
    add_run(db, "elsewhere", "running", 5, "another-host.example", INT32_MAX, 5);
    add_run(db, "done", "finished", 6, host, INT32_MAX, 5);
    tw_run_store_close(store);

    /* Read-only: reported as interrupted, the file unchanged. */
    GBytes *before = file_bytes(f->path);
    store = open_store(f->path, TW_STORE_READ_ONLY);
    g_assert_cmpint(info_status(store, "dead-pid"), ==, TW_RUN_INTERRUPTED);
    g_assert_cmpint(info_status(store, "reused-pid"), ==, TW_RUN_INTERRUPTED);
    g_assert_cmpint(info_status(store, "alive"), ==, TW_RUN_RUNNING);
    g_assert_cmpint(info_status(store, "mine"), ==, TW_RUN_RUNNING);
    g_assert_cmpint(info_status(store, "elsewhere"), ==, TW_RUN_RUNNING);
    g_assert_cmpint(info_status(store, "done"), ==, TW_RUN_FINISHED);
    char status[32];
    g_assert_cmpstr(run_status(store->db, "dead-pid", status), ==, "running");
    tw_run_store_close(store);
    GBytes *after = file_bytes(f->path);
    g_assert_true(g_bytes_equal(before, after));
    g_bytes_unref(before);
    g_bytes_unref(after);

    /* For writing: marked, with an end time. */
    store = open_store(f->path, 0);
    db = store->db;
    g_assert_cmpstr(run_status(db, "dead-pid", status), ==, "interrupted+end");
    g_assert_cmpstr(run_status(db, "reused-pid", status), ==, "interrupted+end");
    g_assert_cmpstr(run_status(db, "alive", status), ==, "running");
    g_assert_cmpstr(run_status(db, "mine", status), ==, "running");
    g_assert_cmpstr(run_status(db, "elsewhere", status), ==, "running");
    g_assert_cmpstr(run_status(db, "done", status), ==, "finished+end");
    tw_run_store_close(store);

    /* Killed: a zombie until reaped, dead either way. */
    g_assert_cmpint(kill(child, SIGKILL), ==, 0);
    while (tw__process_start_time(child) >= 0)
        g_usleep(1000);
    store = open_store(f->path, TW_STORE_READ_ONLY);
    g_assert_cmpint(info_status(store, "alive"), ==, TW_RUN_INTERRUPTED);
    tw_run_store_close(store);
    int wstatus;
    g_assert_cmpint(waitpid(child, &wstatus, 0), ==, child);
    store = open_store(f->path, 0);
    g_assert_cmpstr(run_status(store->db, "alive", status), ==, "interrupted+end");
    g_assert_cmpstr(run_status(store->db, "mine", status), ==, "running");
    tw_run_store_close(store);
}


/* An interrupted run ends at its last row (a histogram here, after its
 * scalars), not when the file is next opened; one without rows at its
 * start. Read-only and for writing alike. */
static void test_interrupted_ends_at_last_row(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    sqlite3 *db = store->db;
    int64_t run = add_run(db, "dead", "running", 1000, tw__store_host(), INT32_MAX, 5);
    add_run(db, "empty", "running", 2000, tw__store_host(), INT32_MAX, 5);
    series_writer *w = series_writer_new(db, add_tag(db, run, "train/loss", "scalar"));
    for (int i = 0; i < 700; i++)
        series_add(w, (tw_scalar_point){i, 1000.0 + i / 100.0, 1.0});
    series_flush(w);
    g_free(w);
    double buckets[2] = {1, 1};
    tw_histogram h = {5, 1012.5, 2, -1, 1, 0, 2, 2, buckets};
    add_histogram(db, add_tag(db, run, "weights/w", "histogram"), &h);
    tw_run_store_close(store);

    for (int pass = 0; pass < 2; pass++) {
        store = open_store(f->path, pass == 0 ? TW_STORE_READ_ONLY : 0);
        tw_run_info info;
        g_assert_cmpint(tw_run_store_get_run(store, "dead", &info), ==, 0);
        g_assert_cmpint(info.status, ==, TW_RUN_INTERRUPTED);
        g_assert_cmpfloat(info.end_time, ==, 1012.5);
        tw_run_info_clear(&info);
        g_assert_cmpint(tw_run_store_get_run(store, "empty", &info), ==, 0);
        g_assert_cmpfloat(info.end_time, ==, 2000);
        tw_run_info_clear(&info);
        tw_run_store_close(store);
    }
}

/* A damaged chunk's message names the file it is in. */
static void test_damaged_chunk_names_file(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t tag = add_tag(store->db, add_finished_run(store->db, "r", 1), "x", "scalar");
    series_writer *w = series_writer_new(store->db, tag);
    series_add(w, (tw_scalar_point){1, 1.0, 1.0});
    series_flush(w);
    g_free(w);
    exec(store->db, "UPDATE scalar_chunks SET points = x'0102'");
    tw_series_cursor cursor = {0};
    tw_scalar_point *points = NULL;
    int64_t n = 0;
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &n), ==, -1);
    char *message = g_strdup_printf("%s: scalar chunk 1: 2 bytes is not 1 to 512 points of 24 bytes", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    tw_run_store_close(store);
}

/* A schema-1 file (before failure_reason) reads as it is, read-only, and
 * is migrated when opened for writing. */
static void test_schema_1_file(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    add_finished_run(store->db, "old", 1);
    exec(store->db, "ALTER TABLE runs DROP COLUMN failure_reason; ALTER TABLE runs DROP COLUMN color; "
                    "ALTER TABLE runs DROP COLUMN pinned; ALTER TABLE runs DROP COLUMN sweep; "
                    "ALTER TABLE runs DROP COLUMN trashed_at; PRAGMA user_version = 1");
    tw_run_store_close(store);

    store = open_store(f->path, TW_STORE_READ_ONLY);
    tw_run_info *runs = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(runs[0].name, ==, "old");
    g_assert_null(runs[0].failure_reason);
    tw_run_info_free(runs, n);
    tw_run_store_close(store);

    store = open_store(f->path, 0);
    g_assert_cmpint(query_int(store->db, "PRAGMA user_version", 0), ==, 3);
    exec(store->db, "UPDATE runs SET status = 'failed', failure_reason = 'the loss is NaN'");
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "old", &run), ==, 0);
    g_assert_cmpstr(run.failure_reason, ==, "the loss is NaN");
    g_assert_null(run.color);
    g_assert_false(run.pinned);
    g_assert_null(run.sweep);
    tw_run_info_clear(&run);
    g_assert_cmpint(tw_run_store_set_pinned(store, "old", true), ==, 0);
    tw_run_store_close(store);
}

/* ---- runs ----------------------------------------------------------------- */

/* Two runs, each with a scalar, a histogram and a text tag. */
static void add_full_run(sqlite3 *db, const char *name, double start_time)
{
    int64_t run = add_finished_run(db, name, start_time);
    series_writer *w = series_writer_new(db, add_tag(db, run, "train/loss", "scalar"));
    for (int i = 0; i < 1000; i++)
        series_add(w, (tw_scalar_point){i, 100.0 + i, 1.0 / (i + 1)});
    series_flush(w);
    g_free(w);
    double buckets[4] = {1, 2, 3, 4};
    tw_histogram h = {5, 105.0, 10, -1, 1, 0.5, 3, 4, buckets};
    add_histogram(db, add_tag(db, run, "weights/dense/kernel", "histogram"), &h);
    add_text(db, add_tag(db, run, "notes", "text"), 3, "hello");
}

static void test_runs(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    add_full_run(store->db, "second", 200);
    add_full_run(store->db, "first", 100);
    exec(store->db, "UPDATE runs SET model_json = '{\"class_name\": \"Sequential\"}', hparams_json = '{\"lr\": 0.1}', "
                    "metrics_json = '{\"accuracy\": 0.9}', logs_lost_from_step = 70, "
                    "logs_lost_reason = 'disk full' WHERE name = 'first'");

    tw_run_info *runs = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpstr(runs[0].name, ==, "first");
    g_assert_cmpstr(runs[1].name, ==, "second");
    g_assert_cmpint(runs[0].status, ==, TW_RUN_FINISHED);
    g_assert_cmpfloat(runs[0].start_time, ==, 100);
    g_assert_cmpfloat(runs[0].end_time, ==, 160);
    g_assert_cmpstr(runs[0].host, ==, tw__store_host());
    g_assert_cmpstr(runs[0].model_json, ==, "{\"class_name\": \"Sequential\"}");
    g_assert_cmpstr(runs[0].hparams_json, ==, "{\"lr\": 0.1}");
    g_assert_cmpstr(runs[0].metrics_json, ==, "{\"accuracy\": 0.9}");
    g_assert_cmpstr(runs[0].notes, ==, "");
    g_assert_cmpint(runs[0].logs_lost_from_step, ==, 70);
    g_assert_cmpstr(runs[0].logs_lost_reason, ==, "disk full");
    g_assert_null(runs[1].model_json);
    g_assert_cmpint(runs[1].logs_lost_from_step, ==, -1);
    g_assert_null(runs[1].logs_lost_reason);
    tw_run_info_free(runs, n);
    g_assert_cmpstr(tw_run_status_name(TW_RUN_INTERRUPTED), ==, "interrupted");

    tw_run_info run;
    char *message = g_strdup_printf("%s: no run named 'third'", f->path);
    g_assert_cmpint(tw_run_store_get_run(store, "third", &run), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_assert_cmpint(tw_run_store_rename_run(store, "third", "x"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_assert_cmpint(tw_run_store_delete_run(store, "third"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_assert_cmpint(tw_run_store_set_notes(store, "third", "x"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);

    /* Rename: a name is data, never SQL. */
    const char *odd = "it's \"odd\"; DROP TABLE runs; --";
    g_assert_cmpint(tw_run_store_rename_run(store, "second", odd), ==, 0);
    g_assert_cmpint(tw_run_store_rename_run(store, odd, "first"), ==, -1);
    message = g_strdup_printf("%s: cannot rename run '%s': a run named 'first' exists already", f->path, odd);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(tw_run_store_rename_run(store, odd, ""), ==, -1);
    g_assert_cmpint(tw_run_store_get_run(store, odd, &run), ==, 0);
    int64_t renamed_id = run.id;
    tw_run_info_clear(&run);

    g_assert_cmpint(tw_run_store_set_notes(store, "first", "lr too high\nsecond line"), ==, 0);
    g_assert_cmpint(tw_run_store_get_run(store, "first", &run), ==, 0);
    g_assert_cmpstr(run.notes, ==, "lr too high\nsecond line");
    int64_t first_id = run.id;
    tw_run_info_clear(&run);

    /* Delete: the run's tags and every row of its series go with it. */
    const char *rows = "SELECT (SELECT count(*) FROM tags) + (SELECT count(*) FROM scalar_chunks) + "
                       "(SELECT count(*) FROM histograms) + (SELECT count(*) FROM texts)";
    g_assert_cmpint(query_int(store->db, rows, 0), ==, 2 * (3 + 2 + 1 + 1));
    g_assert_cmpint(tw_run_store_delete_run(store, "first"), ==, 0);
    g_assert_cmpint(query_int(store->db, rows, 0), ==, 3 + 2 + 1 + 1);
    g_assert_cmpint(query_int(store->db, "SELECT count(*) FROM tags WHERE run_id = ?1", first_id), ==, 0);
    g_assert_cmpint(query_int(store->db, "SELECT count(*) FROM tags WHERE run_id = ?1", renamed_id), ==, 3);

    /* A run still being written (by this very process) is not deleted. */
    add_run(store->db, "live", "running", 300, tw__store_host(), getpid(), tw__process_start_time(getpid()));
    g_assert_cmpint(tw_run_store_delete_run(store, "live"), ==, -1);
    message = g_strdup_printf("%s: run 'live' is still being written (process %d); stop it first", f->path,
                              (int)getpid());
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    tw_run_store_close(store);

    /* Read-only: no changes. */
    store = open_store(f->path, TW_STORE_READ_ONLY);
    g_assert_cmpint(tw_run_store_set_notes(store, odd, "x"), ==, -1);
    message = g_strdup_printf("%s: opened read-only: cannot change run '%s'", f->path, odd);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(tw_run_store_rename_run(store, odd, "y"), ==, -1);
    g_assert_cmpint(tw_run_store_delete_run(store, odd), ==, -1);
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
}

/* Colour, pin, sweep and the trash; a file of schema 2 read as it is. */
static void test_run_management(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    add_full_run(store->db, "a", 100);
    add_full_run(store->db, "b", 200);
    g_assert_cmpint(tw_run_store_set_color(store, "a", "#12aBcd"), ==, 0);
    g_assert_cmpint(tw_run_store_set_pinned(store, "a", true), ==, 0);
    g_assert_cmpint(tw_run_store_set_sweep(store, "b", "lr-sweep"), ==, 0);
    g_assert_cmpint(tw_run_store_set_color(store, "a", "red"), ==, -1);
    char *message = g_strdup_printf("%s: cannot colour run 'a': 'red' is not a colour of the form #rrggbb", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(tw_run_store_set_color(store, "a", "#12345"), ==, -1);
    g_assert_cmpint(tw_run_store_set_color(store, "c", "#123456"), ==, -1);
    message = g_strdup_printf("%s: no run named 'c'", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_assert_cmpint(tw_run_store_set_pinned(store, "c", true), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);

    tw_run_info *runs = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpstr(runs[0].color, ==, "#12aBcd");
    g_assert_true(runs[0].pinned);
    g_assert_null(runs[0].sweep);
    g_assert_null(runs[1].color);
    g_assert_false(runs[1].pinned);
    g_assert_cmpstr(runs[1].sweep, ==, "lr-sweep");
    tw_run_info_free(runs, n);
    g_assert_cmpint(tw_run_store_set_color(store, "a", ""), ==, 0);
    g_assert_cmpint(tw_run_store_set_pinned(store, "a", false), ==, 0);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, "a", &run), ==, 0);
    g_assert_null(run.color);
    g_assert_false(run.pinned);
    tw_run_info_clear(&run);

    /* The trash: out of the lists, back with undo, gone when emptied. */
    g_assert_cmpint(tw_run_store_trash_run(store, "a"), ==, 0);
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(runs[0].name, ==, "b");
    tw_run_info_free(runs, n);
    g_assert_cmpint(tw_run_store_get_run(store, "a", &run), ==, -1);
    g_assert_cmpint(tw_run_store_trash_run(store, "a"), ==, -1);
    g_assert_cmpint(tw_run_store_untrash_run(store, "a"), ==, 0);
    g_assert_cmpint(tw_run_store_untrash_run(store, "a"), ==, -1);
    message = g_strdup_printf("%s: no run named 'a' in the trash", f->path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(tw_run_store_get_run(store, "a", &run), ==, 0);
    tw_run_info_clear(&run);
    g_assert_cmpint(tw_run_store_trash_run(store, "b"), ==, 0);
    int emptied = -1;
    g_assert_cmpint(tw_run_store_empty_trash(store, &emptied), ==, 0);
    g_assert_cmpint(emptied, ==, 1);
    g_assert_cmpint(query_int(store->db, "SELECT count(*) FROM runs", 0), ==, 1);
    g_assert_cmpint(query_int(store->db, "SELECT count(*) FROM tags", 0), ==, 3); /* b's went with it */
    add_run(store->db, "live", "running", 300, tw__store_host(), getpid(), tw__process_start_time(getpid()));
    g_assert_cmpint(tw_run_store_trash_run(store, "live"), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "is still being written"));

    /* A schema-2 file read as it is: no colours, pins, sweeps nor trash. */
    exec(store->db, "ALTER TABLE runs DROP COLUMN color; ALTER TABLE runs DROP COLUMN pinned; "
                    "ALTER TABLE runs DROP COLUMN sweep; ALTER TABLE runs DROP COLUMN trashed_at; "
                    "PRAGMA user_version = 2");
    tw_run_store_close(store);
    store = open_store(f->path, TW_STORE_READ_ONLY);
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_null(runs[0].color);
    g_assert_false(runs[0].pinned);
    tw_run_info_free(runs, n);
    g_assert_cmpint(tw_run_store_empty_trash(store, NULL), ==, -1);
    tw_run_store_close(store);
    store = open_store(f->path, 0); /* migrated */
    g_assert_cmpint(tw_run_store_set_color(store, "a", "#ffffff"), ==, 0);
    tw_run_store_close(store);
}

/* ---- tags ----------------------------------------------------------------- */

static void test_tags(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    add_full_run(store->db, "a", 1);
    int64_t run = add_finished_run(store->db, "b", 2);
    int64_t graph = add_tag(store->db, run, "graph", "graph");
    add_text(store->db, graph, 0, "{\"nodes\": []}");
    add_text(store->db, graph, 9, "{\"nodes\": [1]}");
    add_tag(store->db, run, "empty", "scalar");

    tw_run_info info;
    g_assert_cmpint(tw_run_store_get_run(store, "a", &info), ==, 0);
    tw_tag_info *tags = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_list_tags(store, info.id, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 3);
    /* By name. */
    g_assert_cmpstr(tags[0].name, ==, "notes");
    g_assert_cmpint(tags[0].kind, ==, TW_SERIES_TEXT);
    g_assert_cmpint(tags[0].count, ==, 1);
    g_assert_cmpstr(tags[1].name, ==, "train/loss");
    g_assert_cmpint(tags[1].kind, ==, TW_SERIES_SCALAR);
    g_assert_cmpint(tags[1].count, ==, 1000);
    g_assert_cmpint(tags[1].first_step, ==, 0);
    g_assert_cmpint(tags[1].last_step, ==, 999);
    g_assert_cmpint(tags[1].run_id, ==, info.id);
    g_assert_cmpstr(tags[2].name, ==, "weights/dense/kernel");
    g_assert_cmpint(tags[2].kind, ==, TW_SERIES_HISTOGRAM);
    g_assert_cmpint(tags[2].first_step, ==, 5);
    g_assert_cmpint(tw_run_store_find_tag(store, info.id, "train/loss"), ==, tags[1].id);
    g_assert_cmpint(tw_run_store_find_tag(store, info.id, "train/accuracy"), ==, -1);
    g_assert_cmpint(tw_run_store_find_tag(store, run, "train/loss"), ==, -1);
    tw_tag_info_free(tags, n);
    tw_run_info_clear(&info);

    g_assert_cmpint(tw_run_store_list_tags(store, run, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpstr(tags[0].name, ==, "empty");
    g_assert_cmpint(tags[0].count, ==, 0);
    g_assert_cmpint(tags[1].kind, ==, TW_SERIES_GRAPH);
    g_assert_cmpint(tags[1].count, ==, 2);
    g_assert_cmpint(tags[1].last_step, ==, 9);
    tw_tag_info_free(tags, n);
    tw_run_store_close(store);
}

/* ---- scalars after a cursor ----------------------------------------------- */

static tw_scalar_point point_at(int64_t i)
{
    return (tw_scalar_point){10 * i, 1.7e9 + 0.25 * (double)i, sin((double)i)};
}

static void assert_points(const tw_scalar_point *got, int64_t n, int64_t first)
{
    for (int64_t i = 0; i < n; i++) {
        tw_scalar_point want = point_at(first + i);
        g_assert_cmpint(got[i].step, ==, want.step);
        g_assert_cmpfloat(got[i].wall_time, ==, want.wall_time);
        g_assert_cmpfloat(got[i].value, ==, want.value);
    }
}

/* Reads everything new and checks it is points [*next, *next + expected). */
static void read_expect(tw_run_store *store, int64_t tag, tw_series_cursor *cursor, int64_t max, int64_t expected,
                        int64_t *next)
{
    tw_scalar_point *points = NULL;
    int64_t n = -1;
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, cursor, max, &points, &n), ==, 0);
    g_assert_cmpint(n, ==, expected);
    assert_points(points, n, *next);
    *next += n;
    free(points);
}

/* The readers' statements are kept per connection (statements.c): read
 * again after another connection changed the schema and added rows, after
 * a read that failed on a damaged chunk, and after one that stopped early
 * (each use must leave its statement reset, or it would hold the old
 * snapshot); the data version moves only when another connection commits. */
static void test_kept_statements(fixture *f, gconstpointer data)
{
    tw_run_store *writer = open_store(f->path, 0);
    int64_t run = add_finished_run(writer->db, "r", 1);
    int64_t good = add_tag(writer->db, run, "good", "scalar"), bad = add_tag(writer->db, run, "bad", "scalar");
    series_writer *w = series_writer_new(writer->db, good);
    tw_scalar_point first[TW_CHUNK_POINTS + 1];
    for (int i = 0; i <= TW_CHUNK_POINTS; i++)
        first[i] = point_at(i);
    series_write(w, first, TW_CHUNK_POINTS + 1); /* a full chunk and one point */
    series_writer *b = series_writer_new(writer->db, bad);
    series_write(b, first, 1);
    exec(writer->db, "UPDATE scalar_chunks SET points = x'0102' WHERE tag_id = (SELECT id FROM tags WHERE name = 'bad')");

    tw_run_store *reader = open_store(f->path, TW_STORE_READ_ONLY);
    int64_t version = -1, again = -1;
    g_assert_cmpint(tw_run_store_data_version(reader, &version), ==, 0);
    g_assert_cmpint(tw_run_store_data_version(reader, &again), ==, 0);
    g_assert_cmpint(again, ==, version);
    tw_tag_info *tags = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_list_tags(reader, run, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    tw_tag_info_free(tags, n);
    tw_series_cursor cursor = {0};
    int64_t next = 0;
    read_expect(reader, good, &cursor, 1, 1, &next); /* stops inside the first chunk */

    exec(writer->db, "CREATE INDEX extra_index ON tags (kind); CREATE TABLE extra (x)");
    add_tag(writer->db, run, "later", "scalar");
    series_add(w, point_at(TW_CHUNK_POINTS + 1));
    exec(writer->db, "BEGIN");
    series_flush(w);
    exec(writer->db, "COMMIT");
    g_assert_cmpint(tw_run_store_data_version(reader, &again), ==, 0);
    g_assert_cmpint(again, !=, version);

    g_assert_cmpint(tw_run_store_list_tags(reader, run, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 3);
    g_assert_cmpstr(tags[1].name, ==, "good");
    g_assert_cmpint(tags[1].count, ==, TW_CHUNK_POINTS + 2);
    tw_tag_info_free(tags, n);
    tw_series_cursor bad_cursor = {0};
    tw_scalar_point *points = NULL;
    int64_t got = 0;
    g_assert_cmpint(tw_run_store_read_scalars(reader, bad, &bad_cursor, 0, &points, &got), ==, -1);
    read_expect(reader, good, &cursor, 0, TW_CHUNK_POINTS + 1, &next);
    g_assert_cmpint(next, ==, TW_CHUNK_POINTS + 2);
    g_assert_cmpint(tw_run_store_read_scalars(reader, bad, &bad_cursor, 0, &points, &got), ==, -1);
    tw_run_store_close(reader);
    g_free(w);
    g_free(b);
    tw_run_store_close(writer);
}

/* tw_run_store_read_begin holds one snapshot over several reads (the
 * dashboard reader's poll): the readers that begin a transaction of their
 * own (the LOD, histograms) read inside it, rows another connection
 * commits meanwhile are seen after tw_run_store_read_end, and a second
 * begin is refused with a message. */
static void test_read_snapshot(fixture *f, gconstpointer data)
{
    tw_run_store *writer = open_store(f->path, 0);
    int64_t run = add_finished_run(writer->db, "r", 1);
    int64_t tag = add_tag(writer->db, run, "loss", "scalar");
    series_writer *w = series_writer_new(writer->db, tag);
    tw_scalar_point points[20];
    for (int i = 0; i < 20; i++)
        points[i] = point_at(i);
    series_write(w, points, 10);

    tw_run_store *reader = open_store(f->path, TW_STORE_READ_ONLY);
    tw_series_cursor cursor = {0};
    int64_t next = 0;
    g_assert_cmpint(tw_run_store_read_begin(reader), ==, 0);
    read_expect(reader, tag, &cursor, 0, 10, &next);
    series_write(w, points + 10, 10); /* committed by the writer's connection */
    read_expect(reader, tag, &cursor, 0, 0, &next); /* the snapshot holds */
    tw_lod_column column;
    g_assert_cmpint(tw_run_store_read_lod(reader, tag, TW_AXIS_STEP, 0, 1e6, 1, &column), ==, 0);
    g_assert_cmpint(column.count, ==, 10);
    g_assert_cmpint(tw_run_store_read_begin(reader), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "a transaction is open already"));
    tw_run_store_read_end(reader);
    read_expect(reader, tag, &cursor, 0, 10, &next);
    g_assert_cmpint(tw_run_store_read_lod(reader, tag, TW_AXIS_STEP, 0, 1e6, 1, &column), ==, 0);
    g_assert_cmpint(column.count, ==, 20);
    tw_run_store_close(reader);
    g_free(w);
    tw_run_store_close(writer);
}

static void test_read_scalars(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t run = add_finished_run(store->db, "r", 1);
    int64_t tag = add_tag(store->db, run, "train/loss", "scalar");
    series_writer *w = series_writer_new(store->db, tag);
    tw_scalar_point points[3000];
    for (int i = 0; i < 3000; i++)
        points[i] = point_at(i);

    tw_series_cursor cursor = {0};
    int64_t next = 0;
    read_expect(store, tag, &cursor, 0, 0, &next); /* nothing yet */
    series_write(w, points, 1300);                  /* 512 + 512 + an open 276 */
    read_expect(store, tag, &cursor, 700, 700, &next);
    g_assert_cmpint(cursor.index, ==, 700 - 512);
    read_expect(store, tag, &cursor, 0, 600, &next);
    read_expect(store, tag, &cursor, 0, 0, &next);
    int64_t open_chunk = cursor.chunk;

    /* The open chunk grows in place (same row), a point at a time, then
     * fills and a new one begins. */
    for (int i = 1300; i < 1310; i++) {
        series_write(w, &points[i], 1);
        read_expect(store, tag, &cursor, 0, 1, &next);
        g_assert_cmpint(cursor.chunk, ==, open_chunk);
    }
    series_write(w, &points[1310], 500);
    read_expect(store, tag, &cursor, 0, 500, &next);
    g_assert_cmpint(cursor.chunk, >, open_chunk);
    g_assert_cmpint(query_int(store->db, "SELECT count(*) FROM scalar_chunks WHERE tag_id = ?1", tag), ==, 4);

    /* A reader that fell behind, in small steps. */
    tw_series_cursor late = {0};
    int64_t late_next = 0;
    for (int i = 0; i < 18; i++)
        read_expect(store, tag, &late, 100, 100, &late_next);
    read_expect(store, tag, &late, 100, 10, &late_next);
    read_expect(store, tag, &late, 100, 0, &late_next);
    g_assert_cmpint(late.chunk, ==, cursor.chunk);
    g_assert_cmpint(late.index, ==, cursor.index);

    /* A step going back (a resumed run) starts a new chunk; readers see the
     * points in writing order. */
    tw_scalar_point again = {5, 1.8e9, 42};
    series_write(w, &again, 1);
    tw_scalar_point *got = NULL;
    int64_t n = 0;
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, &cursor, 0, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(got[0].step, ==, 5);
    free(got);
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, &cursor, -1, &got, &n), ==, -1);
    g_free(w);
    tw_run_store_close(store);
}

/* The end cursor skips what was written; the range read returns a range's
 * raw points in writing order, across chunks and a step going back. */
static void test_end_and_range(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t run = add_finished_run(store->db, "r", 1);
    int64_t tag = add_tag(store->db, run, "train/loss", "scalar");
    tw_series_cursor end = {7, 7};
    g_assert_cmpint(tw_run_store_scalar_end(store, tag, &end), ==, 0);
    g_assert_cmpint(end.chunk, ==, 0);
    g_assert_cmpint(end.index, ==, 0);

    series_writer *w = series_writer_new(store->db, tag);
    tw_scalar_point points[1400];
    for (int i = 0; i < 1400; i++)
        points[i] = point_at(i);
    series_write(w, points, 1300);
    g_assert_cmpint(tw_run_store_scalar_end(store, tag, &end), ==, 0);
    int64_t next = 1300;
    read_expect(store, tag, &end, 0, 0, &next);
    series_write(w, points + 1300, 100); /* the open chunk grows */
    read_expect(store, tag, &end, 0, 100, &next);

    tw_scalar_point *got = NULL;
    int64_t n = -1;
    /* Steps 5000..6000 are points 500..600, across the first chunk edge. */
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, 5000, 6000, 0, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, 101);
    assert_points(got, n, 500);
    free(got);
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, 4995, 6000, 30, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, 30);
    assert_points(got, n, 500);
    free(got);
    /* Wall time: point i at 1.7e9 + i / 4. */
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_WALL_TIME, 1.7e9 + 250, 1.7e9 + 260, 0, &got,
                                                   &n),
                    ==, 0);
    g_assert_cmpint(n, ==, 41);
    assert_points(got, n, 1000);
    free(got);
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, 1e6, 2e6, 0, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    g_assert_null(got);

    tw_scalar_point again = {5010, 1.8e9, 42}; /* a resumed run's step going back */
    series_write(w, &again, 1);
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, 5005, 5015, 0, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    assert_points(got, 1, 501);
    g_assert_cmpfloat(got[1].value, ==, 42);
    free(got);
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, NAN, 1, 0, &got, &n), ==, -1);
    g_assert_cmpint(tw_run_store_read_scalar_range(store, tag, TW_AXIS_STEP, 0, 1, -1, &got, &n), ==, -1);
    g_free(w);
    tw_run_store_close(store);
}

/* Every double survives the blob bit for bit: NaN (with its payload),
 * infinities, -0, subnormals, extremes. The summary columns leave NaN out. */
static void test_special_values(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t run = add_finished_run(store->db, "r", 1);
    int64_t tag = add_tag(store->db, run, "odd", "scalar"), nan_tag = add_tag(store->db, run, "nan", "scalar");
    uint64_t payload_nan_bits = 0x7ff8000000000123ull;
    double payload_nan;
    memcpy(&payload_nan, &payload_nan_bits, 8);
    const double values[] = {NAN, INFINITY, -INFINITY, -0.0, 4.9e-324, DBL_MAX, -DBL_MAX, payload_nan, 1.5};
    enum { N = G_N_ELEMENTS(values) };
    tw_scalar_point points[N];
    for (int i = 0; i < N; i++)
        points[i] = (tw_scalar_point){i, 100.0 + i, values[i]};
    series_writer *w = series_writer_new(store->db, tag);
    series_write(w, points, N);
    g_free(w);
    w = series_writer_new(store->db, nan_tag);
    series_write(w, points, 1);
    series_write(w, &points[7], 1);
    g_free(w);
    tw_run_store_close(store);

    store = open_store(f->path, TW_STORE_READ_ONLY);
    tw_series_cursor cursor = {0};
    tw_scalar_point *got = NULL;
    int64_t n = 0;
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, &cursor, 0, &got, &n), ==, 0);
    g_assert_cmpint(n, ==, N);
    for (int i = 0; i < N; i++)
        g_assert_cmpmem(&got[i].value, 8, &values[i], 8);
    free(got);
    sqlite3 *db = store->db;
    g_assert_cmpint(query_int(db, "SELECT nan_count FROM scalar_chunks WHERE tag_id = ?1", tag), ==, 2);
    g_assert_cmpfloat(query_double(db, "SELECT min_value FROM scalar_chunks WHERE tag_id = ?1", tag), ==, -INFINITY);
    g_assert_cmpfloat(query_double(db, "SELECT max_value FROM scalar_chunks WHERE tag_id = ?1", tag), ==, INFINITY);
    g_assert_cmpint(query_int(db, "SELECT min_step FROM scalar_chunks WHERE tag_id = ?1", tag), ==, 2);
    g_assert_cmpint(query_int(db, "SELECT max_step FROM scalar_chunks WHERE tag_id = ?1", tag), ==, 1);
    g_assert_cmpint(query_int(db, "SELECT first_value IS NULL FROM scalar_chunks WHERE tag_id = ?1", tag), ==, 1);
    g_assert_cmpint(query_int(db,
                              "SELECT min_value IS NULL AND max_value IS NULL AND min_step IS NULL AND nan_count = 2 "
                              "FROM scalar_chunks WHERE tag_id = ?1",
                              nan_tag),
                    ==, 1);

    tw_lod_column column;
    g_assert_cmpint(tw_run_store_read_lod(store, nan_tag, TW_AXIS_STEP, 0, 10, 1, &column), ==, 0);
    g_assert_cmpint(column.count, ==, 2);
    g_assert_cmpint(column.nan_count, ==, 2);
    g_assert_true(isnan(column.min) && isnan(column.max));
    g_assert_cmpint(column.min_step, ==, -1);
    g_assert_true(isnan(column.first.value) && isnan(column.last.value));
    g_assert_cmpint(column.last.step, ==, 7);
    g_assert_cmpint(tw_run_store_read_lod(store, tag, TW_AXIS_STEP, 0, 10, 1, &column), ==, 0);
    g_assert_cmpfloat(column.min, ==, -INFINITY);
    g_assert_cmpfloat(column.max, ==, INFINITY);
    g_assert_cmpint(column.nan_count, ==, 2);
    tw_run_store_close(store);
}

static void test_chunk_blob(void)
{
    tw_chunk c = {.n = 3, .steps = {-5, 0, INT64_MAX}, .wall_times = {1, 2, 3}, .values = {0.5, NAN, -1}};
    int size = 0;
    void *blob = tw__chunk_pack(&c, &size);
    g_assert_cmpint(size, ==, 72);
    /* Little-endian int64 steps first, then wall times, then values. */
    const guint8 minus_five[8] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    g_assert_cmpmem(blob, 8, minus_five, 8);
    tw_chunk back;
    g_assert_cmpint(tw__chunk_unpack("runs.db", blob, size, 7, &back), ==, 0);
    g_assert_cmpint(back.n, ==, 3);
    g_assert_cmpint(back.steps[2], ==, INT64_MAX);
    g_assert_cmpfloat(back.wall_times[1], ==, 2);
    g_assert_true(isnan(back.values[1]));
    g_assert_cmpint(tw__chunk_unpack("runs.db", blob, size - 1, 7, &back), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "runs.db: scalar chunk 7: 71 bytes is not 1 to 512 points of 24 bytes");
    g_assert_cmpint(tw__chunk_unpack("runs.db", blob, 0, 7, &back), ==, -1);
    g_assert_cmpint(tw__chunk_unpack("runs.db", NULL, 24, 7, &back), ==, -1);
    g_assert_cmpint(tw__chunk_unpack("runs.db", blob, 24 * 513, 7, &back), ==, -1);
    free(blob);

    tw_chunk_summary s;
    tw__chunk_summarize(&c, &s);
    g_assert_cmpint(s.count, ==, 3);
    g_assert_cmpint(s.nan_count, ==, 1);
    g_assert_cmpfloat(s.min, ==, -1);
    g_assert_cmpint(s.min_step, ==, INT64_MAX);
    g_assert_cmpfloat(s.max, ==, 0.5);
    g_assert_cmpint(s.max_step, ==, -5);
    g_assert_cmpfloat(s.last_value, ==, -1);

    /* Equal extremes: the smallest step. */
    tw_chunk ties = {.n = 3, .steps = {1, 2, 3}, .wall_times = {0, 0, 0}, .values = {2, 2, 2}};
    tw__chunk_summarize(&ties, &s);
    g_assert_cmpint(s.min_step, ==, 1);
    g_assert_cmpint(s.max_step, ==, 1);

    g_assert_true(tw__chunk_accepts(&ties, 3, 0));
    g_assert_false(tw__chunk_accepts(&ties, 2, 0));
    g_assert_false(tw__chunk_accepts(&ties, 4, -1));
    ties.n = TW_CHUNK_POINTS;
    g_assert_false(tw__chunk_accepts(&ties, 4, 1));
    ties.n = 0;
    g_assert_true(tw__chunk_accepts(&ties, -100, -100));
}

/* ---- level of detail ------------------------------------------------------ */

/* The reference: one pass over every point in writing order, by the rules
 * of tw/run_store.h and lod.c. */
static void brute_lod(const tw_scalar_point *p, int64_t n, tw_axis axis, double lo, double hi, int ncolumns,
                      tw_lod_column *columns)
{
    for (int i = 0; i < ncolumns; i++)
        columns[i] = (tw_lod_column){.min = NAN, .max = NAN, .min_step = -1, .max_step = -1};
    for (int64_t k = 0; k < n; k++) {
        double x = axis == TW_AXIS_STEP ? (double)p[k].step : p[k].wall_time;
        if (!(x >= lo && x <= hi))
            continue;
        int i = hi == lo ? 0 : (int)MIN((x - lo) / (hi - lo) * ncolumns, ncolumns - 1);
        tw_lod_column *c = &columns[i];
        double first_x = axis == TW_AXIS_STEP ? (double)c->first.step : c->first.wall_time;
        double last_x = axis == TW_AXIS_STEP ? (double)c->last.step : c->last.wall_time;
        if (c->count == 0 || x < first_x)
            c->first = p[k];
        if (c->count == 0 || x >= last_x)
            c->last = p[k];
        c->count++;
        double v = p[k].value;
        if (isnan(v)) {
            c->nan_count++;
            continue;
        }
        if (isnan(c->min) || v < c->min || (v == c->min && p[k].step < c->min_step)) {
            c->min = v;
            c->min_step = p[k].step;
        }
        if (isnan(c->max) || v > c->max || (v == c->max && p[k].step < c->max_step)) {
            c->max = v;
            c->max_step = p[k].step;
        }
    }
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_point(tw_scalar_point a, tw_scalar_point b)
{
    return a.step == b.step && a.wall_time == b.wall_time && same_double(a.value, b.value);
}

static void assert_same_columns(const tw_lod_column *got, const tw_lod_column *want, int ncolumns)
{
    for (int i = 0; i < ncolumns; i++) {
        const tw_lod_column *g = &got[i], *w = &want[i];
        if (g->count != w->count || g->nan_count != w->nan_count || !same_double(g->min, w->min) ||
            !same_double(g->max, w->max) || g->min_step != w->min_step || g->max_step != w->max_step ||
            (w->count > 0 && (!same_point(g->first, w->first) || !same_point(g->last, w->last))))
            g_error("column %d of %d: count %lld/%lld nan %lld/%lld min %g@%lld/%g@%lld max %g@%lld/%g@%lld "
                    "first step %lld/%lld last step %lld/%lld",
                    i, ncolumns, (long long)g->count, (long long)w->count, (long long)g->nan_count,
                    (long long)w->nan_count, g->min, (long long)g->min_step, w->min, (long long)w->min_step, g->max,
                    (long long)g->max_step, w->max, (long long)w->max_step, (long long)g->first.step,
                    (long long)w->first.step, (long long)g->last.step, (long long)w->last.step);
    }
}

/* A random series: steps going up by 1 to 3 (sometimes jumping back, as a
 * resumed run does, sometimes repeating), wall times going up unevenly
 * (sometimes back: a clock set back), values with NaN and infinities. */
static tw_scalar_point *random_series(GRand *rand, int64_t n)
{
    tw_scalar_point *p = g_new(tw_scalar_point, n);
    int64_t step = g_rand_int_range(rand, -50, 50);
    double wall = 1.7e9;
    for (int64_t i = 0; i < n; i++) {
        int dice = g_rand_int_range(rand, 0, 1000);
        step += dice == 0 ? -g_rand_int_range(rand, 1, 400) : dice < 20 ? 0 : g_rand_int_range(rand, 1, 4);
        wall += dice == 1 ? -30 : g_rand_double_range(rand, 0, 0.5);
        double value = g_rand_double_range(rand, -1, 1) * (dice < 100 ? 1000 : 1);
        if (dice >= 990)
            value = dice == 999 ? INFINITY : dice == 998 ? -INFINITY : NAN;
        p[i] = (tw_scalar_point){step, wall, value};
    }
    return p;
}

static void compare_lod(tw_run_store *store, int64_t tag, const tw_scalar_point *p, int64_t n, tw_axis axis,
                        double lo, double hi, int ncolumns)
{
    tw_lod_column *got = g_new(tw_lod_column, ncolumns), *want = g_new(tw_lod_column, ncolumns);
    g_assert_cmpint(tw_run_store_read_lod(store, tag, axis, lo, hi, ncolumns, got), ==, 0);
    brute_lod(p, n, axis, lo, hi, ncolumns, want);
    assert_same_columns(got, want, ncolumns);
    g_free(got);
    g_free(want);
}

static void test_lod_random(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t run = add_finished_run(store->db, "r", 1);
    GRand *rand = g_rand_new_with_seed(2024);
    const int64_t lengths[] = {1, 7, 511, 512, 513, 5000, 60000};
    const int columns[] = {1, 2, 3, 7, 100, 511, 512, 513, 2000, 5000};
    for (size_t s = 0; s < G_N_ELEMENTS(lengths); s++) {
        int64_t n = lengths[s];
        char name[32];
        g_snprintf(name, sizeof name, "series-%zu", s);
        int64_t tag = add_tag(store->db, run, name, "scalar");
        tw_scalar_point *p = random_series(rand, n);
        /* Written in uneven flushes, so open chunks are rewritten. */
        series_writer *w = series_writer_new(store->db, tag);
        for (int64_t done = 0; done < n;) {
            int64_t batch = MIN(n - done, g_rand_int_range(rand, 1, 2000));
            series_write(w, p + done, batch);
            done += batch;
        }
        g_free(w);
        int64_t step_lo = INT64_MAX, step_hi = INT64_MIN;
        double wall_lo = INFINITY, wall_hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            step_lo = MIN(step_lo, p[i].step);
            step_hi = MAX(step_hi, p[i].step);
            wall_lo = MIN(wall_lo, p[i].wall_time);
            wall_hi = MAX(wall_hi, p[i].wall_time);
        }
        for (size_t c = 0; c < G_N_ELEMENTS(columns); c++) {
            compare_lod(store, tag, p, n, TW_AXIS_STEP, (double)step_lo, (double)step_hi, columns[c]);
            compare_lod(store, tag, p, n, TW_AXIS_WALL_TIME, wall_lo, wall_hi, columns[c]);
            for (int r = 0; r < 4; r++) {
                /* Random sub-ranges, some reaching past the series' ends. */
                double a = g_rand_double_range(rand, step_lo - 10.0, step_hi + 10.0);
                double b = g_rand_double_range(rand, step_lo - 10.0, step_hi + 10.0);
                compare_lod(store, tag, p, n, TW_AXIS_STEP, MIN(a, b), MAX(a, b), columns[c]);
                a = g_rand_double_range(rand, wall_lo - 1, wall_hi + 1);
                b = g_rand_double_range(rand, wall_lo - 1, wall_hi + 1);
                compare_lod(store, tag, p, n, TW_AXIS_WALL_TIME, MIN(a, b), MAX(a, b), columns[c]);
            }
        }
        /* One step, and a range holding nothing. */
        compare_lod(store, tag, p, n, TW_AXIS_STEP, (double)p[n / 2].step, (double)p[n / 2].step, 10);
        compare_lod(store, tag, p, n, TW_AXIS_STEP, step_hi + 1.0, step_hi + 100.0, 10);
        g_free(p);
    }
    g_rand_free(rand);

    tw_lod_column column;
    g_assert_cmpint(tw_run_store_read_lod(store, 1, TW_AXIS_STEP, 0, 10, 0, &column), ==, -1);
    g_assert_cmpint(tw_run_store_read_lod(store, 1, TW_AXIS_STEP, 10, 0, 1, &column), ==, -1);
    g_assert_cmpint(tw_run_store_read_lod(store, 1, TW_AXIS_STEP, 0, NAN, 1, &column), ==, -1);
    char *message = g_strdup_printf("%s: read_lod: the range [0, inf] is not a finite range", f->path);
    g_assert_cmpint(tw_run_store_read_lod(store, 1, TW_AXIS_WALL_TIME, 0, INFINITY, 1, &column), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    tw_run_store_close(store);
}

/* A lone spike among a million points is the maximum of exactly its column,
 * at every zoom. */
static void test_lod_spike(fixture *f, gconstpointer data)
{
    enum { N = 1000000, SPIKE = 737373 };
    tw_run_store *store = open_store(f->path, 0);
    int64_t tag = add_tag(store->db, add_finished_run(store->db, "r", 1), "loss", "scalar");
    tw_scalar_point *p = g_new(tw_scalar_point, N);
    GRand *rand = g_rand_new_with_seed(7);
    for (int i = 0; i < N; i++)
        p[i] = (tw_scalar_point){i, 1.7e9 + i * 0.001, g_rand_double(rand)};
    g_rand_free(rand);
    p[SPIKE].value = 1e6;
    series_writer *w = series_writer_new(store->db, tag);
    series_write(w, p, N);
    g_free(w);

    const int zooms[][3] = {{0, N - 1, 2000}, {0, N - 1, 7}, {700000, 800000, 2000}, {737000, 738000, 333}};
    for (size_t z = 0; z < G_N_ELEMENTS(zooms); z++) {
        double lo = zooms[z][0], hi = zooms[z][1];
        int ncolumns = zooms[z][2];
        tw_lod_column *columns = g_new(tw_lod_column, ncolumns);
        g_assert_cmpint(tw_run_store_read_lod(store, tag, TW_AXIS_STEP, lo, hi, ncolumns, columns), ==, 0);
        int spike_column = (int)((SPIKE - lo) / (hi - lo) * ncolumns);
        int64_t total = 0;
        for (int i = 0; i < ncolumns; i++) {
            total += columns[i].count;
            if (i == spike_column) {
                g_assert_cmpfloat(columns[i].max, ==, 1e6);
                g_assert_cmpint(columns[i].max_step, ==, SPIKE);
            } else {
                g_assert_cmpfloat(columns[i].max, <, 1);
            }
        }
        g_assert_cmpint(total, ==, (int64_t)(hi - lo) + 1);
        tw_lod_column *want = g_new(tw_lod_column, ncolumns);
        brute_lod(p, N, TW_AXIS_STEP, lo, hi, ncolumns, want);
        assert_same_columns(columns, want, ncolumns);
        g_free(want);
        g_free(columns);
    }
    g_free(p);
    tw_run_store_close(store);
}

/* ---- histograms and texts ------------------------------------------------- */

static void test_histograms(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t tag = add_tag(store->db, add_finished_run(store->db, "r", 1), "weights/kernel", "histogram");
    double buckets[TW_HISTOGRAM_BUCKETS];
    for (int s = 0; s < 100; s++) {
        for (int b = 0; b < TW_HISTOGRAM_BUCKETS; b++)
            buckets[b] = s * 100 + b;
        tw_histogram h = {10 * s, 1000.0 + s, 640, -s - 0.5, s + 0.5, 3.25 * s, 1e3 * s, TW_HISTOGRAM_BUCKETS, buckets};
        if (s == 50)
            h.min = h.max = h.sum = h.sum_squares = NAN; /* a tensor of NaN */
        add_histogram(store->db, tag, &h);
    }
    tw_histogram *hs = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, INT64_MAX, 0, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 100);
    for (int s = 0; s < 100; s++) {
        g_assert_cmpint(hs[s].step, ==, 10 * s);
        g_assert_cmpfloat(hs[s].wall_time, ==, 1000.0 + s);
        g_assert_cmpfloat(hs[s].count, ==, 640);
        g_assert_cmpint(hs[s].nbuckets, ==, TW_HISTOGRAM_BUCKETS);
        g_assert_cmpfloat(hs[s].buckets[63], ==, s * 100 + 63);
        if (s != 50) {
            g_assert_cmpfloat(hs[s].min, ==, -s - 0.5);
            g_assert_cmpfloat(hs[s].max, ==, s + 0.5);
            g_assert_cmpfloat(hs[s].sum, ==, 3.25 * s);
            g_assert_cmpfloat(hs[s].sum_squares, ==, 1e3 * s);
        }
    }
    g_assert_true(isnan(hs[50].min) && isnan(hs[50].max) && isnan(hs[50].sum) && isnan(hs[50].sum_squares));
    tw_histogram_free(hs, n);

    /* A step range, and ten records spread evenly over it. */
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 95, 300, 0, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 21);
    g_assert_cmpint(hs[0].step, ==, 100);
    g_assert_cmpint(hs[20].step, ==, 300);
    tw_histogram_free(hs, n);
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 990, 10, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 10);
    const int64_t spread[] = {0, 110, 220, 330, 440, 550, 660, 770, 880, 990};
    for (int i = 0; i < 10; i++)
        g_assert_cmpint(hs[i].step, ==, spread[i]);
    tw_histogram_free(hs, n);
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 990, 1, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(hs[0].step, ==, 990);
    tw_histogram_free(hs, n);
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 990, 1000, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 100);
    tw_histogram_free(hs, n);
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 2000, 3000, 5, &hs, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    tw_histogram_free(hs, n);

    /* A blob that does not hold nbuckets counts. */
    exec(store->db, "UPDATE histograms SET nbuckets = 65 WHERE step = 0");
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 0, 0, &hs, &n), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "512 bytes of buckets for 65 buckets"));
    g_assert_null(hs);
    tw_run_store_close(store);
}

static void test_texts(fixture *f, gconstpointer data)
{
    tw_run_store *store = open_store(f->path, 0);
    int64_t run = add_finished_run(store->db, "r", 1);
    int64_t notes = add_tag(store->db, run, "notes", "text"), graph = add_tag(store->db, run, "graph", "graph");
    add_text(store->db, notes, 0, "first");
    add_text(store->db, graph, 0, "{\"graph\": 1}");
    add_text(store->db, notes, 5, "second: ünïcode and 'quotes'");

    tw_series_cursor cursor = {0};
    tw_text_record *records = NULL;
    int n = 0;
    g_assert_cmpint(tw_run_store_read_texts(store, notes, &cursor, &records, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpstr(records[0].text, ==, "first");
    g_assert_cmpint(records[1].step, ==, 5);
    g_assert_cmpfloat(records[1].wall_time, ==, 1005);
    g_assert_cmpstr(records[1].text, ==, "second: ünïcode and 'quotes'");
    tw_text_record_free(records, n);
    g_assert_cmpint(tw_run_store_read_texts(store, notes, &cursor, &records, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    tw_text_record_free(records, n);
    add_text(store->db, notes, 9, "third");
    g_assert_cmpint(tw_run_store_read_texts(store, notes, &cursor, &records, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(records[0].text, ==, "third");
    tw_text_record_free(records, n);

    tw_series_cursor graph_cursor = {0};
    g_assert_cmpint(tw_run_store_read_texts(store, graph, &graph_cursor, &records, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(records[0].text, ==, "{\"graph\": 1}");
    tw_text_record_free(records, n);
    tw_run_store_close(store);
}

/* ---- the default file ----------------------------------------------------- */

/* $XDG_DATA_HOME/twb/runs.db, its folder made when opening for writing.
 * main() points XDG_DATA_HOME at a scratch folder before GLib reads it. */
static void test_default_path(void)
{
    char *path = tw_run_store_default_path();
    char *want = g_build_filename(g_getenv("XDG_DATA_HOME"), "twb", "runs.db", NULL);
    g_assert_cmpstr(path, ==, want);
    char *message = g_strdup_printf("%s: no such file", want);
    assert_open_fails(NULL, TW_STORE_READ_ONLY, message);
    g_free(message);
    tw_run_store *store = open_store(NULL, 0);
    g_assert_cmpstr(tw_run_store_path(store), ==, want);
    tw_run_store_close(store);
    g_assert_true(g_file_test(want, G_FILE_TEST_IS_REGULAR));
    g_free(path);
    g_free(want);
}

int main(int argc, char **argv)
{
    char *data_home = g_dir_make_tmp("twb-data-home-XXXXXX", NULL);
    g_setenv("XDG_DATA_HOME", data_home, TRUE);
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/run_store/default-path", test_default_path);
#define ADD(name, fn) g_test_add("/data/run_store/" name, fixture, NULL, setup, fn, teardown)
    ADD("new-file", test_new_file);
    ADD("empty-file", test_empty_file);
    ADD("missing-file", test_missing_file);
    ADD("newer-file", test_newer_file);
    ADD("foreign-file", test_foreign_file);
    ADD("not-sqlite", test_not_sqlite);
    ADD("migrations", test_migrations);
    g_test_add_func("/data/run_store/process-start-time", test_process_start_time);
    ADD("interrupted", test_interrupted);
    ADD("interrupted-ends-at-last-row", test_interrupted_ends_at_last_row);
    ADD("damaged-chunk-names-file", test_damaged_chunk_names_file);
    ADD("kept-statements", test_kept_statements);
    ADD("read-snapshot", test_read_snapshot);
    ADD("schema-1-file", test_schema_1_file);
    ADD("runs", test_runs);
    ADD("run-management", test_run_management);
    ADD("tags", test_tags);
    ADD("read-scalars", test_read_scalars);
    ADD("end-and-range", test_end_and_range);
    ADD("special-values", test_special_values);
    g_test_add_func("/data/run_store/chunk-blob", test_chunk_blob);
    ADD("lod-random", test_lod_random);
    ADD("lod-spike", test_lod_spike);
    ADD("histograms", test_histograms);
    ADD("texts", test_texts);
#undef ADD
    int status = g_test_run();
    remove_tree(data_home);
    g_free(data_home);
    return status;
}
