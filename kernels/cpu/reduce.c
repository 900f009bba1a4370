/* Reductions over any set of axes. The kept axes index the output; the
 * reduced axes are walked for each output element (dimensions coalesced so
 * the inner walk is as long and contiguous as possible). Reducing leading
 * axes of a row-major tensor (a batch sum) takes a row-accumulating path
 * instead, which reads memory in order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"

typedef struct {
    int nkeep, nred;
    int64_t keep_shape[TWK_MAX_DIMS + 1], keep_strides[TWK_MAX_DIMS + 1];
    int64_t red_shape[TWK_MAX_DIMS + 1], red_strides[TWK_MAX_DIMS + 1];
    int64_t nout, nreduce;
} reduce_plan;

static void plan_reduce(int ndim, const int64_t *shape, const int64_t *strides, const bool *reduce, reduce_plan *p)
{
    p->nkeep = p->nred = 0;
    p->nout = p->nreduce = 1;
    for (int d = 0; d < ndim; d++) {
        if (reduce[d]) {
            p->red_shape[p->nred] = shape[d];
            p->red_strides[p->nred++] = strides[d];
            p->nreduce *= shape[d];
        } else {
            p->keep_shape[p->nkeep] = shape[d];
            p->keep_strides[p->nkeep++] = strides[d];
            p->nout *= shape[d];
        }
    }
    int64_t *ks[1] = {p->keep_strides}, *rs[1] = {p->red_strides};
    p->nkeep = twk_coalesce(p->nkeep, p->keep_shape, 1, ks);
    p->nred = twk_coalesce(p->nred, p->red_shape, 1, rs);
}

/* Offset of element `index` of a (coalesced) sub-space. */
static int64_t subspace_offset(int n, const int64_t *shape, const int64_t *strides, int64_t index)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        off += (index % shape[d]) * strides[d];
        index /= shape[d];
    }
    return off;
}


#define MAX_STEP acc = (v > acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc
#define MIN_STEP acc = (v < acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc

/* Sum of n dense values with eight independent accumulators: the
 * dependency chain of one accumulator limits a plain loop to one add per
 * FP-add latency, and the compiler may not reorder float sums by itself. */
#define SUM_DENSE(T, SUM_T)                                                                           \
    static SUM_T sum_dense_##T(const T *x, int64_t n)                                                  \
    {                                                                                                  \
        SUM_T lane[8] = {0};                                                                           \
        int64_t i = 0;                                                                                 \
        for (; i + 8 <= n; i += 8)                                                                     \
            for (int k = 0; k < 8; k++)                                                                \
                lane[k] += (SUM_T)x[i + k];                                                            \
        SUM_T acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])); \
        for (; i < n; i++)                                                                             \
            acc += (SUM_T)x[i];                                                                        \
        return acc;                                                                                    \
    }
SUM_DENSE(float, double)
SUM_DENSE(double, double)
SUM_DENSE(int32_t, int64_t)
SUM_DENSE(int64_t, int64_t)
SUM_DENSE(uint8_t, int64_t)

/* A large dense sum to one value, split into fixed chunks summed in
 * parallel and combined in order: the result does not depend on how many
 * threads ran. */
#define SUM_CHUNKS 64
#define SUM_DENSE_PARALLEL(T)                                                                         \
    static double sum_dense_parallel_##T(const T *x, int64_t n)                                       \
    {                                                                                                  \
        double part[SUM_CHUNKS];                                                                       \
        int64_t step = (n + SUM_CHUNKS - 1) / SUM_CHUNKS;                                              \
        TWK_PARALLEL_FOR(twk_parallel(n), ,                                                            \
        for (int c = 0; c < SUM_CHUNKS; c++) {                                                         \
            int64_t i0 = c * step, i1 = i0 + step < n ? i0 + step : n;                                 \
            part[c] = i0 < i1 ? sum_dense_##T(x + i0, i1 - i0) : 0;                                    \
        });                                                                                            \
        double acc = 0;                                                                                \
        for (int c = 0; c < SUM_CHUNKS; c++)                                                           \
            acc += part[c];                                                                            \
        return acc;                                                                                    \
    }
SUM_DENSE_PARALLEL(float)
SUM_DENSE_PARALLEL(double)

#define REDUCERS(T, SUM_T)                                                                            \
    static SUM_T reduce_sum_##T(const T *x, const reduce_plan *p)                                      \
    {                                                                                                  \
        SUM_T acc = 0;                                                                                 \
        int64_t inner = p->red_shape[p->nred - 1], s = p->red_strides[p->nred - 1];                    \
        int64_t rows = p->nreduce / inner;                                                             \
        for (int64_t r = 0; r < rows; r++) {                                                           \
            const T *row = x + subspace_offset(p->nred - 1, p->red_shape, p->red_strides, r);          \
            if (s == 1)                                                                                \
                acc += sum_dense_##T(row, inner);                                                      \
            else                                                                                       \
                for (int64_t i = 0; i < inner; i++) acc += (SUM_T)row[i * s];                          \
        }                                                                                              \
        return acc;                                                                                    \
    }                                                                                                  \
    static SUM_T reduce_prod_##T(const T *x, const reduce_plan *p)                                     \
    {                                                                                                  \
        SUM_T acc = 1;                                                                                 \
        for (int64_t i = 0; i < p->nreduce; i++)                                                       \
            acc *= (SUM_T)x[subspace_offset(p->nred, p->red_shape, p->red_strides, i)];                \
        return acc;                                                                                    \
    }                                                                                                  \
    static T reduce_max_##T(const T *x, const reduce_plan *p)                                          \
    {                                                                                                  \
        T acc = x[0];                                                                                  \
        for (int64_t i = 1; i < p->nreduce; i++) {                                                     \
            T v = x[subspace_offset(p->nred, p->red_shape, p->red_strides, i)];                        \
            MAX_STEP;                                                                                  \
        }                                                                                              \
        return acc;                                                                                    \
    }                                                                                                  \
    static T reduce_min_##T(const T *x, const reduce_plan *p)                                          \
    {                                                                                                  \
        T acc = x[0];                                                                                  \
        for (int64_t i = 1; i < p->nreduce; i++) {                                                     \
            T v = x[subspace_offset(p->nred, p->red_shape, p->red_strides, i)];                        \
            MIN_STEP;                                                                                  \
        }                                                                                              \
        return acc;                                                                                    \
    }                                                                                                  \
    static int64_t reduce_arg_##T(const T *x, const reduce_plan *p, bool want_max)                     \
    {                                                                                                  \
        int64_t best = 0, s = p->red_strides[0];                                                       \
        T acc = x[0];                                                                                  \
        for (int64_t i = 1; i < p->nreduce && acc == acc; i++) {                                       \
            T v = x[i * s];                                                                            \
            if (v != v || (want_max ? v > acc : v < acc)) {                                            \
                acc = v;                                                                               \
                best = i;                                                                              \
            }                                                                                          \
        }                                                                                              \
        return best;                                                                                   \
    }                                                                                                  \
    static void reduce_one_##T(twk_reduce_op op, const T *x, const reduce_plan *p, void *out, int64_t o) \
    {                                                                                                  \
        {                                                                                              \
            const T *base = x + subspace_offset(p->nkeep, p->keep_shape, p->keep_strides, o);          \
            switch (op) {                                                                              \
            case TWK_SUM: ((T *)out)[o] = (T)reduce_sum_##T(base, p); break;                           \
            case TWK_PROD: ((T *)out)[o] = (T)reduce_prod_##T(base, p); break;                         \
            case TWK_RMAX: ((T *)out)[o] = reduce_max_##T(base, p); break;                             \
            case TWK_RMIN: ((T *)out)[o] = reduce_min_##T(base, p); break;                             \
            case TWK_ARGMAX: ((int64_t *)out)[o] = reduce_arg_##T(base, p, true); break;               \
            case TWK_ARGMIN: ((int64_t *)out)[o] = reduce_arg_##T(base, p, false); break;              \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void reduce_all_##T(twk_reduce_op op, const T *x, const reduce_plan *p, void *out)          \
    {                                                                                                  \
        if (!twk_parallel(p->nout * p->nreduce) || p->nout == 1) {                              \
            for (int64_t o = 0; o < p->nout; o++)                                                      \
                reduce_one_##T(op, x, p, out, o);                                                      \
            return;                                                                                    \
        }                                                                                              \
        _Pragma("omp parallel for")                                                                    \
        for (int64_t o = 0; o < p->nout; o++)                                                          \
            reduce_one_##T(op, x, p, out, o);                                                          \
    }

REDUCERS(float, double)
REDUCERS(double, double)
REDUCERS(int32_t, int64_t)
REDUCERS(int64_t, int64_t)
REDUCERS(uint8_t, int64_t)

/* out[j] = sum_i x[i*rs + j] for contiguous rows: reads memory in order,
 * one block of columns at a time so the accumulators (double, as for every
 * float sum) stay on the stack. Large sums split the rows into
 * SUM_ROWS_CHUNKS runs, summed apart (by as many threads as there are) and
 * then added in order: the chunks depend on the size only, so the result
 * does not depend on the thread count. (Splitting the columns instead was
 * 2-5 times slower for ResNet50's bias gradients, rows of 64 to 256
 * floats: each thread fetched line pairs it did not use.) The row loop is
 * compiled per ISA (8 double lanes with AVX-512 where baseline x86-64 has
 * 2), without FMA contraction, so every clone gives the same bits. */
#define SUM_ROWS_BLOCK 512
#define SUM_ROWS_CHUNKS 8
#define SUM_ROWS(T)                                                                                   \
    __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off"))) static  \
    void sum_rows_block_##T(const T *x, int64_t nrows, int64_t rs, int64_t nj, double *acc)           \
    {                                                                                                 \
        for (int64_t j = 0; j < nj; j++)                                                              \
            acc[j] = 0;                                                                               \
        for (int64_t i = 0; i < nrows; i++)                                                           \
            for (int64_t j = 0; j < nj; j++)                                                          \
                acc[j] += x[i * rs + j];                                                              \
    }                                                                                                 \
    static void sum_rows_##T(const T *x, int64_t nrows, int64_t rs, int64_t ncols, T *out)            \
    {                                                                                                 \
        double part[SUM_ROWS_CHUNKS][SUM_ROWS_BLOCK];                                                 \
        const int chunks = nrows * ncols >= 4 * TWK_PARALLEL_MIN && nrows >= 8 * SUM_ROWS_CHUNKS      \
                               ? SUM_ROWS_CHUNKS : 1;                                                 \
        const int64_t step = (nrows + chunks - 1) / chunks;                                           \
        for (int64_t j0 = 0; j0 < ncols; j0 += SUM_ROWS_BLOCK) {                                      \
            int64_t nj = ncols - j0 < SUM_ROWS_BLOCK ? ncols - j0 : SUM_ROWS_BLOCK;                   \
            TWK_PARALLEL_FOR(chunks > 1 && twk_parallel(nrows * ncols), schedule(static),             \
            for (int c = 0; c < chunks; c++) {                                                        \
                int64_t i0 = c * step, i1 = i0 + step < nrows ? i0 + step : nrows;                    \
                sum_rows_block_##T(x + i0 * rs + j0, i1 > i0 ? i1 - i0 : 0, rs, nj, part[c]);         \
            });                                                                                       \
            for (int64_t j = 0; j < nj; j++) {                                                        \
                double acc = 0;                                                                       \
                for (int c = 0; c < chunks; c++)                                                      \
                    acc += part[c][j];                                                                \
                out[j0 + j] = (T)acc;                                                                 \
            }                                                                                         \
        }                                                                                             \
    }
SUM_ROWS(float)
SUM_ROWS(double)

void twk_reduce(twk_reduce_op op, twk_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides,
                const void *x, const bool *reduce, void *out)
{
    reduce_plan p;
    plan_reduce(ndim, shape, strides, reduce, &p);
    if (p.nreduce == 0)
        return; /* the engine refuses empty max/min; sums of nothing are filled by it */
    bool rows_path = op == TWK_SUM && p.nkeep == 1 && p.nred == 1 && p.keep_strides[0] == 1 &&
                     p.red_strides[0] >= p.keep_shape[0] && p.nreduce > 1 && p.nout >= 16;
    bool dense_all = op == TWK_SUM && p.nout == 1 && p.nred == 1 && p.red_strides[0] == 1 &&
                     p.nreduce >= 4 * TWK_PARALLEL_MIN;
    if (dense_all && dtype == TWK_FLOAT32) {
        *(float *)out = (float)sum_dense_parallel_float(x, p.nreduce);
        return;
    }
    if (dense_all && dtype == TWK_FLOAT64) {
        *(double *)out = sum_dense_parallel_double(x, p.nreduce);
        return;
    }
    if (rows_path && dtype == TWK_FLOAT32) {
        sum_rows_float(x, p.nreduce, p.red_strides[0], p.nout, out);
        return;
    }
    if (rows_path && dtype == TWK_FLOAT64) {
        sum_rows_double(x, p.nreduce, p.red_strides[0], p.nout, out);
        return;
    }
    switch (dtype) {
    case TWK_FLOAT32: reduce_all_float(op, x, &p, out); break;
    case TWK_FLOAT64: reduce_all_double(op, x, &p, out); break;
    case TWK_INT32: reduce_all_int32_t(op, x, &p, out); break;
    case TWK_INT64: reduce_all_int64_t(op, x, &p, out); break;
    case TWK_UINT8:
    case TWK_BOOL: reduce_all_uint8_t(op, x, &p, out); break;
    default: break;
    }
}
