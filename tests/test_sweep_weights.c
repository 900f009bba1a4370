/* A sweep trial's model over a model file with weights (app/sweep_weights.c):
 * a value that changes no shape keeps every weight of the file, bit for
 * bit; a changed units count gives fresh weights to exactly the weights
 * whose shapes changed (the layer's and the next layer's kernel), as the
 * trial's seed initialises them, keeps the others, and says which in the
 * notice; a nested model's layer by its path; a file without weights and a
 * value the file has already are left as they are; a layer that is not
 * there is refused, naming the candidates; a Functional model read again
 * for its layer values (twb_model_with_layer_values). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include <tw/error.h>
#include <tw/keras_file.h>
#include <tw/model_file.h>

#include "scratch_tree.h"
#include "sweep_weights.h"
#include "train_session.h"

static const char *blobs_json =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"blobs\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": %d, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dropout\", \"config\": {\"name\": \"dropout\", \"rate\": 0.1}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";

static const char *nested_json =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16, \"activation\": \"relu\","
    " \"batch_input_shape\": [null, 2]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 8}}]}},"
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block_1\", \"layers\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 8}}]}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";

typedef struct {
    char *dir;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    f->dir = g_dir_make_tmp("twb-sweep-weights-XXXXXX", NULL);
    g_assert_nonnull(f->dir);
}

static void teardown(fixture *f, gconstpointer data)
{
    scratch_remove_tree(f->dir);
    g_free(f->dir);
}

/* Every weight 0.5 above its initial value: biases too, so a kept bias is
 * not a fresh one's zeros. */
static int shift(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    tw_tensor *half = tw_scalar_of(0.5, tw_tensor_dtype(weight));
    int rc = tw_assign_add(weight, half);
    tw_tensor_unref(half);
    return rc;
}

/* The model of the JSON, built with seed 5 and shifted (weights unlike any
 * trial's), as a .keras file in the fixture's folder (g_free). */
static char *write_keras(fixture *f, const char *json, const char *name)
{
    tw_model *model = tw_model_from_json(json, strlen(json), name);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 5), ==, 0);
    g_assert_cmpint(tw_layer_foreach_weight(model, shift, NULL), ==, 0);
    char *path = g_build_filename(f->dir, name, NULL);
    g_assert_cmpint(tw_model_write(model, path, TW_MODEL_FORMAT_AUTO), ==, 0);
    tw_layer_unref(model);
    return path;
}

/* The weight at path, or NULL. */
typedef struct {
    const char *path;
    tw_tensor *found;
} weight_search;

static int find_weight(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    weight_search *s = user_data;
    if (!strcmp(path, s->path))
        s->found = weight;
    return 0;
}

static tw_tensor *weight(const tw_model *model, const char *path)
{
    weight_search s = {path, NULL};
    tw_layer_foreach_weight(model, find_weight, &s);
    g_assert_nonnull(s.found);
    return s.found;
}

static gboolean same_values(tw_tensor *a, tw_tensor *b)
{
    if (tw_tensor_numel(a) != tw_tensor_numel(b))
        return FALSE;
    tw_tensor *ca = tw_contiguous(a), *cb = tw_contiguous(b);
    gboolean same = !memcmp(tw_tensor_data(ca), tw_tensor_data(cb), sizeof(float) * (size_t)tw_tensor_numel(a));
    tw_tensor_unref(ca);
    tw_tensor_unref(cb);
    return same;
}

static tw_train_settings trial(tw_layer_value *values, int n)
{
    tw_train_settings s = tw_train_settings_defaults();
    s.seed = 1;
    s.nlayer_values = n;
    s.layer_values = values;
    return s;
}

/* dropout.rate and dense.units over a file with dense.units 16. */
static void test_flat(fixture *f, gconstpointer data)
{
    char *json16 = g_strdup_printf(blobs_json, 16), *json32 = g_strdup_printf(blobs_json, 32);
    char *path = write_keras(f, json16, "blobs.keras");
    tw_model *file = tw_model_open(path);
    g_assert_nonnull(file);
    const char *paths[] = {"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"};

    /* a rate changes no shape: every weight is the file's, the rate the trial's */
    tw_layer_value rate[] = {{"dense", "units", 16}, {"dropout", "rate", 0.3}};
    tw_train_settings s = trial(rate, 2);
    char *notice = NULL;
    tw_model *m = twb_sweep_trial_model(path, &s, &notice);
    g_assert_nonnull(m);
    g_assert_null(notice);
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer(m, "dropout"), "rate")->number, ==, 0.3);
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        g_assert_true(same_values(weight(m, paths[i]), weight(file, paths[i])));
    tw_layer_unref(m);

    /* 32 units: the layer's weights and the next kernel fresh, as the
     * trial's seed builds them; the last bias the file's */
    tw_layer_value units[] = {{"dense", "units", 32}};
    s = trial(units, 1);
    m = twb_sweep_trial_model(path, &s, &notice);
    g_assert_nonnull(m);
    g_assert_cmpstr(notice, ==, "dense.units=32: 3 weights of blobs.keras start fresh, their shapes changed: "
                                "dense/kernel (2, 16) -> (2, 32), dense/bias (16,) -> (32,), dense_1/kernel (16, 3) "
                                "-> (32, 3); 1 kept from the file");
    g_free(notice);
    tw_model *fresh = tw_model_from_json(json32, strlen(json32), "fresh");
    g_assert_cmpint(tw_model_build(fresh, NULL, 1), ==, 0);
    g_assert_true(same_values(weight(m, "dense/kernel"), weight(fresh, "dense/kernel")));
    g_assert_true(same_values(weight(m, "dense_1/kernel"), weight(fresh, "dense_1/kernel")));
    g_assert_true(same_values(weight(m, "dense_1/bias"), weight(file, "dense_1/bias")));
    g_assert_false(same_values(weight(m, "dense_1/bias"), weight(fresh, "dense_1/bias")));
    tw_layer_unref(fresh);
    tw_layer_unref(m);

    /* the file's own values: the model as opened */
    tw_layer_value same[] = {{"dense", "units", 16}, {"dropout", "rate", 0.1}};
    s = trial(same, 2);
    m = twb_sweep_trial_model(path, &s, &notice);
    g_assert_null(notice);
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        g_assert_true(same_values(weight(m, paths[i]), weight(file, paths[i])));
    tw_layer_unref(m);

    /* a layer that is not there */
    tw_layer_value missing[] = {{"dens", "units", 8}};
    s = trial(missing, 1);
    g_assert_null(twb_sweep_trial_model(path, &s, &notice));
    g_assert_null(notice);
    g_assert_cmpstr(tw_last_error(), ==, "model 'blobs' has no layer named 'dens'; its layers are dense, dropout, "
                                         "dense_1");

    /* no weights in the file: as opened, not built (fit builds it) */
    char *json_path = g_build_filename(f->dir, "blobs.json", NULL);
    g_assert_true(g_file_set_contents(json_path, json16, -1, NULL));
    s = trial(units, 1);
    m = twb_sweep_trial_model(json_path, &s, &notice);
    g_assert_nonnull(m);
    g_assert_null(notice);
    g_assert_false(tw_layer_built(m));
    tw_layer_unref(m);

    tw_layer_unref(file);
    g_free(json_path);
    g_free(path);
    g_free(json16);
    g_free(json32);
}

/* A layer of a nested model by its path: its weights and the next nested
 * model's kernel fresh, everything else the file's. */
static void test_nested(fixture *f, gconstpointer data)
{
    char *path = write_keras(f, nested_json, "nested.keras");
    tw_model *file = tw_model_open(path);
    tw_layer_value hidden[] = {{"block/hidden", "units", 4}};
    tw_train_settings s = trial(hidden, 1);
    char *notice = NULL;
    tw_model *m = twb_sweep_trial_model(path, &s, &notice);
    g_assert_nonnull(m);
    g_assert_cmpstr(notice, ==, "block/hidden.units=4: 3 weights of nested.keras start fresh, their shapes changed: "
                                "block/hidden/kernel (16, 8) -> (16, 4), block/hidden/bias (8,) -> (4,), "
                                "block_1/dense/kernel (8, 8) -> (4, 8); 5 kept from the file");
    g_free(notice);
    const char *kept[] = {"block/dense/kernel", "block/dense/bias", "block_1/dense/bias", "dense_1/kernel",
                          "dense_1/bias"};
    for (size_t i = 0; i < G_N_ELEMENTS(kept); i++)
        g_assert_true(same_values(weight(m, kept[i]), weight(file, kept[i])));
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer_path(m, "block/hidden", NULL), "units")->number, ==, 4);
    tw_layer_unref(m);
    tw_layer_unref(file);
    g_free(path);
}

static const char *functional_json =
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"func\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2], \"dtype\": \"float32\","
    " \"name\": \"x\"}, \"name\": \"x\", \"inbound_nodes\": []},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16}, \"name\": \"dense\","
    " \"inbound_nodes\": [[[\"x\", 0, 0, {}]]]},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 3}, \"name\": \"out\","
    " \"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]}],"
    " \"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"out\", 0, 0]]}}";

/* A Functional model's graph keeps its layers' shapes: with a layer value
 * it is read again, so the next layer builds for the new width (it built
 * for the old one, and the trial failed at its first step); over a file
 * with weights too. A Sequential model stays the same object. */
static void test_functional(fixture *f, gconstpointer data)
{
    tw_layer_value units[] = {{"dense", "units", 8}};
    tw_train_settings s = trial(units, 1);
    tw_model *model = twb_model_with_layer_values(tw_model_from_json(functional_json, strlen(functional_json), "f"), &s);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 1), ==, 0);
    g_assert_cmpint(tw_tensor_shape(weight(model, "dense/kernel"))[1], ==, 8);
    g_assert_cmpint(tw_tensor_shape(weight(model, "out/kernel"))[0], ==, 8);
    tw_layer_unref(model);

    char *path = write_keras(f, functional_json, "func.keras");
    char *notice = NULL;
    model = twb_sweep_trial_model(path, &s, &notice);
    g_assert_nonnull(model);
    g_assert_cmpstr(notice, ==, "dense.units=8: 3 weights of func.keras start fresh, their shapes changed: "
                                "dense/kernel (2, 16) -> (2, 8), dense/bias (16,) -> (8,), out/kernel (16, 3) -> (8, 3); "
                                "1 kept from the file");
    g_free(notice);
    tw_layer_unref(model);
    g_free(path);

    char *json = g_strdup_printf(blobs_json, 16);
    tw_model *sequential = tw_model_from_json(json, strlen(json), "s");
    g_assert_true(twb_model_with_layer_values(sequential, &s) == sequential);
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer(sequential, "dense"), "units")->number, ==, 8);
    tw_layer_unref(sequential);
    g_free(json);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/sweep/weights/flat", fixture, NULL, setup, test_flat, teardown);
    g_test_add("/sweep/weights/nested", fixture, NULL, setup, test_nested, teardown);
    g_test_add("/sweep/weights/functional", fixture, NULL, setup, test_functional, teardown);
    return g_test_run();
}
