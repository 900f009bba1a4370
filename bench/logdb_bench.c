/* twb-logdb-bench: the run database's benchmarks (no PyTorch counterpart;
 * TensorBoard's event files are the thing they replace). Same protocol as
 * twb-bench: a JSON header line, then one {"value": V} line per repetition,
 * --reps N of them or, with --serve, one per "rep" line on stdin.
 *
 *   twb-logdb-bench NAME [--reps N | --serve] [--dir DIR]
 *
 *   summary_call  µs per tw_summary_scalar call on the calling thread (the
 *                 training thread's cost: enqueueing only), median of
 *                 batches of 1,000 calls
 *   logdb_ingest  scalar rows per second into a file on disk: 2,000,000 rows
 *                 over 10 tags from one writer, timed from the first call
 *                 until tw_summary_flush returns
 *   lod_query     ms to reduce a 10,000,000-point series to 2,000 columns
 *                 (the whole range, then a random tenth of it, alternately)
 *   tail_query    ms to read the 100 points written after a reader's cursor
 *                 (the dashboard's poll), the writer flushing between reads
 *   logging_overhead
 *                 % longer a Fashion-MNIST MLP epoch takes when it logs 10
 *                 scalars every step and a histogram every 100 steps (each
 *                 repetition: one epoch with, one without, order alternating)
 *
 * Files go to --dir (default build/bench-data), on disk, not tmpfs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tw/data.h>
#include <tw/layers.h>
#include <tw/model.h>
#include <tw/run_store.h>
#include <tw/summary.h>

#define LOD_POINTS 10000000
#define LOD_COLUMNS 2000
#define INGEST_ROWS 2000000
#define INGEST_TAGS 10
#define TAIL_NEW_POINTS 100
#define CALLS_PER_SAMPLE 1000
#define SAMPLES_PER_REP 2001
#define LOGGED_SCALARS 10
#define HISTOGRAM_EVERY 100

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "twb-logdb-bench: %s: %s\n", what, tw_last_error());
    exit(1);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return v[n / 2];
}

static char *fresh_file(const char *dir, const char *name)
{
    mkdir(dir, 0755);
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    unlink(path);
    char side[4096];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    return path;
}

/* ---- summary_call --------------------------------------------------------- */
static double summary_call(tw_summary_writer *w, int64_t *step)
{
    double samples[SAMPLES_PER_REP];
    for (int s = 0; s < SAMPLES_PER_REP; s++) {
        double t0 = now();
        for (int i = 0; i < CALLS_PER_SAMPLE; i++, (*step)++)
            tw_summary_scalar(w, "train/loss", 1.0 / (double)(*step + 1), *step);
        samples[s] = (now() - t0) / CALLS_PER_SAMPLE * 1e6;
    }
    return median(samples, SAMPLES_PER_REP);
}

/* ---- logdb_ingest --------------------------------------------------------- */
static double logdb_ingest(const char *dir, int rep)
{
    char name[64];
    snprintf(name, sizeof name, "ingest-%d.db", rep);
    char *path = fresh_file(dir, name);
    tw_summary_writer *w = tw_summary_writer_open(path, "ingest", NULL);
    if (!w)
        die(path);
    static const char *tags[INGEST_TAGS] = {"train/loss", "train/accuracy", "train/learning_rate", "train/a",
                                            "train/b", "train/c", "train/d", "train/e", "train/f", "train/g"};
    double t0 = now();
    for (int64_t i = 0; i < INGEST_ROWS / INGEST_TAGS; i++)
        for (int t = 0; t < INGEST_TAGS; t++)
            tw_summary_scalar(w, tags[t], sin((double)i * 1e-3) + t, i);
    if (tw_summary_flush(w))
        die("flush");
    double rows_per_second = INGEST_ROWS / (now() - t0);
    if (tw_summary_writer_error(w))
        fprintf(stderr, "twb-logdb-bench: writer error: %s\n", tw_summary_writer_error(w));
    tw_summary_writer_close(w, TW_RUN_FINISHED);
    free(path);
    return rows_per_second;
}

/* ---- lod_query and tail_query --------------------------------------------- */
typedef struct {
    char *path;
    tw_run_store *store;
    int64_t tag;
    tw_summary_writer *writer; /* tail_query: still writing */
    tw_series_cursor cursor;
    int64_t next_step;
    uint64_t rng;
} query_state;

/* A 10,000,000-point series with one spike, written through the writer. */
static void write_series(query_state *s, int64_t points)
{
    tw_summary_writer *w = tw_summary_writer_open(s->path, "series", NULL);
    if (!w)
        die(s->path);
    for (int64_t i = 0; i < points; i++)
        tw_summary_scalar(w, "train/loss", i == points / 3 ? 1000.0 : exp(-(double)i / points), i);
    s->next_step = points;
    if (tw_summary_flush(w))
        die("flush");
    s->writer = w;
}

static void open_reader(query_state *s)
{
    s->store = tw_run_store_open(s->path, TW_STORE_READ_ONLY);
    tw_run_info run;
    if (!s->store || tw_run_store_get_run(s->store, "series", &run))
        die("open store");
    s->tag = tw_run_store_find_tag(s->store, run.id, "train/loss");
    tw_run_info_clear(&run);
    if (s->tag < 0)
        die("find tag");
}

static double lod_query(query_state *s, int rep)
{
    tw_lod_column *columns = malloc(sizeof *columns * LOD_COLUMNS);
    double lo = 0, hi = LOD_POINTS - 1;
    if (rep % 2) { /* a random tenth of the range */
        s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
        lo = (double)((s->rng >> 33) % (LOD_POINTS - LOD_POINTS / 10));
        hi = lo + LOD_POINTS / 10;
    }
    double t0 = now();
    if (tw_run_store_read_lod(s->store, s->tag, TW_AXIS_STEP, lo, hi, LOD_COLUMNS, columns))
        die("read_lod");
    double ms = (now() - t0) * 1e3;
    free(columns);
    return ms;
}

static double tail_query(query_state *s)
{
    double samples[101];
    for (int k = 0; k < 101; k++) {
        for (int i = 0; i < TAIL_NEW_POINTS; i++, s->next_step++)
            tw_summary_scalar(s->writer, "train/loss", 0.5, s->next_step);
        if (tw_summary_flush(s->writer))
            die("flush");
        tw_scalar_point *points = NULL;
        int64_t n = 0;
        double t0 = now();
        if (tw_run_store_read_scalars(s->store, s->tag, &s->cursor, 0, &points, &n))
            die("read_scalars");
        samples[k] = (now() - t0) * 1e3;
        free(points);
        if (n != TAIL_NEW_POINTS && k > 0) {
            fprintf(stderr, "twb-logdb-bench: tail read %lld points, expected %d\n", (long long)n, TAIL_NEW_POINTS);
            exit(1);
        }
    }
    return median(samples, 101);
}

/* ---- logging_overhead ------------------------------------------------------
 * The MLP of twb-bench's mlp_epoch (784-256-128-10, Adam 0.001, batch 64, no
 * shuffle) trained one epoch on Fashion-MNIST, plain and with a callback
 * that logs as a training loop does: the loss, the accuracy and 8 more
 * scalars every step, the first kernel's histogram (200,704 values) every
 * 100 steps. */
typedef struct {
    tw_tensor *x, *y;
    const char *dir;
    tw_summary_writer *w; /* the logged epoch's */
} overhead_state;

static void load_fashion_mnist(overhead_state *s)
{
    tw_dataset *all = tw_dataset_scale(tw_dataset_batch(tw_dataset_fashion_mnist("train"), 60000, false), 0, 1 / 255.0);
    tw_iterator *it = all ? tw_dataset_iter(all) : NULL;
    tw_element batch;
    if (!it || tw_iterator_next(it, &batch) <= 0)
        die("Fashion-MNIST (apt-get install dataset-fashion-mnist)");
    s->x = tw_tensor_ref(batch.t[0]);
    s->y = tw_cast(batch.t[1], TW_INT64);
    tw_element_clear(&batch);
    tw_iterator_free(it);
    tw_dataset_unref(all);
}

static tw_model *overhead_mlp(void)
{
    tw_model *m = tw_sequential_new("mlp");
    tw_layer *layers[] = {tw_input_layer(&(tw_shape){3, {-1, 28, 28}}), tw_flatten_layer(), tw_dense(256, "relu"),
                          tw_dense(128, "relu"), tw_dense(10, NULL)};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        if (tw_model_add(m, layers[i]) < 0)
            die("building the MLP");
    tw_optimizer_config adam = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    if (tw_model_build(m, NULL, 1) < 0 ||
        tw_model_compile(m, tw_optimizer_new(&adam), &loss, 1, (const char *const[]){"accuracy"}) < 0)
        die("compiling the MLP");
    return m;
}

static int log_step(tw_model *model, const tw_progress *progress, const tw_logs *logs, void *user_data)
{
    static const char *tags[LOGGED_SCALARS] = {"train/loss", "train/accuracy", "train/a", "train/b", "train/c",
                                               "train/d",    "train/e",        "train/f", "train/g", "train/h"};
    overhead_state *s = user_data;
    double loss = tw_logs_get(logs, "loss");
    tw_summary_scalar(s->w, tags[0], loss, progress->iterations);
    tw_summary_scalar(s->w, tags[1], tw_logs_get(logs, "accuracy"), progress->iterations);
    for (int t = 2; t < LOGGED_SCALARS; t++)
        tw_summary_scalar(s->w, tags[t], loss * t, progress->iterations);
    if (progress->iterations % HISTOGRAM_EVERY == 0)
        tw_summary_histogram(s->w, "weights/dense/kernel", tw_model_trainable_variables(model).items[0],
                             progress->iterations);
    return 0;
}

/* Seconds for one epoch, logged into a fresh file when logged. */
static double overhead_epoch(overhead_state *s, bool logged, int rep)
{
    tw_model *m = overhead_mlp();
    tw_fit_options opt = tw_fit_options_default();
    opt.batch_size = 64;
    opt.shuffle = false;
    char *path = NULL;
    tw_callback logger = {.on_batch_end = log_step, .user_data = s};
    if (logged) {
        char name[64];
        snprintf(name, sizeof name, "overhead-%d.db", rep);
        path = fresh_file(s->dir, name);
        if (!(s->w = tw_summary_writer_open(path, "mlp", NULL)))
            die(path);
        opt.ncallbacks = 1;
        opt.callbacks = &logger;
    }
    double t0 = now();
    tw_history *h = tw_model_fit(m, s->x, s->y, &opt);
    double seconds = now() - t0;
    if (!h)
        die("tw_model_fit");
    if (logged && tw_summary_writer_close(s->w, TW_RUN_FINISHED) < 0)
        die(path);
    tw_history_free(h);
    tw_layer_unref(m);
    free(path);
    return seconds;
}

/* The logged epoch's time over the plain one's, less one, in percent. */
static double logging_overhead(overhead_state *s, int rep)
{
    bool logged_first = rep % 2;
    double first = overhead_epoch(s, logged_first, rep), second = overhead_epoch(s, !logged_first, rep);
    double logged = logged_first ? first : second, plain = logged_first ? second : first;
    fprintf(stderr, "twb-logdb-bench: logging_overhead: plain %.3f s, logged %.3f s\n", plain, logged);
    return (logged / plain - 1) * 100;
}

/* ---- main ----------------------------------------------------------------- */
static const struct {
    const char *name, *unit;
} benchmarks[] = {
    {"summary_call", "us/call"}, {"logdb_ingest", "rows/s"},   {"lod_query", "ms/query"},
    {"tail_query", "ms/query"},  {"logging_overhead", "%"},
};

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "", *unit = NULL, *dir = "build/bench-data";
    int reps = 5;
    bool serve = false;
    for (size_t i = 0; i < sizeof benchmarks / sizeof benchmarks[0]; i++)
        if (!strcmp(name, benchmarks[i].name))
            unit = benchmarks[i].unit;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--serve"))
            serve = true;
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
            i++; /* bench/run passes it to every program; these set their own sizes */
        else
            unit = NULL;
    }
    if (!unit) {
        fputs("usage: twb-logdb-bench summary_call|logdb_ingest|lod_query|tail_query|logging_overhead "
              "[--reps N | --serve] "
              "[--dir DIR]\n",
              stderr);
        return 2;
    }
    query_state q = {.rng = 12345};
    overhead_state o = {.dir = dir};
    if (!strcmp(name, "logging_overhead")) {
        load_fashion_mnist(&o);
        overhead_epoch(&o, true, 0); /* warm up: the pools, the writer's first file */
    }
    tw_summary_writer *calls = NULL;
    int64_t step = 0;
    if (!strcmp(name, "summary_call")) {
        char *path = fresh_file(dir, "calls.db");
        calls = tw_summary_writer_open(path, "calls", NULL);
        free(path);
        if (!calls)
            die("open writer");
        summary_call(calls, &step); /* warm up: tag interned, buffers grown */
    } else if (!strcmp(name, "lod_query") || !strcmp(name, "tail_query")) {
        q.path = fresh_file(dir, !strcmp(name, "lod_query") ? "lod.db" : "tail.db");
        write_series(&q, !strcmp(name, "lod_query") ? LOD_POINTS : 1000);
        open_reader(&q);
        tw_scalar_point *points = NULL;
        int64_t n = 0;
        if (tw_run_store_read_scalars(q.store, q.tag, &q.cursor, 0, &points, &n)) /* the tail starts at the end */
            die("read_scalars");
        free(points);
    }
    printf("{\"name\": \"%s\", \"unit\": \"%s\", \"iters_per_rep\": 1, \"check\": [], \"blas\": \"%s\"}\n", name, unit,
           tw_blas_info());
    fflush(stdout);
    char line[64];
    for (int rep = 0; serve ? fgets(line, sizeof line, stdin) != NULL : rep < reps; rep++) {
        if (serve && strncmp(line, "rep", 3))
            break;
        double value = !strcmp(name, "summary_call")   ? summary_call(calls, &step)
                       : !strcmp(name, "logdb_ingest") ? logdb_ingest(dir, rep)
                       : !strcmp(name, "lod_query")    ? lod_query(&q, rep)
                       : !strcmp(name, "tail_query")   ? tail_query(&q)
                                                       : logging_overhead(&o, rep);
        printf("{\"value\": %.6g}\n", value);
        fflush(stdout);
    }
    if (calls)
        tw_summary_writer_close(calls, TW_RUN_FINISHED);
    if (q.writer)
        tw_summary_writer_close(q.writer, TW_RUN_FINISHED);
    tw_run_store_close(q.store);
    free(q.path);
    tw_tensor_unref(o.x);
    tw_tensor_unref(o.y);
    return 0;
}
