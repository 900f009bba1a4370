/* The op matrix: every op of tw_op_registry() checked the same ways, as
 * ggml's test-backend-ops does.
 *
 *   - Every elementwise op (the table in kernels/include/elementwise.h) on
 *     generated cases: each dtype it takes (float32, float64, int32, int64,
 *     bool), shapes with broadcasting, a non-contiguous view, an empty axis
 *     and a scalar, run eagerly and on every backend below, which must give
 *     the same values bit for bit.
 *   - The other differentiable ops on hand-written cases, float32 and
 *     float64, eager against every backend.
 *   - Every conv2d algorithm (im2col + gemm, direct, Winograd, where the CPU
 *     has them) against the float64 reference, forward and both gradients.
 *   - Finite-difference gradients (gradcheck.c), first and second order, of
 *     every op with a backward rule; an op with a backward rule and no
 *     gradient case fails the matrix.
 *
 * A backend runs a case somewhere else than the eager CPU reference and
 * hands back CPU tensors. Today there is one, the CPU running the case as a
 * traced graph with fused elementwise groups (tw_function); a CUDA backend
 * adds itself to `backends` below with a function that copies the inputs to
 * the device, runs the case there and copies the result back.
 * Tensors are small: `make test` runs this suite under valgrind too. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/conv_kernels.h"
#include "elementwise.h"
#include "gradcheck.h"
#include "graph/graph_internal.h"
#include "internal.h"

/* ---- backends ------------------------------------------------------------------ */

/* A case: f(inputs, data) with engine ops. */
typedef struct {
    gc_fn fn;
    void *data;
} op_fn;

typedef struct {
    const char *name;
    /* f on the inputs run on this backend: a CPU tensor, or NULL with an error set. */
    tw_tensor *(*run)(const op_fn *f, int n, tw_tensor *const *inputs);
} backend;

static int traced_body(tw_tensor *const *inputs, int n, tw_tensor **outputs, int max_outputs, void *user)
{
    const op_fn *f = user;
    outputs[0] = f->fn(inputs, f->data);
    return outputs[0] ? 1 : -1;
}

/* Groups fused over all traced runs: the matrix checks fusion really ran. */
static int fused_groups_seen;

static tw_tensor *run_traced(const op_fn *f, int n, tw_tensor *const *inputs)
{
    tw_function *fn = tw_function_new("matrix_case", traced_body, (void *)f);
    tw_tensor *r = tw_function_call1(fn, n, inputs);
    const tw_graph *g = r ? tw_function_get_graph(fn, n, inputs) : NULL;
    if (g)
        fused_groups_seen += g->nfused;
    r = r ? tw_copy(r) : NULL; /* its own storage, beyond the function's */
    tw_function_free(fn);
    return r;
}

static const backend backends[] = {
    {"cpu traced and fused", run_traced},
};

/* ---- comparing ------------------------------------------------------------------ */

static double value_at(const tw_tensor *t, int64_t flat)
{
    int64_t index[TW_MAX_DIMS];
    for (int d = tw_tensor_ndim(t) - 1; d >= 0; d--) {
        index[d] = flat % tw_tensor_shape(t)[d];
        flat /= tw_tensor_shape(t)[d];
    }
    return tw_tensor_get(t, index);
}

/* got must match want: same dtype and shape, values within tol (0: the same
 * bits, NaN matching NaN). Fails the test naming the case. */
static bool same_values(const char *what, const tw_tensor *want, const tw_tensor *got, double tol)
{
    if (!got) {
        g_test_fail_printf("%s: failed: %s", what, tw_last_error());
        return false;
    }
    char sw[64], sg[64];
    if (tw_tensor_dtype(want) != tw_tensor_dtype(got) || tw_tensor_ndim(want) != tw_tensor_ndim(got) ||
        memcmp(tw_tensor_shape(want), tw_tensor_shape(got), sizeof(int64_t) * (size_t)tw_tensor_ndim(want)) != 0) {
        g_test_fail_printf("%s: %s %s, want %s %s", what, tw_dtype_name(tw_tensor_dtype(got)),
                           tw_shape_str(tw_tensor_ndim(got), tw_tensor_shape(got), sg, sizeof sg),
                           tw_dtype_name(tw_tensor_dtype(want)),
                           tw_shape_str(tw_tensor_ndim(want), tw_tensor_shape(want), sw, sizeof sw));
        return false;
    }
    for (int64_t i = 0; i < tw_tensor_numel(want); i++) {
        double a = value_at(want, i), b = value_at(got, i);
        bool same = (isnan(a) && isnan(b)) || (tol == 0 ? a == b && signbit(a) == signbit(b)
                                                        : fabs(a - b) <= tol * (1 + fabs(a)));
        if (!same) {
            g_test_fail_printf("%s: element %lld is %.17g, eagerly %.17g", what, (long long)i, b, a);
            return false;
        }
    }
    return true;
}

/* Comparisons made, for the log. */
static int comparisons;

/* Eager against every backend. */
static void check_backends(const char *what, const op_fn *f, int n, tw_tensor *const *inputs, double tol)
{
    tw_tensor *want = f->fn(inputs, f->data);
    if (!want) {
        g_test_fail_printf("%s: eagerly: %s", what, tw_last_error());
        return;
    }
    for (size_t b = 0; b < G_N_ELEMENTS(backends); b++) {
        char label[256];
        snprintf(label, sizeof label, "%s on %s", what, backends[b].name);
        same_values(label, want, backends[b].run(f, n, inputs), tol);
        comparisons++;
    }
}

/* ---- which ops have a gradient case ----------------------------------------------------- */

/* Ops with a backward rule the finite differences cannot check, and where
 * instead. */
static const struct {
    const char *op, *why;
} no_gradient_case[] = {
    {"cast", "float32 rounding hides a finite difference; test_gradients checks the cast gradient exactly"},
    {"custom", "its gradient is the user's function; test_tape checks custom gradients"},
};

/* ---- elementwise ops: generated cases --------------------------------------------------- */

/* The inputs' range for an op (float dtypes), away from poles and off the
 * domain. */
static void input_range(const char *op, int input, double *lo, double *hi)
{
    *lo = -2, *hi = 2;
    if (!strcmp(op, "log") || !strcmp(op, "log1p") || !strcmp(op, "sqrt") || !strcmp(op, "rsqrt") || (!strcmp(op, "pow") && input == 0))
        *lo = 0.2, *hi = 3;
    else if (!strcmp(op, "tan"))
        *lo = -1, *hi = 1;
    else if (!strcmp(op, "hard_swish"))
        *lo = -4, *hi = 4;
    else if ((!strcmp(op, "div") || !strcmp(op, "floormod")) && input == 1)
        *lo = 0.5, *hi = 2;
}

static bool divides(const char *op)
{
    return !strcmp(op, "div") || !strcmp(op, "floormod");
}

/* Input k of op as dtype: float64 values in the op's range, integers in
 * [-5, 5] (a divisor never 0), bools from the sign. */
static tw_tensor *make_input(const char *op, int k, tw_dtype dtype, int ndim, const int64_t *shape, unsigned seed)
{
    double lo, hi;
    input_range(op, k, &lo, &hi);
    if (!tw_dtype_is_float(dtype))
        lo = -5.4, hi = 5.4;
    tw_tensor *x = gc_tensor(seed, lo, hi, ndim, shape);
    if (dtype == TW_BOOL)
        return tw_greater(x, tw_scalar(0));
    if (tw_dtype_is_float(dtype))
        return tw_cast(x, dtype);
    double *d = tw_tensor_data(x);
    for (int64_t i = 0; i < tw_tensor_numel(x); i++) {
        d[i] = nearbyint(d[i]);
        if (d[i] == 0 && k == 1 && divides(op))
            d[i] = 1;
    }
    return tw_cast(x, dtype);
}

typedef struct {
    int ndim;
    int64_t shape[4];
} shape_t;

/* Shapes of the inputs, broadcasting; the last is also made a view. */
static const shape_t unary_shapes[] = {{2, {2, 3}}, {0, {0}}, {2, {0, 3}}, {3, {2, 1, 5}}};
static const shape_t binary_shapes[][2] = {
    {{2, {2, 3}}, {2, {2, 3}}}, {{2, {3, 1}}, {2, {1, 4}}}, {{0, {0}}, {2, {2, 3}}},
    {{2, {2, 0}}, {1, {1}}},    {{1, {3}}, {2, {2, 3}}},    {{3, {2, 1, 3}}, {2, {4, 1}}},
};

/* Attributes every case passes: alpha for leaky_relu and elu, the bounds for clip. */
static const tw_attrs case_attrs = {.f = {0.3, 0.7}, .nf = 2};

static tw_tensor *apply_op(tw_tensor *const *in, void *data)
{
    const tw_op_def *op = data;
    return tw_dispatch1(op, op->elementwise, in, &case_attrs);
}

/* The op on inputs that went through two elementwise ops first (neg twice,
 * logical_not twice for bools: the same values), so the traced graph fuses
 * them with the op when the shapes allow. */
static tw_tensor *apply_op_in_chain(tw_tensor *const *in, void *data)
{
    const tw_op_def *op = data;
    tw_tensor *chained[2];
    for (int k = 0; k < op->elementwise; k++)
        chained[k] = tw_tensor_dtype(in[k]) == TW_BOOL ? tw_logical_not(tw_logical_not(in[k])) : tw_neg(tw_neg(in[k]));
    return tw_dispatch1(op, op->elementwise, chained, &case_attrs);
}

static const tw_dtype all_dtypes[] = {TW_FLOAT32, TW_FLOAT64, TW_INT32, TW_INT64, TW_BOOL};

/* Whether op takes dtype: its eager call on a small case succeeds. */
static bool takes(const tw_op_def *op, tw_dtype dtype)
{
    tw_tensor *in[2] = {make_input(op->name, 0, dtype, TW_SHAPE(2), 1), make_input(op->name, 1, dtype, TW_SHAPE(2), 2)};
    tw_tensor *r = apply_op(in, (void *)op);
    if (!r)
        tw_error_clear();
    return r != NULL;
}

static void check_elementwise_values(const tw_op_def *op)
{
    int ntaken = 0;
    for (size_t t = 0; t < G_N_ELEMENTS(all_dtypes); t++) {
        tw_dtype dtype = all_dtypes[t];
        if (!takes(op, dtype))
            continue;
        ntaken++;
        op_fn chain = {apply_op_in_chain, (void *)op};
        size_t ncases = op->elementwise == 1 ? G_N_ELEMENTS(unary_shapes) : G_N_ELEMENTS(binary_shapes);
        for (size_t c = 0; c < ncases; c++) {
            const shape_t *s = op->elementwise == 1 ? &unary_shapes[c] : binary_shapes[c];
            tw_tensor *in[2];
            char what[200], sa[64], sb[64];
            for (int k = 0; k < op->elementwise; k++)
                in[k] = make_input(op->name, k, dtype, s[k].ndim, s[k].shape, 10 * (unsigned)c + (unsigned)k);
            snprintf(what, sizeof what, "%s %s %s%s%s", op->name, tw_dtype_name(dtype),
                     tw_shape_str(s[0].ndim, s[0].shape, sa, sizeof sa), op->elementwise == 2 ? " " : "",
                     op->elementwise == 2 ? tw_shape_str(s[1].ndim, s[1].shape, sb, sizeof sb) : "");
            check_backends(what, &chain, op->elementwise, in, 0);
            /* A view: the first input transposed (not contiguous). */
            if (s[0].ndim == 2 && s[0].shape[0] > 1 && s[0].shape[1] > 1) {
                tw_tensor *t = make_input(op->name, 0, dtype, 2, (const int64_t[]){s[0].shape[1], s[0].shape[0]},
                                          77 + (unsigned)c);
                tw_tensor *view[2] = {tw_transpose(t), in[1]};
                g_assert_false(tw_tensor_is_contiguous(view[0]));
                op_fn plain = {apply_op, (void *)op};
                char vwhat[220];
                snprintf(vwhat, sizeof vwhat, "%s (a transposed view)", what);
                /* The view's values against the same values packed. */
                tw_tensor *packed[2] = {tw_contiguous(view[0]), in[1]};
                same_values(vwhat, apply_op(packed, (void *)op), apply_op(view, (void *)op), 0);
                check_backends(vwhat, &plain, op->elementwise, view, 0);
            }
        }
    }
    if (ntaken == 0)
        g_test_fail_printf("%s: takes none of float32, float64, int32, int64, bool", op->name);
}

static void check_elementwise_gradients(const tw_op_def *op)
{
    if (!op->backward)
        return;
    size_t ncases = op->elementwise == 1 ? 2 : 3;
    for (size_t c = 0; c < ncases; c++) {
        const shape_t *s = op->elementwise == 1 ? &unary_shapes[c] : binary_shapes[c == 2 ? 4 : c];
        tw_tensor *in[2];
        for (int k = 0; k < op->elementwise; k++)
            in[k] = make_input(op->name, k, TW_FLOAT64, s[k].ndim, s[k].shape, 300 + 10 * (unsigned)c + (unsigned)k);
        char what[64];
        snprintf(what, sizeof what, "%s case %zu", op->name, c);
        gc_check(what, apply_op, op->elementwise, in, (void *)op);
        if (c == 0)
            gc_check_second(what, apply_op, op->elementwise, in, (void *)op);
    }
}

static void test_elementwise(void)
{
    int nops = 0;
    fused_groups_seen = 0;
    for (const tw_op_def *const *op = tw_op_registry(); *op; op++) {
        if (!(*op)->elementwise)
            continue;
        nops++;
        tw_scope_begin();
        check_elementwise_values(*op);
        check_elementwise_gradients(*op);
        tw_scope_end();
    }
    g_assert_cmpint(nops, ==, TWK_UNARY_COUNT + TWK_BINARY_COUNT); /* every row of the table is registered */
    /* the traced cases really ran fused groups */
    g_assert_cmpint(fused_groups_seen, >, 0);
    g_test_message("%d ops, %d cases against %zu backend(s), %d fused groups", nops, comparisons,
                   G_N_ELEMENTS(backends), fused_groups_seen);
}

/* ---- the other differentiable ops: hand-written cases ---------------------------------- */

static const int axis1[] = {1};
static const int axis0[] = {0};
static tw_tensor *case_where(tw_tensor *const *in, void *d) { return tw_where(tw_greater(in[0], tw_scalar(0)), in[0], tw_square(in[1])); }
static tw_tensor *case_sum(tw_tensor *const *in, void *d) { return tw_sum(in[0], 1, axis1, false); }
static tw_tensor *case_prod(tw_tensor *const *in, void *d) { return tw_prod(in[0], 1, axis0, true); }
static tw_tensor *case_max(tw_tensor *const *in, void *d) { return tw_max(in[0], 1, axis1, false); }
static tw_tensor *case_min(tw_tensor *const *in, void *d) { return tw_min(in[0], 0, NULL, false); }
static tw_tensor *case_matmul(tw_tensor *const *in, void *d) { return tw_matmul(in[0], in[1]); }
static tw_tensor *case_matmul_t(tw_tensor *const *in, void *d) { return tw_matmul(tw_transpose(in[0]), in[1]); }
static tw_tensor *case_reshape(tw_tensor *const *in, void *d) { return tw_mul(tw_reshape(in[0], TW_SHAPE(3, 2)), in[1]); }
static tw_tensor *case_permute(tw_tensor *const *in, void *d) { return tw_exp(tw_permute(in[0], 3, (const int[]){2, 0, 1})); }
static tw_tensor *case_slice(tw_tensor *const *in, void *d)
{
    return tw_square(tw_strided_slice(in[0], (const int64_t[]){0, 1}, (const int64_t[]){3, 4}, (const int64_t[]){2, 2}));
}
static tw_tensor *case_broadcast(tw_tensor *const *in, void *d) { return tw_mul(tw_broadcast_to(in[0], TW_SHAPE(2, 3)), in[1]); }
static tw_tensor *case_copy(tw_tensor *const *in, void *d) { return tw_square(tw_copy(in[0])); }
static tw_tensor *case_gather(tw_tensor *const *in, void *d)
{
    tw_tensor *idx = tw_tensor_from_data((const int32_t[]){2, 0, 2}, TW_INT32, TW_SHAPE(3));
    return tw_square(tw_gather(in[0], idx, 0));
}
static tw_tensor *case_concat(tw_tensor *const *in, void *d) { return tw_square(tw_concat(2, in, 1)); }
static tw_tensor *case_pad(tw_tensor *const *in, void *d) { return tw_square(tw_pad(in[0], (const int64_t[]){1, 0, 0, 2}, 0.5)); }
static tw_tensor *case_tile(tw_tensor *const *in, void *d) { return tw_square(tw_tile(in[0], 2, (const int64_t[]){2, 1})); }
static tw_tensor *case_softmax_ce(tw_tensor *const *in, void *d)
{
    tw_tensor *labels = tw_cast(tw_tensor_from_data((const double[]){0.2, 0.3, 0.5, 1, 0, 0}, TW_FLOAT64, TW_SHAPE(2, 3)),
                                tw_tensor_dtype(in[0]));
    return tw_softmax_cross_entropy(in[0], labels);
}
static tw_tensor *case_sparse_ce(tw_tensor *const *in, void *d)
{
    return tw_sparse_softmax_cross_entropy(in[0], tw_tensor_from_data((const int32_t[]){2, 0}, TW_INT32, TW_SHAPE(2)));
}
static tw_tensor *case_conv(tw_tensor *const *in, void *d)
{
    tw_conv2d_params p = {.stride_h = 1, .stride_w = 2, .padding = TW_PADDING_SAME};
    return tw_conv2d(in[0], in[1], &p);
}
static tw_tensor *case_depthwise(tw_tensor *const *in, void *d)
{
    tw_conv2d_params p = {.stride_h = 2, .stride_w = 1, .padding = TW_PADDING_SAME};
    return tw_depthwise_conv2d(in[0], in[1], &p);
}
static tw_tensor *case_resize_bilinear(tw_tensor *const *in, void *d) { return tw_resize(in[0], 5, 3, TW_RESIZE_BILINEAR); }
static tw_tensor *case_resize_nearest(tw_tensor *const *in, void *d) { return tw_resize(in[0], 2, 7, TW_RESIZE_NEAREST); }
static tw_tensor *case_max_pool(tw_tensor *const *in, void *d)
{
    tw_pool2d_params p = {.pool_h = 2, .pool_w = 2, .stride_h = 1, .stride_w = 1};
    return tw_max_pool2d(in[0], &p);
}
static tw_tensor *case_avg_pool(tw_tensor *const *in, void *d)
{
    tw_pool2d_params p = {.pool_h = 2, .pool_w = 2, .padding = TW_PADDING_SAME};
    return tw_avg_pool2d(in[0], &p);
}

/* A rotation by 0.3 rad about the centre of a 3x4 image and a projective
 * map (t6, t7 non-zero): bilinear, reflect; linear in the images. */
static tw_tensor *case_image_transform(tw_tensor *const *in, void *d)
{
    double c = cos(0.3), s = sin(0.3);
    const double t[16] = {c, -s, (3 - (c * 3 - s * 2)) / 2, s, c, (2 - (s * 3 + c * 2)) / 2, 0, 0,
                          0.9, 0.1, 0.3, -0.05, 1.1, -0.2, 0.02, -0.03};
    tw_tensor *tr = tw_cast(tw_tensor_from_data(t, TW_FLOAT64, TW_SHAPE(2, 8)), tw_tensor_dtype(in[0]));
    return tw_image_transform(in[0], tr, 3, 5, TW_IMAGE_BILINEAR, TW_FILL_REFLECT, 0);
}

/* All three outputs, so the gradients through mean and inv_std are checked too. */
static tw_tensor *case_batch_norm(tw_tensor *const *in, void *d)
{
    tw_tensor *y, *mean, *inv_std;
    if (tw_batch_norm(in[0], in[1], in[2], 0.01, &y, &mean, &inv_std) < 0)
        return NULL;
    return tw_add(tw_add(y, tw_square(mean)), tw_mul_scalar(inv_std, 3));
}

typedef struct {
    const char *ops; /* what the case covers: its op, and the ops its second derivative runs */
    gc_fn fn;
    int ninputs;
    shape_t shapes[3];
    double lo, hi;
    bool second; /* second derivatives too */
} other_case;

static const other_case other_cases[] = {
    {"where", case_where, 2, {{2, {2, 3}}, {2, {1, 3}}}, -2, 2, true},
    {"sum", case_sum, 1, {{3, {2, 3, 4}}}, -2, 2, true},
    {"prod", case_prod, 1, {{2, {3, 4}}}, 0.5, 1.5, false},
    {"max", case_max, 1, {{2, {3, 4}}}, -2, 2, true},
    {"min", case_min, 1, {{2, {3, 4}}}, -2, 2, false},
    {"matmul", case_matmul, 2, {{3, {2, 2, 3}}, {2, {3, 2}}}, -2, 2, true},
    {"matmul permute", case_matmul_t, 2, {{2, {3, 2}}, {2, {3, 4}}}, -2, 2, false},
    {"reshape", case_reshape, 2, {{2, {2, 3}}, {2, {3, 2}}}, -2, 2, false},
    {"permute", case_permute, 1, {{3, {2, 3, 2}}}, -1, 1, false},
    {"strided_slice strided_slice_grad", case_slice, 1, {{2, {3, 5}}}, -2, 2, true},
    {"broadcast_to", case_broadcast, 2, {{2, {1, 3}}, {2, {2, 3}}}, -2, 2, true},
    {"copy", case_copy, 1, {{2, {2, 3}}}, -2, 2, false},
    {"gather scatter_add", case_gather, 1, {{2, {3, 2}}}, -2, 2, true},
    {"concat", case_concat, 2, {{2, {2, 1}}, {2, {2, 3}}}, -2, 2, false},
    {"pad", case_pad, 1, {{2, {2, 3}}}, -2, 2, true},
    {"tile", case_tile, 1, {{2, {2, 3}}}, -2, 2, true},
    {"softmax_cross_entropy", case_softmax_ce, 1, {{2, {2, 3}}}, -2, 2, true},
    {"sparse_softmax_cross_entropy", case_sparse_ce, 1, {{2, {2, 3}}}, -2, 2, true},
    {"conv2d conv2d_backprop_input conv2d_backprop_filter", case_conv, 2, {{4, {1, 3, 4, 2}}, {4, {2, 2, 2, 3}}},
     -1, 1, true},
    {"depthwise_conv2d depthwise_conv2d_backprop_input depthwise_conv2d_backprop_filter", case_depthwise, 2,
     {{4, {1, 4, 5, 2}}, {4, {3, 2, 2, 2}}}, -1, 1, true},
    {"resize resize_grad", case_resize_bilinear, 1, {{4, {1, 3, 4, 2}}}, -2, 2, true},
    {"resize resize_grad (nearest)", case_resize_nearest, 1, {{4, {2, 3, 4, 1}}}, -2, 2, true},
    {"max_pool2d max_pool2d_grad max_pool2d_grad_grad", case_max_pool, 1, {{4, {1, 3, 3, 2}}}, -2, 2, true},
    {"avg_pool2d avg_pool2d_grad", case_avg_pool, 1, {{4, {1, 3, 3, 2}}}, -2, 2, true},
    {"image_transform image_transform_adjoint", case_image_transform, 1, {{4, {2, 3, 4, 2}}}, -2, 2, true},
    {"batch_norm batch_norm_grad", case_batch_norm, 3, {{3, {2, 5, 3}}, {1, {3}}, {1, {3}}}, -2, 2, true},
};

static void test_other_ops(void)
{
    for (size_t c = 0; c < G_N_ELEMENTS(other_cases); c++) {
        const other_case *oc = &other_cases[c];
        tw_scope_begin();
        tw_tensor *in[3];
        for (int k = 0; k < oc->ninputs; k++)
            in[k] = gc_tensor(500 + 10 * (unsigned)c + (unsigned)k, oc->lo, oc->hi, oc->shapes[k].ndim, oc->shapes[k].shape);
        gc_check(oc->ops, oc->fn, oc->ninputs, in, NULL);
        if (oc->second)
            gc_check_second(oc->ops, oc->fn, oc->ninputs, in, NULL);
        op_fn f = {oc->fn, NULL};
        check_backends(oc->ops, &f, oc->ninputs, in, 1e-12);
        tw_tensor *in32[3];
        for (int k = 0; k < oc->ninputs; k++)
            in32[k] = tw_cast(in[k], TW_FLOAT32);
        char what[128];
        snprintf(what, sizeof what, "%s float32", oc->ops);
        check_backends(what, &f, oc->ninputs, in32, 1e-6);
        tw_scope_end();
    }
}

/* Empty axes outside elementwise ops: reductions of nothing. */
static void test_empty_axes(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT64, TW_SHAPE(0, 3));
    op_fn f = {case_sum, NULL};
    check_backends("sum (0, 3) over axis 1", &f, 1, &x, 0);
    same_values("sum (0, 3) over axis 0", tw_zeros(TW_FLOAT64, TW_SHAPE(3)), tw_sum(x, 1, axis0, false), 0);
    tw_tensor *y = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 0));
    op_fn m = {case_matmul, NULL};
    check_backends("matmul (2, 0) (0, 3)", &m, 2, (tw_tensor *const[]){y, tw_zeros(TW_FLOAT32, TW_SHAPE(0, 3))}, 0);
    tw_scope_end();
}

/* ---- every conv2d algorithm against the float64 reference ---------------------------------- */

enum { PATH_GEMM, PATH_DIRECT, PATH_WINOGRAD, PATH_COUNT };
static const char *const path_names[] = {"im2col + gemm", "direct", "Winograd"};

/* Forward value and both gradients of sum(conv(x, w) * g). */
static void conv_with_grads(tw_tensor *x, tw_tensor *w, tw_tensor *out[3])
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tape_watch(tape, w);
    tw_conv2d_params p = {.padding = TW_PADDING_SAME};
    tw_tensor *y = tw_conv2d(x, w, &p);
    tw_tensor *loss = tw_sum_all(tw_mul(y, tw_cos(y)));
    tw_tape_end(tape);
    tw_tensor *grads[2] = {NULL, NULL};
    g_assert_cmpint(tw_tape_gradient(tape, loss, 2, (tw_tensor *const[]){x, w}, grads), ==, 0);
    tw_tape_free(tape);
    out[0] = y, out[1] = grads[0], out[2] = grads[1];
}

static void test_conv_algorithms(void)
{
    tw_scope_begin();
    /* 3x3, stride 1, 16 channels: every path takes it */
    tw_tensor *x = gc_tensor(900, -1, 1, 4, (const int64_t[]){2, 6, 6, 16});
    tw_tensor *w = gc_tensor(901, -0.3, 0.3, 4, (const int64_t[]){3, 3, 16, 16});
    tw_tensor *want[3];
    conv_with_grads(x, w, want);
    bool direct = twk_conv2d_direct_available();
    for (int path = 0; path < PATH_COUNT; path++) {
        if (path != PATH_GEMM && !direct) {
            g_test_message("%s: this CPU lacks AVX-512, not run", path_names[path]);
            continue;
        }
        bool was_direct = twk_conv2d_set_direct(path != PATH_GEMM);
        bool was_winograd = twk_conv2d_set_winograd(path == PATH_WINOGRAD);
        tw_tensor *got[3];
        conv_with_grads(tw_cast(x, TW_FLOAT32), tw_cast(w, TW_FLOAT32), got);
        twk_conv2d_set_direct(was_direct);
        twk_conv2d_set_winograd(was_winograd);
        static const char *const part[] = {"forward", "input gradient", "filter gradient"};
        for (int k = 0; k < 3; k++) {
            char what[96];
            snprintf(what, sizeof what, "conv2d %s %s float32", path_names[path], part[k]);
            same_values(what, want[k], tw_cast(got[k], TW_FLOAT64), 2e-4);
        }
    }
    tw_scope_end();
}

/* Whether a hand-written case lists op among what it covers. */
static bool has_other_case(const char *op)
{
    size_t len = strlen(op);
    for (size_t c = 0; c < G_N_ELEMENTS(other_cases); c++)
        for (const char *p = other_cases[c].ops; (p = strstr(p, op)) != NULL; p += len)
            if ((p == other_cases[c].ops || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
                return true;
    return false;
}

/* Every op with a backward rule has a gradient case: generated for the
 * elementwise ops, written above for the others. */
static void test_every_gradient_covered(void)
{
    for (const tw_op_def *const *op = tw_op_registry(); *op; op++) {
        if (!(*op)->backward)
            continue;
        bool found = (*op)->elementwise || has_other_case((*op)->name);
        for (size_t i = 0; i < G_N_ELEMENTS(no_gradient_case) && !found; i++)
            found = strcmp(no_gradient_case[i].op, (*op)->name) == 0;
        if (!found)
            g_test_fail_printf("%s has a backward rule but no gradient case in the op matrix", (*op)->name);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/op-matrix/elementwise", test_elementwise);
    g_test_add_func("/op-matrix/other-ops", test_other_ops);
    g_test_add_func("/op-matrix/empty-axes", test_empty_axes);
    g_test_add_func("/op-matrix/conv-algorithms", test_conv_algorithms);
    g_test_add_func("/op-matrix/every-gradient-covered", test_every_gradient_covered);
    return g_test_run();
}
