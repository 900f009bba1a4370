/* Traced functions (tw/function.h): tracing then running gives exactly the
 * eager values for a broad table of ops (float64), signatures and retraces,
 * variables captured by reference and constants by value, assignments as
 * graph nodes, a Sequential model's forward pass with its layer scopes,
 * gradients through traced calls, clear failures for what cannot be traced,
 * the inspection API and the JSON, name scopes, a steady state that takes
 * no memory from the system, and each graph pass on graphs where its effect
 * is known. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "graph/graph_internal.h"
#include "tw/model.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* Same shape, dtype and values, bit for bit (NaN equals NaN). */
static void assert_identical(const char *what, tw_tensor *a, tw_tensor *b)
{
    if (!a || !b)
        g_error("%s: missing result: %s", what, tw_last_error());
    char sa[96], sb[96];
    if (tw_tensor_dtype(a) != tw_tensor_dtype(b) || tw_tensor_ndim(a) != tw_tensor_ndim(b) ||
        memcmp(tw_tensor_shape(a), tw_tensor_shape(b), sizeof(int64_t) * (size_t)tw_tensor_ndim(a)) != 0)
        g_error("%s: %s %s against %s %s", what, tw_dtype_name(tw_tensor_dtype(a)),
                tw_shape_str(tw_tensor_ndim(a), tw_tensor_shape(a), sa, sizeof sa), tw_dtype_name(tw_tensor_dtype(b)),
                tw_shape_str(tw_tensor_ndim(b), tw_tensor_shape(b), sb, sizeof sb));
    size_t bytes = (size_t)tw_tensor_numel(a) * tw_dtype_size(tw_tensor_dtype(a));
    void *va = g_malloc(bytes + 1), *vb = g_malloc(bytes + 1);
    g_assert_cmpint(tw_tensor_copy_to(a, va, bytes), ==, 0);
    g_assert_cmpint(tw_tensor_copy_to(b, vb, bytes), ==, 0);
    if (memcmp(va, vb, bytes) != 0)
        g_error("%s: traced values differ from eager ones", what);
    g_free(va);
    g_free(vb);
}

static double value_at(tw_tensor *t, int64_t i)
{
    tw_tensor *flat = tw_reshape(tw_contiguous(t), TW_SHAPE(-1));
    return tw_tensor_get(flat, (const int64_t[]){i});
}

static tw_tensor *vector(int n, const double *values)
{
    return tw_tensor_from_data(values, TW_FLOAT64, TW_SHAPE(n));
}

/* ---- the op table ------------------------------------------------------------------- */

typedef int (*op_fn)(tw_tensor *const *in, tw_tensor **out);
typedef struct {
    const char *name;
    op_fn fn;
    int ninputs;
    int ndims[3];
    int64_t shapes[3][4];
    double lo, hi; /* input range */
} op_case;

#define ONE(expr) { out[0] = (expr); return 1; }
static int op_add_broadcast(tw_tensor *const *in, tw_tensor **out) ONE(tw_add(in[0], in[1]))
static int op_sub(tw_tensor *const *in, tw_tensor **out) ONE(tw_sub(in[0], in[1]))
static int op_mul_broadcast(tw_tensor *const *in, tw_tensor **out) ONE(tw_mul(in[0], in[1]))
static int op_div(tw_tensor *const *in, tw_tensor **out) ONE(tw_div(in[0], in[1]))
static int op_pow(tw_tensor *const *in, tw_tensor **out) ONE(tw_pow(in[0], in[1]))
static int op_max_min(tw_tensor *const *in, tw_tensor **out) ONE(tw_minimum(tw_maximum(in[0], in[1]), tw_scalar(0.5)))
static int op_where(tw_tensor *const *in, tw_tensor **out) ONE(tw_where(tw_greater(in[0], in[1]), in[0], tw_neg(in[1])))
static int op_compare(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_cast(tw_logical_or(tw_less_equal(in[0], in[1]), tw_logical_not(tw_not_equal(in[0], in[1]))), TW_FLOAT64))
static int op_scalars(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_rdiv_scalar(3.0, tw_add_scalar(tw_rsub_scalar(1.0, tw_mul_scalar(in[0], 2.5)), 4.0)))
static int op_unary_a(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_add(tw_add(tw_exp(in[0]), tw_log(in[0])), tw_add(tw_sqrt(in[0]), tw_rsqrt(in[0]))))
static int op_unary_b(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_add(tw_add(tw_tanh(in[0]), tw_sigmoid(in[0])), tw_add(tw_sin(in[0]), tw_cos(in[0]))))
static int op_unary_c(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_add(tw_add(tw_erf(in[0]), tw_gelu(in[0])), tw_add(tw_softplus(in[0]), tw_swish(in[0]))))
static int op_unary_d(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_add(tw_add(tw_leaky_relu(in[0], 0.2), tw_elu(in[0], 1.0)), tw_add(tw_relu(in[0]), tw_clip(in[0], -0.3, 0.4))))
static int op_unary_e(tw_tensor *const *in, tw_tensor **out)
    ONE(tw_add(tw_add(tw_abs(in[0]), tw_sign(in[0])), tw_add(tw_square(in[0]), tw_add(tw_log1p(tw_abs(in[0])), tw_expm1(in[0])))))
static int op_reduce(tw_tensor *const *in, tw_tensor **out)
{
    out[0] = tw_sum(in[0], TW_AXES(1), false);
    out[1] = tw_mean(in[0], TW_AXES(0, 2), true);
    out[2] = tw_max(in[0], TW_AXES(-1), false);
    out[3] = tw_min(in[0], 0, NULL, false);
    out[4] = tw_prod(in[0], TW_AXES(2), false);
    out[5] = tw_variance(in[0], TW_AXES(1), false);
    out[6] = tw_logsumexp(in[0], TW_AXES(2), true);
    out[7] = tw_argmax(in[0], 1);
    out[8] = tw_argmin(in[0], -1);
    return 9;
}
static int op_matmul(tw_tensor *const *in, tw_tensor **out)
{
    out[0] = tw_matmul(in[0], in[1]);
    out[1] = tw_matmul_ex(in[1], in[0], true, true);
    return 2;
}
static int op_batch_matmul(tw_tensor *const *in, tw_tensor **out) ONE(tw_matmul(in[0], in[1]))
static int op_views(tw_tensor *const *in, tw_tensor **out)
{
    tw_tensor *x = in[0];
    out[0] = tw_reshape(x, TW_SHAPE(6, -1));
    out[1] = tw_transpose(x);
    out[2] = tw_permute(x, TW_AXES(1, 0, 2));
    out[3] = tw_slice(x, 2, -1, 0, -2);
    out[4] = tw_strided_slice(x, (const int64_t[]){0, 1, 0}, (const int64_t[]){2, 3, 4}, (const int64_t[]){1, 1, 3});
    out[5] = tw_squeeze(tw_expand_dims(x, 1), 0, NULL);
    out[6] = tw_add(tw_broadcast_to(tw_slice(x, 0, 0, 1, 1), TW_SHAPE(2, 3, 4)), x);
    out[7] = tw_stop_gradient(tw_mul(tw_reshape(tw_transpose(x), TW_SHAPE(4, 6)), tw_scalar(2)));
    return 8;
}
static int op_softmax(tw_tensor *const *in, tw_tensor **out)
{
    out[0] = tw_softmax(in[0], -1);
    out[1] = tw_log_softmax(in[0], 0);
    return 2;
}
static int op_losses(tw_tensor *const *in, tw_tensor **out)
{
    out[0] = tw_softmax_cross_entropy(in[0], tw_softmax(in[1], -1));
    out[1] = tw_sparse_softmax_cross_entropy(in[0], tw_argmax(in[1], -1));
    return 2;
}
static int op_conv(tw_tensor *const *in, tw_tensor **out)
{
    tw_conv2d_params p = {.stride_h = 2, .stride_w = 1, .padding = TW_PADDING_SAME};
    tw_conv2d_params v = {.dilation_h = 2, .dilation_w = 2, .padding = TW_PADDING_VALID};
    out[0] = tw_conv2d(in[0], in[1], &p);
    out[1] = tw_conv2d(in[0], in[1], &v);
    return 2;
}
static int op_pool(tw_tensor *const *in, tw_tensor **out)
{
    tw_pool2d_params p = {.pool_h = 2, .pool_w = 2};
    tw_pool2d_params q = {.pool_h = 3, .pool_w = 3, .stride_h = 2, .stride_w = 1, .padding = TW_PADDING_SAME};
    out[0] = tw_max_pool2d(in[0], &p);
    out[1] = tw_avg_pool2d(in[0], &q);
    return 2;
}
static int op_concat_gather(tw_tensor *const *in, tw_tensor **out)
{
    out[0] = tw_concat(3, (tw_tensor *const[]){in[0], in[1], in[0]}, 1);
    out[1] = tw_stack(2, (tw_tensor *const[]){in[0], in[1]}, 0);
    tw_tensor *idx = tw_tensor_from_data((const int64_t[]){2, 0, 2, 1}, TW_INT64, TW_SHAPE(4));
    out[2] = tw_gather(in[0], idx, 1);
    out[3] = tw_gather(in[1], tw_cast(tw_argmax(in[0], 1), TW_INT32), 0);
    out[4] = tw_one_hot(tw_argmax(in[1], 0), 4, TW_FLOAT64);
    return 5;
}
static int op_split_pad_tile(tw_tensor *const *in, tw_tensor **out)
{
    if (tw_split(in[0], 2, 1, out) < 0 || tw_split_sizes(in[0], 2, (const int64_t[]){1, 3}, 0, out + 2) < 0)
        return -1;
    out[4] = tw_pad(in[0], (const int64_t[]){1, 0, 2, 1}, -1.5);
    out[5] = tw_tile(in[0], 2, (const int64_t[]){2, 1});
    return 6;
}
static int op_composites(tw_tensor *const *in, tw_tensor **out)
{
    if (tw_moments(in[0], TW_AXES(0), false, &out[0], &out[1]) < 0 ||
        tw_clip_by_global_norm(2, in, 1.5, &out[2], &out[4]) < 0)
        return -1;
    out[5] = tw_clip_by_norm(in[1], 0.5);
    out[6] = tw_cast(tw_cast(in[0], TW_FLOAT32), TW_FLOAT64);
    out[7] = tw_copy(in[1]);
    return 8;
}

#define IN1(a, b, c, d) 1, {4}, {{a, b, c, d}}
static const op_case op_cases[] = {
    {"add broadcast", op_add_broadcast, 2, {2, 1}, {{3, 4}, {4}}, -2, 2},
    {"sub", op_sub, 2, {2, 2}, {{3, 4}, {3, 4}}, -2, 2},
    {"mul broadcast", op_mul_broadcast, 2, {3, 2}, {{2, 3, 1}, {1, 4}}, -2, 2},
    {"div", op_div, 2, {2, 2}, {{3, 4}, {1, 4}}, 0.5, 2},
    {"pow", op_pow, 2, {1, 0}, {{5}, {0}}, 0.2, 2},
    {"maximum minimum", op_max_min, 2, {2, 2}, {{3, 4}, {3, 1}}, -1, 1},
    {"where", op_where, 2, {2, 1}, {{3, 4}, {4}}, -1, 1},
    {"comparisons", op_compare, 2, {2, 2}, {{3, 4}, {3, 4}}, -1, 1},
    {"scalars", op_scalars, 1, {2}, {{3, 4}}, -1, 1},
    {"exp log sqrt rsqrt", op_unary_a, 1, {2}, {{3, 5}}, 0.1, 3},
    {"tanh sigmoid sin cos", op_unary_b, 1, {2}, {{3, 5}}, -3, 3},
    {"erf gelu softplus swish", op_unary_c, 1, {2}, {{3, 5}}, -3, 3},
    {"relus clip", op_unary_d, 1, {2}, {{3, 5}}, -1, 1},
    {"abs sign square log1p expm1", op_unary_e, 1, {2}, {{3, 5}}, -1, 1},
    {"reductions", op_reduce, 1, {3}, {{2, 3, 4}}, -1, 1},
    {"matmul", op_matmul, 2, {2, 2}, {{3, 4}, {4, 3}}, -1, 1},
    {"batch matmul", op_batch_matmul, 2, {3, 2}, {{2, 3, 4}, {4, 5}}, -1, 1},
    {"views", op_views, 1, {3}, {{2, 3, 4}}, -1, 1},
    {"softmax", op_softmax, 1, {2}, {{3, 5}}, -3, 3},
    {"cross-entropy", op_losses, 2, {2, 2}, {{4, 5}, {4, 5}}, -2, 2},
    {"conv2d", op_conv, 2, {4, 4}, {{2, 6, 5, 3}, {3, 2, 3, 4}}, -1, 1},
    {"pooling", op_pool, 1, {4}, {{2, 5, 6, 3}}, -1, 1},
    {"concat stack gather one_hot", op_concat_gather, 2, {2, 2}, {{4, 3}, {4, 3}}, -1, 1},
    {"split pad tile", op_split_pad_tile, 1, {2}, {{4, 4}}, -1, 1},
    {"moments clip cast copy", op_composites, 2, {2, 1}, {{3, 4}, {6}}, -1, 1},
};

static int table_fn(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *user_data)
{
    const op_case *c = user_data;
    return c->fn(inputs, outputs);
}

static void test_ops_match_eager(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(op_cases); i++) {
        const op_case *c = &op_cases[i];
        tw_scope_begin();
        tw_tensor *in[3];
        for (int k = 0; k < c->ninputs; k++)
            in[k] = gc_tensor((unsigned)(i * 7 + k + 1), c->lo, c->hi, c->ndims[k], c->shapes[k]);
        tw_tensor *eager[16] = {0}, *traced[16], *again[16];
        int n = c->fn(in, eager);
        if (n <= 0)
            g_error("%s: eager failed: %s", c->name, tw_last_error());
        tw_function *f = tw_function_new(c->name, table_fn, (void *)c);
        g_assert_cmpint(tw_function_call(f, c->ninputs, in, traced, 16), ==, n);
        g_assert_cmpint(tw_function_call(f, c->ninputs, in, again, 16), ==, n);
        g_assert_cmpint(tw_function_trace_count(f), ==, 1);
        for (int k = 0; k < n; k++) {
            char what[96];
            g_snprintf(what, sizeof what, "%s, output %d", c->name, k);
            assert_identical(what, eager[k], traced[k]);
            assert_identical(what, eager[k], again[k]);
        }
        tw_function_free(f);
        tw_scope_end();
    }
}

/* ---- signatures ----------------------------------------------------------------------- */

static int square_plus_one(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_add_scalar(tw_square(in[0]), 1.0);
    return 1;
}

static void test_retrace(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("sq", square_plus_one, NULL);
    tw_tensor *a = gc_tensor(1, -1, 1, TW_SHAPE(2, 3)), *b = gc_tensor(2, -1, 1, TW_SHAPE(2, 3));
    tw_tensor *c = gc_tensor(3, -1, 1, TW_SHAPE(4, 3));
    g_assert_nonnull(tw_function_call1(f, TW_TENSORS(a)));
    g_assert_nonnull(tw_function_call1(f, TW_TENSORS(b)));
    g_assert_cmpint(tw_function_trace_count(f), ==, 1); /* same signature, other values */
    assert_identical("second call", tw_add_scalar(tw_square(b), 1.0), tw_function_call1(f, TW_TENSORS(b)));
    assert_identical("new shape", tw_add_scalar(tw_square(c), 1.0), tw_function_call1(f, TW_TENSORS(c)));
    g_assert_cmpint(tw_function_trace_count(f), ==, 2);
    g_assert_nonnull(tw_function_call1(f, TW_TENSORS(a)));
    g_assert_cmpint(tw_function_trace_count(f), ==, 2);
    tw_tensor *a32 = tw_cast(a, TW_FLOAT32);
    assert_identical("new dtype", tw_add_scalar(tw_square(a32), 1.0), tw_function_call1(f, TW_TENSORS(a32)));
    g_assert_cmpint(tw_function_trace_count(f), ==, 3);
    g_assert_cmpint(tw_function_graph_count(f), ==, 3);
    /* A non-contiguous input of a known shape uses the packed graph. */
    tw_tensor *t = tw_transpose(gc_tensor(4, -1, 1, TW_SHAPE(3, 2)));
    assert_identical("strided input", tw_add_scalar(tw_square(t), 1.0), tw_function_call1(f, TW_TENSORS(t)));
    g_assert_cmpint(tw_function_trace_count(f), ==, 3);
    /* More signatures than the cache holds: the oldest unused goes. */
    for (int64_t rows = 10; rows < 10 + TW_FUNCTION_MAX_GRAPHS; rows++)
        g_assert_nonnull(tw_function_call1(f, TW_TENSORS(gc_tensor(5, -1, 1, TW_SHAPE(rows)))));
    g_assert_cmpint(tw_function_graph_count(f), ==, TW_FUNCTION_MAX_GRAPHS);
    g_assert_cmpint(tw_function_trace_count(f), ==, 3 + TW_FUNCTION_MAX_GRAPHS);
    tw_function_free(f);
    tw_scope_end();
}

/* ---- captures ---------------------------------------------------------------------------- */

typedef struct {
    tw_tensor *v, *c;
} captures;

static int uses_captures(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    captures *cap = user_data;
    tw_tensor *k = tw_full(0.25, TW_FLOAT64, TW_SHAPE(3));
    out[0] = tw_add(tw_mul(in[0], cap->v), tw_add(cap->c, k));
    return 1;
}

static void test_variables_by_reference(void)
{
    tw_scope_begin();
    captures cap = {tw_variable(vector(3, (const double[]){1, 2, 3}), "scale", true),
                    vector(3, (const double[]){10, 20, 30})};
    tw_function *f = tw_function_new("captures", uses_captures, &cap);
    tw_tensor *x = vector(3, (const double[]){1, 1, 2});
    tw_tensor *y = tw_function_call1(f, TW_TENSORS(x));
    g_assert_cmpfloat(value_at(y, 2), ==, 2 * 3 + 30.25);
    g_assert_cmpint(tw_assign(cap.v, vector(3, (const double[]){-1, -2, -3})), ==, 0);
    y = tw_function_call1(f, TW_TENSORS(x));
    g_assert_cmpfloat(value_at(y, 2), ==, 2 * -3 + 30.25); /* the variable's new value */
    ((double *)tw_tensor_data(cap.c))[2] = 1000;            /* not a variable: captured by value */
    y = tw_function_call1(f, TW_TENSORS(x));
    g_assert_cmpfloat(value_at(y, 2), ==, 2 * -3 + 30.25);
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);

    const tw_graph *g = tw_function_graph_at(f, 0);
    int variables = 0, constants = 0;
    for (int i = 0; i < tw_graph_node_count(g); i++) {
        tw_node_kind kind = tw_graph_node_kind(g, i);
        if (kind == TW_NODE_VARIABLE) {
            variables++;
            g_assert_cmpstr(tw_graph_node_name(g, i), ==, "scale");
            g_assert_true(tw_graph_node_tensor(g, i) == cap.v);
        } else if (kind == TW_NODE_CONSTANT) {
            constants++;
            char *attrs = tw_graph_node_attrs(g, i);
            g_assert_cmpstr(attrs, ==, "value=[10.25, 20.25, 30.25]"); /* c + k, folded */
            g_free(attrs);
        }
    }
    g_assert_cmpint(variables, ==, 1);
    g_assert_cmpint(constants, ==, 1);
    tw_function_free(f);
    tw_scope_end();
}

static int accumulate(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *v = user_data;
    if (tw_assign_add(v, in[0]) < 0)
        return -1;
    out[0] = tw_mul_scalar(v, 2.0);
    return 1;
}

/* An assignment is a graph node: it happens once per call, the tracing call
 * included, and later nodes read the new value. */
static void test_assign_in_graph(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(vector(2, (const double[]){1, 2}), "total", false);
    tw_function *f = tw_function_new("accumulate", accumulate, v);
    tw_tensor *x = vector(2, (const double[]){10, 100});
    for (int call = 1; call <= 3; call++) {
        tw_tensor *y = tw_function_call1(f, TW_TENSORS(x));
        g_assert_cmpfloat(value_at(v, 1), ==, 2 + 100 * call);
        g_assert_cmpfloat(value_at(y, 1), ==, 2 * (2 + 100 * call));
    }
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    const tw_graph *g = tw_function_graph_at(f, 0);
    bool found = false;
    for (int i = 0; i < tw_graph_node_count(g); i++)
        found |= !strcmp(tw_graph_node_op(g, i), "assign_add") && tw_graph_node_noutputs(g, i) == 0;
    g_assert_true(found);
    tw_function_free(f);
    tw_scope_end();
}

/* ---- a model's forward pass ------------------------------------------------------------- */

static int forward(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_model_call(user_data, in[0], false);
    return 1;
}

static void test_sequential_scopes(void)
{
    tw_scope_begin();
    tw_model *m = tw_sequential_new("mlp");
    tw_model_add(m, tw_input_layer(&(tw_shape){2, {-1, 4}}));
    tw_model_add(m, tw_dense(8, "relu"));
    tw_model_add(m, tw_dense(3, "softmax"));
    tw_layer_set_dtype(m, TW_FLOAT64);
    tw_function *f = tw_function_new("forward", forward, m);
    tw_tensor *x = gc_tensor(7, -1, 1, TW_SHAPE(5, 4));
    /* The first call builds the model inside the trace. */
    tw_tensor *traced = tw_function_call1(f, TW_TENSORS(x));
    assert_identical("model", tw_model_call(m, x, false), traced);
    assert_identical("model, again", tw_model_call(m, x, false), tw_function_call1(f, TW_TENSORS(x)));

    const tw_graph *g = tw_function_graph_at(f, 0);
    int matmuls = 0, variables = 0;
    for (int i = 0; i < tw_graph_node_count(g); i++) {
        const char *op = tw_graph_node_op(g, i), *scope = tw_graph_node_scope(g, i);
        if (tw_graph_node_kind(g, i) == TW_NODE_OP)
            g_assert_true(g_str_has_prefix(scope, "mlp/dense")); /* every op belongs to a layer */
        if (!strcmp(op, "matmul")) {
            const char *want = matmuls++ ? "mlp/dense_1/matmul" : "mlp/dense/matmul";
            g_assert_cmpstr(tw_graph_node_name(g, i), ==, want);
        }
        if (!strcmp(op, "variable")) {
            variables++;
            g_assert_true(g_str_has_prefix(tw_graph_node_name(g, i), scope + strlen("mlp/")));
        }
    }
    g_assert_cmpint(matmuls, ==, 2);
    g_assert_cmpint(variables, ==, 4);
    g_assert_cmpstr(tw_name_scope_current(), ==, "");
    tw_function_free(f);
    tw_layer_unref(m);
    tw_scope_end();
}

/* ---- gradients ---------------------------------------------------------------------------- */

typedef struct {
    tw_tensor *w, *b;
} affine;

static tw_tensor *affine_loss(affine *p, tw_tensor *x)
{
    return tw_sum_all(tw_square(tw_tanh(tw_add(tw_matmul(x, p->w), p->b))));
}

static int loss_fn(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = affine_loss(user_data, in[0]);
    return 1;
}

/* Gradients of loss wrt W, b and x, through a traced call or eagerly. */
static void gradients(affine *p, tw_tensor *x, tw_function *f, tw_tensor **grads)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *loss = f ? tw_function_call1(f, TW_TENSORS(x)) : affine_loss(p, x);
    tw_tape_end(tape);
    g_assert_cmpint(tw_tape_gradient(tape, loss, TW_TENSORS(p->w, p->b, x), grads), ==, 0);
    tw_tape_free(tape);
}

static void test_gradients_under_tape(void)
{
    tw_scope_begin();
    affine p = {tw_variable(gc_tensor(1, -1, 1, TW_SHAPE(4, 3)), "w", true),
                tw_variable(gc_tensor(2, -1, 1, TW_SHAPE(3)), "b", true)};
    tw_tensor *x = gc_tensor(3, -1, 1, TW_SHAPE(5, 4));
    tw_function *f = tw_function_new("loss", loss_fn, &p);
    tw_tensor *eager[3], *first[3], *cached[3];
    gradients(&p, x, NULL, eager);
    gradients(&p, x, f, first); /* traces, then runs the graph on the tape */
    gradients(&p, x, f, cached);
    for (int i = 0; i < 3; i++) {
        assert_identical("gradient through the tracing call", eager[i], first[i]);
        assert_identical("gradient through a cached graph", eager[i], cached[i]);
    }
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    tw_function_free(f);
    tw_scope_end();
}

static int inner_gradient(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, in[0]);
    tw_tensor *y = tw_sum_all(tw_mul(tw_sin(in[0]), in[0]));
    tw_tape_end(tape);
    int rc = tw_tape_gradient(tape, y, 1, in, out);
    tw_tape_free(tape);
    return rc < 0 ? -1 : 1;
}

static void test_gradient_inside(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("grad", inner_gradient, NULL);
    tw_tensor *x = gc_tensor(4, -2, 2, TW_SHAPE(6));
    tw_tensor *expected = tw_add(tw_sin(x), tw_mul(x, tw_cos(x))); /* d/dx x sin x */
    tw_tensor *eager[1];
    g_assert_cmpint(inner_gradient((tw_tensor *const[]){x}, 1, eager, 1, NULL), ==, 1);
    tw_tensor *traced = tw_function_call1(f, TW_TENSORS(x));
    assert_identical("gradient computed inside", eager[0], traced);
    for (int64_t i = 0; i < 6; i++)
        g_assert_cmpfloat(fabs(value_at(traced, i) - value_at(expected, i)), <, 1e-12);
    tw_function_free(f);
    tw_scope_end();
}

/* ---- what cannot be traced ------------------------------------------------------------------ */

static int noisy(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *r = tw_random_uniform(user_data, TW_FLOAT64, tw_tensor_ndim(in[0]), tw_tensor_shape(in[0]), 0, 1);
    out[0] = tw_add(in[0], r);
    return 1;
}

static int reads_item(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    double m = tw_tensor_item(tw_max(in[0], 0, NULL, false));
    out[0] = tw_mul_scalar(in[0], m);
    return 1;
}

static tw_tensor *custom_forward(tw_custom_ctx *ctx, tw_tensor *const *in, void *user_data)
{
    return tw_mul_scalar(in[0], 3.0);
}

static int custom_backward(tw_custom_ctx *ctx, tw_tensor *g, tw_tensor **gin, void *user_data)
{
    gin[0] = tw_mul_scalar(g, 3.0);
    return 0;
}

static int custom(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_custom_gradient(1, in, custom_forward, custom_backward, NULL);
    return 1;
}

static int reads_variable(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_mul_scalar(in[0], tw_tensor_item(user_data));
    return 1;
}

static int fails(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_matmul(in[0], in[0]);
    return out[0] ? 1 : -1;
}

static void expect_failure(tw_function_fn fn, void *user_data, const char *name, const char *message)
{
    tw_function *f = tw_function_new(name, fn, user_data);
    tw_tensor *x = gc_tensor(9, 0.5, 1, TW_SHAPE(2, 3));
    for (int attempt = 0; attempt < 2; attempt++) { /* nothing is cached: it fails again */
        g_assert_null(tw_function_call1(f, TW_TENSORS(x)));
        g_assert_cmpstr(tw_last_error(), ==, message);
        tw_error_clear();
    }
    g_assert_cmpint(tw_function_graph_count(f), ==, 0);
    g_assert_null(tw_function_get_graph(f, TW_TENSORS(x)));
    tw_error_clear();
    tw_function_free(f);
}

static void test_untraceable(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(1);
    expect_failure(noisy, rng, "noisy",
                   "function 'noisy': cannot trace: a random draw (random_uniform) feeds op 'add'; random draws are "
                   "not graph ops yet: draw outside the function and pass the values in as an input");
    expect_failure(reads_item, NULL, "reads_item",
                   "function 'reads_item': cannot trace: tw_tensor_item reads a tensor computed from the inputs; a "
                   "graph cannot depend on values read in C (compute with ops instead, and tw_cond or "
                   "tw_while_loop to branch on them)");
    tw_tensor *v = tw_variable(tw_scalar_of(2, TW_FLOAT64), "gain", true);
    expect_failure(reads_variable, v, "reads_variable",
                   "function 'reads_variable': cannot trace: tw_tensor_item reads variable 'gain'; a graph cannot "
                   "depend on values read in C (compute with ops instead, and tw_cond or tw_while_loop to "
                   "branch on them)");
    expect_failure(custom, NULL, "custom",
                   "function 'custom': cannot trace: op 'custom' is a custom gradient (tw_custom_gradient), which "
                   "cannot be traced yet");
    expect_failure(fails, NULL, "fails", "function 'fails': matmul: inner dimensions differ: (2, 3) x (2, 3)");
    tw_rng_free(rng);
    /* Eagerly the same functions still run. */
    tw_tensor *out[1];
    g_assert_cmpint(reads_variable((tw_tensor *const[]){v}, 1, out, 1, v), ==, 1);
    g_assert_cmpfloat(tw_tensor_item(out[0]), ==, 4);
    tw_scope_end();
}

/* ---- the call's contract ------------------------------------------------------------------ */

static int three_outputs(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *y = tw_add_scalar(in[0], 1.0);
    out[0] = in[0];        /* an input, passed through */
    out[1] = y;            /* the same value twice */
    out[2] = y;
    return 3;
}

static int nested_outer(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *y = tw_function_call1(user_data, 1, in);
    out[0] = tw_mul(y, in[0]);
    return 1;
}

static void test_call_contract(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(10, -1, 1, TW_SHAPE(3));
    g_assert_null(tw_function_new("none", NULL, NULL));
    g_assert_cmpstr(tw_last_error(), ==, "function_new: fn is NULL");

    tw_function *f = tw_function_new(NULL, three_outputs, NULL);
    g_assert_cmpstr(tw_function_name(f), ==, "function");
    tw_tensor *out[3];
    g_assert_cmpint(tw_function_call(f, TW_TENSORS(x), out, 3), ==, 3);
    g_assert_true(out[0] == x);
    g_assert_true(out[1] == out[2]);
    assert_identical("passthrough", tw_add_scalar(x, 1.0), out[1]);
    g_assert_cmpint(tw_function_call(f, TW_TENSORS(x), out, 2), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "function 'function' returns 3 outputs; the array has room for 2");
    g_assert_null(out[0]);
    tw_error_clear();
    g_assert_cmpint(tw_function_call(f, 1, (tw_tensor *const[]){NULL}, out, 3), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "function 'function': input 0 is NULL");
    tw_error_clear();
    /* Without a scope, outputs belong to the caller. */
    tw_scope_end();
    x = gc_tensor(10, -1, 1, TW_SHAPE(3));
    g_assert_cmpint(tw_function_call(f, TW_TENSORS(x), out, 3), ==, 3);
    for (int k = 0; k < 3; k++)
        tw_tensor_unref(out[k]);
    tw_tensor_unref(x);
    tw_function_free(f);

    /* A function called while another is traced joins that trace. */
    tw_scope_begin();
    tw_function *inner = tw_function_new("inner", square_plus_one, NULL);
    tw_function *outer = tw_function_new("outer", nested_outer, inner);
    x = gc_tensor(11, -1, 1, TW_SHAPE(4));
    assert_identical("nested", tw_mul(tw_add_scalar(tw_square(x), 1.0), x), tw_function_call1(outer, TW_TENSORS(x)));
    g_assert_cmpint(tw_function_trace_count(inner), ==, 0);
    const tw_graph *g = tw_function_graph_at(outer, 0);
    g_assert_cmpint(tw_graph_node_count(g), ==, 5); /* input, square, constant, add, mul */
    tw_function_free(outer);
    tw_function_free(inner);
    tw_scope_end();
}

/* ---- inspection and JSON -------------------------------------------------------------------- */

static int small_graph(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_name_scope_push("block");
    tw_tensor *s = tw_sum(tw_add(in[0], in[1]), TW_AXES(1), true);
    tw_tensor *t = tw_add(s, tw_scalar(1.5));
    tw_name_scope_pop();
    out[0] = tw_softmax(t, 0);
    out[1] = t;
    return 2;
}

static void test_inspection_and_json(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("small \"graph\"", small_graph, NULL);
    tw_tensor *a = gc_tensor(12, -1, 1, TW_SHAPE(2, 3)), *b = gc_tensor(13, -1, 1, TW_SHAPE(2, 3));
    const tw_graph *g = tw_function_get_graph(f, TW_TENSORS(a, b));
    g_assert_nonnull(g);
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    g_assert_cmpstr(tw_graph_function_name(g), ==, "small \"graph\"");
    g_assert_cmpint(tw_graph_ninputs(g), ==, 2);
    g_assert_cmpint(tw_graph_input_node(g, 1), ==, 1);
    g_assert_cmpstr(tw_graph_node_op(g, 0), ==, "input");
    g_assert_cmpstr(tw_graph_node_name(g, 1), ==, "input_1");
    /* 2: add, 3: sum, 4: the scalar 1.5, 5: add_1, then the softmax's ops (its output is node 16) */
    g_assert_cmpstr(tw_graph_node_name(g, 2), ==, "block/add");
    g_assert_cmpstr(tw_graph_node_scope(g, 2), ==, "block");
    g_assert_cmpstr(tw_graph_node_name(g, 5), ==, "block/add_1");
    int output;
    g_assert_cmpint(tw_graph_node_ninputs(g, 3), ==, 1);
    g_assert_cmpint(tw_graph_node_input(g, 3, 0, &output), ==, 2);
    g_assert_cmpint(output, ==, 0);
    const int64_t *shape;
    g_assert_cmpint(tw_graph_node_output_shape(g, 3, 0, &shape), ==, 2);
    g_assert_cmpint(shape[0], ==, 2);
    g_assert_cmpint(shape[1], ==, 1);
    g_assert_cmpint(tw_graph_node_output_dtype(g, 3, 0), ==, TW_FLOAT64);
    char *attrs = tw_graph_node_attrs(g, 3);
    g_assert_cmpstr(attrs, ==, "ints=[1, 0, 1]"); /* keepdims, then the reduced-axis mask */
    g_free(attrs);
    attrs = tw_graph_node_attrs(g, 4);
    g_assert_cmpstr(attrs, ==, "value=1.5");
    g_free(attrs);
    g_assert_cmpint(tw_graph_noutputs(g), ==, 2);
    g_assert_cmpint(tw_graph_output(g, 1, &output), ==, 5);
    g_assert_cmpstr(tw_graph_node_scope(g, tw_graph_output(g, 0, NULL)), ==, "");
    /* Out of range is an error, not a crash. */
    g_assert_null(tw_graph_node_name(g, 99));
    g_assert_cmpstr(tw_last_error(), ==, "graph_node_name: node 99 is out of range (the graph has 17)");
    g_assert_cmpint(tw_graph_node_input(g, 3, 1, NULL), ==, -1);
    tw_error_clear();
    for (int i = 0; i < tw_graph_node_count(g); i++)
        for (int k = 0; k < tw_graph_node_ninputs(g, i); k++)
            g_assert_cmpint(tw_graph_node_input(g, i, k, NULL), <, i); /* execution order */

    char *json = tw_graph_json(g);
    g_assert_true(g_str_has_prefix(json, "{\"format\": \"twb-graph\", \"version\": 1, \"function\": "
                                         "\"small \\\"graph\\\"\""));
    g_assert_nonnull(strstr(json, "\"inputs\": [0, 1]"));
    g_assert_nonnull(strstr(json, "\"outputs\": [[16, 0], [5, 0]]"));
    g_assert_nonnull(strstr(json, "{\"id\": 3, \"op\": \"sum\", \"name\": \"block/sum\", \"scope\": \"block\", "
                                  "\"inputs\": [[2, 0]], \"outputs\": [{\"dtype\": \"float64\", \"shape\": [2, 1]}], "
                                  "\"attrs\": {\"ints\": [1, 0, 1], \"floats\": []}}"));
    g_assert_nonnull(strstr(json, "\"op\": \"constant\", \"name\": \"block/constant\""));
    g_assert_nonnull(strstr(json, "\"value\": [1.5]"));
    g_free(json);
    json = tw_function_graph_json(f);
    g_assert_true(g_str_has_prefix(json, "{\"function\": \"small \\\"graph\\\"\", \"graphs\": [\n{\"format\""));
    g_free(json);
    tw_function_free(f);
    tw_scope_end();
}

static void test_name_scopes(void)
{
    g_assert_cmpstr(tw_name_scope_current(), ==, "");
    tw_name_scope_push("model");
    tw_name_scope_push("layer");
    g_assert_cmpstr(tw_name_scope_current(), ==, "model/layer");
    tw_name_scope_pop();
    tw_name_scope_push("");
    g_assert_cmpstr(tw_name_scope_current(), ==, "model");
    tw_name_scope_pop();
    for (int i = 0; i < 1000; i++) /* past the limits, pairs still match */
        tw_name_scope_push("a_rather_long_name");
    for (int i = 0; i < 1000; i++)
        tw_name_scope_pop();
    g_assert_cmpstr(tw_name_scope_current(), ==, "model");
    tw_name_scope_pop();
    tw_name_scope_pop(); /* one too many: ignored */
    g_assert_cmpstr(tw_name_scope_current(), ==, "");
}

/* After the first runs, a traced call takes every buffer from the caches. */
static void test_steady_state_memory(void)
{
    tw_function *f = tw_function_new("sq", square_plus_one, NULL);
    tw_tensor *x = gc_tensor(14, -1, 1, TW_SHAPE(64, 64));
    for (int i = 0; i < 3; i++) {
        tw_scope_begin();
        g_assert_nonnull(tw_function_call1(f, TW_TENSORS(x)));
        tw_scope_end();
    }
    uint64_t before = tw__system_allocations();
    for (int i = 0; i < 100; i++) {
        tw_scope_begin();
        g_assert_nonnull(tw_function_call1(f, TW_TENSORS(x)));
        tw_scope_end();
    }
    g_assert_cmpuint(tw__system_allocations(), ==, before);
    tw_tensor_unref(x);
    tw_function_free(f);
}

/* ---- graph passes ------------------------------------------------------------------------- */

/* The ops of g in order, space-separated, into buf. */
static const char *op_list(const tw_graph *g, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < tw_graph_node_count(g) && used < size; i++)
        used += (size_t)g_snprintf(buf + used, size - used, "%s%s", i ? " " : "", tw_graph_node_op(g, i));
    return buf;
}

static int with_dead_nodes(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_add(in[0], tw_scalar(2));
    tw_mul(tw_exp(in[0]), tw_scalar(3)); /* computed, never used */
    if (tw_assign_add(user_data, tw_neg(in[0])) < 0)
        return -1;
    return 1;
}

static void test_prune(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(vector(3, (const double[]){1, 2, 3}), "v", true);
    tw_tensor *x = vector(3, (const double[]){10, 20, 30}), *unused = vector(1, (const double[]){0});
    tw_graph *g = tw__trace("dead", with_dead_nodes, v, 2, (tw_tensor *const[]){x, unused}, 4);
    g_assert_nonnull(g);
    char ops[512];
    g_assert_cmpstr(op_list(g, ops, sizeof ops), ==,
                    "input input constant add exp constant mul neg variable assign_add");
    int removed;
    g_assert_cmpint(tw__graph_prune(g, &removed), ==, 0);
    g_assert_cmpint(removed, ==, 3);
    g_assert_cmpint(tw__graph_finalize(g), ==, 0);
    /* The unused input stays (the signature); the assignment and what it reads stay. */
    g_assert_cmpstr(op_list(g, ops, sizeof ops), ==, "input input constant add neg variable assign_add");
    g_assert_cmpint(tw_graph_input_node(g, 1), ==, 1);
    g_assert_cmpint(tw_graph_node_input(g, 6, 0, NULL), ==, 5);
    g_assert_cmpint(tw_graph_node_input(g, 6, 1, NULL), ==, 4);
    tw_tensor *y;
    g_assert_cmpint(tw__graph_run(g, (tw_tensor *const[]){x, unused}, &y), ==, 0);
    g_assert_cmpfloat(value_at(y, 2), ==, 32);
    g_assert_cmpfloat(value_at(v, 2), ==, 3 - 30);
    tw_tensor_unref(y);
    tw__graph_unref(g);

    /* tw_function prunes every graph it traces. */
    tw_function *f = tw_function_new("dead", with_dead_nodes, v);
    g_assert_nonnull(tw_function_call1(f, TW_TENSORS(x, unused)));
    g_assert_cmpint(tw_graph_node_count(tw_function_graph_at(f, 0)), ==, 7);
    g_assert_cmpfloat(value_at(v, 2), ==, 3 - 60);
    tw_function_free(f);
    tw_scope_end();
}

static int with_repeats(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *a = tw_add(in[0], in[1]), *b = tw_add(in[0], in[1]);
    tw_tensor *c = tw_mul_scalar(in[0], 0.5), *d = tw_mul_scalar(in[0], 0.5);
    tw_tensor *s = tw_sum(in[0], TW_AXES(0), false), *k = tw_sum(in[0], TW_AXES(0), true); /* attrs differ */
    tw_tensor *p = tw_mul(a, b), *q = tw_sub(c, d);
    out[0] = tw_add(p, q);
    out[1] = b;
    out[2] = tw_add(s, k);
    return 3;
}

static void test_cse(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(20, -1, 1, TW_SHAPE(4)), *y = gc_tensor(21, -1, 1, TW_SHAPE(4));
    tw_tensor *in[2] = {x, y};
    tw_graph *g = tw__trace("repeats", with_repeats, NULL, 2, in, 4);
    char ops[512];
    g_assert_cmpstr(op_list(g, ops, sizeof ops), ==,
                    "input input add add constant mul constant mul sum sum mul sub add add");
    int merged, removed;
    g_assert_cmpint(tw__graph_cse(g, &merged), ==, 0);
    g_assert_cmpint(merged, ==, 3); /* the second add, the second 0.5, the second mul by it */
    g_assert_cmpint(tw__graph_prune(g, &removed), ==, 0);
    g_assert_cmpint(removed, ==, 3);
    g_assert_cmpint(tw__graph_finalize(g), ==, 0);
    g_assert_cmpstr(op_list(g, ops, sizeof ops), ==, "input input add constant mul sum sum mul sub add add");
    int output;
    g_assert_cmpint(tw_graph_node_input(g, 7, 0, NULL), ==, 2); /* a * a */
    g_assert_cmpint(tw_graph_node_input(g, 7, 1, NULL), ==, 2);
    g_assert_cmpint(tw_graph_output(g, 1, &output), ==, 2); /* b is a */
    tw_tensor *traced[3], *eager[3];
    g_assert_cmpint(tw__graph_run(g, in, traced), ==, 0);
    g_assert_cmpint(with_repeats(in, 2, eager, 3, NULL), ==, 3);
    for (int k = 0; k < 3; k++) {
        assert_identical("after CSE", eager[k], traced[k]);
        tw_tensor_unref(traced[k]);
    }
    tw__graph_unref(g);
    tw_scope_end();
}

static int reads_around_assignment(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *v = user_data;
    tw_tensor *before = tw_mul_scalar(v, 2.0);
    if (tw_assign_add(v, in[0]) < 0)
        return -1;
    out[0] = tw_sub(tw_mul_scalar(v, 2.0), before);
    return 1;
}

static void test_cse_keeps_reads_apart(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(vector(2, (const double[]){1, 2}), "v", false);
    tw_tensor *x = vector(2, (const double[]){3, 5});
    tw_graph *g = tw__trace("around", reads_around_assignment, v, 1, &x, 4);
    int merged;
    g_assert_cmpint(tw__graph_cse(g, &merged), ==, 0);
    g_assert_cmpint(merged, ==, 1); /* the constant 2; the two reads of v stay apart */
    tw__graph_unref(g);
    tw_function *f = tw_function_new("around", reads_around_assignment, v);
    for (int call = 1; call <= 2; call++) {
        tw_tensor *y = tw_function_call1(f, TW_TENSORS(x));
        g_assert_cmpfloat(value_at(y, 1), ==, 10);
        g_assert_cmpfloat(value_at(v, 1), ==, 2 + 5 * call);
    }
    tw_function_free(f);
    tw_scope_end();
}

/* ---- constant folding and fusion ---------------------------------------------------- */

static int folds(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *v = user_data;
    out[0] = tw_mul(in[0], tw_add(tw_scalar(2), tw_scalar(3)));
    out[1] = tw_mul(v, tw_scalar(2)); /* reads a variable: stays */
    if (tw_assign_add(v, tw_sub(tw_scalar(1), tw_scalar(0.5))) < 0)
        return -1;
    return 2;
}

static void test_constant_folding(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(vector(2, (const double[]){1, 2}), "v", true);
    tw_tensor *x = vector(2, (const double[]){3, 4});
    tw_function *f = tw_function_new("folds", folds, v);
    tw_tensor *y[2];
    g_assert_cmpint(tw_function_call(f, TW_TENSORS(x), y, 2), ==, 2);
    char ops[512];
    const tw_graph *g = tw_function_graph_at(f, 0);
    g_assert_cmpstr(op_list(g, ops, sizeof ops), ==, "input constant constant mul variable mul constant assign_add");
    g_assert_cmpfloat(value_at(y[0], 1), ==, 20);
    g_assert_cmpfloat(value_at(y[1], 1), ==, 4);
    g_assert_cmpfloat(value_at(v, 1), ==, 2.5);
    g_assert_cmpint(tw_function_call(f, TW_TENSORS(x), y, 2), ==, 2);
    g_assert_cmpfloat(value_at(y[1], 1), ==, 5);
    g_assert_cmpfloat(value_at(v, 1), ==, 3);
    tw_function_free(f);
    tw_scope_end();
}

/* t is read twice inside the chain, u is an output too: u ends one group. */
static int chain(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *t = tw_add(tw_mul(in[0], in[1]), tw_scalar(0.5));
    tw_tensor *u = tw_sub(tw_relu(t), tw_square(t));
    tw_tensor *w = tw_div(tw_maximum(u, in[1]), tw_add_scalar(tw_abs(in[0]), 1));
    out[0] = tw_clip(tw_mul(tw_tanh(w), tw_exp(tw_neg(tw_abs(u)))), -0.75, 0.75);
    out[1] = u;
    return 2;
}

static void check_fused(tw_dtype dtype, int64_t size)
{
    tw_scope_begin();
    tw_tensor *in[2] = {tw_cast(gc_tensor(30, -2, 2, TW_SHAPE(size)), dtype),
                        tw_cast(gc_tensor(31, -2, 2, TW_SHAPE(size)), dtype)};
    tw_function *f = tw_function_new("chain", chain, NULL);
    tw_tensor *eager[2], *traced[2];
    g_assert_cmpint(chain(in, 2, eager, 2, NULL), ==, 2);
    for (int call = 0; call < 2; call++) {
        g_assert_cmpint(tw_function_call(f, 2, in, traced, 2), ==, 2);
        assert_identical("fused chain", eager[0], traced[0]);
        assert_identical("fused chain's shared value", eager[1], traced[1]);
    }
    const tw_graph *g = tw_function_graph_at(f, 0);
    g_assert_cmpint(g->nfused, ==, 2);
    int fused = 0;
    for (int i = 0; i < g->nfused; i++)
        fused += g->fused[i].nmembers;
    g_assert_cmpint(fused, ==, 15); /* every op but the cast of 0.5 (folded) */
    g_assert_cmpint(tw_graph_node_count(g), ==, 19); /* the graph keeps its nodes */
    tw_function_free(f);
    tw_scope_end();
}

static void test_fusion(void)
{
    check_fused(TW_FLOAT64, 7);
    check_fused(TW_FLOAT64, 3000);   /* several blocks, a short last one */
    check_fused(TW_FLOAT32, 1000);
    check_fused(TW_FLOAT32, 100000); /* split over threads */
}

/* A strided input (the run contract is packed inputs; a view node's output
 * can be strided) runs the group node by node. */
static void test_fusion_strided_input(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_transpose(gc_tensor(32, -1, 1, TW_SHAPE(3, 4))), *b = gc_tensor(33, -1, 1, TW_SHAPE(4, 3));
    tw_tensor *in[2] = {tw_contiguous(a), b}, *eager[2], *traced[2];
    g_assert_cmpint(chain(in, 2, eager, 2, NULL), ==, 2);
    tw_graph *g = tw__trace("chain", chain, NULL, 2, in, 2);
    g_assert_nonnull(g);
    tw_tensor *view_in[2] = {a, b};
    g_assert_cmpint(tw__graph_run(g, view_in, traced), ==, 0);
    assert_identical("fused chain on a view", eager[0], traced[0]);
    tw_tensor_unref(traced[0]);
    tw_tensor_unref(traced[1]);
    tw__graph_unref(g);
    tw_scope_end();
}

static tw_tensor *chain_loss(tw_tensor *x, tw_tensor *y)
{
    tw_tensor *out[2];
    chain((tw_tensor *const[]){x, y}, 2, out, 2, NULL);
    return tw_sum_all(tw_add(out[0], out[1]));
}

static int chain_loss_fn(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = chain_loss(in[0], in[1]);
    return 1;
}

/* Under a tape each node runs and is recorded: gradients as eager. */
static void test_fusion_under_tape(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(34, -2, 2, TW_SHAPE(50)), *y = gc_tensor(35, -2, 2, TW_SHAPE(50));
    tw_function *f = tw_function_new("chain_loss", chain_loss_fn, NULL);
    g_assert_nonnull(tw_function_call1(f, TW_TENSORS(x, y))); /* traced, run fused */
    g_assert_cmpint(tw_function_graph_at(f, 0)->nfused, >, 0);
    tw_tensor *grads[2][2];
    for (int traced = 0; traced < 2; traced++) {
        tw_tape *tape = tw_tape_begin(false);
        tw_tape_watch(tape, x);
        tw_tape_watch(tape, y);
        tw_tensor *loss = traced ? tw_function_call1(f, TW_TENSORS(x, y)) : chain_loss(x, y);
        tw_tape_end(tape);
        g_assert_cmpint(tw_tape_gradient(tape, loss, TW_TENSORS(x, y), grads[traced]), ==, 0);
        tw_tape_free(tape);
    }
    assert_identical("gradient of x through a fused graph", grads[0][0], grads[1][0]);
    assert_identical("gradient of y through a fused graph", grads[0][1], grads[1][1]);
    tw_function_free(f);
    tw_scope_end();
}

/* ---- control flow ------------------------------------------------------------------------ */

static int branch_true(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_add(tw_mul(in[0], in[1]), in[0]);
    out[1] = tw_sin(in[1]);
    return 2;
}

static int branch_false(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_sub(in[1], tw_exp(in[0]));
    out[1] = in[0]; /* an input as it is */
    return 2;
}

/* sum(x) > 0 ? (x*y + x, sin y) : (y - exp x, x) */
static int branchy(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *pred = tw_greater(tw_sum_all(in[0]), tw_scalar(0));
    return tw_cond(pred, branch_true, branch_false, NULL, 2, in, out, max);
}

static void test_cond_both_branches(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("branchy", branchy, NULL);
    tw_tensor *y = gc_tensor(41, -1, 1, TW_SHAPE(3, 4));
    tw_tensor *xs[2] = {gc_tensor(40, 0.1, 1, TW_SHAPE(3, 4)), tw_neg(gc_tensor(42, 0.1, 1, TW_SHAPE(3, 4)))};
    const tw_graph *g = NULL;
    for (int i = 0; i < 2; i++) {
        tw_tensor *traced[2], *eager[2];
        g_assert_cmpint(tw_function_call(f, TW_TENSORS(xs[i], y), traced, 2), ==, 2);
        tw_tensor *args[2] = {xs[i], y};
        (i == 0 ? branch_true : branch_false)(args, 2, eager, 2, NULL);
        assert_identical("cond output 0", eager[0], traced[0]);
        assert_identical("cond output 1", eager[1], traced[1]);
        const tw_graph *now = tw_function_get_graph(f, TW_TENSORS(xs[i], y));
        g_assert_true(i == 0 || now == g); /* the same graph took the other branch */
        g = now;
    }
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    int cond = -1;
    for (int id = 0; id < tw_graph_node_count(g); id++)
        if (tw_graph_node_kind(g, id) == TW_NODE_COND)
            cond = id;
    g_assert_cmpint(cond, >=, 0);
    g_assert_cmpstr(tw_graph_node_op(g, cond), ==, "cond");
    g_assert_cmpint(tw_graph_node_nsubgraphs(g, cond), ==, 2);
    const int *from = NULL;
    const tw_graph *t = tw_graph_node_subgraph(g, cond, 0, &from);
    g_assert_nonnull(t);
    g_assert_cmpint(tw_graph_ninputs(t), ==, 2); /* x and y, captured */
    g_assert_nonnull(from);
    g_assert_null(tw_graph_node_subgraph(g, cond, 2, NULL));
    tw_function_free(f);
    tw_scope_end();
}

/* Newton's iterations for sqrt(a) from y = a, until |y^2 - a| <= 1e-12 everywhere; c counts them. */
static int newton_going(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *a = user_data ? (tw_tensor *)user_data : v[2];
    out[0] = tw_greater(tw_max(tw_abs(tw_sub(tw_square(v[0]), a)), 0, NULL, false), tw_scalar(1e-12));
    return 1;
}

static int newton_step(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *a = user_data ? (tw_tensor *)user_data : v[2];
    out[0] = tw_mul_scalar(tw_add(v[0], tw_div(a, v[0])), 0.5);
    out[1] = tw_add_scalar(v[1], 1);
    for (int k = 2; k < n; k++)
        out[k] = v[k];
    return n;
}

/* a captured by the loop (user_data NULL: a is the function's input, used
 * inside the loop without being a loop variable). */
static int newton_sqrt(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *vars[2] = {in[0], tw_zeros(TW_FLOAT64, 0, NULL)};
    return tw_while_loop(newton_going, newton_step, in[0], 2, vars, out, 100);
}

static void test_while_runtime_iterations(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("newton", newton_sqrt, NULL);
    double counts[2];
    for (int i = 0; i < 2; i++) {
        tw_tensor *a = tw_mul_scalar(gc_tensor(43, 1, 2, TW_SHAPE(5)), i == 0 ? 1.0 : 1e6);
        tw_tensor *traced[2], *eager[2];
        g_assert_cmpint(tw_function_call(f, TW_TENSORS(a), traced, 2), ==, 2);
        g_assert_cmpint(newton_sqrt(&a, 1, eager, 2, NULL), ==, 2);
        assert_identical("while_loop's root", eager[0], traced[0]);
        assert_identical("while_loop's count", eager[1], traced[1]);
        g_assert_cmpfloat(fabs(value_at(traced[0], 3) - sqrt(value_at(a, 3))), <, 1e-9);
        counts[i] = tw_tensor_item(traced[1]);
    }
    g_assert_cmpint(tw_function_trace_count(f), ==, 1);
    g_assert_cmpfloat(counts[1], >, counts[0] + 3); /* the larger the numbers, the more iterations */
    /* max_iterations stops it */
    tw_tensor *vars[2] = {tw_add_scalar(tw_zeros(TW_FLOAT64, 0, NULL), 1e6), tw_zeros(TW_FLOAT64, 0, NULL)}, *out[2];
    g_assert_cmpint(tw_while_loop(newton_going, newton_step, vars[0], 2, vars, out, 3), ==, 2);
    g_assert_cmpfloat(tw_tensor_item(out[1]), ==, 3);
    tw_function_free(f);
    tw_scope_end();
}

static int grow_body(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_concat(TW_TENSORS(v[0], v[0]), 0);
    return 1;
}

static int small_sum(tw_tensor *const *v, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_less(tw_sum_all(v[0]), tw_scalar(100));
    return 1;
}

static int growing(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    return tw_while_loop(small_sum, grow_body, NULL, 1, in, out, 0);
}

static void test_while_shape_change(void)
{
    tw_scope_begin();
    tw_tensor *x = vector(2, (const double[]){1, 2}), *out[1];
    g_assert_cmpint(tw_while_loop(small_sum, grow_body, NULL, 1, &x, out, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "the body's output 0 is float64 (4,) but loop variable 0 is float64 (2,)"));
    g_assert_nonnull(strstr(tw_last_error(), "keep their dtype and shape"));
    tw_function *f = tw_function_new("growing", growing, NULL);
    g_assert_null(tw_function_call1(f, TW_TENSORS(x)));
    g_assert_nonnull(strstr(tw_last_error(), "function 'growing'"));
    g_assert_nonnull(strstr(tw_last_error(), "the body's output 0 is float64 (4,) but loop variable 0 is float64 (2,)"));
    g_assert_cmpint(tw_function_graph_count(f), ==, 0);
    tw_function_free(f);
    tw_scope_end();
}

/* cond then while: both kinds of node in one graph. */
static int cond_then_loop(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *branched[2];
    if (branchy(in, 2, branched, 2, NULL) < 0)
        return -1;
    tw_tensor *a = tw_add_scalar(tw_square(branched[0]), 1);
    tw_tensor *vars[2] = {a, tw_zeros(TW_FLOAT64, 0, NULL)};
    if (tw_while_loop(newton_going, newton_step, a, 2, vars, out, 50) < 0)
        return -1;
    out[2] = branched[1];
    return 3;
}

/* The original graph's tensors, by node name. */
static tw_tensor *same_tensors(const char *name, tw_node_kind kind, void *user_data)
{
    const tw_graph *g = user_data;
    for (int id = 0; id < tw_graph_node_count(g); id++)
        if (strcmp(tw_graph_node_name(g, id), name) == 0)
            return (tw_tensor *)tw_graph_node_tensor(g, id);
    return NULL;
}

static void test_control_json_round_trip(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("cond_then_loop", cond_then_loop, NULL);
    tw_tensor *y = gc_tensor(45, -1, 1, TW_SHAPE(3, 4));
    tw_tensor *xs[2] = {gc_tensor(44, 0.1, 1, TW_SHAPE(3, 4)), tw_neg(gc_tensor(46, 0.1, 1, TW_SHAPE(3, 4)))};
    const tw_graph *g = tw_function_get_graph(f, TW_TENSORS(xs[0], y));
    g_assert_nonnull(g);
    char *json = tw_graph_json(g);
    g_assert_nonnull(strstr(json, "\"op\": \"cond\""));
    g_assert_nonnull(strstr(json, "\"op\": \"while\""));
    g_assert_nonnull(strstr(json, "\"subgraphs\": ["));
    tw_graph *back = tw_graph_from_json(json, same_tensors, (void *)g);
    if (!back)
        g_error("graph read back: %s", tw_last_error());
    char *again = tw_graph_json(back);
    g_assert_cmpstr(json, ==, again); /* the sub-graphs came back whole */
    for (int i = 0; i < 2; i++) {
        tw_tensor *direct[3], *imported[3];
        g_assert_cmpint(tw_function_call(f, TW_TENSORS(xs[i], y), direct, 3), ==, 3);
        g_assert_cmpint(tw_graph_run(back, TW_TENSORS(xs[i], y), imported, 3), ==, 3);
        for (int k = 0; k < 3; k++)
            assert_identical("imported control flow", direct[k], imported[k]);
    }
    /* a sub-graph that does not fit its node is refused */
    char *broken = g_strdup(json);
    char *from = strstr(broken, "\"inputs_from\": [");
    g_assert_nonnull(from);
    from[strlen("\"inputs_from\": [")] = '9';
    g_assert_null(tw_graph_from_json(broken, same_tensors, (void *)g));
    g_assert_nonnull(strstr(tw_last_error(), "inputs_from"));
    g_free(broken);
    free(json);
    free(again);
    tw_graph_unref(back);
    tw_function_free(f);
    tw_scope_end();
}

/* A deep MLP's traced training step: thousands of nodes whose values live
 * until the backward pass reads them. Planning its memory took minutes (a
 * cubic first fit over all values); now it is near-linear. Catastrophic
 * bound only: seconds for a whole epoch of a 2,000-layer model. */
static void test_memory_plan_deep_model(void)
{
    tw_scope_begin();
    tw_model *model = tw_sequential_new("deep");
    for (int i = 0; i < 2000; i++) {
        tw_layer *d = tw_layer_new("Dense", NULL);
        g_assert_cmpint(tw_layer_set(d, "units", "2"), ==, 0);
        g_assert_cmpint(tw_layer_set(d, "activation", i < 1999 ? "relu" : "linear"), ==, 0);
        g_assert_cmpint(tw_model_add(model, d), ==, 0);
    }
    g_assert_cmpint(tw_model_build(model, &(tw_shape){2, {-1, 2}}, 3), ==, 0);
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("sgd", 0.01), &loss, 0, NULL), ==, 0);
    tw_tensor *x = gc_tensor(70, -1, 1, TW_SHAPE(64, 2)), *y = gc_tensor(71, -1, 1, TW_SHAPE(64, 2));
    tw_fit_options options = tw_fit_options_default();
    options.batch_size = 32;
    options.traced = TW_TRACE_ON;
    GTimer *timer = g_timer_new();
    tw_history *history = tw_model_fit(model, tw_cast(x, TW_FLOAT32), tw_cast(y, TW_FLOAT32), &options);
    double seconds = g_timer_elapsed(timer, NULL);
    if (!history)
        g_error("fit: %s", tw_last_error());
    const tw_graph *g = tw_model_train_step_graph(model);
    g_assert_nonnull(g);
    g_test_message("2,000 layers: %d nodes, arena %lld bytes, one epoch in %.2f s", g->nnodes,
                   (long long)g->arena_bytes, seconds);
    g_assert_cmpint(g->nnodes, >, 10000);
    g_assert_cmpfloat(seconds, <, 30);
    tw_history_free(history);
    g_timer_destroy(timer);
    tw_layer_unref(model);
    tw_scope_end();
}

/* ---- graphs read from files: every op, any number of inputs ------------------ */

/* input float32 (2, 3), then one node of op with ninputs inputs (all the
 * input) and the op's outputs promised as float32 (2, 3), attrs as given. */
static char *one_op_graph(const tw_op_def *op, int ninputs, const char *ints)
{
    GString *j = g_string_new("{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"f\", \"inputs\": [0], "
                              "\"outputs\": [[0, 0]], \"variables\": [], \"nodes\": [{\"id\": 0, \"op\": \"input\", "
                              "\"name\": \"x\", \"scope\": \"\", \"inputs\": [], \"outputs\": [{\"dtype\": "
                              "\"float32\", \"shape\": [2, 3]}], \"attrs\": {\"ints\": [], \"floats\": []}}, ");
    g_string_append_printf(j, "{\"id\": 1, \"op\": \"%s\", \"name\": \"n\", \"scope\": \"\", \"inputs\": [", op->name);
    for (int i = 0; i < ninputs; i++)
        g_string_append(j, i ? ", [0, 0]" : "[0, 0]");
    g_string_append(j, "], \"outputs\": [");
    for (int k = 0; k < op->noutputs; k++)
        g_string_append(j, k ? ", {\"dtype\": \"float32\", \"shape\": [2, 3]}" : "{\"dtype\": \"float32\", \"shape\": [2, 3]}");
    g_string_append_printf(j, "], \"attrs\": {\"ints\": [%s], \"floats\": [0.5]}}]}", ints);
    return g_string_free(j, FALSE);
}

/* An op node with fewer (or more) inputs than its op takes is refused
 * naming the node and the op (an add with one input crashed twb
 * run-graph); with the right count and odd attributes, reading and running
 * fail with a message or work, never crash (run under ASan). */
static void test_import_every_op_arity(void)
{
    static const char *const attrs[] = {"", "0", "-1", "1, 1, 1, 1, 1, 1, 1, 1, 1, 1", "9223372036854775807, 2, 3"};
    int checked = 0;
    for (const tw_op_def *const *op = tw_op_registry(); *op; op++) {
        if ((*op)->ctx_ref)
            continue; /* custom gradients cannot be read from a file */
        for (int n = 0; n <= 4; n++) {
            bool fits = (*op)->ninputs == TW_OP_VARIADIC ? n >= 1 : n == (*op)->ninputs;
            for (size_t a = 0; a < (fits ? G_N_ELEMENTS(attrs) : 1); a++) {
                char *json = one_op_graph(*op, n, attrs[a]);
                tw_graph *g = tw_graph_from_json(json, NULL, NULL);
                if (!fits) {
                    char want[200];
                    if ((*op)->ninputs == TW_OP_VARIADIC)
                        snprintf(want, sizeof want, "graph JSON: node 1 'n': '%s' takes one or more inputs; the node lists %d",
                                 (*op)->name, n);
                    else
                        snprintf(want, sizeof want, "graph JSON: node 1 'n': '%s' takes %d input%s; the node lists %d",
                                 (*op)->name, (*op)->ninputs, (*op)->ninputs == 1 ? "" : "s", n);
                    g_assert_null(g);
                    g_assert_cmpstr(tw_last_error(), ==, want);
                    checked++;
                } else if (g) {
                    tw_scope_begin();
                    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(2, 3)), *y = NULL;
                    tw_graph_run(g, 1, &x, &y, 1);
                    tw_scope_end();
                    tw_graph_unref(g);
                }
                g_free(json);
            }
        }
    }
    g_assert_cmpint(checked, >, 100);
}

/* A while node read from a file with max_iterations 0 (no limit) could run
 * forever: it is refused; one with a bound reads back and stops there. */
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
    return tw_while_loop(positive, increment, NULL, 1, in, out, *(int64_t *)user_data);
}

static void test_while_unbounded_import(void)
{
    tw_scope_begin();
    int64_t limit = 0;
    tw_function *f = tw_function_new("forever", forever, &limit);
    tw_tensor *x = tw_zeros(TW_FLOAT64, TW_SHAPE(2));
    const tw_graph *g = tw_function_get_graph(f, TW_TENSORS(x));
    g_assert_nonnull(g);
    char *json = tw_graph_json(g);
    g_assert_null(tw_graph_from_json(json, same_tensors, (void *)g));
    g_assert_nonnull(strstr(tw_last_error(), "graph JSON: node "));
    g_assert_nonnull(strstr(tw_last_error(), "a while node read from a file needs max_iterations of at least 1 "
                                             "(attrs.ints[0] is 0): an unbounded loop could run forever"));
    free(json);
    tw_function_free(f);
    /* bounded: read back and run, stopping at the bound */
    limit = 5;
    f = tw_function_new("five", forever, &limit);
    g = tw_function_get_graph(f, TW_TENSORS(x));
    json = tw_graph_json(g);
    tw_graph *back = tw_graph_from_json(json, same_tensors, (void *)g);
    if (!back)
        g_error("bounded loop read back: %s", tw_last_error());
    tw_tensor *y = NULL;
    g_assert_cmpint(tw_graph_run(back, TW_TENSORS(tw_ones(TW_FLOAT64, TW_SHAPE(2))), &y, 1), ==, 1);
    g_assert_cmpfloat(value_at(y, 1), ==, 6);
    tw_graph_unref(back);
    free(json);
    tw_function_free(f);
    tw_scope_end();
}

/* d/dx sum(cond(...)[0]) and of the loop's root, traced under a tape and eagerly. */
static int cond_loss(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *b[2];
    if (branchy(in, 2, b, 2, NULL) < 0)
        return -1;
    out[0] = tw_sum_all(tw_mul(b[0], b[1]));
    return 1;
}

static int loop_loss(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *r[2];
    if (newton_sqrt(in, 1, r, 2, NULL) < 0)
        return -1;
    out[0] = tw_sum_all(r[0]);
    return 1;
}

static tw_tensor *gradient_of(tw_function_fn fn, tw_function *f, int n, tw_tensor *const *in)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, in[0]);
    tw_tensor *loss = NULL;
    if (f)
        loss = tw_function_call1(f, n, in);
    else
        g_assert_cmpint(fn(in, n, &loss, 1, NULL), ==, 1);
    tw_tape_end(tape);
    tw_tensor *grad = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, loss, 1, in, &grad), ==, 0);
    tw_tape_free(tape);
    return grad;
}

static void test_control_gradients(void)
{
    tw_scope_begin();
    tw_function *f = tw_function_new("cond_loss", cond_loss, NULL);
    tw_tensor *y = gc_tensor(48, -1, 1, TW_SHAPE(3, 4));
    tw_tensor *xs[2] = {gc_tensor(47, 0.1, 1, TW_SHAPE(3, 4)), tw_neg(gc_tensor(49, 0.1, 1, TW_SHAPE(3, 4)))};
    for (int i = 0; i < 2; i++) {
        tw_tensor *args[2] = {xs[i], y};
        tw_tensor *eager = gradient_of(cond_loss, NULL, 2, args);
        tw_tensor *traced = gradient_of(NULL, f, 2, args);
        assert_identical("gradient through cond", eager, traced);
    }
    /* x*y + x and x: d/dx = (y + 1) sin y; y - exp x and x: d/dx = y - exp x - x exp x */
    tw_tensor *args[2] = {xs[0], y};
    tw_tensor *g0 = gradient_of(NULL, f, 2, args);
    g_assert_cmpfloat(fabs(value_at(g0, 5) - (value_at(y, 5) + 1) * sin(value_at(y, 5))), <, 1e-12);
    tw_function *h = tw_function_new("loop_loss", loop_loss, NULL);
    tw_tensor *a = gc_tensor(50, 1, 4, TW_SHAPE(4));
    tw_tensor *eager = gradient_of(loop_loss, NULL, 1, &a);
    tw_tensor *traced = gradient_of(NULL, h, 1, &a);
    assert_identical("gradient through while_loop", eager, traced);
    g_assert_cmpfloat(fabs(value_at(traced, 2) - 0.5 / sqrt(value_at(a, 2))), <, 1e-6); /* d sqrt(a)/da */
    tw_function_free(f);
    tw_function_free(h);
    tw_scope_end();
}

/* ---- the memory plan ---------------------------------------------------------------------- */

/* Square matrices multiplied in a chain, a kept to the end with user_data: matmuls never fuse. */
static int product_chain(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    tw_tensor *a = tw_matmul(in[0], in[0]), *b = tw_matmul(a, a), *c = tw_matmul(b, b);
    out[0] = tw_matmul(c, c);
    out[1] = user_data ? tw_add(tw_matmul(out[0], out[0]), a) : NULL;
    return user_data ? 2 : 1;
}

static void test_memory_plan(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_cast(gc_tensor(60, -0.3, 0.3, TW_SHAPE(16, 16)), TW_FLOAT32); /* 1 KiB a value */
    /* a lives over steps [a, b], b over [b, c], c over [c, out]: c takes a's bytes; the output is not planned */
    tw_function *f = tw_function_new("chain", product_chain, NULL);
    const tw_graph *g = tw_function_get_graph(f, TW_TENSORS(x));
    g_assert_cmpint(g->arena_bytes, ==, 2 * 1024);
    /* a kept for the last add: a, b, c at once at c's step; d (out[0] squared) reuses b's bytes;
     * out[0] and the add are outputs */
    tw_function *h = tw_function_new("chain_kept", product_chain, (void *)1);
    g = tw_function_get_graph(h, TW_TENSORS(x));
    g_assert_cmpint(g->arena_bytes, ==, 3 * 1024);
    tw_tensor *eager[2], *out[2];
    product_chain(&x, 1, eager, 2, (void *)1);
    for (int i = 0; i < 3; i++) { /* warm up: the arena and the pools */
        tw_scope_begin();
        g_assert_cmpint(tw_function_call(h, TW_TENSORS(x), out, 2), ==, 2);
        tw_scope_end();
    }
    uint64_t system = tw__system_allocations(), buffers = tw__graph_buffers_made();
    for (int i = 0; i < 20; i++) {
        tw_scope_begin();
        g_assert_cmpint(tw_function_call(h, TW_TENSORS(x), out, 2), ==, 2);
        tw_scope_end();
    }
    g_assert_cmpuint(tw__system_allocations(), ==, system);
    g_assert_cmpuint(tw__graph_buffers_made() - buffers, ==, 20 * 2); /* the two outputs, nothing per node */
    g_assert_cmpint(tw_function_call(h, TW_TENSORS(x), out, 2), ==, 2);
    assert_identical("planned output 0", eager[0], out[0]);
    assert_identical("planned output 1", eager[1], out[1]);
    tw_function_free(f);
    tw_function_free(h);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/function/ops-match-eager", test_ops_match_eager);
    g_test_add_func("/function/retrace", test_retrace);
    g_test_add_func("/function/variables-by-reference", test_variables_by_reference);
    g_test_add_func("/function/assign-in-graph", test_assign_in_graph);
    g_test_add_func("/function/sequential-scopes", test_sequential_scopes);
    g_test_add_func("/function/gradients-under-tape", test_gradients_under_tape);
    g_test_add_func("/function/gradient-inside", test_gradient_inside);
    g_test_add_func("/function/untraceable", test_untraceable);
    g_test_add_func("/function/call-contract", test_call_contract);
    g_test_add_func("/function/inspection-and-json", test_inspection_and_json);
    g_test_add_func("/function/name-scopes", test_name_scopes);
    g_test_add_func("/function/steady-state-memory", test_steady_state_memory);
    g_test_add_func("/function/prune", test_prune);
    g_test_add_func("/function/cse", test_cse);
    g_test_add_func("/function/cse-keeps-reads-apart", test_cse_keeps_reads_apart);
    g_test_add_func("/function/constant-folding", test_constant_folding);
    g_test_add_func("/function/fusion", test_fusion);
    g_test_add_func("/function/fusion-strided-input", test_fusion_strided_input);
    g_test_add_func("/function/fusion-under-tape", test_fusion_under_tape);
    g_test_add_func("/function/cond-both-branches", test_cond_both_branches);
    g_test_add_func("/function/while-runtime-iterations", test_while_runtime_iterations);
    g_test_add_func("/function/while-shape-change", test_while_shape_change);
    g_test_add_func("/function/control-json-round-trip", test_control_json_round_trip);
    g_test_add_func("/function/control-gradients", test_control_gradients);
    g_test_add_func("/function/memory-plan", test_memory_plan);
    g_test_add_func("/function/memory-plan-deep-model", test_memory_plan_deep_model);
    g_test_add_func("/function/import-every-op-arity", test_import_every_op_arity);
    g_test_add_func("/function/while-unbounded-import", test_while_unbounded_import);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
