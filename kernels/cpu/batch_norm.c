/* Batch normalization's training-mode passes (batch_norm_kernels.h): per
 * channel sums in double over blocks of BLOCK rows, each block's partial
 * sums kept apart and added in block order, then one elementwise pass. */
#include <math.h>

#include "../include/batch_norm_formula.h"
#include "batch_norm_kernels.h"
#include "cpu_kernels.h"
#include "parallel.h"

/* Rows per partial sum: fixed, so the order of the additions (and the
 * result) does not depend on how many threads ran the blocks. */
#define BLOCK 256

/* Which per-channel sums column_sums takes. */
enum { SUM_SHIFTED, SUM_DY_AND_DY_DEVIATION };

/* The loops over a block of rows are compiled once per ISA (the
 * vectorizer turns each into 8-lane double arithmetic with AVX-512 where
 * baseline x86-64 has 2); no FMA contraction, so every clone gives the
 * same bits. The parallel loops stay outside them: OpenMP outlines its
 * regions before the clones are made, and a region's body would not be
 * cloned. */
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))

/* p1[c] and p2[c] = the sums of rows [r0, r1), as `what` says: sum d and
 * sum d^2 with d = x - ref; sum dy and sum dy * (x - ref) (ref: the mean). */
#define BLOCK_SUMS(T)                                                                                              \
    CLONES static void block_sums_##T(int what, int64_t r0, int64_t r1, int64_t C, const T *x, const T *dy,       \
                                      const double *ref, double *p1, double *p2)                                  \
    {                                                                                                              \
        for (int64_t c = 0; c < C; c++)                                                                            \
            p1[c] = p2[c] = 0;                                                                                     \
        for (int64_t r = r0; r < r1; r++) {                                                                        \
            const T *xr = x + r * C;                                                                               \
            if (what == SUM_SHIFTED) {                                                                             \
                for (int64_t c = 0; c < C; c++) {                                                                  \
                    double d = xr[c] - ref[c];                                                                     \
                    p1[c] += d;                                                                                    \
                    p2[c] += d * d;                                                                                \
                }                                                                                                  \
            } else {                                                                                               \
                const T *dr = dy + r * C;                                                                          \
                for (int64_t c = 0; c < C; c++) {                                                                  \
                    p1[c] += dr[c];                                                                                \
                    p2[c] += dr[c] * (xr[c] - ref[c]);                                                             \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
    }

/* s1[c] (and s2[c]) over all rows, as `what` says. */
#define COLUMN_SUMS(T)                                                                                             \
    BLOCK_SUMS(T)                                                                                                  \
    static void column_sums_##T(int what, int64_t rows, int64_t C, const T *x, const T *dy, const double *ref,     \
                                double *s1, double *s2, double *part)                                              \
    {                                                                                                              \
        int64_t nblocks = (rows + BLOCK - 1) / BLOCK;                                                              \
        TWK_PARALLEL_FOR(twk_parallel(rows * C) && nblocks > 1, schedule(static),                                  \
        for (int64_t b = 0; b < nblocks; b++) {                                                                    \
            int64_t end = (b + 1) * BLOCK < rows ? (b + 1) * BLOCK : rows;                                         \
            block_sums_##T(what, b * BLOCK, end, C, x, dy, ref, part + b * 2 * C, part + b * 2 * C + C);           \
        });                                                                                                        \
        for (int64_t c = 0; c < C; c++)                                                                            \
            s1[c] = s2[c] = 0;                                                                                     \
        for (int64_t b = 0; b < nblocks; b++)                                                                      \
            for (int64_t c = 0; c < C; c++)                                                                        \
                s1[c] += part[b * 2 * C + c], s2[c] += part[b * 2 * C + C + c];                                    \
    }

/* out[r,c] = a[c] * u[r,c] + b[c] * v[r,c] + k[c] (v optional), in double,
 * for rows [r0, r1). */
#define AFFINE_ROWS(T)                                                                                             \
    CLONES static void affine_rows_##T(int64_t r0, int64_t r1, int64_t C, const T *u, const T *v, const double *a, \
                                       const double *b, const double *k, T *out)                                   \
    {                                                                                                              \
        for (int64_t r = r0; r < r1; r++) {                                                                        \
            const T *ur = u + r * C;                                                                               \
            T *o = out + r * C;                                                                                    \
            if (v) {                                                                                               \
                const T *vr = v + r * C;                                                                           \
                for (int64_t c = 0; c < C; c++)                                                                    \
                    o[c] = (T)(a[c] * ur[c] + b[c] * vr[c] + k[c]);                                                \
            } else {                                                                                               \
                for (int64_t c = 0; c < C; c++)                                                                    \
                    o[c] = (T)(a[c] * ur[c] + k[c]);                                                               \
            }                                                                                                      \
        }                                                                                                          \
    }

/* The same over all rows, the threads taking blocks of BLOCK rows. */
#define AFFINE(T)                                                                                                  \
    AFFINE_ROWS(T)                                                                                                 \
    static void affine_##T(int64_t rows, int64_t C, const T *u, const T *v, const double *a, const double *b,      \
                           const double *k, T *out)                                                                \
    {                                                                                                              \
        int64_t nblocks = (rows + BLOCK - 1) / BLOCK;                                                              \
        TWK_PARALLEL_FOR(twk_parallel(rows * C) && nblocks > 1, schedule(static),                                  \
        for (int64_t blk = 0; blk < nblocks; blk++) {                                                              \
            int64_t end = (blk + 1) * BLOCK < rows ? (blk + 1) * BLOCK : rows;                                     \
            affine_rows_##T(blk * BLOCK, end, C, u, v, a, b, k, out);                                              \
        });                                                                                                        \
    }

#define PASSES(T)                                                                                                  \
    COLUMN_SUMS(T)                                                                                                 \
    AFFINE(T)                                                                                                      \
    static void forward_##T(int64_t rows, int64_t C, const T *x, const T *gamma, const T *beta, double eps, T *y,  \
                            T *mean_out, T *inv_out, double *w)                                                    \
    {                                                                                                              \
        double *mean = w, *scale = w + C, *shift = w + 2 * C, *s2 = w + 3 * C, *ref = w + 4 * C;                   \
        double *part = w + 6 * C;                                                                                  \
        /* One pass for the mean and the squared deviations: sums of                                               \
         * d = x - (the channel's first value) and d^2, in double; the shift                                       \
         * keeps sum d^2 - (sum d)^2 / rows from cancelling when the mean is                                       \
         * far from zero against the spread. */                                                                    \
        for (int64_t c = 0; c < C; c++)                                                                            \
            ref[c] = rows > 0 ? (double)x[c] : 0;                                                                  \
        column_sums_##T(SUM_SHIFTED, rows, C, x, NULL, ref, mean, s2, part);                                       \
        for (int64_t c = 0; c < C; c++) {                                                                          \
            double d = mean[c] / (double)rows, ssd = s2[c] - mean[c] * d;                                          \
            mean[c] = ref[c] + d;                                                                                  \
            scale[c] = ssd > 0 ? ssd : 0;                                                                          \
        }                                                                                                          \
        for (int64_t c = 0; c < C; c++) {                                                                          \
            double inv;                                                                                            \
            twk_bn_forward_channel(mean[c], scale[c], (double)rows, eps, gamma[c], beta[c], &inv, &scale[c],       \
                                   &shift[c]);                                                                     \
            mean_out[c] = (T)mean[c];                                                                              \
            inv_out[c] = (T)inv;                                                                                   \
        }                                                                                                          \
        affine_##T(rows, C, x, NULL, scale, NULL, shift, y);                                                       \
    }                                                                                                              \
    static void backward_##T(int64_t rows, int64_t C, const T *x, const T *dy, const T *gamma, const T *mean_in,   \
                             const T *inv_in, T *dx, T *dgamma, T *dbeta, double *w)                               \
    {                                                                                                              \
        double *mean = w, *sdy = w + C, *sdyx = w + 2 * C, *a = w + 3 * C, *b = w + 4 * C, *k = w + 5 * C;         \
        double *part = w + 6 * C;                                                                                  \
        for (int64_t c = 0; c < C; c++)                                                                            \
            mean[c] = mean_in[c];                                                                                  \
        column_sums_##T(SUM_DY_AND_DY_DEVIATION, rows, C, x, dy, mean, sdy, sdyx, part);                           \
        for (int64_t c = 0; c < C; c++) {                                                                          \
            double dg;                                                                                             \
            twk_bn_backward_channel(mean[c], inv_in[c], gamma[c], sdy[c], sdyx[c], (double)rows, &dg, &a[c], &b[c], \
                                    &k[c]);                                                                        \
            dbeta[c] = (T)sdy[c];                                                                                  \
            dgamma[c] = (T)dg;                                                                                     \
        }                                                                                                          \
        affine_##T(rows, C, dy, x, a, b, k, dx);                                                                   \
    }

PASSES(float)
PASSES(double)

size_t twk_batch_norm_workspace(int64_t rows, int64_t channels)
{
    return (size_t)(6 + 2 * ((rows + BLOCK - 1) / BLOCK)) * (size_t)channels * sizeof(double);
}

void twk_batch_norm_forward(twk_dtype dtype, int64_t rows, int64_t channels, const void *x, const void *gamma,
                            const void *beta, double epsilon, void *y, void *mean, void *inv_std, void *workspace)
{
    if (dtype == TWK_FLOAT32)
        forward_float(rows, channels, x, gamma, beta, epsilon, y, mean, inv_std, workspace);
    else
        forward_double(rows, channels, x, gamma, beta, epsilon, y, mean, inv_std, workspace);
}

void twk_batch_norm_backward(twk_dtype dtype, int64_t rows, int64_t channels, const void *x, const void *dy,
                             const void *gamma, const void *mean, const void *inv_std, void *dx, void *dgamma,
                             void *dbeta, void *workspace)
{
    if (dtype == TWK_FLOAT32)
        backward_float(rows, channels, x, dy, gamma, mean, inv_std, dx, dgamma, dbeta, workspace);
    else
        backward_double(rows, channels, x, dy, gamma, mean, inv_std, dx, dgamma, dbeta, workspace);
}
