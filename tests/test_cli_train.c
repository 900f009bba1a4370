/* twb train / evaluate / predict as a person runs them: the JSON result,
 * checkpoints and exact resume, Ctrl+C, bad input, and the Fashion-MNIST
 * MLP reaching 84% test accuracy in one epoch (skipped without the data). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_tree.h"
#include "twb_run.h"

static const char *spirals_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"spirals\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 32, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dropout\", \"config\": {\"name\": \"dropout\", \"rate\": 0.1}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 2}}]}}";

typedef struct {
    char *dir, *model;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    f->dir = g_dir_make_tmp("twb-train-XXXXXX", NULL);
    f->model = g_build_filename(f->dir, "spirals.json", NULL);
    g_assert_true(g_file_set_contents(f->model, spirals_model, -1, NULL));
}

static void teardown(fixture *f, gconstpointer data)
{
    scratch_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->model);
}

/* The last line of out, parsed as a JSON object (the caller unrefs the parser). */
static JsonObject *last_json(const char *out, JsonParser **parser)
{
    const char *last = out;
    for (const char *p = out; *p; p++)
        if (*p == '\n' && p[1])
            last = p + 1;
    *parser = json_parser_new();
    GError *error = NULL;
    g_assert_true(json_parser_load_from_data(*parser, last, -1, &error));
    g_assert_no_error(error);
    return json_node_get_object(json_parser_get_root(*parser));
}

static void test_json_result(fixture *f, gconstpointer data)
{
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--epochs", "3", "--seed", "1", "--json", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    JsonParser *parser;
    JsonObject *o = last_json(run.out, &parser);
    const char *keys[] = {"test_accuracy", "test_loss", "samples_per_second", "epochs", "parameters"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        g_assert_true(json_object_has_member(o, keys[i]));
    g_assert_cmpint(json_object_get_int_member(o, "parameters"), ==, 2 * 32 + 32 + 32 * 2 + 2);
    g_assert_cmpint(json_object_get_int_member(o, "epochs"), ==, 3);
    g_assert_cmpfloat(json_object_get_double_member(o, "samples_per_second"), >, 0);
    /* Progress went to stderr, one line per epoch (not a terminal). */
    g_assert_nonnull(strstr(run.err, "epoch 3/3"));
    g_object_unref(parser);
    twb_run_clear(&run);
}

/* twb train's test loss on spirals after `epochs` epochs from `seed`,
 * with the extra arguments (NULL-terminated, or NULL for none). */
static double final_test_loss(fixture *f, const char *epochs, const char *seed, const char *const *extra)
{
    const char *base[] = {"train", f->model, "--data", "spirals", "--epochs", epochs, "--seed", seed, "--json"};
    GPtrArray *args = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(base); i++)
        g_ptr_array_add(args, (gpointer)base[i]);
    for (; extra && *extra; extra++)
        g_ptr_array_add(args, (gpointer)*extra);
    g_ptr_array_add(args, NULL);
    twb_run run = run_twb_argv((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    g_assert_cmpint(run.exit_status, ==, 0);
    JsonParser *parser;
    double loss = json_object_get_double_member(last_json(run.out, &parser), "test_loss");
    g_object_unref(parser);
    twb_run_clear(&run);
    return loss;
}

/* --device: the simulated device (host memory behind the device interface,
 * TW_SIM_DEVICES) trains to the CPU's loss exactly; a device that is not
 * there, or not a device name, is refused naming it. */
static void test_device(fixture *f, gconstpointer data)
{
    double cpu = final_test_loss(f, "2", "3", NULL);
    g_setenv("TW_SIM_DEVICES", "1", TRUE);
    double sim = final_test_loss(f, "2", "3", (const char *const[]){"--device", "sim:0", NULL});
    g_unsetenv("TW_SIM_DEVICES");
    g_assert_cmpfloat(sim, ==, cpu);

    twb_run run = run_twb("train", f->model, "--data", "spirals", "--device", "cuda:7", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "--device: set_default_device: device cuda:7 is not available"));
    twb_run_clear(&run);
    run = run_twb("train", f->model, "--data", "spirals", "--device", "sim:0", NULL); /* not enabled */
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "device sim:0 is not available"));
    twb_run_clear(&run);
    run = run_twb("train", f->model, "--data", "spirals", "--device", "gpu", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "'gpu' is not a device name"));
    twb_run_clear(&run);
}

/* Two epochs, then resuming to four, ends where four at once end. */
static void test_resume_matches(fixture *f, gconstpointer data)
{
    char *whole = g_build_filename(f->dir, "whole", NULL), *parts = g_build_filename(f->dir, "parts", NULL);
    double uninterrupted = final_test_loss(f, "4", "5", (const char *const[]){"--checkpoint-dir", whole, NULL});
    final_test_loss(f, "2", "5", (const char *const[]){"--checkpoint-dir", parts, NULL});
    double resumed = final_test_loss(f, "4", "5", (const char *const[]){"--checkpoint-dir", parts, "--resume", NULL});
    g_assert_cmpfloat(resumed, ==, uninterrupted);

    /* The checkpoint serves evaluate and predict. */
    char *ckpt = g_build_filename(parts, "checkpoint.safetensors", NULL);
    char *npy = g_build_filename(f->dir, "pred.npy", NULL);
    twb_run run = run_twb("evaluate", f->model, "--checkpoint", ckpt, "--data", "spirals", "--seed", "5", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "accuracy"));
    twb_run_clear(&run);
    run = run_twb("predict", f->model, "--checkpoint", ckpt, "--data", "spirals", "--output", npy, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_file_test(npy, G_FILE_TEST_EXISTS));
    twb_run_clear(&run);
    g_free(ckpt);
    g_free(npy);
    g_free(whole);
    g_free(parts);
}

/* Ctrl+C stops after the current step and saves a checkpoint. */
static int64_t logdb_int(const char *path, const char *sql, const char *arg);

/* Entries of dir whose name starts with prefix. */
static int count_files_named(const char *dir, const char *prefix)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    int n = 0;
    for (const char *name; (name = g_dir_read_name(d));)
        n += g_str_has_prefix(name, prefix);
    g_dir_close(d);
    return n;
}

/* Ctrl+C, kill and a closed terminal (SIGINT, SIGTERM, SIGHUP: data) all
 * stop training the same way: a checkpoint, the run "stopped", and its end
 * at its last row. */
static void test_interrupt_saves_checkpoint(fixture *f, gconstpointer data)
{
    int sig = GPOINTER_TO_INT(data);
    char *dir = g_build_filename(f->dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    char *db = g_build_filename(f->dir, "runs.db", NULL);
    const char *argv[] = {g_getenv("TWB"), "train", f->model, "--data", "spirals", "--epochs", "100000",
                          "--checkpoint-dir", dir, "--logdb", db, "--run", "stopped", NULL};
    GPid pid;
    int err_fd;
    GError *error = NULL;
    GSpawnFlags flags = G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL;
    g_assert_true(g_spawn_async_with_pipes(NULL, (char **)argv, NULL, flags, NULL, NULL, &pid, NULL, NULL, &err_fd,
                                           &error));
    g_assert_no_error(error);
    /* The first epoch's checkpoint shows training is under way. */
    for (int i = 0; i < 600 && !g_file_test(ckpt, G_FILE_TEST_EXISTS); i++)
        g_usleep(50000);
    g_assert_true(g_file_test(ckpt, G_FILE_TEST_EXISTS));
    kill(pid, sig);
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    char err[4096] = {0};
    ssize_t n = read(err_fd, err, sizeof err - 1);
    g_assert_cmpint(n, >, 0);
    g_assert_nonnull(strstr(err, "stopped at epoch"));
    g_assert_nonnull(strstr(err, "checkpoint saved"));
    close(err_fd);
    g_spawn_close_pid(pid);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name = ?1 AND status = 'stopped'", "stopped"), ==,
                    1);
    g_free(db);
    g_free(ckpt);
    g_free(dir);
}

static void test_bad_input(fixture *f, gconstpointer data)
{
    char *bad = g_build_filename(f->dir, "bad.json", NULL);
    g_assert_true(g_file_set_contents(bad, "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [", -1, NULL));
    twb_run run = run_twb("train", bad, "--data", "spirals", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "bad.json"));
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", "spirals", "--epochs", "zero", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_nonnull(strstr(run.err, "--epochs"));
    twb_run_clear(&run);
    /* A number out of range names the range and the kind of number. */
    run = run_twb("train", f->model, "--data", "spirals", "--learning-rate", "1e6", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_true(g_str_has_prefix(run.err, "twb train: bad value for option --learning-rate: '1e6' (a number from 0 "
                                            "to 1000)\n"));
    twb_run_clear(&run);
    run = run_twb("train", f->model, "--data", "spirals", "--epochs", "2.5", NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_true(g_str_has_prefix(run.err, "twb train: bad value for option --epochs: '2.5' (a whole number from 1 "
                                            "to 1000000)\n"));
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", "/nonexistent/data.npy", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "/nonexistent/data.npy"));
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", "spirals", "--optimizer", "adamax", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "adamax"));
    twb_run_clear(&run);

    /* A model without an input shape: a fault of the file, named. */
    char *shapeless = g_build_filename(f->dir, "shapeless.json", NULL);
    g_assert_true(g_file_set_contents(shapeless,
                                      "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                                      "{\"class_name\": \"Dense\", \"config\": {\"units\": 4}}]}}",
                                      -1, NULL));
    run = run_twb("train", shapeless, "--data", "spirals", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *expected = g_strdup_printf("twb train: %s: model 'm' has no input shape; give its first layer one or add "
                                     "an InputLayer\n", shapeless);
    g_assert_cmpstr(run.err, ==, expected);
    g_free(expected);
    twb_run_clear(&run);
    g_free(shapeless);
    g_free(bad);
}

static bool fashion_mnist_installed(void)
{
    const char *dir = g_getenv("TWB_DATA_DIR") ? g_getenv("TWB_DATA_DIR") : "/usr/share/datasets/fashion-mnist";
    return g_file_test(dir, G_FILE_TEST_IS_DIR);
}

/* The bar: the MLP reaches 84% test accuracy in one epoch. */
static void test_fashion_mnist_mlp(void)
{
    if (!fashion_mnist_installed()) {
        g_test_skip("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
        return;
    }
    char *model = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", "mlp_fashion_mnist.json",
                                   NULL);
    twb_run run = run_twb("train", model, "--data", "fashion-mnist", "--epochs", "1", "--batch-size", "64", "--seed",
                          "1", "--json", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    JsonParser *parser;
    JsonObject *o = last_json(run.out, &parser);
    double accuracy = json_object_get_double_member(o, "test_accuracy");
    g_test_message("test accuracy %.4f at %.0f samples/s", accuracy,
                   json_object_get_double_member(o, "samples_per_second"));
    g_assert_cmpfloat(accuracy, >=, 0.84);
    g_assert_cmpint(json_object_get_int_member(o, "parameters"), ==, 235146);
    g_object_unref(parser);
    twb_run_clear(&run);
    g_free(model);
}

/* One number from the run database, the query's ?1 bound to arg. */
static int64_t logdb_int(const char *path, const char *sql, const char *arg)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    sqlite3_bind_text(stmt, 1, arg, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    int64_t v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return v;
}

#define TAG_POINTS "SELECT sum(c.count) FROM scalar_chunks c JOIN tags t ON t.id = c.tag_id WHERE t.name = ?1"
#define TAG_HISTOGRAMS "SELECT count(*) FROM histograms h JOIN tags t ON t.id = h.tag_id WHERE t.name = ?1"

/* A classifier trained with --logdb has its evaluation stored (the
 * matrix, per-class figures, examples as values: spirals are points);
 * `twb evaluate --logdb F --run NAME` adds another without touching the
 * run's status or end; bad uses are refused with their reason. */
static void test_evaluation_stored(fixture *f, gconstpointer data)
{
    char *db = g_build_filename(f->dir, "runs.db", NULL), *ck = g_build_filename(f->dir, "ck", NULL);
    char *ckpt = g_build_filename(ck, "checkpoint.safetensors", NULL);
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--logdb", db, "--run", "s", "--checkpoint-dir", ck,
                          NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_null(strstr(run.err, "warning"));
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tensors WHERE tag = ?1 AND shape = '[2, 2]' AND dtype = 'int64'",
                              "evaluation/confusion_matrix"),
                    ==, 1);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tensors WHERE tag = ?1 AND shape = '[2, 4]'",
                              "evaluation/per_class"),
                    ==, 1);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tensors WHERE tag = ?1 AND shape LIKE '%, 2]'",
                              "evaluation/sample_values"),
                    ==, 1);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM images WHERE run_id = (SELECT id FROM runs WHERE name = ?1)", "s"),
                    ==, 0);
    double end = (double)logdb_int(db, "SELECT CAST(end_time * 1000 AS INTEGER) FROM runs WHERE name = ?1", "s");

    run = run_twb("evaluate", f->model, "--checkpoint", ckpt, "--data", "spirals", "--logdb", db, "--run", "s", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "evaluation stored in run 's'"));
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tensors WHERE tag = ?1", "evaluation/confusion_matrix"), ==, 2);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name = ?1 AND status = 'finished'", "s"), ==, 1);
    g_assert_cmpfloat((double)logdb_int(db, "SELECT CAST(end_time * 1000 AS INTEGER) FROM runs WHERE name = ?1", "s"),
                      ==, end);

    run = run_twb("evaluate", f->model, "--checkpoint", ckpt, "--data", "spirals", "--logdb", db, NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    g_assert_nonnull(strstr(run.err, "--logdb needs --run NAME"));
    twb_run_clear(&run);
    run = run_twb("evaluate", f->model, "--checkpoint", ckpt, "--data", "spirals", "--logdb", db, "--run", "x", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "no run named 'x'"));
    twb_run_clear(&run);
    g_free(db);
    g_free(ck);
    g_free(ckpt);
}

/* --logdb: the run with its model, settings (the optimizer's actual
 * learning rate without --learning-rate) and test metrics, the batch logs
 * every step, histograms every 5, the epoch logs; a taken name fails before
 * training; a locked file costs the logs (one warning), not the training. */
static void test_logdb(fixture *f, gconstpointer data)
{
    char *db = g_build_filename(f->dir, "runs.db", NULL);
    const char *args[] = {"train", f->model, "--data", "spirals", "--epochs", "2", "--validation-split", "0.2",
                          "--logdb", db, "--log-every", "1", "--histogram-every", "5", "--run", "spirals-1", NULL};
    twb_run run = run_twb_argv(args);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_null(strstr(run.err, "warning"));
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name = ?1 AND status = 'finished' AND "
                                  "model_json LIKE '%Sequential%' AND hparams_json LIKE '%\"optimizer\":\"adam\"%' "
                                  "AND hparams_json LIKE '%\"learning_rate\":0.001%' "
                                  "AND metrics_json LIKE '%test_accuracy%'",
                              "spirals-1"),
                    ==, 1);
    int64_t steps = logdb_int(db, TAG_POINTS, "train/loss");
    g_assert_cmpint(steps, >, 0);
    g_assert_cmpint(steps % 2, ==, 0);
    g_assert_cmpint(logdb_int(db, "SELECT max(c.last_step) FROM scalar_chunks c JOIN tags t ON t.id = c.tag_id "
                                  "WHERE t.name = ?1",
                              "train/loss"),
                    ==, steps);
    g_assert_cmpint(logdb_int(db, TAG_POINTS, "train/learning_rate"), ==, steps);
    g_assert_cmpint(logdb_int(db, TAG_POINTS, "epoch/loss"), ==, 2);
    g_assert_cmpint(logdb_int(db, TAG_POINTS, "validation/accuracy"), ==, 2);
    g_assert_cmpint(logdb_int(db, TAG_HISTOGRAMS, "weights/dense/kernel"), ==, steps / 5);
    g_assert_cmpint(logdb_int(db, TAG_HISTOGRAMS, "gradients/dense_1/bias"), ==, steps / 5);

    run = run_twb_argv(args);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "a run named 'spirals-1' is already in the file"));
    twb_run_clear(&run);

    /* Without --run: the model's name and the time. */
    run = run_twb("train", f->model, "--data", "spirals", "--logdb", db, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name GLOB ?1", "spirals-2[0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]"), ==, 1);

    sqlite3 *holder;
    g_assert_cmpint(sqlite3_open(db, &holder), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);
    run = run_twb("train", f->model, "--data", "spirals", "--logdb", db, "--run", "locked", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "accuracy"));
    char *warning = g_strdup_printf("twb train: warning: %s: ", db);
    g_assert_nonnull(strstr(run.err, warning));
    g_assert_null(strstr(strstr(run.err, warning) + strlen(warning), "warning")); /* once */
    g_assert_nonnull(strstr(run.err, "the logs of run 'locked' are not written"));
    g_free(warning);
    twb_run_clear(&run);
    sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(holder);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name = ?1", "locked"), ==, 0);
    g_free(db);
}

/* --tfevents: an event file beside the run database holding what the run
 * holds (its contents compared exactly: test_data_tfevents_write), which
 * twb import-tensorboard reads back; a folder that cannot be made fails
 * before training, naming it. */
static void test_tfevents(fixture *f, gconstpointer data)
{
    char *db = g_build_filename(f->dir, "runs.db", NULL), *tb = g_build_filename(f->dir, "tb", NULL);
    char *back = g_build_filename(f->dir, "back.db", NULL);
    const char *args[] = {"train", f->model, "--data", "spirals", "--epochs", "2", "--logdb", db, "--log-every", "1",
                          "--histogram-every", "5", "--run", "tb", "--tfevents", tb, NULL};
    twb_run run = run_twb_argv(args);
    g_assert_cmpint(run.exit_status, ==, 0);
    char *expected = g_strdup_printf("TensorBoard event file: %s/events.out.tfevents.", tb);
    g_assert_nonnull(strstr(run.out, expected));
    g_free(expected);
    twb_run_clear(&run);
    run = run_twb("import-tensorboard", tb, "--logdb", back, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_null(strstr(run.err, "warning"));
    twb_run_clear(&run);
    int64_t steps = logdb_int(db, TAG_POINTS, "train/loss");
    g_assert_cmpint(steps, >, 0);
    g_assert_cmpint(logdb_int(back, TAG_POINTS, "train/loss"), ==, steps);
    g_assert_cmpint(logdb_int(back, TAG_POINTS, "epoch/loss"), ==, 2);
    g_assert_cmpint(logdb_int(back, TAG_HISTOGRAMS, "weights/dense/kernel"), ==,
                    logdb_int(db, TAG_HISTOGRAMS, "weights/dense/kernel"));
    g_assert_cmpint(logdb_int(back, "SELECT count(*) FROM runs WHERE hparams_json LIKE ?1", "%\"optimizer\":\"adam\"%"),
                    ==, 1);

    char *blocked = g_build_filename(db, "tb", NULL); /* under a file */
    const char *bad[] = {"train", f->model, "--data", "spirals", "--logdb", db, "--run", "blocked", "--tfevents", blocked,
                         NULL};
    run = run_twb_argv(bad);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, blocked));
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE name = ?1", "blocked"), ==, 0);
    g_free(blocked);
    g_free(back);
    g_free(tb);
    g_free(db);
}

/* --trace --logdb: the traced training step's graph is in the run as the
 * graph series graph/train_step at step 0, valid JSON holding the
 * optimizer's update ops, and its per-node time profile as the text series
 * profile/train_step, naming only nodes of that graph; a model with Dropout
 * cannot be traced and --trace says which op its random draw feeds. */
static const char *traceable_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"spirals\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 2}}]}}";

static char *logdb_text(const char *path, const char *sql, const char *arg)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
    sqlite3_bind_text(stmt, 1, arg, -1, SQLITE_STATIC);
    g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
    char *text = g_strdup((const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return text;
}

/* How many nodes of the graph JSON run `op`. */
static int count_op_nodes(JsonObject *graph, const char *op)
{
    JsonArray *nodes = json_object_get_array_member(graph, "nodes");
    int n = 0;
    for (guint i = 0; nodes && i < json_array_get_length(nodes); i++) {
        JsonObject *node = json_array_get_object_element(nodes, i);
        n += json_object_has_member(node, "op") && strcmp(json_object_get_string_member(node, "op"), op) == 0;
    }
    return n;
}

/* Whether the graph JSON has a node named name. */
static bool has_node_named(JsonObject *graph, const char *name)
{
    JsonArray *nodes = json_object_get_array_member(graph, "nodes");
    for (guint i = 0; nodes && i < json_array_get_length(nodes); i++)
        if (strcmp(json_object_get_string_member(json_array_get_object_element(nodes, i), "name"), name) == 0)
            return true;
    return false;
}

/* The stored profile: its format, 1 to 50 runs, and node names the graph has, each timed. */
static void assert_step_profile(const char *db, JsonObject *graph)
{
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tags WHERE name = ?1 AND kind = 'text'", "profile/train_step"),
                    ==, 1);
    char *json = logdb_text(db, "SELECT x.body FROM texts x JOIN tags t ON t.id = x.tag_id WHERE t.name = ?1",
                            "profile/train_step");
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    g_assert_true(json_parser_load_from_data(parser, json, -1, &error));
    g_assert_no_error(error);
    JsonObject *profile = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpstr(json_object_get_string_member(profile, "format"), ==, "twb-graph-profile");
    g_assert_cmpstr(json_object_get_string_member(profile, "function"), ==, "train_step");
    gint64 runs = json_object_get_int_member(profile, "runs");
    g_assert_cmpint(runs, >=, 1);
    g_assert_cmpint(runs, <=, 50);
    JsonArray *nodes = json_object_get_array_member(profile, "nodes");
    g_assert_cmpint(json_array_get_length(nodes), >, 0);
    for (guint i = 0; i < json_array_get_length(nodes); i++) {
        JsonObject *node = json_array_get_object_element(nodes, i);
        const char *name = json_object_get_string_member(node, "name");
        if (!has_node_named(graph, name))
            g_error("profile/train_step names node '%s', which graph/train_step does not have", name);
        g_assert_cmpfloat(json_object_get_double_member(node, "total_us"), >, 0);
    }
    g_object_unref(parser);
    g_free(json);
}

static void test_trace_stores_step_graph(fixture *f, gconstpointer data)
{
    char *model = g_build_filename(f->dir, "traceable.json", NULL), *db = g_build_filename(f->dir, "runs.db", NULL);
    g_assert_true(g_file_set_contents(model, traceable_model, -1, NULL));
    twb_run run = run_twb("train", model, "--data", "spirals", "--epochs", "2", "--logdb", db, "--run", "traced",
                          "--trace", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM tags WHERE name = ?1 AND kind = 'graph'", "graph/train_step"),
                    ==, 1);
    g_assert_cmpint(logdb_int(db, "SELECT min(x.step) FROM texts x JOIN tags t ON t.id = x.tag_id WHERE t.name = ?1",
                              "graph/train_step"),
                    ==, 0);
    char *json = logdb_text(db, "SELECT x.body FROM texts x JOIN tags t ON t.id = x.tag_id WHERE t.name = ?1",
                            "graph/train_step");
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    g_assert_true(json_parser_load_from_data(parser, json, -1, &error));
    g_assert_no_error(error);
    JsonObject *graph = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpstr(json_object_get_string_member(graph, "function"), ==, "train_step");
    g_assert_cmpint(count_op_nodes(graph, "optimizer_update"), ==, 4); /* two kernels, two biases */
    g_assert_cmpint(count_op_nodes(graph, "assign_add"), ==, 1);      /* the iteration counter */
    g_assert_cmpint(count_op_nodes(graph, "matmul"), >=, 2);
    assert_step_profile(db, graph);
    g_object_unref(parser);
    g_free(json);

    /* The fixture's model has Dropout. */
    run = run_twb("train", f->model, "--data", "spirals", "--trace", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "cannot run traced"));
    g_assert_nonnull(strstr(run.err, "random draw"));
    g_assert_nonnull(strstr(run.err, "feeds op '"));
    twb_run_clear(&run);
    g_free(model);
    g_free(db);
}


/* ---- hardening (issue 12) --------------------------------------------------- */

/* How spawn_twb's child runs: as nobody (root writes through any mode
 * bits) and under a file size limit (writes past it fail as on a full
 * disk: EFBIG where a disk gives ENOSPC). */
typedef struct {
    bool as_nobody;
    rlim_t file_size_limit; /* 0: none */
} child_limits;

static void child_setup(gpointer data)
{
    const child_limits *l = data;
    if (l->file_size_limit) {
        struct rlimit r = {l->file_size_limit, l->file_size_limit};
        signal(SIGXFSZ, SIG_IGN); /* the write fails instead; inherited across exec */
        setrlimit(RLIMIT_FSIZE, &r);
    }
    if (l->as_nobody && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        _exit(99);
}

static twb_run spawn_twb(const child_limits *limits, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)g_getenv("TWB"));
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (char *)args[i]);
    g_ptr_array_add(argv, NULL);
    twb_run run = {0};
    int status = 0;
    GError *error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, child_setup, (gpointer)limits,
                               &run.out, &run.err, &status, &error));
    g_assert_no_error(error);
    run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    g_ptr_array_free(argv, TRUE);
    return run;
}

static int count_substrings(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Six trainings started at once on a file none of them has created yet:
 * each waits for the others' locks (busy timeout before the first query),
 * none fails with "database is locked" nor with a default name another
 * took in the same second, all six runs are in the file. */
static void test_concurrent_new_logdb(fixture *f, gconstpointer data)
{
    char *db = g_build_filename(f->dir, "new.db", NULL);
    enum { N = 6 };
    GPid pids[N];
    int errs[N];
    char *names[N];
    for (int i = 0; i < N; i++) {
        /* Half without --run: their default names (the model's and the
         * time's, to the second) are the same, and each gets its own. */
        names[i] = g_strdup_printf("run-%d", i);
        const char *argv[] = {g_getenv("TWB"), "train", f->model, "--data", "spirals", "--epochs", "1",
                              "--logdb", db, i < N / 2 ? "--run" : NULL, names[i], NULL};
        GError *error = NULL;
        g_assert_true(g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                               G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                               &pids[i], NULL, NULL, &errs[i], &error));
        g_assert_no_error(error);
    }
    for (int i = 0; i < N; i++) {
        char err[8192] = {0};
        ssize_t n = 0, got;
        while ((got = read(errs[i], err + n, sizeof err - 1 - (size_t)n)) > 0)
            n += got;
        int status;
        g_assert_cmpint(waitpid(pids[i], &status, 0), ==, pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strstr(err, "warning"))
            g_error("run %d: exit %d: %s", i, WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
        close(errs[i]);
        g_spawn_close_pid(pids[i]);
        g_free(names[i]);
    }
    g_assert_cmpint(logdb_int(db, "SELECT count(*) FROM runs WHERE status = ?1", "finished"), ==, N);
    g_free(db);
}

/* A run database in a folder nobody may write to: `twb runs` reads it
 * (no -shm or -wal beside it), and training goes on without logs after one
 * warning naming the file, for the file there and for a new one. */
static void test_read_only_logdb(fixture *f, gconstpointer data)
{
    char *dir = g_build_filename(f->dir, "ro", NULL), *db = g_build_filename(dir, "runs.db", NULL);
    char *fresh = g_build_filename(dir, "new.db", NULL);
    g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--logdb", db, "--run", "first", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    g_assert_cmpint(g_chmod(f->dir, 0755), ==, 0);
    g_assert_cmpint(g_chmod(db, 0444), ==, 0);
    g_assert_cmpint(g_chmod(dir, 0555), ==, 0);
    child_limits nobody = {.as_nobody = true};

    const char *list[] = {"runs", "list", "--logdb", db, NULL};
    run = spawn_twb(&nobody, list);
    g_assert_cmpstr(run.err, ==, "");
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "first"));
    twb_run_clear(&run);
    const char *show[] = {"runs", "show", "first", "--logdb", db, NULL};
    run = spawn_twb(&nobody, show);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "status:   finished"));
    g_assert_nonnull(strstr(run.out, "train/loss"));
    twb_run_clear(&run);
    const char *export[] = {"runs", "export", "first", "--tag", "train/loss", "--format", "csv", "--logdb", db, NULL};
    run = spawn_twb(&nobody, export);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_true(g_str_has_prefix(run.out, "wall_time,step,value\n"));
    twb_run_clear(&run);

    const char *const files[] = {db, fresh};
    for (int i = 0; i < 2; i++) {
        const char *train[] = {"train", f->model, "--data", "spirals", "--logdb", files[i], "--run", "second", NULL};
        run = spawn_twb(&nobody, train);
        g_test_message("%s", run.err);
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_cmpint(count_substrings(run.err, "warning"), ==, 1);
        g_assert_nonnull(strstr(run.err, files[i]));
        g_assert_nonnull(strstr(run.err, "the logs of run 'second' are not written; training goes on"));
        g_assert_nonnull(strstr(run.out, "training: loss"));
        twb_run_clear(&run);
    }
    g_assert_cmpint(count_files_named(dir, "runs.db"), ==, 1); /* no side files, no new file */
    g_assert_cmpint(g_chmod(dir, 0755), ==, 0);
    g_free(fresh);
    g_free(db);
    g_free(dir);
}

static const char *linear_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"lin\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d0\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 1]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 1}}]}}";

/* Adam, RMSprop and Adagrad at a huge learning rate: their loss grows
 * without overflowing, and the fit stops as SGD's does on its NaN, naming
 * the epoch and step; the run is "failed" with that reason, which `twb
 * runs show` prints. */
static void test_divergence_fails(fixture *f, gconstpointer data)
{
    char *model = g_build_filename(f->dir, "linear.json", NULL), *db = g_build_filename(f->dir, "runs.db", NULL);
    g_assert_true(g_file_set_contents(model, linear_model, -1, NULL));
    const char *optimizers[] = {"adam", "rmsprop", "adagrad", "sgd"};
    for (size_t i = 0; i < G_N_ELEMENTS(optimizers); i++) {
        twb_run run = run_twb("train", model, "--data", "linear", "--epochs", "3", "--optimizer", optimizers[i],
                              "--learning-rate", "1000", "--logdb", db, "--run", optimizers[i], NULL);
        g_test_message("%s: %s", optimizers[i], run.err);
        g_assert_cmpint(run.exit_status, ==, 1);
        g_assert_nonnull(strstr(run.err, "twb train: fit: epoch 1, step "));
        g_assert_true(strstr(run.err, ": the loss diverged: ") || strstr(run.err, ": the loss is "));
        twb_run_clear(&run);
        g_assert_cmpint(logdb_int(db,
                                  "SELECT count(*) FROM runs WHERE name = ?1 AND status = 'failed' AND "
                                  "failure_reason LIKE 'fit: epoch 1, step %: the loss %'",
                                  optimizers[i]),
                        ==, 1);
    }
    twb_run run = run_twb("runs", "show", "adam", "--logdb", db, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "status:   failed\nreason:   fit: epoch 1, step "));
    twb_run_clear(&run);
    g_free(model);
    g_free(db);
}

/* The checkpoint's training_config with its step replaced (the header
 * grows: padded again to a multiple of 8, the data offsets stay). */
static void set_checkpoint_step(const char *path, const char *step)
{
    gchar *bytes;
    gsize size;
    g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));
    guint64 n = GUINT64_FROM_LE(*(guint64 *)bytes);
    char *header = g_strndup(bytes + 8, (gsize)n);
    g_strchomp(header);
    char *want = g_strdup_printf("\\\"step\\\": %s,", step);
    char **parts = g_strsplit(header, "\\\"step\\\": 0,", 2);
    g_assert_nonnull(parts[1]);
    GString *h = g_string_new(parts[0]);
    g_string_append(h, want);
    g_string_append(h, parts[1]);
    while (h->len % 8)
        g_string_append_c(h, ' ');
    guint64 len = GUINT64_TO_LE((guint64)h->len);
    GByteArray *out = g_byte_array_new();
    g_byte_array_append(out, (const guint8 *)&len, 8);
    g_byte_array_append(out, (const guint8 *)h->str, (guint)h->len);
    g_byte_array_append(out, (const guint8 *)bytes + 8 + n, (guint)(size - 8 - n));
    g_assert_true(g_file_set_contents(path, (const char *)out->data, out->len, NULL));
    g_byte_array_unref(out);
    g_string_free(h, TRUE);
    g_strfreev(parts);
    g_free(want);
    g_free(header);
    g_free(bytes);
}

/* A resume position no training of this data can have (a step of
 * INT64_MAX overflowed) is refused naming the checkpoint; resuming with
 * other settings than the checkpoint's warns, naming each. */
static void test_resume_checks(fixture *f, gconstpointer data)
{
    char *dir = g_build_filename(f->dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--epochs", "1", "--seed", "5", "--checkpoint-dir",
                          dir, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", "spirals", "--epochs", "2", "--seed", "6", "--batch-size", "16",
                  "--learning-rate", "0.01", "--checkpoint-dir", dir, "--resume", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    char *message = g_strdup_printf("twb train: warning: %s was saved with other training settings: batch size 16 "
                                    "(was 32), seed 6 (was 5), learning rate 0.01 (was 0.001); "
                                    "the resumed run will not repeat the uninterrupted one\n",
                                    ckpt);
    g_assert_nonnull(strstr(run.err, message));
    g_free(message);
    twb_run_clear(&run);

    set_checkpoint_step(ckpt, "9223372036854775807");
    run = run_twb("train", f->model, "--data", "spirals", "--epochs", "3", "--checkpoint-dir", dir, "--resume", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    message = g_strdup_printf("twb train: %s: the training config says step 9223372036854775807, past the 63 steps "
                              "of an epoch of this data (2000 examples, batch size 32)\n",
                              ckpt);
    g_assert_cmpstr(run.err, ==, message);
    g_free(message);
    twb_run_clear(&run);
    g_free(ckpt);
    g_free(dir);
}

/* Resuming on other data than the checkpoint was trained on (a CSV file
 * after spirals) warns, naming both; the run goes on. */
static void test_resume_other_data(fixture *f, gconstpointer data)
{
    char *dir = g_build_filename(f->dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    char *csv = g_build_filename(f->dir, "points.csv", NULL);
    GString *rows = g_string_new("x,y,label\n");
    for (int i = 0; i < 2000; i++)
        g_string_append_printf(rows, "%d.5,%d.25,%d\n", i % 7, i % 5, i % 2);
    g_assert_true(g_file_set_contents(csv, rows->str, (gssize)rows->len, NULL));
    g_string_free(rows, TRUE);
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--epochs", "1", "--checkpoint-dir", dir, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", csv, "--label-column", "label", "--epochs", "2", "--checkpoint-dir",
                  dir, "--resume", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    char *message = g_strdup_printf("twb train: warning: %s was saved with other training settings: data %s (was "
                                    "spirals); the resumed run will not repeat the uninterrupted one\n",
                                    ckpt, csv);
    g_assert_nonnull(strstr(run.err, message));
    g_assert_nonnull(strstr(run.out, "epoch 2/2"));
    g_free(message);
    twb_run_clear(&run);
    g_free(csv), g_free(ckpt), g_free(dir);
}

/* A FIFO or a device as --logdb: refused before training, naming the
 * file (opening the FIFO waited forever). The alarm fails the test
 * instead of hanging it. */
static void test_logdb_not_a_regular_file(fixture *f, gconstpointer data)
{
    char *fifo = g_build_filename(f->dir, "runs.db", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    const char *files[] = {fifo, "/dev/zero"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        alarm(60);
        twb_run run = run_twb("train", f->model, "--data", "spirals", "--epochs", "1", "--logdb", files[i], NULL);
        alarm(0);
        g_assert_cmpint(run.exit_status, ==, 1);
        char *err = g_strdup_printf(
            "twb train: %s: is not a regular file (a device, pipe or socket), not a run database\n", files[i]);
        g_assert_cmpstr(run.err, ==, err);
        g_assert_null(strstr(run.out, "epoch"));
        g_free(err);
        twb_run_clear(&run);
    }
    g_remove(fifo);
    g_free(fifo);
}

/* --weights on a missing file, a pipe or a folder says so, as every other
 * reader does; it said "not a weight file" (the format check read nothing
 * and took the file for JSON). */
static void test_weights_not_a_file(fixture *f, gconstpointer data)
{
    char *fifo = g_build_filename(f->dir, "fifo.h5", NULL);
    char *missing = g_build_filename(f->dir, "missing.h5", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    const struct {
        const char *path, *why;
    } cases[] = {
        {missing, "cannot open: No such file or directory"},
        {fifo, "is not a regular file (a device, pipe or socket); only files can be read"},
        {f->dir, "is a directory, not a file"},
    };
    const char *commands[] = {"train", "evaluate"};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        for (size_t c = 0; c < G_N_ELEMENTS(commands); c++) {
            alarm(60);
            twb_run run = run_twb(commands[c], f->model, "--data", "spirals", "--epochs", "1", "--weights",
                                  cases[i].path, NULL);
            alarm(0);
            g_assert_cmpint(run.exit_status, ==, 1);
            char *err = g_strdup_printf("twb %s: --weights %s: %s\n", commands[c], cases[i].path, cases[i].why);
            g_assert_cmpstr(run.err, ==, err);
            g_free(err);
            twb_run_clear(&run);
        }
    g_remove(fifo);
    g_free(fifo), g_free(missing);
}

/* A full disk (a file size limit here) in the middle of a run: one
 * warning naming the file and the step from which logs are lost, and the
 * run ends "finished" with that step recorded. The warning comes when the
 * writer thread meets the error: during training ("training goes on"),
 * which may be at the last epoch's end, after its line, or, when that
 * thread lags behind the whole run, as it did once on a loaded 2-core
 * machine, at the end, from closing the run. */
static void test_full_disk_logdb(fixture *f, gconstpointer data)
{
    char *db = g_build_filename(f->dir, "runs.db", NULL);
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--logdb", db, "--run", "first", NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    struct stat st;
    g_assert_cmpint(g_stat(db, &st), ==, 0);
    child_limits full = {.file_size_limit = (rlim_t)st.st_size + 256 * 1024};
    const char *train[] = {"train", f->model, "--data", "spirals", "--epochs", "20", "--logdb", db, "--run", "full",
                           "--log-every", "1", "--histogram-every", "1", "--json", NULL};
    run = spawn_twb(&full, train);
    g_test_message("%s", run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_cmpint(count_substrings(run.err, "warning"), ==, 1);
    const char *warning = strstr(run.err, "twb train: warning: ");
    g_assert_nonnull(warning);
    g_assert_true(g_str_has_prefix(warning + strlen("twb train: warning: "), db));
    g_assert_nonnull(strstr(warning, ": cannot write to it: "));
    g_assert_nonnull(strstr(warning, "; the logs of run 'full' from step "));
    const char *last_epoch = strstr(run.err, "epoch 20/20");
    g_assert_nonnull(last_epoch);
    /* Met while training, at a step's or an epoch's end (the last
     * epoch's end too, after its line): "training goes on"; met only when
     * the run closes: without it. */
    bool during = strstr(warning, " on are lost; training goes on\n") != NULL;
    g_assert_true(during || strstr(warning, " on are lost\n"));
    if (warning < last_epoch)
        g_assert_true(during);
    twb_run_clear(&run);
    g_assert_cmpint(logdb_int(db,
                              "SELECT count(*) FROM runs WHERE name = ?1 AND status = 'finished' AND "
                              "logs_lost_from_step > 0 AND logs_lost_reason LIKE '%cannot write to it%'",
                              "full"),
                    ==, 1);
    g_free(db);
}

static const char *wide_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"wide\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 512, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 2}}]}}";

/* A checkpoint that does not fit: the previous one stays as it was, the
 * failure warns (once for the same message), training goes on to its end. */
static void test_full_disk_checkpoint(fixture *f, gconstpointer data)
{
    char *model = g_build_filename(f->dir, "wide.json", NULL), *dir = g_build_filename(f->dir, "ck", NULL);
    char *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    g_assert_true(g_file_set_contents(model, wide_model, -1, NULL));
    twb_run run = run_twb("train", model, "--data", "spirals", "--checkpoint-dir", dir, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    gchar *before, *after;
    gsize before_size, after_size;
    g_assert_true(g_file_get_contents(ckpt, &before, &before_size, NULL));
    child_limits full = {.file_size_limit = before_size / 2};
    const char *train[] = {"train", model, "--data", "spirals", "--epochs", "2", "--checkpoint-dir", dir, "--json",
                           NULL};
    run = spawn_twb(&full, train);
    g_test_message("%s", run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    char *message = g_strdup_printf("twb train: warning: %s: cannot save the safetensors file: writing failed: File "
                                    "too large (any previous file is unchanged); training goes on\n",
                                    ckpt);
    g_assert_cmpint(count_substrings(run.err, message), ==, 1);
    g_assert_nonnull(strstr(run.out, "\"epochs\": 2"));
    twb_run_clear(&run);
    g_free(message);
    g_assert_true(g_file_get_contents(ckpt, &after, &after_size, NULL));
    g_assert_cmpmem(before, before_size, after, after_size);
    g_assert_cmpint(count_files_named(dir, "checkpoint.safetensors"), ==, 1); /* no temporary file left */
    g_free(before);
    g_free(after);
    g_free(ckpt);
    g_free(dir);
    g_free(model);
}

/* Evaluating with a checkpoint of another model names the checkpoint. */
static void test_checkpoint_mismatch_named(fixture *f, gconstpointer data)
{
    char *dir = g_build_filename(f->dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    char *model = g_build_filename(f->dir, "wide.json", NULL);
    g_assert_true(g_file_set_contents(model, wide_model, -1, NULL));
    twb_run run = run_twb("train", f->model, "--data", "spirals", "--checkpoint-dir", dir, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    run = run_twb("evaluate", model, "--checkpoint", ckpt, "--data", "spirals", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    char *message = g_strdup_printf("twb evaluate: %s: 'dense/kernel' has shape (2, 32) in the checkpoint but (2, 512) in "
                                    "the model\n",
                                    ckpt);
    g_assert_cmpstr(run.err, ==, message);
    g_free(message);
    twb_run_clear(&run);
    g_free(model);
    g_free(ckpt);
    g_free(dir);
}

/* A model whose Lambda is Python code of unknown output shape: it
 * summarizes ("?" there, Keras' counts elsewhere), and train, predict and
 * sweep refuse it with the Lambda's reason before reading any data. */
static void test_lambda_refused(fixture *f, gconstpointer data)
{
    static const char json[] =
        "{\"class_name\": \"Functional\", \"config\": {\"name\": \"m\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2], \"name\": \"in\"}, "
        "\"name\": \"in\", \"inbound_nodes\": []}, "
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 3}, \"name\": \"d\", "
        "\"inbound_nodes\": [[[\"in\", 0, 0, {}]]]}, "
        "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"f\", \"function\": \"x\", \"output_shape\": "
        "[\"4wEA\", null, null], \"output_shape_type\": \"lambda\"}, \"name\": \"f\", "
        "\"inbound_nodes\": [[[\"d\", 0, 0, {}]]]}], "
        "\"input_layers\": [[\"in\", 0, 0]], \"output_layers\": [[\"f\", 0, 0]]}}";
    char *path = g_build_filename(f->dir, "lambda.json", NULL);
    char *db = g_build_filename(f->dir, "runs.db", NULL);
    g_assert_true(g_file_set_contents(path, json, -1, NULL));
    twb_run run = run_twb("summary", path, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "f (Lambda)                      ?                    0           d[0][0]\n"));
    g_assert_nonnull(strstr(run.out, "Total params: 9\n"));
    twb_run_clear(&run);
    const char *reason = "Lambda 'f': runs Python code saved in the Keras file (a lambda), which cannot run here; "
                         "the model can be summarized but not run or trained";
    const char *commands[] = {"train", "evaluate", "predict", "sweep"};
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        bool logdb = !strcmp(commands[i], "train") || !strcmp(commands[i], "sweep"); /* the others log nothing */
        run = run_twb(commands[i], path, "--data", "spirals", logdb ? "--logdb" : NULL, db, NULL);
        g_test_message("twb %s: %s", commands[i], run.err);
        g_assert_cmpint(run.exit_status, ==, 1);
        g_assert_nonnull(strstr(run.err, reason));
        twb_run_clear(&run);
    }
    g_free(path), g_free(db);
}

/* twb train refuses a model that cannot train on the data with the words
 * of the window's Train and of `twb sweep` (one check, twb_data_check),
 * before a run is recorded; it trained them. */
static void test_untrainable_refused(fixture *f, gconstpointer data)
{
    static const struct {
        const char *name, *json, *reason;
    } cases[] = {
        {"bare",
         "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"bare\", \"layers\": [{\"class_name\": "
         "\"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2]}}]}}",
         "model 'bare' has no weights to train: add a layer with weights, such as Dense, after its input"},
        {"three",
         "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"three\", \"layers\": [{\"class_name\": "
         "\"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2]}}, {\"class_name\": \"Dense\", "
         "\"config\": {\"units\": 3, \"activation\": \"softmax\"}}]}}",
         "model 'three' has 3 output units, but spirals (2000 examples) has 2 classes (labels 0 to 1): sparse "
         "categorical cross-entropy needs one unit per class"},
    };
    char *db = g_build_filename(f->dir, "runs.db", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *file = g_strconcat(cases[i].name, ".json", NULL);
        char *path = g_build_filename(f->dir, file, NULL);
        g_assert_true(g_file_set_contents(path, cases[i].json, -1, NULL));
        const char *commands[] = {"train", "sweep"};
        for (size_t c = 0; c < G_N_ELEMENTS(commands); c++) {
            twb_run run = run_twb(commands[c], path, "--data", "spirals", "--epochs", "1", "--logdb", db, NULL);
            g_test_message("twb %s %s: %s", commands[c], file, run.err);
            g_assert_cmpint(run.exit_status, ==, 1);
            char *line = g_strdup_printf("twb %s: %s\n", commands[c], cases[i].reason);
            g_assert_cmpstr(run.err, ==, line);
            g_free(line);
            twb_run_clear(&run);
        }
        g_free(path), g_free(file);
    }
    twb_run run = run_twb("runs", "list", "--logdb", db, NULL); /* no run was started */
    g_assert_null(strstr(run.out, "bare"));
    g_assert_null(strstr(run.out, "three"));
    twb_run_clear(&run);
    g_free(db);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/cli-train/json-result", fixture, NULL, setup, test_json_result, teardown);
    g_test_add("/cli-train/resume-matches", fixture, NULL, setup, test_resume_matches, teardown);
    g_test_add("/cli-train/device", fixture, NULL, setup, test_device, teardown);
    g_test_add("/cli-train/sigterm-saves-checkpoint", fixture, GINT_TO_POINTER(SIGTERM), setup,
               test_interrupt_saves_checkpoint, teardown);
    g_test_add("/cli-train/sighup-saves-checkpoint", fixture, GINT_TO_POINTER(SIGHUP), setup,
               test_interrupt_saves_checkpoint, teardown);
    g_test_add("/cli-train/interrupt-saves-checkpoint", fixture, GINT_TO_POINTER(SIGINT), setup,
               test_interrupt_saves_checkpoint,
               teardown);
    g_test_add("/cli-train/bad-input", fixture, NULL, setup, test_bad_input, teardown);
    g_test_add("/cli-train/lambda-refused", fixture, NULL, setup, test_lambda_refused, teardown);
    g_test_add("/cli-train/untrainable-refused", fixture, NULL, setup, test_untrainable_refused, teardown);
    g_test_add_func("/cli-train/fashion-mnist-mlp", test_fashion_mnist_mlp);
    g_test_add("/cli-train/logdb", fixture, NULL, setup, test_logdb, teardown);
    g_test_add("/cli-train/evaluation-stored", fixture, NULL, setup, test_evaluation_stored, teardown);
    g_test_add("/cli-train/tfevents", fixture, NULL, setup, test_tfevents, teardown);
    g_test_add("/cli-train/trace-stores-step-graph", fixture, NULL, setup, test_trace_stores_step_graph, teardown);
    g_test_add("/cli-train/concurrent-new-logdb", fixture, NULL, setup, test_concurrent_new_logdb, teardown);
    g_test_add("/cli-train/read-only-logdb", fixture, NULL, setup, test_read_only_logdb, teardown);
    g_test_add("/cli-train/divergence-fails", fixture, NULL, setup, test_divergence_fails, teardown);
    g_test_add("/cli-train/resume-checks", fixture, NULL, setup, test_resume_checks, teardown);
    g_test_add("/cli-train/resume-other-data", fixture, NULL, setup, test_resume_other_data, teardown);
    g_test_add("/cli-train/logdb-not-a-regular-file", fixture, NULL, setup, test_logdb_not_a_regular_file, teardown);
    g_test_add("/cli-train/weights-not-a-file", fixture, NULL, setup, test_weights_not_a_file, teardown);
    g_test_add("/cli-train/full-disk-logdb", fixture, NULL, setup, test_full_disk_logdb, teardown);
    g_test_add("/cli-train/full-disk-checkpoint", fixture, NULL, setup, test_full_disk_checkpoint, teardown);
    g_test_add("/cli-train/checkpoint-mismatch-named", fixture, NULL, setup, test_checkpoint_mismatch_named,
               teardown);
    return g_test_run();
}
