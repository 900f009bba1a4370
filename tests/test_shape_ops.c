/* Shape ops: concat, stack, split, split_sizes, gather (and its adjoint
 * scatter_add), one_hot, pad, tile. Forward values on hand-checked cases in
 * several dtypes, views, gradients against finite differences (first and
 * second order), and the messages of the errors a user can cause. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "backend.h"
#include "internal.h"

/* ---- helpers ------------------------------------------------------------------ */

/* A tensor of dtype holding the given values (row-major). */
static tw_tensor *make(tw_dtype dtype, int ndim, const int64_t *shape, const double *values)
{
    tw_tensor *t = tw_tensor_empty(dtype, ndim, shape);
    g_assert_nonnull(t);
    size_t item = tw_dtype_size(dtype);
    char *p = tw_tensor_data(t);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++) {
        double v = values[i];
        switch (dtype) {
        case TW_FLOAT32: *(float *)(p + i * item) = (float)v; break;
        case TW_FLOAT64: *(double *)(p + i * item) = v; break;
        case TW_INT32: *(int32_t *)(p + i * item) = (int32_t)v; break;
        case TW_INT64: *(int64_t *)(p + i * item) = (int64_t)v; break;
        case TW_UINT8: *(uint8_t *)(p + i * item) = (uint8_t)v; break;
        case TW_BOOL: *(uint8_t *)(p + i * item) = v != 0; break;
        default: g_assert_not_reached();
        }
    }
    return t;
}
#define MAKE(dtype, shape, ...) make(dtype, shape, (const double[]){__VA_ARGS__})

/* Every element in row-major order (any strides) as doubles. */
static double *values_of(tw_tensor *t)
{
    int64_t n = tw_tensor_numel(t), index[TW_MAX_DIMS] = {0};
    int ndim = tw_tensor_ndim(t);
    const int64_t *shape = tw_tensor_shape(t);
    double *v = g_new0(double, n ? n : 1);
    for (int64_t i = 0; i < n; i++) {
        v[i] = tw_tensor_get(t, index);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
    return v;
}

static void check_tensor(tw_tensor *t, tw_dtype dtype, int ndim, const int64_t *shape, const double *expected)
{
    if (!t)
        g_error("expected a tensor, got an error: %s", tw_last_error());
    g_assert_cmpint(tw_tensor_dtype(t), ==, dtype);
    g_assert_cmpint(tw_tensor_ndim(t), ==, ndim);
    for (int d = 0; d < ndim; d++)
        g_assert_cmpint(tw_tensor_shape(t)[d], ==, shape[d]);
    double *v = values_of(t);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++)
        if (v[i] != expected[i])
            g_error("element %" G_GINT64_FORMAT ": got %g, expected %g", i, v[i], expected[i]);
    g_free(v);
}
/* The shape of a 0-d tensor, for CHECK. */
#define NO_SHAPE 0, (const int64_t *)NULL
#define CHECK(t, dtype, shape, ...) check_tensor(t, dtype, shape, (const double[]){__VA_ARGS__})

/* The call failed with a message containing every fragment. */
static void check_error(tw_tensor *result, const char *fragment)
{
    g_assert_null(result);
    const char *msg = tw_last_error();
    if (!strstr(msg, fragment))
        g_error("error message \"%s\" lacks \"%s\"", msg, fragment);
    tw_error_clear();
}

static void check_rc_error(int rc, const char *fragment)
{
    g_assert_cmpint(rc, ==, -1);
    check_error(NULL, fragment);
}

static const tw_dtype all_dtypes[] = {TW_FLOAT32, TW_FLOAT64, TW_INT32, TW_INT64, TW_UINT8, TW_BOOL};

/* ---- concat --------------------------------------------------------------------- */

static void test_concat_forward(void)
{
    tw_scope_begin();
    for (size_t k = 0; k < G_N_ELEMENTS(all_dtypes); k++) {
        tw_dtype dt = all_dtypes[k];
        /* bool keeps 0/1, so use values that survive every dtype */
        tw_tensor *a = MAKE(dt, TW_SHAPE(2, 2), 1, 0, 0, 1);
        tw_tensor *b = MAKE(dt, TW_SHAPE(2, 3), 1, 1, 0, 0, 1, 1);
        CHECK(tw_concat(TW_TENSORS(a, b), 1), dt, TW_SHAPE(2, 5), 1, 0, 1, 1, 0, 0, 1, 0, 1, 1);
        CHECK(tw_concat(TW_TENSORS(a, b), -1), dt, TW_SHAPE(2, 5), 1, 0, 1, 1, 0, 0, 1, 0, 1, 1);
        tw_tensor *c = MAKE(dt, TW_SHAPE(1, 2), 1, 1);
        CHECK(tw_concat(TW_TENSORS(a, c, a), 0), dt, TW_SHAPE(5, 2), 1, 0, 0, 1, 1, 1, 1, 0, 0, 1);
        CHECK(tw_concat(TW_TENSORS(a, c, a), -2), dt, TW_SHAPE(5, 2), 1, 0, 0, 1, 1, 1, 1, 0, 0, 1);
    }
    /* float values that are not 0/1, along the middle axis of a rank-3 */
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 1, 2), 1.5, 2.5, 3.5, 4.5);
    tw_tensor *y = MAKE(TW_FLOAT32, TW_SHAPE(2, 2, 2), -1, -2, -3, -4, -5, -6, -7, -8);
    CHECK(tw_concat(TW_TENSORS(x, y), 1), TW_FLOAT32, TW_SHAPE(2, 3, 2), 1.5, 2.5, -1, -2, -3, -4, 3.5, 4.5, -5, -6,
          -7, -8);
    /* a strided (transposed) input and an empty one */
    tw_tensor *m = MAKE(TW_INT64, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    tw_tensor *mt = tw_transpose(m); /* (3, 2): 1 4 / 2 5 / 3 6 */
    tw_tensor *empty = tw_zeros(TW_INT64, TW_SHAPE(0, 2));
    CHECK(tw_concat(TW_TENSORS(empty, mt, empty, MAKE(TW_INT64, TW_SHAPE(1, 2), 7, 8)), 0), TW_INT64, TW_SHAPE(4, 2),
          1, 4, 2, 5, 3, 6, 7, 8);
    /* one input: a copy with its own storage */
    tw_tensor *one = tw_concat(1, (tw_tensor *const[]){m}, 0);
    CHECK(one, TW_INT64, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    g_assert_false(tw_tensor_shares_storage(one, m));
    tw_scope_end();
}

/* More inputs than an op call usually carries. */
static void test_concat_many_inputs(void)
{
    tw_scope_begin();
    enum { N = 40 };
    tw_tensor *parts[N];
    for (int i = 0; i < N; i++)
        parts[i] = tw_full(i, TW_INT32, TW_SHAPE(1, i % 3 + 1));
    tw_tensor *rows[N];
    for (int i = 0; i < N; i++)
        rows[i] = tw_full(i, TW_INT32, TW_SHAPE(1, 2));
    tw_tensor *r = tw_concat(N, parts, 1);
    g_assert_nonnull(r);
    int64_t width = 0;
    for (int i = 0; i < N; i++)
        width += i % 3 + 1;
    g_assert_cmpint(tw_tensor_dim(r, 1), ==, width);
    int64_t at = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i % 3 + 1; j++, at++)
            g_assert_cmpfloat(tw_tensor_get(r, (int64_t[]){0, at}), ==, i);
    tw_tensor *s = tw_concat(N, rows, 0);
    g_assert_cmpint(tw_tensor_dim(s, 0), ==, N);
    for (int i = 0; i < N; i++)
        g_assert_cmpfloat(tw_tensor_get(s, (int64_t[]){i, 1}), ==, i);

    /* and its gradient reaches all of them */
    tw_tensor *vars[N];
    for (int i = 0; i < N; i++)
        vars[i] = gc_tensor(i + 1, -1, 1, TW_SHAPE(2, 1));
    tw_tape *tape = tw_tape_begin(false);
    for (int i = 0; i < N; i++)
        tw_tape_watch(tape, vars[i]);
    tw_tensor *cat = tw_concat(N, vars, 1);
    tw_tensor *weights = tw_arange(0, 2 * N, 1, TW_FLOAT64);
    tw_tensor *loss = tw_sum_all(tw_mul(cat, tw_reshape(weights, TW_SHAPE(2, N))));
    tw_tape_end(tape);
    tw_tensor *grads[N];
    g_assert_cmpint(tw_tape_gradient(tape, loss, N, vars, grads), ==, 0);
    for (int i = 0; i < N; i++) {
        g_assert_nonnull(grads[i]);
        CHECK(grads[i], TW_FLOAT64, TW_SHAPE(2, 1), i, N + i);
    }
    tw_tape_free(tape);
    tw_scope_end();
}

/* Big enough for the threaded copy paths. */
static void test_concat_large(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_arange(0, 300 * 200, 1, TW_FLOAT32);
    tw_tensor *b = tw_arange(0, 300 * 100, 1, TW_FLOAT32);
    tw_tensor *r = tw_concat(TW_TENSORS(tw_reshape(a, TW_SHAPE(300, 200)), tw_reshape(b, TW_SHAPE(300, 100))), 1);
    g_assert_nonnull(r);
    const float *v = tw_tensor_data(r);
    for (int i = 0; i < 300; i++)
        for (int j = 0; j < 300; j++)
            g_assert_cmpfloat(v[i * 300 + j], ==, j < 200 ? i * 200 + j : i * 100 + (j - 200));
    tw_scope_end();
}

static void test_concat_errors(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    tw_tensor *b = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 4));
    check_error(tw_concat(TW_TENSORS(a, b), 0), "concat: shapes (2, 3) and (2, 4) differ outside axis 0");
    check_error(tw_concat(TW_TENSORS(a, a, b), -2), "concat: shapes (2, 3) and (2, 4) differ outside axis 0 (inputs 0 and 2)");
    tw_tensor *c = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3, 1));
    check_error(tw_concat(TW_TENSORS(a, c), 1), "concat: shapes (2, 3) and (2, 3, 1) differ in rank");
    check_error(tw_concat(TW_TENSORS(a, tw_zeros(TW_FLOAT64, TW_SHAPE(2, 3))), 0),
                "concat: dtypes differ: float32 (input 0) and float64 (input 1)");
    check_error(tw_concat(TW_TENSORS(a, a), 2), "concat: axis 2 is out of range for a tensor of rank 2");
    check_error(tw_concat(TW_TENSORS(a, a), -3), "concat: axis -3 is out of range");
    check_error(tw_concat(0, NULL, 0), "concat: needs at least one tensor");
    check_error(tw_concat(TW_TENSORS(tw_scalar_of(1, TW_FLOAT32), tw_scalar_of(2, TW_FLOAT32)), 0),
                "concat: cannot concatenate scalars");
    /* a failed input keeps its own message */
    tw_error_set("earlier: something failed");
    check_error(tw_concat(TW_TENSORS(a, NULL), 0), "earlier: something failed");
    tw_scope_end();
}

static tw_tensor *concat_fn(tw_tensor *const *in, void *data)
{
    int axis = GPOINTER_TO_INT(data);
    return tw_concat(3, in, axis);
}

static tw_tensor *concat_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_concat(2, in, 0));
}

static void test_concat_gradient(void)
{
    tw_scope_begin();
    tw_tensor *a = gc_tensor(1, -1, 1, TW_SHAPE(2, 3, 2));
    tw_tensor *b = gc_tensor(2, -1, 1, TW_SHAPE(2, 1, 2));
    tw_tensor *c = gc_tensor(3, -1, 1, TW_SHAPE(2, 4, 2));
    gc_check("concat axis 1", concat_fn, 3, (tw_tensor *const[]){a, b, c}, GINT_TO_POINTER(1));
    tw_tensor *d = gc_tensor(4, -1, 1, TW_SHAPE(1, 3, 2));
    gc_check("concat axis -3", concat_fn, 3, (tw_tensor *const[]){a, d, a}, GINT_TO_POINTER(-3));
    tw_tensor *e = gc_tensor(5, -1, 1, TW_SHAPE(3, 2));
    tw_tensor *f = gc_tensor(6, -1, 1, TW_SHAPE(1, 2));
    gc_check_second("concat second order", concat_square_fn, 2, (tw_tensor *const[]){e, f}, NULL);
    tw_scope_end();
}

/* ---- stack ---------------------------------------------------------------------- */

static void test_stack_forward(void)
{
    tw_scope_begin();
    tw_tensor *a = MAKE(TW_FLOAT64, TW_SHAPE(2), 1, 2);
    tw_tensor *b = MAKE(TW_FLOAT64, TW_SHAPE(2), 3, 4);
    tw_tensor *c = MAKE(TW_FLOAT64, TW_SHAPE(2), 5, 6);
    CHECK(tw_stack(TW_TENSORS(a, b, c), 0), TW_FLOAT64, TW_SHAPE(3, 2), 1, 2, 3, 4, 5, 6);
    CHECK(tw_stack(TW_TENSORS(a, b, c), 1), TW_FLOAT64, TW_SHAPE(2, 3), 1, 3, 5, 2, 4, 6);
    CHECK(tw_stack(TW_TENSORS(a, b, c), -1), TW_FLOAT64, TW_SHAPE(2, 3), 1, 3, 5, 2, 4, 6);
    CHECK(tw_stack(TW_TENSORS(a, b, c), -2), TW_FLOAT64, TW_SHAPE(3, 2), 1, 2, 3, 4, 5, 6);
    /* scalars stack into a vector; other dtypes */
    CHECK(tw_stack(TW_TENSORS(tw_scalar_of(7, TW_INT32), tw_scalar_of(-8, TW_INT32)), 0), TW_INT32, TW_SHAPE(2), 7,
          -8);
    tw_tensor *u = MAKE(TW_UINT8, TW_SHAPE(2, 2), 1, 2, 3, 4);
    tw_tensor *v = MAKE(TW_UINT8, TW_SHAPE(2, 2), 5, 6, 7, 8);
    CHECK(tw_stack(TW_TENSORS(u, v), 1), TW_UINT8, TW_SHAPE(2, 2, 2), 1, 2, 5, 6, 3, 4, 7, 8);
    CHECK(tw_stack(TW_TENSORS(u, v), 2), TW_UINT8, TW_SHAPE(2, 2, 2), 1, 5, 2, 6, 3, 7, 4, 8);
    tw_scope_end();
}

static void test_stack_errors(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    tw_tensor *b = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 4));
    check_error(tw_stack(TW_TENSORS(a, b), 0), "stack: shapes (2, 3) and (2, 4) differ (inputs 0 and 1)");
    check_error(tw_stack(TW_TENSORS(a, a), 3), "stack: axis 3 is out of range for stacking tensors of rank 2");
    check_error(tw_stack(TW_TENSORS(a, a), -4), "stack: axis -4 is out of range");
    check_error(tw_stack(TW_TENSORS(a, tw_zeros(TW_INT32, TW_SHAPE(2, 3))), 0), "stack: dtypes differ");
    check_error(tw_stack(0, NULL, 0), "stack: needs at least one tensor");
    tw_scope_end();
}

static tw_tensor *stack_fn(tw_tensor *const *in, void *data)
{
    return tw_stack(3, in, GPOINTER_TO_INT(data));
}

static tw_tensor *stack_product_fn(tw_tensor *const *in, void *data)
{
    tw_tensor *s = tw_stack(2, in, 1);
    return tw_mul(s, s);
}

static void test_stack_gradient(void)
{
    tw_scope_begin();
    tw_tensor *a = gc_tensor(11, -1, 1, TW_SHAPE(2, 3));
    tw_tensor *b = gc_tensor(12, -1, 1, TW_SHAPE(2, 3));
    tw_tensor *c = gc_tensor(13, -1, 1, TW_SHAPE(2, 3));
    gc_check("stack axis 1", stack_fn, 3, (tw_tensor *const[]){a, b, c}, GINT_TO_POINTER(1));
    gc_check("stack axis -1", stack_fn, 3, (tw_tensor *const[]){a, b, c}, GINT_TO_POINTER(-1));
    gc_check_second("stack second order", stack_product_fn, 2, (tw_tensor *const[]){a, b}, NULL);
    tw_scope_end();
}

/* ---- split ------------------------------------------------------------------------ */

static void test_split_forward(void)
{
    tw_scope_begin();
    tw_tensor *x = MAKE(TW_INT32, TW_SHAPE(2, 6), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    tw_tensor *parts[3];
    g_assert_cmpint(tw_split(x, 3, 1, parts), ==, 0);
    CHECK(parts[0], TW_INT32, TW_SHAPE(2, 2), 0, 1, 6, 7);
    CHECK(parts[1], TW_INT32, TW_SHAPE(2, 2), 2, 3, 8, 9);
    CHECK(parts[2], TW_INT32, TW_SHAPE(2, 2), 4, 5, 10, 11);
    for (int i = 0; i < 3; i++)
        g_assert_true(tw_tensor_shares_storage(parts[i], x));
    g_assert_cmpint(tw_split(x, 2, -2, parts), ==, 0);
    CHECK(parts[0], TW_INT32, TW_SHAPE(1, 6), 0, 1, 2, 3, 4, 5);
    CHECK(parts[1], TW_INT32, TW_SHAPE(1, 6), 6, 7, 8, 9, 10, 11);
    g_assert_true(tw_tensor_shares_storage(parts[1], x));

    tw_tensor *sized[4];
    g_assert_cmpint(tw_split_sizes(x, 4, (const int64_t[]){1, 0, 3, 2}, -1, sized), ==, 0);
    CHECK(sized[0], TW_INT32, TW_SHAPE(2, 1), 0, 6);
    g_assert_cmpint(tw_tensor_numel(sized[1]), ==, 0);
    g_assert_cmpint(tw_tensor_dim(sized[1], 1), ==, 0);
    CHECK(sized[2], TW_INT32, TW_SHAPE(2, 3), 1, 2, 3, 7, 8, 9);
    CHECK(sized[3], TW_INT32, TW_SHAPE(2, 2), 4, 5, 10, 11);
    for (int i = 0; i < 4; i++)
        g_assert_true(tw_tensor_shares_storage(sized[i], x));

    /* a view sees the base's later writes (through a variable) */
    tw_tensor *v = tw_variable(MAKE(TW_FLOAT32, TW_SHAPE(4), 1, 2, 3, 4), "v", false);
    tw_tensor *halves[2];
    g_assert_cmpint(tw_split(v, 2, 0, halves), ==, 0);
    g_assert_cmpint(tw_assign(v, MAKE(TW_FLOAT32, TW_SHAPE(4), 5, 6, 7, 8)), ==, 0);
    CHECK(halves[1], TW_FLOAT32, TW_SHAPE(2), 7, 8);
    tw_scope_end();
}

/* Without a scope the caller owns each part. */
static void test_split_ownership(void)
{
    tw_tensor *x = tw_zeros(TW_FLOAT64, TW_SHAPE(4, 2));
    tw_tensor *parts[4];
    g_assert_cmpint(tw_split(x, 4, 0, parts), ==, 0);
    tw_tensor_unref(x);
    for (int i = 0; i < 4; i++) {
        g_assert_cmpfloat(tw_tensor_get(parts[i], (int64_t[]){0, 1}), ==, 0);
        tw_tensor_unref(parts[i]);
    }
}

static void test_split_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(3, 5));
    tw_tensor *parts[4] = {x, x, x, x};
    check_rc_error(tw_split(x, 2, 1, parts), "split: axis 1 of size 5 does not divide into 2 equal parts (shape (3, 5))");
    g_assert_null(parts[0]);
    g_assert_null(parts[1]);
    check_rc_error(tw_split(x, 0, 1, parts), "split: the number of parts must be positive, got 0");
    check_rc_error(tw_split(x, 3, 2, parts), "split: axis 2 is out of range for a tensor of rank 2");
    check_rc_error(tw_split_sizes(x, 2, (const int64_t[]){2, 2}, 1, parts),
                   "split_sizes: sizes sum to 4 but axis 1 of shape (3, 5) has length 5");
    check_rc_error(tw_split_sizes(x, 3, (const int64_t[]){6, -1, 0}, 1, parts),
                   "split_sizes: size -1 at position 1 is negative");
    check_rc_error(tw_split(tw_scalar_of(1, TW_FLOAT32), 1, 0, parts), "split: cannot split a scalar");
    check_rc_error(tw_split(NULL, 2, 0, parts), "split: input 0 is NULL");
    tw_scope_end();
}

static tw_tensor *split_fn(tw_tensor *const *in, void *data)
{
    tw_tensor *p[3];
    if (tw_split_sizes(in[0], 3, (const int64_t[]){1, 2, 1}, -1, p) < 0)
        return NULL;
    /* nonlinear in the parts so that each part's gradient differs */
    tw_tensor *q[2];
    if (tw_split(in[1], 2, 0, q) < 0)
        return NULL;
    return tw_add(tw_mul(p[0], p[2]), tw_mul(tw_sum(p[1], TW_AXES(1), true), tw_add(q[0], q[1])));
}

static void test_split_gradient(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(21, -1, 1, TW_SHAPE(3, 4));
    tw_tensor *y = gc_tensor(22, -1, 1, TW_SHAPE(6, 1));
    gc_check("split", split_fn, 2, (tw_tensor *const[]){x, y}, NULL);
    gc_check_second("split second order", split_fn, 2, (tw_tensor *const[]){x, y}, NULL);
    tw_scope_end();
}

/* ---- gather ------------------------------------------------------------------------ */

static void test_gather_forward(void)
{
    tw_scope_begin();
    for (size_t k = 0; k < G_N_ELEMENTS(all_dtypes); k++) {
        tw_dtype dt = all_dtypes[k];
        tw_tensor *p = MAKE(dt, TW_SHAPE(3, 2), 1, 0, 0, 1, 1, 1);
        tw_tensor *i32 = MAKE(TW_INT32, TW_SHAPE(4), 2, 0, 2, 1);
        CHECK(tw_gather(p, i32, 0), dt, TW_SHAPE(4, 2), 1, 1, 1, 0, 1, 1, 0, 1);
        tw_tensor *i64 = MAKE(TW_INT64, TW_SHAPE(2, 2), 1, 1, 0, 1);
        /* axis 1 with 2-d indices: shape (3,) + (2, 2) */
        CHECK(tw_gather(p, i64, -1), dt, TW_SHAPE(3, 2, 2), 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1);
    }
    tw_tensor *p = MAKE(TW_FLOAT32, TW_SHAPE(2, 3, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    /* a scalar index drops the axis */
    CHECK(tw_gather(p, tw_scalar_of(2, TW_INT64), 1), TW_FLOAT32, TW_SHAPE(2, 2), 4, 5, 10, 11);
    CHECK(tw_gather(p, MAKE(TW_INT32, TW_SHAPE(3), 2, 2, 0), 1), TW_FLOAT32, TW_SHAPE(2, 3, 2), 4, 5, 4, 5, 0, 1,
          10, 11, 10, 11, 6, 7);
    /* strided params and an empty index list */
    tw_tensor *m = MAKE(TW_INT64, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    CHECK(tw_gather(tw_transpose(m), MAKE(TW_INT32, TW_SHAPE(2), 2, 0), 0), TW_INT64, TW_SHAPE(2, 2), 3, 6, 1, 4);
    tw_tensor *none = tw_zeros(TW_INT32, TW_SHAPE(0));
    tw_tensor *r = tw_gather(m, none, 0);
    g_assert_nonnull(r);
    g_assert_cmpint(tw_tensor_dim(r, 0), ==, 0);
    g_assert_cmpint(tw_tensor_dim(r, 1), ==, 3);
    tw_scope_end();
}

static void test_gather_large(void)
{
    tw_scope_begin();
    /* 600 rows of 100 gathered: the threaded path */
    tw_tensor *p = tw_reshape(tw_arange(0, 50 * 100, 1, TW_FLOAT64), TW_SHAPE(50, 100));
    int64_t idx[600];
    for (int i = 0; i < 600; i++)
        idx[i] = (i * 7) % 50;
    tw_tensor *ix = tw_tensor_from_data(idx, TW_INT64, TW_SHAPE(600));
    tw_tensor *r = tw_gather(p, ix, 0);
    g_assert_nonnull(r);
    const double *v = tw_tensor_data(r);
    for (int i = 0; i < 600; i++)
        for (int j = 0; j < 100; j++)
            g_assert_cmpfloat(v[i * 100 + j], ==, idx[i] * 100 + j);

    /* scatter-add over a long inner axis (several column blocks) with repeats */
    tw_tensor *w = gc_tensor(31, -1, 1, TW_SHAPE(5, 10000));
    tw_tensor *rep = MAKE(TW_INT32, TW_SHAPE(4), 1, 3, 1, 1);
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, w);
    tw_tensor *gathered = tw_gather(w, rep, 0);
    tw_tape_end(tape);
    tw_tensor *grad;
    g_assert_cmpint(tw_tape_gradient(tape, gathered, 1, &w, &grad), ==, 0);
    tw_tape_free(tape);
    const double *gv = tw_tensor_data(tw_contiguous(grad));
    for (int j = 0; j < 10000; j++) {
        g_assert_cmpfloat(gv[0 * 10000 + j], ==, 0);
        g_assert_cmpfloat(gv[1 * 10000 + j], ==, 3);
        g_assert_cmpfloat(gv[3 * 10000 + j], ==, 1);
    }
    tw_scope_end();
}

static void test_gather_errors(void)
{
    tw_scope_begin();
    tw_tensor *p = tw_zeros(TW_FLOAT32, TW_SHAPE(5, 2));
    check_error(tw_gather(p, MAKE(TW_INT32, TW_SHAPE(5), 0, 4, 1, 7, 9), 0),
                "gather: index 7 at position 3 is out of range for axis 0 of size 5");
    check_error(tw_gather(p, MAKE(TW_INT64, TW_SHAPE(2, 2), 0, 1, -1, 0), -1),
                "gather: index -1 at position 2 is out of range for axis 1 of size 2");
    check_error(tw_gather(p, MAKE(TW_FLOAT32, TW_SHAPE(1), 0), 0), "gather: indices must be int32 or int64, got float32");
    check_error(tw_gather(p, MAKE(TW_INT32, TW_SHAPE(1), 0), 2), "gather: axis 2 is out of range for a tensor of rank 2");
    check_error(tw_gather(tw_scalar_of(1, TW_FLOAT32), MAKE(TW_INT32, TW_SHAPE(1), 0), 0),
                "gather: params must have at least one axis");
    tw_tensor *big = tw_zeros(TW_FLOAT32, TW_SHAPE(1, 1, 1, 1, 1, 1));
    check_error(tw_gather(big, tw_zeros(TW_INT32, TW_SHAPE(1, 1, 1, 1)), 0),
                "gather: the result would have rank 9, more than 8");
    tw_scope_end();
}

/* scatter_add through the op table: its own checks. */
static void test_scatter_add_op(void)
{
    tw_scope_begin();
    const tw_op_def *op = tw_op_lookup("scatter_add");
    g_assert_nonnull(op);
    tw_tensor *updates = MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    tw_tensor *ix = MAKE(TW_INT64, TW_SHAPE(3), 2, 0, 2);
    tw_attrs attrs = {.i = {1, 2, 2, 4}, .ni = 4}; /* axis 1 into shape (2, 4) */
    CHECK(tw_dispatch1(op, 2, (tw_tensor *const[]){updates, ix}, &attrs), TW_FLOAT32, TW_SHAPE(2, 4), 2, 0, 4, 0, 5,
          0, 10, 0);
    tw_tensor *iu = MAKE(TW_INT32, TW_SHAPE(3, 1), 1, 2, 3);
    tw_attrs rows = {.i = {0, 2, 2, 1}, .ni = 4};
    CHECK(tw_dispatch1(op, 2, (tw_tensor *const[]){iu, MAKE(TW_INT32, TW_SHAPE(3), 1, 1, 0)}, &rows), TW_INT32,
          TW_SHAPE(2, 1), 3, 3);
    check_error(tw_dispatch1(op, 2, (tw_tensor *const[]){updates, MAKE(TW_INT64, TW_SHAPE(3), 0, 4, 1)}, &attrs),
                "scatter_add: index 4 at position 1 is out of range for axis 1 of size 4");
    check_error(tw_dispatch1(op, 2, (tw_tensor *const[]){updates, MAKE(TW_INT64, TW_SHAPE(2), 0, 1)}, &attrs),
                "scatter_add: updates of shape (2, 3) do not match indices (2,)");
    tw_scope_end();
}

typedef struct {
    tw_tensor *indices;
    int axis;
} gather_case;

static tw_tensor *gather_fn(tw_tensor *const *in, void *data)
{
    const gather_case *c = data;
    return tw_gather(in[0], c->indices, c->axis);
}

static tw_tensor *gather_square_fn(tw_tensor *const *in, void *data)
{
    const gather_case *c = data;
    tw_tensor *g = tw_gather(in[0], c->indices, c->axis);
    return tw_mul(g, tw_gather(tw_square(in[0]), c->indices, c->axis));
}

static void test_gather_gradient(void)
{
    tw_scope_begin();
    tw_tensor *p = gc_tensor(41, -1, 1, TW_SHAPE(4, 3));
    /* repeated indices: gradients accumulate */
    gather_case rows = {MAKE(TW_INT32, TW_SHAPE(5), 2, 0, 2, 3, 2), 0};
    gc_check("gather axis 0, repeats", gather_fn, 1, &p, &rows);
    gather_case cols = {MAKE(TW_INT64, TW_SHAPE(2, 3), 1, 1, 0, 2, 1, 1), -1};
    gc_check("gather axis -1, 2-d indices", gather_fn, 1, &p, &cols);
    tw_tensor *q = gc_tensor(42, -1, 1, TW_SHAPE(2, 3, 2));
    gather_case mid = {MAKE(TW_INT64, TW_SHAPE(4), 0, 2, 2, 2), 1};
    gc_check("gather axis 1 of rank 3", gather_fn, 1, &q, &mid);
    gather_case scalar = {tw_scalar_of(1, TW_INT32), 1};
    gc_check("gather scalar index", gather_fn, 1, &q, &scalar);
    /* second order runs scatter_add's backward (a gather) */
    gc_check_second("gather second order", gather_square_fn, 1, &p, &rows);
    gc_check_second("gather second order axis 1", gather_square_fn, 1, &q, &mid);
    tw_scope_end();
}

/* ---- one_hot ------------------------------------------------------------------------ */

static void test_one_hot(void)
{
    tw_scope_begin();
    tw_tensor *ix = MAKE(TW_INT32, TW_SHAPE(4), 0, 2, -1, 3);
    CHECK(tw_one_hot(ix, 3, TW_FLOAT32), TW_FLOAT32, TW_SHAPE(4, 3), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0);
    tw_tensor *ix2 = MAKE(TW_INT64, TW_SHAPE(2, 2), 1, 0, 5, 1);
    CHECK(tw_one_hot(ix2, 2, TW_INT32), TW_INT32, TW_SHAPE(2, 2, 2), 0, 1, 1, 0, 0, 0, 0, 1);
    CHECK(tw_one_hot(ix2, 2, TW_BOOL), TW_BOOL, TW_SHAPE(2, 2, 2), 0, 1, 1, 0, 0, 0, 0, 1);
    CHECK(tw_one_hot(ix2, 2, TW_FLOAT64), TW_FLOAT64, TW_SHAPE(2, 2, 2), 0, 1, 1, 0, 0, 0, 0, 1);
    CHECK(tw_one_hot(tw_scalar_of(1, TW_INT64), 4, TW_UINT8), TW_UINT8, TW_SHAPE(4), 0, 1, 0, 0);
    tw_tensor *zero_depth = tw_one_hot(ix, 0, TW_FLOAT32);
    g_assert_nonnull(zero_depth);
    g_assert_cmpint(tw_tensor_numel(zero_depth), ==, 0);

    const tw_op_def *op = tw_op_lookup("one_hot");
    g_assert_nonnull(op);
    g_assert_true(op->flags & TW_OP_NOT_DIFFERENTIABLE);

    check_error(tw_one_hot(MAKE(TW_FLOAT32, TW_SHAPE(1), 0), 3, TW_FLOAT32),
                "one_hot: indices must be int32 or int64, got float32");
    check_error(tw_one_hot(ix, -2, TW_FLOAT32), "one_hot: depth must be non-negative, got -2");
    check_error(tw_one_hot(tw_zeros(TW_INT32, TW_SHAPE(1, 1, 1, 1, 1, 1, 1, 1)), 2, TW_FLOAT32),
                "one_hot: the result would have more than 8 axes");
    tw_scope_end();
}

/* ---- pad ----------------------------------------------------------------------------- */

static void test_pad_forward(void)
{
    tw_scope_begin();
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 1, 2, 3, 4);
    CHECK(tw_pad(x, (const int64_t[]){1, 0, 0, 2}, 9), TW_FLOAT32, TW_SHAPE(3, 4), 9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9,
          9);
    CHECK(tw_pad(x, (const int64_t[]){0, 0, 0, 0}, 9), TW_FLOAT32, TW_SHAPE(2, 2), 1, 2, 3, 4);
    tw_tensor *i = MAKE(TW_INT64, TW_SHAPE(3), 5, 6, 7);
    CHECK(tw_pad(i, (const int64_t[]){2, 1}, -1), TW_INT64, TW_SHAPE(6), -1, -1, 5, 6, 7, -1);
    tw_tensor *b = MAKE(TW_BOOL, TW_SHAPE(1, 2), 1, 0);
    CHECK(tw_pad(b, (const int64_t[]){1, 1, 0, 1}, 0), TW_BOOL, TW_SHAPE(3, 3), 0, 0, 0, 1, 0, 0, 0, 0, 0);
    tw_tensor *u = MAKE(TW_UINT8, TW_SHAPE(1, 1, 2), 3, 4);
    CHECK(tw_pad(u, (const int64_t[]){0, 1, 1, 0, 0, 0}, 7), TW_UINT8, TW_SHAPE(2, 2, 2), 7, 7, 3, 4, 7, 7, 7, 7);
    /* strided input */
    tw_tensor *m = MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    CHECK(tw_pad(tw_transpose(m), (const int64_t[]){0, 0, 1, 0}, 0), TW_FLOAT64, TW_SHAPE(3, 3), 0, 1, 4, 0, 2, 5,
          0, 3, 6);
    /* an empty tensor pads to all constant; a scalar is unchanged */
    CHECK(tw_pad(tw_zeros(TW_INT32, TW_SHAPE(0, 2)), (const int64_t[]){1, 0, 0, 1}, 4), TW_INT32, TW_SHAPE(1, 3), 4,
          4, 4);
    CHECK(tw_pad(tw_scalar_of(3, TW_FLOAT32), NULL, 0), TW_FLOAT32, NO_SHAPE, 3);
    tw_scope_end();
}

static void test_pad_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    check_error(tw_pad(x, (const int64_t[]){0, 0, -1, 2}, 0),
                "pad: padding -1 before axis 1 is negative (shape (2, 3))");
    check_error(tw_pad(x, (const int64_t[]){0, -3, 0, 0}, 0), "pad: padding -3 after axis 0 is negative");
    check_error(tw_pad(x, NULL, 0), "pad: paddings is NULL");
    const tw_op_def *op = tw_op_lookup("pad");
    tw_attrs short_attrs = {.i = {1, 1}, .ni = 2};
    check_error(tw_dispatch1(op, 1, &x, &short_attrs), "pad: got 2 padding amounts for a tensor of rank 2");
    tw_scope_end();
}

static tw_tensor *pad_fn(tw_tensor *const *in, void *data)
{
    return tw_pad(in[0], data, 0.5);
}

static tw_tensor *pad_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_pad(tw_mul(in[0], in[0]), data, -1));
}

static void test_pad_gradient(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(51, -1, 1, TW_SHAPE(2, 3, 2));
    int64_t p[] = {1, 0, 2, 1, 0, 3};
    gc_check("pad", pad_fn, 1, &x, p);
    gc_check_second("pad second order", pad_square_fn, 1, &x, p);
    tw_scope_end();
}

/* ---- tile ---------------------------------------------------------------------------- */

static void test_tile_forward(void)
{
    tw_scope_begin();
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    CHECK(tw_tile(x, 2, (const int64_t[]){2, 1}), TW_FLOAT32, TW_SHAPE(4, 3), 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6);
    CHECK(tw_tile(x, 2, (const int64_t[]){1, 2}), TW_FLOAT32, TW_SHAPE(2, 6), 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6);
    tw_tensor *i = MAKE(TW_INT32, TW_SHAPE(1, 2), 7, 8);
    CHECK(tw_tile(i, 2, (const int64_t[]){3, 2}), TW_INT32, TW_SHAPE(3, 4), 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8);
    tw_tensor *b = MAKE(TW_BOOL, TW_SHAPE(2), 1, 0);
    CHECK(tw_tile(b, 1, (const int64_t[]){3}), TW_BOOL, TW_SHAPE(6), 1, 0, 1, 0, 1, 0);
    tw_tensor *u = MAKE(TW_UINT8, TW_SHAPE(2, 1, 2), 1, 2, 3, 4);
    CHECK(tw_tile(u, 3, (const int64_t[]){2, 2, 1}), TW_UINT8, TW_SHAPE(4, 2, 2), 1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2,
          3, 4, 3, 4);
    /* strided input, zero multiple, scalar */
    tw_tensor *m = MAKE(TW_INT64, TW_SHAPE(2, 2), 1, 2, 3, 4);
    CHECK(tw_tile(tw_transpose(m), 2, (const int64_t[]){1, 2}), TW_INT64, TW_SHAPE(2, 4), 1, 3, 1, 3, 2, 4, 2, 4);
    tw_tensor *none = tw_tile(x, 2, (const int64_t[]){0, 2});
    g_assert_nonnull(none);
    g_assert_cmpint(tw_tensor_dim(none, 0), ==, 0);
    g_assert_cmpint(tw_tensor_dim(none, 1), ==, 6);
    CHECK(tw_tile(tw_scalar_of(2, TW_FLOAT64), 0, NULL), TW_FLOAT64, NO_SHAPE, 2);
    /* large: threaded rows */
    tw_tensor *big = tw_tile(tw_reshape(tw_arange(0, 200, 1, TW_FLOAT32), TW_SHAPE(2, 100)), 2,
                             (const int64_t[]){200, 2});
    g_assert_nonnull(big);
    const float *v = tw_tensor_data(big);
    for (int r = 0; r < 400; r++)
        for (int c = 0; c < 200; c++)
            g_assert_cmpfloat(v[r * 200 + c], ==, (r % 2) * 100 + c % 100);
    tw_scope_end();
}

static void test_tile_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    check_error(tw_tile(x, 1, (const int64_t[]){2}),
                "tile: got 1 multiples for a tensor of rank 2 (shape (2, 3)); give one per axis");
    check_error(tw_tile(x, 2, (const int64_t[]){2, -1}), "tile: multiple -1 for axis 1 is negative (shape (2, 3))");
    check_error(tw_tile(x, 2, NULL), "tile: multiples is NULL");
    check_error(tw_tile(x, 2, (const int64_t[]){INT64_MAX / 2, 1}), "tile: multiple");
    tw_scope_end();
}

static tw_tensor *tile_fn(tw_tensor *const *in, void *data)
{
    return tw_tile(in[0], tw_tensor_ndim(in[0]), data);
}

static tw_tensor *tile_square_fn(tw_tensor *const *in, void *data)
{
    return tw_square(tw_tile(tw_mul(in[0], in[0]), tw_tensor_ndim(in[0]), data));
}

static void test_tile_gradient(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(61, -1, 1, TW_SHAPE(2, 3));
    gc_check("tile (2, 3)", tile_fn, 1, &x, (int64_t[]){2, 3});
    gc_check("tile (1, 2)", tile_fn, 1, &x, (int64_t[]){1, 2});
    gc_check("tile (1, 1)", tile_fn, 1, &x, (int64_t[]){1, 1});
    tw_tensor *y = gc_tensor(62, -1, 1, TW_SHAPE(1, 2, 1));
    gc_check("tile size-1 axes", tile_fn, 1, &y, (int64_t[]){3, 1, 2});
    /* rank 5 with every axis tiled: the axis-by-axis path */
    tw_tensor *z = gc_tensor(63, -1, 1, TW_SHAPE(2, 2, 2, 2, 2));
    gc_check("tile rank 5", tile_fn, 1, &z, (int64_t[]){2, 2, 2, 2, 2});
    gc_check_second("tile second order", tile_square_fn, 1, &x, (int64_t[]){2, 3});
    gc_check_second("tile rank 5 second order", tile_square_fn, 1, &z, (int64_t[]){1, 2, 2, 1, 2});
    gc_check_second("tile rank 5 all axes second order", tile_square_fn, 1, &z, (int64_t[]){2, 2, 2, 2, 2});
    /* zero multiple: the gradient is zero */
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *t = tw_tile(x, 2, (const int64_t[]){0, 1});
    tw_tensor *loss = tw_add(tw_sum_all(t), tw_sum_all(tw_mul(x, tw_scalar(0))));
    tw_tape_end(tape);
    tw_tensor *grad;
    g_assert_cmpint(tw_tape_gradient(tape, loss, 1, &x, &grad), ==, 0);
    CHECK(grad, TW_FLOAT64, TW_SHAPE(2, 3), 0, 0, 0, 0, 0, 0);
    tw_tape_free(tape);
    tw_scope_end();
}

/* ---- the op table --------------------------------------------------------------------- */

static void test_registry(void)
{
    const char *names[] = {"concat", "gather", "scatter_add", "pad", "tile", "one_hot"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const tw_op_def *op = tw_op_lookup(names[i]);
        g_assert_nonnull(op);
        g_assert_cmpstr(op->name, ==, names[i]);
        g_assert_nonnull(op->infer);
        g_assert_nonnull(tw__cpu_kernel(op));
        if (strcmp(names[i], "one_hot") != 0)
            g_assert_nonnull(op->backward);
    }
}

/* Backends find kernels by op number: the registry's order is the numbering,
 * and every op that computes has the CPU's kernel (a view has none). */
static void test_op_numbers(void)
{
    const tw_op_def *const *ops = tw_op_registry();
    int n = 0;
    for (; ops[n]; n++) {
        g_assert_cmpint(ops[n]->id, ==, n + 1);
        if (ops[n]->view)
            g_assert_null(tw__cpu_kernel(ops[n]));
        else
            g_assert_nonnull(tw__cpu_kernel(ops[n]));
    }
    g_assert_cmpint(n + 1, ==, TW_OP_COUNT);
    /* A definition without a number runs nowhere, with a message. */
    static const tw_op_def unnumbered = {.name = "unnumbered", .noutputs = 1, .ninputs = 1};
    g_assert_null(tw__kernel_for(&unnumbered, TW_CPU));
    g_assert_nonnull(strstr(tw_last_error(), "unnumbered: no kernel for device cpu:0"));
    tw_error_clear();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/shape_ops/op-numbers", test_op_numbers);
    g_test_add_func("/shape_ops/concat/forward", test_concat_forward);
    g_test_add_func("/shape_ops/concat/many_inputs", test_concat_many_inputs);
    g_test_add_func("/shape_ops/concat/large", test_concat_large);
    g_test_add_func("/shape_ops/concat/errors", test_concat_errors);
    g_test_add_func("/shape_ops/concat/gradient", test_concat_gradient);
    g_test_add_func("/shape_ops/stack/forward", test_stack_forward);
    g_test_add_func("/shape_ops/stack/errors", test_stack_errors);
    g_test_add_func("/shape_ops/stack/gradient", test_stack_gradient);
    g_test_add_func("/shape_ops/split/forward", test_split_forward);
    g_test_add_func("/shape_ops/split/ownership", test_split_ownership);
    g_test_add_func("/shape_ops/split/errors", test_split_errors);
    g_test_add_func("/shape_ops/split/gradient", test_split_gradient);
    g_test_add_func("/shape_ops/gather/forward", test_gather_forward);
    g_test_add_func("/shape_ops/gather/large", test_gather_large);
    g_test_add_func("/shape_ops/gather/errors", test_gather_errors);
    g_test_add_func("/shape_ops/gather/scatter_add", test_scatter_add_op);
    g_test_add_func("/shape_ops/gather/gradient", test_gather_gradient);
    g_test_add_func("/shape_ops/one_hot", test_one_hot);
    g_test_add_func("/shape_ops/pad/forward", test_pad_forward);
    g_test_add_func("/shape_ops/pad/errors", test_pad_errors);
    g_test_add_func("/shape_ops/pad/gradient", test_pad_gradient);
    g_test_add_func("/shape_ops/tile/forward", test_tile_forward);
    g_test_add_func("/shape_ops/tile/errors", test_tile_errors);
    g_test_add_func("/shape_ops/tile/gradient", test_tile_gradient);
    g_test_add_func("/shape_ops/registry", test_registry);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
