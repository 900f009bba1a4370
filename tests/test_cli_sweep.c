/* twb sweep as a person runs it on small synthetic data: a grid of learning
 * rates and batch sizes with one diverging trial (recorded as failed with
 * its reason, the sweep going on), the final table sorted by the metric,
 * each trial a run tagged with the sweep and holding its settings and final
 * metrics; random search drawing inside its ranges, the same draws again;
 * the median stopping rule; Ctrl+C; specifications refused with their
 * message; trials at once as processes (--parallel), their runs with
 * histograms as twb train's; layer properties
 * swept (--set), each trial's model built with its value and the value a
 * hyperparameter of its run; --device and --checkpoint-dir for trials one
 * after another and at once; layers of nested models by path, and a model
 * file with weights whose changed shapes start fresh; a Functional model's
 * layer property. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_tree.h"
#include "twb_run.h"

static const char *blobs_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"blobs\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";

typedef struct {
    char *dir, *model, *logdb;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    f->dir = g_dir_make_tmp("twb-sweep-XXXXXX", NULL);
    f->model = g_build_filename(f->dir, "blobs.json", NULL);
    f->logdb = g_build_filename(f->dir, "runs.db", NULL);
    g_assert_true(g_file_set_contents(f->model, blobs_model, -1, NULL));
}

static void teardown(fixture *f, gconstpointer data)
{
    scratch_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->model);
    g_free(f->logdb);
}

/* ---- the run database ---------------------------------------------------------- */
typedef struct {
    char *name, *status, *sweep, *reason, *notes;
    double learning_rate, test_loss;
    gint64 batch_size;
} stored_run;

static double json_number(const char *json, const char *key)
{
    JsonParser *parser = json_parser_new();
    double value = NAN;
    if (json && json_parser_load_from_data(parser, json, -1, NULL)) {
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        JsonNode *node = json_object_get_member(o, key);
        if (node && JSON_NODE_HOLDS_VALUE(node))
            value = json_node_get_double(node);
    }
    g_object_unref(parser);
    return value;
}

static char *column(sqlite3_stmt *stmt, int i)
{
    const unsigned char *text = sqlite3_column_text(stmt, i);
    return text ? g_strdup((const char *)text) : NULL;
}

/* The runs by id (the order the trials ran). */
static GArray *stored_runs(const char *logdb)
{
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(logdb, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    sqlite3_busy_timeout(db, 10000); /* a sweep may be creating the file */
    sqlite3_stmt *stmt = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db,
                                       "SELECT name, status, sweep, failure_reason, notes, hparams_json, metrics_json "
                                       "FROM runs ORDER BY id",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    GArray *runs = g_array_new(FALSE, TRUE, sizeof(stored_run));
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const char *hparams = (const char *)sqlite3_column_text(stmt, 5);
        const char *metrics = (const char *)sqlite3_column_text(stmt, 6);
        stored_run r = {column(stmt, 0), column(stmt, 1), column(stmt, 2), column(stmt, 3), column(stmt, 4),
                        json_number(hparams, "learning_rate"), json_number(metrics, "test_loss"),
                        (gint64)json_number(hparams, "batch_size")};
        g_array_append_val(runs, r);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return runs;
}

static void stored_runs_free(GArray *runs)
{
    for (guint i = 0; i < runs->len; i++) {
        stored_run *r = &g_array_index(runs, stored_run, i);
        g_free(r->name);
        g_free(r->status);
        g_free(r->sweep);
        g_free(r->reason);
        g_free(r->notes);
    }
    g_array_free(runs, TRUE);
}

/* ---- the grid ----------------------------------------------------------------- */
static int count_lines_starting(const char *text, const char *prefix)
{
    int n = 0;
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++)
        n += g_str_has_prefix(*l, prefix);
    g_strfreev(lines);
    return n;
}

static void test_grid(fixture *f, gconstpointer data)
{
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate",
                          "1e-2,3e-2,1e3", "--batch-size", "32,64", "--optimizer", "sgd", "--sweep", "grid", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpint(count_lines_starting(run.out, "trial "), ==, 6);
    g_assert_nonnull(strstr(run.out, "trial 5/6 grid-5  learning_rate=1000 batch_size=32  failed: fit: epoch 1"));
    g_assert_nonnull(strstr(run.out, "sweep grid: 6 trials, 4 finished, 0 stopped early, 2 failed; sorted by "
                                     "test_loss (lowest first)"));

    GArray *runs = stored_runs(f->logdb);
    g_assert_cmpint(runs->len, ==, 6);
    const double rates[] = {1e-2, 1e-2, 3e-2, 3e-2, 1e3, 1e3};
    const gint64 batches[] = {32, 64, 32, 64, 32, 64};
    for (guint i = 0; i < 6; i++) {
        stored_run *r = &g_array_index(runs, stored_run, i);
        char *name = g_strdup_printf("grid-%u", i + 1);
        g_assert_cmpstr(r->name, ==, name);
        g_free(name);
        g_assert_cmpstr(r->sweep, ==, "grid");
        g_assert_cmpfloat(r->learning_rate, ==, rates[i]);
        g_assert_cmpint(r->batch_size, ==, batches[i]);
        if (i < 4) {
            g_assert_cmpstr(r->status, ==, "finished");
            g_assert_true(r->test_loss >= 0);
        } else { /* the diverging trials: failed, saying why; the sweep went on */
            g_assert_cmpstr(r->status, ==, "failed");
            g_assert_nonnull(strstr(r->reason, "the loss diverged"));
            g_assert_true(isnan(r->test_loss));
        }
    }

    /* Each finished trial's evaluation is stored (blobs has three classes); the failed ones have none. */
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(f->logdb, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db,
                                       "SELECT group_concat(r.name) FROM tensors t JOIN runs r ON r.id = t.run_id "
                                       "WHERE t.tag = 'evaluation/confusion_matrix' ORDER BY r.name",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==, "grid-1,grid-2,grid-3,grid-4");
    sqlite3_finalize(stmt);
    sqlite3_close(db);

    /* The table: finished trials by test loss, lowest first, the failed last. */
    const char *table = strstr(run.out, "rank  run");
    g_assert_nonnull(table);
    char **lines = g_strsplit(table, "\n", -1);
    double previous = -INFINITY;
    for (int rank = 1; rank <= 6; rank++) {
        char **fields = g_strsplit_set(lines[rank], " ", -1);
        GPtrArray *words = g_ptr_array_new();
        for (char **w = fields; *w; w++)
            if (**w)
                g_ptr_array_add(words, *w);
        g_assert_cmpint(atoi(words->pdata[0]), ==, rank);
        const char *status = words->pdata[words->len - 1];
        if (rank <= 4) {
            g_assert_cmpstr(status, ==, "finished");
            /* rank run lr batch loss accuracy test_loss test_accuracy status */
            double loss = g_ascii_strtod(words->pdata[6], NULL);
            for (guint i = 0; i < runs->len; i++)
                if (!strcmp(g_array_index(runs, stored_run, i).name, words->pdata[1]))
                    g_assert_cmpfloat(fabs(g_array_index(runs, stored_run, i).test_loss - loss), <, 1e-4);
            g_assert_cmpfloat(loss, >=, previous);
            previous = loss;
        } else
            g_assert_cmpstr(status, ==, "failed");
        g_ptr_array_free(words, TRUE);
        g_strfreev(fields);
    }
    g_strfreev(lines);
    stored_runs_free(runs);
    twb_run_clear(&run);

    /* A metric no trial has: said, the trials in their order. */
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--sweep", "other", "--metric",
                  "test_f1", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpstr(run.err, ==, "twb sweep: warning: no trial has the metric 'test_f1' (name one of the table's "
                                 "columns with --metric); the trials stay in their order\n");
    g_assert_nonnull(strstr(run.out, "sorted by test_f1 (lowest first)"));
    twb_run_clear(&run);

    /* The same sweep name again: refused before any trial runs. */
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--sweep", "grid", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *message = g_strdup_printf("twb sweep: %s: a run named 'grid-1' exists already; name the sweep another "
                                    "way with --sweep NAME\n",
                                    f->logdb);
    g_assert_cmpstr(run.err, ==, message);
    g_free(message);
    twb_run_clear(&run);
}

/* ---- random search ---------------------------------------------------------- */
static void test_random(fixture *f, gconstpointer data)
{
    const char *names[] = {"a", "b"};
    for (int k = 0; k < 2; k++) {
        twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate",
                              "1e-4:1e-1", "--batch-size", "16:128", "--random", "--trials", "5", "--sweep",
                              names[k], NULL);
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_cmpint(count_lines_starting(run.out, "trial "), ==, 5);
        twb_run_clear(&run);
    }
    GArray *runs = stored_runs(f->logdb);
    g_assert_cmpint(runs->len, ==, 10);
    gboolean rates_differ = FALSE;
    for (guint i = 0; i < 5; i++) {
        stored_run *a = &g_array_index(runs, stored_run, i), *b = &g_array_index(runs, stored_run, i + 5);
        g_assert_cmpfloat(a->learning_rate, >=, 1e-4);
        g_assert_cmpfloat(a->learning_rate, <=, 1e-1);
        g_assert_cmpint(a->batch_size, >=, 16);
        g_assert_cmpint(a->batch_size, <=, 128);
        /* the draws are the same in every sweep of the same spec */
        g_assert_cmpfloat(a->learning_rate, ==, b->learning_rate);
        g_assert_cmpint(a->batch_size, ==, b->batch_size);
        g_assert_cmpstr(a->sweep, ==, "a");
        g_assert_cmpstr(b->sweep, ==, "b");
        rates_differ |= a->learning_rate != g_array_index(runs, stored_run, 0).learning_rate;
    }
    g_assert_true(rates_differ);
    stored_runs_free(runs);
}

/* ---- trials at once ------------------------------------------------------------ */
static gint64 query_int(const char *logdb, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(logdb, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    gint64 value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return value;
}

/* --parallel 2: the grid's trials two at once, each a process of its own
 * (its run's pid), at the same time (two runs' times overlap), recorded as
 * the sequential sweep records them, a diverging one failed with its
 * reason. */
static void test_parallel(fixture *f, gconstpointer data)
{
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate",
                          "1e-2,3e-2,1e3", "--batch-size", "32,64", "--optimizer", "sgd", "--epochs", "20",
                          "--sweep", "par", "--parallel", "2", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpint(count_lines_starting(run.out, "trial "), ==, 6);
    g_assert_nonnull(strstr(run.out, "trial 5/6 par-5  learning_rate=1000 batch_size=32  failed: fit: epoch 1"));
    g_assert_nonnull(strstr(run.out, "sweep par: 6 trials, 4 finished, 0 stopped early, 2 failed; sorted by "
                                     "test_loss (lowest first)"));
    GArray *runs = stored_runs(f->logdb);
    g_assert_cmpint(runs->len, ==, 6);
    for (guint i = 0; i < 6; i++) {
        stored_run *r = &g_array_index(runs, stored_run, i);
        g_assert_cmpstr(r->sweep, ==, "par");
        char *name = g_strdup_printf("par-%u", i + 1);
        gboolean found = FALSE;
        for (guint j = 0; j < runs->len; j++)
            if (!strcmp(g_array_index(runs, stored_run, j).name, name)) {
                found = TRUE;
                stored_run *n = &g_array_index(runs, stored_run, j);
                /* the grid's values: the last setting fastest */
                g_assert_cmpfloat(n->learning_rate, ==, ((const double[]){1e-2, 1e-2, 3e-2, 3e-2, 1e3, 1e3})[i]);
                g_assert_cmpint(n->batch_size, ==, i % 2 ? 64 : 32);
                if (i < 4) {
                    g_assert_cmpstr(n->status, ==, "finished");
                    g_assert_true(n->test_loss >= 0);
                } else {
                    g_assert_cmpstr(n->status, ==, "failed");
                    g_assert_nonnull(strstr(n->reason, "the loss diverged"));
                }
            }
        g_assert_true(found);
        g_free(name);
    }
    stored_runs_free(runs);
    g_assert_cmpint(query_int(f->logdb, "SELECT count(DISTINCT pid) FROM runs"), ==, 6);
    /* Each finished trial logs weight and gradient histograms at twb
     * train's cadence (every 100 steps; 20 epochs are hundreds of steps). */
    for (int k = 0; k < 2; k++) {
        char *sql = g_strdup_printf("SELECT count(DISTINCT r.id) FROM runs r JOIN tags t ON t.run_id = r.id "
                                    "JOIN histograms h ON h.tag_id = t.id WHERE r.status = 'finished' "
                                    "AND t.kind = 'histogram' AND t.name LIKE '%s/%%' AND h.step = 100",
                                    k ? "gradients" : "weights");
        g_assert_cmpint(query_int(f->logdb, sql), ==, 4);
        g_free(sql);
    }
    g_assert_cmpint(query_int(f->logdb, "SELECT count(*) FROM runs a JOIN runs b ON a.id < b.id "
                                        "WHERE a.start_time < b.end_time AND b.start_time < a.end_time"),
                    >, 0);
    twb_run_clear(&run);

    /* One trial's own command refuses values that make several. */
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate", "1e-2,3e-2",
                  "--sweep", "one", "--run", "one-1", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_cmpstr(run.err, ==, "twb sweep: --run: the values make 2 trials; one trial names one value of each\n");
    twb_run_clear(&run);
}

/* ---- the median stopping rule ------------------------------------------------------ */
static void test_median_stop(fixture *f, gconstpointer data)
{
    /* Two trials that learn, then one that cannot (a tiny rate): after its
     * first epoch its loss is far above the others' running means. */
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate",
                          "1e-2,2e-2,1e-6", "--epochs", "3", "--median-stop", "--sweep", "m", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "(stopped after epoch 1 by the median rule)"));
    GArray *runs = stored_runs(f->logdb);
    g_assert_cmpint(runs->len, ==, 3);
    g_assert_cmpstr(g_array_index(runs, stored_run, 0).status, ==, "finished");
    g_assert_cmpstr(g_array_index(runs, stored_run, 1).status, ==, "finished");
    stored_run *stopped = &g_array_index(runs, stored_run, 2);
    g_assert_cmpstr(stopped->status, ==, "stopped");
    g_assert_true(g_str_has_prefix(stopped->notes, "stopped by the median stopping rule after epoch 1: best loss "));
    g_assert_false(isnan(stopped->test_loss)); /* evaluated all the same */
    stored_runs_free(runs);
    twb_run_clear(&run);

    /* Without the rule the same trial runs its three epochs. */
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate", "1e-2,2e-2,1e-6",
                  "--epochs", "3", "--sweep", "n", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_null(strstr(run.out, "(stopped after"));
    g_assert_nonnull(strstr(run.out, "3 finished, 0 stopped early, 0 failed"));
    twb_run_clear(&run);
}

/* ---- Ctrl+C -------------------------------------------------------------------------- */
/* Runs in the file; 0 while it is missing or not made yet. */
static int count_runs(const char *logdb)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    int n = 0;
    if (g_file_test(logdb, G_FILE_TEST_EXISTS) &&
        sqlite3_open_v2(logdb, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_busy_timeout(db, 10000) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
        n = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
}

/* A stop signal stops the running trial (its run "stopped", saying why)
 * and runs no other; the table shows the trial that ran. */
static void test_interrupt(fixture *f, gconstpointer data)
{
    const char *argv[] = {g_getenv("TWB"), "sweep", f->model, "--data", "blobs", "--logdb", f->logdb,
                          "--learning-rate", "1e-3,2e-3,3e-3", "--epochs", "3000", "--sweep", "stop", NULL};
    GPid pid;
    int out_fd;
    GError *error = NULL;
    g_assert_true(g_spawn_async_with_pipes(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                           NULL, &out_fd, NULL, &error));
    g_assert_no_error(error);
    /* the first trial under way (3000 epochs: a minute or more, should the
     * test fail and leave it running) */
    for (int i = 0; i < 600 && count_runs(f->logdb) < 1; i++)
        g_usleep(50000);
    g_usleep(300000);
    kill(pid, SIGINT);
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_spawn_close_pid(pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    GString *out = g_string_new(NULL);
    char buffer[4096];
    for (ssize_t n; (n = read(out_fd, buffer, sizeof buffer)) > 0;)
        g_string_append_len(out, buffer, n);
    close(out_fd);
    g_assert_nonnull(strstr(out->str, "trial 1/3 stop-1  learning_rate=0.001"));
    g_assert_nonnull(strstr(out->str, "sweep stop stopped: 1 of 3 trials ran"));
    g_assert_nonnull(strstr(out->str, "sweep stop: 1 trials, 0 finished, 1 stopped early, 0 failed"));
    g_string_free(out, TRUE);
    GArray *runs = stored_runs(f->logdb);
    g_assert_cmpint(runs->len, ==, 1);
    stored_run *r = &g_array_index(runs, stored_run, 0);
    g_assert_cmpstr(r->status, ==, "stopped");
    g_assert_true(g_str_has_prefix(r->notes, "stopped by a signal (Ctrl+C) at epoch "));
    stored_runs_free(runs);
}

/* ---- bad specifications ------------------------------------------------------------ */
static void test_bad_specs(fixture *f, gconstpointer data)
{
    const struct {
        const char *option, *value, *message;
    } cases[] = {
        {"--batch-size", "0", "twb sweep: --batch-size: '0' is not a batch size (a whole number from 1 to 10000000)"},
        {"--batch-size", "", "twb sweep: --batch-size: no values (give a list such as 1,2 or a range min:max)"},
        {"--batch-size", "32,,64", "twb sweep: --batch-size: an empty value in '32,,64'"},
        {"--batch-size", "32.5", "twb sweep: --batch-size: '32.5' is not a batch size (a whole number from 1 to "
                                 "10000000)"},
        {"--learning-rate", "1e-2:1e-3", "twb sweep: --learning-rate: the range 1e-2:1e-3 has its minimum above its "
                                         "maximum"},
        {"--learning-rate", "0", "twb sweep: --learning-rate: '0' is not a learning rate (above 0, at most 1000)"},
        {"--learning-rate", "nan", "twb sweep: --learning-rate: 'nan' is not a learning rate (above 0, at most "
                                   "1000)"},
        {"--learning-rate", "1e-3:1e-2", "twb sweep: --learning-rate: a range (0.001:0.01) needs --random; list the "
                                         "values for a grid"},
        {"--epochs", "0,1", "twb sweep: --epochs: '0' is not a number of epochs (a whole number from 1 to 1000000)"},
        {"--optimizer", "adam,nope", "twb sweep: --optimizer: unknown optimizer 'nope'; expected one of sgd, adam, "
                                     "adamw, rmsprop, adagrad"},
        {"--optimizer", "adam:sgd", "twb sweep: --optimizer: 'adam:sgd': optimizers are listed (adam,sgd), not "
                                    "ranges"},
        {"--optimizer", "", "twb sweep: --optimizer: no values (give a list such as adam,sgd)"},
        {"--trials", "0", "twb sweep: --trials: '0' is not a number of trials (1 to 10000)\nTry 'twb --help'."},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, cases[i].option,
                              cases[i].value, NULL);
        char *expected = g_strconcat(cases[i].message, "\n", NULL);
        g_assert_cmpstr(run.err, ==, expected);
        g_assert_cmpint(run.exit_status, ==, 2);
        g_assert_cmpstr(run.out, ==, "");
        g_free(expected);
        twb_run_clear(&run);
    }
    /* layer properties: the form, the layer, the property, the layer's own rules */
    const struct {
        const char *value, *message;
    } layer_cases[] = {
        {"dense.units", "twb sweep: --set: 'dense.units' is not LAYER.PROPERTY=VALUES (such as dense_1.units=32,64)"},
        {"dense=8", "twb sweep: --set: 'dense=8' is not LAYER.PROPERTY=VALUES (such as dense_1.units=32,64)"},
        {"dense.units=", "twb sweep: --set dense.units: no values (give a list such as 1,2 or a range min:max)"},
        {"dense.units=8,x", "twb sweep: --set dense.units: 'x' is not a number"},
        {"dense.units=9:3", "twb sweep: --set dense.units: the range 9:3 has its minimum above its maximum"},
        {"nope.units=8", "twb sweep: --set nope.units: model 'blobs' has no layer named 'nope'; its layers are "
                         "dense, dense_1"},
        {"dense/x.units=8", "twb sweep: --set dense/x.units: model 'blobs' has no layer 'dense/x': 'dense' is a "
                            "Dense layer, not a model holding layers"},
        {"dense.unit=8", "twb sweep: --set dense.unit: layer 'dense' (Dense) has no numeric property 'unit'; it has "
                         "units"},
        {"dense.activation=1", "twb sweep: --set dense.activation: layer 'dense' (Dense) has no numeric property "
                               "'activation'; it has units"},
        {"dense.units=8,0", "twb sweep: --set dense.units: expected a positive integer, got 0"},
        {"dense.units=8.5", "twb sweep: --set dense.units: expected a positive integer, got 8.5"},
        {"dense.units=2:9", "twb sweep: --set dense.units: a range (2:9) needs --random; list the values for a grid"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(layer_cases); i++) {
        twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--set",
                              layer_cases[i].value, NULL);
        char *expected = g_strconcat(layer_cases[i].message, "\n", NULL);
        g_assert_cmpstr(run.err, ==, expected);
        g_assert_cmpint(run.exit_status, ==, 2);
        g_free(expected);
        twb_run_clear(&run);
    }
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--set", "dense.units=8",
                          "--set", "dense.units=16", NULL);
    g_assert_cmpstr(run.err, ==, "twb sweep: --set dense.units given twice; list every value in one (--set "
                                 "dense.units=1,2,3)\n");
    twb_run_clear(&run);
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--random", NULL);
    g_assert_cmpstr(run.err, ==, "twb sweep: --random needs --trials N (how many draws)\n");
    twb_run_clear(&run);
    /* nothing swept (one value is no sweep): every draw would be the same trial */
    run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--random", "--trials", "3", "--epochs",
                  "1", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_true(g_str_has_prefix(run.err, "twb sweep: --random draws the swept settings' values, and none is swept"));
    g_assert_false(g_file_test(f->logdb, G_FILE_TEST_EXISTS));
    twb_run_clear(&run);
    /* --help: the command's usage, for sweep and train (the same parser) */
    const char *const commands[] = {"sweep", "train"};
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        run = run_twb(commands[i], "--help", NULL);
        g_assert_cmpint(run.exit_status, ==, 0);
        char *usage = g_strdup_printf("Usage: twb %s MODEL.json --data", commands[i]);
        g_assert_true(g_str_has_prefix(run.out, usage));
        g_assert_cmpstr(run.err, ==, "");
        g_free(usage);
        twb_run_clear(&run);
    }
    run = run_twb("sweep", f->model, "--data", "blobs", "--batch-size", "1,2", "--batch-size", "3", "--logdb",
                  f->logdb, NULL);
    g_assert_cmpstr(run.err, ==, "twb sweep: --batch-size given twice; list every value in one (--batch-size 1,2,3)\n");
    twb_run_clear(&run);
    /* One data set a sweep: a model of two inputs takes a built-in set of two. */
    run = run_twb("sweep", f->model, "--data", "blobs", "--data", "spirals", "--logdb", f->logdb, NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_true(g_str_has_prefix(run.err, "twb sweep: --data given twice: a sweep trains on one data set"));
    twb_run_clear(&run);
    run = run_twb("sweep", f->model, "--data", "blobs", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_true(g_str_has_prefix(run.err, "twb sweep: name the run database with --logdb FILE"));
    twb_run_clear(&run);
    /* A data file that is not there: nothing trained, nothing written. */
    run = run_twb("sweep", f->model, "--data", "/nonexistent/x.npy", "--logdb", f->logdb, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "/nonexistent/x.npy"));
    twb_run_clear(&run);
    g_assert_false(g_file_test(f->logdb, G_FILE_TEST_EXISTS));
}

/* ---- layer properties ----------------------------------------------------------------- */
static const char *dropout_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"drop\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dropout\", \"config\": {\"name\": \"dropout\", \"rate\": 0.1}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";

/* A run's stored settings (hparams_json) and model (model_json). */
static void stored_json(const char *logdb, const char *run_name, char **hparams, char **model)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(logdb, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db, "SELECT hparams_json, model_json FROM runs WHERE name = ?", -1, &stmt, NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_text(stmt, 1, run_name, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    *hparams = column(stmt, 0);
    *model = column(stmt, 1);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
}

/* The stored model's layer's config value (Keras JSON: config.layers[i].config). */
static double model_layer_value(const char *model_json, const char *layer, const char *key)
{
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, model_json, -1, NULL));
    JsonArray *layers = json_object_get_array_member(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "config"), "layers");
    double value = NAN;
    for (guint i = 0; i < json_array_get_length(layers); i++) {
        JsonObject *config = json_object_get_object_member(json_array_get_object_element(layers, i), "config");
        if (!g_strcmp0(json_object_get_string_member(config, "name"), layer))
            value = json_object_get_double_member(config, key);
    }
    g_object_unref(parser);
    return value;
}

/* --set: a grid of a layer's units by learning rate (the layer property
 * fastest), each trial's model built with its units (the stored model and
 * the trained weights' count say so) and the value a hyperparameter of its
 * run and a column of the table; random draws of a whole and a fractional
 * property inside their ranges. */
static void test_layer_properties(fixture *f, gconstpointer data)
{
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--learning-rate", "1e-2,3e-2",
                          "--set", "dense.units=4,32", "--sweep", "units", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "trial 1/4 units-1  learning_rate=0.01 dense.units=4  loss "));
    g_assert_nonnull(strstr(run.out, "trial 4/4 units-4  learning_rate=0.03 dense.units=32  loss "));
    g_assert_nonnull(strstr(run.out, "  learning_rate    dense.units           loss"));
    const double units[] = {4, 32, 4, 32}, rates[] = {1e-2, 1e-2, 3e-2, 3e-2};
    for (int i = 0; i < 4; i++) {
        char *name = g_strdup_printf("units-%d", i + 1), *hparams, *model;
        stored_json(f->logdb, name, &hparams, &model);
        g_assert_cmpfloat(json_number(hparams, "dense.units"), ==, units[i]);
        g_assert_cmpfloat(json_number(hparams, "learning_rate"), ==, rates[i]);
        g_assert_cmpfloat(model_layer_value(model, "dense", "units"), ==, units[i]);
        g_assert_cmpfloat(model_layer_value(model, "dense_1", "units"), ==, 3); /* the others as the file has them */
        g_free(hparams);
        g_free(model);
        g_free(name);
    }
    twb_run_clear(&run);

    char *path = g_build_filename(f->dir, "drop.json", NULL);
    g_assert_true(g_file_set_contents(path, dropout_model, -1, NULL));
    run = run_twb("sweep", path, "--data", "blobs", "--logdb", f->logdb, "--set", "dense.units=2:9", "--set",
                  "dropout.rate=0.2:0.6", "--random", "--trials", "6", "--sweep", "drawn", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    gboolean fractional = FALSE;
    for (int i = 0; i < 6; i++) {
        char *name = g_strdup_printf("drawn-%d", i + 1), *hparams, *model;
        stored_json(f->logdb, name, &hparams, &model);
        double u = json_number(hparams, "dense.units"), r = json_number(hparams, "dropout.rate");
        g_assert_cmpfloat(u, >=, 2);
        g_assert_cmpfloat(u, <=, 9);
        g_assert_cmpfloat(u, ==, floor(u));
        g_assert_cmpfloat(r, >=, 0.2);
        g_assert_cmpfloat(r, <=, 0.6);
        fractional |= r != floor(r * 100) / 100;
        g_assert_cmpfloat(model_layer_value(model, "dense", "units"), ==, u);
        g_assert_cmpfloat(fabs(model_layer_value(model, "dropout", "rate") - r), <, 1e-12);
        g_free(hparams);
        g_free(model);
        g_free(name);
    }
    g_assert_true(fractional); /* a rate is drawn from the range, not rounded to a grid */
    g_free(path);
    twb_run_clear(&run);
}

/* ---- nested models and model files with weights ------------------------------------- */
static const char *nested_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 8, \"activation\": \"relu\"}}]}},"
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block_1\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 8, \"activation\": \"relu\"}}]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";

/* The config of layer `path` ("block/hidden") in a stored Keras JSON model. */
static JsonObject *nested_config(JsonObject *model, const char *path)
{
    const char *slash = strchr(path, '/');
    JsonArray *layers = json_object_get_array_member(json_object_get_object_member(model, "config"), "layers");
    for (guint i = 0; i < json_array_get_length(layers); i++) {
        JsonObject *layer = json_array_get_object_element(layers, i);
        const char *name = json_object_get_string_member(json_object_get_object_member(layer, "config"), "name");
        if (slash ? strlen(name) == (size_t)(slash - path) && !strncmp(name, path, slash - path) : !strcmp(name, path))
            return slash ? nested_config(layer, slash + 1) : json_object_get_object_member(layer, "config");
    }
    return NULL;
}

static double nested_value(const char *model_json, const char *path, const char *key)
{
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, model_json, -1, NULL));
    JsonObject *config = nested_config(json_node_get_object(json_parser_get_root(parser)), path);
    g_assert_nonnull(config);
    double value = json_object_get_double_member(config, key);
    g_object_unref(parser);
    return value;
}

/* The body of a run's text tag, or NULL. */
static char *stored_text(const char *logdb, const char *run_name, const char *tag)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(logdb, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db,
                                       "SELECT texts.body FROM texts JOIN tags ON texts.tag_id = tags.id "
                                       "JOIN runs ON tags.run_id = runs.id WHERE runs.name = ? AND tags.name = ?",
                                       -1, &stmt, NULL),
                    ==, SQLITE_OK);
    sqlite3_bind_text(stmt, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, tag, -1, SQLITE_STATIC);
    char *body = sqlite3_step(stmt) == SQLITE_ROW ? column(stmt, 0) : NULL;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return body;
}

/* --set reaches the layers of nested models by path and by a name no other
 * layer has; an ambiguous name is refused with its candidates. Over a .keras
 * file with weights every trial trains: the one with the file's units keeps
 * every weight silently, the other says which start fresh, on stderr and in
 * its run's sweep/weights text. */
static void test_nested_and_weights(fixture *f, gconstpointer data)
{
    char *json = g_build_filename(f->dir, "nested.json", NULL);
    char *keras = g_build_filename(f->dir, "nested.keras", NULL);
    g_assert_true(g_file_set_contents(json, nested_model, -1, NULL));
    twb_run run = run_twb("sweep", json, "--data", "blobs", "--logdb", f->logdb, "--set", "block/dense.units=4,32",
                          "--set", "hidden.units=2", "--sweep", "path", NULL);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "trial 2/2 path-2  block/dense.units=32  loss "));
    g_assert_nonnull(strstr(run.out, "  block/dense.units           loss")); /* the column as wide as its name */
    for (int i = 0; i < 2; i++) {
        char *name = g_strdup_printf("path-%d", i + 1), *hparams, *model;
        stored_json(f->logdb, name, &hparams, &model);
        g_assert_cmpfloat(json_number(hparams, "block/dense.units"), ==, i ? 32 : 4);
        g_assert_cmpfloat(nested_value(model, "block/dense", "units"), ==, i ? 32 : 4);
        g_assert_cmpfloat(nested_value(model, "block/hidden", "units"), ==, 2);
        g_assert_cmpfloat(nested_value(model, "block_1/dense", "units"), ==, 8); /* the other "dense" */
        g_free(hparams);
        g_free(model);
        g_free(name);
    }
    twb_run_clear(&run);
    run = run_twb("sweep", json, "--data", "blobs", "--logdb", f->logdb, "--set", "dense.units=4", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_cmpstr(run.err, ==, "twb sweep: --set dense.units: model 'outer': 'dense' names block/dense, "
                                 "block_1/dense; give the layer's path\n");
    twb_run_clear(&run);

    run = run_twb("convert", json, keras, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    run = run_twb("sweep", keras, "--data", "blobs", "--logdb", f->logdb, "--set", "block/hidden.units=8,4",
                  "--sweep", "w", NULL);
    const char *notice = "block/hidden.units=4: 3 weights of nested.keras start fresh, their shapes changed: "
                         "block/hidden/kernel (16, 8) -> (16, 4), block/hidden/bias (8,) -> (4,), "
                         "block_1/dense/kernel (8, 8) -> (4, 8); 5 kept from the file";
    char *err = g_strdup_printf("twb sweep: w-2: %s\n", notice);
    g_assert_cmpstr(run.err, ==, err);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "2 finished, 0 stopped early, 0 failed"));
    char *text = stored_text(f->logdb, "w-2", "sweep/weights");
    g_assert_cmpstr(text, ==, notice);
    g_free(text);
    g_assert_null(stored_text(f->logdb, "w-1", "sweep/weights"));
    g_free(err);
    twb_run_clear(&run);
    g_free(json);
    g_free(keras);
}

/* A Functional model's layer property: each trial's graph follows its
 * value (the next layer takes the new width), in this process and in the
 * processes of --parallel. */
static void test_functional(fixture *f, gconstpointer data)
{
    static const char *functional =
        "{\"class_name\": \"Functional\", \"config\": {\"name\": \"func\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2], \"dtype\": \"float32\","
        " \"name\": \"x\"}, \"name\": \"x\", \"inbound_nodes\": []},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\"},"
        " \"name\": \"dense\", \"inbound_nodes\": [[[\"x\", 0, 0, {}]]]},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 3}, \"name\": \"out\","
        " \"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]}],"
        " \"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"out\", 0, 0]]}}";
    char *path = g_build_filename(f->dir, "func.json", NULL);
    g_assert_true(g_file_set_contents(path, functional, -1, NULL));
    const char *parallel[] = {"1", "2"};
    for (int k = 0; k < 2; k++) {
        char *sweep = g_strdup_printf("func%d", k);
        twb_run run = run_twb("sweep", path, "--data", "blobs", "--logdb", f->logdb, "--set", "dense.units=4,8",
                              "--parallel", parallel[k], "--sweep", sweep, NULL);
        g_assert_cmpstr(run.err, ==, "");
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_nonnull(strstr(run.out, "2 finished, 0 stopped early, 0 failed"));
        for (int i = 0; i < 2; i++) {
            char *name = g_strdup_printf("%s-%d", sweep, i + 1), *hparams, *model;
            stored_json(f->logdb, name, &hparams, &model);
            g_assert_cmpfloat(model_layer_value(model, "dense", "units"), ==, i ? 8 : 4);
            g_free(hparams);
            g_free(model);
            g_free(name);
        }
        twb_run_clear(&run);
        g_free(sweep);
    }
    g_free(path);
}

/* ---- device and checkpoints ----------------------------------------------------------- */
/* --device sim:0 (the simulated device, TW_SIM_DEVICES) and --checkpoint-dir:
 * trials one after another and two at once each train there (their runs'
 * settings name it) and leave DIR/RUN.safetensors; a layer property goes
 * to the processes as to the sequential trials. */
static void test_device_checkpoints(fixture *f, gconstpointer data)
{
    g_setenv("TW_SIM_DEVICES", "1", TRUE); /* the processes inherit it */
    char *dir = g_build_filename(f->dir, "ck", NULL);
    const char *parallel[] = {"1", "2"};
    for (int k = 0; k < 2; k++) {
        char *sweep = g_strdup_printf("dev%d", k);
        twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--set", "dense.units=4,8",
                              "--device", "sim:0", "--checkpoint-dir", dir, "--parallel", parallel[k], "--sweep",
                              sweep, NULL);
        g_assert_cmpstr(run.err, ==, "");
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_nonnull(strstr(run.out, "2 finished, 0 stopped early, 0 failed"));
        for (int i = 0; i < 2; i++) {
            char *name = g_strdup_printf("%s-%d", sweep, i + 1), *hparams, *model;
            stored_json(f->logdb, name, &hparams, &model);
            g_assert_nonnull(strstr(hparams, "\"device\":\"sim:0\""));
            g_assert_cmpfloat(json_number(hparams, "dense.units"), ==, i ? 8 : 4);
            char *file = g_strdup_printf("%s.safetensors", name);
            char *checkpoint = g_build_filename(dir, file, NULL);
            g_assert_true(g_file_test(checkpoint, G_FILE_TEST_IS_REGULAR));
            g_free(checkpoint);
            g_free(file);
            g_free(hparams);
            g_free(model);
            g_free(name);
        }
        twb_run_clear(&run);
        g_free(sweep);
    }
    g_unsetenv("TW_SIM_DEVICES");
    /* a device that is not there: refused, naming it */
    twb_run run = run_twb("sweep", f->model, "--data", "blobs", "--logdb", f->logdb, "--device", "sim:0", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_cmpstr(run.err, ==, "twb sweep: --device: set_default_device: device sim:0 is not available\n");
    twb_run_clear(&run);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add("/cli/sweep/" name, fixture, NULL, setup, fn, teardown)
    ADD("grid", test_grid);
    ADD("random", test_random);
    ADD("median-stop", test_median_stop);
    ADD("interrupt", test_interrupt);
    ADD("bad-specs", test_bad_specs);
    ADD("parallel", test_parallel);
    ADD("layer-properties", test_layer_properties);
    ADD("device-checkpoints", test_device_checkpoints);
    ADD("nested-and-weights", test_nested_and_weights);
    ADD("functional", test_functional);
    return g_test_run();
}
