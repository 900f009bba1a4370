/* Kernels that move elements by index: gather, scatter-add, one-hot, concat,
 * pad, tile; and dropout, whose mask is engine/random.c's Philox stream. */
#include "twc_internal.h"
#include "twc_philox.h"

/* Launch KERNEL<T_> with T_ an unsigned type of ITEMSIZE bytes (elements
 * move as bits whatever the dtype), or fail for another size. */
static __device__ int64_t index_at(twk_dtype index_dtype, const void *indices, int64_t j)
{
    return index_dtype == TWK_INT32 ? (int64_t)((const int32_t *)indices)[j] : ((const int64_t *)indices)[j];
}

/* ---- gather ------------------------------------------------------------------------ */
template <typename T>
__global__ void gather_kernel(int64_t n, int64_t axis_size, int64_t inner, const T *params, twk_dtype index_dtype,
                              int64_t nindices, const void *indices, T *out)
{
    TWC_FOR(i, n)
    {
        int64_t j, k, o = twc_gather_row(nindices, inner, i, &j, &k);
        out[i] = params[twc_gather_source(axis_size, inner, o, index_at(index_dtype, indices, j), k)];
    }
}

int twc_gather(twc_device *dev, size_t itemsize, int64_t outer, int64_t axis_size, int64_t inner, const void *params,
               twk_dtype index_dtype, int64_t nindices, const void *indices, void *out)
{
    int64_t n = outer * nindices * inner;
    int go = twc__begin(dev, n);
    if (go <= 0)
        return go;
    return twc__by_size(itemsize, "gather", [&](auto p) {
        using T = TWC_TYPE(p);
        gather_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(n, axis_size, inner, (const T *)params,
                                                                      index_dtype, nindices, indices, (T *)out);
    });
}

/* ---- scatter-add: atomics, and a compare-and-swap on the enclosing word for
 * bytes (uint8 adds wrap, bool ors) --------------------------------------------------- */
static __device__ void add_byte(uint8_t *p, uint8_t v, bool logical_or)
{
    unsigned int *word = (unsigned int *)((uintptr_t)p & ~(uintptr_t)3);
    unsigned shift = (unsigned)((uintptr_t)p & 3) * 8;
    unsigned int old = *word, assumed;
    do {
        assumed = old;
        uint8_t cur = (uint8_t)(assumed >> shift);
        uint8_t next = logical_or ? (uint8_t)(cur || v) : (uint8_t)(cur + v);
        unsigned int repl = (assumed & ~(0xFFu << shift)) | ((unsigned int)next << shift);
        old = atomicCAS(word, assumed, repl);
    } while (old != assumed);
}

static __device__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
static __device__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
static __device__ void atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
static __device__ void atomic_add(int64_t *p, int64_t v)
{
    atomicAdd((unsigned long long *)p, (unsigned long long)v); /* two's complement: wraps as the CPU's */
}

template <typename T>
__global__ void scatter_kernel(int64_t n, int64_t axis_size, int64_t inner, const T *src, twk_dtype index_dtype,
                               int64_t nindices, const void *indices, T *out, int bytes_mode)
{
    TWC_FOR(i, n)
    {
        int64_t j, k, o = twc_gather_row(nindices, inner, i, &j, &k);
        int64_t idx = index_at(index_dtype, indices, j);
        if (idx < 0 || idx >= axis_size)
            continue;
        T *d = out + twc_gather_source(axis_size, inner, o, idx, k);
        if constexpr (sizeof(T) == 1)
            add_byte((uint8_t *)d, (uint8_t)src[i], bytes_mode == 2);
        else
            atomic_add(d, src[i]);
    }
}

int twc_scatter_add(twc_device *dev, twk_dtype dtype, int64_t outer, int64_t axis_size, int64_t inner, const void *src,
                    twk_dtype index_dtype, int64_t nindices, const void *indices, void *out)
{
    int64_t n = outer * nindices * inner;
    int go = twc__begin(dev, n);
    if (go <= 0)
        return go;
    /* scatter_kernel adds bytes as bool (2) or uint8 (1) */
    int mode = dtype == TWK_BOOL ? 2 : dtype == TWK_UINT8 ? 1 : 0;
    return twc__by_dtype(dtype, "scatter_add", [&](auto p) {
        using T = TWC_TYPE(p);
        scatter_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(n, axis_size, inner, (const T *)src, index_dtype,
                                                                       nindices, indices, (T *)out, mode);
    });
}

/* ---- one-hot ----------------------------------------------------------------------- */
template <typename T>
__global__ void one_hot_kernel(int64_t n, twk_dtype index_dtype, const void *indices, int64_t depth, T *out)
{
    TWC_FOR(i, n * depth)
    {
        int64_t r = i / depth, c = i - r * depth;
        out[i] = (T)(index_at(index_dtype, indices, r) == c ? 1 : 0);
    }
}

int twc_one_hot(twc_device *dev, twk_dtype dtype, twk_dtype index_dtype, int64_t n, const void *indices,
                int64_t depth, void *out)
{
    int go = twc__begin(dev, n * depth);
    if (go <= 0)
        return go;
    return twc__by_dtype(dtype, "one_hot", [&](auto p) {
        one_hot_kernel<<<twc__grid(n * depth), TWC_THREADS, 0, dev->stream>>>(n, index_dtype, indices, depth,
                                                                                (TWC_TYPE(p) *)out);
    });
}

/* ---- concat, pad, tile ----------------------------------------------------------- */
template <typename T>
__global__ void concat_kernel(int64_t n, int64_t size_j, int64_t start_j, int64_t total, int64_t inner, const T *in,
                              T *out)
{
    TWC_FOR(i, n) out[twc_concat_dest(size_j, start_j, total, inner, i)] = in[i];
}

int twc_concat(twc_device *dev, size_t itemsize, int n, const void *const *inputs, const int64_t *sizes, int64_t outer,
               int64_t inner, void *out)
{
    int64_t total = 0, start = 0;
    for (int j = 0; j < n; j++)
        total += sizes[j];
    int go = twc__begin(dev, outer * total * inner);
    if (go <= 0)
        return go;
    return twc__by_size(itemsize, "concat", [&](auto p) {
        using T = TWC_TYPE(p);
        for (int j = 0; j < n; j++) {
            int64_t count = outer * sizes[j] * inner;
            if (count > 0)
                concat_kernel<<<twc__grid(count), TWC_THREADS, 0, dev->stream>>>(count, sizes[j], start, total, inner,
                                                                                  (const T *)inputs[j], (T *)out);
            start += sizes[j];
        }
    });
}

template <typename T> __global__ void pad_kernel(twc_window_map m, const T *x, T value, T *out)
{
    TWC_FOR(i, m.numel)
    {
        int64_t src = twc_pad_source(&m, i);
        out[i] = src < 0 ? value : x[src];
    }
}

int twc_pad(twc_device *dev, twk_dtype dtype, int ndim, const int64_t *shape, const void *x, const int64_t *x_strides,
            const int64_t *paddings, double value, void *out)
{
    twc_window_map m;
    twc_pad_map_init(&m, ndim, shape, x_strides, paddings);
    int go = twc__begin(dev, m.numel);
    if (go <= 0)
        return go;
    return twc__by_dtype(dtype, "pad", [&](auto p) {
        using T = TWC_TYPE(p);
        pad_kernel<<<twc__grid(m.numel), TWC_THREADS, 0, dev->stream>>>(m, (const T *)x,
                                                                         twc__value_as<T>(dtype, value), (T *)out);
    });
}

template <typename T> __global__ void tile_kernel(twc_window_map m, const T *x, T *out)
{
    TWC_FOR(i, m.numel) out[i] = x[twc_tile_source(&m, i)];
}

int twc_tile(twc_device *dev, size_t itemsize, int ndim, const int64_t *shape, const void *x, const int64_t *x_strides,
             const int64_t *multiples, void *out)
{
    twc_window_map m;
    twc_tile_map_init(&m, ndim, shape, x_strides, multiples);
    int go = twc__begin(dev, m.numel);
    if (go <= 0)
        return go;
    return twc__by_size(itemsize, "tile", [&](auto p) {
        using T = TWC_TYPE(p);
        tile_kernel<<<twc__grid(m.numel), TWC_THREADS, 0, dev->stream>>>(m, (const T *)x, (T *)out);
    });
}

/* ---- dropout: tw_dropout's composite in one pass, the same operations in T:
 * keep = uniform >= (T)rate, y = (x * keep) / (T)(1 - rate) ---------------------- */
template <typename T>
__global__ void dropout_kernel(int64_t n, const T *x, T rate, T scale_div, uint64_t seed, uint64_t position, T *y)
{
    TWC_FOR(i, n)
    {
        T u;
        if constexpr (sizeof(T) == 4)
            u = twc_uniform_f32(seed, position + (uint64_t)i);
        else
            u = twc_uniform_f64(seed, position + (uint64_t)i);
        T keep = u >= rate ? (T)1 : (T)0;
        y[i] = (x[i] * keep) / scale_div;
    }
}

int twc_dropout(twc_device *dev, twk_dtype dtype, int64_t n, const void *x, double rate, uint64_t seed,
                uint64_t position, void *y)
{
    if (n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = twc__grid(n);
    if (dtype == TWK_FLOAT32)
        dropout_kernel<<<g, TWC_THREADS, 0, dev->stream>>>(n, (const float *)x, (float)rate, (float)(1 - rate), seed,
                                                           position, (float *)y);
    else if (dtype == TWK_FLOAT64)
        dropout_kernel<<<g, TWC_THREADS, 0, dev->stream>>>(n, (const double *)x, rate, 1 - rate, seed, position,
                                                           (double *)y);
    else
        return twc__fail("dropout: dtype %d is not a float type", dtype);
    return twc__launched("dropout");
}
