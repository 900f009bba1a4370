/* An independent Keras loader reads what we write: TensorFlow.js Layers'
 * modelFromJSON (Google's JavaScript port of Keras' model_from_json, run
 * by tools/keras-loader-check/check.js under Node). Each model is written
 * by our writer (`twb save IN OUT --format keras2`, and the designer's
 * save with its twb_designer keys of box positions at the top and inside
 * a nested model's entry); tfjs must build it with our parameter counts
 * (total and trainable), input shapes, output shapes and name. The models:
 * the window's five Functional templates and every file of the shared
 * corpora (../shared/corpus/keras, keras-functional; skipped with a
 * message where absent). Where tfjs refuses a file for want of something
 * Keras has, the file is on the allow-list below with tfjs' message: the
 * test fails when tfjs refuses it otherwise, or accepts it (take it off).
 *
 * And the same numbers: three small templates' outputs, tfjs running the
 * model file on our engine's weights, equal ours within 1e-4.
 *
 * Skipped (exit 77) without node or the npm modules: `make keras-check`
 * installs them (npm ci in tools/keras-loader-check) and runs this. It is
 * TensorFlow.js' loader, not Python Keras' (which does not install here). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "model_doc.h"
#include "scratch_tree.h"
#include "twb_run.h"

static char *node_path, *checker;
static char *scratch;

/* ---- what tfjs cannot load, and why ---------------------------------------
 * Each entry: a file's name (without .json) and the start of tfjs-layers
 * 4.22's message. None is a fault of the file: Keras' own loader reads
 * each of these classes and values (the corpus files are Keras' own). */
static const struct {
    const char *file, *error;
} tfjs_limits[] = {
    /* tfjs-layers has no Subtract (it has Add, Multiply, Average, Maximum,
     * Minimum, Concatenate, Dot); checked again below with check.js'
     * stand-in Subtract, so the rest of the file is read too. */
    {"siamese_fashion_mnist", "Unknown layer: Subtract."},
    /* No Lambda in tfjs: its Python code cannot run in JavaScript. */
    {"03-triplet-siamese-shared-sequential", "Unknown layer: Lambda."},
    {"04-siamese-conv1d-bilstm-shared", "Unknown layer: Lambda."},
    /* No preprocessing layers beyond Rescaling, CenterCrop, Resizing,
     * CategoryEncoding and RandomWidth; no MultiHeadAttention. */
    {"02-two-tower-recommender-stringlookup", "Unknown layer: StringLookup."},
    {"10-k3-nested-efficientnetb0-augment", "Unknown layer: RandomFlip."},
    {"11-k3-transformer-mha-h5", "Unknown layer: MultiHeadAttention."},
    /* tfjs' GRU computes reset_after=false only; Keras 2's default since
     * TF 2 is true (what these files say, as Keras wrote them). */
    {"10-gru-dense-keras215", "GRUCell does not support reset_after parameter set to true."},
    {"12-gru-batchnorm-seq-weather", "GRUCell does not support reset_after parameter set to true."},
};

static const char *tfjs_limit(const char *file)
{
    char *base = g_path_get_basename(file);
    char *dot = strrchr(base, '.');
    if (dot)
        *dot = 0;
    const char *error = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(tfjs_limits); i++)
        if (!strcmp(tfjs_limits[i].file, base))
            error = tfjs_limits[i].error;
    g_free(base);
    return error;
}

/* ---- running check.js ---------------------------------------------------- */

/* check.js on files (with a stand-in class, or NULL): one JSON object per
 * file, in order (a JsonParser each, owned by the array). */
static GPtrArray *run_checker_with(GPtrArray *files, const char *stand_in, const char *predict)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, node_path);
    g_ptr_array_add(argv, checker);
    /* Orthogonal's QR in plain JavaScript takes minutes on keras-functional
     * 05's LSTMs; the starting values are not what is checked. */
    g_ptr_array_add(argv, "--fast-orthogonal");
    if (stand_in) {
        g_ptr_array_add(argv, "--stand-in");
        g_ptr_array_add(argv, (char *)stand_in);
    }
    if (predict) {
        g_ptr_array_add(argv, "--predict");
        g_ptr_array_add(argv, (char *)predict);
    }
    for (guint i = 0; i < files->len; i++)
        g_ptr_array_add(argv, files->pdata[i]);
    g_ptr_array_add(argv, NULL);
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error))
        g_error("running %s: %s", checker, error->message);
    /* 0: all loaded, 1: some did not (each says why); else a fault. */
    if (!g_spawn_check_wait_status(status, NULL) && !(WIFEXITED(status) && WEXITSTATUS(status) == 1))
        g_error("%s failed: %s", checker, err);
    GPtrArray *results = g_ptr_array_new_with_free_func(g_object_unref);
    char **lines = g_strsplit(out, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (!**l)
            continue;
        JsonParser *parser = json_parser_new();
        if (!json_parser_load_from_data(parser, *l, -1, NULL))
            g_error("check.js printed a line that is not JSON: %s", *l);
        g_ptr_array_add(results, parser);
    }
    if (results->len != files->len)
        g_error("check.js gave %u results for %u files: %s", results->len, files->len, err);
    g_strfreev(lines);
    g_free(out);
    g_free(err);
    g_ptr_array_free(argv, TRUE);
    return results;
}

static GPtrArray *run_checker(GPtrArray *files, const char *stand_in)
{
    return run_checker_with(files, stand_in, NULL);
}

/* ---- our facts against tfjs' --------------------------------------------- */

static char *shape_text(const tw_shape *shape)
{
    GString *s = g_string_new("[");
    for (int i = 0; i < shape->ndim; i++)
        g_string_append_printf(s, i ? ", %lld" : "%lld", (long long)shape->dims[i]);
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

/* tfjs' shape list ([null, 28, 28, 1]) with null as -1, as ours. */
static char *tfjs_shape_text(JsonArray *shape)
{
    GString *s = g_string_new("[");
    for (guint i = 0; i < json_array_get_length(shape); i++) {
        JsonNode *d = json_array_get_element(shape, i);
        g_string_append_printf(s, i ? ", %lld" : "%lld",
                               JSON_NODE_HOLDS_NULL(d) ? -1LL : (long long)json_node_get_int(d));
    }
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

static void assert_shapes(const char *file, const char *what, JsonArray *theirs, int n, const tw_shape *ours)
{
    if ((int)json_array_get_length(theirs) != n)
        g_error("%s: tfjs has %u %s, we have %d", file, json_array_get_length(theirs), what, n);
    for (int i = 0; i < n; i++) {
        char *a = shape_text(&ours[i]), *b = tfjs_shape_text(json_array_get_array_element(theirs, i));
        if (strcmp(a, b))
            g_error("%s: %s %d: tfjs %s, ours %s", file, what, i, b, a);
        g_free(a);
        g_free(b);
    }
}

/* The model our reader makes of file, against what tfjs built of it. */
static void assert_agree(const char *file, JsonObject *theirs)
{
    tw_model *model = tw_model_load(file);
    if (!model)
        g_error("%s: we cannot read what we wrote: %s", file, tw_last_error());
    int64_t total, trainable, frozen;
    if (tw_model_count_params(model, &total, &trainable, &frozen))
        g_error("%s: %s", file, tw_last_error());
    g_assert_cmpstr(json_object_get_string_member(theirs, "name"), ==, tw_layer_name(model));
    if (json_object_get_int_member(theirs, "params") != total ||
        json_object_get_int_member(theirs, "trainable_params") != trainable)
        g_error("%s: tfjs counts %lld parameters (%lld trainable), we count %lld (%lld)", file,
                (long long)json_object_get_int_member(theirs, "params"),
                (long long)json_object_get_int_member(theirs, "trainable_params"), (long long)total,
                (long long)trainable);

    int ninputs = tw_model_ninputs(model), noutputs = 0;
    tw_shape inputs[TW_MAX_LAYER_IO], outputs[TW_MAX_LAYER_IO];
    g_assert_cmpint(ninputs, >, 0);
    g_assert_cmpint(ninputs, <=, TW_MAX_LAYER_IO);
    for (int i = 0; i < ninputs; i++) {
        const tw_shape *s = tw_model_input_shape_at(model, i);
        g_assert_nonnull(s);
        inputs[i] = *s;
    }
    if (tw_layer_infer_n(model, inputs, ninputs, outputs, &noutputs, NULL, NULL))
        g_error("%s: %s", file, tw_last_error());
    assert_shapes(file, "inputs", json_object_get_array_member(theirs, "inputs"), ninputs, inputs);
    assert_shapes(file, "outputs", json_object_get_array_member(theirs, "outputs"), noutputs, outputs);
    g_test_message("%s: tfjs agrees: %s '%s', %lld parameters (%lld trainable), %d output(s)", file,
                   json_object_get_string_member(theirs, "class_name"), tw_layer_name(model), (long long)total,
                   (long long)trainable, noutputs);
    tw_layer_unref(model);
}

/* Every file's result: agreement, or the allow-listed refusal. Returns how
 * many tfjs accepted. */
static int judge(GPtrArray *files, GPtrArray *results, bool standing_in)
{
    int accepted = 0;
    for (guint i = 0; i < files->len; i++) {
        const char *file = files->pdata[i];
        JsonObject *r = json_node_get_object(json_parser_get_root(results->pdata[i]));
        g_assert_cmpstr(json_object_get_string_member(r, "file"), ==, file);
        const char *limit = standing_in ? NULL : tfjs_limit(file);
        bool ok = json_object_get_boolean_member(r, "ok");
        if (limit && ok)
            g_error("%s: tfjs now accepts it: take it off the allow-list (tfjs_limits)", file);
        if (limit) {
            const char *error = json_object_get_string_member(r, "error");
            if (!g_str_has_prefix(error, limit))
                g_error("%s: tfjs refuses it, not as the allow-list says (\"%s\"): %s", file, limit, error);
            g_test_message("%s: a tfjs limitation, on the allow-list: %s", file, limit);
            continue;
        }
        if (!ok)
            g_error("%s: TensorFlow.js' Keras loader refuses what we wrote: %s", file,
                    json_object_get_string_member(r, "error"));
        assert_agree(file, r);
        accepted++;
    }
    return accepted;
}

/* ---- writing the models --------------------------------------------------- */

static char *source_path(const char *a, const char *b, const char *c)
{
    return g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", a, b, c, NULL);
}

static const char *const templates[] = {"resnet_fashion_mnist", "unet_small", "siamese_fashion_mnist", "seq2seq_lstm",
                                        "resnet50"};

static char *template_path(const char *name)
{
    char *file = g_strdup_printf("%s.json", name);
    char *path = source_path("examples", "models", file);
    g_free(file);
    return path;
}

/* twb save IN OUT --format keras2, into the scratch folder under a
 * subfolder (the file keeps its name); the written file's path. Also: the
 * file reopens to the model of IN (same counts), and saving it again gives
 * the same bytes. */
static char *twb_save(const char *in, const char *subdir)
{
    char *dir = g_build_filename(scratch, subdir, NULL);
    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    char *base = g_path_get_basename(in);
    char *out = g_build_filename(dir, base, NULL);
    char *again = g_strconcat(out, ".again", NULL);
    twb_run run = run_twb("save", in, out, "--format", "keras2", NULL);
    if (run.exit_status)
        g_error("twb save %s: %s", in, run.err);
    twb_run_clear(&run);
    run = run_twb("save", out, again, "--format", "keras2", NULL);
    if (run.exit_status)
        g_error("twb save %s (what we wrote): %s", out, run.err);
    twb_run_clear(&run);
    char *a = NULL, *b = NULL;
    g_assert_true(g_file_get_contents(out, &a, NULL, NULL));
    g_assert_true(g_file_get_contents(again, &b, NULL, NULL));
    if (strcmp(a, b))
        g_error("%s: saving what twb save wrote gives other text", in);
    tw_model *source = tw_model_load(in), *written = tw_model_load(out);
    g_assert_nonnull(source);
    g_assert_nonnull(written);
    int64_t s[3], w[3];
    int sk = tw_model_count_params(source, &s[0], &s[1], &s[2]);
    g_assert_cmpint(tw_model_count_params(written, &w[0], &w[1], &w[2]), ==, sk);
    if (sk == 0)
        for (int i = 0; i < 3; i++)
            g_assert_cmpint(s[i], ==, w[i]);
    tw_layer_unref(source);
    tw_layer_unref(written);
    g_free(a), g_free(b), g_free(again), g_free(base), g_free(dir);
    return out;
}

static void check_files(GPtrArray *files, int expect_accepted)
{
    GPtrArray *results = run_checker(files, NULL);
    int accepted = judge(files, results, false);
    g_test_message("tfjs accepted %d of %u files", accepted, files->len);
    if (expect_accepted >= 0)
        g_assert_cmpint(accepted, ==, expect_accepted);
    g_ptr_array_unref(results);
}

/* The siamese template's Subtract: with check.js' stand-in the whole file
 * is read by tfjs, and must agree. */
static void check_with_stand_in(const char *file)
{
    GPtrArray *one = g_ptr_array_new();
    g_ptr_array_add(one, (char *)file);
    GPtrArray *results = run_checker(one, "Subtract");
    g_assert_cmpint(judge(one, results, true), ==, 1);
    g_ptr_array_unref(results);
    g_ptr_array_unref(one);
}

/* ---- the tests ------------------------------------------------------------ */

static void test_templates(void)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (size_t t = 0; t < G_N_ELEMENTS(templates); t++) {
        char *path = template_path(templates[t]);
        g_ptr_array_add(files, twb_save(path, "templates"));
        g_free(path);
    }
    check_files(files, (int)G_N_ELEMENTS(templates) - 1); /* all but the siamese's Subtract */
    for (guint i = 0; i < files->len; i++)
        if (tfjs_limit(files->pdata[i]))
            check_with_stand_in(files->pdata[i]);
    g_ptr_array_unref(files);
}

static char *corpus_dir(const char *kind)
{
    return g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "..", "shared", "corpus", kind, NULL);
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .json file of a shared corpus, written by twb save. */
static void test_corpus(gconstpointer data)
{
    const char *kind = data;
    char *dir = corpus_dir(kind);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d) {
        char *why = g_strdup_printf("the shared corpus (%s) is not here: %s", kind, dir);
        g_test_skip(why);
        g_free(why);
        g_free(dir);
        return;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *n; (n = g_dir_read_name(d));)
        if (g_str_has_suffix(n, ".json"))
            g_ptr_array_add(names, g_strdup(n));
    g_dir_close(d);
    g_ptr_array_sort(names, by_name);
    g_assert_cmpuint(names->len, >, 0);
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    int limited = 0;
    for (guint i = 0; i < names->len; i++) {
        char *in = g_build_filename(dir, names->pdata[i], NULL);
        g_ptr_array_add(files, twb_save(in, kind));
        limited += tfjs_limit(in) != NULL;
        g_free(in);
    }
    check_files(files, (int)files->len - limited);
    g_ptr_array_unref(files);
    g_ptr_array_unref(names);
    g_free(dir);
}

/* The file's "twb_designer" positions: at the top (entry NULL) or in the
 * entry of the top's layers list named entry. */
static bool has_designer_key(const char *path, const char *entry)
{
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_file(parser, path, NULL));
    JsonObject *top = json_node_get_object(json_parser_get_root(parser));
    JsonObject *object = entry ? NULL : top;
    if (entry) {
        JsonArray *layers = json_object_get_array_member(json_object_get_object_member(top, "config"), "layers");
        for (guint i = 0; i < json_array_get_length(layers); i++) {
            JsonObject *l = json_array_get_object_element(layers, i);
            const char *name = json_object_has_member(l, "name")
                                   ? json_object_get_string_member(l, "name")
                                   : json_object_get_string_member(json_object_get_object_member(l, "config"), "name");
            if (!strcmp(name, entry))
                object = l;
        }
    }
    bool has = object && json_object_has_member(object, "twb_designer") &&
               json_object_has_member(json_object_get_object_member(object, "twb_designer"), "positions");
    g_object_unref(parser);
    return has;
}

/* Every box moved right by dx (one undo step, positions from the user). */
static void move_boxes(TwModelDoc *doc, double dx)
{
    int n = tw_model_doc_n_layers(doc);
    double *xy = g_new(double, 2 * n);
    for (int i = 0; i < n; i++)
        tw_model_doc_node_position(doc, i, &xy[2 * i], &xy[2 * i + 1]);
    for (int i = 0; i < n; i++)
        xy[2 * i] += dx + 10 * i;
    GError *error = NULL;
    if (!tw_model_doc_set_positions(doc, xy, &error))
        g_error("set positions: %s", error->message);
    g_free(xy);
}

/* The designer's save of in, its boxes moved, and those inside its
 * nested models moved too (drilled into, edited, written back); the
 * name of the nested model whose entry keeps positions, or NULL. */
static char *designer_save(const char *in, char **nested_name)
{
    TwModelDoc *doc = tw_model_doc_new();
    GError *error = NULL;
    if (!tw_model_doc_load(doc, in, &error))
        g_error("designer: %s", error->message);
    move_boxes(doc, 40);
    *nested_name = NULL;
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++) {
        char *inner = tw_model_doc_nested_json(doc, i);
        if (!inner)
            continue;
        TwModelDoc *child = tw_model_doc_new();
        if (!tw_model_doc_load_json(child, inner, "nested.json", &error))
            g_error("designer, nested model: %s", error->message);
        move_boxes(child, 25);
        char *edited = tw_model_doc_to_json(child);
        if (!tw_model_doc_replace_nested(doc, i, edited, &error))
            g_error("designer, writing the nested model back: %s", error->message);
        if (!*nested_name)
            *nested_name = g_strdup(tw_layer_name(tw_model_doc_layer(doc, i)));
        g_free(edited);
        g_free(inner);
        g_object_unref(child);
    }
    char *dir = g_build_filename(scratch, "designer", NULL);
    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    char *base = g_path_get_basename(in);
    char *out = g_build_filename(dir, base, NULL);
    if (!tw_model_doc_save(doc, out, &error))
        g_error("designer save: %s", error->message);
    g_object_unref(doc);
    g_free(base);
    g_free(dir);
    return out;
}

/* The designer's saves, positions at the top of the file and inside the
 * nested models' entries: tfjs reads past them (as Keras does: it reads
 * class_name and config only). The siamese template's shared encoder and
 * the corpus' nested VGG16 (where the corpus is) keep nested positions. */
static void test_designer(void)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *sources = g_ptr_array_new_with_free_func(g_free);
    for (size_t t = 0; t < G_N_ELEMENTS(templates); t++)
        g_ptr_array_add(sources, template_path(templates[t]));
    char *corpus = corpus_dir("keras-functional");
    char *vgg = g_build_filename(corpus, "07-two-input-nested-vgg16.json", NULL);
    if (g_file_test(vgg, G_FILE_TEST_EXISTS))
        g_ptr_array_add(sources, g_strdup(vgg));
    else
        g_test_message("the shared corpus is not here: the nested VGG16 is left out");
    int nested = 0;
    for (guint i = 0; i < sources->len; i++) {
        char *nested_name = NULL;
        char *out = designer_save(sources->pdata[i], &nested_name);
        g_assert_true(has_designer_key(out, NULL));
        if (nested_name) {
            if (!has_designer_key(out, nested_name))
                g_error("%s: no twb_designer key in nested model '%s''s entry", out, nested_name);
            g_test_message("%s: positions at the top and in '%s''s entry", out, nested_name);
            nested++;
        }
        g_free(nested_name);
        g_ptr_array_add(files, out);
    }
    g_assert_cmpint(nested, >=, 1); /* the siamese's encoder */
    check_files(files, (int)files->len - 1);
    check_with_stand_in(files->pdata[2]); /* siamese_fashion_mnist */
    g_ptr_array_unref(files);
    g_ptr_array_unref(sources);
    g_free(vgg);
    g_free(corpus);
}

/* ---- the same numbers ------------------------------------------------------ */

static void put_tensor(GString *out, const tw_tensor *t)
{
    g_assert_cmpint(tw_tensor_dtype(t), ==, TW_FLOAT32);
    int64_t n = tw_tensor_numel(t);
    float *v = g_new(float, n ? n : 1);
    g_assert_cmpint(tw_tensor_copy_to(t, v, (size_t)n * sizeof(float)), ==, 0);
    g_string_append(out, "{\"shape\": [");
    for (int i = 0; i < tw_tensor_ndim(t); i++)
        g_string_append_printf(out, i ? ", %lld" : "%lld", (long long)tw_tensor_shape(t)[i]);
    g_string_append(out, "], \"values\": [");
    for (int64_t i = 0; i < n; i++) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append(out, i ? ", " : "");
        g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.9g", v[i]));
    }
    g_string_append(out, "]}");
    g_free(v);
}

/* A template's outputs for two random examples, our engine's and tfjs'
 * (given our weights, layer by layer, in Keras' order), within 1e-4. */
static void check_predictions(const char *name)
{
    char *path = template_path(name);
    char *file = twb_save(path, "predict");
    tw_model *model = tw_model_load(file);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 11), ==, 0);
    tw_rng *rng = tw_rng_new(7);
    tw_scope_begin();
    int nx = tw_model_ninputs(model);
    tw_tensor *x[TW_MAX_LAYER_IO], *y[TW_MAX_LAYER_IO];
    GString *spec = g_string_new("{\"inputs\": [");
    for (int i = 0; i < nx; i++) {
        tw_shape s = *tw_model_input_shape_at(model, i);
        s.dims[0] = 2;
        x[i] = tw_random_uniform(rng, TW_FLOAT32, s.ndim, s.dims, 0, 1);
        g_string_append(spec, i ? ", " : "");
        put_tensor(spec, x[i]);
    }
    int ny = tw_model_predict_n(model, nx, x, 2, y);
    if (ny < 1)
        g_error("%s: predict: %s", name, tw_last_error());
    g_string_append(spec, "], \"weights\": {");
    bool first = true;
    for (int l = 0; l < tw_model_nlayers(model); l++) {
        tw_layer *layer = tw_model_layer_at(model, l);
        g_assert_false(tw_layer_is_model(layer)); /* the names are the top's */
        if (!tw_layer_nweights(layer))
            continue;
        g_string_append(spec, first ? "" : ", ");
        first = false;
        JsonNode *key = json_node_init_string(json_node_alloc(), tw_layer_name(layer));
        char *quoted = json_to_string(key, FALSE);
        g_string_append(spec, quoted);
        g_free(quoted);
        json_node_unref(key);
        g_string_append(spec, ": [");
        for (int w = 0; w < tw_layer_nweights(layer); w++) {
            g_string_append(spec, w ? ", " : "");
            put_tensor(spec, tw_layer_weight(layer, w));
        }
        g_string_append_c(spec, ']');
    }
    g_string_append(spec, "}}");
    char *spec_path = g_strconcat(file, ".predict.json", NULL);
    g_assert_true(g_file_set_contents(spec_path, spec->str, -1, NULL));

    GPtrArray *one = g_ptr_array_new();
    g_ptr_array_add(one, file);
    GPtrArray *results = run_checker_with(one, NULL, spec_path);
    JsonObject *r = json_node_get_object(json_parser_get_root(results->pdata[0]));
    if (!json_object_get_boolean_member(r, "ok"))
        g_error("%s: tfjs: %s", name, json_object_get_string_member(r, "error"));
    JsonArray *predictions = json_object_get_array_member(r, "predictions");
    g_assert_cmpint((int)json_array_get_length(predictions), ==, ny);
    double worst = 0;
    for (int k = 0; k < ny; k++) {
        JsonObject *p = json_array_get_object_element(predictions, k);
        JsonArray *values = json_object_get_array_member(p, "values");
        int64_t n = tw_tensor_numel(y[k]);
        g_assert_cmpint((int64_t)json_array_get_length(values), ==, n);
        float *ours = g_new(float, n);
        g_assert_cmpint(tw_tensor_copy_to(y[k], ours, (size_t)n * sizeof(float)), ==, 0);
        for (int64_t i = 0; i < n; i++) {
            double d = fabs(json_array_get_double_element(values, (guint)i) - ours[i]);
            if (!(d <= 1e-4))
                g_error("%s: output %d value %lld: tfjs %.9g, ours %.9g", name, k, (long long)i,
                        json_array_get_double_element(values, (guint)i), ours[i]);
            worst = MAX(worst, d);
        }
        g_free(ours);
    }
    g_test_message("%s: tfjs' outputs equal ours on our weights within %.2g (at most 1e-4)", name, worst);
    g_ptr_array_unref(results);
    g_ptr_array_unref(one);
    tw_scope_end();
    tw_rng_free(rng);
    tw_layer_unref(model);
    g_string_free(spec, TRUE);
    g_free(spec_path), g_free(file), g_free(path);
}

static void test_predict(void)
{
    check_predictions("unet_small");
    check_predictions("resnet_fashion_mnist");
    check_predictions("seq2seq_lstm");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    g_assert_nonnull(srcdir);
    char *tool = g_build_filename(srcdir, "..", "tools", "keras-loader-check", NULL);
    checker = g_build_filename(tool, "check.js", NULL);
    node_path = g_getenv("NODE") ? g_strdup(g_getenv("NODE")) : g_find_program_in_path("node");
    /* npm ci writes node_modules/.package-lock.json once every module is in
     * place: an install cut short (no registry) has none. */
    char *installed = g_build_filename(tool, "node_modules", ".package-lock.json", NULL);
    const char *missing = !node_path ? "node is not installed"
                          : !g_file_test(installed, G_FILE_TEST_EXISTS)
                              ? "the npm modules are not installed in tools/keras-loader-check"
                              : NULL;
    g_free(installed);
    if (missing) {
        fprintf(stderr,
                "test_keras_loader: skipped: %s; `make keras-check` installs TensorFlow.js' Keras loader "
                "(apt-get install nodejs npm; npm ci in tools/keras-loader-check) and runs this test\n",
                missing);
        return 77;
    }
    scratch = g_dir_make_tmp("twb-keras-loader-XXXXXX", NULL);
    g_assert_nonnull(scratch);
    g_test_add_func("/keras-loader/templates", test_templates);
    g_test_add_data_func("/keras-loader/corpus-keras", "keras", test_corpus);
    g_test_add_data_func("/keras-loader/corpus-keras-functional", "keras-functional", test_corpus);
    g_test_add_func("/keras-loader/designer", test_designer);
    g_test_add_func("/keras-loader/predict", test_predict);
    int rc = g_test_run();
    scratch_remove_tree(scratch);
    g_free(scratch), g_free(checker), g_free(node_path), g_free(tool);
    return rc;
}
