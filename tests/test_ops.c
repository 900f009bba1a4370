/* Forward values of the primitive and composite ops on hand-checked cases:
 * elementwise arithmetic (float and integer), weak scalars, comparisons and
 * logic, where, unary math and activations, reductions over any axes,
 * matmul (batched, transposed, strided operands), views and aliasing, casts,
 * softmax and the cross-entropies, moments, norm clipping, broadcasting edge
 * cases, and the error messages users see. Expected values are literals
 * worked out by hand (or with a calculator to 16 digits), or come from
 * naive loops written here independently of the kernels. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "internal.h"

#define F64(SHAPE, ...) tw_tensor_from_data((double[]){__VA_ARGS__}, TW_FLOAT64, SHAPE)
#define F32(SHAPE, ...) tw_tensor_from_data((float[]){__VA_ARGS__}, TW_FLOAT32, SHAPE)
#define I32(SHAPE, ...) tw_tensor_from_data((int32_t[]){__VA_ARGS__}, TW_INT32, SHAPE)
#define I64(SHAPE, ...) tw_tensor_from_data((int64_t[]){__VA_ARGS__}, TW_INT64, SHAPE)
#define U8(SHAPE, ...) tw_tensor_from_data((uint8_t[]){__VA_ARGS__}, TW_UINT8, SHAPE)
#define BOOL(SHAPE, ...) tw_tensor_from_data((uint8_t[]){__VA_ARGS__}, TW_BOOL, SHAPE)

#define LIST(...) (const double[]){__VA_ARGS__}, (int64_t)(sizeof((double[]){__VA_ARGS__}) / sizeof(double))

/* ---- helpers -------------------------------------------------------------- */

static void unravel(const tw_tensor *t, int64_t flat, int64_t *index)
{
    for (int d = tw_tensor_ndim(t) - 1; d >= 0; d--) {
        int64_t n = tw_tensor_shape(t)[d];
        index[d] = n ? flat % n : 0;
        flat = n ? flat / n : 0;
    }
}

/* Element `flat` of t in row-major order, through its strides. */
static double at(const tw_tensor *t, int64_t flat)
{
    int64_t index[TW_MAX_DIMS];
    unravel(t, flat, index);
    return tw_tensor_get(t, index);
}

static bool close_to(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tol * (1 + fabs(want));
}

/* Non-fatal checks: they fail the running test and return false so one bad
 * op does not hide the rest of the suite. */
static bool check_values_at(const char *where, int line, const tw_tensor *t, double tol, const double *want, int64_t n)
{
    if (!t) {
        g_test_fail_printf("%s:%d: result is NULL: %s", where, line, tw_last_error());
        return false;
    }
    if (tw_tensor_numel(t) != n) {
        g_test_fail_printf("%s:%d: %lld elements, expected %lld", where, line, (long long)tw_tensor_numel(t),
                           (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double got = at(t, i);
        if (!close_to(got, want[i], tol)) {
            g_test_fail_printf("%s:%d: element %lld is %.17g, expected %.17g", where, line, (long long)i, got, want[i]);
            return false;
        }
    }
    return true;
}
#define check_values(t, tol, ...) check_values_at(__func__, __LINE__, (t), (tol), LIST(__VA_ARGS__))

/* Relative accuracy of one element, for tiny values an absolute check would accept as 0. */
static void check_relative_at(const char *where, int line, const tw_tensor *t, int64_t flat, double want, double rtol)
{
    if (!t) {
        g_test_fail_printf("%s:%d: result is NULL: %s", where, line, tw_last_error());
        return;
    }
    double got = at(t, flat);
    if (!(fabs(got - want) <= rtol * fabs(want)))
        g_test_fail_printf("%s:%d: element %lld is %.17g, expected %.17g to a relative %g", where, line,
                           (long long)flat, got, want, rtol);
}
#define check_relative(t, flat, want, rtol) check_relative_at(__func__, __LINE__, (t), (flat), (want), (rtol))

static bool check_shape_at(const char *where, int line, const tw_tensor *t, int ndim, const int64_t *shape)
{
    char a[160], b[160];
    if (!t) {
        g_test_fail_printf("%s:%d: result is NULL: %s", where, line, tw_last_error());
        return false;
    }
    if (tw_tensor_ndim(t) != ndim || (ndim > 0 && memcmp(tw_tensor_shape(t), shape, sizeof(int64_t) * (size_t)ndim) != 0)) {
        g_test_fail_printf("%s:%d: shape %s, expected %s", where, line,
                           tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), a, sizeof a),
                           tw_shape_str(ndim, shape, b, sizeof b));
        return false;
    }
    return true;
}
#define check_shape(t, SHAPE) check_shape_at(__func__, __LINE__, (t), SHAPE)
#define SCALAR_SHAPE 0, NULL

static bool check_dtype_at(const char *where, int line, const tw_tensor *t, tw_dtype dtype)
{
    if (!t) {
        g_test_fail_printf("%s:%d: result is NULL: %s", where, line, tw_last_error());
        return false;
    }
    if (tw_tensor_dtype(t) != dtype) {
        g_test_fail_printf("%s:%d: dtype %s, expected %s", where, line, tw_dtype_name(tw_tensor_dtype(t)),
                           tw_dtype_name(dtype));
        return false;
    }
    return true;
}
#define check_dtype(t, dtype) check_dtype_at(__func__, __LINE__, (t), (dtype))

/* The call must fail (NULL) and leave a message holding every needle. */
static void check_failed_at(const char *where, int line, const tw_tensor *r, const char *const *needles)
{
    if (r) {
        g_test_fail_printf("%s:%d: expected a failure, got a result", where, line);
        return;
    }
    const char *msg = tw_last_error();
    for (int i = 0; needles[i]; i++) {
        if (!strstr(msg, needles[i])) {
            g_test_fail_printf("%s:%d: message \"%s\" lacks \"%s\"", where, line, msg, needles[i]);
            return;
        }
    }
}
#define check_failed(expr, ...)                                                                  \
    do {                                                                                         \
        tw_error_clear();                                                                        \
        tw_tensor *failed_result_ = (expr);                                                      \
        check_failed_at(__func__, __LINE__, failed_result_, (const char *const[]){__VA_ARGS__, NULL}); \
    } while (0)

static tw_tensor *arange64(int64_t n, int ndim, const int64_t *shape)
{
    return tw_reshape(tw_arange(0, (double)n, 1, TW_FLOAT64), ndim, shape);
}

/* ---- binary arithmetic -------------------------------------------------------- */

static void test_arith_float(void)
{
    tw_scope_begin();
    for (int k = 0; k < 2; k++) {
        tw_dtype dt = k ? TW_FLOAT32 : TW_FLOAT64;
        double tol = k ? 1e-6 : 1e-14;
        tw_tensor *a = tw_cast(F64(TW_SHAPE(2, 3), 1, -2, 3.5, 4, -5, 6), dt);
        tw_tensor *b = tw_cast(F64(TW_SHAPE(2, 3), 2, 4, -0.5, 3, 2, -1.5), dt);
        tw_tensor *r = tw_add(a, b);
        check_dtype(r, dt);
        check_shape(r, TW_SHAPE(2, 3));
        check_values(r, tol, 3, 2, 3, 7, -3, 4.5);
        check_values(tw_sub(a, b), tol, -1, -6, 4, 1, -7, 7.5);
        check_values(tw_mul(a, b), tol, 2, -8, -1.75, 12, -10, -9);
        check_values(tw_div(a, b), tol, 0.5, -0.5, -7, 4.0 / 3.0, -2.5, -4);
        check_values(tw_maximum(a, b), tol, 2, 4, 3.5, 4, 2, 6);
        check_values(tw_minimum(a, b), tol, 1, -2, -0.5, 3, -5, -1.5);
        tw_tensor *base = tw_cast(F64(TW_SHAPE(2, 3), 1, 2, 4, 0.5, 9, 3), dt);
        tw_tensor *expo = tw_cast(F64(TW_SHAPE(2, 3), 3, -1, 0.5, 2, 0.5, 0), dt);
        check_values(tw_pow(base, expo), tol, 1, 0.5, 2, 0.25, 3, 1);
        /* IEEE division by zero */
        check_values(tw_div(tw_cast(F64(TW_SHAPE(2), 1, -1), dt), tw_zeros(dt, TW_SHAPE(2))), 0, INFINITY, -INFINITY);
    }
    tw_scope_end();
}

static void test_arith_int(void)
{
    tw_scope_begin();
    for (int k = 0; k < 2; k++) {
        tw_dtype dt = k ? TW_INT64 : TW_INT32;
        tw_tensor *a = tw_cast(I32(TW_SHAPE(6), 7, -7, 7, -7, 5, 0), dt);
        tw_tensor *b = tw_cast(I32(TW_SHAPE(6), 2, 2, -2, -2, 0, 3), dt);
        /* an integer zero divisor is an error, never a made-up value */
        check_failed(tw_div(a, b), "div: integer division by zero");
        check_failed(tw_floormod(a, b), "floormod: integer division by zero");
        /* floor division and the remainder with the divisor's sign (Python's // and %) */
        tw_tensor *d = tw_cast(I32(TW_SHAPE(6), 2, 2, -2, -2, -1, 3), dt);
        tw_tensor *q = tw_div(a, d);
        check_dtype(q, dt);
        check_values(q, 0, 3, -4, -4, 3, -5, 0);
        check_values(tw_floormod(a, d), 0, 1, 1, -1, -1, 0, 0);
        check_values(tw_mod(a, d), 0, 1, 1, -1, -1, 0, 0);
        check_values(tw_add(a, b), 0, 9, -5, 5, -9, 5, 3);
        check_values(tw_sub(a, b), 0, 5, -9, 9, -5, 5, -3);
        check_values(tw_mul(a, b), 0, 14, -14, -14, 14, 0, 0);
        check_values(tw_maximum(a, b), 0, 7, 2, 7, -2, 5, 3);
        check_values(tw_minimum(a, b), 0, 2, -7, -2, -7, 0, 0);
        check_values(tw_div_scalar(a, 2), 0, 3, -4, 3, -4, 2, 0);
        check_failed(tw_div_scalar(a, 0), "div: integer division by zero");
        check_dtype(tw_add_scalar(a, 2), dt);
        check_values(tw_add_scalar(a, 2), 0, 9, -5, 9, -5, 7, 2);
        /* pow is float-only */
        check_failed(tw_pow(a, b), "pow", tw_dtype_name(dt));
    }
    /* int64 keeps integers beyond float precision */
    tw_tensor *big = I64(TW_SHAPE(1), (INT64_C(1) << 53) + 1);
    tw_tensor *sum = tw_add(big, I64(TW_SHAPE(1), 2));
    g_assert_nonnull(sum);
    g_assert_cmpint(((int64_t *)tw_tensor_data(sum))[0], ==, (INT64_C(1) << 53) + 3);
    /* uint8 wraps and divides without a sign */
    tw_tensor *u = U8(TW_SHAPE(3), 200, 7, 5);
    tw_tensor *v = U8(TW_SHAPE(3), 100, 2, 0);
    check_dtype(tw_add(u, v), TW_UINT8);
    check_values(tw_add(u, v), 0, 44, 9, 5);
    check_failed(tw_div(u, v), "div: integer division by zero");
    check_values(tw_div(u, U8(TW_SHAPE(3), 100, 2, 3)), 0, 2, 3, 1);
    /* the smallest integer over -1 wraps, as other integer overflow does, instead of trapping */
    check_values(tw_div(I32(TW_SHAPE(1), INT32_MIN), I32(TW_SHAPE(1), -1)), 0, INT32_MIN);
    check_values(tw_floormod(I32(TW_SHAPE(1), INT32_MIN), I32(TW_SHAPE(1), -1)), 0, 0);
    /* bool arithmetic is refused */
    tw_tensor *p = BOOL(TW_SHAPE(2), 1, 0);
    check_failed(tw_add(p, p), "add", "bool");
    tw_scope_end();
}

static void test_scalar_variants(void)
{
    tw_scope_begin();
    for (int k = 0; k < 2; k++) {
        tw_dtype dt = k ? TW_FLOAT32 : TW_FLOAT64;
        tw_tensor *x = tw_cast(F64(TW_SHAPE(3), 1, 2, 4), dt);
        tw_tensor *r = tw_add_scalar(x, 1);
        check_dtype(r, dt);
        check_values(r, 1e-7, 2, 3, 5);
        check_values(tw_sub_scalar(x, 1), 1e-7, 0, 1, 3);
        check_values(tw_mul_scalar(x, 3), 1e-7, 3, 6, 12);
        check_values(tw_div_scalar(x, 2), 1e-7, 0.5, 1, 2);
        check_values(tw_pow_scalar(x, 2), 1e-7, 1, 4, 16);
        check_values(tw_pow_scalar(x, 0.5), 1e-7, 1, M_SQRT2, 2);
        check_values(tw_rsub_scalar(10, x), 1e-7, 9, 8, 6);
        check_values(tw_rdiv_scalar(8, x), 1e-7, 8, 4, 2);
        check_dtype(tw_rdiv_scalar(8, x), dt);
    }
    tw_scope_end();
}

static void test_weak_scalars(void)
{
    tw_scope_begin();
    tw_tensor *x32 = F32(TW_SHAPE(2), 1.5f, -2);
    tw_tensor *x64 = F64(TW_SHAPE(2), 1.5, -2);
    tw_tensor *r32 = tw_mul(x32, tw_scalar(2));
    tw_tensor *r64 = tw_mul(tw_scalar(2), x64);
    check_dtype(r32, TW_FLOAT32);
    check_dtype(r64, TW_FLOAT64);
    check_shape(r32, TW_SHAPE(2));
    check_values(r32, 0, 3, -4);
    check_values(r64, 0, 3, -4);
    check_values(tw_sub(tw_scalar(1), x32), 0, -0.5, 3);
    check_dtype(tw_sub(tw_scalar(1), x32), TW_FLOAT32);
    /* two weak scalars stay weak: the result adapts to the next tensor */
    tw_tensor *three = tw_add(tw_scalar(1), tw_scalar(2));
    check_values(three, 0, 3);
    check_dtype(tw_mul(x32, three), TW_FLOAT32);
    check_values(tw_mul(x32, three), 0, 4.5, -6);
    /* a strong float64 scalar does not adapt */
    check_failed(tw_mul(x32, tw_scalar_of(2, TW_FLOAT64)), "mul", "float32", "float64");
    /* with integer tensors a weak scalar must be an integer: no silent truncation */
    tw_tensor *xi = I32(TW_SHAPE(3), -1, 0, 1);
    check_dtype(tw_mul(xi, tw_scalar(3)), TW_INT32);
    check_values(tw_mul(xi, tw_scalar(3)), 0, -3, 0, 3);
    check_values(tw_greater(xi, tw_scalar(0)), 0, 0, 0, 1);
    check_failed(tw_add(xi, tw_scalar(2.5)), "add", "2.5", "int32");
    check_failed(tw_greater(xi, tw_scalar(-0.5)), "greater", "-0.5", "int32");
    check_failed(tw_add(U8(TW_SHAPE(1), 1), tw_scalar(-1)), "add", "-1", "uint8");
    check_failed(tw_add_scalar(xi, 0.5), "add_scalar", "0.5", "int32");
    check_failed(tw_div_scalar(xi, 1e10), "div_scalar", "int32");
    check_values(tw_add_scalar(tw_cast(xi, TW_INT64), 1e10), 0, 1e10 - 1, 1e10, 1e10 + 1);
    /* weak scalars in comparisons and where */
    check_values(tw_greater(x32, tw_scalar(0)), 0, 1, 0);
    check_dtype(tw_where(tw_greater(x32, tw_scalar(0)), x32, tw_scalar(7)), TW_FLOAT32);
    check_values(tw_where(tw_greater(x32, tw_scalar(0)), x32, tw_scalar(7)), 0, 1.5, 7);
    tw_scope_end();
}

static void test_compare(void)
{
    tw_scope_begin();
    tw_tensor *a = F64(TW_SHAPE(3), 1, 2, 3);
    tw_tensor *b = F64(TW_SHAPE(3), 2, 2, 2);
    tw_tensor *eq = tw_equal(a, b);
    check_dtype(eq, TW_BOOL);
    check_values(eq, 0, 0, 1, 0);
    check_values(tw_not_equal(a, b), 0, 1, 0, 1);
    check_values(tw_less(a, b), 0, 1, 0, 0);
    check_values(tw_less_equal(a, b), 0, 1, 1, 0);
    check_values(tw_greater(a, b), 0, 0, 0, 1);
    check_values(tw_greater_equal(a, b), 0, 0, 1, 1);
    /* broadcasting, and integers */
    tw_tensor *c = I32(TW_SHAPE(3, 1), 1, 2, 3);
    tw_tensor *d = I32(TW_SHAPE(1, 2), 2, 3);
    tw_tensor *lt = tw_less(c, d);
    check_shape(lt, TW_SHAPE(3, 2));
    check_dtype(lt, TW_BOOL);
    check_values(lt, 0, 1, 1, 0, 1, 0, 0);
    check_values(tw_equal(c, d), 0, 0, 0, 1, 0, 0, 1);
    /* NaN is unequal to itself */
    tw_tensor *n = F32(TW_SHAPE(2), NAN, 1);
    check_values(tw_equal(n, n), 0, 0, 1);
    check_values(tw_not_equal(n, n), 0, 1, 0);
    tw_scope_end();
}

static void test_logical(void)
{
    tw_scope_begin();
    tw_tensor *p = BOOL(TW_SHAPE(4), 1, 1, 0, 0);
    tw_tensor *q = BOOL(TW_SHAPE(4), 1, 0, 1, 0);
    check_dtype(tw_logical_and(p, q), TW_BOOL);
    check_values(tw_logical_and(p, q), 0, 1, 0, 0, 0);
    check_values(tw_logical_or(p, q), 0, 1, 1, 1, 0);
    check_values(tw_logical_not(p), 0, 0, 0, 1, 1);
    /* broadcast a (2,1) against (1,2) */
    tw_tensor *r = tw_logical_or(BOOL(TW_SHAPE(2, 1), 0, 1), BOOL(TW_SHAPE(1, 2), 0, 1));
    check_shape(r, TW_SHAPE(2, 2));
    check_values(r, 0, 0, 1, 1, 1);
    check_failed(tw_logical_and(F64(TW_SHAPE(1), 1), F64(TW_SHAPE(1), 1)), "logical_and", "float64");
    check_failed(tw_logical_not(I32(TW_SHAPE(1), 1)), "logical_not", "int32");
    tw_scope_end();
}

static void test_where(void)
{
    tw_scope_begin();
    tw_tensor *cond = BOOL(TW_SHAPE(3, 1), 1, 0, 1);
    tw_tensor *a = F64(TW_SHAPE(1, 4), 1, 2, 3, 4);
    tw_tensor *r = tw_where(cond, a, tw_scalar(-1));
    check_shape(r, TW_SHAPE(3, 4));
    check_dtype(r, TW_FLOAT64);
    check_values(r, 0, 1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4);
    /* all three broadcast; integers too */
    tw_tensor *c2 = BOOL(TW_SHAPE(4), 1, 0, 0, 1);
    tw_tensor *r2 = tw_where(c2, I64(TW_SHAPE(2, 1), 10, 20), I64(TW_SHAPE(4), -1, -2, -3, -4));
    check_shape(r2, TW_SHAPE(2, 4));
    check_dtype(r2, TW_INT64);
    check_values(r2, 0, 10, -2, -3, 10, 20, -2, -3, 20);
    check_failed(tw_where(F64(TW_SHAPE(1), 1), a, a), "where", "bool");
    check_failed(tw_where(cond, a, F64(TW_SHAPE(2), 1, 2)), "where", "(2,)");
    tw_scope_end();
}

/* ---- broadcasting -------------------------------------------------------------- */

/* Element of t read as if broadcast to an output index of rank ndim. */
static double get_broadcast(const tw_tensor *t, int ndim, const int64_t *out_index)
{
    int64_t index[TW_MAX_DIMS];
    int lead = ndim - tw_tensor_ndim(t);
    for (int d = 0; d < tw_tensor_ndim(t); d++)
        index[d] = tw_tensor_shape(t)[d] == 1 ? 0 : out_index[d + lead];
    return tw_tensor_get(t, index);
}

static void test_broadcasting(void)
{
    tw_scope_begin();
    /* scalar with tensor, either side */
    tw_tensor *s = tw_scalar_of(10, TW_FLOAT64);
    tw_tensor *m = F64(TW_SHAPE(2, 2), 1, 2, 3, 4);
    check_shape(tw_sub(s, m), TW_SHAPE(2, 2));
    check_values(tw_sub(s, m), 0, 9, 8, 7, 6);
    check_values(tw_sub(m, s), 0, -9, -8, -7, -6);
    /* (3,1) + (1,4) */
    tw_tensor *col = F64(TW_SHAPE(3, 1), 0, 10, 20);
    tw_tensor *row = F64(TW_SHAPE(1, 4), 1, 2, 3, 4);
    tw_tensor *r = tw_add(col, row);
    check_shape(r, TW_SHAPE(3, 4));
    check_values(r, 0, 1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24);
    /* lower rank on the right */
    check_values(tw_mul(m, F64(TW_SHAPE(2), 10, 100)), 0, 10, 200, 30, 400);
    /* strided operands: a transposed view and a reversed slice */
    tw_tensor *t = tw_transpose(m); /* [[1,3],[2,4]] */
    check_values(tw_sub(t, m), 0, 0, 1, -1, 0);
    tw_tensor *rev = tw_slice(F64(TW_SHAPE(4), 1, 2, 3, 4), 0, TW_END, TW_END, -1);
    check_values(tw_add(rev, row), 0, 5, 5, 5, 5);
    /* empty tensors: (0,3) with (1,3) and with (3,) */
    tw_tensor *e = tw_zeros(TW_FLOAT32, TW_SHAPE(0, 3));
    tw_tensor *er = tw_add(e, tw_ones(TW_FLOAT32, TW_SHAPE(1, 3)));
    check_shape(er, TW_SHAPE(0, 3));
    check_shape(tw_mul(e, tw_ones(TW_FLOAT32, TW_SHAPE(3))), TW_SHAPE(0, 3));
    check_shape(tw_exp(e), TW_SHAPE(0, 3));
    check_shape(tw_add(tw_zeros(TW_FLOAT32, TW_SHAPE(0, 1)), tw_ones(TW_FLOAT32, TW_SHAPE(1, 3))), TW_SHAPE(0, 3));
    check_failed(tw_add(e, tw_ones(TW_FLOAT32, TW_SHAPE(2, 1))), "add", "(0, 3)", "(2, 1)");
    /* rank 8 on both sides, broadcasting in alternate axes */
    tw_tensor *a8 = arange64(16, TW_SHAPE(2, 1, 2, 1, 2, 1, 2, 1));
    tw_tensor *b8 = tw_mul_scalar(arange64(16, TW_SHAPE(1, 2, 1, 2, 1, 2, 1, 2)), 100);
    tw_tensor *c8 = tw_add(a8, b8);
    if (check_shape(c8, TW_SHAPE(2, 2, 2, 2, 2, 2, 2, 2))) {
        for (int64_t i = 0; i < 256; i++) {
            int64_t index[TW_MAX_DIMS];
            unravel(c8, i, index);
            double want = get_broadcast(a8, 8, index) + get_broadcast(b8, 8, index);
            if (tw_tensor_get(c8, index) != want) {
                g_test_fail_printf("rank-8 broadcast: element %lld is %g, expected %g", (long long)i,
                                   tw_tensor_get(c8, index), want);
                break;
            }
        }
        /* by hand: index (1,0,1,1,0,1,1,0) reads a at (1,1,0,1) = 13, b at (0,1,1,0) = 6 */
        g_assert_cmpfloat(tw_tensor_get(c8, (int64_t[]){1, 0, 1, 1, 0, 1, 1, 0}), ==, 13 + 600);
    }
    check_failed(tw_expand_dims(a8, 0), "expand_dims", "(2, 1, 2, 1, 2, 1, 2, 1)");
    tw_scope_end();
}

/* ---- unary ---------------------------------------------------------------------------- */

static void test_unary_float64(void)
{
    tw_scope_begin();
    const double tol = 1e-13;
    check_values(tw_neg(F64(TW_SHAPE(2), 1, -2)), 0, -1, 2);
    check_values(tw_abs(F64(TW_SHAPE(2), -1.5, 2)), 0, 1.5, 2);
    check_values(tw_sign(F64(TW_SHAPE(3), -3, 0, 2)), 0, -1, 0, 1);
    check_values(tw_exp(F64(TW_SHAPE(3), 0, 1, -1)), tol, 1, 2.718281828459045, 0.36787944117144233);
    check_values(tw_log(F64(TW_SHAPE(4), 1, M_E, 0.5, 0)), tol, 0, 1, -0.6931471805599453, -INFINITY);
    check_values(tw_log1p(F64(TW_SHAPE(3), 0, 1, 1e-10)), tol, 0, 0.6931471805599453, 9.9999999995e-11);
    check_values(tw_expm1(F64(TW_SHAPE(3), 0, 1, 1e-10)), tol, 0, 1.718281828459045, 1.00000000005e-10);
    /* log1p and expm1 keep the digits log(1 + x) and exp(x) - 1 lose near 0 */
    check_relative(tw_log1p(F64(TW_SHAPE(1), 1e-10)), 0, 9.9999999995e-11, 1e-12);
    check_relative(tw_expm1(F64(TW_SHAPE(1), 1e-10)), 0, 1.00000000005e-10, 1e-12);
    check_relative(tw_expm1(F64(TW_SHAPE(1), -1e-12)), 0, -9.999999999995e-13, 1e-12);
    check_values(tw_sqrt(F64(TW_SHAPE(3), 4, 2, 0)), tol, 2, 1.4142135623730951, 0);
    check_values(tw_rsqrt(F64(TW_SHAPE(2), 4, 0.25)), tol, 0.5, 2);
    check_values(tw_square(F64(TW_SHAPE(2), -3, 1.5)), 0, 9, 2.25);
    check_values(tw_sin(F64(TW_SHAPE(3), 0, 1, M_PI_2)), tol, 0, 0.8414709848078965, 1);
    check_values(tw_cos(F64(TW_SHAPE(3), 0, 1, M_PI)), tol, 1, 0.5403023058681398, -1);
    check_values(tw_tanh(F64(TW_SHAPE(3), 0, 1, -20)), tol, 0, 0.7615941559557649, -1);
    check_values(tw_erf(F64(TW_SHAPE(3), 0, 1, -0.5)), tol, 0, 0.8427007929497149, -0.5204998778130465);
    check_values(tw_sigmoid(F64(TW_SHAPE(5), 0, 1, -1, 100, -100)), tol, 0.5, 0.7310585786300049,
                 0.2689414213699951, 1, 3.720075976020836e-44);
    /* far tails: the tiny values themselves, not 0 */
    check_relative(tw_sigmoid(F64(TW_SHAPE(1), -100)), 0, 3.720075976020836e-44, 1e-12);
    check_relative(tw_softplus(F64(TW_SHAPE(1), -100)), 0, 3.720075976020836e-44, 1e-12);
    check_relative(tw_softplus(F64(TW_SHAPE(1), -30)), 0, 9.357622968839737e-14, 1e-12);
    check_values(tw_relu(F64(TW_SHAPE(3), -1, 0, 2)), 0, 0, 0, 2);
    check_values(tw_leaky_relu(F64(TW_SHAPE(2), -2, 3), 0.2), tol, -0.4, 3);
    check_values(tw_leaky_relu(F64(TW_SHAPE(2), -2, 3), 0.3), tol, -0.6, 3);
    check_values(tw_elu(F64(TW_SHAPE(2), -1, 2), 1.0), tol, -0.6321205588285577, 2);
    check_values(tw_elu(F64(TW_SHAPE(2), -1, 2), 2.0), tol, -1.2642411176571153, 2);
    check_values(tw_gelu(F64(TW_SHAPE(4), 1, -1, 0, 2)), tol, 0.8413447460685429, -0.15865525393145707, 0,
                 1.9544997361036416);
    check_values(tw_softplus(F64(TW_SHAPE(4), 0, 1, 100, -100)), tol, 0.6931471805599453, 1.3132616875182228, 100,
                 3.720075976020836e-44);
    check_values(tw_swish(F64(TW_SHAPE(3), 1, -1, 0)), tol, 0.7310585786300049, -0.2689414213699951, 0);
    check_values(tw_clip(F64(TW_SHAPE(3), -2, 0.5, 3), -1, 1), 0, -1, 0.5, 1);
    check_values(tw_stop_gradient(F64(TW_SHAPE(2), 3, 4)), 0, 3, 4);
    tw_scope_end();
}

/* The ops TensorFlow and PyTorch users expect beside the basic ones (values from Python's math). */
static void test_unary_more(void)
{
    tw_scope_begin();
    const double tol = 1e-13;
    check_values(tw_tan(F64(TW_SHAPE(3), 0, 1, -0.5)), tol, 0, 1.5574077246549023, -0.5463024898437905);
    check_values(tw_atan(F64(TW_SHAPE(3), 0, 1, -20)), tol, 0, 0.7853981633974483, -1.5208379310729538);
    tw_tensor *x = F64(TW_SHAPE(8), -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.2);
    check_values(tw_floor(x), 0, -3, -2, -1, 0, 1, 2, 2, -3);
    check_values(tw_ceil(x), 0, -2, -1, -0, 1, 2, 3, 3, -2);
    /* halves to the even neighbour, as tf.round and torch.round */
    check_values(tw_round(x), 0, -2, -2, -0, 0, 2, 2, 3, -2);
    check_values(tw_round(tw_cast(x, TW_FLOAT32)), 0, -2, -2, -0, 0, 2, 2, 3, -2);
    check_values(tw_round(I32(TW_SHAPE(2), -3, 4)), 0, -3, 4);
    check_values(tw_log_sigmoid(F64(TW_SHAPE(4), 0, 1, -100, 100)), tol, -0.6931471805599453, -0.31326168751822286,
                 -100, -3.720075976020836e-44);
    check_values(tw_softsign(F64(TW_SHAPE(3), 0, 1, -3)), tol, 0, 0.5, -0.75);
    check_values(tw_relu6(F64(TW_SHAPE(4), -1, 3, 6, 9)), 0, 0, 3, 6, 6);
    check_values(tw_relu6(I32(TW_SHAPE(4), -1, 3, 6, 9)), 0, 0, 3, 6, 6);
    check_values(tw_hard_swish(F64(TW_SHAPE(5), -4, -1, 0, 1, 4)), tol, 0, -0.3333333333333333, 0, 0.6666666666666666,
                 4);
    check_values(tw_mish(F64(TW_SHAPE(4), -2, 0, 1, 20)), tol, -0.2525014826957089, 0, 0.8650983882673103, 20);
    /* floats: x - floor(x / y) * y, the divisor's sign */
    check_values(tw_floormod(F64(TW_SHAPE(3), -7.5, 7.5, 7.5), F64(TW_SHAPE(3), 2, -2, 2)), tol, 0.5, -0.5, 1.5);
    g_assert_true(isnan(at(tw_floormod(F64(TW_SHAPE(1), 1), F64(TW_SHAPE(1), 0)), 0)));
    /* NaN goes through */
    g_assert_true(isnan(at(tw_relu6(F64(TW_SHAPE(1), NAN)), 0)));
    tw_scope_end();
}

static void test_unary_float32(void)
{
    tw_scope_begin();
    const double tol = 3e-7;
    tw_tensor *x = F32(TW_SHAPE(6), -100, -1, 0, 1, 2, 100);
    tw_tensor *r = tw_sigmoid(x);
    check_dtype(r, TW_FLOAT32);
    check_values(r, 1e-5, 3.720075976020836e-44, 0.2689414213699951, 0.5, 0.7310585786300049, 0.8807970779778823, 1);
    check_values(tw_softplus(x), tol, 0, 0.31326168751822286, 0.6931471805599453, 1.3132616875182228,
                 2.1269280110429727, 100);
    check_values(tw_tanh(x), tol, -1, -0.7615941559557649, 0, 0.7615941559557649, 0.9640275800758169, 1);
    check_values(tw_gelu(x), tol, 0, -0.15865525393145707, 0, 0.8413447460685429, 1.9544997361036416, 100);
    check_values(tw_swish(x), 1e-5, 0, -0.2689414213699951, 0, 0.7310585786300049, 1.7615941559557646, 100);
    check_values(tw_elu(x, 1.0), tol, -1, -0.6321205588285577, 0, 1, 2, 100);
    check_values(tw_exp(F32(TW_SHAPE(2), 1, -1)), tol, 2.718281828459045, 0.36787944117144233);
    tw_tensor *s = tw_sigmoid(x), *sp = tw_softplus(x);
    for (int i = 0; i < 6; i++) {
        g_assert_true(isfinite(at(s, i)));
        g_assert_true(isfinite(at(sp, i)));
        g_assert_cmpfloat(at(s, i), >=, 0);
    }
    tw_scope_end();
}

static void test_unary_int(void)
{
    tw_scope_begin();
    tw_tensor *x = I32(TW_SHAPE(3), -3, 0, 2);
    check_dtype(tw_neg(x), TW_INT32);
    check_values(tw_neg(x), 0, 3, 0, -2);
    check_values(tw_abs(x), 0, 3, 0, 2);
    check_values(tw_sign(x), 0, -1, 0, 1);
    check_values(tw_square(x), 0, 9, 0, 4);
    check_values(tw_relu(x), 0, 0, 0, 2);
    check_values(tw_clip(x, -1, 1), 0, -1, 0, 1);
    check_values(tw_abs(I64(TW_SHAPE(2), -5, 5)), 0, 5, 5);
    check_failed(tw_exp(x), "exp", "int32");
    check_failed(tw_sigmoid(x), "sigmoid", "int32");
    check_failed(tw_neg(BOOL(TW_SHAPE(1), 1)), "neg", "bool");
    check_failed(tw_clip(F64(TW_SHAPE(1), 1), 2, 1), "clip", "2", "1");
    tw_scope_end();
}

/* ---- reductions ------------------------------------------------------------------------ */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD };

/* Reduce x over the axes in mask with plain loops; out in kept-axes order. */
static int64_t naive_reduce(const tw_tensor *x, unsigned mask, int kind, double *out)
{
    int nd = tw_tensor_ndim(x);
    const int64_t *shape = tw_tensor_shape(x);
    int64_t nout = 1, count = 1;
    for (int d = 0; d < nd; d++) {
        if (mask & (1u << d))
            count *= shape[d];
        else
            nout *= shape[d];
    }
    for (int64_t o = 0; o < nout; o++)
        out[o] = kind == R_MAX ? -INFINITY : kind == R_MIN ? INFINITY : kind == R_PROD ? 1 : 0;
    for (int64_t i = 0; i < tw_tensor_numel(x); i++) {
        int64_t index[TW_MAX_DIMS], o = 0;
        unravel(x, i, index);
        for (int d = 0; d < nd; d++)
            if (!(mask & (1u << d)))
                o = o * shape[d] + index[d];
        double v = tw_tensor_get(x, index);
        switch (kind) {
        case R_SUM: case R_MEAN: out[o] += v; break;
        case R_MAX: out[o] = fmax(out[o], v); break;
        case R_MIN: out[o] = fmin(out[o], v); break;
        case R_PROD: out[o] *= v; break;
        }
    }
    if (kind == R_MEAN)
        for (int64_t o = 0; o < nout; o++)
            out[o] /= (double)count;
    return nout;
}

typedef tw_tensor *(*reduce_fn)(tw_tensor *, int, const int *, bool);

/* Every subset of axes of x, with and without keepdims, with positive and
 * negative axis numbers, against the naive loops. */
static void check_all_axis_sets(tw_tensor *x, reduce_fn fn, int kind, const char *name, double tol)
{
    int nd = tw_tensor_ndim(x);
    double want[256];
    for (unsigned mask = 0; mask < (1u << nd); mask++) {
        for (int variant = 0; variant < 4; variant++) {
            bool keepdims = variant & 1, negative = variant & 2;
            int axes[TW_MAX_DIMS], naxes = 0;
            for (int d = 0; d < nd; d++)
                if (mask & (1u << d))
                    axes[naxes++] = negative ? d - nd : d;
            /* naxes == 0 means every axis; mask 0 is checked through it */
            unsigned effective = naxes ? mask : (1u << nd) - 1;
            int64_t nout = naive_reduce(x, effective, kind, want);
            tw_tensor *r = fn(x, naxes, axes, keepdims);
            int64_t shape[TW_MAX_DIMS];
            int rnd = 0;
            for (int d = 0; d < nd; d++) {
                if (!(effective & (1u << d)))
                    shape[rnd++] = tw_tensor_shape(x)[d];
                else if (keepdims)
                    shape[rnd++] = 1;
            }
            char what[96];
            snprintf(what, sizeof what, "%s mask %u keepdims %d negative %d", name, mask, keepdims, negative);
            if (!check_shape_at(what, __LINE__, r, rnd, shape))
                return;
            if (!check_values_at(what, __LINE__, r, tol, want, nout))
                return;
        }
    }
}

static void test_reduce_all_axis_sets(void)
{
    tw_scope_begin();
    tw_tensor *x = arange64(24, TW_SHAPE(2, 3, 4));
    /* hand-checked anchors */
    check_values(tw_sum(x, TW_AXES(0), false), 0, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34);
    check_values(tw_sum(x, TW_AXES(1), false), 0, 12, 15, 18, 21, 48, 51, 54, 57);
    check_values(tw_sum(x, TW_AXES(-1), false), 0, 6, 22, 38, 54, 70, 86);
    check_values(tw_sum(x, TW_AXES(0, 2), false), 0, 60, 92, 124);
    check_shape(tw_sum(x, TW_AXES(0, 2), true), TW_SHAPE(1, 3, 1));
    check_values(tw_sum_all(x), 0, 276);
    check_shape(tw_sum_all(x), SCALAR_SHAPE);
    check_values(tw_mean(x, TW_AXES(1), false), 1e-15, 4, 5, 6, 7, 16, 17, 18, 19);
    check_values(tw_mean_all(x), 0, 11.5);
    /* exhaustive against loops; a scrambled order so max/min are not at the ends */
    tw_tensor *scrambled = tw_add_scalar(tw_mul_scalar(tw_sin(tw_mul_scalar(x, 2.3)), 10), 0.5);
    check_all_axis_sets(x, tw_sum, R_SUM, "sum", 1e-14);
    check_all_axis_sets(scrambled, tw_sum, R_SUM, "sum", 1e-13);
    check_all_axis_sets(scrambled, tw_mean, R_MEAN, "mean", 1e-13);
    check_all_axis_sets(scrambled, tw_max, R_MAX, "max", 0);
    check_all_axis_sets(scrambled, tw_min, R_MIN, "min", 0);
    tw_tensor *near_one = tw_add_scalar(tw_mul_scalar(tw_sin(x), 0.5), 1);
    check_all_axis_sets(near_one, tw_prod, R_PROD, "prod", 1e-13);
    /* strided inputs: a permuted view and a reversed slice */
    tw_tensor *perm = tw_permute(scrambled, TW_AXES(2, 0, 1));
    check_all_axis_sets(perm, tw_sum, R_SUM, "sum of permuted", 1e-13);
    check_all_axis_sets(perm, tw_max, R_MAX, "max of permuted", 0);
    tw_tensor *rev = tw_slice(scrambled, 2, TW_END, TW_END, -2);
    check_all_axis_sets(rev, tw_sum, R_SUM, "sum of reversed", 1e-13);
    check_all_axis_sets(rev, tw_min, R_MIN, "min of reversed", 0);
    /* float32 */
    tw_tensor *s32 = tw_cast(scrambled, TW_FLOAT32);
    check_all_axis_sets(s32, tw_sum, R_SUM, "sum float32", 1e-6);
    check_all_axis_sets(s32, tw_max, R_MAX, "max float32", 0);
    tw_scope_end();
}

static void test_reduce_paths(void)
{
    tw_scope_begin();
    /* a batch sum over the leading axis of a wide matrix (the row-accumulating path) */
    tw_tensor *wide = tw_sin(arange64(60, TW_SHAPE(3, 20)));
    check_all_axis_sets(wide, tw_sum, R_SUM, "wide sum", 1e-14);
    /* the same on a column slice of a wider matrix (rows 40 apart) */
    tw_tensor *wider = tw_sin(arange64(120, TW_SHAPE(3, 40)));
    tw_tensor *cols = tw_slice(wider, 1, 0, 20, 1);
    check_all_axis_sets(cols, tw_sum, R_SUM, "sum of column slice", 1e-14);
    check_all_axis_sets(tw_cast(cols, TW_FLOAT32), tw_sum, R_SUM, "float32 sum of column slice", 1e-6);
    /* and on a broadcast view (stride 0) */
    tw_tensor *bc = tw_broadcast_to(F64(TW_SHAPE(1, 17), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
                                    TW_SHAPE(4, 17));
    check_all_axis_sets(bc, tw_sum, R_SUM, "sum of broadcast", 1e-14);
    /* float32 sums accumulate in double: 100000 x 0.1f */
    tw_tensor *many = tw_full(0.1, TW_FLOAT32, TW_SHAPE(100000));
    double total = tw_tensor_item(tw_sum_all(many));
    g_assert_cmpfloat(fabs(total - 100000 * (double)0.1f), <, 0.01);
    /* ... and so does the batch sum over the leading axis */
    tw_tensor *rows32 = tw_sum(tw_full(0.1, TW_FLOAT32, TW_SHAPE(20000, 16)), TW_AXES(0), false);
    check_shape(rows32, TW_SHAPE(16));
    for (int64_t j = 0; j < 16; j++)
        g_assert_cmpfloat(fabs(tw_tensor_get(rows32, &j) - 20000 * (double)0.1f), <, 1e-3);
    /* integers stay integers */
    tw_tensor *i = I32(TW_SHAPE(2, 2), 1, 2, 3, 4);
    check_dtype(tw_sum(i, TW_AXES(0), false), TW_INT32);
    check_values(tw_sum(i, TW_AXES(0), false), 0, 4, 6);
    check_values(tw_prod(i, TW_AXES(1), false), 0, 2, 12);
    check_values(tw_max(i, TW_AXES(1), false), 0, 2, 4);
    check_values(tw_min(i, 0, NULL, false), 0, 1);
    check_failed(tw_mean(i, 0, NULL, false), "mean", "int32");
    /* a 0-d tensor reduces to itself */
    check_values(tw_sum_all(tw_scalar_of(4, TW_FLOAT64)), 0, 4);
    check_values(tw_max(tw_scalar_of(-4, TW_FLOAT32), 0, NULL, false), 0, -4);
    /* empty axes */
    tw_tensor *e = tw_zeros(TW_FLOAT64, TW_SHAPE(0, 3));
    check_shape(tw_sum(e, TW_AXES(0), false), TW_SHAPE(3));
    check_values(tw_sum(e, TW_AXES(0), false), 0, 0, 0, 0);
    check_values(tw_prod(e, TW_AXES(0), false), 0, 1, 1, 1);
    check_shape(tw_sum(e, TW_AXES(1), false), TW_SHAPE(0));
    check_failed(tw_max(e, TW_AXES(0), false), "max", "(0, 3)");
    check_failed(tw_argmax(e, 0), "argmax", "(0, 3)");
    /* repeated axes */
    check_failed(tw_sum(i, TW_AXES(0, -2), false), "sum", "repeated");
    tw_scope_end();
}

static void test_argmax_argmin(void)
{
    tw_scope_begin();
    tw_tensor *x = F64(TW_SHAPE(2, 3), 3, 9, 1, 7, -2, 7);
    tw_tensor *r = tw_argmax(x, 1);
    check_dtype(r, TW_INT64);
    check_shape(r, TW_SHAPE(2));
    check_values(r, 0, 1, 0); /* ties pick the first */
    check_values(tw_argmax(x, 0), 0, 1, 0, 1);
    check_values(tw_argmin(x, -1), 0, 2, 1);
    check_values(tw_argmin(x, 0), 0, 0, 1, 0);
    check_values(tw_argmax(F64(TW_SHAPE(4), 1, 3, 3, 0), 0), 0, 1);
    check_values(tw_argmin(F64(TW_SHAPE(4), 1, 3, 3, 0), 0), 0, 3);
    /* a strided view and integers */
    check_values(tw_argmax(tw_transpose(x), 0), 0, 1, 0);
    check_values(tw_argmin(I32(TW_SHAPE(3), 5, -1, 4), 0), 0, 1);
    /* 3-d, middle axis */
    tw_tensor *y = tw_sin(arange64(24, TW_SHAPE(2, 3, 4)));
    tw_tensor *am = tw_argmax(y, 1);
    check_shape(am, TW_SHAPE(2, 4));
    for (int64_t i = 0; i < 2; i++)
        for (int64_t k = 0; k < 4; k++) {
            int64_t best = 0;
            for (int64_t j = 1; j < 3; j++)
                if (tw_tensor_get(y, (int64_t[]){i, j, k}) > tw_tensor_get(y, (int64_t[]){i, best, k}))
                    best = j;
            g_assert_cmpfloat(tw_tensor_get(am, (int64_t[]){i, k}), ==, (double)best);
        }
    check_failed(tw_argmax(x, 2), "argmax", "axis 2", "rank 2");
    tw_scope_end();
}

static void test_variance_logsumexp(void)
{
    tw_scope_begin();
    check_values(tw_variance(F64(TW_SHAPE(4), 1, 2, 3, 4), 0, NULL, false), 1e-15, 1.25);
    tw_tensor *m = F64(TW_SHAPE(2, 2), 1, 2, 3, 5);
    check_values(tw_variance(m, TW_AXES(0), false), 1e-15, 1, 2.25);
    check_values(tw_variance(m, TW_AXES(1), false), 1e-15, 0.25, 1);
    check_shape(tw_variance(m, TW_AXES(1), true), TW_SHAPE(2, 1));
    check_values(tw_variance(tw_cast(m, TW_FLOAT32), TW_AXES(-1), false), 1e-7, 0.25, 1);

    tw_tensor *x = F64(TW_SHAPE(4, 2), 0, 0, 1000, 1000, -INFINITY, -INFINITY, 1, 2);
    tw_tensor *l = tw_logsumexp(x, TW_AXES(1), false);
    check_shape(l, TW_SHAPE(4));
    check_values(l, 1e-15, M_LN2, 1000 + M_LN2, -INFINITY, 2.313261687518223);
    check_shape(tw_logsumexp(x, TW_AXES(1), true), TW_SHAPE(4, 1));
    check_values(tw_logsumexp(F64(TW_SHAPE(2, 2), 1000, 0, 999, 0), TW_AXES(0), false), 1e-15,
                 1000.3132616875182, M_LN2);
    check_values(tw_logsumexp(F64(TW_SHAPE(2, 2), 1000, 1000, 1000, 1000), 0, NULL, false), 1e-15,
                 1000 + 2 * M_LN2);
    check_shape(tw_logsumexp(F64(TW_SHAPE(2, 2), 1, 2, 3, 4), 0, NULL, false), SCALAR_SHAPE);
    tw_tensor *l32 = tw_logsumexp(F32(TW_SHAPE(3), 100, 100, -INFINITY), TW_AXES(0), false);
    check_dtype(l32, TW_FLOAT32);
    check_values(l32, 1e-7, 100 + M_LN2);
    check_failed(tw_logsumexp(I32(TW_SHAPE(2), 1, 2), 0, NULL, false), "logsumexp", "int32");
    tw_scope_end();
}

/* An empty group's logsumexp is log(0) = -inf, as in TensorFlow and PyTorch
 * (it failed naming max); a kept empty axis gives an empty result. */
static void test_logsumexp_empty(void)
{
    tw_scope_begin();
    tw_tensor *e = tw_zeros(TW_FLOAT32, TW_SHAPE(3, 0));
    tw_tensor *rows = tw_logsumexp(e, TW_AXES(1), false);
    check_shape(rows, TW_SHAPE(3));
    check_dtype(rows, TW_FLOAT32);
    check_values(rows, 0, -INFINITY, -INFINITY, -INFINITY);
    check_shape(tw_logsumexp(e, TW_AXES(-1), true), TW_SHAPE(3, 1));
    check_values(tw_logsumexp(e, 0, NULL, false), 0, -INFINITY);
    check_shape(tw_logsumexp(e, TW_AXES(0), false), TW_SHAPE(0));
    /* the gradient of an empty group is empty */
    tw_tensor *x = tw_zeros(TW_FLOAT64, TW_SHAPE(2, 0)), *g = NULL;
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_sum_all(tw_logsumexp(x, TW_AXES(1), false));
    tw_tape_end(tape);
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, &x, &g), ==, 0);
    tw_tape_free(tape);
    check_shape(g, TW_SHAPE(2, 0));
    tw_scope_end();
}

/* ---- matmul ------------------------------------------------------------------------------ */

/* c against a loop over op(a) op(b), leading axes broadcast. */
static bool check_matmul(const char *what, tw_tensor *a, tw_tensor *b, bool ta, bool tb, tw_tensor *c, double tol)
{
    if (!c) {
        g_test_fail_printf("%s: matmul failed: %s", what, tw_last_error());
        return false;
    }
    int na = tw_tensor_ndim(a), nb = tw_tensor_ndim(b), nc = tw_tensor_ndim(c);
    int64_t m = tw_tensor_shape(a)[na - (ta ? 1 : 2)], k = tw_tensor_shape(a)[na - (ta ? 2 : 1)];
    int64_t n = tw_tensor_shape(b)[nb - (tb ? 2 : 1)];
    if (tw_tensor_shape(c)[nc - 2] != m || tw_tensor_shape(c)[nc - 1] != n) {
        g_test_fail_printf("%s: result is %lldx%lld, expected %lldx%lld", what, (long long)tw_tensor_shape(c)[nc - 2],
                           (long long)tw_tensor_shape(c)[nc - 1], (long long)m, (long long)n);
        return false;
    }
    for (int64_t flat = 0; flat < tw_tensor_numel(c); flat++) {
        int64_t ci[TW_MAX_DIMS], ai[TW_MAX_DIMS], bi[TW_MAX_DIMS];
        unravel(c, flat, ci);
        for (int d = 0; d < na - 2; d++)
            ai[d] = tw_tensor_shape(a)[d] == 1 ? 0 : ci[d + (nc - na)];
        for (int d = 0; d < nb - 2; d++)
            bi[d] = tw_tensor_shape(b)[d] == 1 ? 0 : ci[d + (nc - nb)];
        int64_t i = ci[nc - 2], j = ci[nc - 1];
        double want = 0;
        for (int64_t p = 0; p < k; p++) {
            ai[na - 2] = ta ? p : i;
            ai[na - 1] = ta ? i : p;
            bi[nb - 2] = tb ? j : p;
            bi[nb - 1] = tb ? p : j;
            want += tw_tensor_get(a, ai) * tw_tensor_get(b, bi);
        }
        if (!close_to(tw_tensor_get(c, ci), want, tol)) {
            g_test_fail_printf("%s: element %lld is %.17g, expected %.17g", what, (long long)flat,
                               tw_tensor_get(c, ci), want);
            return false;
        }
    }
    return true;
}

static tw_tensor *wavy(int64_t n, double phase, int ndim, const int64_t *shape, tw_dtype dtype)
{
    return tw_cast(tw_sin(tw_add_scalar(tw_mul_scalar(arange64(n, ndim, shape), 1.7), phase)), dtype);
}

static void test_matmul_2d(void)
{
    tw_scope_begin();
    tw_tensor *a = F64(TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    tw_tensor *b = F64(TW_SHAPE(3, 2), 7, 8, 9, 10, 11, 12);
    tw_tensor *c = tw_matmul(a, b);
    check_shape(c, TW_SHAPE(2, 2));
    check_values(c, 0, 58, 64, 139, 154);
    tw_tensor *c32 = tw_matmul(tw_cast(a, TW_FLOAT32), tw_cast(b, TW_FLOAT32));
    check_dtype(c32, TW_FLOAT32);
    check_values(c32, 0, 58, 64, 139, 154);
    /* transposed flags, by hand: a^T a and a a^T */
    check_values(tw_matmul_ex(a, a, true, false), 0, 17, 22, 27, 22, 29, 36, 27, 36, 45);
    check_values(tw_matmul_ex(a, a, false, true), 0, 14, 32, 32, 77);
    /* all four flag combinations against loops, both float types */
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT32 : TW_FLOAT64;
        double tol = dt ? 1e-5 : 1e-13;
        for (int f = 0; f < 4; f++) {
            bool ta = f & 1, tb = f & 2;
            tw_tensor *x = ta ? wavy(12, 0.1, TW_SHAPE(4, 3), dtype) : wavy(12, 0.1, TW_SHAPE(3, 4), dtype);
            tw_tensor *y = tb ? wavy(20, 0.7, TW_SHAPE(5, 4), dtype) : wavy(20, 0.7, TW_SHAPE(4, 5), dtype);
            char what[64];
            snprintf(what, sizeof what, "%s ta=%d tb=%d", tw_dtype_name(dtype), ta, tb);
            check_matmul(what, x, y, ta, tb, tw_matmul_ex(x, y, ta, tb), tol);
        }
    }
    /* k = 0 gives zeros; m = 0 gives an empty result */
    tw_tensor *z = tw_matmul(tw_zeros(TW_FLOAT64, TW_SHAPE(2, 0)), tw_zeros(TW_FLOAT64, TW_SHAPE(0, 3)));
    check_shape(z, TW_SHAPE(2, 3));
    check_values(z, 0, 0, 0, 0, 0, 0, 0);
    check_shape(tw_matmul(tw_zeros(TW_FLOAT64, TW_SHAPE(0, 3)), b), TW_SHAPE(0, 2));
    /* vectors shaped as matrices: (1,3) x (3,1) */
    check_values(tw_matmul(tw_reshape(b, TW_SHAPE(1, 6)), tw_reshape(b, TW_SHAPE(6, 1))), 0, 559);
    tw_scope_end();
}

static void test_matmul_batched(void)
{
    tw_scope_begin();
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT32 : TW_FLOAT64;
        double tol = dt ? 1e-5 : 1e-13;
        tw_tensor *a = wavy(24, 0.3, TW_SHAPE(2, 1, 3, 4), dtype);
        tw_tensor *b = wavy(40, 1.1, TW_SHAPE(5, 4, 2), dtype);
        tw_tensor *c = tw_matmul(a, b);
        check_shape(c, TW_SHAPE(2, 5, 3, 2));
        check_matmul("(2,1,3,4) x (5,4,2)", a, b, false, false, c, tol);
        /* a 2-d operand against a batch, both ways */
        tw_tensor *w = wavy(8, 2.0, TW_SHAPE(4, 2), dtype);
        check_matmul("(2,1,3,4) x (4,2)", a, w, false, false, tw_matmul(a, w), tol);
        tw_tensor *v = wavy(6, 0.5, TW_SHAPE(2, 3), dtype);
        tw_tensor *bp = tw_permute(wavy(30, 1.9, TW_SHAPE(5, 2, 3), dtype), TW_AXES(0, 2, 1)); /* (5, 3, 2) view */
        check_matmul("(2,3) x (5,3,2)", v, bp, false, false, tw_matmul(v, bp), tol);
        /* batched with transpose flags */
        tw_tensor *at = wavy(24, 0.3, TW_SHAPE(2, 1, 4, 3), dtype);
        tw_tensor *bt = wavy(40, 1.1, TW_SHAPE(5, 2, 4), dtype);
        check_matmul("batched ta tb", at, bt, true, true, tw_matmul_ex(at, bt, true, true), tol);
        check_matmul("batched ta", at, b, true, false, tw_matmul_ex(at, b, true, false), tol);
    }
    check_failed(tw_matmul(tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3, 4)), tw_zeros(TW_FLOAT32, TW_SHAPE(3, 4, 5))),
                 "matmul", "(2, 3, 4)", "(3, 4, 5)");
    tw_scope_end();
}

static void test_matmul_strided_operands(void)
{
    tw_scope_begin();
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT32 : TW_FLOAT64;
        double tol = dt ? 1e-5 : 1e-13;
        tw_tensor *a = wavy(12, 0.2, TW_SHAPE(3, 4), dtype);
        tw_tensor *bt = wavy(8, 0.9, TW_SHAPE(2, 4), dtype);
        /* a transposed view as the right operand, and as the left */
        tw_tensor *b = tw_transpose(bt); /* (4, 2), column-major */
        check_matmul("a x transpose(b)", a, b, false, false, tw_matmul(a, b), tol);
        tw_tensor *at = tw_transpose(a); /* (4, 3) */
        check_matmul("transpose(a)^T x b", at, b, true, false, tw_matmul_ex(at, b, true, false), tol);
        check_matmul("transpose(b) x transpose(a)", tw_transpose(b), at, false, false,
                     tw_matmul(tw_transpose(b), at), tol);
        /* transposed views with transpose flags */
        tw_tensor *cv = tw_transpose(wavy(8, 1.3, TW_SHAPE(4, 2), dtype)); /* (2, 4) view */
        check_matmul("transpose(a)^T x transpose(c)^T", at, cv, true, true, tw_matmul_ex(at, cv, true, true), tol);
        check_matmul("a x transpose(c)^T", a, cv, false, true, tw_matmul_ex(a, cv, false, true), tol);
        /* slices: a step along columns, a reversed row order, a column block of a wider matrix */
        tw_tensor *wide = wavy(40, 0.4, TW_SHAPE(5, 8), dtype);
        tw_tensor *stepped = tw_slice(wide, 1, 0, TW_END, 2); /* (5, 4), column stride 2 */
        check_matmul("stepped columns", tw_slice(wide, 1, 1, 6, 1), stepped, false, false,
                     tw_matmul(tw_slice(wide, 1, 1, 6, 1), stepped), tol);
        tw_tensor *rev = tw_slice(wide, 0, TW_END, TW_END, -1);
        check_matmul("reversed rows", rev, tw_transpose(wide), false, false, tw_matmul(rev, tw_transpose(wide)), tol);
        tw_tensor *block = tw_slice(wide, 1, 2, 6, 1); /* (5, 4), row stride 8 */
        check_matmul("column block", block, b, false, false, tw_matmul(block, b), tol);
        /* a broadcast view (stride 0) */
        tw_tensor *rows = tw_broadcast_to(wavy(4, 0.6, TW_SHAPE(1, 4), dtype), TW_SHAPE(3, 4));
        check_matmul("broadcast rows", rows, b, false, false, tw_matmul(rows, b), tol);
        /* permuted batch: (3, 2, 4) viewed from (2, 3, 4) */
        tw_tensor *batch = tw_permute(wavy(24, 0.8, TW_SHAPE(2, 3, 4), dtype), TW_AXES(1, 0, 2));
        check_matmul("permuted batch", batch, b, false, false, tw_matmul(batch, b), tol);
        tw_tensor *batch_t = tw_permute(wavy(24, 0.8, TW_SHAPE(2, 3, 4), dtype), TW_AXES(1, 2, 0)); /* (3, 4, 2) */
        check_matmul("permuted batch x transposed", a, batch_t, false, false, tw_matmul(a, batch_t), tol);
    }
    tw_scope_end();
}

/* ---- views ---------------------------------------------------------------------------------- */

static void test_reshape_permute(void)
{
    tw_scope_begin();
    tw_tensor *x = arange64(6, TW_SHAPE(2, 3));
    tw_tensor *r = tw_reshape(x, TW_SHAPE(3, -1));
    check_shape(r, TW_SHAPE(3, 2));
    check_values(r, 0, 0, 1, 2, 3, 4, 5);
    g_assert_true(tw_tensor_shares_storage(r, x));
    check_shape(tw_reshape(x, TW_SHAPE(-1)), TW_SHAPE(6));
    check_shape(tw_reshape(x, TW_SHAPE(1, -1, 1)), TW_SHAPE(1, 6, 1));
    check_failed(tw_reshape(tw_reshape(x, TW_SHAPE(6, 1)), SCALAR_SHAPE), "reshape", "(6, 1)", "()");
    tw_tensor *one = tw_reshape(F64(TW_SHAPE(1, 1), 7), SCALAR_SHAPE);
    check_shape(one, SCALAR_SHAPE);
    check_values(one, 0, 7);
    check_failed(tw_reshape(x, TW_SHAPE(-1, -1)), "reshape", "-1");
    check_failed(tw_reshape(x, TW_SHAPE(4, -1)), "reshape", "(2, 3)");

    tw_tensor *y = arange64(24, TW_SHAPE(2, 3, 4));
    tw_tensor *p = tw_permute(y, TW_AXES(2, 0, 1));
    check_shape(p, TW_SHAPE(4, 2, 3));
    g_assert_true(tw_tensor_shares_storage(p, y));
    g_assert_false(tw_tensor_is_contiguous(p));
    for (int64_t i = 0; i < 2; i++)
        for (int64_t j = 0; j < 3; j++)
            for (int64_t k = 0; k < 4; k++)
                g_assert_cmpfloat(tw_tensor_get(p, (int64_t[]){k, i, j}), ==, (double)(12 * i + 4 * j + k));
    /* negative axes in a permutation */
    check_shape(tw_permute(y, TW_AXES(-1, 0, 1)), TW_SHAPE(4, 2, 3));
    check_failed(tw_permute(y, TW_AXES(0, 0, 1)), "permute");
    check_failed(tw_permute(y, TW_AXES(0, 1)), "permute", "rank 3");

    tw_tensor *t = tw_transpose(x);
    check_shape(t, TW_SHAPE(3, 2));
    check_values(t, 0, 0, 3, 1, 4, 2, 5);
    g_assert_true(tw_tensor_shares_storage(t, x));
    check_shape(tw_transpose(y), TW_SHAPE(4, 3, 2));
    g_assert_cmpfloat(tw_tensor_get(tw_transpose(y), (int64_t[]){3, 1, 1}), ==, 12 + 4 + 3);
    /* reshaping a strided view copies, in logical order */
    tw_tensor *flat = tw_reshape(t, TW_SHAPE(6));
    check_values(flat, 0, 0, 3, 1, 4, 2, 5);
    g_assert_false(tw_tensor_shares_storage(flat, x));
    /* a contiguous row block reshapes in place */
    tw_tensor *rows = tw_slice(arange64(12, TW_SHAPE(4, 3)), 0, 1, 3, 1);
    tw_tensor *rr = tw_reshape(rows, TW_SHAPE(3, 2));
    check_values(rr, 0, 3, 4, 5, 6, 7, 8);
    g_assert_true(tw_tensor_shares_storage(rr, rows));
    /* only size-1 axes change on a strided view: still a view */
    tw_tensor *tv = tw_reshape(t, TW_SHAPE(3, 1, 2));
    g_assert_true(tw_tensor_shares_storage(tv, x));
    check_values(tv, 0, 0, 3, 1, 4, 2, 5);
    tw_scope_end();
}

static void test_slices(void)
{
    tw_scope_begin();
    tw_tensor *v = arange64(10, TW_SHAPE(10));
    check_values(tw_slice(v, 0, 1, 8, 2), 0, 1, 3, 5, 7);
    check_values(tw_slice(v, 0, TW_END, TW_END, -1), 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    check_values(tw_slice(v, 0, -2, 2, -3), 0, 8, 5);
    check_values(tw_slice(v, 0, 8, TW_END, -3), 0, 8, 5, 2);
    check_values(tw_slice(v, 0, -3, TW_END, 1), 0, 7, 8, 9);
    check_values(tw_slice(v, 0, -100, 100, 4), 0, 0, 4, 8);
    check_values(tw_slice(v, 0, 100, -100, -4), 0, 9, 5, 1);
    check_shape(tw_slice(v, 0, 5, 2, 1), TW_SHAPE(0));
    check_shape(tw_slice(v, 0, 2, 5, -1), TW_SHAPE(0));
    g_assert_true(tw_tensor_shares_storage(tw_slice(v, 0, 1, 8, 2), v));
    /* a slice of a slice */
    check_values(tw_slice(tw_slice(v, 0, TW_END, TW_END, -1), 0, 1, TW_END, 3), 0, 8, 5, 2);
    check_failed(tw_slice(v, 0, 0, 5, 0), "step", "0");
    check_failed(tw_slice(v, 1, 0, 5, 1), "slice", "axis 1", "rank 1");

    tw_tensor *m = arange64(12, TW_SHAPE(3, 4));
    tw_tensor *s = tw_strided_slice(m, (int64_t[]){0, -1}, (int64_t[]){TW_END, TW_END}, (int64_t[]){2, -1});
    check_shape(s, TW_SHAPE(2, 4));
    check_values(s, 0, 3, 2, 1, 0, 11, 10, 9, 8);
    g_assert_true(tw_tensor_shares_storage(s, m));
    tw_tensor *s2 = tw_strided_slice(m, (int64_t[]){1, 1}, (int64_t[]){3, 4}, (int64_t[]){1, 2});
    check_values(s2, 0, 5, 7, 9, 11);
    check_values(tw_slice(m, -1, 1, 3, 1), 0, 1, 2, 5, 6, 9, 10);
    tw_scope_end();
}

static void test_broadcast_expand_squeeze(void)
{
    tw_scope_begin();
    tw_tensor *c = F64(TW_SHAPE(3, 1), 1, 2, 3);
    tw_tensor *b = tw_broadcast_to(c, TW_SHAPE(2, 3, 4));
    check_shape(b, TW_SHAPE(2, 3, 4));
    g_assert_true(tw_tensor_shares_storage(b, c));
    g_assert_cmpint(tw_tensor_strides(b)[0], ==, 0);
    g_assert_cmpint(tw_tensor_strides(b)[2], ==, 0);
    for (int64_t i = 0; i < 24; i++)
        g_assert_cmpfloat(at(b, i), ==, (double)((i / 4) % 3 + 1));
    check_failed(tw_broadcast_to(c, TW_SHAPE(2, 2)), "broadcast_to", "(3, 1)", "(2, 2)");
    check_failed(tw_broadcast_to(c, TW_SHAPE(3)), "broadcast_to", "(3, 1)", "(3,)");

    tw_tensor *x = arange64(6, TW_SHAPE(2, 3));
    check_shape(tw_expand_dims(x, 0), TW_SHAPE(1, 2, 3));
    check_shape(tw_expand_dims(x, 1), TW_SHAPE(2, 1, 3));
    check_shape(tw_expand_dims(x, -1), TW_SHAPE(2, 3, 1));
    check_shape(tw_expand_dims(tw_scalar_of(1, TW_FLOAT32), 0), TW_SHAPE(1));
    g_assert_true(tw_tensor_shares_storage(tw_expand_dims(x, 2), x));
    check_values(tw_expand_dims(x, 1), 0, 0, 1, 2, 3, 4, 5);
    check_failed(tw_expand_dims(x, 3), "expand_dims", "axis 3");

    tw_tensor *u = arange64(3, TW_SHAPE(1, 3, 1));
    check_shape(tw_squeeze(u, 0, NULL), TW_SHAPE(3));
    check_shape(tw_squeeze(u, TW_AXES(0)), TW_SHAPE(3, 1));
    check_shape(tw_squeeze(u, TW_AXES(-1)), TW_SHAPE(1, 3));
    check_shape(tw_squeeze(u, TW_AXES(0, 2)), TW_SHAPE(3));
    check_shape(tw_squeeze(F64(TW_SHAPE(1, 1), 5), 0, NULL), SCALAR_SHAPE);
    g_assert_true(tw_tensor_shares_storage(tw_squeeze(u, 0, NULL), u));
    /* squeezing a transposed view keeps it a view */
    tw_tensor *tq = tw_squeeze(tw_transpose(tw_expand_dims(x, 0)), 0, NULL);
    check_shape(tq, TW_SHAPE(3, 2));
    check_values(tq, 0, 0, 3, 1, 4, 2, 5);
    g_assert_true(tw_tensor_shares_storage(tq, x));
    check_failed(tw_squeeze(u, TW_AXES(1)), "squeeze", "size 3");
    tw_scope_end();
}

static void test_views_alias_variables(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(arange64(6, TW_SHAPE(2, 3)), "w", true);
    tw_tensor *t = tw_transpose(v);
    tw_tensor *s = tw_slice(v, 1, TW_END, TW_END, -2); /* columns 2, 0 */
    tw_tensor *r = tw_reshape(v, TW_SHAPE(6));
    tw_tensor *b = tw_broadcast_to(tw_slice(v, 0, 1, 2, 1), TW_SHAPE(3, 3));
    tw_tensor *p = tw_expand_dims(v, 1);
    for (tw_tensor **q = (tw_tensor *[]){t, s, r, b, p, NULL}; *q; q++)
        g_assert_true(tw_tensor_shares_storage(*q, v));
    g_assert_cmpint(tw_assign(v, F64(TW_SHAPE(2, 3), 10, 11, 12, 13, 14, 15)), ==, 0);
    check_values(t, 0, 10, 13, 11, 14, 12, 15);
    check_values(s, 0, 12, 10, 15, 13);
    check_values(r, 0, 10, 11, 12, 13, 14, 15);
    check_values(b, 0, 13, 14, 15, 13, 14, 15, 13, 14, 15);
    check_values(p, 0, 10, 11, 12, 13, 14, 15);
    g_assert_cmpint(tw_assign_add(v, tw_scalar(1)), ==, 0);
    check_values(s, 0, 13, 11, 16, 14);
    /* results of ops do not alias */
    tw_tensor *sum = tw_add(v, tw_scalar(0));
    g_assert_false(tw_tensor_shares_storage(sum, v));
    /* contiguous copies only when needed */
    tw_tensor *same = tw_contiguous(v);
    g_assert_true(same == v);
    tw_tensor *packed = tw_contiguous(t);
    g_assert_false(tw_tensor_shares_storage(packed, v));
    g_assert_true(tw_tensor_is_contiguous(packed));
    check_values(packed, 0, 11, 14, 12, 15, 13, 16);
    tw_tensor *rowslice = tw_slice(v, 0, 1, 2, 1);
    g_assert_true(tw_tensor_is_contiguous(rowslice));
    g_assert_true(tw_contiguous(rowslice) == rowslice);
    tw_tensor *copy = tw_copy(v);
    g_assert_false(tw_tensor_shares_storage(copy, v));
    tw_assign(v, tw_scalar(0));
    check_values(copy, 0, 11, 12, 13, 14, 15, 16);
    check_values(packed, 0, 11, 14, 12, 15, 13, 16);
    check_values(t, 0, 0, 0, 0, 0, 0, 0);
    tw_scope_end();
}

/* ---- casts ------------------------------------------------------------------------------------ */

static void test_cast_all_dtypes(void)
{
    tw_scope_begin();
    const double values[4] = {0, 1, 2, 100};
    for (int src = 0; src < TW_DTYPE_COUNT; src++) {
        tw_tensor *x = tw_zeros((tw_dtype)src, TW_SHAPE(4));
        double src_values[4];
        for (int i = 0; i < 4; i++)
            src_values[i] = src == TW_BOOL ? (values[i] != 0) : values[i];
        /* written element by element, independently of the cast kernel */
        for (int i = 0; i < 4; i++) {
            char *p = (char *)tw_tensor_data(x) + (size_t)i * tw_dtype_size((tw_dtype)src);
            switch ((tw_dtype)src) {
            case TW_FLOAT32: *(float *)p = (float)src_values[i]; break;
            case TW_FLOAT64: *(double *)p = src_values[i]; break;
            case TW_INT32: *(int32_t *)p = (int32_t)src_values[i]; break;
            case TW_INT64: *(int64_t *)p = (int64_t)src_values[i]; break;
            default: *(uint8_t *)p = (uint8_t)src_values[i]; break;
            }
        }
        for (int dst = 0; dst < TW_DTYPE_COUNT; dst++) {
            tw_tensor *y = tw_cast(x, (tw_dtype)dst);
            char what[64];
            snprintf(what, sizeof what, "cast %s -> %s", tw_dtype_name((tw_dtype)src), tw_dtype_name((tw_dtype)dst));
            if (!check_dtype_at(what, __LINE__, y, (tw_dtype)dst))
                continue;
            double want[4];
            for (int i = 0; i < 4; i++)
                want[i] = dst == TW_BOOL ? (src_values[i] != 0) : src_values[i];
            check_values_at(what, __LINE__, y, 0, want, 4);
            /* and through a strided (reversed) view */
            tw_tensor *yr = tw_cast(tw_slice(x, 0, TW_END, TW_END, -1), (tw_dtype)dst);
            double want_rev[4] = {want[3], want[2], want[1], want[0]};
            check_values_at(what, __LINE__, yr, 0, want_rev, 4);
        }
    }
    /* float to integer truncates toward zero, as TensorFlow does */
    tw_tensor *f = F64(TW_SHAPE(4), 2.7, -2.7, 0.5, -0.5);
    check_values(tw_cast(f, TW_INT32), 0, 2, -2, 0, 0);
    check_values(tw_cast(f, TW_INT64), 0, 2, -2, 0, 0);
    check_values(tw_cast(f, TW_BOOL), 0, 1, 1, 1, 1);
    /* out of range saturates (a plain C conversion would be undefined); NaN gives 0 */
    tw_tensor *huge = F64(TW_SHAPE(4), 1e10, -1e10, 1e300, NAN);
    check_values(tw_cast(huge, TW_INT32), 0, 2147483647.0, -2147483648.0, 2147483647.0, 0);
    tw_tensor *huge64 = tw_cast(huge, TW_INT64);
    g_assert_nonnull(huge64);
    g_assert_cmpint(((int64_t *)tw_tensor_data(huge64))[0], ==, INT64_C(10000000000));
    g_assert_cmpint(((int64_t *)tw_tensor_data(huge64))[2], ==, INT64_MAX);
    g_assert_cmpint(((int64_t *)tw_tensor_data(huge64))[3], ==, 0);
    check_values(tw_cast(F64(TW_SHAPE(2), -1, 257), TW_UINT8), 0, 255, 1);
    /* float64 -> float32 rounds to nearest */
    check_values(tw_cast(F64(TW_SHAPE(1), 0.1), TW_FLOAT32), 0, (double)0.1f);
    check_values(tw_cast(I64(TW_SHAPE(2), -3, (INT64_C(1) << 40)), TW_FLOAT64), 0, -3, 1099511627776.0);
    check_failed(tw_cast(f, (tw_dtype)42), "cast", "42");
    tw_scope_end();
}

/* ---- softmax and cross-entropy ------------------------------------------------------------------ */

static void test_softmax(void)
{
    tw_scope_begin();
    const double tol = 1e-14;
    tw_tensor *x = F64(TW_SHAPE(2, 3), 1, 2, 3, 1000, 1000, 1000);
    tw_tensor *s = tw_softmax(x, -1);
    check_shape(s, TW_SHAPE(2, 3));
    check_values(s, tol, 0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3, 1.0 / 3, 1.0 / 3);
    check_values(tw_softmax(x, 1), tol, 0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3,
                 1.0 / 3, 1.0 / 3);
    tw_tensor *m = F64(TW_SHAPE(2, 2), 1, 2, 3, 4);
    check_values(tw_softmax(m, 0), tol, 0.11920292202211755, 0.11920292202211755, 0.8807970779778823,
                 0.8807970779778823);
    tw_tensor *ls = tw_log_softmax(x, -1);
    check_values(ls, tol, -2.4076059644443806, -1.4076059644443806, -0.4076059644443804, -M_LN2 - log(1.5),
                 -M_LN2 - log(1.5), -M_LN2 - log(1.5));
    check_values(tw_log_softmax(F64(TW_SHAPE(2), 1000, 0), 0), tol, 0, -1000);
    check_values(tw_log_softmax(m, 0), tol, -2.1269280110429727, -2.1269280110429727, -0.12692801104297263,
                 -0.12692801104297263);
    /* float32 with huge logits: no overflow, rows sum to one */
    tw_tensor *s32 = tw_softmax(F32(TW_SHAPE(2, 2), 1000, 0, -1000, -1000), -1);
    check_dtype(s32, TW_FLOAT32);
    check_values(s32, 1e-7, 1, 0, 0.5, 0.5);
    /* a 3-d tensor along the middle axis */
    tw_tensor *y = tw_sin(arange64(24, TW_SHAPE(2, 3, 4)));
    tw_tensor *sy = tw_softmax(y, 1);
    check_values(tw_sum(sy, TW_AXES(1), false), 1e-14, 1, 1, 1, 1, 1, 1, 1, 1);
    double e0 = exp(at(y, 0)), e1 = exp(at(y, 4)), e2 = exp(at(y, 8));
    g_assert_cmpfloat(fabs(at(sy, 4) - e1 / (e0 + e1 + e2)), <, 1e-14);
    check_failed(tw_softmax(x, 2), "softmax", "axis 2", "rank 2");
    check_failed(tw_log_softmax(x, -3), "log_softmax", "axis -3", "rank 2");
    tw_scope_end();
}

static void test_cross_entropy(void)
{
    tw_scope_begin();
    const double tol = 1e-14;
    tw_tensor *logits = F64(TW_SHAPE(2, 3), 1, 2, 3, 1000, 0, -1000);
    tw_tensor *labels = F64(TW_SHAPE(2, 3), 0, 0, 1, 0.5, 0.5, 0);
    tw_tensor *loss = tw_softmax_cross_entropy(logits, labels);
    check_shape(loss, TW_SHAPE(2));
    check_values(loss, tol, 0.4076059644443804, 500);
    /* a row of soft labels: sum(labels * -log_softmax) */
    check_values(tw_softmax_cross_entropy(F64(TW_SHAPE(3), 1, 2, 3), F64(TW_SHAPE(3), 0.2, 0.3, 0.5)), tol,
                 0.2 * 2.4076059644443806 + 0.3 * 1.4076059644443806 + 0.5 * 0.4076059644443804);
    tw_tensor *l32 = tw_softmax_cross_entropy(tw_cast(logits, TW_FLOAT32), tw_cast(labels, TW_FLOAT32));
    check_dtype(l32, TW_FLOAT32);
    check_values(l32, 1e-7, 0.4076059644443804, 500);
    /* strided logits (a transposed view) */
    tw_tensor *lt = tw_transpose(F64(TW_SHAPE(3, 2), 1, 1000, 2, 0, 3, -1000));
    check_values(tw_softmax_cross_entropy(lt, labels), tol, 0.4076059644443804, 500);

    tw_tensor *sparse = tw_sparse_softmax_cross_entropy(logits, I64(TW_SHAPE(2), 2, 0));
    check_shape(sparse, TW_SHAPE(2));
    check_values(sparse, tol, 0.4076059644443804, 0);
    check_values(tw_sparse_softmax_cross_entropy(logits, I32(TW_SHAPE(2), 0, 1)), tol, 2.4076059644443806, 1000);
    check_values(tw_sparse_softmax_cross_entropy(tw_cast(logits, TW_FLOAT32), I32(TW_SHAPE(2), 0, 2)), 1e-7,
                 2.4076059644443806, 2000);
    /* leading axes: logits (2,1,3), labels (2,1) */
    tw_tensor *l3 = tw_sparse_softmax_cross_entropy(tw_reshape(logits, TW_SHAPE(2, 1, 3)), I64(TW_SHAPE(2, 1), 1, 1));
    check_shape(l3, TW_SHAPE(2, 1));
    check_values(l3, tol, 1.4076059644443806, 1000);

    check_failed(tw_sparse_softmax_cross_entropy(logits, I64(TW_SHAPE(2), 2, 3)), "sparse_softmax_cross_entropy",
                 "label 3", "(2, 3)");
    check_failed(tw_sparse_softmax_cross_entropy(logits, I32(TW_SHAPE(2), -1, 0)), "sparse_softmax_cross_entropy",
                 "label -1", "(2, 3)");
    check_failed(tw_sparse_softmax_cross_entropy(logits, F64(TW_SHAPE(2), 0, 1)), "sparse_softmax_cross_entropy",
                 "float64");
    check_failed(tw_sparse_softmax_cross_entropy(logits, I64(TW_SHAPE(3), 0, 1, 2)), "sparse_softmax_cross_entropy",
                 "(3,)", "(2, 3)");
    check_failed(tw_softmax_cross_entropy(logits, F64(TW_SHAPE(3), 0, 0, 1)), "softmax_cross_entropy", "(3,)",
                 "(2, 3)");
    tw_scope_end();
}

/* ---- moments and norm clipping ---------------------------------------------------------------------- */

static void test_moments(void)
{
    tw_scope_begin();
    tw_tensor *x = F64(TW_SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
    tw_tensor *mean = NULL, *var = NULL;
    g_assert_cmpint(tw_moments(x, TW_AXES(0), false, &mean, &var), ==, 0);
    check_shape(mean, TW_SHAPE(3));
    check_values(mean, 1e-15, 2.5, 3.5, 4.5);
    check_values(var, 1e-15, 2.25, 2.25, 2.25);
    g_assert_cmpint(tw_moments(x, TW_AXES(1), true, &mean, &var), ==, 0);
    check_shape(mean, TW_SHAPE(2, 1));
    check_shape(var, TW_SHAPE(2, 1));
    check_values(mean, 1e-15, 2, 5);
    check_values(var, 1e-15, 2.0 / 3, 2.0 / 3);
    g_assert_cmpint(tw_moments(x, 0, NULL, false, &mean, &var), ==, 0);
    check_shape(mean, SCALAR_SHAPE);
    check_values(mean, 1e-15, 3.5);
    check_values(var, 1e-15, 35.0 / 12);
    /* batch-norm style: NHWC over (0, 1, 2) */
    tw_tensor *img = arange64(16, TW_SHAPE(2, 2, 2, 2));
    g_assert_cmpint(tw_moments(img, TW_AXES(0, 1, 2), false, &mean, &var), ==, 0);
    check_values(mean, 1e-15, 7, 8);
    check_values(var, 1e-14, 21, 21);
    mean = var = (tw_tensor *)1;
    tw_error_clear();
    g_assert_cmpint(tw_moments(x, TW_AXES(2), false, &mean, &var), ==, -1);
    g_assert_null(mean);
    g_assert_null(var);
    g_assert_nonnull(strstr(tw_last_error(), "axis 2"));
    tw_scope_end();
}

static void test_clip_by_norm(void)
{
    tw_scope_begin();
    tw_tensor *t = F64(TW_SHAPE(2), 3, 4);
    check_values(tw_clip_by_norm(t, 2.5), 1e-15, 1.5, 2);
    check_values(tw_clip_by_norm(t, 10), 1e-15, 3, 4);
    check_values(tw_clip_by_norm(F32(TW_SHAPE(2, 2), 0, 3, 0, 4), 1), 1e-7, 0, 0.6, 0, 0.8);
    check_dtype(tw_clip_by_norm(F32(TW_SHAPE(2), 3, 4), 1), TW_FLOAT32);
    check_values(tw_clip_by_norm(tw_zeros(TW_FLOAT64, TW_SHAPE(3)), 1), 0, 0, 0, 0);
    check_failed(tw_clip_by_norm(t, 0), "clip_by_norm", "0");

    tw_tensor *outs[2] = {0}, *norm = NULL;
    g_assert_cmpint(tw_clip_by_global_norm(TW_TENSORS(F64(TW_SHAPE(1), 3), F64(TW_SHAPE(2, 1), 0, 4)), 1, outs, &norm),
                    ==, 0);
    check_values(outs[0], 1e-15, 0.6);
    check_shape(outs[1], TW_SHAPE(2, 1));
    check_values(outs[1], 1e-15, 0, 0.8);
    check_values(norm, 1e-15, 5);
    g_assert_cmpint(tw_clip_by_global_norm(TW_TENSORS(F64(TW_SHAPE(1), 3), F64(TW_SHAPE(1), 4)), 10, outs, &norm),
                    ==, 0);
    check_values(outs[0], 1e-15, 3);
    check_values(outs[1], 1e-15, 4);
    check_values(norm, 1e-15, 5);
    g_assert_cmpint(tw_clip_by_global_norm(TW_TENSORS(F64(TW_SHAPE(2), 6, 8)), 5, outs, NULL), ==, 0);
    check_values(outs[0], 1e-15, 3, 4);
    tw_error_clear();
    g_assert_cmpint(tw_clip_by_global_norm(TW_TENSORS(F64(TW_SHAPE(2), 6, 8)), -1, outs, NULL), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "clip_by_global_norm"));
    g_assert_null(outs[0]);
    tw_scope_end();
}

/* batch_norm's statistics of a channel whose mean is far from zero against
 * its spread (1e7 + integers in [-8, 8], exact in float32): the sums run in
 * one pass, shifted by the channel's first value, so sum d^2 - (sum d)^2 / n
 * does not cancel (unshifted, inv_std came out 0.6% off). */
static void test_batch_norm_offset_statistics(void)
{
    tw_scope_begin();
    enum { ROWS = 1000, C = 3 };
    static float x[ROWS * C];
    double sum[C] = {0}, ssd[C] = {0};
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < C; c++)
            sum[c] += x[r * C + c] = 1e7f + (float)((r * 7 + c * 3) % 17 - 8);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < C; c++)
            ssd[c] += (x[r * C + c] - sum[c] / ROWS) * (x[r * C + c] - sum[c] / ROWS);
    tw_tensor *y, *mean, *inv_std, *ones = tw_ones(TW_FLOAT32, TW_SHAPE(C)), *zeros = tw_zeros(TW_FLOAT32, TW_SHAPE(C));
    g_assert_cmpint(tw_batch_norm(tw_tensor_from_data(x, TW_FLOAT32, TW_SHAPE(ROWS, C)), ones, zeros, 0, &y, &mean,
                                  &inv_std), ==, 0);
    const float *m = tw_tensor_data(mean), *inv = tw_tensor_data(inv_std);
    for (int c = 0; c < C; c++) {
        g_assert_cmpfloat(fabs(m[c] - sum[c] / ROWS), <=, 1.0);                 /* float32's spacing at 1e7 */
        g_assert_cmpfloat(fabs(inv[c] * sqrt(ssd[c] / ROWS) - 1), <, 1e-6);
    }
    tw_scope_end();
}

/* ---- errors --------------------------------------------------------------------------------------------- */

/* tw_batch_norm's y, or NULL when it fails (for check_failed). */
static tw_tensor *batch_norm_y(tw_tensor *x, tw_tensor *gamma, tw_tensor *beta, double epsilon)
{
    tw_tensor *y, *mean, *inv_std;
    return tw_batch_norm(x, gamma, beta, epsilon, &y, &mean, &inv_std) < 0 ? NULL : y;
}

/* The fused batch_norm's checks: values are the op matrix's and the
 * BatchNormalization tests' (test_layers_core.c). */
static void test_batch_norm_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(4, 3)), *c3 = tw_ones(TW_FLOAT32, TW_SHAPE(3));
    check_failed(batch_norm_y(x, tw_ones(TW_FLOAT32, TW_SHAPE(4)), c3, 0.001), "batch_norm", "gamma has shape (4,), want (3,)");
    check_failed(batch_norm_y(x, c3, tw_ones(TW_FLOAT64, TW_SHAPE(3)), 0.001), "batch_norm: beta is float64, x is float32");
    check_failed(batch_norm_y(tw_zeros(TW_INT32, TW_SHAPE(4, 3)), c3, c3, 0.001), "batch_norm: x must be float32 or float64, got int32");
    check_failed(batch_norm_y(tw_scalar(1), c3, c3, 0.001), "batch_norm: x must have a feature axis");
    check_failed(batch_norm_y(x, c3, c3, -1), "batch_norm: epsilon must be 0 or more, got -1");
    check_failed(batch_norm_y(x, NULL, c3, 0.001), "batch_norm");
    tw_scope_end();
}

static void test_errors(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    tw_tensor *b = tw_zeros(TW_FLOAT32, TW_SHAPE(4, 5));
    tw_error_clear();
    g_assert_null(tw_matmul(a, b));
    g_assert_cmpstr(tw_last_error(), ==, "matmul: inner dimensions differ: (2, 3) x (4, 5)");
    check_failed(tw_matmul_ex(a, b, true, false), "matmul", "(2, 3)", "(4, 5)");
    check_failed(tw_matmul(a, tw_zeros(TW_FLOAT64, TW_SHAPE(3, 2))), "matmul", "float32", "float64");
    check_failed(tw_matmul(a, tw_zeros(TW_FLOAT32, TW_SHAPE(3))), "matmul", "(2, 3)", "(3,)");
    check_failed(tw_matmul(tw_zeros(TW_INT32, TW_SHAPE(2, 3)), tw_zeros(TW_INT32, TW_SHAPE(3, 2))), "matmul", "int32");
    /* broadcast mismatch, in each binary op family */
    check_failed(tw_add(a, tw_zeros(TW_FLOAT32, TW_SHAPE(4, 3))), "add", "(2, 3)", "(4, 3)");
    check_failed(tw_less(a, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 2))), "less", "(2, 3)", "(2, 2)");
    check_failed(tw_maximum(a, tw_zeros(TW_FLOAT32, TW_SHAPE(3, 2, 2))), "maximum", "(2, 3)", "(3, 2, 2)");
    /* dtype mismatch */
    check_failed(tw_add(a, tw_zeros(TW_FLOAT64, TW_SHAPE(2, 3))), "add", "float32", "float64", "(2, 3)");
    check_failed(tw_mul(tw_zeros(TW_INT32, TW_SHAPE(2)), tw_zeros(TW_INT64, TW_SHAPE(2))), "mul", "int32", "int64",
                 "(2,)");
    /* bad axes */
    check_failed(tw_sum(a, TW_AXES(2), false), "sum", "axis 2", "rank 2");
    check_failed(tw_mean(a, TW_AXES(-3), false), "mean", "axis -3", "rank 2");
    check_failed(tw_max(a, TW_AXES(5), true), "max", "axis 5");
    check_failed(tw_logsumexp(a, TW_AXES(2), false), "logsumexp", "axis 2", "rank 2");
    check_failed(tw_variance(a, TW_AXES(0, 3), false), "variance", "axis 3", "rank 2");
    /* reshape size mismatch */
    check_failed(tw_reshape(a, TW_SHAPE(4, 2)), "reshape", "(2, 3)", "(4, 2)");
    /* sparse labels out of range */
    check_failed(tw_sparse_softmax_cross_entropy(a, I32(TW_SHAPE(2), 0, 7)), "sparse_softmax_cross_entropy", "7",
                 "(2, 3)");
    tw_scope_end();
}

static void test_error_chaining(void)
{
    tw_scope_begin();
    tw_tensor *a = tw_zeros(TW_FLOAT64, TW_SHAPE(2, 3));
    tw_tensor *b = tw_zeros(TW_FLOAT64, TW_SHAPE(4, 5));
    tw_error_clear();
    /* the first failure's message survives every later op given its NULL */
    tw_tensor *y = tw_softmax(tw_exp(tw_sum(tw_add_scalar(tw_transpose(tw_add(tw_matmul(a, b), a)), 1), TW_AXES(0),
                                            false)),
                              -1);
    g_assert_null(y);
    g_assert_cmpstr(tw_last_error(), ==, "matmul: inner dimensions differ: (2, 3) x (4, 5)");
    g_assert_null(tw_reshape(NULL, TW_SHAPE(3)));
    g_assert_null(tw_where(NULL, a, a));
    g_assert_null(tw_mul(a, NULL));
    g_assert_null(tw_logsumexp(NULL, 0, NULL, false));
    g_assert_null(tw_variance(NULL, 0, NULL, false));
    g_assert_null(tw_clip_by_norm(NULL, 1));
    g_assert_null(tw_softmax_cross_entropy(NULL, a));
    g_assert_null(tw_cast(NULL, TW_FLOAT32));
    g_assert_cmpstr(tw_last_error(), ==, "matmul: inner dimensions differ: (2, 3) x (4, 5)");
    /* without a pending error, a NULL input is named */
    tw_error_clear();
    g_assert_null(tw_exp(NULL));
    g_assert_nonnull(strstr(tw_last_error(), "exp"));
    g_assert_nonnull(strstr(tw_last_error(), "NULL"));
    tw_error_clear();
    tw_scope_end();
}

/* A large sum is split into fixed chunks, so its value does not depend on
 * the number of threads; it also stays accurate (double accumulation). */
static void test_large_sum_thread_independent(void)
{
    tw_scope_begin();
    int64_t n = 1 << 20;
    tw_tensor *x = tw_arange(0, (double)n, 1, TW_FLOAT32);
    tw_tensor *y = tw_mul_scalar(tw_sin(x), 1e3);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    double one = tw_tensor_item(tw_sum_all(y));
    omp_set_num_threads(2);
    double two = tw_tensor_item(tw_sum_all(y));
    omp_set_num_threads(saved);
    g_assert_cmpfloat(one, ==, two);
    double exact = (double)n * (double)(n - 1) / 2; /* about 2^39: float32 keeps 24 bits of it */
    g_assert_cmpfloat(fabs(tw_tensor_item(tw_sum_all(x)) - exact), <=, exact * 0x1p-24);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ops/reduce/large-sum-thread-independent", test_large_sum_thread_independent);
    g_test_add_func("/ops/binary/float", test_arith_float);
    g_test_add_func("/ops/binary/int", test_arith_int);
    g_test_add_func("/ops/binary/scalar-variants", test_scalar_variants);
    g_test_add_func("/ops/binary/weak-scalars", test_weak_scalars);
    g_test_add_func("/ops/binary/compare", test_compare);
    g_test_add_func("/ops/binary/logical", test_logical);
    g_test_add_func("/ops/binary/where", test_where);
    g_test_add_func("/ops/broadcasting", test_broadcasting);
    g_test_add_func("/ops/unary/float64", test_unary_float64);
    g_test_add_func("/ops/unary/float32", test_unary_float32);
    g_test_add_func("/ops/unary/int", test_unary_int);
    g_test_add_func("/ops/unary/more", test_unary_more);
    g_test_add_func("/ops/reduce/all-axis-sets", test_reduce_all_axis_sets);
    g_test_add_func("/ops/reduce/paths", test_reduce_paths);
    g_test_add_func("/ops/reduce/argmax-argmin", test_argmax_argmin);
    g_test_add_func("/ops/reduce/variance-logsumexp", test_variance_logsumexp);
    g_test_add_func("/ops/reduce/logsumexp-empty", test_logsumexp_empty);
    g_test_add_func("/ops/matmul/2d", test_matmul_2d);
    g_test_add_func("/ops/matmul/batched", test_matmul_batched);
    g_test_add_func("/ops/matmul/strided-operands", test_matmul_strided_operands);
    g_test_add_func("/ops/views/reshape-permute", test_reshape_permute);
    g_test_add_func("/ops/views/slices", test_slices);
    g_test_add_func("/ops/views/broadcast-expand-squeeze", test_broadcast_expand_squeeze);
    g_test_add_func("/ops/views/alias-variables", test_views_alias_variables);
    g_test_add_func("/ops/cast", test_cast_all_dtypes);
    g_test_add_func("/ops/softmax", test_softmax);
    g_test_add_func("/ops/cross-entropy", test_cross_entropy);
    g_test_add_func("/ops/moments", test_moments);
    g_test_add_func("/ops/clip-by-norm", test_clip_by_norm);
    g_test_add_func("/ops/errors", test_errors);
    g_test_add_func("/ops/batch-norm-errors", test_batch_norm_errors);
    g_test_add_func("/ops/batch-norm-offset-statistics", test_batch_norm_offset_statistics);
    g_test_add_func("/ops/error-chaining", test_error_chaining);
    return g_test_run();
}
