/* Kernels that move rows by index: gather, scatter-add (gather's adjoint),
 * one-hot and tile. Rows move with memcpy whatever the dtype; only
 * scatter-add looks at values. */
#include <string.h>

#include "gather_kernels.h"
#include "parallel.h"

int64_t twk_index_check(twk_dtype index_dtype, int64_t n, const void *indices, int64_t limit)
{
    if (index_dtype == TWK_INT32) {
        const int32_t *ix = indices;
        for (int64_t i = 0; i < n; i++)
            if (ix[i] < 0 || ix[i] >= limit)
                return i;
    } else {
        const int64_t *ix = indices;
        for (int64_t i = 0; i < n; i++)
            if (ix[i] < 0 || ix[i] >= limit)
                return i;
    }
    return -1;
}

void twk_gather(size_t itemsize, int64_t outer, int64_t axis_size, int64_t inner, const void *params,
                twk_dtype index_dtype, int64_t nindices, const void *indices, void *out)
{
    int64_t rows = outer * nindices;
    size_t row_bytes = (size_t)inner * itemsize;
    if (rows == 0 || row_bytes == 0)
        return;
    TWK_PARALLEL_FOR(twk_parallel(rows * inner) && rows > 1, ,
    for (int64_t r = 0; r < rows; r++) {
        int64_t o = r / nindices, j = r % nindices;
        int64_t idx = twk_index_at(index_dtype, indices, j);
        memcpy((char *)out + (size_t)r * row_bytes, (const char *)params + (size_t)(o * axis_size + idx) * row_bytes,
               row_bytes);
    });
}

/* Columns per task of scatter-add: tasks own disjoint (outer, column block)
 * pieces of the output, so threads never add into the same element. */
#define SCATTER_BLOCK 1024

#define SCATTER_ROWS(T, ADD)                                                                                   \
    static void scatter_##T(int64_t o, int64_t c0, int64_t c1, int64_t axis_size, int64_t inner, const T *src, \
                            twk_dtype index_dtype, int64_t nindices, const void *indices, T *out)               \
    {                                                                                                          \
        for (int64_t j = 0; j < nindices; j++) {                                                               \
            int64_t idx = twk_index_at(index_dtype, indices, j);                                               \
            if (idx < 0 || idx >= axis_size)                                                                   \
                continue;                                                                                      \
            T *d = out + (o * axis_size + idx) * inner;                                                        \
            const T *s = src + (o * nindices + j) * inner;                                                     \
            for (int64_t c = c0; c < c1; c++)                                                                  \
                ADD;                                                                                           \
        }                                                                                                      \
    }

SCATTER_ROWS(float, d[c] += s[c])
SCATTER_ROWS(double, d[c] += s[c])
SCATTER_ROWS(int32_t, d[c] = (int32_t)((uint32_t)d[c] + (uint32_t)s[c])) /* wraps, no UB */
SCATTER_ROWS(int64_t, d[c] = (int64_t)((uint64_t)d[c] + (uint64_t)s[c]))
SCATTER_ROWS(uint8_t, d[c] = (uint8_t)(d[c] + s[c]))

static void scatter_bool(int64_t o, int64_t c0, int64_t c1, int64_t axis_size, int64_t inner, const uint8_t *src,
                         twk_dtype index_dtype, int64_t nindices, const void *indices, uint8_t *out)
{
    for (int64_t j = 0; j < nindices; j++) {
        int64_t idx = twk_index_at(index_dtype, indices, j);
        if (idx < 0 || idx >= axis_size)
            continue;
        uint8_t *d = out + (o * axis_size + idx) * inner;
        const uint8_t *s = src + (o * nindices + j) * inner;
        for (int64_t c = c0; c < c1; c++)
            d[c] = d[c] || s[c];
    }
}

void twk_scatter_add(twk_dtype dtype, int64_t outer, int64_t axis_size, int64_t inner, const void *src,
                     twk_dtype index_dtype, int64_t nindices, const void *indices, void *out)
{
    int64_t total = outer * axis_size * inner;
    if (total == 0)
        return;
    memset(out, 0, (size_t)total * twk_dtype_size(dtype));
    if (nindices == 0 || inner == 0)
        return;
    int64_t nblocks = (inner + SCATTER_BLOCK - 1) / SCATTER_BLOCK;
    int64_t tasks = outer * nblocks;
    TWK_PARALLEL_FOR(twk_parallel(outer * nindices * inner) && tasks > 1, ,
    for (int64_t t = 0; t < tasks; t++) {
        int64_t o = t / nblocks, b = t % nblocks;
        int64_t c0 = b * SCATTER_BLOCK, c1 = c0 + SCATTER_BLOCK < inner ? c0 + SCATTER_BLOCK : inner;
        switch (dtype) {
        case TWK_FLOAT32: scatter_float(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        case TWK_FLOAT64: scatter_double(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        case TWK_INT32: scatter_int32_t(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        case TWK_INT64: scatter_int64_t(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        case TWK_UINT8: scatter_uint8_t(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        case TWK_BOOL: scatter_bool(o, c0, c1, axis_size, inner, src, index_dtype, nindices, indices, out); break;
        default: break;
        }
    });
}

void twk_one_hot(twk_dtype dtype, twk_dtype index_dtype, int64_t n, const void *indices, int64_t depth, void *out)
{
    twk_fill(dtype, n * depth, out, 0.0);
    size_t itemsize = twk_dtype_size(dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx = twk_index_at(index_dtype, indices, i);
        if (idx >= 0 && idx < depth)
            twk_store(dtype, (char *)out + (size_t)(i * depth + idx) * itemsize, 1.0);
    }
}

void twk_tile(size_t itemsize, int ndim, const int64_t *shape, const void *x, const int64_t *x_strides,
              const int64_t *multiples, void *out)
{
    if (ndim == 0) {
        memcpy(out, x, itemsize);
        return;
    }
    int64_t oshape[TWK_MAX_DIMS], rows = 1;
    for (int d = 0; d < ndim; d++) {
        oshape[d] = shape[d] * multiples[d];
        if (d < ndim - 1)
            rows *= oshape[d];
    }
    int64_t last = ndim - 1, width = shape[last], reps = multiples[last];
    int64_t orow = width * reps, step = x_strides[last];
    if (rows == 0 || orow == 0)
        return;
    size_t width_bytes = (size_t)width * itemsize;
    TWK_PARALLEL_FOR(twk_parallel(rows * orow) && rows > 1, ,
    for (int64_t r = 0; r < rows; r++) {
        /* Output row r reads input row (i_d mod shape[d]) along each outer axis. */
        int64_t rem = r, off = 0;
        for (int d = ndim - 2; d >= 0; d--) {
            off += (rem % oshape[d] % shape[d]) * x_strides[d];
            rem /= oshape[d];
        }
        const char *s = (const char *)x + off * (int64_t)itemsize;
        char *dst = (char *)out + (size_t)(r * orow) * itemsize;
        if (step == 1) {
            memcpy(dst, s, width_bytes);
        } else {
            for (int64_t i = 0; i < width; i++)
                memcpy(dst + (size_t)i * itemsize, s + i * step * (int64_t)itemsize, itemsize);
        }
        for (int64_t k = 1; k < reps; k++)
            memcpy(dst + (size_t)k * width_bytes, dst, width_bytes);
    });
}
