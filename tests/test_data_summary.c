/* The summary writer (tw/summary.h): scalars, histograms, texts, graphs
 * and hyperparameters written and read back through the store's readers;
 * NaN and infinities; histogram statistics against brute force for every
 * dtype; chunk boundaries and the open chunk rewritten in place; flush and
 * the 100 ms wake; several writers at once; resuming a run; the fit logger;
 * faults (a read-only file, a full disk, a locked file); a writer killed
 * with SIGKILL; two processes writing while a third reads. Each test works
 * in a fresh temporary directory. */
#include <float.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tw/engine.h>
#include <tw/model.h>

#include "run_store/summary_internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* ---- scratch files and reading back ------------------------------------------ */

typedef struct {
    char *dir, *db;
} scratch;

static scratch scratch_new(void)
{
    GError *err = NULL;
    scratch s = {g_dir_make_tmp("twb-summary-XXXXXX", &err), NULL};
    g_assert_no_error(err);
    s.db = g_build_filename(s.dir, "runs.db", NULL);
    return s;
}

static void scratch_free(scratch *s)
{
    GDir *d = g_dir_open(s->dir, 0, NULL);
    g_assert_nonnull(d);
    for (const char *name; (name = g_dir_read_name(d));) {
        char *path = g_build_filename(s->dir, name, NULL);
        g_assert_cmpint(g_remove(path), ==, 0);
        g_free(path);
    }
    g_dir_close(d);
    g_assert_cmpint(g_rmdir(s->dir), ==, 0);
    g_free(s->dir);
    g_free(s->db);
}

static double monotonic(void)
{
    return (double)g_get_monotonic_time() / 1e6;
}

static tw_run_store *open_reader(const char *path)
{
    tw_run_store *store = tw_run_store_open(path, TW_STORE_READ_ONLY);
    if (!store)
        g_error("%s", tw_last_error());
    return store;
}

static tw_run_info get_run(tw_run_store *store, const char *name)
{
    tw_run_info run;
    if (tw_run_store_get_run(store, name, &run))
        g_error("%s", tw_last_error());
    return run;
}

static int64_t tag_of(tw_run_store *store, const char *run_name, const char *tag)
{
    tw_run_info run = get_run(store, run_name);
    int64_t id = tw_run_store_find_tag(store, run.id, tag);
    tw_run_info_clear(&run);
    return id;
}

/* Every point of a run's scalar tag (0 when the tag is absent). */
static int64_t read_scalars(const char *path, const char *run_name, const char *tag, tw_scalar_point **points)
{
    tw_run_store *store = open_reader(path);
    int64_t id = tag_of(store, run_name, tag), n = 0;
    tw_series_cursor cursor = {0};
    *points = NULL;
    if (id >= 0)
        g_assert_cmpint(tw_run_store_read_scalars(store, id, &cursor, 0, points, &n), ==, 0);
    tw_run_store_close(store);
    return n;
}

static int64_t count_scalars(const char *path, const char *run_name, const char *tag)
{
    tw_scalar_point *points;
    int64_t n = read_scalars(path, run_name, tag, &points);
    free(points);
    return n;
}

/* One number from SQL, on a plain connection. */
static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    int64_t v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return v;
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- scalars ------------------------------------------------------------------ */

static void test_scalars_round_trip(void)
{
    scratch s = scratch_new();
    double before = g_get_real_time() / 1e6;
    tw_summary_writer *w = tw_summary_writer_open(s.db, "mlp-1", NULL);
    g_assert_nonnull(w);
    g_assert_cmpint(tw_summary_writer_run_id(w), >, 0);
    const double values[] = {0.5, -0.0, NAN, INFINITY, -INFINITY, 1e-310, DBL_MAX, -3.25};
    for (int i = 0; i < 8; i++) {
        g_assert_cmpint(tw_summary_scalar(w, "train/loss", values[i], 10 * i), ==, 0);
        g_assert_cmpint(tw_summary_scalar(w, "train/accuracy", i / 8.0, 10 * i), ==, 0);
    }
    g_assert_cmpint(tw_summary_flush(w), ==, 0);
    g_assert_null(tw_summary_writer_error(w));
    g_assert_cmpint(tw_summary_writer_lost_from_step(w), ==, -1);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    double after = g_get_real_time() / 1e6;

    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "mlp-1", "train/loss", &p), ==, 8);
    for (int i = 0; i < 8; i++) {
        g_assert_cmpint(p[i].step, ==, 10 * i);
        g_assert_true(same_double(p[i].value, values[i])); /* NaN, -0 and infinities bit for bit */
        g_assert_cmpfloat(p[i].wall_time, >=, before);
        g_assert_cmpfloat(p[i].wall_time, <=, after);
        g_assert_true(i == 0 || p[i].wall_time >= p[i - 1].wall_time);
    }
    free(p);
    g_assert_cmpint(count_scalars(s.db, "mlp-1", "train/accuracy"), ==, 8);

    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "mlp-1");
    g_assert_cmpint(run.status, ==, TW_RUN_FINISHED);
    g_assert_cmpfloat(run.start_time, >=, before);
    g_assert_cmpfloat(run.end_time, >=, run.start_time);
    g_assert_cmpfloat(run.end_time, <=, after);
    g_assert_cmpint(run.pid, ==, getpid());
    g_assert_cmpstr(run.host, ==, g_get_host_name());
    g_assert_cmpint(run.logs_lost_from_step, ==, -1);
    tw_tag_info *tags;
    int n;
    g_assert_cmpint(tw_run_store_list_tags(store, run.id, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    for (int i = 0; i < n; i++) {
        g_assert_cmpint(tags[i].kind, ==, TW_SERIES_SCALAR);
        g_assert_cmpint(tags[i].count, ==, 8);
    }
    tw_tag_info_free(tags, n);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    scratch_free(&s);
}

/* Points in several flushes fill a chunk row that keeps its id until it is
 * full; a reader tailing with a cursor sees every point exactly once. */
static void test_chunk_boundaries(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "long", NULL);
    g_assert_nonnull(w);
    tw_run_store *reader = NULL;
    tw_series_cursor cursor = {0};
    int64_t seen = 0, first_chunk = -1;
    for (int64_t step = 0; step < 1300; step++) {
        g_assert_cmpint(tw_summary_scalar(w, "x", (double)step * 0.25, step), ==, 0);
        if (step % 100 != 99)
            continue;
        tw_summary_flush(w);
        if (!reader)
            reader = open_reader(s.db);
        int64_t tag = tag_of(reader, "long", "x"), n;
        tw_scalar_point *points;
        g_assert_cmpint(tw_run_store_read_scalars(reader, tag, &cursor, 0, &points, &n), ==, 0);
        for (int64_t i = 0; i < n; i++)
            g_assert_cmpint(points[i].step, ==, seen + i);
        seen += n;
        free(points);
        g_assert_cmpint(seen, ==, step + 1);
        /* Below 512 points, one row, rewritten under the same id. */
        int64_t rows = sql_int(s.db, "SELECT count(*) FROM scalar_chunks");
        int64_t first = sql_int(s.db, "SELECT min(id) FROM scalar_chunks");
        g_assert_cmpint(rows, ==, step / 512 + 1);
        if (first_chunk < 0)
            first_chunk = first;
        g_assert_cmpint(first, ==, first_chunk);
    }
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM scalar_chunks"), ==, 3);
    g_assert_cmpint(sql_int(s.db, "SELECT count FROM scalar_chunks ORDER BY id LIMIT 1"), ==, 512);
    g_assert_cmpint(sql_int(s.db, "SELECT count FROM scalar_chunks ORDER BY id LIMIT 1 OFFSET 1"), ==, 512);
    g_assert_cmpint(sql_int(s.db, "SELECT count FROM scalar_chunks ORDER BY id DESC LIMIT 1"), ==, 1300 - 1024);
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "long", "x", &p), ==, 1300);
    for (int i = 0; i < 1300; i++)
        g_assert_cmpfloat(p[i].value, ==, i * 0.25);
    free(p);
    tw_run_store_close(reader);
    scratch_free(&s);
}

/* A step going back (a resumed loop) starts a new chunk: the store's rule
 * that steps within a chunk never go down. */
static void test_step_going_back(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "back", NULL);
    for (int i = 0; i < 10; i++)
        tw_summary_scalar(w, "x", i, i);
    for (int i = 5; i < 10; i++)
        tw_summary_scalar(w, "x", -i, i);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM scalar_chunks"), ==, 2);
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "back", "x", &p), ==, 15);
    g_assert_cmpint(p[10].step, ==, 5);
    g_assert_cmpfloat(p[10].value, ==, -5);
    free(p);
    scratch_free(&s);
}

/* ---- histograms ------------------------------------------------------------- */

/* The statistics the slow way: every value read back as a double. */
static void brute_histogram(tw_tensor *t, tw_histogram_stats *h)
{
    int64_t n = tw_tensor_numel(t);
    double *v = g_new(double, n + 1);
    tw_tensor *d = tw_cast(t, TW_FLOAT64); /* the caller's scope owns it */
    g_assert_cmpint(tw_tensor_copy_to(d, v, n * sizeof *v), ==, 0);
    memset(h, 0, sizeof *h);
    double lo = INFINITY, hi = -INFINITY, flo = INFINITY, fhi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            h->nan_count++;
            continue;
        }
        h->count++;
        h->sum += v[i];
        h->sum_squares += v[i] * v[i];
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
        if (isfinite(v[i])) {
            flo = fmin(flo, v[i]);
            fhi = fmax(fhi, v[i]);
        }
    }
    h->min = h->count ? lo : NAN;
    h->max = h->count ? hi : NAN;
    /* float32 values are bucketed in float arithmetic, the rest in double. */
    bool in_float = tw_tensor_dtype(t) == TW_FLOAT32;
    double scale = fhi > flo ? 64 / (fhi - flo) : 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        int k = v[i] < flo   ? 0
                : v[i] > fhi ? 63
                : in_float   ? (int)(((float)v[i] - (float)flo) * (float)scale)
                             : (int)((v[i] - flo) * scale);
        h->buckets[k > 63 ? 63 : k]++;
    }
    g_free(v);
}

static bool close_enough(double a, double b, double scale)
{
    return a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-12 * scale;
}

static void assert_same_histogram(const tw_histogram_stats *a, const tw_histogram_stats *b)
{
    g_assert_cmpint(a->count, ==, b->count);
    g_assert_cmpint(a->nan_count, ==, b->nan_count);
    g_assert_true(same_double(a->min, b->min) || (isnan(a->min) && isnan(b->min)));
    g_assert_true(same_double(a->max, b->max) || (isnan(a->max) && isnan(b->max)));
    /* Sums in another order: equal to rounding (exact for the integer sets;
     * NaN for -Inf plus +Inf). */
    g_assert_true(close_enough(a->sum, b->sum, b->sum_squares));
    g_assert_true(close_enough(a->sum_squares, b->sum_squares, b->sum_squares));
    for (int k = 0; k < TW_HISTOGRAM_BUCKETS; k++)
        g_assert_cmpfloat(a->buckets[k], ==, b->buckets[k]);
}

static void check_histogram(tw_tensor *t)
{
    tw_histogram_stats fast, slow;
    g_assert_cmpint(tw__histogram_compute(t, &fast), ==, 0);
    brute_histogram(t, &slow);
    assert_same_histogram(&fast, &slow);
    double total = 0;
    for (int k = 0; k < TW_HISTOGRAM_BUCKETS; k++)
        total += fast.buckets[k];
    g_assert_cmpfloat(total, ==, (double)fast.count);
}

static void test_histogram_statistics(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(7);
    /* Finite values (the fast path), a length no lane or block divides. */
    check_histogram(tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(235203), 0, 1));
    check_histogram(tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(1001), 3, 1));
    /* An MLP kernel's size, with NaNs sprinkled in (the careful path). */
    tw_tensor *w = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(784, 300), 0, 0.05);
    float *data = tw_tensor_data(w);
    for (int i = 0; i < 235200; i += 9973)
        data[i] = NAN;
    check_histogram(w);
    check_histogram(tw_transpose(w)); /* not contiguous */
    check_histogram(tw_cast(w, TW_FLOAT64));
    tw_tensor *ints = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(1000), -1000, 1000);
    check_histogram(tw_cast(ints, TW_INT32));
    check_histogram(tw_cast(ints, TW_INT64));
    check_histogram(tw_cast(tw_abs(ints), TW_UINT8));
    check_histogram(tw_greater(ints, tw_scalar(0)));
    check_histogram(tw_tensor_from_data((float[]){1, -INFINITY, 3, INFINITY, NAN, 2}, TW_FLOAT32, TW_SHAPE(6)));
    check_histogram(tw_tensor_from_data((float[]){INFINITY, -INFINITY}, TW_FLOAT32, TW_SHAPE(2)));
    check_histogram(tw_full(4.5, TW_FLOAT32, TW_SHAPE(3, 3)));
    check_histogram(tw_full(NAN, TW_FLOAT32, TW_SHAPE(3)));
    check_histogram(tw_zeros(TW_FLOAT32, TW_SHAPE(0)));

    /* By hand: 0..127 puts two values in each bucket; 127 itself is the
     * top edge and lands in the last bucket. */
    tw_histogram_stats h;
    g_assert_cmpint(tw__histogram_compute(tw_arange(0, 128, 1, TW_INT32), &h), ==, 0);
    g_assert_cmpint(h.count, ==, 128);
    g_assert_cmpfloat(h.min, ==, 0);
    g_assert_cmpfloat(h.max, ==, 127);
    g_assert_cmpfloat(h.sum, ==, 127 * 128 / 2);
    for (int k = 0; k < 64; k++)
        g_assert_cmpfloat(h.buckets[k], ==, 2);
    g_assert_cmpint(tw__histogram_compute(tw_tensor_from_data((float[]){NAN, -INFINITY, 5, 7, INFINITY}, TW_FLOAT32,
                                                                  TW_SHAPE(5)),
                                          &h),
                    ==, 0);
    g_assert_cmpint(h.count, ==, 4);
    g_assert_cmpint(h.nan_count, ==, 1);
    g_assert_cmpfloat(h.min, ==, -INFINITY);
    g_assert_cmpfloat(h.max, ==, INFINITY);
    g_assert_cmpfloat(h.buckets[0], ==, 2);  /* -Inf and 5, the finite minimum */
    g_assert_cmpfloat(h.buckets[63], ==, 2); /* 7, the finite maximum, and +Inf */
    g_assert_cmpint(tw__histogram_compute(NULL, &h), ==, -1);
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_histograms_texts_graphs(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "h", NULL);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(3);
    tw_tensor *values[3];
    for (int i = 0; i < 3; i++) {
        values[i] = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(50, 40), i, 1);
        g_assert_cmpint(tw_summary_histogram(w, "weights/dense/kernel", values[i], 100 * i), ==, 0);
    }
    const char *graph = "{\"nodes\": [{\"id\": \"dense\"}], \"edges\": []}";
    g_assert_cmpint(tw_summary_text(w, "notes", "first 'quoted' text; DROP TABLE runs;", 1), ==, 0);
    g_assert_cmpint(tw_summary_text(w, "notes", "second \xc3\xa9t\xc3\xa9", 2), ==, 0);
    g_assert_cmpint(tw_summary_graph(w, "model", graph, 0), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_run_store *store = open_reader(s.db);
    int64_t tag = tag_of(store, "h", "weights/dense/kernel");
    tw_histogram *h;
    int n;
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 1000, 0, &h, &n), ==, 0);
    g_assert_cmpint(n, ==, 3);
    for (int i = 0; i < 3; i++) {
        tw_histogram_stats want;
        g_assert_cmpint(tw__histogram_compute(values[i], &want), ==, 0);
        g_assert_cmpint(h[i].step, ==, 100 * i);
        g_assert_cmpfloat(h[i].count, ==, 2000);
        g_assert_cmpfloat(h[i].min, ==, want.min);
        g_assert_cmpfloat(h[i].max, ==, want.max);
        g_assert_cmpfloat(h[i].sum, ==, want.sum);
        g_assert_cmpfloat(h[i].sum_squares, ==, want.sum_squares);
        g_assert_cmpint(h[i].nbuckets, ==, 64);
        for (int k = 0; k < 64; k++)
            g_assert_cmpfloat(h[i].buckets[k], ==, want.buckets[k]);
    }
    tw_histogram_free(h, n);

    tw_text_record *texts;
    tw_series_cursor cursor = {0};
    g_assert_cmpint(tw_run_store_read_texts(store, tag_of(store, "h", "notes"), &cursor, &texts, &n), ==, 0);
    g_assert_cmpint(n, ==, 2);
    g_assert_cmpstr(texts[0].text, ==, "first 'quoted' text; DROP TABLE runs;");
    g_assert_cmpstr(texts[1].text, ==, "second \xc3\xa9t\xc3\xa9");
    g_assert_cmpint(texts[1].step, ==, 2);
    tw_text_record_free(texts, n);
    cursor = (tw_series_cursor){0};
    g_assert_cmpint(tw_run_store_read_texts(store, tag_of(store, "h", "model"), &cursor, &texts, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(texts[0].text, ==, graph);
    tw_text_record_free(texts, n);

    tw_tag_info *tags;
    tw_run_info run = get_run(store, "h");
    g_assert_cmpint(tw_run_store_list_tags(store, run.id, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 3);
    int kinds = 0;
    for (int i = 0; i < n; i++)
        kinds |= 1 << tags[i].kind;
    g_assert_cmpint(kinds, ==, 1 << TW_SERIES_HISTOGRAM | 1 << TW_SERIES_TEXT | 1 << TW_SERIES_GRAPH);
    tw_tag_info_free(tags, n);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    tw_rng_free(rng);
    tw_scope_end();
    scratch_free(&s);
}

/* ---- runs: options, names taken, resuming, bad calls ---------------------------- */

static void test_run_options_and_hparams(void)
{
    scratch s = scratch_new();
    tw_summary_run_options o = {.model_json = "{\"class_name\": \"Sequential\"}",
                                .hparams_json = "{\"optimizer\": \"adam\"}",
                                .notes = "first try"};
    tw_summary_writer *w = tw_summary_writer_open(s.db, "r", &o);
    g_assert_nonnull(w);
    g_assert_cmpint(tw_summary_hparams(w, NULL, "{\"test_accuracy\": 0.84}"), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_STOPPED), ==, 0);

    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "r");
    g_assert_cmpstr(run.model_json, ==, o.model_json);
    g_assert_cmpstr(run.hparams_json, ==, o.hparams_json); /* NULL left it as it was */
    g_assert_cmpstr(run.metrics_json, ==, "{\"test_accuracy\": 0.84}");
    g_assert_cmpstr(run.notes, ==, "first try");
    g_assert_cmpint(run.status, ==, TW_RUN_STOPPED);
    tw_run_info_clear(&run);
    tw_run_store_close(store);

    /* The name is taken unless appending. */
    g_assert_null(tw_summary_writer_open(s.db, "r", NULL));
    g_assert_nonnull(strstr(tw_last_error(), "'r' is already in the file"));
    g_assert_nonnull(strstr(tw_last_error(), s.db));
    g_assert_null(tw_summary_writer_open(s.db, "", NULL));
    scratch_free(&s);
}

/* Appending to a run: its tags keep their kinds (a clash fails at once),
 * the last open chunk goes on filling, and the status is running again. */
static void test_append_resumes(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "resumed", NULL);
    for (int i = 0; i < 100; i++)
        tw_summary_scalar(w, "loss", i, i);
    tw_summary_text(w, "log", "epoch 1", 100);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_STOPPED), ==, 0);

    tw_summary_run_options o = {.append = true};
    w = tw_summary_writer_open(s.db, "resumed", &o);
    g_assert_nonnull(w);
    g_assert_cmpint(tw_summary_scalar(w, "log", 1, 101), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "'log' is a text series"));
    for (int i = 100; i < 200; i++)
        g_assert_cmpint(tw_summary_scalar(w, "loss", i, i), ==, 0);
    tw_summary_flush(w);
    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "resumed");
    g_assert_cmpint(run.status, ==, TW_RUN_RUNNING);
    g_assert_cmpint(run.id, ==, tw_summary_writer_run_id(w));
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM scalar_chunks"), ==, 1);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM runs"), ==, 1);
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "resumed", "loss", &p), ==, 200);
    for (int i = 0; i < 200; i++)
        g_assert_cmpint(p[i].step, ==, i);
    free(p);

    /* Not while another writer has it open. */
    w = tw_summary_writer_open(s.db, "resumed", &o);
    g_assert_null(tw_summary_writer_open(s.db, "resumed", &o));
    g_assert_nonnull(strstr(tw_last_error(), "run 'resumed' is still being written by another writer"));
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    scratch_free(&s);
}

static void test_bad_calls(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "bad", NULL);
    g_assert_cmpint(tw_summary_scalar(NULL, "x", 1, 0), ==, -1);
    g_assert_cmpint(tw_summary_scalar(w, NULL, 1, 0), ==, -1);
    g_assert_cmpint(tw_summary_text(w, "t", NULL, 0), ==, -1);
    g_assert_cmpint(tw_summary_histogram(w, "h", NULL, 0), ==, -1);
    g_assert_cmpint(tw_summary_scalar(w, "x", 1, 0), ==, 0);
    g_assert_cmpint(tw_summary_text(w, "x", "text", 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "tag 'x' is a scalar series; it cannot take a text"));
    tw_tensor *t = tw_ones(TW_FLOAT32, TW_SHAPE(3));
    g_assert_cmpint(tw_summary_histogram(w, "x", t, 0), ==, -1);
    tw_tensor_unref(t);
    /* Many tags: the table grows. */
    for (int i = 0; i < 300; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "tag/%d", i);
        g_assert_cmpint(tw_summary_scalar(w, tag, i, 0), ==, 0);
    }
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM tags"), ==, 301);
    g_assert_cmpint(count_scalars(s.db, "bad", "tag/299"), ==, 1);
    g_assert_cmpint(count_scalars(s.db, "bad", "x"), ==, 1);
    scratch_free(&s);
}

static void test_metric(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "m", NULL);
    tw_metric *mean = tw_metric_new("mean");
    for (int step = 1; step <= 30; step++) {
        tw_metric_update_value(mean, step, 1);
        if (step % 10 == 0)
            g_assert_cmpint(tw_summary_metric(w, "train/loss", mean, step), ==, 0);
    }
    tw_metric_free(mean);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "m", "train/loss", &p), ==, 3);
    g_assert_cmpfloat(p[0].value, ==, 5.5); /* the mean of 1..10, then reset */
    g_assert_cmpfloat(p[1].value, ==, 15.5);
    g_assert_cmpfloat(p[2].value, ==, 25.5);
    g_assert_cmpint(p[2].step, ==, 30);
    free(p);
    scratch_free(&s);
}

/* The default file is $XDG_DATA_HOME/twb/runs.db (set in main). */
static void test_default_file(void)
{
    tw_summary_writer *w = tw_summary_writer_open(NULL, "default", NULL);
    g_assert_nonnull(w);
    tw_summary_scalar(w, "x", 1, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    char *path = tw_run_store_default_path();
    g_assert_true(g_str_has_prefix(path, g_getenv("XDG_DATA_HOME")));
    g_assert_cmpint(count_scalars(path, "default", "x"), ==, 1);
    g_free(path);
}

/* ---- timing and several writers ------------------------------------------------ */

/* Without a flush, a value is in the file within about 100 ms (the
 * thread's wake) plus one transaction. */
static void test_visible_without_flush(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "live", NULL);
    tw_summary_scalar(w, "x", 0, 0);
    tw_summary_flush(w);
    tw_run_store *reader = open_reader(s.db);
    int64_t tag = tag_of(reader, "live", "x");
    tw_series_cursor cursor = {0};
    tw_scalar_point *points;
    int64_t n;
    g_assert_cmpint(tw_run_store_read_scalars(reader, tag, &cursor, 0, &points, &n), ==, 0);
    free(points);
    /* Loose enough for a loaded machine, tight enough to fail a writer that
     * waits for flushes or wakes every half second. */
    double limit = RUNNING_ON_VALGRIND ? 2.0 : 0.4, worst = 0;
    for (int i = 1; i <= 5; i++) {
        g_usleep(37000 * i % 100000); /* at different points of the wake cycle */
        double t0 = monotonic();
        tw_summary_scalar(w, "x", i, i);
        for (n = 0; n == 0 && monotonic() - t0 < 5;) {
            g_usleep(2000);
            g_assert_cmpint(tw_run_store_read_scalars(reader, tag, &cursor, 0, &points, &n), ==, 0);
            free(points);
        }
        g_assert_cmpint(n, ==, 1);
        worst = fmax(worst, monotonic() - t0);
    }
    g_test_message("worst delay until visible: %.0f ms", worst * 1e3);
    g_assert_cmpfloat(worst, <, limit);
    tw_run_store_close(reader);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    scratch_free(&s);
}

/* A train and a test writer on one file and a third on another, all open
 * at once and written in turns. */
static void test_several_writers(void)
{
    scratch s = scratch_new();
    char *other = g_build_filename(s.dir, "other.db", NULL);
    tw_summary_writer *train = tw_summary_writer_open(s.db, "run/train", NULL);
    tw_summary_writer *test = tw_summary_writer_open(s.db, "run/test", NULL);
    tw_summary_writer *third = tw_summary_writer_open(other, "run/train", NULL);
    g_assert_true(train && test && third);
    for (int step = 0; step < 5000; step++) {
        tw_summary_scalar(train, "loss", 1.0 / (step + 1), step);
        tw_summary_scalar(third, "loss", step, step);
        if (step % 10 == 0)
            tw_summary_scalar(test, "loss", 2.0 / (step + 1), step);
        if (step % 1000 == 0)
            tw_summary_flush(test);
    }
    g_assert_cmpint(tw_summary_writer_close(test, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(train, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(third, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(count_scalars(s.db, "run/train", "loss"), ==, 5000);
    g_assert_cmpint(count_scalars(s.db, "run/test", "loss"), ==, 500);
    g_assert_cmpint(count_scalars(other, "run/train", "loss"), ==, 5000);
    g_free(other);
    scratch_free(&s);
}

/* ---- the fit logger ------------------------------------------------------------- */

static void test_logger_on_fit(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "fit", NULL);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(5);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(100, 4), 0, 1);
    tw_tensor *y = tw_cast(tw_greater(tw_sum(x, TW_AXES(1), false), tw_scalar(0)), TW_INT32);
    tw_model *m = tw_sequential_new("mlp");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 4}}));
    tw_model_add(m, tw_dense(8, "relu"));
    tw_model_add(m, tw_dense(2, NULL));
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    const char *metrics[] = {"accuracy"};
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("adam", 0.01), &loss, 1, metrics), ==, 0);
    tw_summary_logger *logger = tw_summary_logger_new(w, 1, 2);
    g_assert_nonnull(logger);
    tw_callback cb = tw_summary_logger_callback(logger);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 2;
    opt.batch_size = 16;
    opt.validation_split = 0.2; /* 80 examples: 5 steps an epoch */
    opt.expose_gradients = true;
    opt.callbacks = &cb;
    opt.ncallbacks = 1;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    g_assert_nonnull(h);
    tw_history_free(h);
    tw_summary_logger_free(logger);
    g_assert_null(tw_summary_logger_new(w, 0, 1));
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    g_assert_cmpint(count_scalars(s.db, "fit", "train/loss"), ==, 10);
    g_assert_cmpint(count_scalars(s.db, "fit", "train/accuracy"), ==, 10);
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "fit", "train/learning_rate", &p), ==, 10);
    g_assert_cmpfloat(fabs(p[0].value - 0.01), <, 1e-9);
    g_assert_cmpint(p[0].step, ==, 1);
    g_assert_cmpint(p[9].step, ==, 10);
    free(p);
    g_assert_cmpint(read_scalars(s.db, "fit", "epoch/loss", &p), ==, 2);
    g_assert_cmpint(p[1].step, ==, 10);
    free(p);
    g_assert_cmpint(count_scalars(s.db, "fit", "validation/loss"), ==, 2);
    g_assert_cmpint(count_scalars(s.db, "fit", "validation/accuracy"), ==, 2);

    tw_run_store *store = open_reader(s.db);
    const char *histogram_tags[] = {"weights/dense/kernel", "weights/dense/bias", "weights/dense_1/kernel",
                                    "gradients/dense/kernel", "gradients/dense_1/bias"};
    const double sizes[] = {4 * 8, 8, 8 * 2, 4 * 8, 2};
    for (int i = 0; i < 5; i++) {
        int64_t tag = tag_of(store, "fit", histogram_tags[i]);
        g_assert_cmpint(tag, >, 0);
        tw_histogram *hist;
        int n;
        g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 100, 0, &hist, &n), ==, 0);
        g_assert_cmpint(n, ==, 5); /* steps 2, 4, 6, 8, 10 */
        g_assert_cmpint(hist[4].step, ==, 10);
        g_assert_cmpfloat(hist[0].count, ==, sizes[i]);
        tw_histogram_free(hist, n);
    }
    tw_run_store_close(store);
    tw_rng_free(rng);
    tw_layer_unref(m);
    tw_scope_end();
    scratch_free(&s);
}

/* ---- faults --------------------------------------------------------------------- */

/* Runs fn in a child process and returns its exit status (-1: a signal). */
static int in_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0)
        _exit(fn(arg));
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A read-only file, for real: as root, the child gives up root first (root
 * writes through any mode bits). The file opens for reading, so the writer
 * exists but logs nothing and says why. */
static int read_only_child(void *arg)
{
    const char *path = arg;
    if (geteuid() == 0 && setuid(65534) != 0)
        return 10;
    tw_summary_writer *w = tw_summary_writer_open(path, "second", NULL);
    if (!w)
        return 11;
    const char *e = tw_summary_writer_error(w);
    if (!e || !strstr(e, path) || !strstr(e, "read-only") || !strstr(e, "'second'"))
        return 12;
    for (int i = 5; i < 50; i++)
        if (tw_summary_scalar(w, "x", i, i) != 0)
            return 13;
    if (tw_summary_flush(w) != 0 || tw_summary_writer_lost_from_step(w) != 5)
        return 14;
    if (tw_summary_writer_close(w, TW_RUN_FINISHED) != -1 || !strstr(tw_last_error(), path))
        return 15;
    /* A taken name is still refused. */
    return tw_summary_writer_open(path, "first", NULL) ? 16 : 0;
}

static void test_fault_read_only(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "first", NULL);
    tw_summary_scalar(w, "x", 1, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(g_chmod(s.db, 0444), ==, 0);
    g_assert_cmpint(g_chmod(s.dir, 0777), ==, 0); /* the child may add -shm beside it */
    g_assert_cmpint(in_child(read_only_child, s.db), ==, 0);
    g_assert_cmpint(g_chmod(s.db, 0644), ==, 0);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM runs"), ==, 1);
    g_assert_cmpint(count_scalars(s.db, "first", "x"), ==, 1);
    scratch_free(&s);
}

static int64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : 0;
}

/* A full disk: the file size limit makes writes past it fail as a full disk
 * would (EFBIG where a disk gives ENOSPC: the same path through SQLite). */
static void test_fault_full_disk(void)
{
    scratch s = scratch_new();
    char *wal = g_strconcat(s.db, "-wal", NULL);
    tw_summary_writer *w = tw_summary_writer_open(s.db, "full", NULL);
    int64_t step = 0;
    for (; step < 1000; step++)
        tw_summary_scalar(w, "x", step, step);
    tw_summary_flush(w);
    g_assert_null(tw_summary_writer_error(w));

    struct rlimit saved, small;
    g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    small = saved;
    small.rlim_cur = (rlim_t)MAX(file_size(s.db), file_size(wal)) + 32 * 1024;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
    for (; step < 200000; step++)
        g_assert_cmpint(tw_summary_scalar(w, "x", step, step), ==, 0);
    g_assert_cmpint(tw_summary_flush(w), ==, 0);
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    signal(SIGXFSZ, old_handler);

    char *e = g_strdup(tw_summary_writer_error(w));
    g_assert_nonnull(e);
    g_test_message("%s", e);
    g_assert_true(g_str_has_prefix(e, s.db));
    g_assert_true(strstr(e, ": cannot write to it: disk I/O error") || strstr(e, ": cannot write to it: database or disk is full"));
    int64_t lost = tw_summary_writer_lost_from_step(w);
    g_assert_cmpint(lost, >=, 1000);
    g_assert_cmpint(lost, <, 200000);
    g_assert_cmpint(tw_summary_scalar(w, "x", 0, step), ==, 0); /* calls go on */
    /* The run says so at once, while the writer is still open: the small
     * write of the mark fits where the failed transaction's did. */
    tw_run_store *live = open_reader(s.db);
    tw_run_info during = get_run(live, "full");
    g_assert_cmpint(during.logs_lost_from_step, ==, lost);
    g_assert_cmpint(during.status, ==, TW_RUN_RUNNING);
    tw_run_info_clear(&during);
    tw_run_store_close(live);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), s.db));

    /* Everything before the lost step is there, nothing after. */
    tw_scalar_point *p;
    g_assert_cmpint(read_scalars(s.db, "full", "x", &p), ==, lost);
    g_assert_cmpint(p[lost - 1].step, ==, lost - 1);
    free(p);
    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "full");
    g_assert_cmpint(run.logs_lost_from_step, ==, lost);
    g_assert_cmpstr(run.logs_lost_reason, ==, e);
    g_free(e);
    g_assert_cmpint(run.status, ==, TW_RUN_FINISHED);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), ==, 1);
    g_free(wal);
    scratch_free(&s);
}

/* A locked file: another connection holds the write lock longer than the
 * writer waits. Flushes stay quick once the writer has given up, and the
 * run records the loss once the lock is gone. */
static void test_fault_locked(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "locked", NULL);
    tw__summary_writer_set_busy_limit(w, 1000);
    for (int step = 0; step < 10; step++)
        tw_summary_scalar(w, "x", step, step);
    tw_summary_flush(w);

    sqlite3 *holder;
    g_assert_cmpint(sqlite3_open(s.db, &holder), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);
    for (int step = 10; step < 20; step++)
        g_assert_cmpint(tw_summary_scalar(w, "x", step, step), ==, 0);
    double t0 = monotonic();
    g_assert_cmpint(tw_summary_flush(w), ==, 0);
    double waited = monotonic() - t0;
    g_assert_cmpfloat(waited, >=, 0.99);
    const char *e = tw_summary_writer_error(w);
    g_assert_nonnull(e);
    g_test_message("%s", e);
    g_assert_true(g_str_has_prefix(e, s.db));
    g_assert_nonnull(strstr(e, "locked by another program"));
    g_assert_nonnull(strstr(e, "from step 10 on are lost"));
    g_assert_cmpint(tw_summary_writer_lost_from_step(w), ==, 10);
    tw_summary_scalar(w, "x", 20, 20);
    t0 = monotonic();
    tw_summary_flush(w);
    g_assert_cmpfloat(monotonic() - t0, <, RUNNING_ON_VALGRIND ? 0.9 : 0.5); /* no second wait for the lock */
    g_assert_cmpint(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close(holder);

    char *message = g_strdup(e);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(count_scalars(s.db, "locked", "x"), ==, 10);
    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "locked");
    g_assert_cmpint(run.logs_lost_from_step, ==, 10);
    g_assert_nonnull(strstr(run.logs_lost_reason, "locked by another program"));
    g_assert_cmpint(run.status, ==, TW_RUN_FINISHED);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    scratch_free(&s);
}

/* ---- other processes ------------------------------------------------------------- */

typedef struct {
    const char *path;
    int fd; /* kill -9: where the child reports each flushed step */
} child_args;

static int killed_child(void *arg)
{
    child_args *a = arg;
    tw_summary_writer *w = tw_summary_writer_open(a->path, "killed", NULL);
    if (!w)
        return 1;
    for (int64_t step = 0;; step++) {
        tw_summary_scalar(w, "loss", (double)step, step);
        if (step % 97 == 0) {
            tw_summary_flush(w);
            if (write(a->fd, &step, sizeof step) != sizeof step)
                return 2;
        }
    }
}

/* Killed with SIGKILL while writing: the file is sound, every flushed row
 * is there, and the next opening marks the run interrupted. */
static void test_kill_9(void)
{
    scratch s = scratch_new();
    int fds[2];
    g_assert_cmpint(pipe(fds), ==, 0);
    child_args a = {s.db, fds[1]};
    fflush(NULL);
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(killed_child(&a));
    }
    close(fds[1]);
    int64_t flushed = -1, step;
    while (flushed < 5000 && read(fds[0], &step, sizeof step) == sizeof step)
        flushed = step;
    g_assert_cmpint(flushed, >=, 5000);
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    while (read(fds[0], &step, sizeof step) == sizeof step) /* flushed before it died */
        flushed = step;
    close(fds[0]);

    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), ==, 1);
    tw_scalar_point *p;
    int64_t n = read_scalars(s.db, "killed", "loss", &p);
    g_assert_cmpint(n, >, flushed);
    for (int64_t i = 0; i < n; i++)
        g_assert_cmpint(p[i].step, ==, i);
    free(p);
    tw_run_store *store = tw_run_store_open(s.db, 0);
    g_assert_nonnull(store);
    tw_run_info run = get_run(store, "killed");
    g_assert_cmpint(run.status, ==, TW_RUN_INTERRUPTED);
    g_assert_cmpint(run.pid, ==, pid);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    scratch_free(&s);
}

#define RACE_STEPS 30000
#define RACE_TAGS 3

static int racing_child(void *arg)
{
    const char *name = arg;
    char path[4096];
    g_strlcpy(path, name + strlen(name) + 1, sizeof path);
    tw_summary_writer *w = tw_summary_writer_open(path, name, NULL);
    if (!w)
        return 1;
    static const char *const tags[RACE_TAGS] = {"train/loss", "train/accuracy", "train/learning_rate"};
    tw_tensor *values = tw_ones(TW_FLOAT32, TW_SHAPE(1000));
    for (int step = 0; step < RACE_STEPS; step++) {
        for (int t = 0; t < RACE_TAGS; t++)
            tw_summary_scalar(w, tags[t], step + t, step);
        if (step % 1000 == 0)
            tw_summary_histogram(w, "weights", values, step);
    }
    tw_tensor_unref(values);
    return tw_summary_writer_close(w, TW_RUN_FINISHED) == 0 ? 0 : 2;
}

/* Two processes write two runs into one file at full speed while this one
 * tails their series: no errors anywhere, and exact counts. */
static void test_two_processes_and_reader(void)
{
    scratch s = scratch_new();
    /* Create the file first, so the writers only meet on the write lock. */
    tw_summary_writer_close(tw_summary_writer_open(s.db, "setup", NULL), TW_RUN_FINISHED);
    char args[2][4200];
    pid_t pids[2];
    fflush(NULL);
    for (int i = 0; i < 2; i++) {
        int len = snprintf(args[i], sizeof args[i], "writer-%d", i);
        g_strlcpy(args[i] + len + 1, s.db, sizeof args[i] - len - 1);
        pids[i] = fork();
        g_assert_cmpint(pids[i], >=, 0);
        if (pids[i] == 0)
            _exit(racing_child(args[i]));
    }
    tw_run_store *reader = open_reader(s.db);
    int64_t tag[2] = {-1, -1}, seen[2] = {0, 0};
    tw_series_cursor cursor[2] = {{0}};
    int running = 2, status[2] = {-1, -1};
    while (running > 0) {
        for (int i = 0; i < 2; i++) {
            if (tag[i] < 0) {
                tw_run_info run;
                char name[16];
                snprintf(name, sizeof name, "writer-%d", i);
                if (tw_run_store_get_run(reader, name, &run) == 0) {
                    tag[i] = tw_run_store_find_tag(reader, run.id, "train/loss");
                    tw_run_info_clear(&run);
                }
                continue;
            }
            tw_scalar_point *points;
            int64_t n;
            g_assert_cmpint(tw_run_store_read_scalars(reader, tag[i], &cursor[i], 0, &points, &n), ==, 0);
            for (int64_t k = 0; k < n; k++)
                g_assert_cmpint(points[k].step, ==, seen[i] + k);
            seen[i] += n;
            free(points);
        }
        for (int i = 0; i < 2; i++) {
            int st;
            if (status[i] < 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 100;
                running--;
            }
        }
        g_usleep(5000);
    }
    g_assert_cmpint(status[0], ==, 0);
    g_assert_cmpint(status[1], ==, 0);
    tw_run_store_close(reader);
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "writer-%d", i);
        g_assert_cmpint(count_scalars(s.db, name, "train/loss"), ==, RACE_STEPS);
        g_assert_cmpint(count_scalars(s.db, name, "train/learning_rate"), ==, RACE_STEPS);
        tw_run_store *store = open_reader(s.db);
        tw_histogram *h;
        int n;
        g_assert_cmpint(tw_run_store_read_histograms(store, tag_of(store, name, "weights"), 0, RACE_STEPS, 0, &h, &n),
                        ==, 0);
        g_assert_cmpint(n, ==, RACE_STEPS / 1000);
        tw_histogram_free(h, n);
        tw_run_info run = get_run(store, name);
        g_assert_cmpint(run.status, ==, TW_RUN_FINISHED);
        tw_run_info_clear(&run);
        tw_run_store_close(store);
        g_assert_cmpint(seen[i], <=, RACE_STEPS);
    }
    g_test_message("the reader tailed %lld and %lld points while they wrote", (long long)seen[0], (long long)seen[1]);
    g_assert_cmpint(sql_int(s.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), ==, 1);
    scratch_free(&s);
}


/* Closing with a reason stores it in the run (failure_reason); a plain
 * close stores none. */
static void test_close_with_reason(void)
{
    scratch s = scratch_new();
    tw_summary_writer *w = tw_summary_writer_open(s.db, "failed", NULL);
    g_assert_cmpint(tw_summary_writer_close_with_reason(w, TW_RUN_FAILED, "fit: epoch 2, step 7: the loss is NaN"), ==,
                    0);
    w = tw_summary_writer_open(s.db, "fine", NULL);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_run_store *store = open_reader(s.db);
    tw_run_info run = get_run(store, "failed");
    g_assert_cmpint(run.status, ==, TW_RUN_FAILED);
    g_assert_cmpstr(run.failure_reason, ==, "fit: epoch 2, step 7: the loss is NaN");
    tw_run_info_clear(&run);
    run = get_run(store, "fine");
    g_assert_null(run.failure_reason);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    scratch_free(&s);
}

/* Writers opening and closing one after another (each close checkpoints
 * the log into the file under an exclusive lock) while a reader opens the
 * file and lists its runs again and again: the reader waits for the lock,
 * never fails with "database is locked". */
static void test_readers_wait_for_writers(void)
{
    scratch s = scratch_new();
    tw_summary_writer_close(tw_summary_writer_open(s.db, "setup", NULL), TW_RUN_FINISHED);
    fflush(NULL);
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        for (int i = 0; i < 60; i++) {
            char name[32];
            snprintf(name, sizeof name, "w-%d", i);
            tw_summary_writer *w = tw_summary_writer_open(s.db, name, NULL);
            if (!w)
                _exit(1);
            for (int step = 0; step < 2000; step++)
                tw_summary_scalar(w, "x", step, step);
            if (tw_summary_writer_close(w, TW_RUN_FINISHED))
                _exit(2);
        }
        _exit(0);
    }
    int failures = 0, opens = 0, status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        tw_run_store *store = tw_run_store_open(s.db, TW_STORE_READ_ONLY);
        tw_run_info *runs = NULL;
        int n = 0;
        if (!store || tw_run_store_list_runs(store, &runs, &n)) {
            if (failures++ == 0)
                g_test_message("%s", tw_last_error());
        }
        tw_run_info_free(runs, n);
        tw_run_store_close(store);
        opens++;
    }
    g_test_message("%d reader opens, %d failed", opens, failures);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_cmpint(failures, ==, 0);
    scratch_free(&s);
}

int main(int argc, char **argv)
{
    /* Before GLib reads it: the default file goes to a scratch folder. */
    GError *err = NULL;
    char *home = g_dir_make_tmp("twb-summary-home-XXXXXX", &err);
    g_assert_no_error(err);
    g_setenv("XDG_DATA_HOME", home, TRUE);
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/summary/scalars-round-trip", test_scalars_round_trip);
    g_test_add_func("/data/summary/chunk-boundaries", test_chunk_boundaries);
    g_test_add_func("/data/summary/step-going-back", test_step_going_back);
    g_test_add_func("/data/summary/histogram-statistics", test_histogram_statistics);
    g_test_add_func("/data/summary/histograms-texts-graphs", test_histograms_texts_graphs);
    g_test_add_func("/data/summary/run-options-and-hparams", test_run_options_and_hparams);
    g_test_add_func("/data/summary/append-resumes", test_append_resumes);
    g_test_add_func("/data/summary/bad-calls", test_bad_calls);
    g_test_add_func("/data/summary/metric", test_metric);
    g_test_add_func("/data/summary/default-file", test_default_file);
    g_test_add_func("/data/summary/visible-without-flush", test_visible_without_flush);
    g_test_add_func("/data/summary/several-writers", test_several_writers);
    g_test_add_func("/data/summary/logger-on-fit", test_logger_on_fit);
    g_test_add_func("/data/summary/close-with-reason", test_close_with_reason);
    g_test_add_func("/data/summary/readers-wait-for-writers", test_readers_wait_for_writers);
    g_test_add_func("/data/summary/fault-read-only", test_fault_read_only);
    g_test_add_func("/data/summary/fault-full-disk", test_fault_full_disk);
    g_test_add_func("/data/summary/fault-locked", test_fault_locked);
    g_test_add_func("/data/summary/kill-9", test_kill_9);
    g_test_add_func("/data/summary/two-processes-and-reader", test_two_processes_and_reader);
    int rc = g_test_run();
    char *twb = g_build_filename(home, "twb", NULL);
    scratch defaults = {twb, g_build_filename(twb, "runs.db", NULL)};
    if (g_file_test(twb, G_FILE_TEST_IS_DIR)) {
        scratch_free(&defaults);
    } else {
        g_free(defaults.db);
        g_free(twb);
    }
    g_rmdir(home);
    g_free(home);
    return rc;
}
