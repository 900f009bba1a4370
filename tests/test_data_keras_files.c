/* .keras and Keras 2 .h5 model files (tw/keras_file.h): the config text
 * and every weight of the shared corpus' real files (the configs must equal
 * the corpus' .json byte for byte, the tensors what h5py reads), round
 * trips of Sequential models through .keras, .h5 and safetensors (read
 * back by us: identical; by h5py: the same tensors), weights-only files,
 * mismatches, and corrupt, truncated and oversized files refused by name.
 * The independent reader is Debian's python3-h5py under /usr/bin/python3;
 * its checks skip with a message when it is missing. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "hdf5_file.h"
#include "scratch_tree.h"
#include "twb_run.h"
#include "tw/engine.h"
#include "tw/keras_file.h"
#include "tw/model_file.h"

#define PYTHON "/usr/bin/python3"

/* dump: every dataset of an .h5 file (or a .keras archive's weights) as
 * "name<TAB>dtype<TAB>shape<TAB>sha256 of the little-endian bytes", in
 * HDF5's name order; make: a .keras and a .h5 file in Keras' layouts,
 * written by h5py and zipfile; otherwise: a full model file's
 * model_weights/ copied to a new file's root (what Keras' save_weights
 * writes). Exit 3: no h5py. */
static const char h5py_script[] =
    "import sys, io, zipfile, hashlib\n"
    "try:\n"
    "    import h5py, numpy as np\n"
    "except ImportError:\n"
    "    sys.exit(3)\n"
    "def open_h5(path):\n"
    "    if zipfile.is_zipfile(path):\n"
    "        return h5py.File(io.BytesIO(zipfile.ZipFile(path).read('model.weights.h5')), 'r')\n"
    "    return h5py.File(path, 'r')\n"
    "if sys.argv[1] == 'dump':\n"
    "    f = open_h5(sys.argv[2])\n"
    "    def visit(name, obj):\n"
    "        if isinstance(obj, h5py.Dataset):\n"
    "            a = np.array(obj[()], order='C')\n"
    "            a = a.astype(a.dtype.newbyteorder('<'))\n"
    "            print(name, a.dtype.name, ','.join(map(str, a.shape)), hashlib.sha256(a.tobytes()).hexdigest(), sep='\\t')\n"
    "    f.visititems(visit)\n"
    "elif sys.argv[1] == 'make':\n"
    "    # Keras' own layouts of a Sequential LSTM, BatchNormalization, Dense,\n"
    "    # weight number i (in Keras' order) holding arange(size) * 0.01 + i.\n"
    "    config = open(sys.argv[2]).read()\n"
    "    shapes = [('lstm', ['kernel', 'recurrent_kernel', 'bias'], [(3, 16), (4, 16), (16,)]),\n"
    "              ('batch_normalization', ['gamma', 'beta', 'moving_mean', 'moving_variance'], [(4,)] * 4),\n"
    "              ('dense', ['kernel', 'bias'], [(4, 2), (2,)])]\n"
    "    value = lambda i, s: np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) * 0.01 + i\n"
    "    w = io.BytesIO()\n"
    "    with h5py.File(w, 'w') as f:\n"
    "        f.create_group('vars')\n"
    "        i = 0\n"
    "        for layer, names, ss in shapes:\n"
    "            f.create_group('layers/' + layer + '/vars')\n"
    "            group = 'layers/lstm/cell/vars' if layer == 'lstm' else 'layers/' + layer + '/vars'\n"
    "            for k, s in enumerate(ss):\n"
    "                f.create_dataset(group + '/' + str(k), data=value(i, s)); i += 1\n"
    "    with zipfile.ZipFile(sys.argv[3] + '.keras', 'w') as z:\n"
    "        z.writestr('metadata.json', '{\"keras_version\": \"3.0.0\"}')\n"
    "        z.writestr('config.json', config)\n"
    "        z.writestr('model.weights.h5', w.getvalue())\n"
    "    with h5py.File(sys.argv[3] + '.h5', 'w') as f:\n"
    "        f.attrs['model_config'] = config\n"
    "        f.attrs['keras_version'] = '2.15.0'\n"
    "        f.attrs['backend'] = 'tensorflow'\n"
    "        g = f.create_group('model_weights')\n"
    "        g.attrs['layer_names'] = np.array([l.encode() for l, _, _ in shapes])\n"
    "        i = 0\n"
    "        for layer, names, ss in shapes:\n"
    "            cell = layer + '/lstm_cell/' if layer == 'lstm' else layer + '/'\n"
    "            lg = g.create_group(layer)\n"
    "            wn = [cell + n + ':0' for n in names]\n"
    "            lg.attrs['weight_names'] = np.array([n.encode() for n in wn])\n"
    "            for n, s in zip(wn, ss):\n"
    "                lg.create_dataset(n, data=value(i, s)); i += 1\n"
    "else:\n"
    "    src = h5py.File(sys.argv[2], 'r')['model_weights']\n"
    "    dst = h5py.File(sys.argv[3], 'w')\n"
    "    for k, v in src.attrs.items():\n"
    "        dst.attrs[k] = v\n"
    "    for k in src:\n"
    "        src.copy(src[k], dst, name=k)\n";

/* For g_ptr_array_sort, which passes pointers to the elements. */
static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *scratch_dir(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-keras-files-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static char *corpus_path(const char *corpus, const char *file)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", corpus, file, NULL);
}

static char *example_path(const char *file)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "examples", "models", file, NULL);
}

/* Runs the h5py script; NULL (the test skipped) when h5py is missing. */
static char *run_h5py(const char *command, const char *a, const char *b)
{
    if (!g_file_test(PYTHON, G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip(PYTHON " is missing (Debian's python3 and python3-h5py check the files)");
        return NULL;
    }
    char *dir = scratch_dir();
    char *script = g_build_filename(dir, "h5dump.py", NULL);
    g_assert_true(g_file_set_contents(script, h5py_script, -1, NULL));
    const char *argv[] = {PYTHON, script, command, a, b, NULL};
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_no_error(error);
    scratch_remove_tree(dir);
    g_free(script);
    g_free(dir);
    if (g_spawn_check_wait_status(status, NULL) == FALSE && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        g_test_skip("h5py is not installed (Debian's python3-h5py checks the files)");
        g_free(out);
        g_free(err);
        return NULL;
    }
    if (status != 0)
        g_error("h5py script failed: %s", err);
    g_free(err);
    return out;
}

/* One tensor as the h5py script prints it. */
static char *tensor_line(const char *name, tw_tensor *t)
{
    size_t bytes = (size_t)tw_tensor_numel(t) * tw_dtype_size(tw_tensor_dtype(t));
    void *buf = g_malloc(bytes ? bytes : 1);
    g_assert_cmpint(tw_tensor_copy_to(t, buf, bytes), ==, 0);
    char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, buf, bytes);
    GString *shape = g_string_new(NULL);
    for (int i = 0; i < tw_tensor_ndim(t); i++)
        g_string_append_printf(shape, "%s%lld", i ? "," : "", (long long)tw_tensor_shape(t)[i]);
    char *line = g_strdup_printf("%s\t%s\t%s\t%s", name, tw_dtype_name(tw_tensor_dtype(t)), shape->str, sum);
    g_string_free(shape, true);
    g_free(sum);
    g_free(buf);
    return line;
}

/* Two dumps equal, or the first line that differs. */
static void assert_same_dump(const char *ours, const char *theirs)
{
    char **a = g_strsplit(ours, "\n", -1), **b = g_strsplit(theirs, "\n", -1);
    for (int i = 0; a[i] || b[i]; i++)
        if (!a[i] || !b[i] || strcmp(a[i], b[i]))
            g_error("line %d: we read \"%s\", h5py \"%s\"", i + 1, a[i] ? a[i] : "(end)", b[i] ? b[i] : "(end)");
    g_strfreev(a);
    g_strfreev(b);
}

/* Our reader's datasets of a file, in the script's format. */
static char *our_dump(const char *path)
{
    tw_weight_list list;
    if (tw_model_file_weights(path, &list))
        g_error("%s", tw_last_error());
    GString *out = g_string_new(NULL);
    for (int i = 0; i < list.n; i++) {
        char *line = tensor_line(list.names[i], list.tensors[i]);
        g_string_append_printf(out, "%s\n", line);
        g_free(line);
    }
    tw_weight_list_clear(&list);
    return g_string_free(out, false);
}

static bool corpus_present(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_EXISTS))
        return true;
    char *message = g_strdup_printf("%s is absent (the corpus lives in the shared checkout)", path);
    g_test_skip(message);
    g_free(message);
    return false;
}

/* ---- the corpus' weight files ---------------------------------------------- */

typedef struct {
    const char *file;   /* the weight file */
    const char *config; /* the .json its config equals, or NULL (weights only) */
    int datasets;       /* how many datasets h5py lists */
} corpus_file;

static const corpus_file corpus_files[] = {
    {"02-two-tower-recommender-stringlookup.h5", NULL, 2},
    {"11-k3-transformer-mha-h5.h5", "11-k3-transformer-mha-h5.json", 116},
    {"12-k3-four-input-embedding-lstm.keras", "12-k3-four-input-embedding-lstm.json", 23},
    {"13-k3-conv-autoencoder-upsampling.keras", "13-k3-conv-autoencoder-upsampling.json", 32},
};

static void test_corpus_config(gconstpointer data)
{
    const corpus_file *c = data;
    char *path = corpus_path("keras-functional", c->file);
    if (!corpus_present(path)) {
        g_free(path);
        return;
    }
    size_t length = 0;
    char *config = tw_model_file_config(path, &length);
    if (!c->config) {
        g_assert_null(config);
        g_assert_nonnull(strstr(tw_last_error(), path));
        g_assert_nonnull(strstr(tw_last_error(), "holds weights only"));
        tw_error_clear();
    } else {
        g_assert_nonnull(config);
        char *json_path = corpus_path("keras-functional", c->config), *expected;
        gsize expected_length;
        g_assert_true(g_file_get_contents(json_path, &expected, &expected_length, NULL));
        g_assert_cmpuint(length, ==, expected_length);
        g_assert_true(memcmp(config, expected, length) == 0);
        g_free(expected);
        g_free(json_path);
    }
    free(config);
    g_free(path);
}

static void test_corpus_weights(gconstpointer data)
{
    const corpus_file *c = data;
    char *path = corpus_path("keras-functional", c->file);
    if (!corpus_present(path)) {
        g_free(path);
        return;
    }
    char *ours = our_dump(path);
    char *theirs = run_h5py("dump", path, NULL);
    if (theirs) {
        assert_same_dump(ours, theirs);
        char **lines = g_strsplit(g_strstrip(theirs), "\n", -1);
        g_assert_cmpint(g_strv_length(lines), ==, c->datasets);
        g_strfreev(lines);
    }
    g_free(theirs);
    g_free(ours);
    g_free(path);
}

/* ---- round trips ----------------------------------------------------------- */

typedef struct {
    GPtrArray *lines;
} weights_ctx;

static int weight_line(const char *path, tw_tensor *weight, bool trainable, void *data)
{
    (void)trainable;
    g_ptr_array_add(((weights_ctx *)data)->lines, tensor_line(path, weight));
    return 0;
}

/* The model's weights as "path dtype shape sha256" lines, in its order. */
static char *model_weights(tw_model *model)
{
    weights_ctx c = {g_ptr_array_new_with_free_func(g_free)};
    g_assert_cmpint(tw_layer_foreach_weight(model, weight_line, &c), ==, 0);
    g_ptr_array_add(c.lines, NULL);
    char *joined = g_strjoinv("\n", (char **)c.lines->pdata);
    g_ptr_array_unref(c.lines);
    return joined;
}

/* The multiset of "dtype shape sha256" of lines, sorted: what a file holds
 * whatever it names the tensors. */
static char *values_only(const char *lines)
{
    char **v = g_strsplit(lines, "\n", -1);
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (char **l = v; *l; l++) {
        const char *tab = strchr(*l, '\t');
        if (tab)
            g_ptr_array_add(out, g_strdup(tab + 1));
    }
    g_ptr_array_sort(out, compare_strings);
    g_ptr_array_add(out, NULL);
    char *joined = g_strjoinv("\n", (char **)out->pdata);
    g_ptr_array_unref(out);
    g_strfreev(v);
    return joined;
}

static void round_trip(const char *json_path)
{
    if (!corpus_present(json_path))
        return;
    char *dir = scratch_dir();
    tw_model *model = tw_model_open(json_path);
    g_assert_nonnull(model);
    g_assert_false(tw_model_open_had_weights());
    char *json = tw_model_to_json(model);
    const char *formats[] = {"model.keras", "model.h5", "model.safetensors"};
    char *keras = g_build_filename(dir, formats[0], NULL);
    /* Writing builds the model (fresh weights); everything after compares to them. */
    g_assert_cmpint(tw_model_write(model, keras, TW_MODEL_FORMAT_AUTO), ==, 0);
    char *weights = model_weights(model);
    for (int f = 0; f < 3; f++) {
        char *path = g_build_filename(dir, formats[f], NULL);
        if (f)
            g_assert_cmpint(tw_model_write(model, path, TW_MODEL_FORMAT_AUTO), ==, 0);
        tw_model *back = tw_model_open(path);
        if (!back)
            g_error("%s", tw_last_error());
        g_assert_true(tw_model_open_had_weights());
        char *back_json = tw_model_to_json(back), *back_weights = model_weights(back);
        g_assert_cmpstr(back_json, ==, json);
        g_assert_cmpstr(back_weights, ==, weights);
        if (f < 2) { /* HDF5 inside: h5py sees the same tensors as we do */
            char *ours = our_dump(path), *theirs = run_h5py("dump", path, NULL);
            if (theirs) {
                assert_same_dump(ours, theirs);
                char *a = values_only(theirs), *b = values_only(weights);
                g_assert_cmpstr(a, ==, b);
                g_free(a);
                g_free(b);
            }
            g_free(theirs);
            g_free(ours);
        }
        /* And again from what we read: the same bytes of config. */
        char *again = g_build_filename(dir, "again", NULL);
        char *again_path = g_strconcat(again, strrchr(formats[f], '.'), NULL);
        g_assert_cmpint(tw_model_write(back, again_path, TW_MODEL_FORMAT_AUTO), ==, 0);
        size_t n1, n2;
        char *c1 = tw_model_file_config(path, &n1), *c2 = tw_model_file_config(again_path, &n2);
        g_assert_nonnull(c1);
        g_assert_cmpstr(c1, ==, c2);
        free(c1);
        free(c2);
        g_free(again_path);
        g_free(again);
        free(back_json);
        g_free(back_weights);
        tw_layer_unref(back);
        g_free(path);
    }
    g_free(weights);
    free(json);
    g_free(keras);
    tw_layer_unref(model);
    scratch_remove_tree(dir);
    g_free(dir);
}

static void test_round_trip(gconstpointer data)
{
    round_trip(data);
}

/* A save_weights file (model_weights/ at the root, as h5py copies it) goes
 * into a model of the same architecture. */
static void test_weights_only(void)
{
    char *dir = scratch_dir();
    char *json = example_path("cnn_fashion_mnist.json");
    char *full = g_build_filename(dir, "full.h5", NULL), *only = g_build_filename(dir, "only.h5", NULL);
    tw_model *model = tw_model_open(json);
    g_assert_cmpint(tw_model_write(model, full, TW_MODEL_FORMAT_H5), ==, 0);
    char *done = run_h5py("weights-only", full, only);
    if (done) {
        tw_model *fresh = tw_model_open(json);
        g_assert_cmpint(tw_model_load_weights(fresh, only), ==, 0);
        char *a = model_weights(model), *b = model_weights(fresh);
        g_assert_cmpstr(a, ==, b);
        g_free(a);
        g_free(b);
        /* Opening it as a model says what it is. */
        g_assert_null(tw_model_open(only));
        g_assert_nonnull(strstr(tw_last_error(), "holds weights only"));
        tw_error_clear();
        tw_layer_unref(fresh);
    }
    g_free(done);
    tw_layer_unref(model);
    g_free(full);
    g_free(only);
    g_free(json);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* Files in Keras' layouts written by h5py (not by us) open with every
 * weight where Keras puts it: Keras 3's per-object paths with the LSTM's
 * cell, Keras 2's positional groups with TF's variable names. */
static const char lstm_bn_dense[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 5, 3], \"name\": \"x\"}},"
    "{\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\", \"units\": 4}},"
    "{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"batch_normalization\"}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 2}}]}}";

typedef struct {
    int index;
} expect_ctx;

/* Weight number i holds arange(n) * 0.01 + i (float32, as NumPy computes it). */
static int check_weight(const char *path, tw_tensor *weight, bool trainable, void *data)
{
    (void)trainable;
    expect_ctx *c = data;
    int64_t n = tw_tensor_numel(weight);
    float *v = g_new(float, n);
    g_assert_cmpint(tw_tensor_copy_to(weight, v, sizeof(float) * (size_t)n), ==, 0);
    for (int64_t j = 0; j < n; j++) {
        float expected = (float)j * 0.01f + (float)c->index;
        if (v[j] != expected)
            g_error("%s[%lld] = %g, expected %g (weight %d)", path, (long long)j, v[j], expected, c->index);
    }
    g_free(v);
    c->index++;
    return 0;
}

static void test_keras_written(void)
{
    char *dir = scratch_dir();
    char *config = g_build_filename(dir, "config.json", NULL), *base = g_build_filename(dir, "made", NULL);
    g_assert_true(g_file_set_contents(config, lstm_bn_dense, -1, NULL));
    char *done = run_h5py("make", config, base);
    for (int f = 0; done && f < 2; f++) {
        char *path = g_strconcat(base, f ? ".h5" : ".keras", NULL);
        tw_model *model = tw_model_open(path);
        if (!model)
            g_error("%s", tw_last_error());
        g_assert_true(tw_model_open_had_weights());
        expect_ctx c = {0};
        g_assert_cmpint(tw_layer_foreach_weight(model, check_weight, &c), ==, 0);
        g_assert_cmpint(c.index, ==, 9);
        tw_layer_unref(model);
        g_free(path);
    }
    g_free(done);
    g_free(base);
    g_free(config);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* ---- mismatches and bad files ---------------------------------------------- */

static const char *dense_json(int units)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
             "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 16], \"name\": \"in\"}},"
             "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": %d}}]}}",
             units);
    return buf;
}

static void test_mismatch(void)
{
    char *dir = scratch_dir();
    const char *names[] = {"model.h5", "model.keras"};
    for (int f = 0; f < 2; f++) {
        char *path = g_build_filename(dir, names[f], NULL);
        tw_model *two = tw_model_from_json(dense_json(2), strlen(dense_json(2)), NULL);
        g_assert_cmpint(tw_model_write(two, path, TW_MODEL_FORMAT_AUTO), ==, 0);
        tw_model *four = tw_model_from_json(dense_json(4), strlen(dense_json(4)), NULL);
        g_assert_cmpint(tw_model_load_weights(four, path), ==, -1);
        char *where = f ? g_strdup_printf("%s:model.weights.h5", path) : g_strdup(path);
        char *expected =
            g_strdup_printf("%s: layer 'dense_1' weight 'kernel': file has (16, 2), model has (16, 4)", where);
        g_free(where);
        g_assert_cmpstr(tw_last_error(), ==, expected);
        tw_error_clear();
        g_free(expected);
        tw_layer_unref(two);
        tw_layer_unref(four);
        g_free(path);
    }
    scratch_remove_tree(dir);
    g_free(dir);
}

/* Weights whose bytes spell "GCOL" (a global heap's signature) are data,
 * not a heap to check. */
static void test_gcol_in_weights(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "gcol.h5", NULL);
    tw_model *model = tw_model_from_json(dense_json(2), strlen(dense_json(2)), NULL);
    g_assert_cmpint(tw_model_build(model, NULL, 0), ==, 0);
    float *kernel = tw_tensor_data(tw_layer_weight(tw_model_layer_at(model, 1), 0));
    for (int i = 0; i < 32; i++)
        memcpy(&kernel[i], "GCOL", 4);
    g_assert_cmpint(tw_model_write(model, path, TW_MODEL_FORMAT_AUTO), ==, 0);
    tw_model *back = tw_model_open(path);
    if (!back)
        g_error("%s", tw_last_error());
    char *a = model_weights(model), *b = model_weights(back);
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
    tw_layer_unref(back);
    tw_layer_unref(model);
    g_free(path);
    scratch_remove_tree(dir);
    g_free(dir);
}

static uint8_t *file_bytes(const char *path, size_t *size)
{
    char *bytes;
    gsize n;
    g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
    *size = n;
    return (uint8_t *)bytes;
}

static void write_bytes(const char *path, const void *bytes, size_t size)
{
    g_assert_true(g_file_set_contents(path, bytes, (gssize)size, NULL));
}

/* The file is refused with its name in the message (and no crash). */
static void assert_refused(const char *path, const char *fragment)
{
    tw_model *model = tw_model_open(path);
    if (model)
        g_error("%s opened", path);
    const char *message = tw_last_error();
    if (!strstr(message, path) || (fragment && !strstr(message, fragment)))
        g_error("%s: unexpected message \"%s\" (expected \"%s\")", path, message, fragment ? fragment : "");
    g_test_message("%s", message);
    tw_error_clear();
}

static void test_bad_files(void)
{
    char *dir = scratch_dir();
    char *json = example_path("mlp_fashion_mnist.json");
    tw_model *model = tw_model_open(json);
    char *h5 = g_build_filename(dir, "model.h5", NULL), *keras = g_build_filename(dir, "model.keras", NULL);
    g_assert_cmpint(tw_model_write(model, h5, TW_MODEL_FORMAT_AUTO), ==, 0);
    g_assert_cmpint(tw_model_write(model, keras, TW_MODEL_FORMAT_AUTO), ==, 0);
    size_t h5_size, keras_size;
    uint8_t *h5_bytes = file_bytes(h5, &h5_size), *keras_bytes = file_bytes(keras, &keras_size);
    char *bad = g_build_filename(dir, "bad.h5", NULL), *bad_keras = g_build_filename(dir, "bad.keras", NULL);

    /* Truncated at several places: the signature alone, the superblock, half. */
    size_t cuts[] = {8, 100, h5_size / 2, h5_size - 1};
    for (size_t i = 0; i < G_N_ELEMENTS(cuts); i++) {
        write_bytes(bad, h5_bytes, cuts[i]);
        assert_refused(bad, NULL);
        write_bytes(bad_keras, keras_bytes, cuts[i] < keras_size ? cuts[i] : keras_size / 2);
        assert_refused(bad_keras, NULL);
    }
    /* Overwritten bytes past the superblock. */
    uint8_t *copy = g_memdup2(h5_bytes, h5_size);
    memset(copy + 64, 0xff, MIN(h5_size - 64, 4096));
    write_bytes(bad, copy, h5_size);
    assert_refused(bad, NULL);
    g_free(copy);
    /* A .keras whose weights member is damaged inside (CRC). */
    copy = g_memdup2(keras_bytes, keras_size);
    copy[keras_size - 400] ^= 0x55;
    write_bytes(bad_keras, copy, keras_size);
    assert_refused(bad_keras, NULL);
    g_free(copy);

    /* A damaged start, text and an empty file under each name: refused as
     * what the name promises, not as JSON with a syntax error. */
    uint8_t *start = g_memdup2(h5_bytes, h5_size);
    memcpy(start, "garbage!", 8);
    write_bytes(bad, start, h5_size);
    assert_refused(bad, "not a Keras .h5 file: no HDF5 signature at its start");
    write_bytes(bad_keras, (const uint8_t *)"not a zip\n", 10);
    assert_refused(bad_keras, "not a .keras file: no zip signature at its start");
    write_bytes(bad, start, 0);
    assert_refused(bad, "the file is empty (0 bytes); a .h5 file is HDF5");
    write_bytes(bad_keras, start, 0);
    assert_refused(bad_keras, "the file is empty (0 bytes); a .keras file is a zip archive");
    g_free(start);

    /* A zip with no config.json, and one whose config.json inflates past the cap. */
    zip_t *za = zip_open(bad_keras, ZIP_CREATE | ZIP_TRUNCATE, NULL);
    g_assert_nonnull(za);
    g_assert_cmpint(zip_file_add(za, "metadata.json", zip_source_buffer(za, "{}", 2, 0), 0), >=, 0);
    g_assert_cmpint(zip_close(za), ==, 0);
    assert_refused(bad_keras, "has no config.json");
    size_t big = ((size_t)64 << 20) + 1;
    char *zeros = g_malloc0(big);
    za = zip_open(bad_keras, ZIP_CREATE | ZIP_TRUNCATE, NULL);
    zip_int64_t index = zip_file_add(za, "config.json", zip_source_buffer(za, zeros, big, 0), 0);
    g_assert_cmpint(index, >=, 0);
    zip_set_file_compression(za, (zip_uint64_t)index, ZIP_CM_DEFLATE, 9);
    g_assert_cmpint(zip_close(za), ==, 0);
    g_free(zeros);
    assert_refused(bad_keras, "more than the");
    /* An HDF5 file that is not a Keras model. */
    hid_t empty = tw__h5_create_image("empty.h5");
    size_t empty_size;
    uint8_t *empty_bytes = tw__h5_image_bytes(empty, "empty.h5", &empty_size);
    g_assert_nonnull(empty_bytes);
    H5Fclose(empty);
    write_bytes(bad, empty_bytes, empty_size);
    free(empty_bytes);
    assert_refused(bad, "without Keras' model_config");

    g_free(h5_bytes);
    g_free(keras_bytes);
    g_free(bad);
    g_free(bad_keras);
    g_free(h5);
    g_free(keras);
    g_free(json);
    tw_layer_unref(model);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* ---- the command line ----------------------------------------------------- */

static twb_run twb_ok(const char *const *args)
{
    twb_run r = run_twb_argv(args);
    if (r.exit_status != 0)
        g_error("twb %s %s: exit %d: %s", args[0], args[1], r.exit_status, r.err);
    return r;
}

/* twb convert between every format, and summary, evaluate and trace on
 * .keras and .h5 files as on JSON. */
static void test_cli(void)
{
    if (!g_getenv("TWB")) {
        g_test_skip("TWB names no twb executable");
        return;
    }
    char *dir = scratch_dir();
    char *json = example_path("linear_regression.json");
    char *keras = g_build_filename(dir, "lr.keras", NULL), *h5 = g_build_filename(dir, "lr.h5", NULL);
    char *st = g_build_filename(dir, "lr.safetensors", NULL), *back = g_build_filename(dir, "back.json", NULL);
    char *graph = g_build_filename(dir, "lr.twbgraph", NULL);
    twb_run r = twb_ok((const char *[]){"convert", json, keras, NULL});
    g_assert_nonnull(strstr(r.out, "Keras 3 .keras, 2 parameters (freshly initialised: the input has no weights)"));
    twb_run_clear(&r);
    const char *chain[][2] = {{keras, h5}, {h5, st}, {st, back}};
    for (int i = 0; i < 3; i++) {
        r = twb_ok((const char *[]){"convert", chain[i][0], chain[i][1], NULL});
        twb_run_clear(&r);
    }
    /* The JSON that went around equals the JSON we write from the example. */
    tw_model *model = tw_model_open(json);
    char *expected = tw_model_to_json(model);
    size_t length;
    char *text = tw_model_file_config(back, &length);
    g_assert_cmpstr(g_strstrip(text), ==, expected);
    free(text);
    free(expected);
    tw_layer_unref(model);

    twb_run a = twb_ok((const char *[]){"summary", json, NULL});
    const char *files[] = {keras, h5};
    for (int i = 0; i < 2; i++) {
        r = twb_ok((const char *[]){"summary", files[i], NULL});
        g_assert_cmpstr(r.out, ==, a.out);
        twb_run_clear(&r);
    }
    twb_run_clear(&a);
    /* The same weights (the checkpoint holds the .h5's) evaluate the same. */
    a = twb_ok((const char *[]){"evaluate", keras, "--checkpoint", st, "--data", "linear", NULL});
    r = twb_ok((const char *[]){"evaluate", h5, "--checkpoint", st, "--data", "linear", NULL});
    g_assert_cmpstr(r.out, ==, a.out);
    twb_run_clear(&r);
    /* A .keras or .h5 carries its weights: no --checkpoint needed. */
    for (int i = 0; i < 2; i++) {
        r = twb_ok((const char *[]){"evaluate", files[i], "--data", "linear", NULL});
        g_assert_cmpstr(r.out, ==, a.out);
        twb_run_clear(&r);
    }
    twb_run_clear(&a);
    a = twb_ok((const char *[]){"predict", json, "--checkpoint", st, "--data", "linear", NULL});
    r = twb_ok((const char *[]){"predict", h5, "--data", "linear", NULL});
    g_assert_cmpstr(r.out, ==, a.out);
    twb_run_clear(&r);
    twb_run_clear(&a);
    r = run_twb_argv((const char *[]){"predict", json, "--data", "linear", NULL});
    g_assert_cmpint(r.exit_status, ==, 1);
    char *message = g_strdup_printf("twb predict: predict: %s carries no weights; name the trained weights with "
                                    "--checkpoint FILE or --weights FILE\n",
                                    json);
    g_assert_cmpstr(r.err, ==, message);
    g_free(message);
    twb_run_clear(&r);
    r = twb_ok((const char *[]){"trace", h5, "--batch", "4", "--output", graph, NULL});
    twb_run_clear(&r);

    /* Bad input: a file that is not a model, an unknown extension. */
    g_assert_true(g_file_set_contents(keras, "PK\x03\x04 not really", -1, NULL));
    r = run_twb_argv((const char *[]){"convert", keras, back, NULL});
    g_assert_cmpint(r.exit_status, ==, 1);
    g_assert_nonnull(strstr(r.err, keras));
    twb_run_clear(&r);
    r = run_twb_argv((const char *[]){"convert", json, "model.onnx", NULL});
    g_assert_cmpint(r.exit_status, ==, 2);
    g_assert_nonnull(strstr(r.err, "model.onnx: name the format by the extension"));
    twb_run_clear(&r);
    /* A model without an input shape is the input file's fault, whatever
     * file its weights were bound for (the output, or --weights). */
    char *noshape = g_build_filename(dir, "noshape.json", NULL);
    g_assert_true(g_file_set_contents(noshape,
                                      "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": "
                                      "[{\"class_name\": \"Dense\", \"config\": {\"units\": 1}}]}}",
                                      -1, NULL));
    const char *const noshape_runs[][6] = {{"convert", noshape, st, NULL},
                                           {"convert", noshape, back, "--weights", h5, NULL}};
    message = g_strdup_printf("twb convert: %s: the model declares no input shape (an InputLayer or "
                              "batch_input_shape on its first layer), so its weights cannot be placed\n",
                              noshape);
    for (int i = 0; i < 2; i++) {
        r = run_twb_argv(noshape_runs[i]);
        g_assert_cmpint(r.exit_status, ==, 1);
        g_assert_cmpstr(r.err, ==, message);
        twb_run_clear(&r);
    }
    g_free(message);
    g_free(noshape);

    g_free(graph);
    g_free(back);
    g_free(st);
    g_free(h5);
    g_free(keras);
    g_free(json);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* The first number after key in a JSON line ("\"loss\": 0.25"). */
static double json_number(const char *text, const char *key)
{
    char *quoted = g_strdup_printf("\"%s\": ", key);
    const char *at = strstr(text, quoted);
    if (!at)
        g_error("no %s in %s", quoted, text);
    double v = g_ascii_strtod(at + strlen(quoted), NULL);
    g_free(quoted);
    return v;
}

/* twb train, evaluate and predict --weights: a save_weights .h5 goes into
 * the architecture JSON (evaluate and predict then say what the full .h5
 * says; training at learning rate 0 keeps them); weights of another shape
 * are refused naming the layer and the weight; --weights with --checkpoint
 * is a usage error. */
static void test_cli_weights(void)
{
    if (!g_getenv("TWB")) {
        g_test_skip("TWB names no twb executable");
        return;
    }
    char *dir = scratch_dir();
    char *json = example_path("linear_regression.json");
    char *full = g_build_filename(dir, "lr.h5", NULL), *only = g_build_filename(dir, "only.h5", NULL);
    char *wide = g_build_filename(dir, "wide.json", NULL);
    twb_run r = twb_ok((const char *[]){"convert", json, full, NULL});
    twb_run_clear(&r);
    char *done = run_h5py("weights-only", full, only);
    if (!done)
        goto out;
    twb_run a = twb_ok((const char *[]){"evaluate", full, "--data", "linear", "--json", NULL});
    r = twb_ok((const char *[]){"evaluate", json, "--weights", only, "--data", "linear", "--json", NULL});
    g_assert_cmpstr(r.out, ==, a.out);
    twb_run_clear(&r);
    /* Training that cannot move the weights tests with them. */
    r = twb_ok((const char *[]){"train", json, "--weights", only, "--data", "linear", "--epochs", "1",
                                "--optimizer", "sgd", "--learning-rate", "0", "--json", NULL});
    double trained = json_number(r.out, "test_loss"), evaluated = json_number(a.out, "loss");
    g_assert_cmpfloat(fabs(trained - evaluated), <=, 1e-5 * fabs(evaluated));
    twb_run_clear(&r);
    twb_run_clear(&a);
    a = twb_ok((const char *[]){"predict", full, "--data", "linear", NULL});
    r = twb_ok((const char *[]){"predict", json, "--weights", only, "--data", "linear", NULL});
    g_assert_cmpstr(r.out, ==, a.out);
    twb_run_clear(&r);
    twb_run_clear(&a);

    /* Another architecture: the layer and weight that differ, by name. */
    const char *wide_json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
                            "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 1], "
                            "\"name\": \"input_1\"}},"
                            "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 2}}]}}";
    g_assert_true(g_file_set_contents(wide, wide_json, -1, NULL));
    const char *commands[] = {"train", "evaluate", "predict"};
    for (int i = 0; i < 3; i++) {
        r = run_twb_argv((const char *[]){commands[i], wide, "--weights", only, "--data", "linear", NULL});
        g_assert_cmpint(r.exit_status, ==, 1);
        char *expected = g_strdup_printf("twb %s: --weights %s: layer 'dense' weight 'kernel': file has (1, 1), "
                                         "model has (1, 2)\n",
                                         commands[i], only);
        g_assert_cmpstr(r.err, ==, expected);
        g_free(expected);
        twb_run_clear(&r);
    }
    /* A file that is not there, and two sources of weights. */
    char *missing = g_build_filename(dir, "missing.h5", NULL);
    r = run_twb_argv((const char *[]){"evaluate", json, "--weights", missing, "--data", "linear", NULL});
    g_assert_cmpint(r.exit_status, ==, 1);
    g_assert_true(g_str_has_prefix(r.err, "twb evaluate: --weights "));
    g_assert_nonnull(strstr(r.err, missing));
    twb_run_clear(&r);
    g_free(missing);
    r = run_twb_argv((const char *[]){"evaluate", json, "--weights", only, "--checkpoint", full, "--data", "linear",
                                      NULL});
    g_assert_cmpint(r.exit_status, ==, 2);
    g_assert_nonnull(strstr(r.err, "name the weights once: --weights or --checkpoint, not both"));
    twb_run_clear(&r);
out:
    g_free(done);
    g_free(wide);
    g_free(only);
    g_free(full);
    g_free(json);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* Keras 3 keeps a wrapper's layers as its attributes: Bidirectional's
 * forward_layer and backward_layer, TimeDistributed's layer, an LSTM's
 * weights under its cell; MultiHeadAttention's projections under
 * query_dense, key_dense, value_dense, output_dense. Written so, and read
 * back the same. */
static void test_keras3_wrapper_paths(void)
{
    char *dir = scratch_dir();
    char *json_path = g_build_filename(dir, "wrappers.json", NULL), *keras = g_build_filename(dir, "w.keras", NULL);
    const char *json =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 5, 3]}}, "
        "{\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bidirectional\", \"layer\": "
        "{\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\", \"units\": 2, \"return_sequences\": true}}}}, "
        "{\"class_name\": \"TimeDistributed\", \"config\": {\"name\": \"time_distributed\", \"layer\": "
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 3}}}}]}}";
    g_assert_true(g_file_set_contents(json_path, json, -1, NULL));
    tw_model *model = tw_model_open(json_path);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_write(model, keras, TW_MODEL_FORMAT_AUTO), ==, 0);
    char *ours = our_dump(keras);
    static const char *const paths[] = {
        "layers/bidirectional/forward_layer/cell/vars/0\t", "layers/bidirectional/forward_layer/cell/vars/2\t",
        "layers/bidirectional/backward_layer/cell/vars/0\t", "layers/bidirectional/backward_layer/cell/vars/2\t",
        "layers/time_distributed/layer/vars/0\t", "layers/time_distributed/layer/vars/1\t"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        if (!strstr(ours, paths[i]))
            g_error("%s lacks %s:\n%s", keras, paths[i], ours);
    g_free(ours);
    tw_layer_unref(model);
    round_trip(json_path); /* read back by us and by h5py: the same tensors */
    /* MultiHeadAttention's projections under Keras 3's properties. */
    char *transformer = corpus_path("keras-functional", "11-k3-transformer-mha-h5.json");
    if (corpus_present(transformer)) {
        model = tw_model_open(transformer);
        g_assert_nonnull(model);
        g_assert_cmpint(tw_model_write(model, keras, TW_MODEL_FORMAT_AUTO), ==, 0);
        ours = our_dump(keras);
        static const char *const mha[] = {
            "layers/multi_head_attention/query_dense/vars/0\t", "layers/multi_head_attention/query_dense/vars/1\t",
            "layers/multi_head_attention/key_dense/vars/1\t", "layers/multi_head_attention/value_dense/vars/0\t",
            "layers/multi_head_attention/output_dense/vars/1\t", "layers/multi_head_attention_1/output_dense/vars/0\t"};
        for (size_t i = 0; i < G_N_ELEMENTS(mha); i++)
            if (!strstr(ours, mha[i]))
                g_error("%s lacks %s:\n%s", keras, mha[i], ours);
        g_assert_null(strstr(ours, "layers/multi_head_attention/vars/"));
        g_free(ours);
        tw_layer_unref(model);
        round_trip(transformer);
    }
    g_free(transformer);
    g_free(keras);
    g_free(json_path);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* A layer class the engine does not know, a user's Python class (Keras 3:
 * module and registered_name from register_keras_serializable; Keras 2:
 * "package>Class" as the class_name): the model opens, its shapes taken
 * from the rest of the graph (or unknown), summarizes with the class's
 * name and its count unknown, cannot run (train and predict refuse it
 * naming the layer, class and origin), and writes its config back as the
 * file had it. */
#define USER_CLASS_LAYERS(custom, dense)                                                                          \
    "{\"module\": \"keras.src.models.functional\", \"class_name\": \"Functional\", \"config\": {\"name\": "  \
    "\"m\", \"trainable\": true, \"layers\": [{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", "     \
    "\"config\": {\"batch_shape\": [null, 8], \"dtype\": \"float32\", \"sparse\": false, \"name\": \"x\"}, "       \
    "\"registered_name\": null, \"name\": \"x\", \"inbound_nodes\": []}, " custom ", " dense "], "                  \
    "\"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"out\", 0, 0]]}, \"registered_name\": "              \
    "\"Functional\", \"build_config\": {\"input_shape\": null}}"
#define K3_TENSOR(from, dim)                                                                                      \
    "{\"class_name\": \"__keras_tensor__\", \"config\": {\"shape\": [null, " dim "], \"dtype\": \"float32\", "     \
    "\"keras_history\": [\"" from "\", 0, 0]}}"
/* The user layer's config as the file has it: floats, nesting, nulls. */
#define USER_CONFIG "\"units\": 4, \"scale\": 0.2, \"extra\": {\"steps\": [1, 2.5, null, true, \"s\"]}"

/* Opens path (a model file) and checks it as the files above are. */
static tw_model *open_user_model(const char *path, const char *row, const char *why)
{
    tw_model *m = tw_model_open(path);
    if (!m)
        g_error("%s: %s", path, tw_last_error());
    char *summary = tw_model_summary(m, 0);
    if (!strstr(summary, row))
        g_error("%s: no row \"%s\" in the summary:\n%s", path, row, summary);
    g_assert_nonnull(strstr(summary, "Total params: unknown, at least "));
    free(summary);
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, why);
    tw_error_clear();
    return m;
}

/* twb summarizes the file and refuses to train on it or predict with it,
 * naming the layer and why. */
static void check_user_cli(const char *path, const char *row, const char *why)
{
    if (!g_getenv("TWB"))
        return;
    twb_run r = run_twb_argv((const char *[]){"summary", path, NULL});
    g_assert_cmpint(r.exit_status, ==, 0);
    if (!strstr(r.out, row))
        g_error("twb summary %s: no row \"%s\" in:\n%s%s", path, row, r.out, r.err);
    twb_run_clear(&r);
    const char *const commands[][8] = {{"train", path, "--data", "blobs", "--epochs", "1", NULL},
                                       {"predict", path, "--data", "blobs", NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        r = run_twb_argv(commands[i]);
        g_assert_cmpint(r.exit_status, ==, 1);
        if (!strstr(r.err, why))
            g_error("twb %s: expected the message \"%s\", got: %s", commands[i][0], why, r.err);
        twb_run_clear(&r);
    }
}

/* Written in form, read back and written again: the same text, holding
 * the layer's own part as expected. */
static void check_user_round_trip(tw_model *m, tw_keras_json_format format, const char *expected)
{
    char *first = tw_model_to_json_format(m, format);
    if (!strstr(first, expected))
        g_error("form %d: \"%s\" is not in %s", format + 2, expected, first);
    tw_model *again = tw_model_from_json(first, strlen(first), "written.json");
    if (!again)
        g_error("form %d does not read back: %s\n%s", format + 2, tw_last_error(), first);
    char *second = tw_model_to_json_format(again, format);
    g_assert_cmpstr(second, ==, first);
    free(second);
    free(first);
    tw_layer_unref(again);
}

static void test_user_class(void)
{
    static const char config[] = USER_CLASS_LAYERS(
        "{\"module\": \"my_project.layers\", \"class_name\": \"MyLayer\", \"config\": {\"name\": \"my_layer\", "
        "\"trainable\": true, " USER_CONFIG "}, \"registered_name\": \"MyPkg>MyLayer\", \"build_config\": "
        "{\"input_shape\": [null, 8]}, \"name\": \"my_layer\", \"inbound_nodes\": [{\"args\": [" K3_TENSOR("x", "8")
        "], \"kwargs\": {}}]}",
        "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2}, "
        "\"registered_name\": null, \"name\": \"out\", \"inbound_nodes\": [{\"args\": [" K3_TENSOR("my_layer", "4") "], "
        "\"kwargs\": {}}]}");
    char *dir = scratch_dir();
    char *k3_path = g_build_filename(dir, "custom3.json", NULL);
    g_assert_true(g_file_set_contents(k3_path, config, -1, NULL));
    /* Its output shape is what the Dense after it records being given. */
    static const char why[] = "UserLayer 'my_layer': its class \"MyLayer\" (registered_name \"MyPkg>MyLayer\", "
                              "module \"my_project.layers\") is a user-defined class whose Python code is not in the "
                              "file and cannot run here; the model can be summarized but not run or trained";
    tw_model *m = open_user_model(k3_path, "my_layer (MyLayer)", why);
    tw_layer_info info[3];
    g_assert_cmpint(tw_model_infer(m, tw_model_input_shape(m), info), ==, 3);
    g_assert_cmpint(info[1].output.ndim, ==, 2);
    g_assert_cmpint(info[1].output.dims[1], ==, 4);
    g_assert_true(info[1].params_unknown);
    g_assert_false(info[2].params_unknown);
    g_assert_cmpint(info[2].trainable_params, ==, 4 * 2 + 2);
    check_user_cli(k3_path, "my_layer (MyLayer)", why);
    check_user_round_trip(m, TW_KERAS_JSON_3,
                          "{\"module\": \"my_project.layers\", \"class_name\": \"MyLayer\", \"config\": {\"name\": "
                          "\"my_layer\", \"trainable\": true, " USER_CONFIG "}, \"registered_name\": \"MyPkg>MyLayer\", "
                          "\"build_config\": {\"input_shape\": [null, 8]}, \"name\": \"my_layer\"");
    /* Keras 2 writes the registered name as the class_name, and the Dense
     * the shape it is given, which no tensor records in that form. */
    check_user_round_trip(m, TW_KERAS_JSON_2,
                          "{\"class_name\": \"MyPkg>MyLayer\", \"config\": {\"name\": \"my_layer\", \"trainable\": "
                          "true, " USER_CONFIG "}, \"name\": \"my_layer\"");
    check_user_round_trip(m, TW_KERAS_JSON_2, "\"build_config\": {\"input_shape\": [null, 4]}");

    /* Saved as .keras (whose config.json is Keras 2's form) and reopened:
     * the same shapes, config and reason, the class as Keras 2 names it. */
    char *keras = g_build_filename(dir, "custom.keras", NULL);
    g_assert_cmpint(tw_model_write(m, keras, TW_MODEL_FORMAT_KERAS), ==, 0);
    tw_layer_unref(m);
    static const char why_k2[] = "UserLayer 'my_layer': its class \"MyPkg>MyLayer\" (registered in package \"MyPkg\") "
                                 "is a user-defined class whose Python code is not in the file and cannot run here; "
                                 "the model can be summarized but not run or trained";
    m = open_user_model(keras, "my_layer (MyLayer)", why_k2);
    g_assert_cmpint(tw_model_infer(m, tw_model_input_shape(m), info), ==, 3);
    g_assert_cmpint(info[1].output.dims[1], ==, 4);
    g_assert_cmpint(info[2].trainable_params, ==, 4 * 2 + 2);
    check_user_cli(keras, "my_layer (MyLayer)", why_k2);
    char *again = g_build_filename(dir, "again.keras", NULL);
    g_assert_cmpint(tw_model_write(m, again, TW_MODEL_FORMAT_KERAS), ==, 0);
    size_t n1, n2;
    char *c1 = tw_model_file_config(keras, &n1), *c2 = tw_model_file_config(again, &n2);
    g_assert_nonnull(c1);
    g_assert_nonnull(strstr(c1, "\"config\": {\"name\": \"my_layer\", \"trainable\": true, " USER_CONFIG "}"));
    g_assert_cmpstr(c2, ==, c1);
    free(c1);
    free(c2);
    g_free(again);
    tw_layer_unref(m);

    /* A Keras 2 file: the class's shape is recorded nowhere, so it and the
     * Dense's count after it are unknown. */
    static const char k2[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [{\"class_name\": "
        "\"MyPkg>MyLayer\", \"config\": {\"name\": \"mine\", \"trainable\": true, \"batch_input_shape\": [null, 8], "
        USER_CONFIG "}}, {\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2}}]}, "
        "\"keras_version\": \"2.15.0\", \"backend\": \"tensorflow\"}";
    char *k2_path = g_build_filename(dir, "custom2.json", NULL);
    g_assert_true(g_file_set_contents(k2_path, k2, -1, NULL));
    static const char why2[] = "UserLayer 'mine': its class \"MyPkg>MyLayer\" (registered in package \"MyPkg\") is a "
                               "user-defined class whose Python code is not in the file and cannot run here; the "
                               "model can be summarized but not run or trained";
    m = open_user_model(k2_path, "mine (MyLayer)", why2);
    g_assert_cmpint(tw_model_infer(m, tw_model_input_shape(m), info), ==, 2);
    g_assert_false(tw_shape_known(&info[0].output));
    g_assert_true(info[0].params_unknown && info[1].params_unknown);
    check_user_cli(k2_path, "mine (MyLayer)", why2);
    check_user_round_trip(m, TW_KERAS_JSON_2,
                          "{\"class_name\": \"MyPkg>MyLayer\", \"config\": {\"name\": \"mine\", \"trainable\": true, "
                          "\"batch_input_shape\": [null, 8], " USER_CONFIG "}}");
    tw_layer_unref(m);

    /* A Keras class the engine lacks is not called a user's. */
    static const char keras_class[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [{\"module\": \"keras.layers\", "
        "\"class_name\": \"Unheard\", \"config\": {\"name\": \"u\"}, \"registered_name\": null}]}}";
    m = tw_model_from_json(keras_class, strlen(keras_class), "k3.json");
    g_assert_nonnull(m);
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "UserLayer 'u': its class \"Unheard\" (module \"keras.layers\") is a Keras layer Tensor Workbench "
                    "does not implement; the model can be summarized but not run or trained");
    tw_error_clear();
    tw_layer_unref(m);
    g_free(k2_path);
    g_free(k3_path);
    g_free(keras);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* A .keras file whose weights hold a user layer's variables (saved by
 * its own code under its group, "layers/dense" for a Python class DENSE):
 * their sizes are its parameter count, and the model's counts are known. */
static void test_user_class_weights(void)
{
    /* The weights: a Dense(4) where the user layer is, then Dense(2). */
    static const char dense[] = USER_CLASS_LAYERS(
        "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"my_layer\", \"units\": "
        "4}, \"registered_name\": null, \"name\": \"my_layer\", \"inbound_nodes\": [{\"args\": [" K3_TENSOR("x", "8")
        "], \"kwargs\": {}}]}",
        "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2}, "
        "\"registered_name\": null, \"name\": \"out\", \"inbound_nodes\": [{\"args\": [" K3_TENSOR("my_layer", "4") "], "
        "\"kwargs\": {}}]}");
    static const char user[] = USER_CLASS_LAYERS(
        "{\"module\": \"my_project.layers\", \"class_name\": \"DENSE\", \"config\": {\"name\": \"my_layer\", "
        "\"units\": 4}, \"registered_name\": \"MyPkg>DENSE\", \"name\": \"my_layer\", \"inbound_nodes\": [{\"args\": "
        "[" K3_TENSOR("x", "8") "], \"kwargs\": {}}]}",
        "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2}, "
        "\"registered_name\": null, \"name\": \"out\", \"inbound_nodes\": [{\"args\": [" K3_TENSOR("my_layer", "4") "], "
        "\"kwargs\": {}}]}");
    char *dir = scratch_dir();
    char *keras = g_build_filename(dir, "user_weights.keras", NULL);
    tw_model *made = tw_model_from_json(dense, strlen(dense), "dense.json");
    g_assert_nonnull(made);
    g_assert_cmpint(tw_model_write(made, keras, TW_MODEL_FORMAT_KERAS), ==, 0);
    tw_layer_unref(made);
    zip_t *za = zip_open(keras, 0, NULL);
    g_assert_nonnull(za);
    zip_int64_t at = zip_name_locate(za, "config.json", 0);
    g_assert_cmpint(at, >=, 0);
    g_assert_cmpint(zip_file_replace(za, (zip_uint64_t)at, zip_source_buffer(za, user, strlen(user), 0), 0), ==, 0);
    g_assert_cmpint(zip_close(za), ==, 0);

    tw_model *m = tw_model_open(keras);
    if (!m)
        g_error("%s: %s", keras, tw_last_error());
    g_assert_true(tw_model_open_had_weights());
    int64_t total, trainable, frozen;
    g_assert_cmpint(tw_model_count_params(m, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(total, ==, 8 * 4 + 4 + 4 * 2 + 2);
    char *summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "Total params: 46\n"));
    GRegex *row = g_regex_new("my_layer \\(DENSE\\) +\\(None, 4\\) +36 ", 0, 0, NULL);
    if (!g_regex_match(row, summary, 0, NULL))
        g_error("no row for my_layer with 36 parameters in:\n%s", summary);
    g_regex_unref(row);
    free(summary);
    /* counted, it still cannot run */
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    tw_error_clear();
    tw_layer_unref(m);
    g_free(keras);
    scratch_remove_tree(dir);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(corpus_files); i++) {
        char *name = g_strdup_printf("/keras_files/corpus/config/%s", corpus_files[i].file);
        g_test_add_data_func(name, &corpus_files[i], test_corpus_config);
        g_free(name);
        name = g_strdup_printf("/keras_files/corpus/weights/%s", corpus_files[i].file);
        g_test_add_data_func(name, &corpus_files[i], test_corpus_weights);
        g_free(name);
    }
    const char *examples[] = {"mlp_fashion_mnist.json", "cnn_fashion_mnist.json", "linear_regression.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(examples); i++) {
        char *name = g_strdup_printf("/keras_files/round_trip/%s", examples[i]);
        g_test_add_data_func_full(name, example_path(examples[i]), test_round_trip, g_free);
        g_free(name);
    }
    char *dir = corpus_path("keras", "");
    GDir *d = g_dir_open(dir, 0, NULL);
    GPtrArray *jsons = g_ptr_array_new_with_free_func(g_free);
    for (const char *f; d && (f = g_dir_read_name(d));)
        if (g_str_has_suffix(f, ".json"))
            g_ptr_array_add(jsons, g_strdup(f));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(jsons, compare_strings);
    for (guint i = 0; i < jsons->len; i++) {
        char *name = g_strdup_printf("/keras_files/round_trip/corpus/%s", (char *)jsons->pdata[i]);
        g_test_add_data_func_full(name, corpus_path("keras", jsons->pdata[i]), test_round_trip, g_free);
        g_free(name);
    }
    g_ptr_array_unref(jsons);
    g_free(dir);
    g_test_add_func("/keras_files/weights_only", test_weights_only);
    g_test_add_func("/keras_files/keras_written", test_keras_written);
    g_test_add_func("/keras_files/mismatch", test_mismatch);
    g_test_add_func("/keras_files/bad_files", test_bad_files);
    g_test_add_func("/keras_files/gcol_in_weights", test_gcol_in_weights);
    g_test_add_func("/keras_files/cli", test_cli);
    g_test_add_func("/keras_files/cli_weights", test_cli_weights);
    g_test_add_func("/keras_files/keras3_wrapper_paths", test_keras3_wrapper_paths);
    g_test_add_func("/keras_files/user_class", test_user_class);
    g_test_add_func("/keras_files/user_class_weights", test_user_class_weights);
    return g_test_run();
}
