/* twb trace and twb run-graph as a person uses them: a model file and its
 * checkpoint traced into a graph file, run in another process on an NPY
 * input, giving the model's own eager outputs; a wrong input shape or a
 * missing file fails with exit status 1 and a message saying what the
 * graph takes. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tw/checkpoint.h"
#include "tw/data.h"
#include "tw/function.h"
#include "tw/graph_file.h"
#include "tw/model_file.h"

#include "scratch_tree.h"
#include "twb_run.h"

typedef struct {
    char *dir, *model, *checkpoint, *graph, *x, *y;
} fixture;

static char *in_dir(const fixture *f, const char *name)
{
    return g_build_filename(f->dir, name, NULL);
}

static void setup(fixture *f, gconstpointer data)
{
    (void)data;
    f->dir = g_dir_make_tmp("twb-graph-XXXXXX", NULL);
    g_assert_nonnull(f->dir);
    f->model = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", "mlp_fashion_mnist.json", NULL);
    f->checkpoint = in_dir(f, "mlp.safetensors");
    f->graph = in_dir(f, "mlp.twbgraph");
    f->x = in_dir(f, "x.npy");
    f->y = in_dir(f, "y.npy");
}

static void teardown(fixture *f, gconstpointer data)
{
    (void)data;
    scratch_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->model);
    g_free(f->checkpoint);
    g_free(f->graph);
    g_free(f->x);
    g_free(f->y);
}

static tw_tensor *uniform(uint64_t seed, int ndim, const int64_t *shape)
{
    tw_rng *rng = tw_rng_new(seed);
    tw_tensor *t = tw_random_uniform(rng, TW_FLOAT32, ndim, shape, 0, 1);
    tw_rng_free(rng);
    return t;
}

/* The model with weights from seed 7, saved as a checkpoint; its eager
 * outputs for x. */
static tw_tensor *eager_outputs(const fixture *f, tw_tensor *x)
{
    tw_model *model = tw_model_load(f->model);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 7), ==, 0);
    g_assert_cmpint(tw_checkpoint_save(f->checkpoint, model, NULL, NULL, NULL), ==, 0);
    tw_tensor *y = tw_tensor_ref(tw_model_call(model, x, false));
    g_assert_nonnull(y);
    tw_layer_unref(model);
    return y;
}

static void test_trace_and_run(fixture *f, gconstpointer data)
{
    (void)data;
    tw_scope_begin();
    tw_tensor *x = uniform(11, TW_SHAPE(4, 28, 28));
    g_assert_cmpint(tw_npy_save(f->x, x), ==, 0);
    tw_tensor *expected = eager_outputs(f, x);

    twb_run run = run_twb("trace", f->model, "--checkpoint", f->checkpoint, "--batch", "4", "--output", f->graph, NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "traced 'mlp' for input float32 (4, 28, 28)"));
    g_assert_nonnull(strstr(run.out, "output float32 (4, 10)"));
    twb_run_clear(&run);

    run = run_twb("run-graph", f->graph, "--input", f->x, "--output", f->y, NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);

    tw_tensor *got = tw_npy_load(f->y);
    g_assert_nonnull(got);
    g_assert_cmpint(tw_tensor_ndim(got), ==, 2);
    g_assert_cmpint(tw_tensor_dim(got, 0), ==, 4);
    g_assert_cmpint(tw_tensor_dim(got, 1), ==, 10);
    const float *a = tw_tensor_data(expected), *b = tw_tensor_data(got);
    double worst = 0, largest = 0;
    for (int i = 0; i < 40; i++) {
        worst = fmax(worst, fabs((double)a[i] - b[i]));
        largest = fmax(largest, fabs(a[i]));
    }
    g_test_message("largest |difference| from the eager model: %g (largest output %g)", worst, largest);
    g_assert_cmpfloat(largest, >, 0.01); /* outputs that are not all zero */
    g_assert_cmpfloat(worst, <=, 1e-6);
    tw_tensor_unref(expected);
    tw_scope_end();
}

static void test_bad_input(fixture *f, gconstpointer data)
{
    (void)data;
    tw_scope_begin();
    twb_run run = run_twb("trace", f->model, "--batch", "4", "--output", f->graph, NULL);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);

    g_assert_cmpint(tw_npy_save(f->x, uniform(11, TW_SHAPE(3, 28, 28))), ==, 0);
    run = run_twb("run-graph", f->graph, "--input", f->x, "--output", f->y, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "input 0 is float32 (3, 28, 28); the graph takes float32 (4, 28, 28)"));
    g_assert_nonnull(strstr(run.err, "twb trace MODEL.json --batch 3"));
    g_assert_false(g_file_test(f->y, G_FILE_TEST_EXISTS));
    twb_run_clear(&run);

    g_assert_cmpint(tw_npy_save(f->x, uniform(11, TW_SHAPE(4, 5))), ==, 0);
    run = run_twb("run-graph", f->graph, "--input", f->x, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "input 0 is float32 (4, 5); the graph takes float32 (4, 28, 28)"));
    twb_run_clear(&run);

    run = run_twb("run-graph", f->graph, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "takes 1 input; give one --input NPY file per input"));
    twb_run_clear(&run);

    char *missing = in_dir(f, "missing.twbgraph");
    run = run_twb("run-graph", missing, "--input", f->x, NULL);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, missing));
    twb_run_clear(&run);
    g_free(missing);

    run = run_twb("run-graph", "--inputs", f->x, NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    twb_run_clear(&run);
    run = run_twb("trace", f->model, "--output", f->graph, NULL);
    g_assert_cmpint(run.exit_status, ==, 2);
    twb_run_clear(&run);
    tw_scope_end();
}

/* ---- graph files that must be refused, not crash or hang --------------------- */

static void write_graph_file(const char *path, const char *json)
{
    const char *keys[] = {"format", "version", "graph"}, *values[] = {TW_GRAPH_FILE_FORMAT, "1", json};
    g_assert_cmpint(tw_safetensors_write(path, 0, NULL, NULL, 3, keys, values), ==, 0);
}

/* Stops at once for a start of zeros (so tracing it ends), never for a
 * positive one. */
static int positive(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_greater(tw_sum_all(v[0]), tw_scalar(0));
    return 1;
}

static int increment(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_add_scalar(v[0], 1);
    return 1;
}

static int forever(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    return tw_while_loop(positive, increment, NULL, 1, in, out, 0);
}

/* An add with one input segfaulted run-graph; a loop with no bound and a
 * condition that always holds never stopped. Both exit 1 naming the node. */
static void test_refused_graphs(fixture *f, gconstpointer data)
{
    (void)data;
    tw_scope_begin();
    g_assert_cmpint(tw_npy_save(f->x, uniform(11, TW_SHAPE(2, 3))), ==, 0);
    write_graph_file(f->graph,
                     "{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"f\", \"inputs\": [0], "
                     "\"outputs\": [[1, 0]], \"variables\": [], \"nodes\": [{\"id\": 0, \"op\": \"input\", "
                     "\"name\": \"x\", \"scope\": \"\", \"inputs\": [], \"outputs\": [{\"dtype\": \"float32\", "
                     "\"shape\": [2, 3]}], \"attrs\": {\"ints\": [], \"floats\": []}}, {\"id\": 1, \"op\": \"add\", "
                     "\"name\": \"sum\", \"scope\": \"\", \"inputs\": [[0, 0]], \"outputs\": [{\"dtype\": "
                     "\"float32\", \"shape\": [2, 3]}], \"attrs\": {\"ints\": [], \"floats\": []}}]}");
    twb_run run = run_twb("run-graph", f->graph, "--input", f->x, NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "graph JSON: node 1 'sum': 'add' takes 2 inputs; the node lists 1"));
    twb_run_clear(&run);

    tw_function *fn = tw_function_new("forever", forever, NULL);
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    g_assert_cmpint(tw_graph_save(f->graph, tw_function_get_graph(fn, TW_TENSORS(x))), ==, 0);
    tw_function_free(fn);
    run = run_twb("run-graph", f->graph, "--input", f->x, NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "a while node read from a file needs max_iterations of at least 1 "
                                     "(attrs.ints[0] is 0): an unbounded loop could run forever"));
    twb_run_clear(&run);
    tw_scope_end();
}

/* A Functional model of two inputs and two outputs: traced with both
 * inputs (a one-input trace refused it: "takes 2 inputs, got 1"), run on
 * two NPY files into two, giving the eager outputs. A Lambda in the model
 * is refused by name. */
#define TWO_BY_TWO(last)                                                                                            \
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"two\", \"layers\": ["                                \
    "{\"class_name\": \"InputLayer\", \"name\": \"a\", \"inbound_nodes\": [], \"config\": {\"name\": \"a\", "      \
    "\"batch_input_shape\": [null, 3]}}, "                                                                        \
    "{\"class_name\": \"InputLayer\", \"name\": \"b\", \"inbound_nodes\": [], \"config\": {\"name\": \"b\", "      \
    "\"batch_input_shape\": [null, 2]}}, "                                                                        \
    "{\"class_name\": \"Concatenate\", \"name\": \"cat\", \"config\": {\"name\": \"cat\"}, "                       \
    "\"inbound_nodes\": [[[\"a\", 0, 0, {}], [\"b\", 0, 0, {}]]]}, "                                               \
    "{\"class_name\": \"Dense\", \"name\": \"d\", \"config\": {\"name\": \"d\", \"units\": 4}, "                   \
    "\"inbound_nodes\": [[[\"cat\", 0, 0, {}]]]}, " last "], "                                                     \
    "\"input_layers\": [[\"a\", 0, 0], [\"b\", 0, 0]], \"output_layers\": [[\"d\", 0, 0], [\"e\", 0, 0]]}}"

static void test_two_inputs_two_outputs(fixture *f, gconstpointer data)
{
    (void)data;
    tw_scope_begin();
    char *model_path = in_dir(f, "two.json"), *b_path = in_dir(f, "b.npy"), *z_path = in_dir(f, "z.npy");
    const char *json = TWO_BY_TWO("{\"class_name\": \"Dense\", \"name\": \"e\", \"config\": {\"name\": \"e\", "
                                  "\"units\": 1}, \"inbound_nodes\": [[[\"b\", 0, 0, {}]]]}");
    g_assert_true(g_file_set_contents(model_path, json, -1, NULL));
    tw_tensor *a = uniform(3, TW_SHAPE(5, 3)), *b = uniform(4, TW_SHAPE(5, 2));
    g_assert_cmpint(tw_npy_save(f->x, a), ==, 0);
    g_assert_cmpint(tw_npy_save(b_path, b), ==, 0);
    tw_model *model = tw_model_load(model_path);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 7), ==, 0);
    g_assert_cmpint(tw_checkpoint_save(f->checkpoint, model, NULL, NULL, NULL), ==, 0);
    tw_tensor *expected[2];
    g_assert_cmpint(tw_model_call_n(model, 2, (tw_tensor *[]){a, b}, expected, false), ==, 2);
    tw_layer_unref(model);

    twb_run run = run_twb("trace", model_path, "--checkpoint", f->checkpoint, "--batch", "5", "--output", f->graph,
                          NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    g_assert_nonnull(strstr(run.out, "traced 'two' for inputs float32 (5, 3), float32 (5, 2)"));
    g_assert_nonnull(strstr(run.out, "outputs float32 (5, 4), float32 (5, 1)"));
    twb_run_clear(&run);
    run = run_twb("run-graph", f->graph, "--input", f->x, "--input", b_path, "--output", f->y, "--output", z_path,
                  NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 0);
    twb_run_clear(&run);
    const char *outs[2] = {f->y, z_path};
    for (int k = 0; k < 2; k++) {
        tw_tensor *got = tw_npy_load(outs[k]);
        g_assert_nonnull(got);
        g_assert_cmpint(tw_tensor_numel(got), ==, tw_tensor_numel(expected[k]));
        const float *e = tw_tensor_data(expected[k]), *g = tw_tensor_data(got);
        for (int64_t i = 0; i < tw_tensor_numel(got); i++)
            g_assert_cmpfloat(fabs((double)e[i] - g[i]), <=, 1e-6);
    }

    /* The second output a Lambda: the trace names it. */
    json = TWO_BY_TWO("{\"class_name\": \"Lambda\", \"name\": \"e\", \"config\": {\"name\": \"e\", \"function\": "
                      "[\"4wEAAA==\", null, null], \"function_type\": \"lambda\", \"output_shape\": [1], "
                      "\"output_shape_type\": \"raw\"}, \"inbound_nodes\": [[[\"b\", 0, 0, {}]]]}");
    g_assert_true(g_file_set_contents(model_path, json, -1, NULL));
    run = run_twb("trace", model_path, "--batch", "5", "--output", f->graph, NULL);
    g_test_message("%s%s", run.out, run.err);
    g_assert_cmpint(run.exit_status, ==, 1);
    g_assert_nonnull(strstr(run.err, "Lambda 'e': runs Python code saved in the Keras file (a lambda), which cannot "
                                     "run here"));
    twb_run_clear(&run);
    g_free(model_path);
    g_free(b_path);
    g_free(z_path);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/cli/graph/trace_and_run", fixture, NULL, setup, test_trace_and_run, teardown);
    g_test_add("/cli/graph/bad_input", fixture, NULL, setup, test_bad_input, teardown);
    g_test_add("/cli/graph/refused_graphs", fixture, NULL, setup, test_refused_graphs, teardown);
    g_test_add("/cli/graph/two_inputs_two_outputs", fixture, NULL, setup, test_two_inputs_two_outputs, teardown);
    return g_test_run();
}
