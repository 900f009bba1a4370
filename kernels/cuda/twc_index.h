/* The index arithmetic of the CUDA kernels: which element of which operand a
 * thread's linear index stands for. nvcc compiles these functions for the
 * device and the host; gcc compiles them for tests/test_cuda_index.c, which
 * checks them against the CPU kernels on machines without a GPU. Plain C
 * (no C++ in here), over int64 element indices and strides in elements. */
#ifndef TWC_INDEX_H
#define TWC_INDEX_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "../twk_dtype.h"

#ifdef __CUDACC__
#define TWC_HD static inline __host__ __device__
#else
#define TWC_HD static inline
#endif

/* Most operands one walk moves together (out, cond, a, b for where). */
#define TWC_MAX_OPS 4

/* ---- N-d walks -------------------------------------------------------------
 * Up to four operands of one shape, visited by the linear (row-major) index
 * of the element. Adjacent axes that every operand walks contiguously are
 * merged and size-1 axes dropped (as twk_coalesce), so most walks are one or
 * two axes and a thread does few divisions. Passed to kernels by value. */
typedef struct {
    int ndim;
    int64_t numel;
    int64_t shape[TWK_MAX_DIMS];
    int64_t strides[TWC_MAX_OPS][TWK_MAX_DIMS];
} twc_walk;

TWC_HD void twc_walk_init(twc_walk *w, int ndim, const int64_t *shape, int nops, const int64_t *const *strides)
{
    w->ndim = 0;
    w->numel = 1;
    for (int d = 0; d < ndim; d++) {
        w->numel *= shape[d];
        if (shape[d] == 1)
            continue; /* never moves a pointer */
        int last = w->ndim - 1;
        bool merge = last >= 0;
        for (int k = 0; k < nops && merge; k++)
            merge = w->strides[k][last] == strides[k][d] * shape[d];
        if (merge) {
            w->shape[last] *= shape[d];
            for (int k = 0; k < nops; k++)
                w->strides[k][last] = strides[k][d];
        } else {
            w->shape[w->ndim] = shape[d];
            for (int k = 0; k < nops; k++)
                w->strides[k][w->ndim] = strides[k][d];
            w->ndim++;
        }
    }
    if (w->ndim == 0) { /* a scalar or all axes of size 1 */
        w->ndim = 1;
        w->shape[0] = 1;
        for (int k = 0; k < nops; k++)
            w->strides[k][0] = 0;
    }
}

/* Element offsets of linear index i (< numel) for the first nops operands.
 * The outermost axis takes what is left of i undivided: a 64-bit division
 * per element is a long instruction sequence on a GPU, and a walk merged
 * to one axis (every dense elementwise op) then needs none. */
TWC_HD void twc_walk_offsets(const twc_walk *w, int nops, int64_t i, int64_t *off)
{
    for (int k = 0; k < nops; k++)
        off[k] = 0;
    for (int d = w->ndim - 1; d > 0; d--) {
        int64_t n = w->shape[d], q = i / n, r = i - q * n;
        i = q;
        for (int k = 0; k < nops; k++)
            off[k] += r * w->strides[k][d];
    }
    for (int k = 0; k < nops; k++)
        off[k] += i * w->strides[k][0];
}

/* Offset of element `index` (< the product of shape) of a row-major
 * sub-space (n axes); the outermost axis undivided, as twc_walk_offsets. */
TWC_HD int64_t twc_subspace_offset(int n, const int64_t *shape, const int64_t *strides, int64_t index)
{
    if (n <= 0)
        return 0;
    int64_t off = 0;
    for (int d = n - 1; d > 0; d--) {
        int64_t q = index / shape[d];
        off += (index - q * shape[d]) * strides[d];
        index = q;
    }
    return off + index * strides[0];
}

/* ---- reductions --------------------------------------------------------------
 * x (ndim, shape, strides) reduced over the axes with reduce[d]: output
 * element o (contiguous, kept axes in order) reads the nreduce elements at
 * twc_reduce_base(m, o) + twc_reduce_step(m, r). An arg reduction reduces
 * one axis, so r is the index along it. */
typedef struct {
    int nkeep, nred;
    int64_t nout, nreduce;
    int64_t keep_shape[TWK_MAX_DIMS], keep_strides[TWK_MAX_DIMS];
    int64_t red_shape[TWK_MAX_DIMS], red_strides[TWK_MAX_DIMS];
} twc_reduce_map;

/* Merge the axes of one sub-space in place (twc_walk_init for one operand). */
TWC_HD int twc_merge_axes(int n, int64_t *shape, int64_t *strides)
{
    twc_walk w;
    const int64_t *st[1] = {strides};
    twc_walk_init(&w, n, shape, 1, st);
    for (int d = 0; d < w.ndim; d++) {
        shape[d] = w.shape[d];
        strides[d] = w.strides[0][d];
    }
    return w.ndim;
}

TWC_HD void twc_reduce_map_init(twc_reduce_map *m, int ndim, const int64_t *shape, const int64_t *strides,
                                const bool *reduce)
{
    m->nkeep = m->nred = 0;
    m->nout = m->nreduce = 1;
    for (int d = 0; d < ndim; d++) {
        if (reduce[d]) {
            m->red_shape[m->nred] = shape[d];
            m->red_strides[m->nred++] = strides[d];
            m->nreduce *= shape[d];
        } else {
            m->keep_shape[m->nkeep] = shape[d];
            m->keep_strides[m->nkeep++] = strides[d];
            m->nout *= shape[d];
        }
    }
    m->nkeep = twc_merge_axes(m->nkeep, m->keep_shape, m->keep_strides);
    m->nred = twc_merge_axes(m->nred, m->red_shape, m->red_strides);
}

TWC_HD int64_t twc_reduce_base(const twc_reduce_map *m, int64_t o)
{
    return twc_subspace_offset(m->nkeep, m->keep_shape, m->keep_strides, o);
}

TWC_HD int64_t twc_reduce_step(const twc_reduce_map *m, int64_t r)
{
    return twc_subspace_offset(m->nred, m->red_shape, m->red_strides, r);
}

/* ---- an axis of a contiguous tensor as (outer, n, inner) -------------------------
 * Softmax and the cross-entropies work on rows along one axis: row `row`
 * (of outer * inner) has its element a at twc_axis_offset(n, inner, row, a). */
TWC_HD int64_t twc_axis_offset(int64_t n, int64_t inner, int64_t row, int64_t a)
{
    int64_t o = row / inner, k = row - o * inner;
    return (o * n + a) * inner + k;
}

/* ---- concat: input j (outer, size_j, inner) lands at axis offset start_j of
 * the output (outer, total, inner). Destination of input element i. */
TWC_HD int64_t twc_concat_dest(int64_t size_j, int64_t start_j, int64_t total, int64_t inner, int64_t i)
{
    int64_t row = size_j * inner, o = i / row, rem = i - o * row;
    return o * total * inner + start_j * inner + rem;
}

/* ---- pad and tile: output element i (contiguous) from the strided input ------ */
typedef struct {
    int ndim;
    int64_t numel; /* of the output */
    int64_t out_shape[TWK_MAX_DIMS], in_shape[TWK_MAX_DIMS], in_strides[TWK_MAX_DIMS];
    int64_t before[TWK_MAX_DIMS]; /* pad only: amounts before each axis */
} twc_window_map;

/* paddings: ndim pairs (before, after), as tw_pad. */
TWC_HD void twc_pad_map_init(twc_window_map *m, int ndim, const int64_t *shape, const int64_t *strides,
                             const int64_t *paddings)
{
    m->ndim = ndim;
    m->numel = 1;
    for (int d = 0; d < ndim; d++) {
        m->in_shape[d] = shape[d];
        m->in_strides[d] = strides[d];
        m->before[d] = paddings[2 * d];
        m->out_shape[d] = paddings[2 * d] + shape[d] + paddings[2 * d + 1];
        m->numel *= m->out_shape[d];
    }
}

/* Input offset of output element i, or -1 where it is padding. */
TWC_HD int64_t twc_pad_source(const twc_window_map *m, int64_t i)
{
    int64_t off = 0;
    for (int d = m->ndim - 1; d >= 0; d--) {
        int64_t q = i / m->out_shape[d], c = i - q * m->out_shape[d] - m->before[d];
        i = q;
        if (c < 0 || c >= m->in_shape[d])
            return -1;
        off += c * m->in_strides[d];
    }
    return off;
}

TWC_HD void twc_tile_map_init(twc_window_map *m, int ndim, const int64_t *shape, const int64_t *strides,
                              const int64_t *multiples)
{
    m->ndim = ndim;
    m->numel = 1;
    for (int d = 0; d < ndim; d++) {
        m->in_shape[d] = shape[d];
        m->in_strides[d] = strides[d];
        m->before[d] = 0;
        m->out_shape[d] = shape[d] * multiples[d];
        m->numel *= m->out_shape[d];
    }
}

TWC_HD int64_t twc_tile_source(const twc_window_map *m, int64_t i)
{
    int64_t off = 0;
    for (int d = m->ndim - 1; d >= 0; d--) {
        int64_t q = i / m->out_shape[d], c = i - q * m->out_shape[d];
        i = q;
        off += (c % m->in_shape[d]) * m->in_strides[d];
    }
    return off;
}

/* ---- gather / scatter-add / one-hot: (outer, axis, inner) blocks ---------------
 * Element i of the gathered output (outer, nindices, inner) reads params at
 * (o, index, k); the scatter-add of src element i adds into the same place. */
TWC_HD int64_t twc_gather_row(int64_t nindices, int64_t inner, int64_t i, int64_t *j, int64_t *k)
{
    int64_t row = i / inner, o = row / nindices;
    *k = i - row * inner;
    *j = row - o * nindices;
    return o;
}

TWC_HD int64_t twc_gather_source(int64_t axis_size, int64_t inner, int64_t o, int64_t index, int64_t k)
{
    return (o * axis_size + index) * inner + k;
}

#endif
