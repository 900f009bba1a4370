/* Graph files (tw/graph_file.h) and graphs read back from JSON
 * (tw_graph_from_json): a saved graph loads as the same nodes and gives the
 * same outputs; broken files and broken graphs fail with a message naming
 * the file or the node. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tw/checkpoint.h"
#include "tw/graph_file.h"

#include "scratch_tree.h"

typedef struct {
    tw_tensor *w, *b;
} dense_weights;

/* relu(x W + b) * 0.5: variables, a captured constant and four ops. */
static int dense_half(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user)
{
    (void)n;
    (void)max;
    dense_weights *d = user;
    out[0] = tw_mul(tw_relu(tw_add(tw_matmul(in[0], d->w), d->b)), tw_scalar(0.5));
    return 1;
}

static tw_tensor *uniform(uint64_t seed, int ndim, const int64_t *shape)
{
    tw_rng *rng = tw_rng_new(seed);
    tw_tensor *t = tw_random_uniform(rng, TW_FLOAT32, ndim, shape, -1, 1);
    tw_rng_free(rng);
    return t;
}

static char *scratch_file(char **dir, const char *name)
{
    *dir = g_dir_make_tmp("twb-graph-file-XXXXXX", NULL);
    g_assert_nonnull(*dir);
    return g_build_filename(*dir, name, NULL);
}

static void assert_same_nodes(const tw_graph *a, const tw_graph *b)
{
    g_assert_cmpint(tw_graph_node_count(a), ==, tw_graph_node_count(b));
    g_assert_cmpint(tw_graph_ninputs(a), ==, tw_graph_ninputs(b));
    g_assert_cmpint(tw_graph_noutputs(a), ==, tw_graph_noutputs(b));
    for (int id = 0; id < tw_graph_node_count(a); id++) {
        g_assert_cmpint(tw_graph_node_kind(a, id), ==, tw_graph_node_kind(b, id));
        g_assert_cmpstr(tw_graph_node_op(a, id), ==, tw_graph_node_op(b, id));
        g_assert_cmpstr(tw_graph_node_name(a, id), ==, tw_graph_node_name(b, id));
        g_assert_cmpstr(tw_graph_node_scope(a, id), ==, tw_graph_node_scope(b, id));
        g_assert_cmpint(tw_graph_node_ninputs(a, id), ==, tw_graph_node_ninputs(b, id));
        for (int k = 0; k < tw_graph_node_noutputs(a, id); k++) {
            const int64_t *sa, *sb;
            int na = tw_graph_node_output_shape(a, id, k, &sa), nb = tw_graph_node_output_shape(b, id, k, &sb);
            g_assert_cmpint(na, ==, nb);
            g_assert_cmpmem(sa, sizeof *sa * (size_t)na, sb, sizeof *sb * (size_t)nb);
            g_assert_cmpint(tw_graph_node_output_dtype(a, id, k), ==, tw_graph_node_output_dtype(b, id, k));
        }
    }
    char *ja = tw_graph_json(a), *jb = tw_graph_json(b);
    g_assert_cmpstr(ja, ==, jb);
    free(ja);
    free(jb);
}

static void test_round_trip(void)
{
    char *dir, *path = scratch_file(&dir, "dense.twbgraph");
    tw_scope_begin();
    dense_weights d = {tw_variable(uniform(1, TW_SHAPE(4, 3)), "dense/kernel", true),
                       tw_variable(uniform(2, TW_SHAPE(3)), "dense/bias", true)};
    tw_function *f = tw_function_new("dense_half", dense_half, &d);
    tw_tensor *x = uniform(3, TW_SHAPE(5, 4));
    const tw_graph *traced = tw_function_get_graph(f, TW_TENSORS(x));
    g_assert_nonnull(traced);
    g_assert_cmpint(tw_graph_save(path, traced), ==, 0);

    tw_graph *loaded = tw_graph_load(path);
    g_assert_nonnull(loaded);
    assert_same_nodes(traced, loaded);

    tw_tensor *expected = tw_function_call1(f, TW_TENSORS(x)), *got = NULL;
    g_assert_cmpint(tw_graph_run(loaded, TW_TENSORS(x), &got, 1), ==, 1);
    g_assert_cmpint(tw_tensor_numel(got), ==, 15);
    g_assert_cmpmem(tw_tensor_data(expected), 15 * sizeof(float), tw_tensor_data(got), 15 * sizeof(float));
    float positive = 0;
    for (int i = 0; i < 15; i++)
        positive += ((const float *)tw_tensor_data(got))[i] > 0;
    g_assert_cmpfloat(positive, >, 0); /* not all clipped by the relu: the comparison means something */

    /* The loaded graph has its own variables: changing the traced ones does
     * not reach it. */
    g_assert_cmpint(tw_assign(d.b, tw_scalar(100.0)), ==, 0);
    tw_tensor *again = NULL;
    g_assert_cmpint(tw_graph_run(loaded, TW_TENSORS(x), &again, 1), ==, 1);
    g_assert_cmpmem(tw_tensor_data(got), 15 * sizeof(float), tw_tensor_data(again), 15 * sizeof(float));

    tw_graph_unref(loaded);
    tw_function_free(f);
    tw_scope_end();
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(path);
}

static void test_wrong_input(void)
{
    char *dir, *path = scratch_file(&dir, "dense.twbgraph");
    tw_scope_begin();
    dense_weights d = {tw_variable(uniform(1, TW_SHAPE(4, 3)), "dense/kernel", true),
                       tw_variable(uniform(2, TW_SHAPE(3)), "dense/bias", true)};
    tw_function *f = tw_function_new("dense_half", dense_half, &d);
    g_assert_cmpint(tw_graph_save(path, tw_function_get_graph(f, TW_TENSORS(uniform(3, TW_SHAPE(5, 4))))), ==, 0);
    tw_graph *g = tw_graph_load(path);
    g_assert_nonnull(g);
    tw_tensor *y = NULL;
    g_assert_cmpint(tw_graph_run(g, TW_TENSORS(uniform(3, TW_SHAPE(3, 5))), &y, 1), ==, -1);
    g_assert_null(y);
    g_assert_cmpstr(tw_last_error(), ==,
                    "graph 'dense_half': input 0 is float32 (3, 5); the graph takes float32 (5, 4) (it was traced for "
                    "that shape)");
    g_assert_cmpint(tw_graph_run(g, 0, NULL, &y, 1), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "graph 'dense_half' takes 1 input, got 0");
    tw_graph_unref(g);
    tw_function_free(f);
    tw_scope_end();
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(path);
}

/* ---- broken files ------------------------------------------------------------ */

static void assert_load_fails(const char *path, const char *fragment)
{
    g_assert_null(tw_graph_load(path));
    g_test_message("%s", tw_last_error());
    g_assert_true(g_str_has_prefix(tw_last_error(), path));
    g_assert_nonnull(strstr(tw_last_error(), fragment));
}

static void test_broken_files(void)
{
    char *dir, *path = scratch_file(&dir, "dense.twbgraph");
    tw_scope_begin();
    dense_weights d = {tw_variable(uniform(1, TW_SHAPE(4, 3)), "dense/kernel", true),
                       tw_variable(uniform(2, TW_SHAPE(3)), "dense/bias", true)};
    tw_function *f = tw_function_new("dense_half", dense_half, &d);
    g_assert_cmpint(tw_graph_save(path, tw_function_get_graph(f, TW_TENSORS(uniform(3, TW_SHAPE(5, 4))))), ==, 0);
    gchar *bytes;
    gsize size;
    g_assert_true(g_file_get_contents(path, &bytes, &size, NULL));

    char *broken = g_build_filename(dir, "broken.twbgraph", NULL);
    g_assert_true(g_file_set_contents(broken, bytes, (gssize)size - 7, NULL)); /* the data cut short */
    assert_load_fails(broken, "run past the");
    g_assert_true(g_file_set_contents(broken, bytes, 100, NULL)); /* the header cut short */
    assert_load_fails(broken, "runs past the end of the 100-byte file");
    g_assert_true(g_file_set_contents(broken, "not a graph file at all", -1, NULL));
    assert_load_fails(broken, "runs past the end of the 23-byte file");

    /* A safetensors file that is not a graph file. */
    g_assert_cmpint(tw_safetensors_write(broken, 1, (const char *[]){"w"}, (tw_tensor *[]){d.w}, 0, NULL, NULL), ==, 0);
    assert_load_fails(broken, "not a graph file");

    /* A tensor missing: the graph names the node it is for. */
    const char *keys[] = {"format", "version", "graph"};
    char *json = tw_graph_json(tw_function_get_graph(f, TW_TENSORS(uniform(3, TW_SHAPE(5, 4)))));
    const char *values[] = {TW_GRAPH_FILE_FORMAT, "1", json};
    g_assert_cmpint(tw_safetensors_write(broken, 1, (const char *[]){"dense/kernel"}, (tw_tensor *[]){d.w}, 3, keys,
                                         values),
                    ==, 0);
    assert_load_fails(broken, "'dense/bias': no tensor for this variable: the file has no tensor named 'dense/bias'");

    /* A tensor of the wrong shape. */
    g_assert_cmpint(tw_safetensors_write(broken, 2, (const char *[]){"dense/kernel", "dense/bias"},
                                         (tw_tensor *[]){d.w, d.w}, 3, keys, values),
                    ==, 0);
    assert_load_fails(broken, "'dense/bias': the graph needs float32 (3,) but the tensor given for it is float32 (4, 3)");

    /* JSON nested too deep for a recursive reader: the file and the limit. */
    char *deep = g_strnfill(100000, '[');
    const char *deep_values[] = {TW_GRAPH_FILE_FORMAT, "1", deep};
    g_assert_cmpint(tw_safetensors_write(broken, 0, NULL, NULL, 3, keys, deep_values), ==, 0);
    g_assert_null(tw_graph_load(broken));
    char *expected = g_strdup_printf("%s: graph JSON: byte 512: nested deeper than 512 levels", broken);
    g_assert_cmpstr(tw_last_error(), ==, expected);
    g_free(expected);
    g_free(deep);
    free(json);
    g_free(bytes);
    g_free(broken);
    tw_function_free(f);
    tw_scope_end();
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(path);
}

/* ---- broken graphs -------------------------------------------------------------- */

/* input (2, 3) -> relu -> output; the text after "relu" varies per case. */
#define GRAPH_HEAD                                                                                          \
    "{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"f\", \"inputs\": [0], \"outputs\": [[1, 0]], " \
    "\"variables\": [], \"nodes\": [{\"id\": 0, \"op\": \"input\", \"name\": \"input_0\", \"scope\": \"\", "     \
    "\"inputs\": [], \"outputs\": [{\"dtype\": \"float32\", \"shape\": [2, 3]}], "                                \
    "\"attrs\": {\"ints\": [], \"floats\": []}}, "
#define RELU(op, inputs, shape)                                                                               \
    "{\"id\": 1, \"op\": \"" op "\", \"name\": \"act/relu\", \"scope\": \"act\", \"inputs\": " inputs           \
    ", \"outputs\": [{\"dtype\": \"float32\", \"shape\": " shape "}], \"attrs\": {\"ints\": [], \"floats\": []}}]}"

static void assert_import_fails(const char *json, const char *message)
{
    g_assert_null(tw_graph_from_json(json, NULL, NULL));
    g_assert_cmpstr(tw_last_error(), ==, message);
}

static void test_broken_graphs(void)
{
    tw_graph *g = tw_graph_from_json(GRAPH_HEAD RELU("relu", "[[0, 0]]", "[2, 3]"), NULL, NULL);
    g_assert_nonnull(g); /* the well-formed case: the rest differ from it in one place */
    tw_scope_begin();
    tw_tensor *x = tw_tensor_from_data((const float[]){-1, 2, -3, 4, -5, 6}, TW_FLOAT32, TW_SHAPE(2, 3)), *y = NULL;
    g_assert_cmpint(tw_graph_run(g, TW_TENSORS(x), &y, 1), ==, 1);
    g_assert_cmpmem(tw_tensor_data(y), 6 * sizeof(float), ((const float[]){0, 2, 0, 4, 0, 6}), 6 * sizeof(float));
    tw_scope_end();
    tw_graph_unref(g);

    assert_import_fails(GRAPH_HEAD RELU("frobnicate", "[[0, 0]]", "[2, 3]"),
                        "graph JSON: node 1 'act/relu': unknown op 'frobnicate'");
    assert_import_fails(GRAPH_HEAD RELU("relu", "[[1, 0]]", "[2, 3]"),
                        "graph JSON: node 1 'act/relu': input 0 reads node 1, which does not come before it");
    assert_import_fails(GRAPH_HEAD RELU("relu", "[[0, 1]]", "[2, 3]"),
                        "graph JSON: node 1 'act/relu': input 0 reads output 1 of node 0, which has 1");
    assert_import_fails(GRAPH_HEAD RELU("relu", "[[0, 0]]", "[2, 4]"),
                        "graph JSON: node 1 'act/relu': output 0 is promised as float32 (2, 4) but relu gives float32 "
                        "(2, 3) for these inputs");
    assert_import_fails(GRAPH_HEAD RELU("matmul", "[[0, 0], [0, 0]]", "[2, 3]"),
                        "graph JSON: node 1 'act/relu': matmul: inner dimensions differ: (2, 3) x (2, 3)");
    assert_import_fails(GRAPH_HEAD RELU("relu", "[[0, 0]]", "[2, -3]"),
                        "graph JSON: node 1 'act/relu': output 0: a shape's sizes must be whole numbers from 0, with "
                        "fewer elements than memory can hold");
    assert_import_fails(GRAPH_HEAD "{\"id\": 1, \"op\": \"constant\", \"name\": \"c\", \"scope\": \"\", \"inputs\": [], "
                                   "\"outputs\": [{\"dtype\": \"float32\", \"shape\": []}], "
                                   "\"attrs\": {\"ints\": [], \"floats\": []}}]}",
                        "graph JSON: node 1 'c': no tensor for this constant");
    assert_import_fails("{\"format\": \"twb-graph\", \"version\": 1, \"nodes\": [", "graph JSON: byte 48: expected a JSON value");
    assert_import_fails("{\"format\": \"twb-graph\", \"version\": 2, \"function\": \"f\", \"nodes\": []}",
                        "graph JSON: version is not 1 (the only version this reader knows)");
    /* Deep nesting is refused, not followed down the stack. */
    GString *deep = g_string_new(NULL);
    for (int i = 0; i < 100000; i++)
        g_string_append_c(deep, '[');
    g_assert_null(tw_graph_from_json(deep->str, NULL, NULL));
    g_assert_nonnull(strstr(tw_last_error(), "nested deeper than"));
    g_string_free(deep, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph_file/round_trip", test_round_trip);
    g_test_add_func("/graph_file/wrong_input", test_wrong_input);
    g_test_add_func("/graph_file/broken_files", test_broken_files);
    g_test_add_func("/graph_file/broken_graphs", test_broken_graphs);
    return g_test_run();
}
