/* The bulk import of a TensorBoard log directory (small runs written
 * within one transaction batch, data/tfevents/import_batch.c) stores
 * exactly what the per-run path (a writer thread per run) stores: the
 * shared corpus's runs imported both ways, with a size limit that mixes
 * the two in one import, and followed live, compared row by row (every
 * column but ids, the importing process's own and times stamped with the
 * import's clock). */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "scratch_tree.h"
#include "tfevents/tfevents_internal.h"
#include "tw/engine.h"

/* A fresh folder, removed (scratch_remove_tree) when the test ends. */
static char *scratch_dir(void)
{
    char *dir = g_dir_make_tmp("twb-tfevents-bulk-XXXXXX", NULL);
    g_assert_nonnull(dir);
    return dir;
}

static char *corpus_dir(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "tfevents", NULL);
}

/* A run's times, when the import's clock stamped them (a run whose events
 * have no wall time), read "now": two imports differ there only. */
#define RUN_TIME(col) "CASE WHEN " col " >= ?1 THEN 'now' ELSE " col " END"
static const char *const dump_sql[] = {
    "SELECT name, status, " RUN_TIME("start_time") ", " RUN_TIME("end_time") ", model_json, hparams_json, "
    "metrics_json, notes, logs_lost_from_step, logs_lost_reason FROM runs ORDER BY name",
    "SELECT r.name, t.name, t.kind FROM tags t JOIN runs r ON r.id = t.run_id ORDER BY r.name, t.name",
    "SELECT r.name, t.name, c.count, c.nan_count, c.first_step, c.last_step, c.first_wall_time, c.last_wall_time, "
    "c.first_value, c.last_value, c.min_value, c.max_value, c.min_step, c.max_step, c.points FROM scalar_chunks c "
    "JOIN tags t ON t.id = c.tag_id JOIN runs r ON r.id = t.run_id ORDER BY r.name, t.name, c.id",
    "SELECT r.name, t.name, h.step, h.wall_time, h.count, h.min_value, h.max_value, h.sum, h.sum_squares, "
    "h.nbuckets, h.buckets FROM histograms h JOIN tags t ON t.id = h.tag_id JOIN runs r ON r.id = t.run_id "
    "ORDER BY r.name, t.name, h.id",
    "SELECT r.name, t.name, x.step, x.wall_time, x.body FROM texts x JOIN tags t ON t.id = x.tag_id "
    "JOIN runs r ON r.id = t.run_id ORDER BY r.name, t.name, x.id",
    "SELECT r.name, i.tag, i.step, i.sample, i.wall_time, i.width, i.height, i.format, i.data FROM images i "
    "JOIN runs r ON r.id = i.run_id ORDER BY r.name, i.tag, i.step, i.sample",
    "SELECT r.name, x.tag, x.step, x.wall_time, x.dtype, x.shape, x.data FROM tensors x "
    "JOIN runs r ON r.id = x.run_id ORDER BY r.name, x.tag, x.step, x.id",
};

/* Every stored fact of the file as text, one row a line (blobs in hex). */
static char *dump(const char *path, double since)
{
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    GString *out = g_string_new(NULL);
    for (size_t q = 0; q < G_N_ELEMENTS(dump_sql); q++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, dump_sql[q], -1, &st, NULL) != SQLITE_OK)
            g_error("%s: %s", dump_sql[q], sqlite3_errmsg(db));
        if (sqlite3_bind_parameter_count(st))
            sqlite3_bind_double(st, 1, since);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                if (sqlite3_column_type(st, c) == SQLITE_BLOB) {
                    const uint8_t *b = sqlite3_column_blob(st, c);
                    for (int i = 0; i < sqlite3_column_bytes(st, c); i++)
                        g_string_append_printf(out, "%02x", b[i]);
                } else if (sqlite3_column_type(st, c) == SQLITE_FLOAT) {
                    g_string_append_printf(out, "%.17g", sqlite3_column_double(st, c));
                } else {
                    const char *text = (const char *)sqlite3_column_text(st, c);
                    g_string_append(out, text ? text : "NULL");
                }
                g_string_append_c(out, '|');
            }
            g_string_append_c(out, '\n');
        }
        sqlite3_finalize(st);
        g_string_append(out, "--\n");
    }
    sqlite3_close(db);
    return g_string_free(out, FALSE);
}

static int count_lines_before(const char *text, const char *end)
{
    int n = 0;
    for (const char *p = text; p < end; p++)
        n += *p == '\n';
    return n;
}

static void assert_same(const char *a, const char *b, const char *what)
{
    if (strcmp(a, b) == 0)
        return;
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    g_test_message("%s: first difference on line %d:\n per-run: %.300s\n %s: %.300s", what,
                   count_lines_before(a, a + i) + 1, a + i, what, b + i);
    g_test_fail();
}

static void on_warning(void *user_data, const char *message)
{
    (void)user_data;
    g_test_message("warning: %s", message);
}

static char *import_into(const char *logdir, const char *dir, const char *name, uint64_t bulk_max_bytes,
                         tw_tb_import_stats *stats)
{
    char *db = g_build_filename(dir, name, NULL);
    g_assert_cmpint(tw__tb_import_runs(logdir, db, bulk_max_bytes, on_warning, NULL, stats), ==, 0);
    return db;
}

/* The corpus's log directory, or NULL with the test skipped when it is absent. */
static char *corpus_or_skip(void)
{
    char *logdir = corpus_dir();
    if (g_file_test(logdir, G_FILE_TEST_IS_DIR))
        return logdir;
    g_test_skip("the shared corpus (../shared/corpus/tfevents) is not here");
    g_free(logdir);
    return NULL;
}

static void test_import_bulk(void)
{
    char *logdir = corpus_or_skip();
    if (!logdir)
        return;
    double since = (double)g_get_real_time() / 1e6 - 1;
    char *dir = scratch_dir();
    tw_tb_import_stats per_run, bulk, mixed;
    char *db_per_run = import_into(logdir, dir, "per_run.db", 0, &per_run);
    char *db_bulk = import_into(logdir, dir, "bulk.db", UINT64_MAX, &bulk);
    /* the corpus's runs are 4 kB to 180 kB: half bulk, half threaded */
    char *db_mixed = import_into(logdir, dir, "mixed.db", 50000, &mixed);
    g_assert_cmpint(per_run.runs, ==, 6);
    g_assert_cmpint(bulk.runs, ==, per_run.runs);
    g_assert_cmpint(bulk.scalars, ==, per_run.scalars);
    g_assert_cmpint(bulk.histograms, ==, per_run.histograms);
    g_assert_cmpint(bulk.images, ==, per_run.images);
    g_assert_cmpint(bulk.texts, ==, per_run.texts);
    g_assert_cmpint(bulk.graphs, ==, per_run.graphs);
    g_assert_cmpint(bulk.warnings, ==, per_run.warnings);
    char *a = dump(db_per_run, since), *b = dump(db_bulk, since), *c = dump(db_mixed, since);
    g_assert_cmpuint(strlen(a), >, 100000); /* the corpus's points, histograms and images are there */
    assert_same(a, b, "bulk");
    assert_same(a, c, "mixed");
    g_test_message("%lld scalars, %lld histograms, %lld images in %lld runs stored alike", (long long)bulk.scalars,
                   (long long)bulk.histograms, (long long)bulk.images, (long long)bulk.runs);
    g_free(a);
    g_free(b);
    g_free(c);
    g_free(db_per_run);
    g_free(db_bulk);
    g_free(db_mixed);
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(logdir);
}

/* Rows whose run is finished: the follower's runs, once settled. */
static int finished_runs(const char *path)
{
    sqlite3 *db = NULL;
    int n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM runs WHERE status = 'finished'", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
}

/* The follower writes the corpus's (old, so settled at once) runs within
 * its batches: the same rows as the per-run import. */
static void test_follow_bulk(void)
{
    char *logdir = corpus_or_skip();
    if (!logdir)
        return;
    double since = (double)g_get_real_time() / 1e6 - 1;
    char *dir = scratch_dir();
    tw_tb_import_stats per_run;
    char *db_per_run = import_into(logdir, dir, "per_run.db", 0, &per_run);
    char *db_followed = g_build_filename(dir, "followed.db", NULL);
    tw_tb_follower *f = tw_tb_follow(logdir, db_followed, on_warning, NULL);
    g_assert_nonnull(f);
    gint64 give_up = g_get_monotonic_time() + 120 * G_USEC_PER_SEC; /* a hang, not a timing */
    while (finished_runs(db_followed) < per_run.runs && g_get_monotonic_time() < give_up)
        g_usleep(20000);
    g_assert_cmpint(finished_runs(db_followed), ==, per_run.runs);
    tw_tb_follower_stop(f);
    char *a = dump(db_per_run, since), *b = dump(db_followed, since);
    assert_same(a, b, "followed");
    g_free(a);
    g_free(b);
    g_free(db_per_run);
    g_free(db_followed);
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(logdir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tfevents/import_bulk", test_import_bulk);
    g_test_add_func("/tfevents/follow_bulk", test_follow_bulk);
    return g_test_run();
}
