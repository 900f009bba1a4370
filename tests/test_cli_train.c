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

static double final_test_loss(fixture *f, const char *epochs, const char *checkpoint_dir, bool resume)
{
    const char *args[] = {"train", f->model, "--data", "spirals", "--epochs", epochs, "--seed", "5",
                          "--checkpoint-dir", checkpoint_dir, "--json", resume ? "--resume" : NULL, NULL};
    twb_run run = run_twb_argv(args);
    g_assert_cmpint(run.exit_status, ==, 0);
    JsonParser *parser;
    double loss = json_object_get_double_member(last_json(run.out, &parser), "test_loss");
    g_object_unref(parser);
    twb_run_clear(&run);
    return loss;
}

/* Two epochs, then resuming to four, ends where four at once end. */
static void test_resume_matches(fixture *f, gconstpointer data)
{
    char *whole = g_build_filename(f->dir, "whole", NULL), *parts = g_build_filename(f->dir, "parts", NULL);
    double uninterrupted = final_test_loss(f, "4", whole, false);
    final_test_loss(f, "2", parts, false);
    double resumed = final_test_loss(f, "4", parts, true);
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
static void test_interrupt_saves_checkpoint(fixture *f, gconstpointer data)
{
    char *dir = g_build_filename(f->dir, "ck", NULL), *ckpt = g_build_filename(dir, "checkpoint.safetensors", NULL);
    const char *argv[] = {g_getenv("TWB"), "train", f->model, "--data", "spirals", "--epochs", "100000",
                          "--checkpoint-dir", dir, NULL};
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
    kill(pid, SIGINT);
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

    run = run_twb("train", f->model, "--data", "/nonexistent/data.npy", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "/nonexistent/data.npy"));
    twb_run_clear(&run);

    run = run_twb("train", f->model, "--data", "spirals", "--optimizer", "adamax", NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "adamax"));
    twb_run_clear(&run);
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

/* --logdb: the run with its model, settings and test metrics, the batch logs
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/cli-train/json-result", fixture, NULL, setup, test_json_result, teardown);
    g_test_add("/cli-train/resume-matches", fixture, NULL, setup, test_resume_matches, teardown);
    g_test_add("/cli-train/interrupt-saves-checkpoint", fixture, NULL, setup, test_interrupt_saves_checkpoint,
               teardown);
    g_test_add("/cli-train/bad-input", fixture, NULL, setup, test_bad_input, teardown);
    g_test_add_func("/cli-train/fashion-mnist-mlp", test_fashion_mnist_mlp);
    g_test_add("/cli-train/logdb", fixture, NULL, setup, test_logdb, teardown);
    g_test_add("/cli-train/trace-stores-step-graph", fixture, NULL, setup, test_trace_stores_step_graph, teardown);
    return g_test_run();
}
