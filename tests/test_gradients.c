/* Finite-difference gradient checks (float64, central differences; see
 * gradcheck.h) for every differentiable op: elementwise ops with
 * broadcasting, reductions over one, several and all axes, views, matmul in
 * every transpose combination with batch broadcasting, softmax and the
 * cross-entropies, composites; and second-order checks for a subset.
 * Inputs stay away from kinks (relu and abs at 0, clip bounds, ties of
 * maximum/minimum) where finite differences are meaningless. Tensors are
 * small: `make test` runs this suite under valgrind too. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "internal.h"

#define F64(SHAPE, ...) tw_tensor_from_data((double[]){__VA_ARGS__}, TW_FLOAT64, SHAPE)

typedef struct {
    int ndim;
    int64_t shape[TW_MAX_DIMS];
} shape_t;

static tw_tensor *rand_tensor(unsigned seed, double lo, double hi, shape_t s)
{
    return gc_tensor(seed, lo, hi, s.ndim, s.shape);
}

static const char *label(char *buf, size_t size, const char *op, shape_t a, shape_t b)
{
    char sa[64], sb[64];
    snprintf(buf, size, "%s %s,%s", op, tw_shape_str(a.ndim, a.shape, sa, sizeof sa),
             tw_shape_str(b.ndim, b.shape, sb, sizeof sb));
    return buf;
}

/* ---- elementwise binary ops, with broadcasting ----------------------------------- */

typedef tw_tensor *(*binary_fn)(tw_tensor *, tw_tensor *);

static tw_tensor *apply_binary(tw_tensor *const *in, void *data)
{
    return (*(binary_fn *)data)(in[0], in[1]);
}

static const shape_t binary_shapes[][2] = {
    {{2, {2, 3}}, {2, {2, 3}}},
    {{2, {3, 1}}, {2, {1, 4}}},
    {{0, {0}}, {2, {2, 3}}},
    {{2, {2, 3}}, {0, {0}}},
    {{1, {3}}, {2, {2, 3}}},
    {{3, {2, 1, 3}}, {2, {4, 1}}},
};

static void check_binary(const char *name, binary_fn fn, double lo_a, double hi_a, double lo_b, double hi_b)
{
    for (size_t i = 0; i < G_N_ELEMENTS(binary_shapes); i++) {
        tw_scope_begin();
        tw_tensor *a = rand_tensor(11 + (unsigned)i, lo_a, hi_a, binary_shapes[i][0]);
        tw_tensor *b = rand_tensor(101 + (unsigned)i, lo_b, hi_b, binary_shapes[i][1]);
        char buf[128];
        gc_check(label(buf, sizeof buf, name, binary_shapes[i][0], binary_shapes[i][1]), apply_binary, TW_TENSORS(a, b),
                 &fn);
        tw_scope_end();
    }
}

static void test_add(void) { check_binary("add", tw_add, -1, 1, -1, 1); }
static void test_sub(void) { check_binary("sub", tw_sub, -1, 1, -1, 1); }
static void test_mul(void) { check_binary("mul", tw_mul, -1, 1, -1, 1); }
static void test_div(void) { check_binary("div", tw_div, -1, 1, 0.5, 1.5); }
static void test_pow(void) { check_binary("pow", tw_pow, 0.5, 2, -1.5, 1.5); }
/* Independent random values: ties (where the gradient jumps) do not occur. */
static void test_maximum(void) { check_binary("maximum", tw_maximum, -1, 1, -1, 1); }
static void test_minimum(void) { check_binary("minimum", tw_minimum, -1, 1, -1, 1); }

/* ---- with C numbers and weak scalars ----------------------------------------------- */

static tw_tensor *f_add_scalar(tw_tensor *const *in, void *d) { return tw_add_scalar(in[0], 1.5); }
static tw_tensor *f_sub_scalar(tw_tensor *const *in, void *d) { return tw_sub_scalar(in[0], 1.5); }
static tw_tensor *f_mul_scalar(tw_tensor *const *in, void *d) { return tw_mul_scalar(in[0], -2.5); }
static tw_tensor *f_div_scalar(tw_tensor *const *in, void *d) { return tw_div_scalar(in[0], 4); }
static tw_tensor *f_pow_scalar(tw_tensor *const *in, void *d) { return tw_pow_scalar(in[0], 2.5); }
static tw_tensor *f_rsub_scalar(tw_tensor *const *in, void *d) { return tw_rsub_scalar(3, in[0]); }
static tw_tensor *f_rdiv_scalar(tw_tensor *const *in, void *d) { return tw_rdiv_scalar(3, in[0]); }
static tw_tensor *f_weak_left(tw_tensor *const *in, void *d) { return tw_mul(tw_scalar(3), in[0]); }
static tw_tensor *f_weak_right(tw_tensor *const *in, void *d) { return tw_sub(in[0], tw_scalar(0.25)); }

static void test_scalar_variants(void)
{
    tw_scope_begin();
    shape_t s = {2, {2, 3}};
    tw_tensor *x = rand_tensor(3, -1, 1, s), *pos = rand_tensor(4, 0.5, 2, s);
    gc_check("add_scalar", f_add_scalar, 1, &x, NULL);
    gc_check("sub_scalar", f_sub_scalar, 1, &x, NULL);
    gc_check("mul_scalar", f_mul_scalar, 1, &x, NULL);
    gc_check("div_scalar", f_div_scalar, 1, &x, NULL);
    gc_check("pow_scalar", f_pow_scalar, 1, &pos, NULL);
    gc_check("rsub_scalar", f_rsub_scalar, 1, &x, NULL);
    gc_check("rdiv_scalar", f_rdiv_scalar, 1, &pos, NULL);
    gc_check("weak scalar left", f_weak_left, 1, &x, NULL);
    gc_check("weak scalar right", f_weak_right, 1, &x, NULL);
    tw_scope_end();
}

/* ---- where --------------------------------------------------------------------------- */

static tw_tensor *f_where(tw_tensor *const *in, void *cond) { return tw_where(cond, in[0], in[1]); }
static tw_tensor *f_where_weak(tw_tensor *const *in, void *cond) { return tw_where(cond, tw_scalar(2), in[0]); }

static void test_where(void)
{
    tw_scope_begin();
    tw_tensor *cond = tw_tensor_from_data((uint8_t[]){1, 0, 1}, TW_BOOL, TW_SHAPE(3, 1));
    tw_tensor *a = gc_tensor(5, -1, 1, TW_SHAPE(1, 4));
    tw_tensor *b = gc_tensor(6, -1, 1, TW_SHAPE(3, 4));
    gc_check("where (3,1) ? (1,4) : (3,4)", f_where, TW_TENSORS(a, b), cond);
    tw_tensor *b2 = gc_tensor(7, -1, 1, TW_SHAPE(2, 3, 1));
    gc_check("where (3,1) ? (1,4) : (2,3,1)", f_where, TW_TENSORS(a, b2), cond);
    gc_check("where with a weak scalar", f_where_weak, 1, &b, cond);
    tw_scope_end();
}

/* ---- unary ops ------------------------------------------------------------------------- */

typedef tw_tensor *(*unary_fn)(tw_tensor *);

static tw_tensor *apply_unary(tw_tensor *const *in, void *data)
{
    return (*(unary_fn *)data)(in[0]);
}

static tw_tensor *apply_unary_transposed(tw_tensor *const *in, void *data)
{
    return (*(unary_fn *)data)(tw_transpose(in[0]));
}

static void check_unary(const char *name, unary_fn fn, double lo, double hi)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(21, lo, hi, TW_SHAPE(2, 3));
    gc_check(name, apply_unary, 1, &x, &fn);
    /* a strided input: the op applied to a transposed view */
    tw_tensor *y = gc_tensor(22, lo, hi, TW_SHAPE(3, 2));
    char buf[64];
    snprintf(buf, sizeof buf, "%s of a transposed view", name);
    gc_check(buf, apply_unary_transposed, 1, &y, &fn);
    tw_scope_end();
}

/* Values away from the kinks at 0 (and at the clip bounds +-0.5). */
static tw_tensor *off_kinks(void)
{
    return F64(TW_SHAPE(2, 4), -1.3, -0.7, -0.2, 0.3, 0.8, 1.6, -2.2, 0.05);
}

static void check_unary_kinked(const char *name, unary_fn fn)
{
    tw_scope_begin();
    tw_tensor *x = off_kinks();
    gc_check(name, apply_unary, 1, &x, &fn);
    tw_scope_end();
}

static tw_tensor *leaky_02(tw_tensor *x) { return tw_leaky_relu(x, 0.2); }
static tw_tensor *elu_13(tw_tensor *x) { return tw_elu(x, 1.3); }
static tw_tensor *clip_half(tw_tensor *x) { return tw_clip(x, -0.5, 0.5); }
static tw_tensor *clip_wide(tw_tensor *x) { return tw_clip(x, -5, 5); }

static void test_unary_smooth(void)
{
    check_unary("neg", tw_neg, -2, 2);
    check_unary("exp", tw_exp, -2, 2);
    check_unary("log", tw_log, 0.5, 2);
    check_unary("log1p", tw_log1p, -0.5, 2);
    check_unary("expm1", tw_expm1, -2, 2);
    check_unary("sqrt", tw_sqrt, 0.5, 2);
    check_unary("rsqrt", tw_rsqrt, 0.5, 2);
    check_unary("square", tw_square, -2, 2);
    check_unary("sin", tw_sin, -3, 3);
    check_unary("cos", tw_cos, -3, 3);
    check_unary("tanh", tw_tanh, -2, 2);
    check_unary("erf", tw_erf, -2, 2);
    check_unary("sigmoid", tw_sigmoid, -4, 4);
    check_unary("gelu", tw_gelu, -3, 3);
    check_unary("softplus", tw_softplus, -4, 4);
    check_unary("swish", tw_swish, -3, 3);
    check_unary("clip inside its bounds", clip_wide, -2, 2);
}

static void test_unary_kinked(void)
{
    check_unary_kinked("abs", tw_abs);
    check_unary_kinked("sign", tw_sign);
    check_unary_kinked("relu", tw_relu);
    check_unary_kinked("leaky_relu", leaky_02);
    check_unary_kinked("elu", elu_13);
    check_unary_kinked("clip", clip_half);
}

/* Large arguments: the rules must stay finite where the forward is stable. */
static void test_unary_saturated(void)
{
    tw_scope_begin();
    tw_tensor *x = F64(TW_SHAPE(4), -30, -12, 12, 30);
    check_unary("sigmoid saturated", tw_sigmoid, -30, 30);
    unary_fn fns[] = {tw_sigmoid, tw_softplus, tw_tanh, tw_swish, tw_gelu};
    const char *names[] = {"sigmoid", "softplus", "tanh", "swish", "gelu"};
    for (size_t i = 0; i < G_N_ELEMENTS(fns); i++)
        gc_check(names[i], apply_unary, 1, &x, &fns[i]);
    tw_scope_end();
}

/* ---- reductions ------------------------------------------------------------------------------- */

typedef tw_tensor *(*reduce_fn)(tw_tensor *, int, const int *, bool);
typedef struct {
    reduce_fn fn;
    int naxes;
    int axes[TW_MAX_DIMS];
    bool keepdims;
} reduce_case;

static tw_tensor *apply_reduce(tw_tensor *const *in, void *data)
{
    reduce_case *c = data;
    return c->fn(in[0], c->naxes, c->axes, c->keepdims);
}

static void check_reduce(const char *name, reduce_fn fn, double lo, double hi)
{
    static const struct {
        int naxes;
        int axes[3];
        bool keepdims;
    } sets[] = {
        {1, {1}, false}, {1, {-1}, true}, {1, {0}, false}, {2, {0, 2}, false},
        {2, {2, -3}, true}, {3, {0, 1, 2}, false}, {0, {0}, false}, {0, {0}, true},
    };
    tw_scope_begin();
    tw_tensor *x = gc_tensor(31, lo, hi, TW_SHAPE(2, 3, 2));
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        reduce_case c = {fn, sets[i].naxes, {0}, sets[i].keepdims};
        memcpy(c.axes, sets[i].axes, sizeof sets[i].axes);
        char buf[96];
        snprintf(buf, sizeof buf, "%s axes %d:[%d,%d,%d] keepdims %d", name, c.naxes, c.axes[0], c.axes[1], c.axes[2],
                 c.keepdims);
        gc_check(buf, apply_reduce, 1, &x, &c);
    }
    tw_scope_end();
}

static void test_reduce_sum_mean(void)
{
    check_reduce("sum", tw_sum, -1, 1);
    check_reduce("mean", tw_mean, -1, 1);
}

/* Random values: no ties for the extremes. */
static void test_reduce_max_min(void)
{
    check_reduce("max", tw_max, -1, 1);
    check_reduce("min", tw_min, -1, 1);
}

static void test_reduce_prod(void)
{
    check_reduce("prod", tw_prod, 0.5, 1.5);
    check_reduce("prod of negatives", tw_prod, -1.5, -0.5);
}

/* Exact zeros: the gradient is the product of the other elements, not y/x. */
static void test_reduce_prod_zeros(void)
{
    tw_scope_begin();
    tw_tensor *x = F64(TW_SHAPE(3, 3), 0, 1.5, -2, 0, 0.5, 0, 1.25, -0.75, 2);
    reduce_case rows = {tw_prod, 1, {1}, false}, cols = {tw_prod, 1, {0}, true}, all = {tw_prod, 0, {0}, false};
    gc_check("prod with zeros, rows", apply_reduce, 1, &x, &rows);
    gc_check("prod with zeros, columns", apply_reduce, 1, &x, &cols);
    gc_check("prod with zeros, all", apply_reduce, 1, &x, &all);
    /* by hand: d/dx prod(0, 2, 3) = (6, 0, 0) */
    tw_tensor *v = F64(TW_SHAPE(3), 0, 2, 3);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, v);
    tw_tensor *y = tw_prod(v, 0, NULL, false);
    tw_tape_end(tape);
    tw_tensor *g = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &v, &g), ==, 0);
    tw_tape_free(tape);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){0}), ==, 6);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){1}), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){2}), ==, 0);
    /* a single-zero row is smooth to second order as well */
    tw_tensor *z = F64(TW_SHAPE(2, 3), 0, 1.5, -2, 0.5, 1.25, -0.75);
    gc_check_second("prod with a zero, second order", apply_reduce, 1, &z, &rows);
    tw_scope_end();
}

/* Groups with two and three zeros: the second derivative of prod(0, 0, c)
 * by x0 and x1 is c, not 0 (the gradient's own gradient must see the other
 * zero). Rows hold 2, 3 and 1 zeros; columns 0 to 2. */
static void test_reduce_prod_zeros_second_order(void)
{
    tw_scope_begin();
    tw_tensor *x = F64(TW_SHAPE(3, 4), 0, 1.5, 0, -2, 0, 0, 0, 0.5, 1.25, 0, -0.75, 2);
    reduce_case rows = {tw_prod, 1, {1}, false}, cols = {tw_prod, 1, {0}, true}, all = {tw_prod, 0, {0}, false};
    gc_check("prod with zeros, rows", apply_reduce, 1, &x, &rows);
    gc_check_second("prod with two and three zeros, rows", apply_reduce, 1, &x, &rows);
    gc_check_second("prod with zeros, columns", apply_reduce, 1, &x, &cols);
    gc_check_second("prod with zeros, all", apply_reduce, 1, &x, &all);
    /* by hand: d/dx1 (d/dx0 prod(x0, x1, 3)) at (0, 0) is 3 */
    tw_tensor *v = F64(TW_SHAPE(3), 0, 0, 3);
    tw_tape *outer = tw_tape_begin(false), *inner = tw_tape_begin(false);
    tw_tape_watch(outer, v);
    tw_tape_watch(inner, v);
    tw_tensor *y = tw_prod(v, 0, NULL, false), *g = NULL, *h = NULL;
    tw_tape_end(inner);
    g_assert_cmpint(tw_tape_gradient(inner, y, 1, &v, &g), ==, 0);
    tw_tensor *g0 = tw_sum_all(tw_slice(g, 0, 0, 1, 1));
    tw_tape_end(outer);
    g_assert_cmpint(tw_tape_gradient(outer, g0, 1, &v, &h), ==, 0);
    tw_tape_free(inner);
    tw_tape_free(outer);
    g_assert_cmpfloat(tw_tensor_get(h, (int64_t[]){0}), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(h, (int64_t[]){1}), ==, 3);
    g_assert_cmpfloat(tw_tensor_get(h, (int64_t[]){2}), ==, 0);
    tw_scope_end();
}

/* Where the gradient jumps, the engine follows TensorFlow's conventions. */
static tw_tensor *gradient_of(tw_tensor *(*f)(tw_tensor *), tw_tensor *x)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = f(x);
    tw_tape_end(tape);
    tw_tensor *g = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, 0);
    tw_tape_free(tape);
    g_assert_nonnull(g);
    return g;
}

static tw_tensor *max_all(tw_tensor *x) { return tw_max(x, 0, NULL, false); }
static tw_tensor *min_rows(tw_tensor *x) { return tw_min(x, TW_AXES(1), false); }
static tw_tensor *maximum_with_self(tw_tensor *x) { return tw_maximum(x, tw_mul_scalar(tw_stop_gradient(x), 1)); }

static void test_kink_conventions(void)
{
    tw_scope_begin();
    /* max/min share the gradient equally among ties */
    tw_tensor *g = gradient_of(max_all, F64(TW_SHAPE(4), 1, 3, 3, -1));
    for (int64_t i = 0; i < 4; i++)
        g_assert_cmpfloat(tw_tensor_get(g, &i), ==, (i == 1 || i == 2) ? 0.5 : 0);
    g = gradient_of(min_rows, F64(TW_SHAPE(2, 3), 2, 2, 2, 5, 1, 7));
    for (int64_t i = 0; i < 6; i++) {
        double want = i < 3 ? 1.0 / 3 : (i == 4 ? 1 : 0);
        g_assert_cmpfloat_with_epsilon(tw_tensor_get(g, (int64_t[]){i / 3, i % 3}), want, 1e-15);
    }
    /* maximum on a tie: all of it to the first operand */
    g = gradient_of(maximum_with_self, F64(TW_SHAPE(2), 1, -1));
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){0}), ==, 1);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){1}), ==, 1);
    /* relu and abs at 0: 0 */
    g = gradient_of(tw_relu, F64(TW_SHAPE(3), -1, 0, 1));
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){0}), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){1}), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){2}), ==, 1);
    g = gradient_of(tw_abs, F64(TW_SHAPE(3), -1, 0, 1));
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){0}), ==, -1);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){1}), ==, 0);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){2}), ==, 1);
    tw_scope_end();
}

static void test_reduce_variance_logsumexp(void)
{
    check_reduce("variance", tw_variance, -1, 1);
    check_reduce("logsumexp", tw_logsumexp, -2, 2);
}

static tw_tensor *f_logsumexp_large(tw_tensor *const *in, void *d)
{
    return tw_logsumexp(tw_add_scalar(in[0], 1000), TW_AXES(-1), false);
}

static tw_tensor *f_sum_all(tw_tensor *const *in, void *d) { return tw_sum_all(in[0]); }
static tw_tensor *f_mean_all(tw_tensor *const *in, void *d) { return tw_mean_all(in[0]); }

static tw_tensor *f_moments(tw_tensor *const *in, void *d)
{
    tw_tensor *mean, *var;
    if (tw_moments(in[0], TW_AXES(0, 1), false, &mean, &var) < 0)
        return NULL;
    return tw_add(tw_mul_scalar(mean, 2), var);
}

static void test_reduce_misc(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(32, -2, 2, TW_SHAPE(3, 4));
    gc_check("logsumexp of logits near 1000", f_logsumexp_large, 1, &x, NULL);
    gc_check("sum_all", f_sum_all, 1, &x, NULL);
    gc_check("mean_all", f_mean_all, 1, &x, NULL);
    tw_tensor *y = gc_tensor(33, -1, 1, TW_SHAPE(2, 2, 3));
    gc_check("moments", f_moments, 1, &y, NULL);
    tw_scope_end();
}

/* ---- views -------------------------------------------------------------------------------------- */

static tw_tensor *f_reshape(tw_tensor *const *in, void *d) { return tw_reshape(in[0], TW_SHAPE(3, -1)); }
static tw_tensor *f_permute(tw_tensor *const *in, void *d) { return tw_permute(in[0], TW_AXES(2, 0, 1)); }
static tw_tensor *f_transpose(tw_tensor *const *in, void *d) { return tw_transpose(in[0]); }
static tw_tensor *f_slice_step(tw_tensor *const *in, void *d) { return tw_slice(in[0], 1, 0, TW_END, 2); }
static tw_tensor *f_slice_reverse(tw_tensor *const *in, void *d) { return tw_slice(in[0], -1, TW_END, 0, -2); }
static tw_tensor *f_strided_slice(tw_tensor *const *in, void *d)
{
    return tw_strided_slice(in[0], (int64_t[]){0, -1, 0}, (int64_t[]){TW_END, TW_END, 1},
                            (int64_t[]){2, -1, 1});
}
static tw_tensor *f_broadcast_to(tw_tensor *const *in, void *d) { return tw_broadcast_to(in[0], TW_SHAPE(2, 3, 4)); }
static tw_tensor *f_expand_squeeze(tw_tensor *const *in, void *d)
{
    return tw_mul(tw_expand_dims(in[0], 1), tw_squeeze(tw_expand_dims(in[0], 0), TW_AXES(0)));
}
static tw_tensor *f_contiguous(tw_tensor *const *in, void *d) { return tw_contiguous(tw_transpose(in[0])); }
static tw_tensor *f_copy(tw_tensor *const *in, void *d) { return tw_copy(tw_slice(in[0], 0, TW_END, TW_END, -1)); }
/* Views of views, reshaped after a transpose (which copies). */
static tw_tensor *f_view_chain(tw_tensor *const *in, void *d)
{
    tw_tensor *t = tw_transpose(tw_slice(in[0], 1, 1, TW_END, 1));
    return tw_reshape(tw_slice(t, 0, TW_END, TW_END, -1), TW_SHAPE(-1));
}

static void test_views(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(41, -1, 1, TW_SHAPE(2, 3, 2));
    gc_check("reshape", f_reshape, 1, &x, NULL);
    gc_check("permute", f_permute, 1, &x, NULL);
    gc_check("transpose", f_transpose, 1, &x, NULL);
    gc_check("contiguous", f_contiguous, 1, &x, NULL);
    gc_check("copy", f_copy, 1, &x, NULL);
    tw_tensor *m = gc_tensor(42, -1, 1, TW_SHAPE(3, 5));
    gc_check("slice with step", f_slice_step, 1, &m, NULL);
    gc_check("slice with negative step", f_slice_reverse, 1, &m, NULL);
    gc_check("view chain", f_view_chain, 1, &m, NULL);
    tw_tensor *c = gc_tensor(43, -1, 1, TW_SHAPE(3, 4, 2));
    gc_check("strided_slice", f_strided_slice, 1, &c, NULL);
    tw_tensor *b = gc_tensor(44, -1, 1, TW_SHAPE(3, 1));
    gc_check("broadcast_to", f_broadcast_to, 1, &b, NULL);
    tw_tensor *e = gc_tensor(45, -1, 1, TW_SHAPE(3));
    gc_check("expand_dims and squeeze", f_expand_squeeze, 1, &e, NULL);
    tw_scope_end();
}

/* ---- matmul -------------------------------------------------------------------------------------- */

typedef struct {
    bool ta, tb;
} flags;

static tw_tensor *f_matmul(tw_tensor *const *in, void *d)
{
    flags *f = d;
    return tw_matmul_ex(in[0], in[1], f->ta, f->tb);
}

static tw_tensor *f_matmul_views(tw_tensor *const *in, void *d)
{
    /* transposed views as operands, with flags that undo one of them */
    flags *f = d;
    return tw_matmul_ex(tw_transpose(in[0]), tw_transpose(in[1]), f->ta, f->tb);
}

static void test_matmul(void)
{
    tw_scope_begin();
    for (int k = 0; k < 4; k++) {
        flags f = {k & 1, k & 2};
        tw_tensor *a = f.ta ? gc_tensor(51, -1, 1, TW_SHAPE(4, 3)) : gc_tensor(51, -1, 1, TW_SHAPE(3, 4));
        tw_tensor *b = f.tb ? gc_tensor(52, -1, 1, TW_SHAPE(2, 4)) : gc_tensor(52, -1, 1, TW_SHAPE(4, 2));
        char buf[64];
        snprintf(buf, sizeof buf, "matmul ta=%d tb=%d", f.ta, f.tb);
        gc_check(buf, f_matmul, TW_TENSORS(a, b), &f);
        /* batch broadcasting with the same flags: (2,1,.,.) x (3,.,.) */
        tw_tensor *ba = f.ta ? gc_tensor(53, -1, 1, TW_SHAPE(2, 1, 3, 2)) : gc_tensor(53, -1, 1, TW_SHAPE(2, 1, 2, 3));
        tw_tensor *bb = f.tb ? gc_tensor(54, -1, 1, TW_SHAPE(3, 2, 3)) : gc_tensor(54, -1, 1, TW_SHAPE(3, 3, 2));
        snprintf(buf, sizeof buf, "batched matmul ta=%d tb=%d", f.ta, f.tb);
        gc_check(buf, f_matmul, TW_TENSORS(ba, bb), &f);
        /* transposed views as operands */
        tw_tensor *va = f.ta ? gc_tensor(55, -1, 1, TW_SHAPE(3, 4)) : gc_tensor(55, -1, 1, TW_SHAPE(4, 3));
        tw_tensor *vb = f.tb ? gc_tensor(56, -1, 1, TW_SHAPE(4, 2)) : gc_tensor(56, -1, 1, TW_SHAPE(2, 4));
        snprintf(buf, sizeof buf, "matmul of transposed views ta=%d tb=%d", f.ta, f.tb);
        gc_check(buf, f_matmul_views, TW_TENSORS(va, vb), &f);
    }
    /* a 2-d operand against a batch on either side */
    flags none = {false, false};
    tw_tensor *m = gc_tensor(57, -1, 1, TW_SHAPE(3, 2));
    tw_tensor *batch = gc_tensor(58, -1, 1, TW_SHAPE(2, 2, 3));
    gc_check("matmul (2,2,3) x (3,2)", f_matmul, TW_TENSORS(batch, m), &none);
    gc_check("matmul (3,2) x (2,2,3)", f_matmul, TW_TENSORS(m, batch), &none);
    tw_scope_end();
}

/* ---- softmax and cross-entropy ------------------------------------------------------------------- */

static tw_tensor *f_softmax(tw_tensor *const *in, void *axis) { return tw_softmax(in[0], *(int *)axis); }
static tw_tensor *f_log_softmax(tw_tensor *const *in, void *axis) { return tw_log_softmax(in[0], *(int *)axis); }
static tw_tensor *f_xent(tw_tensor *const *in, void *d) { return tw_softmax_cross_entropy(in[0], in[1]); }
static tw_tensor *f_sparse_xent(tw_tensor *const *in, void *labels)
{
    return tw_sparse_softmax_cross_entropy(in[0], labels);
}
static tw_tensor *f_xent_of_softmax_labels(tw_tensor *const *in, void *d)
{
    /* labels that are themselves a distribution computed from an input */
    return tw_softmax_cross_entropy(in[0], tw_softmax(in[1], -1));
}

static void test_softmax(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(61, -2, 2, TW_SHAPE(2, 3));
    int axes[] = {-1, 0, 1};
    for (size_t i = 0; i < G_N_ELEMENTS(axes); i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "softmax axis %d", axes[i]);
        gc_check(buf, f_softmax, 1, &x, &axes[i]);
        snprintf(buf, sizeof buf, "log_softmax axis %d", axes[i]);
        gc_check(buf, f_log_softmax, 1, &x, &axes[i]);
    }
    tw_tensor *y = gc_tensor(62, -2, 2, TW_SHAPE(2, 3, 2));
    gc_check("softmax of a 3-d tensor, middle axis", f_softmax, 1, &y, &axes[2]);
    /* large logits: gradients of the shifted computation are exact too */
    tw_tensor *big = gc_tensor(63, 999, 1001, TW_SHAPE(2, 3));
    gc_check("log_softmax near 1000", f_log_softmax, 1, &big, &axes[0]);
    tw_scope_end();
}

static void test_cross_entropy(void)
{
    tw_scope_begin();
    tw_tensor *logits = gc_tensor(71, -2, 2, TW_SHAPE(3, 4));
    tw_tensor *labels = gc_tensor(72, 0.05, 1, TW_SHAPE(3, 4)); /* rows need not sum to 1 */
    gc_check("softmax_cross_entropy (logits, labels)", f_xent, TW_TENSORS(logits, labels), NULL);
    tw_tensor *raw = gc_tensor(73, -1, 1, TW_SHAPE(3, 4));
    gc_check("softmax_cross_entropy with softmax labels", f_xent_of_softmax_labels, TW_TENSORS(logits, raw), NULL);
    tw_tensor *l3 = gc_tensor(74, -2, 2, TW_SHAPE(2, 2, 3));
    tw_tensor *p3 = gc_tensor(75, 0.05, 1, TW_SHAPE(2, 2, 3));
    gc_check("softmax_cross_entropy 3-d", f_xent, TW_TENSORS(l3, p3), NULL);
    tw_tensor *big = gc_tensor(76, 998, 1002, TW_SHAPE(3, 4));
    gc_check("softmax_cross_entropy near 1000", f_xent, TW_TENSORS(big, labels), NULL);

    tw_tensor *classes = tw_tensor_from_data((int64_t[]){3, 0, 2}, TW_INT64, TW_SHAPE(3));
    gc_check("sparse_softmax_cross_entropy", f_sparse_xent, 1, &logits, classes);
    tw_tensor *classes32 = tw_tensor_from_data((int32_t[]){1, 2, 0, 0}, TW_INT32, TW_SHAPE(2, 2));
    gc_check("sparse_softmax_cross_entropy 3-d, int32 labels", f_sparse_xent, 1, &l3, classes32);
    gc_check("sparse_softmax_cross_entropy near 1000", f_sparse_xent, 1, &big, classes);
    tw_scope_end();
}

/* ---- composites ------------------------------------------------------------------------------------- */

static tw_tensor *f_clip_by_norm(tw_tensor *const *in, void *clip) { return tw_clip_by_norm(in[0], *(double *)clip); }

static tw_tensor *f_clip_by_global_norm(tw_tensor *const *in, void *clip)
{
    tw_tensor *outs[2];
    if (tw_clip_by_global_norm(2, in, *(double *)clip, outs, NULL) < 0)
        return NULL;
    return tw_add(tw_sum_all(outs[0]), tw_mul_scalar(tw_sum_all(tw_mul(outs[1], outs[1])), 0.5));
}

static void test_clip_by_norm(void)
{
    tw_scope_begin();
    tw_tensor *t = gc_tensor(81, -1, 1, TW_SHAPE(2, 3)); /* norm about 1.4 */
    double active = 0.5, inactive = 10;
    gc_check("clip_by_norm (clipping)", f_clip_by_norm, 1, &t, &active);
    gc_check("clip_by_norm (not clipping)", f_clip_by_norm, 1, &t, &inactive);
    tw_tensor *u = gc_tensor(82, -1, 1, TW_SHAPE(3));
    gc_check("clip_by_global_norm (clipping)", f_clip_by_global_norm, TW_TENSORS(t, u), &active);
    gc_check("clip_by_global_norm (not clipping)", f_clip_by_global_norm, TW_TENSORS(t, u), &inactive);
    tw_scope_end();
}

/* Casts: float32 cannot be finite-differenced at 1e-6, so the chain is
 * checked against its analytic gradient. */
static void test_cast_chain(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_tensor_from_data((double[]){0.5, -1.25, 2}, TW_FLOAT64, TW_SHAPE(3));
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_cast(tw_mul(tw_square(tw_cast(x, TW_FLOAT32)), tw_scalar(3)), TW_FLOAT64);
    tw_tape_end(tape);
    tw_tensor *g = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, 0);
    tw_tape_free(tape);
    g_assert_nonnull(g);
    g_assert_cmpint(tw_tensor_dtype(g), ==, TW_FLOAT64);
    for (int64_t i = 0; i < 3; i++)
        g_assert_cmpfloat_with_epsilon(tw_tensor_get(g, &i), 6 * tw_tensor_get(x, &i), 1e-6);

    /* float32 source through float64 math: the gradient comes back as float32 */
    tw_tensor *v = tw_variable(tw_tensor_from_data((float[]){1.5f, -2}, TW_FLOAT32, TW_SHAPE(2)), "v", true);
    tape = tw_tape_begin(false);
    tw_tensor *z = tw_sum_all(tw_pow_scalar(tw_cast(v, TW_FLOAT64), 3));
    tw_tape_end(tape);
    g_assert_cmpint(tw_tape_gradient(tape, z, 1, &v, &g), ==, 0);
    tw_tape_free(tape);
    g_assert_nonnull(g);
    g_assert_cmpint(tw_tensor_dtype(g), ==, TW_FLOAT32);
    g_assert_cmpfloat_with_epsilon(tw_tensor_get(g, (int64_t[]){0}), 6.75, 1e-6);
    g_assert_cmpfloat_with_epsilon(tw_tensor_get(g, (int64_t[]){1}), 12, 1e-6);

    /* through an integer cast nothing flows back (TensorFlow's None) */
    tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *w = tw_sum_all(tw_cast(tw_cast(x, TW_INT32), TW_FLOAT64));
    tw_tape_end(tape);
    g = (tw_tensor *)1;
    g_assert_cmpint(tw_tape_gradient(tape, w, 1, &x, &g), ==, 0);
    g_assert_null(g);
    tw_tape_free(tape);
    tw_scope_end();
}

/* stop_gradient: x * stop(x) has gradient stop(x) = x, not 2x. */
static void test_stop_gradient(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_tensor_from_data((double[]){1.5, -2}, TW_FLOAT64, TW_SHAPE(2));
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_mul(x, tw_stop_gradient(x));
    tw_tape_end(tape);
    tw_tensor *g = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, 0);
    tw_tape_free(tape);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){0}), ==, 1.5);
    g_assert_cmpfloat(tw_tensor_get(g, (int64_t[]){1}), ==, -2);
    tw_scope_end();
}

/* ---- second order ----------------------------------------------------------------------------------------- */

static void test_second_order_elementwise(void)
{
    tw_scope_begin();
    shape_t s = {2, {2, 3}};
    tw_tensor *a = rand_tensor(91, -1, 1, s);
    tw_tensor *b = rand_tensor(92, 0.5, 1.5, s);
    binary_fn mul = tw_mul, div = tw_div, pow = tw_pow;
    gc_check_second("mul", apply_binary, TW_TENSORS(a, b), &mul);
    gc_check_second("div", apply_binary, TW_TENSORS(a, b), &div);
    gc_check_second("pow", apply_binary, TW_TENSORS(b, a), &pow);
    /* broadcasting in the second order too */
    tw_tensor *col = gc_tensor(93, -1, 1, TW_SHAPE(3, 1)), *row = gc_tensor(94, 0.5, 1.5, TW_SHAPE(1, 4));
    gc_check_second("mul (3,1) x (1,4)", apply_binary, TW_TENSORS(col, row), &mul);
    gc_check_second("div (3,1) / (1,4)", apply_binary, TW_TENSORS(col, row), &div);
    struct {
        const char *name;
        unary_fn fn;
        double lo, hi;
    } unary[] = {
        {"exp", tw_exp, -2, 2},         {"tanh", tw_tanh, -2, 2},       {"sigmoid", tw_sigmoid, -3, 3},
        {"log", tw_log, 0.5, 2},        {"sqrt", tw_sqrt, 0.5, 2},      {"rsqrt", tw_rsqrt, 0.5, 2},
        {"sin", tw_sin, -3, 3},         {"erf", tw_erf, -2, 2},         {"gelu", tw_gelu, -2, 2},
        {"softplus", tw_softplus, -3, 3}, {"swish", tw_swish, -3, 3},   {"elu", elu_13, -2, -0.1},
        {"log1p", tw_log1p, -0.5, 2},   {"expm1", tw_expm1, -2, 2},     {"square", tw_square, -2, 2},
        {"relu (fused relu_grad backward)", tw_relu, -2, 2},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(unary); i++) {
        tw_tensor *x = gc_tensor(95 + (unsigned)i, unary[i].lo, unary[i].hi, TW_SHAPE(2, 3));
        gc_check_second(unary[i].name, apply_unary, 1, &x, &unary[i].fn);
    }
    tw_scope_end();
}

static void test_second_order_matmul(void)
{
    tw_scope_begin();
    for (int k = 0; k < 4; k++) {
        flags f = {k & 1, k & 2};
        tw_tensor *a = f.ta ? gc_tensor(121, -1, 1, TW_SHAPE(3, 2)) : gc_tensor(121, -1, 1, TW_SHAPE(2, 3));
        tw_tensor *b = f.tb ? gc_tensor(122, -1, 1, TW_SHAPE(2, 3)) : gc_tensor(122, -1, 1, TW_SHAPE(3, 2));
        char buf[64];
        snprintf(buf, sizeof buf, "matmul ta=%d tb=%d", f.ta, f.tb);
        gc_check_second(buf, f_matmul, TW_TENSORS(a, b), &f);
    }
    flags none = {false, false};
    tw_tensor *ba = gc_tensor(123, -1, 1, TW_SHAPE(2, 1, 2, 3)), *bb = gc_tensor(124, -1, 1, TW_SHAPE(2, 3, 2));
    gc_check_second("batched matmul", f_matmul, TW_TENSORS(ba, bb), &none);
    tw_scope_end();
}

static tw_tensor *f_square_of_matmul(tw_tensor *const *in, void *d)
{
    /* matmul alone is bilinear; squaring makes every second derivative nonzero */
    return tw_square(tw_matmul(in[0], in[1]));
}

static void test_second_order_softmax_family(void)
{
    tw_scope_begin();
    tw_tensor *logits = gc_tensor(131, -2, 2, TW_SHAPE(2, 3));
    tw_tensor *labels = gc_tensor(132, 0.05, 1, TW_SHAPE(2, 3));
    gc_check_second("softmax_cross_entropy (logits, labels)", f_xent, TW_TENSORS(logits, labels), NULL);
    tw_tensor *classes = tw_tensor_from_data((int64_t[]){2, 0}, TW_INT64, TW_SHAPE(2));
    gc_check_second("sparse_softmax_cross_entropy", f_sparse_xent, 1, &logits, classes);
    int axis = -1, axis0 = 0;
    gc_check_second("log_softmax", f_log_softmax, 1, &logits, &axis);
    gc_check_second("softmax", f_softmax, 1, &logits, &axis0);
    reduce_case lse = {tw_logsumexp, 1, {1}, false}, var = {tw_variance, 1, {0}, true};
    gc_check_second("logsumexp", apply_reduce, 1, &logits, &lse);
    gc_check_second("variance", apply_reduce, 1, &logits, &var);
    tw_tensor *a = gc_tensor(133, -1, 1, TW_SHAPE(2, 3)), *b = gc_tensor(134, -1, 1, TW_SHAPE(3, 2));
    gc_check_second("square of matmul", f_square_of_matmul, TW_TENSORS(a, b), NULL);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/gradients/binary/add", test_add);
    g_test_add_func("/gradients/binary/sub", test_sub);
    g_test_add_func("/gradients/binary/mul", test_mul);
    g_test_add_func("/gradients/binary/div", test_div);
    g_test_add_func("/gradients/binary/pow", test_pow);
    g_test_add_func("/gradients/binary/maximum", test_maximum);
    g_test_add_func("/gradients/binary/minimum", test_minimum);
    g_test_add_func("/gradients/binary/scalar-variants", test_scalar_variants);
    g_test_add_func("/gradients/binary/where", test_where);
    g_test_add_func("/gradients/unary/smooth", test_unary_smooth);
    g_test_add_func("/gradients/unary/kinked", test_unary_kinked);
    g_test_add_func("/gradients/unary/saturated", test_unary_saturated);
    g_test_add_func("/gradients/reduce/sum-mean", test_reduce_sum_mean);
    g_test_add_func("/gradients/reduce/max-min", test_reduce_max_min);
    g_test_add_func("/gradients/reduce/prod", test_reduce_prod);
    g_test_add_func("/gradients/reduce/prod-zeros", test_reduce_prod_zeros);
    g_test_add_func("/gradients/reduce/prod-zeros-second-order", test_reduce_prod_zeros_second_order);
    g_test_add_func("/gradients/reduce/variance-logsumexp", test_reduce_variance_logsumexp);
    g_test_add_func("/gradients/kink-conventions", test_kink_conventions);
    g_test_add_func("/gradients/reduce/misc", test_reduce_misc);
    g_test_add_func("/gradients/views", test_views);
    g_test_add_func("/gradients/matmul", test_matmul);
    g_test_add_func("/gradients/softmax", test_softmax);
    g_test_add_func("/gradients/cross-entropy", test_cross_entropy);
    g_test_add_func("/gradients/clip-by-norm", test_clip_by_norm);
    g_test_add_func("/gradients/cast-chain", test_cast_chain);
    g_test_add_func("/gradients/stop-gradient", test_stop_gradient);
    g_test_add_func("/gradients/second-order/elementwise", test_second_order_elementwise);
    g_test_add_func("/gradients/second-order/matmul", test_second_order_matmul);
    g_test_add_func("/gradients/second-order/softmax-family", test_second_order_softmax_family);
    return g_test_run();
}
