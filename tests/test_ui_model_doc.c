/* TwModelDoc, the designer's model: edits update the engine's shapes and
 * parameter counts, invalid models carry the engine's message at the
 * failing layer, undo and redo restore exact JSON states, files load and
 * save. GObject only: no display needed. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>

#include "model_doc.h"

/* ---- helpers ---------------------------------------------------------------- */
static void must(gboolean ok, GError *error)
{
    g_assert_no_error(error);
    g_assert_true(ok);
}

static void insert(TwModelDoc *doc, int index, const char *class_name)
{
    GError *error = NULL;
    must(tw_model_doc_insert(doc, index, class_name, &error), error);
}

static void set_param(TwModelDoc *doc, int index, const char *key, const char *text)
{
    GError *error = NULL;
    must(tw_model_doc_set_param(doc, index, key, text, &error), error);
}

static void set_input(TwModelDoc *doc, int index, const char *text)
{
    GError *error = NULL;
    must(tw_model_doc_set_input_shape(doc, index, text, &error), error);
}

static void assert_shape(TwModelDoc *doc, int index, const char *expected)
{
    char buf[128];
    const tw_layer_info *info = tw_model_doc_info(doc, index);
    g_assert_nonnull(info);
    g_assert_cmpstr(tw_shape_format(&info->output, buf, sizeof buf), ==, expected);
}

static void assert_params(TwModelDoc *doc, int index, int64_t trainable, int64_t non_trainable)
{
    const tw_layer_info *info = tw_model_doc_info(doc, index);
    g_assert_cmpint(info->trainable_params, ==, trainable);
    g_assert_cmpint(info->non_trainable_params, ==, non_trainable);
}

static void assert_totals(TwModelDoc *doc, int64_t trainable, int64_t non_trainable)
{
    int64_t t = -1, nt = -1;
    tw_model_doc_totals(doc, &t, &nt);
    g_assert_cmpint(t, ==, trainable);
    g_assert_cmpint(nt, ==, non_trainable);
}

static const char *name_at(TwModelDoc *doc, int index)
{
    return tw_layer_name(tw_model_doc_layer(doc, index));
}

static const char *class_at(TwModelDoc *doc, int index)
{
    return tw_layer_class_of(tw_model_doc_layer(doc, index))->name;
}

static void count_signal(TwModelDoc *doc, int *count)
{
    (*count)++;
}

/* Input (28, 28, 1) -> Conv2D(32, 3x3, relu). */
static TwModelDoc *small_cnn(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    set_input(doc, 0, "28,28,1");
    insert(doc, 1, "Conv2D");
    set_param(doc, 1, "activation", "relu");
    return doc;
}

static char *repo_file(const char *first, ...)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    GPtrArray *parts = g_ptr_array_new();
    g_ptr_array_add(parts, (char *)(srcdir ? srcdir : "."));
    g_ptr_array_add(parts, "..");
    va_list ap;
    va_start(ap, first);
    for (const char *p = first; p; p = va_arg(ap, const char *))
        g_ptr_array_add(parts, (char *)p);
    va_end(ap);
    g_ptr_array_add(parts, NULL);
    char *path = g_build_filenamev((char **)parts->pdata);
    g_ptr_array_free(parts, TRUE);
    return path;
}

/* ---- a new document ---------------------------------------------------------- */
static void test_new(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 1);
    g_assert_cmpstr(class_at(doc, 0), ==, "InputLayer");
    assert_shape(doc, 0, "(None, 28, 28)");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    g_assert_null(tw_model_doc_error(doc));
    g_assert_false(tw_model_doc_modified(doc));
    g_assert_false(tw_model_doc_can_undo(doc));
    g_assert_null(tw_model_doc_path(doc));
    assert_totals(doc, 0, 0);
    g_object_unref(doc);
}

/* ---- edits update shapes and counts ----------------------------------------- */
static void test_insert_shapes(void)
{
    TwModelDoc *doc = small_cnn();
    g_assert_cmpstr(name_at(doc, 1), ==, "conv2d");
    assert_shape(doc, 1, "(None, 26, 26, 32)");
    assert_params(doc, 1, 320, 0);
    insert(doc, 2, "MaxPooling2D");
    insert(doc, 3, "Flatten");
    insert(doc, 4, "Dense");
    set_param(doc, 4, "units", "10");
    assert_shape(doc, 2, "(None, 13, 13, 32)");
    assert_shape(doc, 3, "(None, 5408)");
    assert_shape(doc, 4, "(None, 10)");
    assert_params(doc, 4, 54090, 0);
    assert_totals(doc, 320 + 54090, 0);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    insert(doc, 2, "BatchNormalization");
    assert_params(doc, 2, 64, 64);
    assert_totals(doc, 320 + 64 + 54090, 64);
    g_object_unref(doc);
}

static void test_unique_names(void)
{
    TwModelDoc *doc = small_cnn();
    insert(doc, 2, "Conv2D");
    insert(doc, 3, "Conv2D");
    g_assert_cmpstr(name_at(doc, 2), ==, "conv2d_1");
    g_assert_cmpstr(name_at(doc, 3), ==, "conv2d_2");
    GError *error = NULL;
    g_assert_false(tw_model_doc_rename_layer(doc, 3, "conv2d", &error));
    g_assert_nonnull(strstr(error->message, "already named \"conv2d\""));
    g_clear_error(&error);
    g_assert_false(tw_model_doc_rename_layer(doc, 3, "a/b", &error));
    g_assert_nonnull(strstr(error->message, "without '/'"));
    g_clear_error(&error);
    must(tw_model_doc_rename_layer(doc, 3, "features", &error), error);
    g_assert_cmpstr(name_at(doc, 3), ==, "features");
    g_object_unref(doc);
}

static void test_move_remove_duplicate(void)
{
    GError *error = NULL;
    TwModelDoc *doc = small_cnn();
    insert(doc, 2, "Flatten");
    insert(doc, 3, "Dense");
    must(tw_model_doc_duplicate(doc, 1, &error), error);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 5);
    g_assert_cmpstr(name_at(doc, 2), ==, "conv2d_1");
    assert_shape(doc, 2, "(None, 24, 24, 32)");
    assert_params(doc, 2, 32 * 32 * 9 + 32, 0);
    char *relu = tw_layer_get_text(tw_model_doc_layer(doc, 2), "activation");
    g_assert_cmpstr(relu, ==, "relu");
    free(relu);
    assert_shape(doc, 4, "(None, 32)");
    assert_params(doc, 4, 24 * 24 * 32 * 32 + 32, 0);

    /* Flatten above the second conv: the conv now gets a rank-2 input. */
    must(tw_model_doc_move(doc, 3, 2, &error), error);
    g_assert_cmpstr(class_at(doc, 2), ==, "Flatten");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 3);
    must(tw_model_doc_move(doc, 2, 3, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);

    must(tw_model_doc_remove(doc, 2, &error), error);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 4);
    assert_params(doc, 3, 26 * 26 * 32 * 32 + 32, 0);
    g_assert_false(tw_model_doc_remove(doc, 4, &error));
    g_assert_nonnull(strstr(error->message, "out of range"));
    g_clear_error(&error);
    g_assert_false(tw_model_doc_insert(doc, 0, "NoSuchLayer", &error));
    g_assert_nonnull(strstr(error->message, "NoSuchLayer"));
    g_clear_error(&error);
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 4);
    g_object_unref(doc);
}

/* The input shape stays at the top of the stack when its layer moves away. */
static void test_input_shape_stays_on_top(void)
{
    GError *error = NULL;
    TwModelDoc *doc = tw_model_doc_new();
    set_input(doc, 0, "(13,)");
    insert(doc, 1, "Dense");
    assert_shape(doc, 1, "(None, 32)");
    assert_params(doc, 1, 13 * 32 + 32, 0);
    must(tw_model_doc_remove(doc, 0, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    assert_params(doc, 0, 13 * 32 + 32, 0);
    insert(doc, 1, "Dense");
    must(tw_model_doc_duplicate(doc, 0, &error), error); /* the copy does not declare it again */
    g_assert_null(tw_layer_input_shape(tw_model_doc_layer(doc, 1)));
    must(tw_model_doc_move(doc, 0, 2, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    assert_params(doc, 0, 13 * 32 + 32, 0);
    g_object_unref(doc);
}

static void test_set_param(void)
{
    GError *error = NULL;
    TwModelDoc *doc = small_cnn();
    set_param(doc, 1, "kernel_size", "(5, 5)");
    assert_shape(doc, 1, "(None, 24, 24, 32)");
    assert_params(doc, 1, 25 * 32 + 32, 0);
    set_param(doc, 1, "use_bias", "false");
    assert_params(doc, 1, 25 * 32, 0);
    set_param(doc, 1, "padding", "same");
    assert_shape(doc, 1, "(None, 28, 28, 32)");

    char *before = tw_model_doc_to_json(doc);
    g_assert_false(tw_model_doc_set_param(doc, 1, "filters", "abc", &error));
    g_assert_cmpstr(error->message, ==, "filters: expected a positive integer, got \"abc\"");
    g_clear_error(&error);
    g_assert_false(tw_model_doc_set_param(doc, 1, "padding", "full", &error));
    g_assert_nonnull(strstr(error->message, "padding"));
    g_clear_error(&error);
    char *after = tw_model_doc_to_json(doc);
    g_assert_cmpstr(before, ==, after); /* refused values leave the model as it was */
    g_free(before);
    g_free(after);

    /* The same value again is not an edit. */
    int changed = 0;
    g_signal_connect(doc, "changed", G_CALLBACK(count_signal), &changed);
    set_param(doc, 1, "padding", "same");
    g_assert_cmpint(changed, ==, 0);
    set_param(doc, 1, "padding", "valid");
    g_assert_cmpint(changed, ==, 1);
    g_object_unref(doc);
}

static void test_input_shape_text(void)
{
    GError *error = NULL;
    TwModelDoc *doc = tw_model_doc_new();
    set_input(doc, 0, "[None, 10]");
    assert_shape(doc, 0, "(None, None, 10)");
    set_input(doc, 0, " 28 , 28,1 ");
    assert_shape(doc, 0, "(None, 28, 28, 1)");
    const char *bad[] = {"abc", "28,,1", "0", "1,2,3,4,5,6,7,8", "-2"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_false(tw_model_doc_set_input_shape(doc, 0, bad[i], &error));
        g_assert_nonnull(strstr(error->message, "input shape"));
        g_assert_nonnull(strstr(error->message, bad[i]));
        g_clear_error(&error);
    }
    assert_shape(doc, 0, "(None, 28, 28, 1)");
    g_object_unref(doc);
}

/* ---- invalid models ------------------------------------------------------------ */
/* The message the engine gives for that layer on that input. */
static char *engine_message(TwModelDoc *doc, int index)
{
    const tw_layer_info *prev = tw_model_doc_info(doc, index - 1);
    tw_shape out;
    g_assert_cmpint(tw_layer_infer(tw_model_doc_layer(doc, index), &prev->output, &out, NULL, NULL), ==, -1);
    return g_strdup(tw_last_error());
}

static void test_conv_after_dense(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    set_input(doc, 0, "784");
    insert(doc, 1, "Dense");
    insert(doc, 2, "Conv2D");
    insert(doc, 3, "Flatten");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 2);
    char *expected = engine_message(doc, 2);
    g_assert_cmpstr(tw_model_doc_error(doc), ==, expected);
    g_assert_cmpstr(tw_model_doc_info(doc, 2)->error, ==, expected);
    g_assert_nonnull(strstr(expected, "(None, 32)"));
    g_free(expected);
    g_assert_cmpint(tw_model_doc_info(doc, 3)->output.ndim, ==, 0); /* nothing after the failing layer */
    assert_totals(doc, 784 * 32 + 32, 0);

    /* A Reshape in between makes it work. */
    insert(doc, 2, "Reshape");
    set_param(doc, 2, "target_shape", "4,8,1");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    assert_shape(doc, 3, "(None, 2, 6, 32)");
    g_object_unref(doc);
}

/* A Lambda whose output shape the file does not give, then layers: the
 * document stays a model (it saves and is drawn), the Embedding's count is
 * known, the Dense's depends on the unknown shape and its node says so,
 * and the first reason (the Lambda's) keeps Train off. */
static void test_after_unknown_shape(void)
{
    static const char json[] =
        "{\"class_name\": \"Functional\", \"config\": {\"name\": \"m\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2], \"name\": \"in\"}, "
        "\"name\": \"in\", \"inbound_nodes\": []}, "
        "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"f\", \"function\": \"x\", \"output_shape\": "
        "[\"4wEA\", null, null], \"output_shape_type\": \"lambda\"}, \"name\": \"f\", "
        "\"inbound_nodes\": [[[\"in\", 0, 0, {}]]]}, "
        "{\"class_name\": \"Embedding\", \"config\": {\"name\": \"emb\", \"input_dim\": 10, \"output_dim\": 4}, "
        "\"name\": \"emb\", \"inbound_nodes\": [[[\"f\", 0, 0, {}]]]}, "
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 3}, \"name\": \"d\", "
        "\"inbound_nodes\": [[[\"emb\", 0, 0, {}]]]}], "
        "\"input_layers\": [[\"in\", 0, 0]], \"output_layers\": [[\"d\", 0, 0]]}}";
    TwModelDoc *doc = tw_model_doc_new();
    GError *error = NULL;
    must(tw_model_doc_load_json(doc, json, "lambda.json", &error), error);
    g_assert_nonnull(tw_model_doc_model(doc));
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 4);
    g_assert_true(g_str_has_prefix(tw_model_doc_node_cannot_run(doc, 1), "Lambda 'f': runs Python code"));
    g_assert_null(tw_model_doc_node_cannot_run(doc, 2));
    g_assert_false(tw_model_doc_info(doc, 2)->params_unknown);
    g_assert_cmpint(tw_model_doc_info(doc, 2)->trainable_params, ==, 40);
    g_assert_cmpstr(tw_model_doc_node_cannot_run(doc, 3), ==,
                    "Dense 'd': its parameter count depends on an input shape that is unknown (it comes from Python "
                    "code that cannot run here)");
    g_assert_true(tw_model_doc_info(doc, 3)->params_unknown);
    g_assert_true(g_str_has_prefix(tw_model_doc_error(doc), "Lambda 'f': runs Python code"));
    assert_totals(doc, 40, 0); /* the known part */
    g_object_unref(doc);
}

static void test_pool_bigger_than_input(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    set_input(doc, 0, "2,2,1");
    insert(doc, 1, "MaxPooling2D");
    set_param(doc, 1, "pool_size", "3,3");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 1);
    char *expected = engine_message(doc, 1);
    g_assert_cmpstr(tw_model_doc_error(doc), ==, expected);
    g_free(expected);
    set_param(doc, 1, "padding", "same");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    assert_shape(doc, 1, "(None, 1, 1, 1)");
    g_object_unref(doc);
}

static void test_no_input_shape(void)
{
    GError *error = NULL;
    TwModelDoc *doc = small_cnn();
    set_input(doc, 0, "");
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 2);
    g_assert_cmpstr(tw_model_doc_error(doc), ==, "Add an InputLayer or give the first layer an input shape");
    g_assert_cmpint(tw_model_doc_info(doc, 0)->output.ndim, ==, 0);
    assert_totals(doc, 0, 0);
    must(tw_model_doc_remove(doc, 0, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 1);
    set_input(doc, 0, "28,28,1"); /* the first layer's own input shape */
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    assert_params(doc, 0, 320, 0);
    must(tw_model_doc_remove(doc, 0, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, 0);
    g_assert_nonnull(strstr(tw_model_doc_error(doc), "no layers"));
    g_assert_null(tw_model_doc_info(doc, 0));
    g_object_unref(doc);
}

/* ---- undo and redo ----------------------------------------------------------- */
static gboolean random_edit(TwModelDoc *doc, GRand *rand)
{
    static const char *classes[] = {"Dense", "Dropout", "Conv2D", "MaxPooling2D", "Flatten",
                                    "BatchNormalization", "ReLU", "Reshape", "InputLayer"};
    int n = tw_model_doc_n_layers(doc);
    int at = g_rand_int_range(rand, 0, MAX(n, 1));
    char text[32];
    switch (g_rand_int_range(rand, 0, 7)) {
    case 0:
    case 1:
        return tw_model_doc_insert(doc, g_rand_int_range(rand, 0, n + 1),
                                   classes[g_rand_int_range(rand, 0, G_N_ELEMENTS(classes))], NULL);
    case 2:
        return tw_model_doc_remove(doc, at, NULL);
    case 3:
        return tw_model_doc_move(doc, at, g_rand_int_range(rand, 0, MAX(n, 1)), NULL);
    case 4:
        return tw_model_doc_duplicate(doc, at, NULL);
    case 5:
        snprintf(text, sizeof text, "%d", g_rand_int_range(rand, 1, 100));
        return tw_model_doc_set_param(doc, at, "units", text, NULL) ||
               tw_model_doc_set_param(doc, at, "rate", "0.25", NULL);
    default:
        snprintf(text, sizeof text, "layer_%d", g_rand_int_range(rand, 0, 1000));
        return tw_model_doc_rename_layer(doc, at, text, NULL);
    }
}

static void test_undo_redo_exact(void)
{
    GRand *rand = g_rand_new_with_seed(6);
    TwModelDoc *doc = tw_model_doc_new();
    GPtrArray *states = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(states, tw_model_doc_to_json(doc));
    while (states->len < 21) {
        if (!random_edit(doc, rand))
            continue;
        char *json = tw_model_doc_to_json(doc);
        if (!strcmp(json, g_ptr_array_index(states, states->len - 1))) {
            g_free(json);
            continue;
        }
        g_ptr_array_add(states, json);
        g_assert_true(tw_model_doc_modified(doc));
    }
    for (int i = 19; i >= 0; i--) {
        g_assert_true(tw_model_doc_undo(doc));
        char *json = tw_model_doc_to_json(doc);
        g_assert_cmpstr(json, ==, g_ptr_array_index(states, i));
        g_free(json);
    }
    g_assert_false(tw_model_doc_can_undo(doc));
    g_assert_false(tw_model_doc_undo(doc));
    g_assert_false(tw_model_doc_modified(doc));
    for (int i = 1; i <= 20; i++) {
        g_assert_true(tw_model_doc_redo(doc));
        char *json = tw_model_doc_to_json(doc);
        g_assert_cmpstr(json, ==, g_ptr_array_index(states, i));
        /* What the doc shows is what its JSON reads back as; the JSON adds
         * the boxes' positions under a key of our own at the end. */
        char *model_json = tw_model_to_json(tw_model_doc_model(doc));
        model_json[strlen(model_json) - 1] = 0;
        g_assert_true(g_str_has_prefix(json, model_json));
        g_assert_nonnull(strstr(json + strlen(model_json), "\"twb_designer\": {\"positions\""));
        free(model_json);
        g_free(json);
    }
    g_assert_false(tw_model_doc_redo(doc));

    /* A new edit after an undo drops the redo history. */
    g_assert_true(tw_model_doc_undo(doc));
    g_assert_true(tw_model_doc_can_redo(doc));
    insert(doc, 0, "Dense");
    g_assert_false(tw_model_doc_can_redo(doc));
    g_ptr_array_unref(states);
    g_rand_free(rand);
    g_object_unref(doc);
}

static void test_undo_restores_inference(void)
{
    TwModelDoc *doc = small_cnn();
    int changed = 0;
    g_signal_connect(doc, "changed", G_CALLBACK(count_signal), &changed);
    set_param(doc, 1, "filters", "8");
    assert_params(doc, 1, 80, 0);
    g_assert_true(tw_model_doc_undo(doc));
    assert_params(doc, 1, 320, 0);
    g_assert_true(tw_model_doc_redo(doc));
    assert_params(doc, 1, 80, 0);
    g_assert_cmpint(changed, ==, 3);
    g_object_unref(doc);
}

/* ---- files ------------------------------------------------------------------- */
static void test_save_load(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-model-doc-XXXXXX", &error);
    g_assert_no_error(error);
    char *path = g_build_filename(dir, "cnn.json", NULL);
    TwModelDoc *doc = small_cnn();
    g_assert_true(tw_model_doc_modified(doc));
    must(tw_model_doc_save(doc, path, &error), error);
    g_assert_false(tw_model_doc_modified(doc));
    g_assert_cmpstr(tw_model_doc_path(doc), ==, path);
    g_assert_true(tw_model_doc_can_undo(doc)); /* saving keeps the history */

    TwModelDoc *again = tw_model_doc_new();
    must(tw_model_doc_load(again, path, &error), error);
    char *a = tw_model_doc_to_json(doc), *b = tw_model_doc_to_json(again);
    g_assert_cmpstr(a, ==, b);
    g_assert_false(tw_model_doc_can_undo(again));
    g_assert_false(tw_model_doc_modified(again));
    assert_params(again, 1, 320, 0);

    char *missing = g_build_filename(dir, "none.json", NULL);
    g_assert_false(tw_model_doc_load(again, missing, &error));
    g_assert_nonnull(strstr(error->message, "none.json"));
    g_clear_error(&error);
    g_assert_false(tw_model_doc_load_json(again, "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{]}}",
                                          "broken.json", &error));
    g_assert_nonnull(strstr(error->message, "broken.json"));
    g_clear_error(&error);
    char *unchanged = tw_model_doc_to_json(again);
    g_assert_cmpstr(unchanged, ==, b); /* a failed load leaves the model */
    /* A user's layer class (Keras 3: module and registered_name): opens,
     * keeps the file's class to write it back, and cannot run, naming it. */
    if (!tw_model_doc_load_json(again,
                                "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": "
                                "[{\"module\": \"my_project.layers\", \"class_name\": \"MyLayer\", \"config\": "
                                "{\"name\": \"mine\"}, \"registered_name\": \"MyPkg>MyLayer\"}]}}",
                                "custom.json", &error))
        g_error("custom.json: %s", error->message);
    char *custom = tw_model_doc_to_json(again);
    g_assert_nonnull(strstr(custom, "\"MyPkg>MyLayer\""));
    g_free(custom);
    g_assert_cmpint(tw_layer_check_runnable(tw_model_doc_model(again)), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "UserLayer 'mine': its class \"MyLayer\" (registered_name "
                                             "\"MyPkg>MyLayer\", module \"my_project.layers\") is a user-defined "
                                             "class whose Python code is not in the file"));
    tw_error_clear();

    g_free(unchanged);
    g_free(a);
    g_free(b);
    g_remove(path);
    g_rmdir(dir);
    g_free(missing);
    g_free(path);
    g_free(dir);
    g_object_unref(again);
    g_object_unref(doc);
}

/* Keras' "build_input_shape" on the model becomes the first layer's own. */
static void test_model_input_shape_moves_to_first_layer(void)
{
    GError *error = NULL;
    const char *json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", "
                       "\"build_input_shape\": [null, 3], \"layers\": ["
                       "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 4}}]}}";
    TwModelDoc *doc = tw_model_doc_new();
    must(tw_model_doc_load_json(doc, json, "m.json", &error), error);
    g_assert_nonnull(tw_layer_input_shape(tw_model_doc_layer(doc, 0)));
    assert_params(doc, 0, 16, 0);
    set_input(doc, 0, "5");
    assert_params(doc, 0, 24, 0);
    g_object_unref(doc);
}

static void test_corpus(void)
{
    char *dir = repo_file("..", "shared", "corpus", "keras", NULL);
    char *tsv_path = g_build_filename(dir, "expected.tsv", NULL);
    char *tsv = NULL;
    if (!g_file_get_contents(tsv_path, &tsv, NULL, NULL)) {
        g_test_skip("the Keras corpus (../shared/corpus/keras) is not there");
        g_free(tsv_path);
        g_free(dir);
        return;
    }
    char **lines = g_strsplit(tsv, "\n", -1);
    int checked = 0;
    for (int i = 1; lines[i]; i++) {
        char **f = g_strsplit(lines[i], "\t", -1);
        if (g_strv_length(f) >= 4) {
            GError *error = NULL;
            char *path = g_build_filename(dir, f[0], NULL);
            TwModelDoc *doc = tw_model_doc_new();
            must(tw_model_doc_load(doc, path, &error), error);
            g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
            assert_totals(doc, g_ascii_strtoll(f[2], NULL, 10), g_ascii_strtoll(f[3], NULL, 10));
            g_assert_cmpstr(tw_model_doc_path(doc), ==, path);
            g_object_unref(doc);
            g_free(path);
            checked++;
        }
        g_strfreev(f);
    }
    g_assert_cmpint(checked, >=, 10);
    g_strfreev(lines);
    g_free(tsv);
    g_free(tsv_path);
    g_free(dir);
}

static void test_template(void)
{
    GError *error = NULL;
    char *path = repo_file("examples", "models", "cnn_fashion_mnist.json", NULL);
    TwModelDoc *doc = tw_model_doc_new();
    must(tw_model_doc_load(doc, path, &error), error);
    g_assert_cmpint(tw_model_doc_error_index(doc), ==, -1);
    int n = tw_model_doc_n_layers(doc);
    assert_shape(doc, 1, "(None, 26, 26, 32)");
    assert_params(doc, 1, 320, 0);
    assert_shape(doc, n - 1, "(None, 10)");

    tw_model *copy = tw_model_doc_copy_model(doc, &error);
    g_assert_no_error(error);
    g_assert_true(copy != tw_model_doc_model(doc));
    int64_t total = 0, trainable = 0;
    g_assert_cmpint(tw_model_count_params(copy, &total, &trainable, NULL), ==, 0);
    int64_t doc_trainable;
    tw_model_doc_totals(doc, &doc_trainable, NULL);
    g_assert_cmpint(trainable, ==, doc_trainable);
    g_assert_cmpint(tw_model_build(copy, NULL, 1), ==, 0); /* independent: building it leaves the doc editable */
    insert(doc, n, "Dropout");
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, n + 1);
    tw_layer_unref(copy);
    g_free(path);
    g_object_unref(doc);
}

/* "changing" comes before every edit, undo and load touches the model, and
 * an edit made in its handler (the property editor committing typed text)
 * is a step of its own before the edit that caused it. */
typedef struct {
    int changing, layers_seen;
    gboolean rename;
} changing_log;

static void on_changing(TwModelDoc *doc, changing_log *log)
{
    log->changing++;
    log->layers_seen = tw_model_doc_n_layers(doc);
    if (log->rename) {
        log->rename = FALSE;
        GError *error = NULL;
        must(tw_model_doc_rename_layer(doc, 0, "first", &error), error);
    }
}

static void test_changing_signal(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    changing_log log = {0};
    g_signal_connect(doc, "changing", G_CALLBACK(on_changing), &log);
    insert(doc, 1, "Flatten");
    g_assert_cmpint(log.changing, ==, 1);
    g_assert_cmpint(log.layers_seen, ==, 1); /* before the insert */
    log.rename = TRUE;
    insert(doc, 2, "Dense");
    g_assert_cmpint(log.changing, ==, 3); /* the insert's, then the rename's */
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(doc, 0)), ==, "first");
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 3);
    g_assert_true(tw_model_doc_undo(doc));
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, 2);
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(doc, 0)), ==, "first");
    g_assert_true(tw_model_doc_undo(doc));
    g_assert_cmpstr(tw_layer_name(tw_model_doc_layer(doc, 0)), !=, "first");
    g_assert_cmpint(log.changing, ==, 5);
    g_object_unref(doc);
}

/* The positions kept in a nested model's entry: d1 of base at (x, y), or
 * FALSE when the entry keeps none. */
static gboolean kept_in_entry(const char *json, guint entry, const char *layer, double *x, double *y)
{
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *top = json_node_get_object(json_parser_get_root(parser));
    JsonObject *object = entry == G_MAXUINT
                             ? top
                             : json_array_get_object_element(
                                   json_object_get_array_member(json_object_get_object_member(top, "config"), "layers"),
                                   entry);
    JsonNode *ours = json_object_get_member(object, "twb_designer");
    gboolean kept = ours != NULL;
    if (kept) {
        JsonArray *xy = json_array_get_array_element(
            json_object_get_array_member(
                json_object_get_object_member(json_node_get_object(ours), "positions"), layer),
            0);
        *x = json_array_get_double_element(xy, 0);
        *y = json_array_get_double_element(xy, 1);
    }
    g_object_unref(parser);
    return kept;
}

#define NESTED_KEPT                                                                                                 \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["                              \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"in\"}},"           \
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"base\", \"layers\": ["                               \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"base_in\"}},"      \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 4}}]},"                                  \
    " \"twb_designer\": {\"positions\": {\"base_in\": [[10, 20]], \"d1\": [[30.5, 140.0]]}}},"                     \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 2}}]}}"

/* Positions inside a nested model, as a file keeps them in the model's
 * entry: a drill-down's JSON has them at its top, the saved JSON in the
 * entry again; a replace takes the new ones in one undoable step; a
 * rename keeps them, and so does a copy pasted into another document;
 * a removal drops them (and its undo brings them back). */
static void test_nested_positions(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    GError *error = NULL;
    g_assert_true(tw_model_doc_load_json(doc, NESTED_KEPT, "nested.json", &error));
    double x, y;
    char *inner = tw_model_doc_nested_json(doc, 1);
    g_assert_true(kept_in_entry(inner, G_MAXUINT, "d1", &x, &y));
    g_assert_cmpfloat(x, ==, 30.5);
    g_assert_cmpfloat(y, ==, 140.0);
    g_assert_nonnull(tw_model_from_json(inner, strlen(inner), "inner"));
    char *saved = tw_model_doc_to_json(doc);
    g_assert_true(kept_in_entry(saved, 1, "d1", &x, &y));
    g_assert_cmpfloat(x, ==, 30.5);
    g_assert_false(tw_model_doc_modified(doc));

    /* The nested model's JSON with d1 elsewhere, as its own document saves it. */
    char *moved = g_strdup(inner);
    char *at = strstr(moved, "[[30.5, 140.0]]");
    g_assert_nonnull(at);
    memcpy(at, "[[77.0, 140.0]]", strlen("[[77.0, 140.0]]"));
    g_assert_true(tw_model_doc_replace_nested(doc, 1, moved, &error));
    char *now = tw_model_doc_to_json(doc);
    g_assert_true(kept_in_entry(now, 1, "d1", &x, &y));
    g_assert_cmpfloat(x, ==, 77.0);
    g_free(now);
    g_assert_true(tw_model_doc_undo(doc));
    now = tw_model_doc_to_json(doc);
    g_assert_cmpstr(now, ==, saved);
    g_free(now);
    g_assert_true(tw_model_doc_redo(doc));

    g_assert_true(tw_model_doc_rename_layer(doc, 1, "trunk", &error));
    now = tw_model_doc_to_json(doc);
    g_assert_true(kept_in_entry(now, 1, "d1", &x, &y));
    g_assert_cmpfloat(x, ==, 77.0);
    g_free(now);
    /* Copied to another document through the clipboard's text, the
     * nested model keeps its inner layout there. */
    char *copied = tw_model_doc_copy_nodes(doc, (int[]){1}, 1);
    TwModelDoc *other = tw_model_doc_new();
    g_assert_cmpint(tw_model_doc_paste(other, copied, 0, 0, &error), ==, 1);
    char *pasted = tw_model_doc_nested_json(other, 1);
    g_assert_true(kept_in_entry(pasted, G_MAXUINT, "d1", &x, &y));
    g_assert_cmpfloat(x, ==, 77.0);
    g_free(pasted);
    g_object_unref(other);
    /* A clipboard text from elsewhere whose tree is not an object: pasted
     * without the positions. */
    char *cut = strstr(copied, ", \"nested\": ");
    g_assert_nonnull(cut);
    *cut = 0;
    char *odd = g_strconcat(copied, ", \"nested\": {\"trunk\": 5}}", NULL);
    other = tw_model_doc_new();
    g_assert_cmpint(tw_model_doc_paste(other, odd, 0, 0, &error), ==, 1);
    pasted = tw_model_doc_nested_json(other, 1);
    g_assert_false(kept_in_entry(pasted, G_MAXUINT, "d1", &x, &y));
    g_free(pasted);
    g_free(odd);
    g_free(copied);
    g_object_unref(other);
    char *renamed = tw_model_doc_state(doc);
    g_assert_true(tw_model_doc_remove(doc, 1, &error));
    now = tw_model_doc_state(doc);
    g_assert_null(strstr(now, "77.0"));
    g_free(now);
    g_assert_true(tw_model_doc_undo(doc));
    now = tw_model_doc_state(doc);
    g_assert_cmpstr(now, ==, renamed);
    g_free(now);
    g_free(renamed);
    g_free(moved);
    g_free(saved);
    g_free(inner);
    g_object_unref(doc);
}

/* A group of edits is one undo step: later edits change where it leads,
 * one back to the start takes it away, an undo ends it. */
static void test_group(void)
{
    TwModelDoc *doc = tw_model_doc_new();
    insert(doc, 1, "Dense");
    char *start = tw_model_doc_state(doc);
    tw_model_doc_begin_group(doc);
    set_param(doc, 1, "units", "5");
    set_param(doc, 1, "units", "7");
    char *seven = tw_model_doc_state(doc);
    g_assert_true(tw_model_doc_undo(doc));
    char *state = tw_model_doc_state(doc);
    g_assert_cmpstr(state, ==, start); /* both edits, one step */
    g_free(state);
    g_assert_true(tw_model_doc_redo(doc));
    state = tw_model_doc_state(doc);
    g_assert_cmpstr(state, ==, seven);
    g_free(state);
    /* After the undo and redo, the group's next edit is a step of its own. */
    set_param(doc, 1, "units", "9");
    g_assert_true(tw_model_doc_undo(doc));
    state = tw_model_doc_state(doc);
    g_assert_cmpstr(state, ==, seven);
    g_free(state);
    /* Back where a group's step began: no step. */
    set_param(doc, 1, "units", "3");
    set_param(doc, 1, "units", "7");
    g_assert_true(tw_model_doc_undo(doc));
    state = tw_model_doc_state(doc);
    g_assert_cmpstr(state, ==, start);
    g_free(state);
    g_assert_true(tw_model_doc_redo(doc));
    tw_model_doc_end_group(doc);
    /* Ended: each edit its own step again. */
    set_param(doc, 1, "units", "4");
    set_param(doc, 1, "units", "6");
    g_assert_true(tw_model_doc_undo(doc));
    state = tw_model_doc_state(doc);
    g_assert_nonnull(strstr(state, "\"units\": 4"));
    g_free(state);
    g_free(seven);
    g_free(start);
    g_object_unref(doc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ui/model_doc/new", test_new);
    g_test_add_func("/ui/model_doc/insert_shapes", test_insert_shapes);
    g_test_add_func("/ui/model_doc/unique_names", test_unique_names);
    g_test_add_func("/ui/model_doc/move_remove_duplicate", test_move_remove_duplicate);
    g_test_add_func("/ui/model_doc/input_shape_stays_on_top", test_input_shape_stays_on_top);
    g_test_add_func("/ui/model_doc/set_param", test_set_param);
    g_test_add_func("/ui/model_doc/input_shape_text", test_input_shape_text);
    g_test_add_func("/ui/model_doc/invalid/conv_after_dense", test_conv_after_dense);
    g_test_add_func("/ui/model_doc/invalid/pool_bigger_than_input", test_pool_bigger_than_input);
    g_test_add_func("/ui/model_doc/after_unknown_shape", test_after_unknown_shape);
    g_test_add_func("/ui/model_doc/invalid/no_input_shape", test_no_input_shape);
    g_test_add_func("/ui/model_doc/undo_redo_exact", test_undo_redo_exact);
    g_test_add_func("/ui/model_doc/undo_restores_inference", test_undo_restores_inference);
    g_test_add_func("/ui/model_doc/save_load", test_save_load);
    g_test_add_func("/ui/model_doc/model_input_shape", test_model_input_shape_moves_to_first_layer);
    g_test_add_func("/ui/model_doc/corpus", test_corpus);
    g_test_add_func("/ui/model_doc/template", test_template);
    g_test_add_func("/ui/model_doc/changing_signal", test_changing_signal);
    g_test_add_func("/ui/model_doc/nested_positions", test_nested_positions);
    g_test_add_func("/ui/model_doc/group", test_group);
    return g_test_run();
}
