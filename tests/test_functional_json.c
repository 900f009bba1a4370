/* Functional models in Keras JSON: the shared corpus of real files
 * (../shared/corpus/keras-functional: Keras' own counts in expected.tsv),
 * read -> write -> read in Keras 2's and Keras 3's forms, double-encoded
 * files, bad files refused with their place and shapes, Lambda layers
 * that open but cannot run, and checkpoints of a Functional model. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "halves_layer.h"
#include "tw/checkpoint.h"
#include "tw/model_file.h"

static char *corpus_dir(void)
{
    return g_test_build_filename(G_TEST_DIST, "..", "..", "shared", "corpus", "keras-functional", NULL);
}

/* Write, read, write again: the same text; the model read has the counts. */
static void check_round_trip(tw_model *model, tw_keras_json_format format, const char *file)
{
    int64_t total, trainable, frozen, t2, tr2, f2;
    g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &frozen), ==, 0);
    char *first = tw_model_to_json_format(model, format);
    g_assert_nonnull(first);
    tw_model *again = tw_model_from_json(first, strlen(first), file);
    if (!again)
        g_error("%s, written in form %d, does not read back: %s", file, format + 2, tw_last_error());
    char *second = tw_model_to_json_format(again, format);
    g_assert_cmpstr(first, ==, second);
    g_assert_cmpint(tw_model_count_params(again, &t2, &tr2, &f2), ==, 0);
    g_assert_cmpint(t2, ==, total);
    g_assert_cmpint(tr2, ==, trainable);
    g_assert_cmpint(f2, ==, frozen);
    free(first);
    free(second);
    tw_layer_unref(again);
}

/* One corpus of the shared folder and how many files its expected.tsv lists. */
typedef struct {
    const char *kind;
    int files;
} corpus;

static const corpus corpora[] = {{"keras-functional", 13}, {"keras", 12}};

/* Every file of a corpus opens with Keras' counts, summarizes, and writes
 * and reads back in both forms: one refused fails the test, naming it. */
static void test_corpus(gconstpointer data)
{
    const corpus *c = data;
    char *dir = g_test_build_filename(G_TEST_DIST, "..", "..", "shared", "corpus", c->kind, NULL);
    char *tsv = g_build_filename(dir, "expected.tsv", NULL);
    char *text = NULL;
    if (!g_file_get_contents(tsv, &text, NULL, NULL)) {
        char *why = g_strdup_printf("the shared corpus (%s) is not here", c->kind);
        g_test_skip(why);
        g_free(why);
        g_free(tsv);
        g_free(dir);
        return;
    }
    char **lines = g_strsplit(text, "\n", -1);
    int files = 0;
    for (int i = 1; lines[i]; i++) {
        char **f = g_strsplit(lines[i], "\t", -1);
        if (g_strv_length(f) < 4) {
            g_strfreev(f);
            continue;
        }
        files++;
        char *path = g_build_filename(dir, f[0], NULL);
        tw_model *m = tw_model_load(path);
        if (!m)
            g_error("%s/%s: refused: %s", c->kind, f[0], tw_last_error());
        int64_t total, trainable, frozen;
        g_assert_cmpint(tw_model_count_params(m, &total, &trainable, &frozen), ==, 0);
        if (total != g_ascii_strtoll(f[1], NULL, 10) || trainable != g_ascii_strtoll(f[2], NULL, 10) ||
            frozen != g_ascii_strtoll(f[3], NULL, 10))
            g_error("%s: %lld total, %lld trainable, %lld non-trainable; Keras printed %s, %s, %s", f[0],
                    (long long)total, (long long)trainable, (long long)frozen, f[1], f[2], f[3]);
        char *summary = tw_model_summary(m, 0);
        g_assert_nonnull(summary);
        free(summary);
        check_round_trip(m, TW_KERAS_JSON_2, f[0]);
        check_round_trip(m, TW_KERAS_JSON_3, f[0]);
        tw_layer_unref(m);
        g_free(path);
        g_strfreev(f);
    }
    g_test_message("%s: all %d files open with Keras' counts", c->kind, files);
    g_assert_cmpint(files, ==, c->files);
    g_strfreev(lines);
    g_free(text);
    g_free(tsv);
    g_free(dir);
}

/* The rows of a Keras 2 summary that name a layer, "name (Class)", as
 * name -> "shape|params" (the first line of each; params without commas). */
static GHashTable *summary_rows(const char *text)
{
    GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    char **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        GRegex *re = g_regex_new("^(\\S+) \\(\\w+\\)\\s+(\\(.*?\\)|\\[.*?\\]|\\?|multiple)\\s+([0-9,?]+)", 0, 0,
                                 NULL);
        GMatchInfo *mi;
        if (g_regex_match(re, lines[i], 0, &mi)) {
            char *params = g_match_info_fetch(mi, 3), *shape = g_match_info_fetch(mi, 2);
            GString *digits = g_string_new(NULL);
            for (const char *c = params; *c; c++)
                if (*c != ',')
                    g_string_append_c(digits, *c);
            g_hash_table_insert(rows, g_match_info_fetch(mi, 1), g_strdup_printf("%s|%s", shape, digits->str));
            g_string_free(digits, TRUE);
            g_free(params), g_free(shape);
        }
        g_match_info_free(mi);
        g_regex_unref(re);
    }
    g_strfreev(lines);
    return rows;
}

/* 04: a siamese model whose output is a Lambda with its output_shape a
 * Python lambda, in a Keras 2.2.4 file that records no shapes. Keras ran
 * the lambda and printed (None, 1); here the shape is unknown ("?"),
 * every other row and the counts are Keras' (the facts' summary), it
 * writes and reads back, and training is refused naming the Lambda. */
static void test_corpus_unknown_lambda_shape(void)
{
    char *dir = corpus_dir();
    char *path = g_build_filename(dir, "04-siamese-conv1d-bilstm-shared.json", NULL);
    char *facts = g_build_filename(dir, "summaries", "04-siamese-conv1d-bilstm-shared.summary.txt", NULL);
    char *keras = NULL;
    if (!g_file_get_contents(facts, &keras, NULL, NULL)) {
        g_test_skip("the shared corpus (keras-functional) is not here");
        g_free(path), g_free(facts), g_free(dir);
        return;
    }
    tw_model *m = tw_model_load(path);
    if (!m)
        g_error("04 does not open: %s", tw_last_error());
    char *ours = tw_model_summary(m, 0);
    g_assert_nonnull(ours);
    GHashTable *want = summary_rows(keras), *got = summary_rows(ours);
    g_assert_cmpint(g_hash_table_size(want), ==, 7);
    g_assert_cmpint(g_hash_table_size(got), ==, 7);
    GHashTableIter it;
    gpointer name, row;
    g_hash_table_iter_init(&it, want);
    while (g_hash_table_iter_next(&it, &name, &row)) {
        const char *mine = g_hash_table_lookup(got, name);
        g_assert_nonnull(mine);
        if (!strcmp(name, "lambda_1")) {
            g_assert_cmpstr(row, ==, "(None, 1)|0");
            g_assert_cmpstr(mine, ==, "?|0");
        } else if (g_str_has_prefix(name, "input_")) {
            /* Keras 2.2.4 printed an InputLayer's shape bare, later ones as a list */
            char *listed = g_strdup_printf("[%.*s]|0", (int)(strchr(row, '|') - (char *)row), (char *)row);
            g_assert_cmpstr(mine, ==, listed);
            g_free(listed);
        } else {
            g_assert_cmpstr(mine, ==, row);
        }
    }
    g_assert_nonnull(strstr(ours, "Total params: 24,662,908\nTrainable params: 903,808\n"
                                  "Non-trainable params: 23,759,100\n"));
    g_assert_nonnull(strstr(keras, "Total params: 24,662,908\nTrainable params: 903,808\n"
                                   "Non-trainable params: 23,759,100\n"));
    g_assert_nonnull(strstr(ours, "Output Shape ?: not known here"));
    check_round_trip(m, TW_KERAS_JSON_2, "04");
    check_round_trip(m, TW_KERAS_JSON_3, "04");
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "Lambda 'lambda_1': runs Python code saved in the Keras file (a lambda), which cannot run here; "
                    "the model can be summarized but not run or trained");
    tw_error_clear();
    g_hash_table_unref(want), g_hash_table_unref(got);
    free(ours);
    g_free(keras);
    tw_layer_unref(m);
    g_free(path), g_free(facts), g_free(dir);
}

/* ---- small files ---------------------------------------------------------------- */

#define INPUT(name, dims) \
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": " dims ", \"name\": \"" name "\"}, " \
    "\"name\": \"" name "\", \"inbound_nodes\": []}"
#define DENSE(name, units, from) \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"" name "\", \"units\": " units "}, \"name\": \"" name \
    "\", \"inbound_nodes\": [[[\"" from "\", 0, 0, {}]]]}"
#define MODEL(layers, ins, outs) \
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"m\", \"layers\": [" layers "], \"input_layers\": " ins \
    ", \"output_layers\": " outs "}}"

#define MODEL_INNER \
    "{\"name\": \"inner\", \"layers\": [" INPUT("i", "[null, 4]") ", " DENSE("d", "2", "i") \
    "], \"input_layers\": [[\"i\", 0, 0]], \"output_layers\": [[\"d\", 0, 0]]}"

static void assert_refused(const char *json, const char *message)
{
    tw_model *m = tw_model_from_json(json, strlen(json), "model.json");
    if (m)
        g_error("read, though it should not be: %s", json);
    g_assert_cmpstr(tw_last_error(), ==, message);
}

static void test_bad_files(void)
{
    /* Add of (None, 32) and (None, 16), at the second input. */
    assert_refused(MODEL(INPUT("in", "[null, 8]") ", " DENSE("a", "32", "in") ", " DENSE("b", "16", "in")
                         ", {\"class_name\": \"Add\", \"config\": {\"name\": \"add_1\"}, \"name\": \"add_1\", "
                         "\"inbound_nodes\": [[[\"a\", 0, 0, {}], [\"b\", 0, 0, {}]]]}",
                         "[[\"in\", 0, 0]]", "[[\"add_1\", 0, 0]]"),
                   "model.json: layers[3] 'add_1'.inbound_nodes[0][1]: Add 'add_1': inputs (None, 32) and (None, 16) "
                   "cannot be added");
    /* A layer that does not exist, a node that does not exist. */
    assert_refused(MODEL(INPUT("in", "[null, 8]") ", " DENSE("a", "4", "nowhere"), "[[\"in\", 0, 0]]",
                         "[[\"a\", 0, 0]]"),
                   "model.json: layers[1] 'a'.inbound_nodes[0][0]: no layer named 'nowhere' in the model");
    assert_refused(MODEL(INPUT("in", "[null, 8]") ", "
                         "{\"class_name\": \"Dense\", \"config\": {\"name\": \"a\", \"units\": 4}, \"name\": \"a\", "
                         "\"inbound_nodes\": [[[\"in\", 2, 0, {}]]]}",
                         "[[\"in\", 0, 0]]", "[[\"a\", 0, 0]]"),
                   "model.json: layers[1] 'a'.inbound_nodes[0][0]: layer 'in' has no node 2 (it is called 1 time)");
    /* A cycle: a feeds b, b feeds a. */
    assert_refused(MODEL(INPUT("in", "[null, 4]") ", " DENSE("a", "4", "b") ", " DENSE("b", "4", "a"),
                         "[[\"in\", 0, 0]]", "[[\"b\", 0, 0]]"),
                   "model.json: layers[1] 'a'.inbound_nodes[0]: waits on a call that waits on it: the inbound_nodes "
                   "form a cycle");
    /* An input that no output uses. */
    assert_refused(MODEL(INPUT("in", "[null, 4]") ", " INPUT("lost", "[null, 2]") ", " DENSE("a", "4", "in"),
                         "[[\"in\", 0, 0], [\"lost\", 0, 0]]", "[[\"a\", 0, 0]]"),
                   "model.json: config: model 'm': input 'lost' is not connected to any output");
    /* A shared Dense called on 4 features, then 2. */
    assert_refused(MODEL(INPUT("x", "[null, 4]") ", " INPUT("y", "[null, 2]") ", "
                         "{\"class_name\": \"Dense\", \"config\": {\"name\": \"shared\", \"units\": 3}, \"name\": "
                         "\"shared\", \"inbound_nodes\": [[[\"x\", 0, 0, {}]], [[\"y\", 0, 0, {}]]]}",
                         "[[\"x\", 0, 0], [\"y\", 0, 0]]", "[[\"shared\", 0, 0], [\"shared\", 1, 0]]"),
                   "model.json: layers[2] 'shared'.inbound_nodes[1]: Dense 'shared': is shared, and input (None, 2) "
                   "needs its weight kernel to be (2, 3), but it is (4, 3)");
    /* A nested model whose input does not match. */
    assert_refused(MODEL(INPUT("x", "[null, 5]") ", "
                         "{\"class_name\": \"Functional\", \"config\": " MODEL_INNER ", \"name\": \"inner\", "
                         "\"inbound_nodes\": [[[\"x\", 0, 0, {}]]]}",
                         "[[\"x\", 0, 0]]", "[[\"inner\", 1, 0]]"),
                   "model.json: layers[1] 'inner'.inbound_nodes[0]: model 'inner': input 0 ('i') expects (None, 4), "
                   "got (None, 5)");
    /* Keras 3 form: a keras_history to a missing layer, with its place. */
    assert_refused(MODEL(INPUT("in", "[null, 8]") ", "
                         "{\"class_name\": \"Dense\", \"config\": {\"name\": \"a\", \"units\": 4}, \"name\": \"a\", "
                         "\"inbound_nodes\": [{\"args\": [{\"class_name\": \"__keras_tensor__\", \"config\": "
                         "{\"keras_history\": [\"gone\", 0, 0]}}], \"kwargs\": {}}]}",
                         "[\"in\", 0, 0]", "[\"a\", 0, 0]"),
                   "model.json: layers[1] 'a'.inbound_nodes[0].args[0].config.keras_history: no layer named 'gone' "
                   "in the model");
}

/* A two-input model with a shared layer, a nested Sequential and a
 * Lambda of declared shape, as json.dump(model.to_json()) writes it: one
 * JSON string. It opens, counts and summarizes; running it names the
 * Lambda. */
static void test_double_encoded_and_lambda(void)
{
    const char *inner =
        MODEL(INPUT("a", "[null, 4]") ", " INPUT("b", "[null, 4]") ", "
              "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"tower\", \"layers\": ["
              "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"t_in\"}}, "
              "{\"class_name\": \"Dense\", \"config\": {\"name\": \"t_dense\", \"units\": 3}}]}, "
              "\"name\": \"tower\", \"inbound_nodes\": [[[\"a\", 0, 0, {}]], [[\"b\", 0, 0, {}]]]}, "
              "{\"class_name\": \"Concatenate\", \"config\": {\"name\": \"cat\", \"axis\": -1}, \"name\": \"cat\", "
              "\"inbound_nodes\": [[[\"tower\", 1, 0, {}], [\"tower\", 2, 0, {}]]]}, "
              "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"distance\", \"function\": [\"4wEAAA==\", null, null], "
              "\"function_type\": \"lambda\", \"output_shape\": [1], \"output_shape_type\": \"raw\"}, "
              "\"name\": \"distance\", \"inbound_nodes\": [[[\"cat\", 0, 0, {}]]]}",
              "[[\"a\", 0, 0], [\"b\", 0, 0]]", "[[\"distance\", 0, 0]]");
    /* The JSON string of that text. */
    GString *outer = g_string_new("\"");
    for (const char *c = inner; *c; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_c(outer, '\\');
        g_string_append_c(outer, *c);
    }
    g_string_append_c(outer, '"');
    tw_model *m = tw_model_from_json(outer->str, outer->len, "encoded.json");
    if (!m)
        g_error("%s", tw_last_error());
    int64_t total;
    g_assert_cmpint(tw_model_count_params(m, &total, NULL, NULL), ==, 0);
    g_assert_cmpint(total, ==, 15); /* the shared tower once */
    char *summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "distance (Lambda)               (None, 1)            0           cat[0][0]"));
    g_assert_nonnull(strstr(summary, "tower (Sequential)              (None, 3)            15          a[0][0]\n"
                                     "                                                                 b[0][0]"));
    free(summary);
    check_round_trip(m, TW_KERAS_JSON_2, "encoded.json");
    check_round_trip(m, TW_KERAS_JSON_3, "encoded.json");
    /* Keras 2 numbers the nested Sequential's calls from 1. */
    char *json = tw_model_to_json(m);
    g_assert_nonnull(strstr(json, "[[\"tower\", 1, 0, {}], [\"tower\", 2, 0, {}]]"));
    free(json);
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 4));
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_model_predict_n(m, 2, (tw_tensor *[]){x, x}, 2, out), ==, -1);
    const char *expected = "Lambda 'distance': runs Python code saved in the Keras file (a lambda), which cannot "
                           "run here; the model can be summarized but not run or trained";
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_scope_end();
    /* Asked before running: the same reason, from the layer or the model
     * holding it; the Sequential tower runs. */
    tw_error_clear();
    g_assert_cmpint(tw_layer_check_runnable(tw_model_find_layer(m, "tower")), ==, 0);
    g_assert_cmpint(tw_layer_check_runnable(tw_model_find_layer(m, "distance")), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_error_clear();
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_layer_unref(m);
    g_string_free(outer, TRUE);
    /* A Lambda whose output shape is Python too, the model's output: its
     * shape is unknown, the rest is counted. */
    const char *code_shape = MODEL(INPUT("in", "[null, 4]") ", "
                                   "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"f\", \"function\": \"x\", "
                                   "\"output_shape\": [\"4wEA\", null, null], \"output_shape_type\": \"lambda\"}, "
                                   "\"name\": \"f\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]]]}",
                                   "[[\"in\", 0, 0]]", "[[\"f\", 0, 0]]");
    m = tw_model_from_json(code_shape, strlen(code_shape), "model.json");
    if (!m)
        g_error("%s", tw_last_error());
    summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "f (Lambda)                      ?                    0           in[0][0]\n"));
    g_assert_nonnull(strstr(summary, "Total params: 0\n"));
    free(summary);
    check_round_trip(m, TW_KERAS_JSON_2, "model.json");
    check_round_trip(m, TW_KERAS_JSON_3, "model.json");
    tw_layer_unref(m);
    /* No output_shape, but the layer after it records its input shape
     * (Keras 3's build_config): that is the Lambda's output. */
#define LAMBDA_THEN_DENSE(build)                                                                                   \
    MODEL(INPUT("in", "[null, 4]") ", "                                                                            \
          "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"f\", \"function\": \"x\", \"output_shape\": null}, "  \
          "\"name\": \"f\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]]]}, "                                           \
          "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2}, " build "\"name\": \"d\", "        \
          "\"inbound_nodes\": [[[\"f\", 0, 0, {}]]]}",                                                                \
          "[[\"in\", 0, 0]]", "[[\"d\", 0, 0]]")
    const char *with_build = LAMBDA_THEN_DENSE("\"build_config\": {\"input_shape\": [null, null, 7]}, ");
    m = tw_model_from_json(with_build, strlen(with_build), "model.json");
    if (!m)
        g_error("%s", tw_last_error());
    summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "f (Lambda)                      (None, None, 7)      0           in[0][0]"));
    free(summary);
    tw_layer_unref(m);
    /* Without the record the Dense's kernel has no known size: its count
     * is "?", and the totals say they are the known part. */
    const char *without = LAMBDA_THEN_DENSE("");
    m = tw_model_from_json(without, strlen(without), "model.json");
    if (!m)
        g_error("%s", tw_last_error());
    summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "d (Dense)                       ?                    ?           f[0][0]\n"));
    g_assert_nonnull(strstr(summary, "Total params: unknown, at least 0\n"));
    g_assert_nonnull(strstr(summary, "Param # ?: the layer's weights take their sizes from an input of unknown "
                                     "shape, or are made by Python code of a class not known here.\n"));
    free(summary);
    g_assert_cmpint(tw_model_count_params(m, NULL, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "model 'm': the parameter count of layer 'd' depends on an input shape that is unknown (it "
                    "comes from Python code that cannot run here)");
    g_assert_cmpint(tw_model_build(m, NULL, 1), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "Dense 'd': its input shape is unknown (it comes from Python code that cannot run here), so its "
                    "weights cannot be made");
    tw_error_clear();
    char *first = tw_model_to_json(m);
    tw_model *again = tw_model_from_json(first, strlen(first), "model.json");
    g_assert_nonnull(again);
    char *second = tw_model_to_json(again);
    g_assert_cmpstr(first, ==, second);
    free(first), free(second);
    tw_layer_unref(again);
    tw_layer_unref(m);
#undef LAMBDA_THEN_DENSE
}

/* A layer after a shape that is unknown: its output is unknown, and its
 * parameters are counted where they do not depend on that shape. */
static void test_counts_after_unknown_shape(void)
{
    const tw_shape unknown = {TW_SHAPE_UNKNOWN}, known = {2, {-1, 3}};
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    int64_t t, nt;
    tw_layer *emb = tw_layer_new("Embedding", "emb");
    g_assert_cmpint(tw_layer_set(emb, "input_dim", "10"), ==, 0);
    g_assert_cmpint(tw_layer_set(emb, "output_dim", "4"), ==, 0);
    g_assert_cmpint(tw_layer_infer_n(emb, &unknown, 1, out, &nout, &t, &nt), ==, 0);
    g_assert_cmpint(nout, ==, 1);
    g_assert_false(tw_shape_known(&out[0]));
    g_assert_cmpint(t, ==, 40);
    g_assert_cmpint(nt, ==, 0);
    tw_layer *drop = tw_layer_new("Dropout", "drop");
    g_assert_cmpint(tw_layer_infer_n(drop, &unknown, 1, out, &nout, &t, &nt), ==, 0);
    g_assert_cmpint(t + nt, ==, 0);
    /* A merge of a known and an unknown input: no weights either way. */
    tw_layer *add = tw_layer_new("Add", "add");
    g_assert_cmpint(tw_layer_infer_n(add, (tw_shape[]){known, unknown}, 2, out, &nout, &t, &nt), ==, 0);
    g_assert_cmpint(t + nt, ==, 0);
    g_assert_false(tw_shape_known(&out[0]));
    /* Dense's and Conv1D's kernels take the input's last size: unknown,
     * and the shape alone is still given. */
    tw_layer *dense = tw_dense(4, NULL), *conv = tw_layer_new("Conv1D", "conv");
    g_assert_cmpint(tw_layer_infer_n(dense, &unknown, 1, out, &nout, NULL, NULL), ==, 0);
    g_assert_false(tw_shape_known(&out[0]));
    g_assert_cmpint(tw_layer_infer_n(dense, &unknown, 1, out, &nout, &t, &nt), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), ": its parameter count depends on an input shape that is unknown "
                                             "(it comes from Python code that cannot run here)"));
    g_assert_cmpint(tw_layer_infer_n(conv, &unknown, 1, out, &nout, &t, &nt), ==, -1);
    tw_error_clear();
    char buf[16];
    g_assert_cmpstr(tw_shape_format(&unknown, buf, sizeof buf), ==, "?");
    /* A Sequential model, and one nested in a Functional model: the same
     * "?" rows, the known counts, and the totals as the known part. */
    const char *seq = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"seq\", \"layers\": ["
                      "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"i\"}}, "
                      "{\"class_name\": \"Lambda\", \"config\": {\"name\": \"f\", \"function\": \"x\", "
                      "\"output_shape\": null}}, "
                      "{\"class_name\": \"Embedding\", \"config\": {\"name\": \"e\", \"input_dim\": 10, \"output_dim\": 4}}, "
                      "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2}}]}}";
    tw_model *m = tw_model_from_json(seq, strlen(seq), "seq.json");
    if (!m)
        g_error("%s", tw_last_error());
    char *summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "f (Lambda)                   ?                         0\n"));
    g_assert_nonnull(strstr(summary, "e (Embedding)                ?                         40\n"));
    g_assert_nonnull(strstr(summary, "d (Dense)                    ?                         ?\n"));
    g_assert_nonnull(strstr(summary, "Total params: unknown, at least 40\n"));
    free(summary);
    g_assert_cmpint(tw_model_count_params(m, NULL, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "Sequential 'seq': its parameter count depends on an input shape that is unknown (it comes from "
                    "Python code that cannot run here)");
    tw_error_clear();
    tw_node *x = tw_input("x", TW_SHAPE(4));
    tw_node *y = tw_apply(m, x);
    g_assert_nonnull(y);
    g_assert_false(tw_shape_known(tw_node_shape(y)));
    tw_model *outer = tw_functional_new("outer", 1, &x, 1, &y);
    tw_nodes_clear();
    g_assert_nonnull(outer);
    summary = tw_model_summary(outer, 0);
    g_assert_nonnull(strstr(summary, "seq (Sequential)                ?                    ?           x[0][0]\n"));
    g_assert_nonnull(strstr(summary, "Total params: unknown, at least 40\n"));
    free(summary);
    tw_layer_unref(outer);
    /* A Functional model with a count missing inside, itself called after
     * a Lambda of unknown shape: "?", and the count refused naming it. */
    tw_node *i = tw_input("i", TW_SHAPE(4));
    tw_node *h = tw_apply(tw_dense(2, NULL), tw_apply(tw_layer_new("Lambda", "g"), i));
    tw_model *inner = tw_functional_new("inner", 1, &i, 1, &h);
    tw_node *x2 = tw_input("x2", TW_SHAPE(4));
    tw_node *y2 = tw_apply(inner, tw_apply(tw_layer_new("Lambda", "g2"), x2));
    tw_model *outer2 = tw_functional_new("outer2", 1, &x2, 1, &y2);
    tw_nodes_clear();
    g_assert_nonnull(outer2);
    summary = tw_model_summary(outer2, 0);
    g_assert_nonnull(summary);
    g_assert_nonnull(strstr(summary, "inner (Functional)              ?                    ?           g2[0][0]\n"));
    g_assert_nonnull(strstr(summary, "Total params: unknown, at least 0\n"));
    free(summary);
    g_assert_cmpint(tw_model_count_params(outer2, NULL, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "model 'outer2': the parameter count of layer 'inner' depends on an input shape that is unknown "
                    "(it comes from Python code that cannot run here)");
    tw_error_clear();
    tw_layer_unref(outer2);
    tw_layer_unref(emb), tw_layer_unref(drop), tw_layer_unref(add), tw_layer_unref(dense), tw_layer_unref(conv);
}

/* A Sequential model holding a Functional one, both forms. */
static void test_sequential_holding_functional(void)
{
    const char *json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"seq\", \"layers\": ["
                       "{\"class_name\": \"Functional\", \"config\": " MODEL_INNER "}, "
                       "{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 1}}]}}";
    tw_model *m = tw_model_from_json(json, strlen(json), "seq.json");
    if (!m)
        g_error("%s", tw_last_error());
    g_assert_true(tw_layer_is_functional(tw_model_layer_at(m, 0)));
    int64_t total;
    g_assert_cmpint(tw_model_count_params(m, &total, NULL, NULL), ==, 0);
    g_assert_cmpint(total, ==, 10 + 3);
    check_round_trip(m, TW_KERAS_JSON_2, "seq.json");
    check_round_trip(m, TW_KERAS_JSON_3, "seq.json");
    tw_layer_unref(m);
}

/* A layer of two outputs: tensor indices written and read in both forms. */
static void test_several_outputs(void)
{
    g_assert_cmpint(tw_layer_class_register(&halves_layer_class), ==, 0);
    tw_node *in = tw_input("in", TW_SHAPE(4));
    tw_node *parts[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_apply_multi(tw_layer_new("Halves", "halves"), 1, &in, parts), ==, 2);
    tw_node *sum = tw_apply_n(tw_layer_new("Add", "sum"), 2, (tw_node *[]){parts[1], parts[0]});
    tw_model *m = tw_functional_new("m", 1, &in, 2, (tw_node *[]){sum, parts[1]});
    tw_nodes_clear();
    char *k2 = tw_model_to_json(m), *k3 = tw_model_to_json_format(m, TW_KERAS_JSON_3);
    g_assert_nonnull(strstr(k2, "\"inbound_nodes\": [[[\"halves\", 0, 1, {}], [\"halves\", 0, 0, {}]]]"));
    g_assert_nonnull(strstr(k2, "\"output_layers\": [[\"sum\", 0, 0], [\"halves\", 0, 1]]"));
    g_assert_nonnull(strstr(k3, "\"keras_history\": [\"halves\", 0, 1]"));
    check_round_trip(m, TW_KERAS_JSON_2, "halves.json");
    check_round_trip(m, TW_KERAS_JSON_3, "halves.json");
    /* A tensor index the call does not have. */
    char *bad = g_strdup(k2);
    char *at = strstr(bad, "[\"halves\", 0, 1, {}]");
    at[strlen("[\"halves\", 0, ")] = '2';
    assert_refused(bad, "model.json: layers[2] 'sum'.inbound_nodes[0][0]: layer 'halves' node 0 has 2 outputs; "
                        "tensor 2 does not exist");
    g_free(bad);
    free(k2);
    free(k3);
    tw_layer_unref(m);
}

/* Keras' seq2seq model: the encoder's final states start the decoder
 * (initial_state), in Keras 2's form (further inputs of the node) and
 * Keras 3's (the keyword argument initial_state); a model read back
 * predicts what the original does with its weights. */
static void test_seq2seq_states(void)
{
    tw_node *enc_in = tw_input("encoder_inputs", TW_SHAPE(5, 3));
    tw_node *dec_in = tw_input("decoder_inputs", TW_SHAPE(6, 2));
    tw_layer *encoder = tw_layer_new("LSTM", "encoder");
    tw_layer *decoder = tw_layer_new("LSTM", "decoder");
    g_assert_cmpint(tw_layer_set(encoder, "units", "4") || tw_layer_set(encoder, "return_state", "true") ||
                        tw_layer_set(decoder, "units", "4") || tw_layer_set(decoder, "return_sequences", "true"),
                    ==, 0);
    tw_node *enc[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_apply_multi(encoder, 1, &enc_in, enc), ==, 3);
    tw_node *seq = tw_apply_n(decoder, 3, (tw_node *[]){dec_in, enc[1], enc[2]});
    tw_node *y = tw_apply(tw_dense(7, "softmax"), seq);
    g_assert_nonnull(y);
    tw_model *m = tw_functional_new("seq2seq", 2, (tw_node *[]){enc_in, dec_in}, 1, &y);
    tw_nodes_clear();
    g_assert_nonnull(m);
    char *k2 = tw_model_to_json(m), *k3 = tw_model_to_json_format(m, TW_KERAS_JSON_3);
    g_assert_nonnull(strstr(k2, "\"inbound_nodes\": [[[\"decoder_inputs\", 0, 0, {}], [\"encoder\", 0, 1, {}], "
                                "[\"encoder\", 0, 2, {}]]]"));
    g_assert_nonnull(strstr(k3, "\"kwargs\": {\"initial_state\": [{\"class_name\": \"__keras_tensor__\""));
    check_round_trip(m, TW_KERAS_JSON_2, "seq2seq.json");
    check_round_trip(m, TW_KERAS_JSON_3, "seq2seq.json");
    g_assert_cmpint(tw_model_build(m, NULL, 1), ==, 0);
    tw_model *copy = tw_model_from_json(k3, strlen(k3), "seq2seq.json");
    g_assert_nonnull(copy);
    g_assert_cmpint(tw_model_build(copy, NULL, 2), ==, 0);
    for (int i = 0; i < tw_model_nlayers(m); i++) {
        tw_layer *a = tw_model_layer_at(m, i), *b = tw_model_layer_at(copy, i);
        for (int w = 0; w < tw_layer_nweights(a); w++)
            g_assert_cmpint(tw_assign(tw_layer_weight(b, w), tw_layer_weight(a, w)), ==, 0);
    }
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(4);
    tw_tensor *x[2] = {tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(2, 5, 3), 0, 1),
                       tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(2, 6, 2), 0, 1)};
    tw_rng_free(rng);
    tw_tensor *ya, *yb;
    g_assert_cmpint(tw_model_call_n(m, 2, x, &ya, false), ==, 1);
    g_assert_cmpint(tw_model_call_n(copy, 2, x, &yb, false), ==, 1);
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(ya, yb)), 0, NULL, false)), ==, 0);
    /* The decoder's states matter: zeros instead of the encoder's give another output. */
    tw_tensor *dec_alone = tw_layer_call(tw_model_layer_at(m, 3), x[1], false);
    tw_tensor *zero_state = tw_layer_call(tw_model_layer_at(m, 4), dec_alone, false);
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(ya, zero_state)), 0, NULL, false)), >, 1e-4);
    tw_scope_end();
    /* A decoder given one state where LSTM has two. */
    char *bad = g_strdup(k2);
    char *at = strstr(bad, ", [\"encoder\", 0, 2, {}]");
    memmove(at, at + strlen(", [\"encoder\", 0, 2, {}]"), strlen(at + strlen(", [\"encoder\", 0, 2, {}]")) + 1);
    assert_refused(bad, "model.json: layers[3] 'decoder'.inbound_nodes[0][1]: LSTM 'decoder': takes a "
                        "sequence and 2 initial states (initial_state), got 1 input besides "
                        "the sequence");
    g_free(bad);
    free(k2);
    free(k3);
    tw_layer_unref(copy);
    tw_layer_unref(m);
}

/* Bidirectional with merge_mode None and return_state: two outputs, then
 * each direction's states; fed initial states in both JSON forms. */
static void test_bidirectional_states(void)
{
    tw_node *x = tw_input("x", TW_SHAPE(5, 3));
    tw_layer *lstm = tw_layer_new("LSTM", "enc");
    g_assert_cmpint(tw_layer_set(lstm, "units", "4") || tw_layer_set(lstm, "return_state", "true"), ==, 0);
    tw_layer *bidi = tw_layer_new("Bidirectional", "bi");
    g_assert_cmpint(tw_layer_wrap(bidi, lstm) || tw_layer_set(bidi, "merge_mode", "none"), ==, 0);
    tw_node *o[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_apply_multi(bidi, 1, &x, o), ==, 6);
    tw_layer *again = tw_layer_clone(bidi, "bi2");
    tw_node *p[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_apply_multi(again, 5, (tw_node *[]){x, o[2], o[3], o[4], o[5]}, p), ==, 6);
    tw_node *sum = tw_apply_n(tw_layer_new("Add", "sum"), 2, (tw_node *[]){p[0], p[1]});
    tw_model *m = tw_functional_new("m", 1, &x, 2, (tw_node *[]){sum, p[5]});
    tw_nodes_clear();
    g_assert_nonnull(m);
    char *k2 = tw_model_to_json(m), *k3 = tw_model_to_json_format(m, TW_KERAS_JSON_3);
    g_assert_nonnull(strstr(k2, "\"merge_mode\": null"));
    g_assert_nonnull(strstr(k2, "[[[\"x\", 0, 0, {}], [\"bi\", 0, 2, {}], [\"bi\", 0, 3, {}], [\"bi\", 0, 4, {}], "
                                "[\"bi\", 0, 5, {}]]]"));
    g_assert_nonnull(strstr(k3, "\"initial_state\""));
    check_round_trip(m, TW_KERAS_JSON_2, "bi.json");
    check_round_trip(m, TW_KERAS_JSON_3, "bi.json");
    g_assert_cmpint(tw_model_build(m, NULL, 1), ==, 0);
    tw_scope_begin();
    tw_tensor *in = tw_ones(TW_FLOAT32, TW_SHAPE(2, 5, 3)), *y[2];
    g_assert_cmpint(tw_model_call_n(m, 1, &in, y, false), ==, 2);
    g_assert_cmpint(tw_tensor_dim(y[0], 1), ==, 4);
    g_assert_cmpint(tw_tensor_dim(y[1], 1), ==, 4);
    tw_scope_end();
    free(k2);
    free(k3);
    tw_layer_unref(m);
}

/* use_causal_mask is a call argument in Keras: written in the call (Keras
 * 3's kwargs, Keras 2's fourth item of each input), not the config, and
 * read back onto the layer; Attention takes it as its causal. */
static void test_causal_mask_calls(void)
{
    tw_node *x = tw_input("x", TW_SHAPE(5, 8));
    tw_layer *mha = tw_layer_new("MultiHeadAttention", "mha");
    tw_layer *att = tw_layer_new("Attention", "att");
    g_assert_cmpint(tw_layer_set(mha, "use_causal_mask", "true") || tw_layer_set(att, "causal", "true"), ==, 0);
    tw_node *y = tw_apply_n(mha, 2, (tw_node *[]){x, x});
    y = tw_apply_n(att, 2, (tw_node *[]){y, x});
    tw_model *m = tw_functional_new("m", 1, &x, 1, &y);
    tw_nodes_clear();
    g_assert_nonnull(m);
    char *k2 = tw_model_to_json(m), *k3 = tw_model_to_json_format(m, TW_KERAS_JSON_3);
    g_assert_null(strstr(k2, "\"use_causal_mask\": false"));
    /* Keras 2 writes MultiHeadAttention's value with the flags in the query's kwargs. */
    g_assert_nonnull(strstr(k2, "[[[\"x\", 0, 0, {\"value\": [\"x\", 0, 0], \"use_causal_mask\": true}]]]"));
    g_assert_nonnull(strstr(k3, "], \"kwargs\": {\"use_causal_mask\": true}}]"));
    check_round_trip(m, TW_KERAS_JSON_2, "causal.json");
    check_round_trip(m, TW_KERAS_JSON_3, "causal.json");
    tw_model *again = tw_model_from_json(k3, strlen(k3), "causal.json");
    g_assert_nonnull(again);
    g_assert_cmpfloat(tw_layer_get(tw_model_layer_at(again, 1), "use_causal_mask")->number, ==, 1);
    g_assert_cmpfloat(tw_layer_get(tw_model_layer_at(again, 2), "causal")->number, ==, 1);
    tw_layer_unref(again);
    /* A flag that is not one. */
    char *bad = g_strdup(k3);
    char *at = strstr(bad, "\"kwargs\": {\"use_causal_mask\": true}");
    char *value = at + strlen("\"kwargs\": {\"use_causal_mask\": ");
    value[0] = '1';
    memmove(value + 1, value + 4, strlen(value + 4) + 1); /* true -> 1 */
    tw_model *refused = tw_model_from_json(bad, strlen(bad), "causal.json");
    g_assert_null(refused);
    g_assert_nonnull(strstr(tw_last_error(), ".kwargs.use_causal_mask: expected true or false, got a number"));
    g_free(bad);
    free(k2);
    free(k3);
    tw_layer_unref(m);
}

/* Replace the first `from` in text by `to` (a new string). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    g_assert_nonnull(at);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* MultiHeadAttention's attention_mask is a tensor in the call: Keras 2
 * writes mha(x, x, attention_mask=m) as the query with the value and the
 * mask in its kwargs (tf-keras' Node.serialize), Keras 3 the mask in the
 * call's kwargs; both read back as the layer's last input, so the mask
 * acts, and a tensor in another keyword argument is refused, not dropped. */
static void test_attention_mask_calls(void)
{
    tw_node *x = tw_input("x", TW_SHAPE(4, 6));
    tw_node *m = tw_input("m", TW_SHAPE(4, 4));
    tw_layer *mha = tw_layer_new("MultiHeadAttention", "mha");
    g_assert_cmpint(tw_layer_set(mha, "attention_mask", "true") || tw_layer_set(mha, "key_dim", "3"), ==, 0);
    tw_node *y = tw_apply_n(mha, 3, (tw_node *[]){x, x, m});
    tw_model *model = tw_functional_new("masked", 2, (tw_node *[]){x, m}, 1, &y);
    tw_nodes_clear();
    g_assert_nonnull(model);
    char *k2 = tw_model_to_json(model), *k3 = tw_model_to_json_format(model, TW_KERAS_JSON_3);
    g_assert_nonnull(strstr(k2, "[[[\"x\", 0, 0, {\"value\": [\"x\", 0, 0], \"attention_mask\": [\"m\", 0, 0]}]]]"));
    g_assert_nonnull(strstr(k3, "], \"kwargs\": {\"attention_mask\": {\"class_name\": \"__keras_tensor__\""));
    /* The flag is the call's, not the config's. */
    g_assert_null(strstr(k2, "\"attention_mask\": true"));
    g_assert_null(strstr(k3, "\"attention_mask\": true"));
    check_round_trip(model, TW_KERAS_JSON_2, "masked.json");
    check_round_trip(model, TW_KERAS_JSON_3, "masked.json");
    for (int form = 0; form < 2; form++) {
        const char *text = form ? k3 : k2;
        tw_model *again = tw_model_from_json(text, strlen(text), "masked.json");
        g_assert_nonnull(again);
        g_assert_cmpint(tw_model_build(again, NULL, 1), ==, 0);
        /* A mask letting every query step see key step 0 alone: each
         * attends to that one value, so every output step is the same;
         * with the mask ignored they would differ. */
        tw_scope_begin();
        tw_rng *rng = tw_rng_new(7);
        tw_tensor *in = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(2, 4, 6), -1, 1);
        tw_rng_free(rng);
        float first[16] = {0};
        for (int i = 0; i < 4; i++)
            first[i * 4] = 1;
        tw_tensor *mask = tw_tile(tw_tensor_from_data(first, TW_FLOAT32, 3, (int64_t[]){1, 4, 4}), 3,
                                  (int64_t[]){2, 1, 1});
        tw_tensor *out;
        g_assert_cmpint(tw_model_call_n(again, 2, (tw_tensor *[]){in, mask}, &out, false), ==, 1);
        tw_tensor *spread = tw_sub(tw_max(out, 1, (int[]){1}, false), tw_min(out, 1, (int[]){1}, false));
        g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(spread), 0, NULL, false)), <, 1e-5);
        tw_tensor *open = tw_ones(TW_FLOAT32, TW_SHAPE(2, 4, 4));
        g_assert_cmpint(tw_model_call_n(again, 2, (tw_tensor *[]){in, open}, &out, false), ==, 1);
        spread = tw_sub(tw_max(out, 1, (int[]){1}, false), tw_min(out, 1, (int[]){1}, false));
        g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(spread), 0, NULL, false)), >, 1e-3);
        tw_scope_end();
        tw_layer_unref(again);
    }
    /* Keras 3 with every argument by name: mha(query=x, value=x, attention_mask=m). */
    char *by_name = replaced(k3, "{\"args\": [{", "{\"args\": [], \"kwargs\": {\"query\": {");
    char *at = strstr(by_name, "}}, {\"class_name\": \"__keras_tensor__\"");
    g_assert_nonnull(at);
    char *named = replaced(at, "}}, {", "}}, \"value\": {");
    at[0] = '\0';
    char *both = g_strconcat(by_name, named, NULL);
    char *text = replaced(both, "}}], \"kwargs\": {\"attention_mask\"", "}}, \"attention_mask\"");
    tw_model *again = tw_model_from_json(text, strlen(text), "named.json");
    if (!again)
        g_error("by name: %s\n%s", tw_last_error(), text);
    char *back = tw_model_to_json_format(again, TW_KERAS_JSON_3);
    g_assert_cmpstr(back, ==, k3);
    free(back);
    tw_layer_unref(again);
    g_free(by_name);
    g_free(named);
    g_free(both);
    g_free(text);
    /* The value both by position and by name; a mask Keras derives, passed
     * as a tensor: refused at their place. */
    char *twice = replaced(k2, "[\"m\", 0, 0]}]]]", "[\"m\", 0, 0]}], [\"x\", 0, 0, {}]]]");
    g_assert_null(tw_model_from_json(twice, strlen(twice), "masked.json"));
    g_assert_nonnull(strstr(tw_last_error(), "'mha'.inbound_nodes[0][0][3].value: 'value' is given both by "
                                             "position and by name"));
    char *query_mask = replaced(k2, "\"attention_mask\": [", "\"query_mask\": [");
    g_assert_null(tw_model_from_json(query_mask, strlen(query_mask), "masked.json"));
    g_assert_nonnull(strstr(tw_last_error(), "'mha'.inbound_nodes[0][0][3].query_mask: a tensor passed as keyword "
                                             "argument 'query_mask' is not supported"));
    char *k3_query_mask = replaced(k3, "\"attention_mask\": {", "\"query_mask\": {");
    g_assert_null(tw_model_from_json(k3_query_mask, strlen(k3_query_mask), "masked.json"));
    g_assert_nonnull(strstr(tw_last_error(), "'mha'.inbound_nodes[0].kwargs.query_mask: a tensor passed as keyword "
                                             "argument 'query_mask' is not supported"));
    tw_error_clear();
    /* A separate key: Keras 2 names it in the query's kwargs too. */
    tw_node *q = tw_input("q", TW_SHAPE(4, 6)), *v = tw_input("v", TW_SHAPE(5, 6)), *k = tw_input("k", TW_SHAPE(5, 3));
    tw_node *mk = tw_input("mk", TW_SHAPE(4, 5));
    tw_layer *mha_k = tw_layer_new("MultiHeadAttention", "mha_k");
    g_assert_cmpint(tw_layer_set(mha_k, "attention_mask", "true"), ==, 0);
    tw_node *yk = tw_apply_n(mha_k, 4, (tw_node *[]){q, v, k, mk});
    tw_model *keyed = tw_functional_new("keyed", 4, (tw_node *[]){q, v, k, mk}, 1, &yk);
    tw_nodes_clear();
    g_assert_nonnull(keyed);
    char *k2_key = tw_model_to_json(keyed);
    g_assert_nonnull(strstr(k2_key, "[[[\"q\", 0, 0, {\"value\": [\"v\", 0, 0], \"key\": [\"k\", 0, 0], "
                                    "\"attention_mask\": [\"mk\", 0, 0]}]]]"));
    check_round_trip(keyed, TW_KERAS_JSON_2, "keyed.json");
    check_round_trip(keyed, TW_KERAS_JSON_3, "keyed.json");
    free(k2_key);
    tw_layer_unref(keyed);
    g_free(twice);
    g_free(query_mask);
    g_free(k3_query_mask);
    free(k2);
    free(k3);
    tw_layer_unref(model);
}

/* Keras 2 writes a TFOpLambda's one input unwrapped (the layer keeps its
 * input's structure): [["dense", 0, 0, {"axis": 1}]] is one call. The op
 * declares no shape: the model opens with it unknown and cannot run. */
static void test_tfoplambda_flat_node(void)
{
    static const char json[] =
        "{\"class_name\": \"Functional\", \"config\": {\"name\": \"m\", \"layers\": [{\"class_name\": "
        "\"InputLayer\", \"config\": {\"batch_input_shape\": [null, 8], \"name\": \"x\"}, \"name\": \"x\", "
        "\"inbound_nodes\": []}, {\"class_name\": \"TFOpLambda\", \"config\": {\"name\": \"tf.expand_dims\", "
        "\"function\": \"expand_dims\"}, \"name\": \"tf.expand_dims\", \"inbound_nodes\": [[\"x\", 0, 0, "
        "{\"axis\": 1}]]}], \"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"tf.expand_dims\", 0, 0]]}}";
    tw_model *m = tw_model_from_json(json, strlen(json), "tfop.json");
    if (!m)
        g_error("%s", tw_last_error());
    char *summary = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(summary, "tf.expand_dims (TFOpLambda)     ?                    0           x[0][0]\n"));
    free(summary);
    g_assert_cmpint(tw_layer_check_runnable(m), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "TFOpLambda 'tf.expand_dims': runs Python code saved in the Keras file (a TensorFlow op recorded "
                    "by name), which cannot run here; the model can be summarized but not run or trained");
    tw_error_clear();
    tw_layer_unref(m);
}

/* A nested model as the model's output (Model(inp, encoder(inp))): Keras
 * 2 numbers the encoder's call 1 in output_layers as in inbound_nodes, so
 * the file written reads back in both forms. */
static void test_nested_model_as_output(void)
{
    const char *json = MODEL(INPUT("in", "[null, 4]") ", "
                             "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"encoder\", \"layers\": ["
                             "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], "
                             "\"name\": \"e_in\"}}, "
                             "{\"class_name\": \"Dense\", \"config\": {\"name\": \"e_dense\", \"units\": 3}}]}, "
                             "\"name\": \"encoder\", \"inbound_nodes\": [[[\"in\", 0, 0, {}]]]}",
                             "[[\"in\", 0, 0]]", "[[\"encoder\", 1, 0]]");
    tw_model *m = tw_model_from_json(json, strlen(json), "nested_out.json");
    if (!m)
        g_error("%s", tw_last_error());
    check_round_trip(m, TW_KERAS_JSON_2, "nested_out.json");
    check_round_trip(m, TW_KERAS_JSON_3, "nested_out.json");
    char *written = tw_model_to_json_format(m, TW_KERAS_JSON_2);
    g_assert_nonnull(strstr(written, "\"output_layers\": [[\"encoder\", 1, 0]]"));
    free(written);
    tw_layer_unref(m);
}

/* A Functional model's weights through a checkpoint, nested names and all. */
static void test_checkpoint(void)
{
    tw_node *a = tw_input("a", TW_SHAPE(3));
    tw_node *h = tw_apply(tw_dense(4, "relu"), a);
    tw_model *inner = tw_functional_new("inner", 1, &a, 1, &h);
    tw_node *x = tw_input("x", TW_SHAPE(3));
    tw_node *y = tw_apply(tw_dense(2, NULL), tw_apply(inner, x));
    tw_model *m = tw_functional_new("outer", 1, &x, 1, &y);
    tw_nodes_clear();
    g_assert_cmpint(tw_model_build(m, NULL, 1), ==, 0);
    char *dir = g_dir_make_tmp("twb-functional-XXXXXX", NULL);
    char *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    char *json = tw_model_to_json(m);
    g_assert_cmpint(tw_checkpoint_save(path, m, NULL, json, NULL), ==, 0);
    tw_model *copy = tw_model_from_json(json, strlen(json), "outer.json");
    g_assert_nonnull(copy);
    g_assert_cmpint(tw_checkpoint_restore(path, copy, NULL), ==, 0);
    g_assert_cmpint(tw_model_build(copy, NULL, 99), ==, 0);
    g_assert_cmpint(tw_layer_pending_restores(copy), ==, 0);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(4);
    tw_tensor *in = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(5, 3), 0, 1);
    tw_rng_free(rng);
    tw_tensor *d = tw_sub(tw_model_call(m, in, false), tw_model_call(copy, in, false));
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(d), 0, NULL, false)), ==, 0);
    tw_scope_end();
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    free(json);
    tw_layer_unref(copy);
    tw_layer_unref(m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_data_func("/functional-json/corpus", &corpora[0], test_corpus);
    g_test_add_data_func("/functional-json/corpus-keras", &corpora[1], test_corpus);
    g_test_add_func("/functional-json/bad-files", test_bad_files);
    g_test_add_func("/functional-json/double-encoded-and-lambda", test_double_encoded_and_lambda);
    g_test_add_func("/functional-json/corpus-unknown-lambda-shape", test_corpus_unknown_lambda_shape);
    g_test_add_func("/functional-json/counts-after-unknown-shape", test_counts_after_unknown_shape);
    g_test_add_func("/functional-json/sequential-holding-functional", test_sequential_holding_functional);
    g_test_add_func("/functional-json/several-outputs", test_several_outputs);
    g_test_add_func("/functional-json/checkpoint", test_checkpoint);
    g_test_add_func("/functional-json/nested-model-as-output", test_nested_model_as_output);
    g_test_add_func("/functional-json/seq2seq-states", test_seq2seq_states);
    g_test_add_func("/functional-json/bidirectional-states", test_bidirectional_states);
    g_test_add_func("/functional-json/causal-mask-calls", test_causal_mask_calls);
    g_test_add_func("/functional-json/attention-mask-calls", test_attention_mask_calls);
    g_test_add_func("/functional-json/tfoplambda-flat-node", test_tfoplambda_flat_node);
    return g_test_run();
}
