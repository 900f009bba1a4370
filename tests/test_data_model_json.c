/* Keras model files: the real configs of the shared corpus (parameter
 * counts against Keras', build, a forward pass, the summary), Keras' older
 * and newer layouts, nested models, messages that name the place of every
 * kind of bad input, round trips, and atomic saving. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "tw/engine.h"
#include "tw/model_file.h"

/* ---- helpers ---------------------------------------------------------------- */

static tw_model *from_json(const char *json)
{
    return tw_model_from_json(json, strlen(json), NULL);
}

static tw_model *must_load_json(const char *json)
{
    tw_model *model = from_json(json);
    if (!model)
        g_error("from_json: %s", tw_last_error());
    return model;
}

static void assert_counts(const tw_model *model, int64_t total, int64_t trainable, int64_t non_trainable)
{
    int64_t t = -1, tr = -1, nt = -1;
    if (tw_model_count_params(model, &t, &tr, &nt))
        g_error("count_params: %s", tw_last_error());
    g_assert_cmpint(t, ==, total);
    g_assert_cmpint(tr, ==, trainable);
    g_assert_cmpint(nt, ==, non_trainable);
}

static char *get_text(const tw_layer *layer, const char *key)
{
    char *text = tw_layer_get_text(layer, key);
    g_assert_nonnull(text);
    return text;
}

static void assert_param(const tw_layer *layer, const char *key, const char *expected)
{
    char *text = get_text(layer, key);
    g_assert_cmpstr(text, ==, expected);
    free(text);
}

/* A temporary directory for files a test writes; removed at the end. */
static char *scratch_dir(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-model-json-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void remove_dir(char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        char *path = g_build_filename(dir, name, NULL);
        g_remove(path);
        g_free(path);
    }
    if (d)
        g_dir_close(d);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
    g_free(dir);
}

/* The names in dir, sorted and joined by spaces. */
static char *dir_listing(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(d));)
        g_ptr_array_add(names, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
    g_ptr_array_add(names, NULL);
    char *joined = g_strjoinv(" ", (char **)names->pdata);
    g_ptr_array_free(names, TRUE);
    return joined;
}

/* ---- the corpus ------------------------------------------------------------- */

typedef struct {
    char *path;
    int64_t total, trainable, non_trainable;
} corpus_case;

static char *corpus_dir(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "keras", NULL);
}

/* The first layer that is not an InputLayer, looking into nested models. */
static const tw_layer *first_real_layer(const tw_model *model)
{
    for (int i = 0; i < tw_model_nlayers(model); i++) {
        const tw_layer *l = tw_model_layer_at(model, i);
        if (tw_layer_is_model(l))
            return first_real_layer(l);
        if (strcmp(tw_layer_class_of(l)->name, "InputLayer"))
            return l;
    }
    return NULL;
}

/* A batch of 2 for the model's input: values in [-1, 1), or word indices
 * below input_dim when it starts with an Embedding. */
static tw_tensor *sample_input(const tw_model *model)
{
    const tw_shape *in = tw_model_input_shape(model);
    g_assert_nonnull(in);
    int64_t dims[TW_MAX_DIMS];
    int64_t n = 1;
    for (int i = 0; i < in->ndim; i++) {
        dims[i] = i == 0 ? 2 : in->dims[i];
        g_assert_cmpint(dims[i], >, 0);
        n *= dims[i];
    }
    const tw_layer *first = first_real_layer(model);
    double vocabulary = 0;
    if (first && !strcmp(tw_layer_class_of(first)->name, "Embedding"))
        vocabulary = tw_layer_get(first, "input_dim")->number;
    GRand *rand = g_rand_new_with_seed(7);
    float *values = g_new(float, n);
    for (int64_t i = 0; i < n; i++)
        values[i] = vocabulary > 0 ? (float)g_rand_int_range(rand, 0, (gint32)vocabulary)
                                   : (float)g_rand_double_range(rand, -1, 1);
    tw_tensor *x = tw_tensor_from_data(values, TW_FLOAT32, in->ndim, dims);
    g_free(values);
    g_rand_free(rand);
    return x;
}

static void assert_forward_pass(tw_model *model)
{
    if (tw_model_build(model, NULL, 42))
        g_error("build: %s", tw_last_error());
    tw_scope_begin();
    tw_tensor *y = tw_model_call(model, sample_input(model), false);
    if (!y)
        g_error("forward pass: %s", tw_last_error());
    const tw_shape *out = tw_layer_output_shape(model);
    g_assert_cmpint(tw_tensor_ndim(y), ==, out->ndim);
    g_assert_cmpint(tw_tensor_dim(y, 0), ==, 2);
    for (int i = 1; i < out->ndim; i++)
        g_assert_cmpint(tw_tensor_dim(y, i), ==, out->dims[i]);
    int64_t n = tw_tensor_numel(y);
    float *values = g_new(float, n);
    g_assert_cmpint(tw_tensor_copy_to(tw_cast(y, TW_FLOAT32), values, sizeof(float) * n), ==, 0);
    for (int64_t i = 0; i < n; i++)
        g_assert_true(isfinite(values[i]));
    g_free(values);
    tw_scope_end();
}

/* "Total params: 14,273" as Keras prints it. */
static char *with_commas(int64_t v)
{
    char *digits = g_strdup_printf("%" G_GINT64_FORMAT, v);
    GString *out = g_string_new(NULL);
    size_t len = strlen(digits);
    for (size_t i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            g_string_append_c(out, ',');
        g_string_append_c(out, digits[i]);
    }
    g_free(digits);
    return g_string_free(out, FALSE);
}

static void assert_summary_totals(const tw_model *model, const corpus_case *c)
{
    char *summary = tw_model_summary(model, 0);
    if (!summary)
        g_error("summary: %s", tw_last_error());
    char *total = with_commas(c->total), *trainable = with_commas(c->trainable);
    char *line = g_strdup_printf("Total params: %s\nTrainable params: %s\n", total, trainable);
    g_assert_nonnull(strstr(summary, line));
    g_free(line);
    g_free(total);
    g_free(trainable);
    free(summary);
}

/* Writing a loaded file and reading it back gives the same text again. */
static void assert_round_trip_fixpoint(const tw_model *model)
{
    char *json = tw_model_to_json(model);
    g_assert_nonnull(json);
    tw_model *again = must_load_json(json);
    char *json2 = tw_model_to_json(again);
    g_assert_cmpstr(json2, ==, json);
    free(json);
    free(json2);
    tw_layer_unref(again);
}

static void test_corpus_file(gconstpointer data)
{
    const corpus_case *c = data;
    tw_model *model = tw_model_load(c->path);
    if (!model)
        g_error("load: %s", tw_last_error());
    assert_counts(model, c->total, c->trainable, c->non_trainable);
    assert_summary_totals(model, c);
    assert_round_trip_fixpoint(model);
    assert_forward_pass(model);
    tw_layer_unref(model);
}

static void test_corpus_absent(gconstpointer data)
{
    char *message = g_strdup_printf("the Keras corpus is not at %s (it lives in the shared checkout)",
                                    (const char *)data);
    g_test_skip(message);
    g_free(message);
}

static void corpus_case_free(gpointer data)
{
    corpus_case *c = data;
    g_free(c->path);
    g_free(c);
}

/* One test case per line of expected.tsv: file, total, trainable,
 * non-trainable, input shape, layer classes. */
static void add_corpus_tests(void)
{
    char *dir = corpus_dir();
    char *tsv_path = g_build_filename(dir, "expected.tsv", NULL);
    char *tsv = NULL;
    if (!g_file_get_contents(tsv_path, &tsv, NULL, NULL)) {
        g_test_add_data_func_full("/model_json/corpus", g_strdup(dir), test_corpus_absent, g_free);
    } else {
        char **lines = g_strsplit(tsv, "\n", -1);
        for (char **line = lines + 1; *line; line++) {
            char **f = g_strsplit(*line, "\t", -1);
            if (g_strv_length(f) >= 4) {
                corpus_case *c = g_new0(corpus_case, 1);
                c->path = g_build_filename(dir, f[0], NULL);
                c->total = g_ascii_strtoll(f[1], NULL, 10);
                c->trainable = g_ascii_strtoll(f[2], NULL, 10);
                c->non_trainable = g_ascii_strtoll(f[3], NULL, 10);
                char *name = g_strdup_printf("/model_json/corpus/%s", f[0]);
                g_test_add_data_func_full(name, c, test_corpus_file, corpus_case_free);
                g_free(name);
            }
            g_strfreev(f);
        }
        g_strfreev(lines);
    }
    g_free(tsv);
    g_free(tsv_path);
    g_free(dir);
}

/* ---- layouts of Keras' versions ----------------------------------------------- */

#define DENSE(name, units, extra) \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"" name "\", \"units\": " #units extra "}}"

static void test_bare_list(void)
{
    /* Keras before 2.2.3: "config" is the list of layers itself. */
    tw_model *model = must_load_json("{\"class_name\": \"Sequential\", \"config\": ["
                                     DENSE("hidden", 8, ", \"activation\": \"relu\", \"batch_input_shape\": [null, 3]")
                                     ", " DENSE("out", 2, "") "], \"keras_version\": \"2.1.6\"}");
    g_assert_cmpint(tw_model_nlayers(model), ==, 2);
    g_assert_cmpstr(tw_layer_name(model), ==, "sequential");
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 0)), ==, "hidden");
    assert_param(tw_model_layer_at(model, 0), "activation", "relu");
    assert_counts(model, 3 * 8 + 8 + 8 * 2 + 2, 50, 0);
    tw_layer_unref(model);
}

static void test_nested_sequential(void)
{
    tw_model *model = must_load_json(
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"in\"}},"
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"trunk\", \"layers\": ["
        DENSE("t1", 6, "") ", " DENSE("t2", 5, "") "]}},"
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"frozen\", \"trainable\": false, \"layers\": ["
        DENSE("f1", 3, "") "]}}," DENSE("head", 1, "") "]}}");
    g_assert_cmpint(tw_model_nlayers(model), ==, 4);
    const tw_layer *trunk = tw_model_layer_at(model, 1), *frozen = tw_model_layer_at(model, 2);
    g_assert_true(tw_layer_is_model(trunk));
    g_assert_cmpstr(tw_layer_name(trunk), ==, "trunk");
    g_assert_cmpint(tw_model_nlayers(trunk), ==, 2);
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(trunk, 1)), ==, "t2");
    g_assert_false(tw_layer_trainable(frozen));
    g_assert_false(tw_layer_trainable(tw_model_layer_at(frozen, 0)));
    int64_t trunk_params = 4 * 6 + 6 + 6 * 5 + 5, frozen_params = 5 * 3 + 3, head = 3 + 1;
    assert_counts(model, trunk_params + frozen_params + head, trunk_params + head, frozen_params);
    assert_round_trip_fixpoint(model);
    tw_layer_unref(model);
}

/* Keras 2.13+ adds module, registered_name and build_config; Keras 3 has
 * batch_shape and dtype policies. */
static void test_newer_keras_fields(void)
{
    tw_model *model = must_load_json(
        "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": \"k3\", \"trainable\": true,"
        " \"dtype\": {\"module\": \"keras\", \"class_name\": \"DTypePolicy\", \"config\": {\"name\": \"float32\"}},"
        " \"layers\": [{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", \"config\": {\"batch_shape\":"
        " [null, 7], \"dtype\": \"float32\", \"sparse\": false, \"name\": \"input_layer\"}, \"registered_name\": null},"
        " {\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"trainable\": true,"
        " \"dtype\": {\"module\": \"keras\", \"class_name\": \"DTypePolicy\", \"config\": {\"name\": \"float32\"},"
        " \"registered_name\": null}, \"units\": 3, \"activation\": \"softmax\", \"use_bias\": true,"
        " \"kernel_initializer\": {\"module\": \"keras.initializers\", \"class_name\": \"HeNormal\","
        " \"config\": {\"seed\": null}, \"registered_name\": null}, \"bias_initializer\": {\"module\":"
        " \"keras.initializers\", \"class_name\": \"Zeros\", \"config\": {}, \"registered_name\": null},"
        " \"kernel_regularizer\": null, \"bias_regularizer\": null, \"kernel_constraint\": null,"
        " \"bias_constraint\": null}, \"registered_name\": null, \"build_config\": {\"input_shape\": [null, 7]}}],"
        " \"build_input_shape\": [null, 7]}, \"registered_name\": null, \"build_config\": {\"input_shape\": [null, 7]}}");
    const tw_shape *in = tw_model_input_shape(model);
    g_assert_nonnull(in);
    g_assert_cmpint(in->ndim, ==, 2);
    g_assert_cmpint(in->dims[1], ==, 7);
    const tw_layer *layer = tw_model_layer_at(model, 1);
    assert_param(layer, "kernel_initializer", "he_normal");
    assert_param(layer, "activation", "softmax");
    assert_counts(model, 7 * 3 + 3, 24, 0);
    /* The model's own input shape goes back out as build_input_shape. */
    char *json = tw_model_to_json(model);
    g_assert_nonnull(strstr(json, "{\"name\": \"k3\", \"build_input_shape\": [null, 7], \"layers\": ["));
    free(json);
    assert_round_trip_fixpoint(model);
    tw_layer_unref(model);
}

static char *dense_with_initializer(const char *initializer)
{
    return g_strdup_printf("{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                           "{\"class_name\": \"Dense\", \"config\": {\"units\": 2, \"kernel_initializer\": %s}}]}}",
                           initializer);
}

static void test_initializers(void)
{
    static const struct {
        const char *json, *name;
    } cases[] = {
        {"{\"class_name\": \"GlorotUniform\", \"config\": {\"seed\": 3}}", "glorot_uniform"},
        {"{\"class_name\": \"RandomUniform\", \"config\": {\"minval\": -0.05, \"maxval\": 0.05}}", "random_uniform"},
        {"{\"class_name\": \"Orthogonal\", \"config\": {\"gain\": 1.0, \"seed\": null}}", "orthogonal"},
        {"\"lecun_uniform\"", "lecun_uniform"},
        /* Keras 2.2's VarianceScaling spellings of the named ones. */
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 1.0, \"mode\": \"fan_avg\", \"distribution\":"
         " \"uniform\", \"seed\": null}}", "glorot_uniform"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 1.0, \"mode\": \"fan_avg\", \"distribution\":"
         " \"normal\"}}", "glorot_normal"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 2.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"normal\"}}", "he_normal"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 2.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"truncated_normal\"}}", "he_normal"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 2.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"uniform\"}}", "he_uniform"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 1.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"normal\"}}", "lecun_normal"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 1.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"uniform\"}}", "lecun_uniform"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 1.0, \"mode\": \"fan_in\", \"distribution\":"
         " \"truncated_normal\"}}", "variance_scaling"},
        {"{\"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 0.5, \"mode\": \"fan_out\"}}",
         "variance_scaling"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *json = dense_with_initializer(cases[i].json);
        tw_model *model = must_load_json(json);
        assert_param(tw_model_layer_at(model, 0), "kernel_initializer", cases[i].name);
        tw_layer_unref(model);
        g_free(json);
    }
}

static void test_regularizers(void)
{
    tw_model *model = must_load_json(
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
        DENSE("a", 2, ", \"kernel_regularizer\": {\"class_name\": \"L1L2\", \"config\": {\"l1\": 0.0, \"l2\": 0.01}},"
                      " \"bias_regularizer\": {\"class_name\": \"L2\", \"config\": {\"l2\": 0.5}}")
        ", " DENSE("b", 2, ", \"kernel_regularizer\": {\"class_name\": \"L1\", \"config\": {}},"
                           " \"bias_regularizer\": null") "]}}");
    assert_param(tw_model_layer_at(model, 0), "kernel_regularizer", "l1=0,l2=0.01");
    assert_param(tw_model_layer_at(model, 0), "bias_regularizer", "l1=0,l2=0.5");
    assert_param(tw_model_layer_at(model, 1), "kernel_regularizer", "l1=0.01,l2=0");
    assert_param(tw_model_layer_at(model, 1), "bias_regularizer", "none");
    tw_layer_unref(model);
}

static void test_stale_input_shape_ignored(void)
{
    /* As in the corpus' stacked LSTM: a later layer's batch_input_shape
     * is stale and Keras ignores it; so do we. */
    tw_model *model = must_load_json("{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                                     DENSE("a", 4, ", \"batch_input_shape\": [null, 3]")
                                     ", " DENSE("b", 2, ", \"batch_input_shape\": [null, 99]") "]}}");
    assert_counts(model, 3 * 4 + 4 + 4 * 2 + 2, 26, 0);
    g_assert_null(tw_layer_input_shape(tw_model_layer_at(model, 1)));
    tw_layer_unref(model);
}

/* ---- messages ------------------------------------------------------------------ */

#define MODEL(layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": [" layers "]}}"

static void assert_fails(const char *json, const char *expected)
{
    tw_error_clear();
    tw_model *model = from_json(json);
    if (model)
        g_error("expected failure \"%s\" for %s", expected, json);
    g_assert_cmpstr(tw_last_error(), ==, expected);
}

static void test_messages(void)
{
    /* A class no layer has opens holding its place, and cannot run. */
    tw_model *foo = from_json(MODEL(DENSE("a", 2, "") ", " DENSE("b", 2, "") ", " DENSE("c", 2, "")
                                    ", {\"class_name\": \"Foo\", \"config\": {}}"));
    g_assert_nonnull(foo);
    g_assert_cmpint(tw_layer_check_runnable(foo), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "UserLayer 'user_layer': its class \"Foo\" is not a Keras layer Tensor Workbench implements (a "
                    "user-defined class's Python code cannot run here); the model can be summarized but not run or "
                    "trained");
    tw_error_clear();
    tw_layer_unref(foo);
    assert_fails(MODEL(DENSE("a", 2, "") ", " DENSE("b", 2, ", \"activation\": \"swoosh\"")),
                 "layers[1].config.activation: expected one of linear, relu, sigmoid, tanh, softmax, gelu, "
                 "leaky_relu, elu, selu, swish, silu, softplus, hard_sigmoid, exponential; got \"swoosh\"");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": \"abc\"}}"),
                 "layers[0].config.units: expected a positive integer, got \"abc\"");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 0}}"),
                 "layers[0].config.units: expected a positive integer, got 0");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": [1, [2]]}}"),
                 "layers[0].config.units[1]: expected a number, got an array");
    assert_fails(MODEL("{\"class_name\": \"Dense\"}"), "layers[0]: missing \"config\"");
    assert_fails(MODEL("{\"config\": {}}"), "layers[0]: missing \"class_name\"");
    assert_fails(MODEL("{\"class_name\": 3, \"config\": {}}"), "layers[0].class_name: expected a string, got a number");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": [1]}"),
                 "layers[0].config: expected an object, got an array");
    assert_fails(MODEL("7"), "layers[0]: expected a layer {\"class_name\": ..., \"config\": ...}, got a number");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"name\": \"a/b\"}}"),
                 "layers[0].config.name: Dense: a layer name must be 1 to 63 characters without '/', got \"a/b\"");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"trainable\": \"yes\"}}"),
                 "layers[0].config.trainable: expected true or false, got a string");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"kernel_regularizer\": {\"class_name\": \"Orth\"}}}"),
                 "layers[0].config.kernel_regularizer: unsupported regularizer \"Orth\" (there are L1L2, L1 and L2)");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"kernel_initializer\": {\"class_name\": \"Identity\"}}}"),
                 "layers[0].config.kernel_initializer: expected one of glorot_uniform, glorot_normal, he_uniform, "
                 "he_normal, lecun_uniform, lecun_normal, zeros, ones, random_normal, random_uniform, "
                 "truncated_normal, orthogonal, variance_scaling; got \"identity\"");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"kernel_constraint\": {\"class_name\": \"MaxNorm\"}}}"),
                 "layers[0].config.kernel_constraint: weight constraints are not supported (expected null)");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"batch_input_shape\": [null, 1, 2, 3, 4, 5, 6, 7, 8, 9]}}"),
                 "layers[0].config.batch_input_shape: expected 1 to 8 dimensions, got 10");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"batch_input_shape\": [null, 2.5]}}"),
                 "layers[0].config.batch_input_shape[1]: expected a size or null, got a number");
    assert_fails(MODEL("{\"class_name\": \"Sequential\", \"config\": {\"name\": \"n\", \"layers\": ["
                       DENSE("x", 2, ", \"use_bias\": 3") "]}}"),
                 "layers[0].config.layers[0].config.use_bias: expected true or false, got 3");
    assert_fails("{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\"}}", "config: missing \"layers\"");
    assert_fails("{\"class_name\": \"Sequential\"}", "missing \"config\"");
    assert_fails("{\"class_name\": \"Functional\", \"config\": {}}", "config: missing \"layers\"");
    assert_fails("{\"class_name\": \"MyModel\", \"config\": {}}",
                 "class_name: only Sequential and Functional models can be read, got \"MyModel\"");
    assert_fails("[1, 2]", "expected a Keras model {\"class_name\": \"Sequential\", \"config\": ...}, got an array");
    assert_fails("not json", "1:3: Parse error: unexpected identifier `not', expected value");
    assert_fails("{\"class_name\": \"Sequential\",\n \"config\": {\"layers\": [",
                 "2:23: Parse error: unexpected end of file, expected character `]'");
    assert_fails("", "the text is empty; expected a Keras model's JSON");
}

/* Values are reported as the file writes them: json-glib reads 2^64 as -1
 * and 1e400 as inf, and a boolean is not a string. */
static void test_values_as_written(void)
{
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 18446744073709551616}}"),
                 "1:109: 18446744073709551616 does not fit in 64 bits");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": -9223372036854775809}}"),
                 "1:109: -9223372036854775809 does not fit in 64 bits");
    assert_fails(MODEL("{\"class_name\": \"Dropout\", \"config\": {\"rate\": 1e400}}"),
                 "1:110: 1e400 is too large for a double");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 0x10}}"),
                 "1:109: 0x10 is not a number as JSON writes them (such as 12, -0.5 or 1e-3)");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 0777}}"),
                 "1:109: 0777 is not a number as JSON writes them (such as 12, -0.5 or 1e-3)");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": true}}"),
                 "layers[0].config.units: expected a positive integer, got true");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": null}}"),
                 "layers[0].config.units: a value is required here, got null");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 2.5}}"),
                 "layers[0].config.units: expected a positive integer, got 2.5");
    assert_fails(MODEL("{\"class_name\": \"Dropout\", \"config\": {\"rate\": 1.1}}"),
                 "layers[0].config.rate: expected a number from 0 to 1, got 1.1");
    /* Over a limit of 1e9 or more: the limit is said (it was left out). */
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 4294967296}}"),
                 "layers[0].config.units: expected an integer from 1 to 1000000000, got 4294967296");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 9223372036854775807}}"),
                 "layers[0].config.units: expected an integer from 1 to 1000000000, got 9223372036854775807");
    assert_fails(MODEL("{\"class_name\": \"Reshape\", \"config\": {\"target_shape\": [4294967296, 2]}}"),
                 "layers[0].config.target_shape: expected an integer from -1 to 1000000000, got 4294967296");
    assert_fails(MODEL("{\"class_name\": \"LeakyReLU\", \"config\": {\"alpha\": 5000000000}}"),
                 "layers[0].config.alpha: expected a number from 0 to 1e+09, got 5000000000");
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"activation\": false}}"),
                 "layers[0].config.activation: expected one of linear, relu, sigmoid, tanh, softmax, gelu, "
                 "leaky_relu, elu, selu, swish, silu, softplus, hard_sigmoid, exponential; got false");
    /* Strings keep their quotes; numbers inside strings are text. */
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"name\": \"0x10\", \"units\": \"true\"}}"),
                 "layers[0].config.units: expected a positive integer, got \"true\"");
    /* The largest whole numbers and small doubles still read. */
    tw_model *model = must_load_json(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 3, "
                                           "\"kernel_regularizer\": {\"class_name\": \"L2\", \"config\": {\"l2\": 1e-300}}, "
                                           "\"seed\": 9223372036854775807, \"x\": -9223372036854775808}}"));
    tw_layer_unref(model);
}

/* Escapes as JSON has them: json-glib also reads \777 (the byte 0xff),
 * \x41 (as x41), \q, \0 and lone surrogates, giving names that are not
 * UTF-8 or not what the file says, which the writer then wrote and could
 * not read back (found by fuzz_keras_functional). */
static void test_escapes_as_json(void)
{
    static const struct {
        const char *escape, *shown;
        int skip; /* the valid escapes before the bad one (chars) */
    } refused[] = {
        {"\\777", "\\7", 0},   {"\\x41", "\\x", 0},         {"\\q", "\\q", 0},         {"\\0", "\\0", 0},
        {"\\ud800x", "\\ud800", 0}, {"\\udc00", "\\udc00", 0}, {"\\u12\"", "\\u12", 0}, {"\\\\\\7", "\\7", 2},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        char *json = g_strdup_printf(MODEL("{\"class_name\": \"Dense\", \"config\": {\"name\": \"layer%s\", \"units\": 2}}"),
                                     refused[i].escape);
        int column = (int)(strchr(json, '\\') - json) + 1 + refused[i].skip;
        char *expected = g_strdup_printf("1:%d: %s is not an escape JSON has (\\\" \\\\ \\/ \\b \\f \\n \\r \\t, or "
                                         "\\u and four hex digits, a high surrogate followed by a low one)",
                                         column, refused[i].shown);
        assert_fails(json, expected);
        g_free(expected);
        g_free(json);
    }
    tw_model *model = must_load_json(MODEL("{\"class_name\": \"Dense\", \"config\": {\"name\": "
                                           "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\", \"units\": 2}}"));
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 0)), ==, "a\"\\\b\f\n\r\t\u00e9\U0001F600");
    tw_layer_unref(model);
    assert_fails(MODEL("{\"class_name\": \"Dense\", \"config\": {\"units\": 2, \"activation\": \"\\/relu\"}}"),
                 "layers[0].config.activation: expected one of linear, relu, sigmoid, tanh, softmax, gelu, "
                 "leaky_relu, elu, selu, swish, silu, softplus, hard_sigmoid, exponential; got \"/relu\"");
}

/* Nesting too deep for json-glib's recursive parser is refused up front,
 * also behind the quotes and comments json-glib reads beyond JSON. */
static void test_deep_nesting(void)
{
    const char *heads[] = {"", "['\"', ", "[/* \" */ ", "[\"\\\"\", "};
    size_t depth = 100000;
    for (size_t h = 0; h < G_N_ELEMENTS(heads); h++) {
        size_t head = strlen(heads[h]);
        char *json = g_malloc(head + 2 * depth);
        memcpy(json, heads[h], head);
        memset(json + head, '[', depth);
        memset(json + head + depth, ']', depth);
        tw_model *model = tw_model_from_json(json, head + 2 * depth, "deep.json");
        g_assert_null(model);
        char *expected = g_strdup_printf("deep.json: JSON nested deeper than 512 levels (at byte %zu)",
                                         head ? head + 511 : 512);
        g_assert_cmpstr(tw_last_error(), ==, expected);
        g_free(expected);
        g_free(json);
    }
    /* A model nested 100 deep (about 300 levels) reads. */
    GString *json = g_string_new(NULL);
    for (int i = 0; i < 100; i++)
        g_string_append(json, "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [");
    g_string_append(json, "{\"class_name\": \"Dense\", \"config\": {\"units\": 2}}");
    for (int i = 0; i < 100; i++)
        g_string_append(json, "]}}");
    tw_model *model = tw_model_from_json(json->str, json->len, "nested.json");
    g_assert_nonnull(model);
    tw_layer_unref(model);
    g_string_free(json, TRUE);
}

static void test_file_messages(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "model.json", NULL);
    const char *bad_units = MODEL(DENSE("a", 2, "") ", " DENSE("b", 2, "") ", " DENSE("c", 2, "")
                                  ", {\"class_name\": \"Dense\", \"config\": {\"units\": \"abc\"}}");
    g_assert_true(g_file_set_contents(path, bad_units, -1, NULL));
    g_assert_null(tw_model_load(path));
    char *expected = g_strdup_printf("%s: layers[3].config.units: expected a positive integer, got \"abc\"", path);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    g_free(expected);

    /* A file cut short: json-glib's line and column after the name. */
    g_assert_true(g_file_set_contents(path, bad_units, 40, NULL));
    g_assert_null(tw_model_load(path));
    expected = g_strdup_printf("%s:1:40: Parse error: ", path);
    g_assert_true(g_str_has_prefix(tw_last_error(), expected));
    g_free(expected);

    g_remove(path);
    g_assert_null(tw_model_load(path));
    g_assert_true(g_str_has_prefix(tw_last_error(), path));

    /* Devices and pipes are refused before they are read (/dev/zero never
     * ends; opening a FIFO with no writer would wait forever). */
    g_assert_null(tw_model_load("/dev/zero"));
    g_assert_cmpstr(tw_last_error(), ==,
                    "/dev/zero: is not a regular file (a device, pipe or socket); only files can be read");
    g_assert_cmpint(mkfifo(path, 0600), ==, 0);
    g_assert_null(tw_model_load(path));
    expected = g_strdup_printf("%s: is not a regular file (a device, pipe or socket); only files can be read", path);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    g_free(expected);
    g_remove(path);
    /* A file larger than any model file (sparse: no disk used). */
    FILE *big = fopen(path, "w");
    g_assert_nonnull(big);
    g_assert_cmpint(ftruncate(fileno(big), (off_t)65 << 20), ==, 0);
    fclose(big);
    g_assert_null(tw_model_load(path));
    expected = g_strdup_printf("%s: the file is 68157440 bytes, more than the 67108864 bytes this kind of file may "
                               "hold",
                               path);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    g_free(expected);
    g_remove(path);
    g_free(path);
    remove_dir(dir);
}

/* ---- writing ------------------------------------------------------------------- */

static tw_layer *dense(const char *units, const char *activation)
{
    tw_layer *layer = tw_layer_new("Dense", NULL);
    g_assert_cmpint(tw_layer_set(layer, "units", units), ==, 0);
    g_assert_cmpint(tw_layer_set(layer, "activation", activation), ==, 0);
    return layer;
}

/* A model with a bit of everything: an InputLayer, parameters away from
 * their defaults, a regularizer, a frozen layer, a nested model. */
static tw_model *sample_model(void)
{
    tw_model *model = tw_sequential_new("sample");
    tw_layer *input = tw_layer_new("InputLayer", NULL);
    g_assert_cmpint(tw_layer_set_input_shape(input, &(tw_shape){2, {-1, 5}}), ==, 0);
    tw_model_add(model, input);
    tw_layer *d1 = dense("16", "relu");
    g_assert_cmpint(tw_layer_set(d1, "kernel_regularizer", "l1=0.001,l2=0.01"), ==, 0);
    g_assert_cmpint(tw_layer_set(d1, "kernel_initializer", "he_normal"), ==, 0);
    tw_model_add(model, d1);
    tw_model *trunk = tw_sequential_new("trunk");
    tw_layer *frozen = dense("8", "tanh");
    tw_layer_set_trainable(frozen, false);
    g_assert_cmpint(tw_layer_set(frozen, "use_bias", "false"), ==, 0);
    tw_model_add(trunk, frozen);
    tw_layer *d2 = dense("4", "linear");
    g_assert_cmpint(tw_layer_set(d2, "bias_initializer", "random_normal"), ==, 0);
    tw_model_add(trunk, d2);
    tw_model_add(model, trunk);
    tw_model_add(model, dense("3", "softmax"));
    return model;
}

/* Same classes, names, trainable flags, input shapes and parameters. */
static void assert_same_config(const tw_layer *a, const tw_layer *b)
{
    const tw_layer_class *klass = tw_layer_class_of(a);
    g_assert_true(klass == tw_layer_class_of(b));
    g_assert_cmpstr(tw_layer_name(a), ==, tw_layer_name(b));
    g_assert_cmpint(tw_layer_trainable(a), ==, tw_layer_trainable(b));
    const tw_shape *sa = tw_layer_input_shape(a), *sb = tw_layer_input_shape(b);
    g_assert_cmpint(sa ? sa->ndim : 0, ==, sb ? sb->ndim : 0);
    for (int i = 0; sa && i < sa->ndim; i++)
        g_assert_cmpint(sa->dims[i], ==, sb->dims[i]);
    for (int i = 0; i < klass->nparams; i++) {
        char *ta = get_text(a, klass->params[i].key), *tb = get_text(b, klass->params[i].key);
        g_assert_cmpstr(ta, ==, tb);
        free(ta);
        free(tb);
    }
    if (tw_layer_is_model(a)) {
        g_assert_cmpint(tw_model_nlayers(a), ==, tw_model_nlayers(b));
        for (int i = 0; i < tw_model_nlayers(a); i++)
            assert_same_config(tw_model_layer_at(a, i), tw_model_layer_at(b, i));
    }
}

static void test_round_trip(void)
{
    tw_model *model = sample_model();
    char *json = tw_model_to_json(model);
    g_assert_nonnull(json);
    tw_model *back = must_load_json(json);
    assert_same_config(model, back);
    int64_t t, tr, nt;
    g_assert_cmpint(tw_model_count_params(model, &t, &tr, &nt), ==, 0);
    assert_counts(back, t, tr, nt);
    g_assert_cmpint(nt, ==, 16 * 8);
    char *again = tw_model_to_json(back);
    g_assert_cmpstr(again, ==, json);
    free(again);
    free(json);
    tw_layer_unref(back);
    tw_layer_unref(model);
}

/* Keras' JSON types: ints as ints, floats with a point, tuples as lists,
 * initializers and regularizers as serialized objects. */
static void test_json_types(void)
{
    tw_model *model = sample_model();
    char *json = tw_model_to_json(model);
    g_assert_true(g_str_has_prefix(json, "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"sample\", "
                                         "\"layers\": [{\"class_name\": \"InputLayer\", \"config\": {\"name\": "
                                         "\"input\", \"batch_input_shape\": [null, 5], \"dtype\": \"float32\"}}, "
                                         "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", "
                                         "\"trainable\": true, \"dtype\": \"float32\", \"units\": 16, "
                                         "\"activation\": \"relu\", \"use_bias\": true, "
                                         "\"kernel_initializer\": {\"class_name\": \"HeNormal\", \"config\": "
                                         "{\"seed\": null}}, \"bias_initializer\": {\"class_name\": \"Zeros\", "
                                         "\"config\": {}}, \"kernel_regularizer\": {\"class_name\": \"L1L2\", "
                                         "\"config\": {\"l1\": 0.001, \"l2\": 0.01}}, \"bias_regularizer\": null"));
    g_assert_nonnull(strstr(json, "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"trunk\", \"layers\": "
                                  "[{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"trainable\": "
                                  "false,"));
    g_assert_nonnull(strstr(json, "\"bias_initializer\": {\"class_name\": \"RandomNormal\", \"config\": "
                                  "{\"mean\": 0.0, \"stddev\": 0.05, \"seed\": null}}"));
    g_assert_true(g_str_has_suffix(json, "]}, \"keras_version\": \"2.15.0\", \"backend\": \"tensorflow\"}"));
    /* Only the first layer carries the input shape. */
    g_assert_null(strstr(strstr(json, "batch_input_shape") + 1, "batch_input_shape"));
    free(json);
    tw_layer_unref(model);

    /* Floats keep a point even when whole; names are escaped. */
    model = must_load_json(MODEL("{\"class_name\": \"Dense\", \"config\": {\"name\": \"q\\\"uote\", "
                                 "\"kernel_regularizer\": {\"class_name\": \"L2\", \"config\": {\"l2\": 1}}}}"));
    json = tw_model_to_json(model);
    g_assert_nonnull(strstr(json, "\"name\": \"q\\\"uote\""));
    g_assert_nonnull(strstr(json, "{\"l1\": 0.0, \"l2\": 1.0}"));
    tw_model *back = must_load_json(json);
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(back, 0)), ==, "q\"uote");
    tw_layer_unref(back);
    free(json);
    tw_layer_unref(model);

    g_assert_null(tw_model_to_json(NULL));
    tw_layer *plain = dense("2", "linear");
    g_assert_null(tw_model_to_json(plain));
    g_assert_cmpstr(tw_last_error(), ==, "model to_json: the layer is not a model");
    tw_layer_unref(plain);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static void test_save_and_load(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "model.json", NULL);
    tw_model *model = sample_model();
    g_assert_cmpint(tw_model_save(model, path), ==, 0);
    tw_model *loaded = tw_model_load(path);
    g_assert_nonnull(loaded);
    assert_same_config(model, loaded);

    /* Saving over an existing file replaces it and leaves nothing else. */
    tw_layer_set_name(loaded, "renamed");
    g_assert_cmpint(tw_model_save(loaded, path), ==, 0);
    char *text = read_text(path), *expected = tw_model_to_json(loaded);
    g_assert_cmpstr(text, ==, expected);
    char *listing = dir_listing(dir);
    g_assert_cmpstr(listing, ==, "model.json");
    g_free(listing);
    g_free(text);
    free(expected);
    tw_layer_unref(loaded);
    tw_layer_unref(model);
    g_free(path);
    remove_dir(dir);
}

static void test_save_failures(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "model.json", NULL);
    tw_model *small = must_load_json(MODEL(DENSE("a", 2, ", \"batch_input_shape\": [null, 3]")));
    g_assert_cmpint(tw_model_save(small, path), ==, 0);
    char *old = read_text(path);

    /* A write that fails halfway (the file size limit): the old file stays
     * whole and the temporary file is gone. */
    tw_model *big = sample_model();
    struct rlimit saved;
    g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit tiny = {64, saved.rlim_max};
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &tiny), ==, 0);
    int rc = tw_model_save(big, path);
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    signal(SIGXFSZ, handler);
    g_assert_cmpint(rc, ==, -1);
    g_assert_true(g_str_has_prefix(tw_last_error(), path));
    char *now = read_text(path);
    g_assert_cmpstr(now, ==, old);
    char *listing = dir_listing(dir);
    g_assert_cmpstr(listing, ==, "model.json");

    /* A directory that does not exist. */
    char *missing = g_build_filename(dir, "no", "such", "model.json", NULL);
    g_assert_cmpint(tw_model_save(small, missing), ==, -1);
    g_assert_true(g_str_has_prefix(tw_last_error(), missing));
    g_assert_cmpint(tw_model_save(small, NULL), ==, -1);

    g_free(missing);
    g_free(listing);
    g_free(now);
    g_free(old);
    tw_layer_unref(big);
    tw_layer_unref(small);
    g_free(path);
    remove_dir(dir);
}

/* The keys of the config of the only layer of a model's JSON, in order. */
static char *layer_config_keys(const char *json)
{
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *top = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "config");
    JsonObject *layer = json_array_get_object_element(json_object_get_array_member(top, "layers"), 0);
    GList *members = json_object_get_members(json_object_get_object_member(layer, "config"));
    GString *keys = g_string_new(NULL);
    for (GList *m = members; m; m = m->next)
        g_string_append_printf(keys, "%s%s", keys->len ? " " : "", (const char *)m->data);
    g_list_free(members);
    g_object_unref(parser);
    return g_string_free(keys, FALSE);
}

/* The Keras 2 form (stamped 2.15.0) holds only the keys Keras 2.15's
 * constructor of each layer takes, which refuses any other; the Keras 3
 * form keeps Keras 3's. */
static void test_keras2_keys(void)
{
    static const struct {
        const char *class_name, *keras2, *keras3;
    } cases[] = {
        {"Cropping1D", "cropping", "cropping data_format"},
        {"ZeroPadding1D", "padding", "padding data_format"},
        {"CenterCrop", "height width", "height width data_format"},
        {"RandomFlip", "mode seed", "mode seed data_format"},
        {"RandomRotation", "factor fill_mode interpolation seed fill_value",
         "factor fill_mode interpolation seed fill_value data_format"},
        {"RandomZoom", "height_factor width_factor fill_mode interpolation seed fill_value",
         "height_factor width_factor fill_mode interpolation seed fill_value data_format"},
        {"RandomTranslation", "height_factor width_factor fill_mode interpolation seed fill_value",
         "height_factor width_factor fill_mode interpolation seed fill_value data_format"},
        {"RandomContrast", "factor seed", "factor seed value_range data_format"},
        {"Resizing", "height width interpolation crop_to_aspect_ratio",
         "height width interpolation crop_to_aspect_ratio pad_to_aspect_ratio fill_mode fill_value antialias "
         "data_format"},
        /* Keras 2 has data_format where these take it. */
        {"Cropping2D", "cropping data_format", "cropping data_format"},
        {"SpatialDropout2D", "rate data_format seed", "rate data_format seed"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_model *model = tw_sequential_new("m");
        g_assert_cmpint(tw_model_add(model, tw_layer_new(cases[i].class_name, "l")), ==, 0);
        for (int form = 0; form < 2; form++) {
            char *json = tw_model_to_json_format(model, form ? TW_KERAS_JSON_3 : TW_KERAS_JSON_2);
            g_assert_nonnull(json);
            char *keys = layer_config_keys(json);
            char *expected = g_strdup_printf("name trainable dtype %s", form ? cases[i].keras3 : cases[i].keras2);
            if (strcmp(keys, expected))
                g_error("%s, Keras %d form: config keys \"%s\", expected \"%s\"", cases[i].class_name, form + 2,
                        keys, expected);
            g_free(expected);
            g_free(keys);
            free(json);
        }
        tw_layer_unref(model);
    }
}

/* BatchNormalization's one axis is written as an int, in both forms, as
 * Keras 2 before a build and Keras 3 write it: Keras 3 takes int(axis),
 * which refuses a list, and TensorFlow.js' loader reads [-1] as no axis
 * (tests/test_keras_loader.c). Several axes (Keras 2 only) stay a list;
 * each form reads back to the same axes. */
static void test_batchnorm_axis_int(void)
{
    static const struct {
        const char *in, *written, *text;
    } cases[] = {
        {"-1", "\"axis\": -1, ", "-1"},
        {"[-1]", "\"axis\": -1, ", "-1"},
        {"[3]", "\"axis\": 3, ", "3"},
        {"[1, 2]", "\"axis\": [1, 2], ", "1,2"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *json = g_strdup_printf(MODEL("{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"in\", "
                                           "\"batch_input_shape\": [null, 4, 4, 3]}}, "
                                           "{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": "
                                           "\"bn\", \"axis\": %s}}"),
                                     cases[i].in);
        tw_model *model = must_load_json(json);
        for (int form = 0; form < 2; form++) {
            char *written = tw_model_to_json_format(model, form ? TW_KERAS_JSON_3 : TW_KERAS_JSON_2);
            if (!strstr(written, cases[i].written))
                g_error("axis %s, Keras %d form: no %s in %s", cases[i].in, form + 2, cases[i].written, written);
            tw_model *back = must_load_json(written);
            assert_param(tw_model_layer_at(back, 1), "axis", cases[i].text);
            tw_layer_unref(back);
            free(written);
        }
        tw_layer_unref(model);
        g_free(json);
    }
}

/* A Functional model calling a nested Sequential twice and a nested
 * Functional once, each entry (and the file) carrying extra keys beside
 * "class_name" and "config" as the designer writes its box positions
 * there; ours is the form without them. */
#define NESTED_FUNCTIONAL(EXTRA)                                                                                    \
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"top\", \"layers\": ["                                \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"in\"},"            \
    " \"name\": \"in\", \"inbound_nodes\": []},"                                                                    \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"enc\", \"layers\": ["                                \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"enc_in\"}},"       \
    DENSE("e1", 4, ", \"kernel_regularizer\": {\"class_name\": \"L1L2\", \"config\": {\"l1\": 0.2, \"l2\": 1.0}}")  \
    "]}" EXTRA ", \"name\": \"enc\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]], [[\"e_again\", 0, 0, {}]]]},"        \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"e_again\", \"units\": 4}, \"name\": \"e_again\","          \
    " \"inbound_nodes\": [[[\"enc\", 1, 0, {}]]]},"                                                                 \
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"head\", \"layers\": ["                              \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"h_in\"},"          \
    " \"name\": \"h_in\", \"inbound_nodes\": []},"                                                                  \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"h1\", \"units\": 2}, \"name\": \"h1\","                   \
    " \"inbound_nodes\": [[[\"h_in\", 0, 0, {}]]]}],"                                                               \
    " \"input_layers\": [[\"h_in\", 0, 0]], \"output_layers\": [[\"h1\", 0, 0]]}" EXTRA ", \"name\": \"head\","     \
    " \"inbound_nodes\": [[[\"enc\", 2, 0, {}]]]}],"                                                                \
    " \"input_layers\": [[\"in\", 0, 0]], \"output_layers\": [[\"head\", 1, 0]]}" EXTRA "}"

#define DESIGNER_KEY ", \"twb_designer\": {\"positions\": {\"e1\": [[40.5, 60.0]], \"h1\": [[1, 2]]}}"

/* Extra keys beside a nested model's "class_name" and "config" (where
 * the designer keeps the positions of boxes inside it, and where Keras'
 * deserialize_keras_object ignores them, as at the top of the file) are
 * read past: the model is the one without them. */
static void test_extra_keys_ignored(void)
{
    tw_model *plain = must_load_json(NESTED_FUNCTIONAL(""));
    tw_model *marked = must_load_json(NESTED_FUNCTIONAL(DESIGNER_KEY));
    char *a = tw_model_to_json(plain), *b = tw_model_to_json(marked);
    g_assert_cmpstr(a, ==, b);
    g_assert_null(strstr(b, "twb_designer"));
    free(a);
    free(b);
    tw_layer_unref(plain);
    tw_layer_unref(marked);
}

/* A model's JSON parsed and written again with tw_json_node_to_text is
 * the text the engine wrote, in both of Keras' forms: floats keep their
 * shortest text (0.2, 1.0), ints stay ints. The designer relies on it to
 * add its keys to a model's JSON and leave the rest as it was. */
static void test_node_text_round_trip(void)
{
    tw_model *models[] = {must_load_json(NESTED_FUNCTIONAL("")), sample_model()};
    for (size_t m = 0; m < G_N_ELEMENTS(models); m++) {
        for (int format = TW_KERAS_JSON_2; format <= TW_KERAS_JSON_3; format++) {
            char *json = tw_model_to_json_format(models[m], (tw_keras_json_format)format);
            JsonParser *parser = json_parser_new();
            g_assert_true(json_parser_load_from_data(parser, json, -1, NULL));
            char *again = tw_json_node_to_text(json_parser_get_root(parser));
            g_assert_cmpstr(again, ==, json);
            free(again);
            free(json);
            g_object_unref(parser);
        }
        tw_layer_unref(models[m]);
    }
    /* Floats as Python's repr writes them: an exponent only below 1e-4
     * or from 1e16 on. */
    const char *numbers = "{\"a\": 140.0, \"b\": 1e-05, \"c\": 1e+16, \"d\": 1000000000000000.0, \"e\": 0.0001, "
                          "\"f\": [2.5, 3, -7.0]}";
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, numbers, -1, NULL));
    char *again = tw_json_node_to_text(json_parser_get_root(parser));
    g_assert_cmpstr(again, ==, numbers);
    free(again);
    g_object_unref(parser);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    add_corpus_tests();
    g_test_add_func("/model_json/bare-list", test_bare_list);
    g_test_add_func("/model_json/nested-sequential", test_nested_sequential);
    g_test_add_func("/model_json/newer-keras-fields", test_newer_keras_fields);
    g_test_add_func("/model_json/initializers", test_initializers);
    g_test_add_func("/model_json/regularizers", test_regularizers);
    g_test_add_func("/model_json/stale-input-shape", test_stale_input_shape_ignored);
    g_test_add_func("/model_json/messages", test_messages);
    g_test_add_func("/model_json/values-as-written", test_values_as_written);
    g_test_add_func("/model_json/escapes-as-json", test_escapes_as_json);
    g_test_add_func("/model_json/deep-nesting", test_deep_nesting);
    g_test_add_func("/model_json/file-messages", test_file_messages);
    g_test_add_func("/model_json/round-trip", test_round_trip);
    g_test_add_func("/model_json/json-types", test_json_types);
    g_test_add_func("/model_json/save-and-load", test_save_and_load);
    g_test_add_func("/model_json/save-failures", test_save_failures);
    g_test_add_func("/model_json/keras2-keys", test_keras2_keys);
    g_test_add_func("/model_json/batchnorm-axis-int", test_batchnorm_axis_int);
    g_test_add_func("/model_json/extra-keys-ignored", test_extra_keys_ignored);
    g_test_add_func("/model_json/node-text-round-trip", test_node_text_round_trip);
    return g_test_run();
}
