/* Shape-only traces (tw_function_get_graph_shapes): the same graph JSON as
 * a full trace for ops on inputs and variables, values computed from
 * constants alone that C code reads, cond and while nodes (a loop that
 * never ends on its real values is not run); values derived from the
 * inputs left uncomputed (printing says so, reading one is refused); the
 * same failures, with the same messages, as a full trace; and the cached
 * graph runs to the eager values. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "tw/function.h"

/* The graph JSON of fn traced in full and shape-only (separate functions,
 * so neither reuses the other's graph); NULL where a trace failed, its
 * message in *error. */
static char *graph_json(tw_function_fn fn, void *user_data, bool shape_only, int ninputs, tw_tensor *const *inputs,
                        char **error)
{
    tw_function *f = tw_function_new("f", fn, user_data);
    tw_error_clear();
    const tw_graph *g = shape_only ? tw_function_get_graph_shapes(f, ninputs, inputs)
                                   : tw_function_get_graph(f, ninputs, inputs);
    char *json = g ? tw_graph_json(g) : NULL;
    *error = g ? NULL : g_strdup(tw_last_error());
    tw_function_free(f);
    return json;
}

/* Both traces succeed with byte-identical JSON. */
static void assert_same_graph(const char *what, tw_function_fn fn, void *user_data, int ninputs,
                              tw_tensor *const *inputs)
{
    char *full_error, *shapes_error;
    char *full = graph_json(fn, user_data, false, ninputs, inputs, &full_error);
    char *shapes = graph_json(fn, user_data, true, ninputs, inputs, &shapes_error);
    if (!full || !shapes)
        g_error("%s: the full trace: %s; the shape-only trace: %s", what, full ? "traced" : full_error,
                shapes ? "traced" : shapes_error);
    if (strcmp(full, shapes) != 0)
        g_error("%s: the shape-only trace's graph differs:\n%s\nagainst the full trace's:\n%s", what, shapes, full);
    g_free(full);
    g_free(shapes);
}

/* Both traces fail with the same message. */
static void assert_same_failure(const char *what, tw_function_fn fn, void *user_data, int ninputs,
                                tw_tensor *const *inputs, const char *expected)
{
    char *full_error, *shapes_error;
    char *full = graph_json(fn, user_data, false, ninputs, inputs, &full_error);
    char *shapes = graph_json(fn, user_data, true, ninputs, inputs, &shapes_error);
    if (full || shapes)
        g_error("%s: traced (%s) where it should fail", what, full ? "in full" : "shape-only");
    g_assert_cmpstr(shapes_error, ==, full_error);
    if (!strstr(full_error, expected))
        g_error("%s: \"%s\" does not say \"%s\"", what, full_error, expected);
    g_free(full_error);
    g_free(shapes_error);
}

/* ---- a dense layer, a branch, a loop and C code reading constants ----------------- */

typedef struct {
    tw_tensor *w, *b; /* variables */
} dense;

static int halve(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_mul_scalar(v[0], 0.5);
    return 1;
}

static int big(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_greater(tw_sum_all(tw_abs(v[0])), tw_scalar(1));
    return 1;
}

static int doubled(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_add(v[0], v[0]);
    return 1;
}

static int negated(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_neg(v[0]);
    return 1;
}

/* relu(x W + b), a branch on its sum, halved until small (a loop of as
 * many iterations as the values need), tiled as often as a count computed
 * from constants says: C code reads that count, so it is computed. */
static int mixed(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    dense *d = user_data;
    tw_tensor *h = tw_relu(tw_add(tw_matmul(in[0], d->w), d->b));
    tw_tensor *branch;
    if (tw_cond(tw_greater(tw_sum_all(h), tw_scalar(0)), doubled, negated, NULL, 1, &h, &branch, 1) != 1)
        return -1;
    tw_tensor *small;
    if (tw_while_loop(big, halve, NULL, 1, &branch, &small, 0) != 1)
        return -1;
    double count = tw_tensor_item(tw_add(tw_scalar(1), tw_sqrt(tw_scalar(4)))); /* 3 */
    if (isnan(count))
        return -1;
    out[0] = tw_tile(small, 2, (const int64_t[]){(int64_t)count, 1});
    out[1] = tw_reshape(h, 1, (const int64_t[]){-1});
    return 2;
}

static dense make_dense(void)
{
    return (dense){tw_variable(gc_tensor(1, -1, 1, TW_SHAPE(4, 3)), "w", true),
                   tw_variable(gc_tensor(2, -1, 1, TW_SHAPE(3)), "b", true)};
}

static void test_same_graph(void)
{
    tw_scope_begin();
    dense d = make_dense();
    tw_tensor *x = gc_tensor(3, -1, 1, TW_SHAPE(2, 4));
    assert_same_graph("dense, cond, while, tile", mixed, &d, 1, &x);
    tw_scope_end();
}

/* The graph a shape-only trace caches runs: the eager values. */
static void test_cached_graph_runs(void)
{
    tw_scope_begin();
    dense d = make_dense();
    tw_tensor *x = gc_tensor(3, -1, 1, TW_SHAPE(2, 4));
    tw_function *f = tw_function_new("mixed", mixed, &d);
    g_assert_nonnull(tw_function_get_graph_shapes(f, 1, &x));
    tw_tensor *traced[2], *eager[2];
    g_assert_cmpint(tw_function_call(f, 1, &x, traced, 2), ==, 2);
    g_assert_cmpint(tw_function_trace_count(f), ==, 1); /* the call ran the shape-only trace's graph */
    g_assert_cmpint(mixed(&x, 1, eager, 2, &d), ==, 2);
    for (int k = 0; k < 2; k++) {
        int64_t n = tw_tensor_numel(eager[k]);
        g_assert_cmpint(tw_tensor_numel(traced[k]), ==, n);
        double *a = g_new(double, n), *b = g_new(double, n);
        g_assert_cmpint(tw_tensor_copy_to(traced[k], a, sizeof *a * (size_t)n), ==, 0);
        g_assert_cmpint(tw_tensor_copy_to(eager[k], b, sizeof *b * (size_t)n), ==, 0);
        g_assert_cmpmem(a, sizeof *a * (size_t)n, b, sizeof *b * (size_t)n);
        g_free(a);
        g_free(b);
    }
    tw_function_free(f);
    tw_scope_end();
}

/* ---- what is and is not computed --------------------------------------------------- */

typedef struct {
    char *input_text, *constant_text;
} printed;

static int prints(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    printed *p = user_data;
    out[0] = tw_exp(in[0]);
    p->input_text = tw_tensor_to_string(out[0]);
    p->constant_text = tw_tensor_to_string(tw_mul_scalar(tw_scalar(2), 3));
    return 1;
}

static void test_uncomputed_values(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2));
    for (int shape_only = 0; shape_only < 2; shape_only++) {
        printed p = {0};
        tw_function *f = tw_function_new("prints", prints, &p);
        g_assert_nonnull(shape_only ? tw_function_get_graph_shapes(f, 1, &x) : tw_function_get_graph(f, 1, &x));
        g_assert_cmpstr(p.input_text, ==,
                        shape_only ? "tw.Tensor(<not computed by a shape-only trace>, shape=(2,), dtype=float32)"
                                   : "tw.Tensor([1. 1.], shape=(2,), dtype=float32)");
        g_assert_cmpstr(p.constant_text, ==, "tw.Tensor(6.0, shape=(), dtype=float64)");
        free(p.input_text);
        free(p.constant_text);
        tw_function_free(f);
    }
    tw_scope_end();
}

/* C code reading a value computed from the input: the trace fails either
 * way; a shape-only trace refuses the read itself (NAN, an error). */
typedef struct {
    double value;
    char *error;
} read_back;

static int reads_input(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    read_back *r = user_data;
    tw_error_clear();
    r->value = tw_tensor_item(tw_sum_all(in[0]));
    r->error = tw_error_pending() ? g_strdup(tw_last_error()) : NULL;
    out[0] = tw_add_scalar(in[0], r->value);
    return 1;
}

static void test_read_fails_alike(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2));
    read_back r = {0};
    assert_same_failure("reading the input's sum", reads_input, &r, 1, &x,
                        "cannot trace: tw_tensor_item reads a tensor computed from the inputs");
    /* The shape-only trace ran last: its read was refused. */
    g_assert_true(isnan(r.value));
    g_assert_nonnull(r.error);
    g_assert_nonnull(strstr(r.error, "tw_tensor_item: a shape-only trace (tw_function_get_graph_shapes) did not "
                                     "compute this value"));
    g_free(r.error);
    tw_scope_end();
}

/* Ops whose shapes do not fit fail both traces at the same op. */
static int mismatched(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_matmul(tw_exp(in[0]), in[0]);
    return out[0] ? 1 : -1;
}

static void test_shape_error_alike(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    assert_same_failure("a matmul of (2, 3) by (2, 3)", mismatched, NULL, 1, &x, "matmul");
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/shape_trace/same-graph", test_same_graph);
    g_test_add_func("/shape_trace/cached-graph-runs", test_cached_graph_runs);
    g_test_add_func("/shape_trace/uncomputed-values", test_uncomputed_values);
    g_test_add_func("/shape_trace/read-fails-alike", test_read_fails_alike);
    g_test_add_func("/shape_trace/shape-error-alike", test_shape_error_alike);
    return g_test_run();
}
