/* twb runs as a person uses it: list, show, export (the exact CSV and JSON
 * text, NaN and infinities included), delete, rename and notes on a run
 * database built here row by row; the default file; failures (exit 1 with
 * the message) and bad usage (exit 2). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scratch_tree.h"
#include "run_store/store_internal.h"
#include "twb_run.h"

typedef struct {
    char *dir, *path;
} fixture;

static void exec(sqlite3 *db, const char *sql)
{
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK)
        g_error("%s: %s", sql, message);
}

static int64_t add_run(sqlite3 *db, const char *name, double start_time, const char *status, int64_t pid,
                       int64_t process_start_time)
{
    sqlite3_stmt *stmt = NULL;
    sqlite3_prepare_v2(db,
                       "INSERT INTO runs (name, status, start_time, end_time, host, pid, process_start_time) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                       -1, &stmt, NULL);
    sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, status, -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 3, start_time);
    if (strcmp(status, "running") != 0)
        sqlite3_bind_double(stmt, 4, start_time + 3725); /* 1h 02m 05s */
    sqlite3_bind_text(stmt, 5, tw__store_host(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 6, pid);
    sqlite3_bind_int64(stmt, 7, process_start_time);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
    return sqlite3_last_insert_rowid(db);
}

static int64_t add_tag(sqlite3 *db, int64_t run, const char *name, const char *kind)
{
    sqlite3_stmt *stmt = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO tags (run_id, name, kind) VALUES (?1, ?2, ?3)", -1, &stmt, NULL);
    sqlite3_bind_int64(stmt, 1, run);
    sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 3, kind, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
    return sqlite3_last_insert_rowid(db);
}

/* One chunk of points, as the summary writer stores them. */
static void add_chunk(sqlite3 *db, int64_t tag, const tw_chunk *chunk)
{
    sqlite3_stmt *stmt = NULL;
    sqlite3_prepare_v2(db,
                       "INSERT INTO scalar_chunks (tag_id, " TW_CHUNK_COLUMNS
                       ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                       -1, &stmt, NULL);
    sqlite3_bind_int64(stmt, 1, tag);
    g_assert_cmpint(tw__chunk_bind(stmt, 2, chunk), ==, 0);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
    sqlite3_finalize(stmt);
}

/* Runs "mlp" (finished, with a model, settings, notes, lost logs, a loss
 * series with NaN and infinities and a histogram tag), "cnn" (failed, one
 * long series) and "live" (running: this test process writes it). */
static void setup(fixture *f, gconstpointer data)
{
    f->dir = g_dir_make_tmp("twb-runs-XXXXXX", NULL);
    f->path = g_build_filename(f->dir, "runs.db", NULL);
    tw_run_store *store = tw_run_store_open(f->path, 0);
    g_assert_nonnull(store);
    sqlite3 *db = store->db;
    int64_t mlp = add_run(db, "mlp", 1700000000, "finished", 1, 1);
    exec(db, "UPDATE runs SET model_json = '{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", "
             "\"layers\": [{}, {}, {}]}}', hparams_json = '{\"epochs\": 2}', "
             "metrics_json = '{\"test_accuracy\": 0.84}', notes = 'first try\nlr 1e-3', "
             "logs_lost_from_step = 6, logs_lost_reason = 'disk full' WHERE name = 'mlp'");
    tw_chunk loss = {.n = 6,
                     .steps = {0, 1, 2, 3, 4, 5},
                     .wall_times = {1700000000.5, 1700000001.25, 1700000002, 1700000003.125, 1700000004, 1e-5},
                     .values = {0.25, NAN, INFINITY, -INFINITY, 0.1, -1e-300}};
    loss.wall_times[5] = 1700000005.0625;
    add_chunk(db, add_tag(db, mlp, "train/loss", "scalar"), &loss);
    add_tag(db, mlp, "weights/kernel", "histogram");

    int64_t cnn = add_run(db, "cnn", 1700003600, "failed", 1, 1);
    int64_t series = add_tag(db, cnn, "train/accuracy", "scalar");
    tw_chunk chunk = {0};
    for (int i = 0; i < 1500; i++) {
        if (!tw__chunk_accepts(&chunk, i, i)) {
            add_chunk(db, series, &chunk);
            chunk.n = 0;
        }
        chunk.steps[chunk.n] = i;
        chunk.wall_times[chunk.n] = 1700003600 + i;
        chunk.values[chunk.n++] = i / 2000.0;
    }
    add_chunk(db, series, &chunk);
    /* cnn's images: two tags, one of two sizes and formats (zero bytes
     * stand in for encoded images: runs show reads sizes and lengths). */
    exec(db, "INSERT INTO images (run_id, tag, step, sample, wall_time, width, height, format, data) VALUES "
             "(2, 'samples', 0, 0, 1700003600, 28, 28, 'png', zeroblob(100)), "
             "(2, 'samples', 0, 1, 1700003600, 28, 28, 'png', zeroblob(120)), "
             "(2, 'samples', 5, 0, 1700003605, 28, 28, 'png', zeroblob(90)), "
             "(2, 'filters', 3, 0, 1700003603, 64, 48, 'jpeg', zeroblob(1000)), "
             "(2, 'filters', 7, 0, 1700003607, 16, 16, 'png', zeroblob(50))");

    /* Started 100 s ago. */
    add_run(db, "live", g_get_real_time() / 1e6 - 100, "running", getpid(), tw__process_start_time(getpid()));
    tw_run_store_close(store);
}

static void teardown(fixture *f, gconstpointer data)
{
    scratch_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->path);
}

/* Runs twb runs ARGS... --logdb FILE. */
#define RUNS(f, ...) run_twb("runs", __VA_ARGS__, "--logdb", (f)->path, NULL)

static void assert_run(twb_run *run, int status, const char *out, const char *err)
{
    if (run->exit_status != status)
        g_error("exit %d, expected %d; stdout:\n%s\nstderr:\n%s", run->exit_status, status, run->out, run->err);
    if (out)
        g_assert_cmpstr(run->out, ==, out);
    if (err)
        g_assert_cmpstr(run->err, ==, err);
    twb_run_clear(run);
}

static char *local_time(double seconds)
{
    time_t t = (time_t)seconds;
    struct tm local;
    char text[32];
    localtime_r(&t, &local);
    strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
    return g_strdup(text);
}

static void test_list(fixture *f, gconstpointer data)
{
    twb_run run = RUNS(f, "list");
    char *mlp = local_time(1700000000), *cnn = local_time(1700003600);
    const char *host = tw__store_host();
    char *want = g_strdup_printf("NAME  STATUS    STARTED              DURATION  TAGS  HOST\n"
                                 "mlp   finished  %s  1h 02m    2     %s\n"
                                 "cnn   failed    %s  1h 02m    1     %s\n"
                                 "live  running   ",
                                 mlp, host, cnn, host);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, want));
    /* The running run's duration counts up to now; it has no tags. */
    g_assert_nonnull(strstr(run.out + strlen(want), "  1m 4"));
    char *end = g_strdup_printf("  0     %s\n", host);
    g_assert_true(g_str_has_suffix(run.out, end));
    g_assert_cmpstr(run.err, ==, "");
    twb_run_clear(&run);
    g_free(end);
    g_free(want);
    g_free(mlp);
    g_free(cnn);

    /* An empty database. */
    char *empty = g_build_filename(f->dir, "empty.db", NULL);
    tw_run_store_close(tw_run_store_open(empty, 0));
    run = run_twb("runs", "list", "--logdb", empty, NULL);
    want = g_strdup_printf("No runs in %s.\n", empty);
    assert_run(&run, 0, want, "");
    g_free(want);
    g_free(empty);
}

static void test_show(fixture *f, gconstpointer data)
{
    twb_run run = RUNS(f, "show", "mlp");
    char *started = local_time(1700000000), *ended = local_time(1700000000 + 3725);
    char *want = g_strdup_printf("run:      mlp\n"
                                 "status:   finished\n"
                                 "started:  %s\n"
                                 "ended:    %s\n"
                                 "duration: 1h 02m\n"
                                 "host:     %s (process 1)\n"
                                 "logs:     lost from step 6 on: disk full\n"
                                 "model:    Sequential 'mlp', 3 layers\n"
                                 "hparams:  {\"epochs\": 2}\n"
                                 "metrics:  {\"test_accuracy\": 0.84}\n"
                                 "notes:    first try\n"
                                 "          lr 1e-3\n"
                                 "\n"
                                 "TAG             KIND        COUNT  STEPS  LAST\n"
                                 "train/loss      scalars     6      0-5    -1e-300\n"
                                 "weights/kernel  histograms  0      -\n",
                                 started, ended, tw__store_host());
    assert_run(&run, 0, want, "");
    g_free(want);
    g_free(started);
    g_free(ended);

    /* cnn's images, a row per tag; mlp above has none, so no image table. */
    run = RUNS(f, "show", "cnn");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "\n\nIMAGE TAG  COUNT  STEPS  SIZE            FORMAT     BYTES\n"
                                     "filters    2      3-7    16x16 .. 64x48  jpeg, png  1050\n"
                                     "samples    3      0-5    28x28           png        310\n"));
    twb_run_clear(&run);

    run = RUNS(f, "show", "live");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "run:      live\nstatus:   running\n"));
    g_assert_null(strstr(run.out, "ended:"));
    g_assert_nonnull(strstr(run.out, "tags:     none\n"));
    twb_run_clear(&run);

    run = RUNS(f, "show", "nope");
    char *err = g_strdup_printf("twb: runs show: %s: no run named 'nope'\n", f->path);
    assert_run(&run, 1, "", err);
    g_free(err);
}

static void test_export(fixture *f, gconstpointer data)
{
    twb_run run = RUNS(f, "export", "mlp", "--tag", "train/loss", "--format", "csv");
    assert_run(&run, 0,
               "wall_time,step,value\n"
               "1700000000.5,0,0.25\n"
               "1700000001.25,1,nan\n"
               "1700000002.0,2,inf\n"
               "1700000003.125,3,-inf\n"
               "1700000004.0,4,0.1\n"
               "1700000005.0625,5,-1e-300\n",
               "");
    run = RUNS(f, "export", "mlp", "--tag=train/loss", "--format=json");
    assert_run(&run, 0,
               "[[1700000000.5, 0, 0.25], [1700000001.25, 1, \"NaN\"], [1700000002.0, 2, \"Infinity\"], "
               "[1700000003.125, 3, \"-Infinity\"], [1700000004.0, 4, 0.1], [1700000005.0625, 5, -1e-300]]\n",
               "");

    /* A series of three chunks, whole and in order. */
    run = RUNS(f, "export", "cnn", "--tag", "train/accuracy", "--format", "csv");
    g_assert_cmpint(run.exit_status, ==, 0);
    char **lines = g_strsplit(run.out, "\n", -1);
    g_assert_cmpint(g_strv_length(lines), ==, 1 + 1500 + 1);
    g_assert_cmpstr(lines[1], ==, "1700003600.0,0,0.0");
    g_assert_cmpstr(lines[1500], ==, "1700005099.0,1499,0.7495");
    g_strfreev(lines);
    twb_run_clear(&run);

    run = RUNS(f, "export", "mlp", "--tag", "train/acc", "--format", "csv");
    assert_run(&run, 1, "", "twb: runs export: run 'mlp' has no tag 'train/acc' (its scalar tags: train/loss)\n");
    run = RUNS(f, "export", "mlp", "--tag", "weights/kernel", "--format", "csv");
    assert_run(&run, 1, "",
               "twb: runs export: tag 'weights/kernel' of run 'mlp' holds histograms; export writes scalar series\n");
    run = RUNS(f, "export", "mlp", "--tag", "train/loss", "--format", "xml");
    assert_run(&run, 2, "", "twb: runs export: unknown format 'xml' (there are: csv, json, tfevents, model)\nTry 'twb runs --help'.\n");
    run = RUNS(f, "export", "mlp", "--format", "csv");
    assert_run(&run, 2, "", "twb: runs export: name the series with --tag TAG\nTry 'twb runs --help'.\n");
    run = RUNS(f, "export", "mlp", "--tag", "train/loss");
    assert_run(&run, 2, "", "twb: runs export: choose --format csv, json, tfevents or model\nTry 'twb runs --help'.\n");

    /* The whole run as a TensorBoard event file (its contents: test_data_tfevents_write). */
    char *out = g_build_filename(f->dir, "tb", NULL);
    run = RUNS(f, "export", "mlp", "--format", "tfevents", "--output", out);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "Wrote "));
    g_assert_nonnull(strstr(run.out, ": 6 scalar points, "));
    g_assert_nonnull(strstr(run.out, ", the hyperparameters, the model.\n")); /* the model config, as Keras writes it */
    GDir *d = g_dir_open(out, 0, NULL);
    g_assert_nonnull(d);
    const char *name = g_dir_read_name(d);
    g_assert_nonnull(name);
    g_assert_true(g_str_has_prefix(name, "events.out.tfevents."));
    g_assert_nonnull(strstr(run.out, name));
    g_assert_null(g_dir_read_name(d));
    g_dir_close(d);
    twb_run_clear(&run);
    run = RUNS(f, "export", "mlp", "--format", "tfevents");
    assert_run(&run, 2, "",
               "twb: runs export: --format tfevents writes a folder: name it with --output DIR\nTry 'twb runs --help'.\n");
    run = RUNS(f, "export", "mlp", "--tag", "train/loss", "--format", "csv", "--output", out);
    assert_run(&run, 2, "", "twb: runs export: --output is for --format tfevents and model\nTry 'twb runs --help'.\n");
    g_free(out);

    /* The run's model as a Keras model file: to standard output, or to --output. */
    static const char model[] = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", "
                                "\"layers\": [{}, {}, {}]}}";
    run = RUNS(f, "export", "mlp", "--format", "model");
    assert_run(&run, 0, "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": [{}, {}, {}]}}\n",
               "");
    char *file = g_build_filename(f->dir, "mlp.json", NULL), *text = NULL;
    run = RUNS(f, "export", "mlp", "--format", "model", "--output", file);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
    g_assert_cmpstr(text, ==, model);
    twb_run_clear(&run);
    run = RUNS(f, "export", "cnn", "--format", "model");
    assert_run(&run, 1, "", "twb: runs export: run 'cnn' has no model stored\n");
    run = RUNS(f, "export", "mlp", "--format", "model", "--tag", "train/loss");
    assert_run(&run, 2, "",
               "twb: runs export: --format model writes the run's model; --tag is for csv and json\nTry 'twb runs --help'.\n");
    g_free(text);
    g_free(file);
}

static void test_rename_notes_delete(fixture *f, gconstpointer data)
{
    twb_run run = RUNS(f, "rename", "cnn", "cnn-2");
    assert_run(&run, 0, "Renamed run 'cnn' to 'cnn-2'.\n", "");
    run = RUNS(f, "rename", "cnn-2", "mlp");
    char *err = g_strdup_printf("twb: runs rename: %s: cannot rename run 'cnn-2': a run named 'mlp' exists already\n",
                                f->path);
    assert_run(&run, 1, "", err);
    g_free(err);

    run = RUNS(f, "notes", "cnn-2", "-- a note starting with dashes");
    assert_run(&run, 2, "", NULL);
    run = run_twb("runs", "notes", "--logdb", f->path, "cnn-2", "--", "-- diverged at step 900", NULL);
    assert_run(&run, 0, "Saved the notes of run 'cnn-2'.\n", "");
    run = RUNS(f, "show", "cnn-2");
    g_assert_nonnull(strstr(run.out, "\nnotes:    -- diverged at step 900\n"));
    twb_run_clear(&run);

    run = RUNS(f, "delete", "cnn-2");
    assert_run(&run, 0, "Deleted run 'cnn-2'.\n", "");
    run = RUNS(f, "delete", "cnn-2");
    err = g_strdup_printf("twb: runs delete: %s: no run named 'cnn-2'\n", f->path);
    assert_run(&run, 1, "", err);
    g_free(err);
    /* This test process is the live run's writer. */
    run = RUNS(f, "delete", "live");
    err = g_strdup_printf("twb: runs delete: %s: run 'live' is still being written (process %d); stop it first\n",
                          f->path, (int)getpid());
    assert_run(&run, 1, "", err);
    g_free(err);
    run = RUNS(f, "list");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_null(strstr(run.out, "cnn"));
    g_assert_nonnull(strstr(run.out, "\nmlp "));
    twb_run_clear(&run);
}

/* Files that are no run database, missing or not at all. */
static void test_bad_files(fixture *f, gconstpointer data)
{
    char *missing = g_build_filename(f->dir, "missing.db", NULL);
    twb_run run = run_twb("runs", "list", "--logdb", missing, NULL);
    char *err = g_strdup_printf("twb: runs list: %s: no such file\n", missing);
    assert_run(&run, 1, "", err);
    g_free(err);
    /* Changing commands do not create the file. */
    run = run_twb("runs", "delete", "x", "--logdb", missing, NULL);
    err = g_strdup_printf("twb: runs delete: %s: no such file\n", missing);
    assert_run(&run, 1, "", err);
    g_free(err);
    g_assert_false(g_file_test(missing, G_FILE_TEST_EXISTS));
    g_free(missing);

    char *text = g_build_filename(f->dir, "notes.txt", NULL);
    g_assert_true(g_file_set_contents(text, "just some text, long enough to be no database at all\n", -1, NULL));
    run = run_twb("runs", "list", "--logdb", text, NULL);
    err = g_strdup_printf("twb: runs list: %s: not a run database (not an SQLite file)\n", text);
    assert_run(&run, 1, "", err);
    g_free(err);
    g_free(text);
}

/* A FIFO or a device as the run database is refused before SQLite opens
 * it: opening a FIFO with no writer waited forever, /dev/zero read as "an
 * empty file". The alarm fails the test instead of hanging it. */
static void test_not_a_regular_file(fixture *f, gconstpointer data)
{
    char *fifo = g_build_filename(f->dir, "pipe.db", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    const char *files[] = {fifo, "/dev/zero"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        alarm(60);
        twb_run run = run_twb("runs", "list", "--logdb", files[i], NULL);
        alarm(0);
        char *err = g_strdup_printf(
            "twb: runs list: %s: is not a regular file (a device, pipe or socket), not a run database\n", files[i]);
        assert_run(&run, 1, "", err);
        g_free(err);
    }
    g_remove(fifo);
    g_free(fifo);
}

/* Without --logdb: $XDG_DATA_HOME/twb/runs.db (main() points it at a
 * scratch folder). */
static void test_default_file(void)
{
    twb_run run = run_twb("runs", "list", NULL);
    char *path = g_build_filename(g_getenv("XDG_DATA_HOME"), "twb", "runs.db", NULL);
    char *want =
        g_strdup_printf("No runs yet: %s does not exist (twb train --logdb FILE --run NAME writes runs).\n", path);
    assert_run(&run, 0, want, "");
    g_free(want);
    run = run_twb("runs", "show", "x", NULL);
    char *err = g_strdup_printf("twb: runs show: %s: no such file\n", path);
    assert_run(&run, 1, "", err);
    g_free(err);
    g_free(path);
}

static void test_usage(void)
{
    struct {
        const char *args[5];
        const char *err;
    } cases[] = {
        {{NULL}, "twb: runs: name a command: list, show, export, delete, rename or notes\n"},
        {{"frob"}, "twb: runs: unknown command 'frob' (there are: list, show, export, delete, rename, notes)\n"},
        {{"show"}, "twb: runs show: expected RUN\n"},
        {{"rename", "a"}, "twb: runs rename: expected OLD NEW\n"},
        {{"list", "extra"}, "twb: runs list: unexpected argument 'extra'\n"},
        {{"list", "--verbose"}, "twb: runs list: unknown option '--verbose'\n"},
        {{"show", "a", "--tag", "x"}, "twb: runs show: unknown option '--tag'\n"},
        {{"list", "--logdb"}, "twb: runs list: option '--logdb' needs a value\n"},
        {{"list", "--logdb="}, "twb: runs list: option '--logdb=' needs a value\n"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[7] = {"runs"};
        for (int k = 0; cases[i].args[k]; k++)
            args[k + 1] = cases[i].args[k];
        twb_run run = run_twb_argv(args);
        char *err = g_strconcat(cases[i].err, "Try 'twb runs --help'.\n", NULL);
        assert_run(&run, 2, "", err);
        g_free(err);
    }
    twb_run run = run_twb("runs", "--help", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "Usage: twb runs COMMAND [--logdb FILE]\n"));
    g_assert_nonnull(strstr(run.out, "export RUN --tag TAG --format csv|json"));
    twb_run_clear(&run);
    run = run_twb("--help", NULL);
    g_assert_nonnull(strstr(run.out, "  runs export RUN --tag TAG --format csv|json [--logdb FILE]\n"));
    twb_run_clear(&run);
}

/* The single event file in dir, or NULL (g_free). */
static char *only_file(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name = d ? g_dir_read_name(d) : NULL;
    char *path = name ? g_build_filename(dir, name, NULL) : NULL;
    g_assert_true(!name || !g_dir_read_name(d));
    if (d)
        g_dir_close(d);
    return path;
}

static void limit_file_size(gpointer limit)
{
    struct rlimit r = {GPOINTER_TO_SIZE(limit), GPOINTER_TO_SIZE(limit)};
    signal(SIGXFSZ, SIG_IGN); /* the write fails instead */
    setrlimit(RLIMIT_FSIZE, &r);
}

/* One damaged chunk: the tfevents export writes the rest of the run and
 * names the series it leaves out, as the dashboard marks its card; the
 * series' own csv/json export fails with the chunk named and prints
 * nothing. An event file that cannot be written is removed, not left
 * half-written. (The damaged chunk failed the whole export and left a
 * partial file.) */
static void test_export_damaged(fixture *f, gconstpointer data)
{
    char *out = g_build_filename(f->dir, "tb", NULL);
    twb_run run = RUNS(f, "export", "cnn", "--format", "tfevents", "--output", out);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    char *whole = only_file(out);
    struct stat st;
    g_assert_cmpint(g_stat(whole, &st), ==, 0);
    g_remove(whole);
    g_free(whole);

    /* A file-size limit of half the file: the write fails part way. */
    char *limit = g_strdup_printf("%lld", (long long)st.st_size / 2);
    const char *argv[] = {g_getenv("TWB"), "runs", "export", "cnn", "--format", "tfevents", "--output", out,
                          "--logdb", f->path, NULL};
    char *err = NULL;
    int wait_status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, limit_file_size,
                               GSIZE_TO_POINTER((gsize)st.st_size / 2), NULL, &err, &wait_status, NULL));
    g_test_message("limited to %s bytes: %s", limit, err);
    g_assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 1);
    g_assert_nonnull(strstr(err, ": cannot write: File too large; the unfinished file is removed\n"));
    g_assert_null(only_file(out));
    g_free(err), g_free(limit);

    tw_run_store *store = tw_run_store_open(f->path, 0);
    exec(store->db, "UPDATE scalar_chunks SET points = x'0102' WHERE id = (SELECT max(id) FROM scalar_chunks "
                    "WHERE tag_id = (SELECT id FROM tags WHERE name = 'train/accuracy'))");
    int64_t loss = add_tag(store->db, 2, "train/loss", "scalar");
    add_chunk(store->db, loss, &(tw_chunk){.n = 2, .steps = {0, 1}, .wall_times = {1, 2}, .values = {0.5, 0.25}});
    tw_run_store_close(store);
    run = RUNS(f, "export", "cnn", "--format", "tfevents", "--output", out);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, ": 2 scalar points, 0 histograms, 5 images,"));
    char *prefix = g_strdup_printf("twb: runs export: warning: left out, cannot be read: %s: run “cnn”, tag "
                                   "“train/accuracy”: scalar chunk ",
                                   f->path);
    g_assert_true(g_str_has_prefix(run.err, prefix));
    g_assert_true(g_str_has_suffix(run.err, ": 2 bytes is not 1 to 512 points of 24 bytes\n"));
    g_assert_true(strchr(run.err, '\n') == run.err + strlen(run.err) - 1); /* that series only */
    g_free(prefix);
    twb_run_clear(&run);
    char *written = only_file(out);
    g_assert_nonnull(written);
    g_free(written);

    const char *formats[] = {"csv", "json"};
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++) {
        run = RUNS(f, "export", "cnn", "--tag", "train/accuracy", "--format", formats[i]);
        g_assert_cmpint(run.exit_status, ==, 1);
        g_assert_cmpstr(run.out, ==, "");
        g_assert_true(g_str_has_suffix(run.err, ": 2 bytes is not 1 to 512 points of 24 bytes\n"));
        twb_run_clear(&run);
    }
    g_free(out);
}

int main(int argc, char **argv)
{
    char *data_home = g_dir_make_tmp("twb-data-home-XXXXXX", NULL);
    g_setenv("XDG_DATA_HOME", data_home, TRUE);
    g_test_init(&argc, &argv, NULL);
    g_test_add("/cli/runs/list", fixture, NULL, setup, test_list, teardown);
    g_test_add("/cli/runs/show", fixture, NULL, setup, test_show, teardown);
    g_test_add("/cli/runs/export", fixture, NULL, setup, test_export, teardown);
    g_test_add("/cli/runs/export-damaged", fixture, NULL, setup, test_export_damaged, teardown);
    g_test_add("/cli/runs/rename-notes-delete", fixture, NULL, setup, test_rename_notes_delete, teardown);
    g_test_add("/cli/runs/bad-files", fixture, NULL, setup, test_bad_files, teardown);
    g_test_add("/cli/runs/not-a-regular-file", fixture, NULL, setup, test_not_a_regular_file, teardown);
    g_test_add_func("/cli/runs/default-file", test_default_file);
    g_test_add_func("/cli/runs/usage", test_usage);
    int status = g_test_run();
    scratch_remove_tree(data_home);
    g_free(data_home);
    return status;
}
