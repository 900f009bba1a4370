/* Elementwise binary kernels with broadcasting (stride 0) and any strides.
 * The innermost loop is specialised for the contiguous case so the compiler
 * vectorises it; outer dimensions are walked row by row. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"

/* One strided row of FN over IN_T into OUT_T: out[i*so] = FN(a[i*sa], b[i*sb]),
 * specialised for the dense and the single-value cases. */
#define ROW_LOOP(IN_T, OUT_T, FN)                                                                            \
    do {                                                                                                     \
        const IN_T *pa = a;                                                                                  \
        const IN_T *pb = b;                                                                                  \
        OUT_T *po = out;                                                                                     \
        if (sa == 1 && sb == 1 && so == 1) {                                                                 \
            for (int64_t i = 0; i < n; i++) po[i] = FN(pa[i], pb[i]);                                        \
        } else if (sa == 1 && sb == 0 && so == 1) {                                                          \
            IN_T y = pb[0];                                                                                  \
            for (int64_t i = 0; i < n; i++) po[i] = FN(pa[i], y);                                            \
        } else if (sa == 0 && sb == 1 && so == 1) {                                                          \
            IN_T x = pa[0];                                                                                  \
            for (int64_t i = 0; i < n; i++) po[i] = FN(x, pb[i]);                                            \
        } else {                                                                                             \
            for (int64_t i = 0; i < n; i++) po[i * so] = FN(pa[i * sa], pb[i * sb]);                         \
        }                                                                                                    \
    } while (0)

/* One case per row a dtype gets (kernels/include/elementwise.h). */
#define FLOAT_CASE(name, takes, f, i) TWK__FLOAT_##takes(case TWK_BINARY_##name: ROW_LOOP(TWK_T, TWK__OUT_##takes, TWK_FN_NAME(name)); return;)
#define INT_CASE(name, takes, f, i) TWK__INT_##takes(case TWK_BINARY_##name: ROW_LOOP(TWK_T, TWK__OUT_##takes, TWK_FN_NAME(name)); return;)
#define ROW_FUNCTION(NAME, CASE)                                                                             \
    static void NAME(twk_binary_op op, int64_t n, void *out, int64_t so, const void *a, int64_t sa,          \
                     const void *b, int64_t sb)                                                              \
    {                                                                                                        \
        switch (op) { TWK_BINARY_OPS(CASE) default: return; }                                                \
    }

#include "rows_per_dtype.h"

static void binary_row(twk_binary_op op, twk_dtype dtype, int64_t n, void *out, int64_t so, const void *a,
                       int64_t sa, const void *b, int64_t sb)
{
    ROW_DISPATCH(dtype, op, n, out, so, a, sa, b, sb)
}

static size_t out_itemsize(twk_binary_op op, twk_dtype dtype)
{
#define BOOL_RESULT(name, takes, f, i) TWK_BOOL_RESULT_##takes,
    static const bool bool_result[] = {TWK_BINARY_OPS(BOOL_RESULT)};
    return bool_result[op] ? 1 : twk_dtype_size(dtype);
}

void twk_binary(twk_binary_op op, twk_dtype in_dtype, int ndim, const int64_t *shape, void *out,
                const int64_t *out_strides, const void *a, const int64_t *a_strides, const void *b,
                const int64_t *b_strides)
{
    int64_t n = 1;
    bool packed = true; /* the common case: three dense operands of one shape */
    for (int d = ndim - 1; d >= 0; d--) {
        packed = packed && out_strides[d] == n && a_strides[d] == n && b_strides[d] == n;
        n *= shape[d];
    }
    if (packed && !twk_parallel(n)) {
        binary_row(op, in_dtype, n, out, 1, a, 1, b, 1);
        return;
    }
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 3, (const int64_t *const[]){out_strides, a_strides, b_strides});
    int64_t isz = (int64_t)twk_dtype_size(in_dtype), osz = (int64_t)out_itemsize(op, in_dtype);
    int64_t so = TWK_INNER_STRIDE(&p, 0), sa = TWK_INNER_STRIDE(&p, 1), sb = TWK_INNER_STRIDE(&p, 2);
    if (p.rows == 1 && !twk_parallel(p.inner)) {
        binary_row(op, in_dtype, p.inner, out, so, a, sa, b, sb);
        return;
    }
    if (p.rows == 1) {
        /* One long row: split it into chunks across threads. */
        int64_t chunk = 8192, nchunks = (p.inner + chunk - 1) / chunk;
        TWK_PARALLEL_FOR(true, ,
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t i0 = c * chunk, len = p.inner - i0 < chunk ? p.inner - i0 : chunk;
            binary_row(op, in_dtype, len, (char *)out + i0 * so * osz, so, (const char *)a + i0 * sa * isz, sa,
                       (const char *)b + i0 * sb * isz, sb);
        });
        return;
    }
    TWK_PARALLEL_FOR(twk_parallel(p.rows * p.inner), ,
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[3];
        twk_plan_row(&p, 3, r, off);
        binary_row(op, in_dtype, p.inner, (char *)out + off[0] * osz, so, (const char *)a + off[1] * isz, sa,
                   (const char *)b + off[2] * isz, sb);
    });
}

#define WHERE_ROW(T)                                                                                        \
    do {                                                                                                    \
        const uint8_t *pc = cond;                                                                           \
        const T *pa = a, *pb = b;                                                                           \
        T *po = out;                                                                                        \
        for (int64_t i = 0; i < n; i++)                                                                     \
            po[i * so] = pc[i * sc] ? pa[i * sa] : pb[i * sb];                                              \
    } while (0)

static void where_row(twk_dtype dtype, int64_t n, void *out, int64_t so, const void *cond, int64_t sc,
                      const void *a, int64_t sa, const void *b, int64_t sb)
{
    switch (twk_dtype_size(dtype)) {
    case 8: WHERE_ROW(uint64_t); break;
    case 4: WHERE_ROW(uint32_t); break;
    default: WHERE_ROW(uint8_t); break;
    }
}

void twk_where(twk_dtype dtype, int ndim, const int64_t *shape, void *out, const int64_t *out_strides,
               const void *cond, const int64_t *cond_strides, const void *a, const int64_t *a_strides,
               const void *b, const int64_t *b_strides)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 4, (const int64_t *const[]){out_strides, cond_strides, a_strides, b_strides});
    int64_t isz = (int64_t)twk_dtype_size(dtype);
    TWK_PARALLEL_FOR(twk_parallel(p.rows * p.inner) && p.rows > 1, ,
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[4];
        twk_plan_row(&p, 4, r, off);
        where_row(dtype, p.inner, (char *)out + off[0] * isz, TWK_INNER_STRIDE(&p, 0), (const char *)cond + off[1],
                  TWK_INNER_STRIDE(&p, 1), (const char *)a + off[2] * isz, TWK_INNER_STRIDE(&p, 2),
                  (const char *)b + off[3] * isz, TWK_INNER_STRIDE(&p, 3));
    });
}

/* Whether an integer tensor holds a 0 (a divisor checked before division). */
#define ANY_ZERO_ROW(T)                                                                                     \
    do {                                                                                                    \
        const T *px = (const T *)((const char *)x + off[0] * isz);                                          \
        for (int64_t i = 0; i < p.inner && !zero; i++)                                                      \
            zero = px[i * sx] == 0;                                                                         \
    } while (0)

bool twk_any_zero(twk_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides, const void *x)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 1, (const int64_t *const[]){strides});
    int64_t isz = (int64_t)twk_dtype_size(dtype), sx = TWK_INNER_STRIDE(&p, 0);
    bool zero = false;
    for (int64_t r = 0; r < p.rows && !zero; r++) {
        int64_t off[1];
        twk_plan_row(&p, 1, r, off);
        switch (dtype) {
        case TWK_INT32: ANY_ZERO_ROW(int32_t); break;
        case TWK_INT64: ANY_ZERO_ROW(int64_t); break;
        default: ANY_ZERO_ROW(uint8_t); break;
        }
    }
    return zero;
}
