/* CPU kernels that move rows by index: gather, its adjoint scatter-add,
 * one-hot encoding and tiling. Same conventions as cpu_kernels.h: raw
 * pointers, no allocation, no messages; the engine validates shapes first.
 *
 * The indexed kernels see their tensors as (outer, axis, inner) blocks of
 * contiguous row-major memory: `outer` is the product of the dimensions
 * before the indexed axis, `inner` the product of those after it. */
#ifndef TWK_GATHER_KERNELS_H
#define TWK_GATHER_KERNELS_H

#include "cpu_kernels.h"

/* Index i of an int32 or int64 index buffer, as int64. */
static inline int64_t twk_index_at(twk_dtype index_dtype, const void *indices, int64_t i)
{
    return index_dtype == TWK_INT32 ? (int64_t)((const int32_t *)indices)[i] : ((const int64_t *)indices)[i];
}

/* Position of the first of n indices outside [0, limit), or -1 when all are
 * inside. */
int64_t twk_index_check(twk_dtype index_dtype, int64_t n, const void *indices, int64_t limit);

/* out[o, j, k] = params[o, indices[j], k] for params (outer, axis_size,
 * inner) and out (outer, nindices, inner), both contiguous. Indices must be
 * in range (twk_index_check). Any dtype: rows move as bytes. */
void twk_gather(size_t itemsize, int64_t outer, int64_t axis_size, int64_t inner, const void *params,
                twk_dtype index_dtype, int64_t nindices, const void *indices, void *out);

/* out = zeros (outer, axis_size, inner); out[o, indices[j], k] += src[o, j, k]
 * for src (outer, nindices, inner), both contiguous. Repeated indices
 * accumulate (bool: logical or). Indices outside [0, axis_size) are skipped.
 * The result does not depend on the number of threads. */
void twk_scatter_add(twk_dtype dtype, int64_t outer, int64_t axis_size, int64_t inner, const void *src,
                     twk_dtype index_dtype, int64_t nindices, const void *indices, void *out);

/* out (n, depth), contiguous: 1 where the column equals indices[i], else 0,
 * in dtype. Indices outside [0, depth) give a row of zeros. */
void twk_one_hot(twk_dtype dtype, twk_dtype index_dtype, int64_t n, const void *indices, int64_t depth, void *out);

/* out (contiguous, shape[d] * multiples[d] along each axis) = x repeated
 * multiples[d] times along each axis d; x may be strided. */
void twk_tile(size_t itemsize, int ndim, const int64_t *shape, const void *x, const int64_t *x_strides,
              const int64_t *multiples, void *out);

#endif
