/* Elementwise unary kernels: a loop per dtype around each formula of
 * kernels/include/elementwise.h. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"

#define UNARY_ROW(T, FN)                                                                \
    do {                                                                            \
        const T *px = x;                                                            \
        T *po = out;                                                                \
        if (sx == 1 && so == 1) {                                                   \
            for (int64_t i = 0; i < n; i++) po[i] = FN(px[i], p0, p1);              \
        } else {                                                                    \
            for (int64_t i = 0; i < n; i++) po[i * so] = FN(px[i * sx], p0, p1);    \
        }                                                                           \
    } while (0)

/* One case per row a dtype gets (kernels/include/elementwise.h), its loop inlined. */
#define FLOAT_CASE(name, takes, nattrs, f, i) TWK__FLOAT_##takes(case TWK_UNARY_##name: UNARY_ROW(TWK_T, TWK_FN_NAME(name)); return;)
#define INT_CASE(name, takes, nattrs, f, i) TWK__INT_##takes(case TWK_UNARY_##name: UNARY_ROW(TWK_T, TWK_FN_NAME(name)); return;)
#define ROW_FUNCTION(NAME, CASE)                                                                             \
    static void NAME(twk_unary_op op, int64_t n, void *out, int64_t so, const void *x, int64_t sx, double p0, \
                     double p1)                                                                              \
    {                                                                                                        \
        switch (op) { TWK_UNARY_OPS(CASE) default: return; }                                                 \
    }

#include "rows_per_dtype.h"

static void unary_row(twk_unary_op op, twk_dtype dtype, int64_t n, void *out, int64_t so, const void *x, int64_t sx,
                      double p0, double p1)
{
    ROW_DISPATCH(dtype, op, n, out, so, x, sx, p0, p1)
}

void twk_unary(twk_unary_op op, twk_dtype dtype, int ndim, const int64_t *shape, void *out,
               const int64_t *out_strides, const void *x, const int64_t *x_strides, double p0, double p1)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 2, (const int64_t *const[]){out_strides, x_strides});
    int64_t isz = (int64_t)twk_dtype_size(dtype), so = TWK_INNER_STRIDE(&p, 0), sx = TWK_INNER_STRIDE(&p, 1);
    if (p.rows == 1 && !twk_parallel(p.inner)) {
        unary_row(op, dtype, p.inner, out, so, x, sx, p0, p1);
        return;
    }
    if (p.rows == 1) {
        /* One long row: split it into chunks across threads. */
        int64_t chunk = 8192, nchunks = (p.inner + chunk - 1) / chunk;
        TWK_PARALLEL_FOR(true, ,
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t i0 = c * chunk, len = p.inner - i0 < chunk ? p.inner - i0 : chunk;
            unary_row(op, dtype, len, (char *)out + i0 * so * isz, so, (const char *)x + i0 * sx * isz, sx, p0, p1);
        });
        return;
    }
    TWK_PARALLEL_FOR(twk_parallel(p.rows * p.inner), ,
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[2];
        twk_plan_row(&p, 2, r, off);
        unary_row(op, dtype, p.inner, (char *)out + off[0] * isz, so, (const char *)x + off[1] * isz, sx, p0, p1);
    });
}
