/* Elementwise kernels: fill, strided copy and cast, the unary and binary
 * formulas of kernels/include/elementwise.h (the CPU's, compiled for the
 * device) and where. One thread per output element in grid-stride loops; the
 * N-d index walk is twc_index.h's, usually one or two axes once merged. */
#include <math.h>

#include "twc_internal.h"

/* ---- the formula tables, one overloaded device function per dtype ----------------
 * kernels/cpu/rows_per_dtype.h expands ROW_FUNCTION once per dtype with TWK_T
 * and TWK__SFX set; the op switch is uniform across a launch. */
#define FLOAT_CASE(name, takes, nattrs, f, i) TWK__FLOAT_##takes(case TWK_UNARY_##name: return TWK_FN_NAME(name)(v, p0, p1);)
#define INT_CASE(name, takes, nattrs, f, i) TWK__INT_##takes(case TWK_UNARY_##name: return TWK_FN_NAME(name)(v, p0, p1);)
#define ROW_FUNCTION(NAME, CASE)                                                                             \
    static __device__ __forceinline__ TWK_T unary_apply(twk_unary_op op, TWK_T v, double p0, double p1)      \
    {                                                                                                        \
        switch (op) { TWK_UNARY_OPS(CASE) default: return v; }                                               \
    }
#include "cpu/rows_per_dtype.h"
#undef FLOAT_CASE
#undef INT_CASE
#undef ROW_FUNCTION
#undef ROW_DISPATCH

#define FLOAT_CASE(name, takes, f, i)                                                                        \
    TWK__FLOAT_##takes(case TWK_BINARY_##name: *(TWK__OUT_##takes *)out = TWK_FN_NAME(name)(x, y); return;)
#define INT_CASE(name, takes, f, i)                                                                          \
    TWK__INT_##takes(case TWK_BINARY_##name: *(TWK__OUT_##takes *)out = TWK_FN_NAME(name)(x, y); return;)
#define ROW_FUNCTION(NAME, CASE)                                                                             \
    static __device__ __forceinline__ void binary_apply(twk_binary_op op, TWK_T x, TWK_T y, void *out)       \
    {                                                                                                        \
        switch (op) { TWK_BINARY_OPS(CASE) default: return; }                                                \
    }
#include "cpu/rows_per_dtype.h"
#undef FLOAT_CASE
#undef INT_CASE
#undef ROW_FUNCTION
#undef ROW_DISPATCH

static size_t binary_out_size(twk_binary_op op, twk_dtype dtype)
{
#define BOOL_RESULT(name, takes, f, i) TWK_BOOL_RESULT_##takes,
    static const bool bool_result[] = {TWK_BINARY_OPS(BOOL_RESULT)};
    return bool_result[op] ? 1 : twk_dtype_size(dtype);
}

/* ---- kernels ---------------------------------------------------------------------- */
template <typename T> __global__ void fill_kernel(T *dst, int64_t n, T value)
{
    TWC_FOR(i, n) dst[i] = value;
}

template <typename T> __global__ void copy_kernel(twc_walk w, char *dst, const char *src)
{
    TWC_FOR(i, w.numel)
    {
        int64_t off[2];
        twc_walk_offsets(&w, 2, i, off);
        ((T *)dst)[off[0]] = ((const T *)src)[off[1]];
    }
}

/* A copy whose innermost axis q is contiguous in dst and whose next axis p
 * is contiguous in src (a transpose: NHWC <-> NCHW, HWIO filters to
 * cuDNN's): one element per thread would read or write one float per
 * 32-byte sector. Each block moves a TILE x TILE square of (p, q) of one
 * batch index (blockIdx.z, then strided) through shared memory, reading
 * along p and writing along q, both coalesced. */
enum { TILE = 32, TILE_ROWS = 8 };
template <typename T>
__global__ void transpose_kernel(int64_t batch, int64_t np, int64_t nq, int64_t dst_b, int64_t dst_p, int64_t src_b,
                                 int64_t src_q, T *dst, const T *src)
{
    __shared__ T tile[TILE][TILE + 1];
    int64_t p0 = (int64_t)blockIdx.x * TILE, q0 = (int64_t)blockIdx.y * TILE;
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
        const T *s = src + b * src_b;
        T *d = dst + b * dst_b;
        for (int k = threadIdx.y; k < TILE; k += TILE_ROWS) {
            int64_t p = p0 + threadIdx.x, q = q0 + k;
            if (p < np && q < nq)
                tile[k][threadIdx.x] = s[p + q * src_q];
        }
        __syncthreads();
        for (int k = threadIdx.y; k < TILE; k += TILE_ROWS) {
            int64_t q = q0 + threadIdx.x, p = p0 + k;
            if (p < np && q < nq)
                d[p * dst_p + q] = tile[threadIdx.x][k];
        }
        __syncthreads();
    }
}

/* twk_load / twk_store of kernels/cpu/copy.c: through double, float to
 * integer truncating and saturating, NaN to 0, bool as nonzero. */
static __device__ double load_as_double(twk_dtype dtype, const char *p)
{
    switch (dtype) {
    case TWK_FLOAT32: return *(const float *)p;
    case TWK_FLOAT64: return *(const double *)p;
    case TWK_INT32: return *(const int32_t *)p;
    case TWK_INT64: return (double)*(const int64_t *)p;
    case TWK_UINT8: return *(const uint8_t *)p;
    default: return *(const uint8_t *)p ? 1.0 : 0.0;
    }
}

static __device__ int64_t saturate(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
    return (int64_t)v;
}

static __device__ void store_double(twk_dtype dtype, char *p, double v)
{
    switch (dtype) {
    case TWK_FLOAT32: *(float *)p = (float)v; break;
    case TWK_FLOAT64: *(double *)p = v; break;
    case TWK_INT32: *(int32_t *)p = (int32_t)saturate(v, -2147483648.0, 2147483647.0); break;
    case TWK_INT64: *(int64_t *)p = saturate(v, -9223372036854775808.0, 9223372036854775807.0); break;
    case TWK_UINT8: *(uint8_t *)p = (uint8_t)saturate(v, -9223372036854775808.0, 9223372036854775807.0); break;
    default: *(uint8_t *)p = v != 0.0; break;
    }
}

__global__ void cast_kernel(twc_walk w, twk_dtype dst_dtype, char *dst, int64_t dsz, twk_dtype src_dtype,
                            const char *src, int64_t ssz)
{
    TWC_FOR(i, w.numel)
    {
        int64_t off[2];
        twc_walk_offsets(&w, 2, i, off);
        store_double(dst_dtype, dst + off[0] * dsz, load_as_double(src_dtype, src + off[1] * ssz));
    }
}

template <typename T>
__global__ void unary_kernel(twk_unary_op op, twc_walk w, T *out, const T *x, double p0, double p1)
{
    TWC_FOR(i, w.numel)
    {
        int64_t off[2];
        twc_walk_offsets(&w, 2, i, off);
        out[off[0]] = unary_apply(op, x[off[1]], p0, p1);
    }
}

template <typename T>
__global__ void binary_kernel(twk_binary_op op, twc_walk w, char *out, int64_t osz, const T *a, const T *b)
{
    TWC_FOR(i, w.numel)
    {
        int64_t off[3];
        twc_walk_offsets(&w, 3, i, off);
        binary_apply(op, a[off[1]], b[off[2]], out + off[0] * osz);
    }
}

template <typename T> __global__ void where_kernel(twc_walk w, T *out, const uint8_t *cond, const T *a, const T *b)
{
    TWC_FOR(i, w.numel)
    {
        int64_t off[4];
        twc_walk_offsets(&w, 4, i, off);
        out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
    }
}

/* ---- entry points ------------------------------------------------------------------ */
/* The walk over a strided pass's operands, then twc__begin over its elements. */
static int walk_begin(twc_device *dev, twc_walk *w, int ndim, const int64_t *shape, int noperands,
                      const int64_t *const *strides)
{
    twc_walk_init(w, ndim, shape, noperands, strides);
    return twc__begin(dev, w->numel);
}

int twc_fill(twc_device *dev, twk_dtype dtype, int64_t n, void *dst, double value)
{
    int go = twc__begin(dev, n);
    if (go <= 0)
        return go;
    return twc__by_dtype(dtype, "fill", [&](auto p) {
        using T = TWC_TYPE(p);
        fill_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>((T *)dst, n, twc__value_as<T>(dtype, value));
    });
}

int twc_copy(twc_device *dev, size_t itemsize, int ndim, const int64_t *shape, void *dst, const int64_t *dst_strides,
             const void *src, const int64_t *src_strides)
{
    twc_walk w;
    const int64_t *const st[] = {dst_strides, src_strides};
    int go = walk_begin(dev, &w, ndim, shape, 2, st);
    if (go <= 0)
        return go;
    if (w.ndim == 1 && w.strides[0][0] == 1 && w.strides[1][0] == 1)
        return twc_copy_device(dev, dst, src, (size_t)w.numel * itemsize);
    int q = w.ndim - 1, p = w.ndim - 2;
    if ((w.ndim == 2 || w.ndim == 3) && w.strides[0][q] == 1 && w.strides[1][p] == 1) {
        int64_t batch = w.ndim == 3 ? w.shape[0] : 1, np = w.shape[p], nq = w.shape[q];
        int64_t tiles_p = (np + TILE - 1) / TILE, tiles_q = (nq + TILE - 1) / TILE;
        if (tiles_p <= INT32_MAX && tiles_q <= 65535) {
            dim3 grid((unsigned)tiles_p, (unsigned)tiles_q, (unsigned)(batch < 65535 ? batch : 65535));
            dim3 block(TILE, TILE_ROWS);
            int64_t dst_b = w.ndim == 3 ? w.strides[0][0] : 0, src_b = w.ndim == 3 ? w.strides[1][0] : 0;
            return twc__by_size(itemsize, "copy", [&](auto e) {
                using T = TWC_TYPE(e);
                transpose_kernel<T><<<grid, block, 0, dev->stream>>>(batch, np, nq, dst_b, w.strides[0][p], src_b,
                                                                     w.strides[1][q], (T *)dst, (const T *)src);
            });
        }
    }
    return twc__by_size(itemsize, "copy", [&](auto p) {
        copy_kernel<TWC_TYPE(p)><<<twc__grid(w.numel), TWC_THREADS, 0, dev->stream>>>(w, (char *)dst, (const char *)src);
    });
}

int twc_cast(twc_device *dev, twk_dtype dst_dtype, twk_dtype src_dtype, int ndim, const int64_t *shape, void *dst,
             const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twc_walk w;
    const int64_t *const st[] = {dst_strides, src_strides};
    int go = walk_begin(dev, &w, ndim, shape, 2, st);
    if (go <= 0)
        return go;
    cast_kernel<<<twc__grid(w.numel), TWC_THREADS, 0, dev->stream>>>(
        w, dst_dtype, (char *)dst, (int64_t)twk_dtype_size(dst_dtype), src_dtype, (const char *)src,
        (int64_t)twk_dtype_size(src_dtype));
    return twc__launched("cast");
}

int twc_unary(twc_device *dev, twk_unary_op op, twk_dtype dtype, int ndim, const int64_t *shape, void *out,
              const int64_t *out_strides, const void *x, const int64_t *x_strides, double p0, double p1)
{
    twc_walk w;
    const int64_t *const st[] = {out_strides, x_strides};
    int go = walk_begin(dev, &w, ndim, shape, 2, st);
    if (go <= 0)
        return go;
    return twc__by_dtype(dtype, "unary", [&](auto p) {
        using T = TWC_TYPE(p);
        unary_kernel<<<twc__grid(w.numel), TWC_THREADS, 0, dev->stream>>>(op, w, (T *)out, (const T *)x, p0, p1);
    });
}

int twc_binary(twc_device *dev, twk_binary_op op, twk_dtype in_dtype, int ndim, const int64_t *shape, void *out,
               const int64_t *out_strides, const void *a, const int64_t *a_strides, const void *b,
               const int64_t *b_strides)
{
    twc_walk w;
    const int64_t *const st[] = {out_strides, a_strides, b_strides};
    int go = walk_begin(dev, &w, ndim, shape, 3, st);
    if (go <= 0)
        return go;
    int64_t osz = (int64_t)binary_out_size(op, in_dtype);
    return twc__by_dtype(in_dtype, "binary", [&](auto p) {
        using T = TWC_TYPE(p);
        binary_kernel<<<twc__grid(w.numel), TWC_THREADS, 0, dev->stream>>>(op, w, (char *)out, osz, (const T *)a,
                                                                            (const T *)b);
    });
}

int twc_where(twc_device *dev, twk_dtype dtype, int ndim, const int64_t *shape, void *out, const int64_t *out_strides,
              const void *cond, const int64_t *cond_strides, const void *a, const int64_t *a_strides, const void *b,
              const int64_t *b_strides)
{
    twc_walk w;
    const int64_t *const st[] = {out_strides, cond_strides, a_strides, b_strides};
    int go = walk_begin(dev, &w, ndim, shape, 4, st);
    if (go <= 0)
        return go;
    return twc__by_size(twk_dtype_size(dtype), "where", [&](auto p) {
        using T = TWC_TYPE(p);
        where_kernel<<<twc__grid(w.numel), TWC_THREADS, 0, dev->stream>>>(w, (T *)out, (const uint8_t *)cond,
                                                                           (const T *)a, (const T *)b);
    });
}
