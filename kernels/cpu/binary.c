/* Elementwise binary kernels with broadcasting (stride 0) and any strides.
 * The innermost loop is specialised for the contiguous case so the compiler
 * vectorises it; outer dimensions are walked row by row. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"

#define FLOOR_DIV_INT(x, y) ((y) == 0 ? 0 : ((x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0)))))

static int64_t int_pow(int64_t base, int64_t exp)
{
    if (exp < 0)
        return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
    int64_t r = 1;
    while (exp) {
        if (exp & 1)
            r *= base;
        base *= base;
        exp >>= 1;
    }
    return r;
}

/* One strided row for every (op, type): OUT_T out[i*so] = EXPR(a[i*sa], b[i*sb]). */
#define ROW_LOOP(IN_T, OUT_T, EXPR)                                                                          \
    do {                                                                                                     \
        const IN_T *pa = a;                                                                                  \
        const IN_T *pb = b;                                                                                  \
        OUT_T *po = out;                                                                                     \
        if (sa == 1 && sb == 1 && so == 1) {                                                                 \
            for (int64_t i = 0; i < n; i++) { IN_T x = pa[i], y = pb[i]; po[i] = (OUT_T)(EXPR); }          \
        } else if (sa == 1 && sb == 0 && so == 1) {                                                          \
            IN_T y = pb[0];                                                                                  \
            for (int64_t i = 0; i < n; i++) { IN_T x = pa[i]; po[i] = (OUT_T)(EXPR); }                     \
        } else if (sa == 0 && sb == 1 && so == 1) {                                                          \
            IN_T x = pa[0];                                                                                  \
            for (int64_t i = 0; i < n; i++) { IN_T y = pb[i]; po[i] = (OUT_T)(EXPR); }                     \
        } else {                                                                                             \
            for (int64_t i = 0; i < n; i++) { IN_T x = pa[i * sa], y = pb[i * sb]; po[i * so] = (OUT_T)(EXPR); } \
        }                                                                                                    \
    } while (0)

#define ARITH_CASES(T, DIV_EXPR, POW_EXPR)                                                   \
    case TWK_ADD: ROW_LOOP(T, T, x + y); return;                                             \
    case TWK_SUB: ROW_LOOP(T, T, x - y); return;                                             \
    case TWK_MUL: ROW_LOOP(T, T, x * y); return;                                             \
    case TWK_DIV: ROW_LOOP(T, T, DIV_EXPR); return;                                          \
    case TWK_POW: ROW_LOOP(T, T, POW_EXPR); return;                                          \
    case TWK_MAX: ROW_LOOP(T, T, (x > y || x != x) ? x : y); return;                         \
    case TWK_MIN: ROW_LOOP(T, T, (x < y || x != x) ? x : y); return;                         \
    case TWK_RELU_GRAD: ROW_LOOP(T, T, x > 0 ? y : 0); return;                               \
    case TWK_EQ: ROW_LOOP(T, uint8_t, x == y); return;                                       \
    case TWK_NE: ROW_LOOP(T, uint8_t, x != y); return;                                       \
    case TWK_LT: ROW_LOOP(T, uint8_t, x < y); return;                                        \
    case TWK_LE: ROW_LOOP(T, uint8_t, x <= y); return;                                       \
    case TWK_GT: ROW_LOOP(T, uint8_t, x > y); return;                                        \
    case TWK_GE: ROW_LOOP(T, uint8_t, x >= y); return;                                       \
    case TWK_AND: ROW_LOOP(T, uint8_t, (x != 0) && (y != 0)); return;                        \
    case TWK_OR: ROW_LOOP(T, uint8_t, (x != 0) || (y != 0)); return;                         \
    default: return;

static void binary_row(twk_binary_op op, tw_dtype dtype, int64_t n, void *out, int64_t so, const void *a,
                       int64_t sa, const void *b, int64_t sb)
{
    switch (dtype) {
    case TW_FLOAT32:
        switch (op) { ARITH_CASES(float, x / y, powf(x, y)) }
    case TW_FLOAT64:
        switch (op) { ARITH_CASES(double, x / y, pow(x, y)) }
    case TW_INT32:
        switch (op) { ARITH_CASES(int32_t, FLOOR_DIV_INT(x, y), (int32_t)int_pow(x, y)) }
    case TW_INT64:
        switch (op) { ARITH_CASES(int64_t, FLOOR_DIV_INT(x, y), int_pow(x, y)) }
    case TW_UINT8:
    case TW_BOOL:
        switch (op) { ARITH_CASES(uint8_t, (y == 0 ? 0 : x / y), (uint8_t)int_pow(x, y)) }
    default:
        return;
    }
}

static size_t out_itemsize(twk_binary_op op, tw_dtype dtype)
{
    return op >= TWK_EQ ? 1 : tw_dtype_size(dtype);
}

void twk_binary(twk_binary_op op, tw_dtype in_dtype, int ndim, const int64_t *shape, void *out,
                const int64_t *out_strides, const void *a, const int64_t *a_strides, const void *b,
                const int64_t *b_strides)
{
    int64_t n = 1;
    bool packed = true; /* the common case: three dense operands of one shape */
    for (int d = ndim - 1; d >= 0; d--) {
        packed = packed && out_strides[d] == n && a_strides[d] == n && b_strides[d] == n;
        n *= shape[d];
    }
    if (packed && n < TWK_PARALLEL_MIN) {
        binary_row(op, in_dtype, n, out, 1, a, 1, b, 1);
        return;
    }
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 3, (const int64_t *const[]){out_strides, a_strides, b_strides});
    int64_t isz = (int64_t)tw_dtype_size(in_dtype), osz = (int64_t)out_itemsize(op, in_dtype);
    int64_t so = TWK_INNER_STRIDE(&p, 0), sa = TWK_INNER_STRIDE(&p, 1), sb = TWK_INNER_STRIDE(&p, 2);
    if (p.rows == 1 && p.inner < TWK_PARALLEL_MIN) {
        binary_row(op, in_dtype, p.inner, out, so, a, sa, b, sb);
        return;
    }
    if (p.rows == 1) {
        /* One long row: split it into chunks across threads. */
        int64_t chunk = 8192, nchunks = (p.inner + chunk - 1) / chunk;
#pragma omp parallel for
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t i0 = c * chunk, len = p.inner - i0 < chunk ? p.inner - i0 : chunk;
            binary_row(op, in_dtype, len, (char *)out + i0 * so * osz, so, (const char *)a + i0 * sa * isz, sa,
                       (const char *)b + i0 * sb * isz, sb);
        }
        return;
    }
#pragma omp parallel for if (p.rows * p.inner >= TWK_PARALLEL_MIN)
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[3];
        twk_plan_row(&p, 3, r, off);
        binary_row(op, in_dtype, p.inner, (char *)out + off[0] * osz, so, (const char *)a + off[1] * isz, sa,
                   (const char *)b + off[2] * isz, sb);
    }
}

#define WHERE_ROW(T)                                                                                        \
    do {                                                                                                    \
        const uint8_t *pc = cond;                                                                           \
        const T *pa = a, *pb = b;                                                                           \
        T *po = out;                                                                                        \
        for (int64_t i = 0; i < n; i++)                                                                     \
            po[i * so] = pc[i * sc] ? pa[i * sa] : pb[i * sb];                                              \
    } while (0)

static void where_row(tw_dtype dtype, int64_t n, void *out, int64_t so, const void *cond, int64_t sc,
                      const void *a, int64_t sa, const void *b, int64_t sb)
{
    switch (tw_dtype_size(dtype)) {
    case 8: WHERE_ROW(uint64_t); break;
    case 4: WHERE_ROW(uint32_t); break;
    default: WHERE_ROW(uint8_t); break;
    }
}

void twk_where(tw_dtype dtype, int ndim, const int64_t *shape, void *out, const int64_t *out_strides,
               const void *cond, const int64_t *cond_strides, const void *a, const int64_t *a_strides,
               const void *b, const int64_t *b_strides)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 4, (const int64_t *const[]){out_strides, cond_strides, a_strides, b_strides});
    int64_t isz = (int64_t)tw_dtype_size(dtype);
#pragma omp parallel for if (p.rows * p.inner >= TWK_PARALLEL_MIN && p.rows > 1)
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[4];
        twk_plan_row(&p, 4, r, off);
        where_row(dtype, p.inner, (char *)out + off[0] * isz, TWK_INNER_STRIDE(&p, 0), (const char *)cond + off[1],
                  TWK_INNER_STRIDE(&p, 1), (const char *)a + off[2] * isz, TWK_INNER_STRIDE(&p, 2),
                  (const char *)b + off[3] * isz, TWK_INNER_STRIDE(&p, 3));
    }
}
