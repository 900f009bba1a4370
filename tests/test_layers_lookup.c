/* The lookup layers IntegerLookup and StringLookup: Keras' index layout
 * (mask, OOV indices, vocabulary) by hand and from Keras' documented
 * examples, vocabulary checks, the modes that are refused, StringLookup
 * opening and counting but refusing to run (the engine has no strings),
 * Keras JSON read and written, and keras-functional 02's nested
 * Sequentials (StringLookup, Embedding) with Keras' counts. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "tw/layers.h"
#include "tw/model.h"
#include "tw/model_file.h"

#define NONE (-1)
#define SHAPE(...) ((tw_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})

static void assert_error(const char *fragment)
{
    const char *msg = tw_last_error();
    if (!strstr(msg, fragment))
        g_error("message \"%s\" lacks \"%s\"", msg, fragment);
}

static tw_layer *integer_lookup(const char *const *vocabulary, int n)
{
    tw_layer *layer = tw_layer_new("IntegerLookup", "lookup");
    if (tw_lookup_set_vocabulary(layer, n, vocabulary))
        g_error("vocabulary: %s", tw_last_error());
    return layer;
}

/* The layer's indices for int64 inputs. */
static void expect_indices(tw_layer *layer, const int64_t *in, const int64_t *want, int n)
{
    tw_scope_begin();
    tw_tensor *y = tw_layer_call(layer, tw_tensor_from_data(in, TW_INT64, TW_SHAPE(2, n / 2)), false);
    if (!y)
        g_error("call: %s", tw_last_error());
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_INT64);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, n / 2);
    int64_t got[16];
    g_assert_cmpint(tw_tensor_copy_to(y, got, sizeof(int64_t) * n), ==, 0);
    for (int i = 0; i < n; i++)
        g_assert_cmpint(got[i], ==, want[i]);
    tw_scope_end();
}

static const char *const docs_vocabulary[] = {"12", "36", "1138", "42"};
static const int64_t docs_data[] = {12, 1138, 42, 42, 1000, 36};

/* Keras' IntegerLookup examples (its docstring, Keras 3 defaults): one OOV
 * index, then two. */
static void test_integer_lookup_keras_examples(void)
{
    tw_layer *layer = integer_lookup(docs_vocabulary, 4);
    expect_indices(layer, docs_data, (const int64_t[]){1, 3, 4, 4, 0, 2}, 6);
    tw_layer_unref(layer);
    layer = integer_lookup(NULL, 0);
    g_assert_cmpint(tw_layer_set(layer, "num_oov_indices", "2"), ==, 0);
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 4, docs_vocabulary), ==, 0);
    /* OOV values spread by value: 37 to index 1, 1000 to index 0. */
    expect_indices(layer, (const int64_t[]){12, 1138, 42, 37, 1000, 36}, (const int64_t[]){2, 4, 5, 1, 0, 3}, 6);
    tw_layer_unref(layer);
}

/* A mask token takes index 0; OOV values spread over the OOV indices by
 * floor modulo, negative ones included. */
static void test_integer_lookup_mask_and_oov(void)
{
    tw_layer *layer = integer_lookup(NULL, 0);
    g_assert_cmpint(tw_lookup_set_special_token(layer, "mask_token", "0"), ==, 0);
    g_assert_cmpint(tw_layer_set(layer, "num_oov_indices", "3"), ==, 0);
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 4, docs_vocabulary), ==, 0);
    /* mask 0; OOV 1, 2, 3; 12 -> 4, 36 -> 5, 1138 -> 6, 42 -> 7 */
    expect_indices(layer, (const int64_t[]){0, 42, 7, -7, 36, 9}, (const int64_t[]){0, 7, 2, 3, 5, 1}, 6);
    /* int32 and float inputs are looked up as integers. */
    tw_scope_begin();
    tw_tensor *y = tw_layer_call(layer, tw_tensor_from_data((const float[]){12, 1138}, TW_FLOAT32, TW_SHAPE(2)), false);
    int64_t got[2];
    g_assert_cmpint(tw_tensor_copy_to(y, got, sizeof got), ==, 0);
    g_assert_cmpint(got[0], ==, 4);
    g_assert_cmpint(got[1], ==, 6);
    tw_scope_end();
    /* Without OOV indices a value outside the vocabulary is an error. */
    tw_layer *strict = integer_lookup(docs_vocabulary, 4);
    g_assert_cmpint(tw_layer_set(strict, "num_oov_indices", "0"), ==, 0);
    tw_scope_begin();
    g_assert_null(
        tw_layer_call(strict, tw_tensor_from_data((const int64_t[]){36, 5}, TW_INT64, TW_SHAPE(2)), false));
    assert_error("IntegerLookup 'lookup': 5 at position 1 is not in the vocabulary and num_oov_indices is 0");
    tw_scope_end();
    tw_layer_unref(strict);
    tw_layer_unref(layer);
}

static void test_vocabulary_checks(void)
{
    tw_layer *layer = tw_layer_new("IntegerLookup", "lookup");
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 3, (const char *const[]){"4", "9", "4"}), ==, -1);
    assert_error("IntegerLookup 'lookup': vocabulary[2] repeats 4");
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 2, (const char *const[]){"4", "four"}), ==, -1);
    assert_error("vocabulary[1]: expected an integer, got \"four\"");
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 2, (const char *const[]){"4", "-1"}), ==, -1);
    assert_error("vocabulary[1] is the OOV token \"-1\"; reserved tokens may only lead the list");
    /* Leading special tokens, as get_vocabulary() lists them, are dropped. */
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 3, (const char *const[]){"-1", "+4", "9"}), ==, 0);
    g_assert_cmpint(tw_lookup_vocabulary_size(layer), ==, 2);
    g_assert_cmpstr(tw_lookup_token(layer, 0), ==, "4");
    g_assert_null(tw_lookup_token(layer, 2));
    g_assert_cmpint(tw_lookup_set_special_token(layer, "mask_token", "9"), ==, -1);
    assert_error("mask_token \"9\" is vocabulary[1]; it must be outside the vocabulary");
    g_assert_cmpint(tw_lookup_set_special_token(layer, "pad_token", "9"), ==, -1);
    assert_error("no token \"pad_token\"");
    /* max_tokens counts the OOV index too. */
    g_assert_cmpint(tw_layer_set(layer, "max_tokens", "2"), ==, -1);
    assert_error("the vocabulary takes 3 indices (mask and OOV included), more than max_tokens=2");
    g_assert_cmpint(tw_layer_set(layer, "max_tokens", "3"), ==, 0);
    g_assert_cmpint(tw_layer_set(layer, "output_mode", "one_hot"), ==, -1);
    assert_error("output_mode \"one_hot\" is not supported; only \"int\"");
    g_assert_cmpint(tw_layer_set(layer, "invert", "true"), ==, -1);
    assert_error("invert=true (indices back to tokens) is not supported");
    tw_layer *dense = tw_layer_new("Dense", NULL);
    g_assert_cmpint(tw_lookup_set_vocabulary(dense, 0, NULL), ==, -1);
    assert_error("not a StringLookup or IntegerLookup");
    tw_layer_unref(dense);
    g_assert_cmpint(tw_lookup_vocabulary_size(NULL), ==, -1);
    /* Clones keep the tokens. */
    tw_layer *copy = tw_layer_clone(layer, "copy");
    g_assert_cmpint(tw_lookup_vocabulary_size(copy), ==, 2);
    g_assert_cmpstr(tw_lookup_token(copy, 1), ==, "9");
    g_assert_cmpstr(tw_lookup_special_token(copy, "oov_token"), ==, "-1");
    g_assert_null(tw_lookup_special_token(copy, "mask_token"));
    tw_layer_unref(copy);
    tw_layer_unref(layer);
}

/* StringLookup infers and counts, and refuses to run. */
static void test_string_lookup(void)
{
    tw_layer *layer = tw_layer_new("StringLookup", "words");
    g_assert_cmpstr(tw_lookup_special_token(layer, "oov_token"), ==, "[UNK]");
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 3, (const char *const[]){"a", "b c", "\"q\""}), ==, 0);
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, 2, (const char *const[]){"a", "a"}), ==, -1);
    assert_error("vocabulary[1] repeats \"a\"");
    g_assert_cmpint(tw_lookup_vocabulary_size(layer), ==, 3);
    /* Real vocabularies run to hundreds of thousands of words: checking
     * them for repeats must not take pairs (that would be 10^10 compares). */
    enum { BIG = 200000 };
    char **words = g_new0(char *, BIG + 1);
    for (int i = 0; i < BIG; i++)
        words[i] = g_strdup_printf("w%d", (i * 7919) % BIG);
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, BIG, (const char *const *)words), ==, 0);
    g_assert_cmpint(tw_lookup_vocabulary_size(layer), ==, BIG);
    g_free(words[BIG - 1]);
    words[BIG - 1] = g_strdup("w5");
    g_assert_cmpint(tw_lookup_set_vocabulary(layer, BIG, (const char *const *)words), ==, -1);
    assert_error("vocabulary[199999] repeats \"w5\"");
    g_strfreev(words);
    tw_shape in = SHAPE(NONE), out;
    int64_t t = -1, nt = -1;
    g_assert_cmpint(tw_layer_infer(layer, &in, &out, &t, &nt), ==, 0);
    g_assert_cmpint(out.ndim, ==, 1);
    g_assert_cmpint(t + nt, ==, 0);
    tw_scope_begin();
    g_assert_null(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2)), false));
    assert_error("StringLookup 'words': maps strings to indices, and the engine has no string tensors");
    tw_scope_end();
    /* Asked before running, the same reason. */
    char *call_error = g_strdup(tw_last_error());
    tw_error_clear();
    g_assert_cmpint(tw_layer_check_runnable(layer), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, call_error);
    g_free(call_error);
    tw_layer_unref(layer);
}

/* ---- Keras JSON ------------------------------------------------------------------- */

#define SEQ(layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [" layers "]}}"

static tw_model *must_read(const char *json)
{
    tw_model *model = tw_model_from_json(json, strlen(json), "model.json");
    if (!model)
        g_error("read: %s", tw_last_error());
    return model;
}

static void expect_refused(const char *json, const char *fragment)
{
    g_assert_null(tw_model_from_json(json, strlen(json), "model.json"));
    assert_error(fragment);
}

static void assert_fixpoint(const tw_model *model)
{
    char *json = tw_model_to_json(model);
    g_assert_nonnull(json);
    tw_model *again = must_read(json);
    char *json2 = tw_model_to_json(again);
    g_assert_cmpstr(json2, ==, json);
    free(json);
    free(json2);
    tw_layer_unref(again);
}

/* IntegerLookup -> Embedding runs; tokens are written as Keras writes them. */
static void test_json(void)
{
    tw_model *model = must_read(SEQ(
        "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 3], \"dtype\": \"int64\"}}, "
        "{\"class_name\": \"IntegerLookup\", \"config\": {\"name\": \"ids\", \"max_tokens\": null, "
        "\"num_oov_indices\": 1, \"mask_token\": 0, \"oov_token\": -1, \"output_mode\": \"int\", \"sparse\": false, "
        "\"pad_to_max_tokens\": false, \"vocabulary\": [12, 36, 1138, 42], \"vocabulary_dtype\": \"int64\", "
        "\"idf_weights\": null, \"invert\": false}}, "
        "{\"class_name\": \"Embedding\", \"config\": {\"name\": \"e\", \"input_dim\": 6, \"output_dim\": 2}}"));
    tw_layer *lookup = tw_model_layer_at(model, 1);
    g_assert_cmpstr(tw_lookup_special_token(lookup, "mask_token"), ==, "0");
    g_assert_cmpint(tw_lookup_vocabulary_size(lookup), ==, 4);
    int64_t total;
    g_assert_cmpint(tw_model_count_params(model, &total, NULL, NULL), ==, 0);
    g_assert_cmpint(total, ==, 12);
    g_assert_cmpint(tw_model_build(model, NULL, 1), ==, 0);
    tw_scope_begin();
    tw_tensor *y = tw_model_call(model, tw_tensor_from_data((const int64_t[]){0, 42, 7}, TW_INT64, TW_SHAPE(1, 3)),
                                 false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 2), ==, 2);
    tw_scope_end();
    char *json = tw_model_to_json(model);
    g_assert_nonnull(strstr(json, "\"mask_token\": 0, \"oov_token\": -1, \"vocabulary\": [12, 36, 1138, 42]"));
    free(json);
    assert_fixpoint(model);
    tw_layer_unref(model);

    model = must_read(SEQ("{\"class_name\": \"StringLookup\", \"config\": {\"name\": \"w\", \"mask_token\": \"\", "
                          "\"vocabulary\": [\"a\\\"b\", \"\\u00e9t\\u00e9\", \" x \"]}}"));
    json = tw_model_to_json(model);
    g_assert_nonnull(strstr(json, "\"mask_token\": \"\", \"oov_token\": \"[UNK]\", "
                                  "\"vocabulary\": [\"a\\\"b\", \"\xc3\xa9t\xc3\xa9\", \" x \"]"));
    free(json);
    assert_fixpoint(model);
    tw_layer_unref(model);
}

static void test_json_refused(void)
{
    expect_refused(SEQ("{\"class_name\": \"StringLookup\", \"config\": {\"vocabulary\": \"vocab.txt\"}}"),
                   "model.json: layers[0].config.vocabulary: a vocabulary file (\"vocab.txt\") is not supported");
    expect_refused(SEQ("{\"class_name\": \"StringLookup\", \"config\": {\"vocabulary\": [\"a\", 1.5]}}"),
                   "model.json: layers[0].config.vocabulary[1]: expected a token (a string or a whole number), got "
                   "a number");
    expect_refused(SEQ("{\"class_name\": \"IntegerLookup\", \"config\": {\"name\": \"i\", \"vocabulary\": [3, 3]}}"),
                   "model.json: layers[0].config.vocabulary: IntegerLookup 'i': vocabulary[1] repeats 3");
    expect_refused(SEQ("{\"class_name\": \"IntegerLookup\", \"config\": {\"name\": \"i\", \"oov_token\": \"x\"}}"),
                   "model.json: layers[0].config.oov_token: IntegerLookup 'i': oov_token: expected an integer or "
                   "None, got \"x\"");
    expect_refused(SEQ("{\"class_name\": \"StringLookup\", \"config\": {\"output_mode\": \"multi_hot\"}}"),
                   "model.json: layers[0].config.output_mode: StringLookup");
}

/* ---- the corpus ------------------------------------------------------------------- */

static char *corpus_path(const char *name)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "keras-functional", name, NULL);
}

/* 02: the two-tower model is JSON inside a JSON string; each tower is a
 * Sequential of StringLookup and Embedding. Keras' summary: sequential
 * 13,056 and sequential_1 442,112, both (None, 256). */
static void test_corpus_02(void)
{
    char *path = corpus_path("02-two-tower-recommender-stringlookup.json"), *text;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        g_test_skip("the keras-functional corpus is not there (it lives in the shared checkout)");
        g_free(path);
        return;
    }
    JsonParser *outer = json_parser_new(), *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(outer, text, -1, NULL));
    g_assert_true(json_parser_load_from_data(parser, json_node_get_string(json_parser_get_root(outer)), -1, NULL));
    JsonArray *layers = json_object_get_array_member(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "config"), "layers");
    const int64_t want[2] = {13056, 442112};
    const int vocabulary[2] = {50, 1726};
    int found = 0;
    for (guint i = 0; i < json_array_get_length(layers); i++) {
        JsonNode *node = json_array_get_element(layers, i);
        if (strcmp(json_object_get_string_member(json_node_get_object(node), "class_name"), "Sequential"))
            continue;
        char *json = json_to_string(node, FALSE);
        tw_model *tower = must_read(json);
        tw_layer_info info[3];
        g_assert_cmpint(tw_model_nlayers(tower), ==, 3);
        g_assert_cmpint(tw_model_infer(tower, tw_model_input_shape(tower), info), ==, 3);
        char buf[96];
        g_assert_cmpstr(tw_shape_format(&info[1].output, buf, sizeof buf), ==, "(None,)");
        g_assert_cmpstr(tw_shape_format(&info[2].output, buf, sizeof buf), ==, "(None, 256)");
        int64_t total;
        g_assert_cmpint(tw_model_count_params(tower, &total, NULL, NULL), ==, 0);
        g_assert_cmpint(total, ==, want[found]);
        const tw_layer *lookup = tw_model_layer_at(tower, 1);
        g_assert_cmpint(tw_lookup_vocabulary_size(lookup), ==, vocabulary[found]);
        /* Keras' vocabulary_size: the vocabulary and the OOV index, the Embedding's input_dim. */
        g_assert_cmpint(tw_lookup_vocabulary_size(lookup) + 1, ==,
                        (int)tw_layer_get(tw_model_layer_at(tower, 2), "input_dim")->number);
        char *summary = tw_model_summary(tower, 0);
        g_assert_nonnull(summary);
        g_assert_nonnull(strstr(summary, "StringLookup"));
        free(summary);
        assert_fixpoint(tower);
        g_assert_cmpint(tw_model_build(tower, NULL, 1), ==, 0);
        tw_scope_begin();
        g_assert_null(tw_model_call(tower, tw_zeros(TW_FLOAT32, TW_SHAPE(2)), false));
        assert_error("StringLookup 'string_lookup");
        tw_scope_end();
        /* The Sequential holding it says so before running. */
        g_assert_cmpint(tw_layer_check_runnable(tower), ==, -1);
        assert_error("StringLookup 'string_lookup");
        tw_layer_unref(tower);
        g_free(json);
        found++;
    }
    g_assert_cmpint(found, ==, 2);
    g_object_unref(parser);
    g_object_unref(outer);
    g_free(text);
    g_free(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/lookup/integer-keras-examples", test_integer_lookup_keras_examples);
    g_test_add_func("/lookup/integer-mask-and-oov", test_integer_lookup_mask_and_oov);
    g_test_add_func("/lookup/vocabulary-checks", test_vocabulary_checks);
    g_test_add_func("/lookup/string-lookup", test_string_lookup);
    g_test_add_func("/lookup/json", test_json);
    g_test_add_func("/lookup/json-refused", test_json_refused);
    g_test_add_func("/lookup/corpus-02", test_corpus_02);
    return g_test_run();
}
