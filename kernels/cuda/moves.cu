/* Kernels that move elements by index: gather, scatter-add, one-hot, concat,
 * pad, tile; and dropout, whose mask is engine/random.c's Philox stream. */
#include "twc_internal.h"
#include "twc_philox.h"

/* Launch KERNEL<T_> with T_ an unsigned type of ITEMSIZE bytes (elements
 * move as bits whatever the dtype), or fail for another size. */
#define BY_SIZE(ITEMSIZE, WHAT, KERNEL, GRID, ...)                                                            \
    switch (ITEMSIZE) {                                                                                      \
    case 1: { typedef uint8_t T_; KERNEL<T_><<<GRID, TWC_THREADS, 0, dev->stream>>>(__VA_ARGS__); break; }                      \
    case 2: { typedef uint16_t T_; KERNEL<T_><<<GRID, TWC_THREADS, 0, dev->stream>>>(__VA_ARGS__); break; }                     \
    case 4: { typedef uint32_t T_; KERNEL<T_><<<GRID, TWC_THREADS, 0, dev->stream>>>(__VA_ARGS__); break; }                     \
    case 8: { typedef uint64_t T_; KERNEL<T_><<<GRID, TWC_THREADS, 0, dev->stream>>>(__VA_ARGS__); break; }                     \
    default: return twc__fail("%s: unsupported element size %zu", WHAT, (size_t)(ITEMSIZE));                  \
    }

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
    if (n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    BY_SIZE(itemsize, "gather", gather_kernel, twc__grid(n), n, axis_size, inner, (const T_ *)params, index_dtype,
            nindices, indices, (T_ *)out)
    return twc__launched("gather");
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
    if (n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = twc__grid(n);
    cudaStream_t s = dev->stream;
    switch (dtype) {
    case TWK_FLOAT32:
        scatter_kernel<<<g, TWC_THREADS, 0, s>>>(n, axis_size, inner, (const float *)src, index_dtype, nindices,
                                                 indices, (float *)out, 0);
        break;
    case TWK_FLOAT64:
        scatter_kernel<<<g, TWC_THREADS, 0, s>>>(n, axis_size, inner, (const double *)src, index_dtype, nindices,
                                                 indices, (double *)out, 0);
        break;
    case TWK_INT32:
        scatter_kernel<<<g, TWC_THREADS, 0, s>>>(n, axis_size, inner, (const int32_t *)src, index_dtype, nindices,
                                                 indices, (int32_t *)out, 0);
        break;
    case TWK_INT64:
        scatter_kernel<<<g, TWC_THREADS, 0, s>>>(n, axis_size, inner, (const int64_t *)src, index_dtype, nindices,
                                                 indices, (int64_t *)out, 0);
        break;
    case TWK_UINT8:
    case TWK_BOOL:
        scatter_kernel<<<g, TWC_THREADS, 0, s>>>(n, axis_size, inner, (const uint8_t *)src, index_dtype, nindices,
                                                 indices, (uint8_t *)out, dtype == TWK_BOOL ? 2 : 1);
        break;
    default: return twc__fail("scatter_add: unknown dtype %d", dtype);
    }
    return twc__launched("scatter_add");
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
    if (n * depth == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = twc__grid(n * depth);
    cudaStream_t s = dev->stream;
    switch (dtype) {
    case TWK_FLOAT32: one_hot_kernel<<<g, TWC_THREADS, 0, s>>>(n, index_dtype, indices, depth, (float *)out); break;
    case TWK_FLOAT64: one_hot_kernel<<<g, TWC_THREADS, 0, s>>>(n, index_dtype, indices, depth, (double *)out); break;
    case TWK_INT32: one_hot_kernel<<<g, TWC_THREADS, 0, s>>>(n, index_dtype, indices, depth, (int32_t *)out); break;
    case TWK_INT64: one_hot_kernel<<<g, TWC_THREADS, 0, s>>>(n, index_dtype, indices, depth, (int64_t *)out); break;
    case TWK_UINT8:
    case TWK_BOOL: one_hot_kernel<<<g, TWC_THREADS, 0, s>>>(n, index_dtype, indices, depth, (uint8_t *)out); break;
    default: return twc__fail("one_hot: unknown dtype %d", dtype);
    }
    return twc__launched("one_hot");
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
    if (twc__use(dev) < 0)
        return -1;
    for (int j = 0; j < n; j++) {
        int64_t count = outer * sizes[j] * inner;
        if (count > 0) {
            BY_SIZE(itemsize, "concat", concat_kernel, twc__grid(count), count, sizes[j], start, total, inner,
                    (const T_ *)inputs[j], (T_ *)out)
        }
        start += sizes[j];
    }
    return twc__launched("concat");
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
    if (m.numel == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = twc__grid(m.numel);
    cudaStream_t s = dev->stream;
    switch (dtype) {
    case TWK_FLOAT32: pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const float *)x, (float)value, (float *)out); break;
    case TWK_FLOAT64: pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const double *)x, value, (double *)out); break;
    case TWK_INT32: pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const int32_t *)x, (int32_t)value, (int32_t *)out); break;
    case TWK_INT64: pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const int64_t *)x, (int64_t)value, (int64_t *)out); break;
    case TWK_UINT8:
        pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const uint8_t *)x, (uint8_t)(int64_t)value, (uint8_t *)out);
        break;
    case TWK_BOOL:
        pad_kernel<<<g, TWC_THREADS, 0, s>>>(m, (const uint8_t *)x, (uint8_t)(value != 0.0), (uint8_t *)out);
        break;
    default: return twc__fail("pad: unknown dtype %d", dtype);
    }
    return twc__launched("pad");
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
    if (m.numel == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    BY_SIZE(itemsize, "tile", tile_kernel, twc__grid(m.numel), m, (const T_ *)x, (T_ *)out)
    return twc__launched("tile");
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
