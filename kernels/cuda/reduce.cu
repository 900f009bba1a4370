/* Reductions over any axes, softmax and log-softmax along an axis, and the
 * fused softmax cross-entropies. One block of TWC_THREADS per output element
 * (grid-stride over outputs): each thread folds a strided share of the
 * reduced elements, then the block combines the shares in shared memory.
 * Float sums accumulate in double, as the CPU's; the order differs, so the
 * last bits may too. NaN propagates through max and min and wins arg
 * reductions at its first position, as kernels/cpu/reduce.c. */
#include <math.h>

#include "cpu/cpu_kernels.h"
#include "twc_internal.h"

/* The accumulator of a sum or product: double for floats, int64 else. */
template <typename T> struct acc_of { typedef int64_t type; };
template <> struct acc_of<float> { typedef double type; };
template <> struct acc_of<double> { typedef double type; };

template <typename A> static __device__ A max_step(A acc, A v)
{
    return (v > acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc;
}
template <typename A> static __device__ A min_step(A acc, A v)
{
    return (v < acc || v != v || acc != acc) ? (acc != acc ? acc : v) : acc;
}

/* Combine every thread's value with f; thread 0 gets the result. */
template <typename A, typename F> static __device__ A block_combine(A v, F f)
{
    __shared__ A part[TWC_THREADS];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int half = TWC_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            part[threadIdx.x] = f(part[threadIdx.x], part[threadIdx.x + half]);
        __syncthreads();
    }
    A r = part[0];
    __syncthreads(); /* part is reused by the next call */
    return r;
}

template <typename T> __global__ void reduce_kernel(int op, twc_reduce_map m, const T *x, void *out)
{
    typedef typename acc_of<T>::type A;
    for (int64_t o = blockIdx.x; o < m.nout; o += gridDim.x) {
        const T *base = x + twc_reduce_base(&m, o);
        if (op == TWK_SUM || op == TWK_PROD) {
            A acc = op == TWK_SUM ? 0 : 1;
            for (int64_t r = threadIdx.x; r < m.nreduce; r += blockDim.x) {
                A v = (A)base[twc_reduce_step(&m, r)];
                acc = op == TWK_SUM ? acc + v : acc * v;
            }
            acc = block_combine(acc, [op](A a, A b) { return op == TWK_SUM ? a + b : a * b; });
            if (threadIdx.x == 0)
                ((T *)out)[o] = (T)acc;
        } else if (op == TWK_RMAX || op == TWK_RMIN) {
            T acc = base[0];
            for (int64_t r = threadIdx.x; r < m.nreduce; r += blockDim.x) {
                T v = base[twc_reduce_step(&m, r)];
                acc = op == TWK_RMAX ? max_step(acc, v) : min_step(acc, v);
            }
            acc = block_combine(acc, [op](T a, T b) { return op == TWK_RMAX ? max_step(a, b) : min_step(a, b); });
            if (threadIdx.x == 0)
                ((T *)out)[o] = acc;
        } else {
            /* (value, index): the first NaN, else the best value at its first index */
            bool want_max = op == TWK_ARGMAX;
            int64_t best = -1;
            T bv = 0;
            for (int64_t r = threadIdx.x; r < m.nreduce; r += blockDim.x) {
                T v = base[twc_reduce_step(&m, r)];
                if (best < 0 || (bv == bv && (v != v || (want_max ? v > bv : v < bv)))) {
                    bv = v;
                    best = r;
                }
            }
            struct pick {
                T v;
                int64_t i;
            };
            pick p = block_combine(pick{bv, best}, [want_max](pick a, pick b) {
                if (a.i < 0 || b.i < 0)
                    return a.i < 0 ? b : a;
                bool an = a.v != a.v, bn = b.v != b.v;
                if (an || bn)
                    return an && bn ? (a.i < b.i ? a : b) : (an ? a : b);
                if (a.v == b.v)
                    return a.i < b.i ? a : b;
                return (want_max ? a.v > b.v : a.v < b.v) ? a : b;
            });
            if (threadIdx.x == 0)
                ((int64_t *)out)[o] = p.i;
        }
    }
}

static unsigned blocks_for(int64_t n)
{
    return (unsigned)(n < 1 ? 1 : (n > 65535 * 16 ? 65535 * 16 : n));
}

/* ---- column sums: out[c] = sum over r of x[r * rs + c] -------------------------------
 * The batch statistics and bias gradients of NHWC activations: few outputs
 * (the channels), each over many rows. A block per output would read
 * across the rows (one float per 32-byte sector) on as many blocks as there
 * are channels; here a block of COL_W x COL_H threads takes COL_W
 * neighbouring columns (coalesced reads) over one chunk of rows, writes its
 * partial sums (double) and a second kernel adds the chunks' partials, a
 * warp a column in a fixed order, so the result does not depend on
 * scheduling. */

template <typename T>
__global__ void column_partials(int64_t nrows, int64_t ncols, int64_t rs, int64_t chunk, const T *x, double *part)
{
    __shared__ double share[COL_H][COL_W + 1];
    int64_t c = (int64_t)blockIdx.x * COL_W + threadIdx.x;
    int64_t r0 = (int64_t)blockIdx.y * chunk, r1 = r0 + chunk < nrows ? r0 + chunk : nrows;
    double acc = 0;
    if (c < ncols)
        for (int64_t r = r0 + threadIdx.y; r < r1; r += COL_H)
            acc += (double)x[r * rs + c];
    share[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < ncols) {
        double t = 0;
        for (int k = 0; k < COL_H; k++)
            t += share[k][threadIdx.x];
        part[blockIdx.y * ncols + c] = t;
    }
}

template <typename T> __global__ void column_finish(int64_t nparts, int64_t ncols, const double *part, T *out)
{
    TWC_FOR_WARP(c, lane, ncols)
    {
        double t = twc__warp_total(nparts, ncols, part, c, lane);
        if (lane == 0)
            out[c] = (T)t;
    }
}

/* 1 when the float sum of m was taken as column sums, 0 when m is not of
 * that form, -1 on an error. */
static int column_sum(twc_device *dev, twk_dtype dtype, const twc_reduce_map *m, const void *x, void *out)
{
    if ((dtype != TWK_FLOAT32 && dtype != TWK_FLOAT64) || m->nkeep != 1 || m->keep_strides[0] != 1 ||
        m->nred != 1 || m->nreduce < 4 * COL_H)
        return 0;
    int64_t ncols = m->nout, nrows = m->nreduce, rs = m->red_strides[0], chunk;
    int64_t cblocks = (ncols + COL_W - 1) / COL_W, nparts = twc__column_parts(nrows, ncols, &chunk);
    if (cblocks > 65535 * 16)
        return 0;
    double *part = (double *)twc_alloc(dev, (size_t)(nparts * ncols) * sizeof(double));
    if (!part)
        return twc__fail("sum: out of device memory for %lld partial sums", (long long)(nparts * ncols));
    dim3 grid((unsigned)cblocks, (unsigned)nparts), block(COL_W, COL_H);
    cudaStream_t s = dev->stream;
    if (dtype == TWK_FLOAT32) {
        column_partials<<<grid, block, 0, s>>>(nrows, ncols, rs, chunk, (const float *)x, part);
        column_finish<<<twc__grid(ncols * 32), TWC_THREADS, 0, s>>>(nparts, ncols, part, (float *)out);
    } else {
        column_partials<<<grid, block, 0, s>>>(nrows, ncols, rs, chunk, (const double *)x, part);
        column_finish<<<twc__grid(ncols * 32), TWC_THREADS, 0, s>>>(nparts, ncols, part, (double *)out);
    }
    twc_free(dev, part); /* reused only by later work on the same stream */
    return twc__launched("sum") < 0 ? -1 : 1;
}

int twc_reduce(twc_device *dev, int op, twk_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides,
               const void *x, const bool *reduce, void *out)
{
    twc_reduce_map m;
    twc_reduce_map_init(&m, ndim, shape, strides, reduce);
    if (m.nreduce == 0 || m.nout == 0)
        return 0; /* as the CPU kernel: the engine fills sums of nothing */
    if (twc__use(dev) < 0)
        return -1;
    int column = op == TWK_SUM ? column_sum(dev, dtype, &m, x, out) : 0;
    if (column != 0)
        return column < 0 ? -1 : 0;
    unsigned g = blocks_for(m.nout);
    cudaStream_t s = dev->stream;
    switch (dtype) {
    case TWK_FLOAT32: reduce_kernel<<<g, TWC_THREADS, 0, s>>>(op, m, (const float *)x, out); break;
    case TWK_FLOAT64: reduce_kernel<<<g, TWC_THREADS, 0, s>>>(op, m, (const double *)x, out); break;
    case TWK_INT32: reduce_kernel<<<g, TWC_THREADS, 0, s>>>(op, m, (const int32_t *)x, out); break;
    case TWK_INT64: reduce_kernel<<<g, TWC_THREADS, 0, s>>>(op, m, (const int64_t *)x, out); break;
    case TWK_UINT8:
    case TWK_BOOL: reduce_kernel<<<g, TWC_THREADS, 0, s>>>(op, m, (const uint8_t *)x, out); break;
    default: return twc__fail("reduce: unknown dtype %d", dtype);
    }
    return twc__launched("reduce");
}

/* ---- softmax along an axis: engine/ops/softmax.c's composite, fused ---------------
 * z = x - max (0 where the max is not finite); softmax = exp(z) / sum exp(z),
 * log-softmax = z - log(sum exp(z)), the sum in double rounded to T. */
template <typename T>
__global__ void softmax_kernel(bool log_out, int64_t rows, int64_t n, int64_t inner, const T *x, T *y)
{
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        T m = -INFINITY;
        for (int64_t a = threadIdx.x; a < n; a += blockDim.x)
            m = max_step(m, x[twc_axis_offset(n, inner, row, a)]);
        m = block_combine(m, [](T p, T q) { return max_step(p, q); });
        T shift = isfinite((double)m) ? m : (T)0;
        double s = 0;
        for (int64_t a = threadIdx.x; a < n; a += blockDim.x)
            s += (double)(T)exp(x[twc_axis_offset(n, inner, row, a)] - shift);
        T sum = (T)block_combine(s, [](double p, double q) { return p + q; });
        T lsum = (T)log(sum);
        for (int64_t a = threadIdx.x; a < n; a += blockDim.x) {
            int64_t off = twc_axis_offset(n, inner, row, a);
            T z = x[off] - shift;
            y[off] = log_out ? z - lsum : (T)exp(z) / sum;
        }
    }
}

int twc_softmax(twc_device *dev, twk_dtype dtype, bool log, int64_t outer, int64_t n, int64_t inner, const void *x,
                void *y)
{
    int64_t rows = outer * inner;
    if (rows == 0 || n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = blocks_for(rows);
    if (dtype == TWK_FLOAT32)
        softmax_kernel<<<g, TWC_THREADS, 0, dev->stream>>>(log, rows, n, inner, (const float *)x, (float *)y);
    else if (dtype == TWK_FLOAT64)
        softmax_kernel<<<g, TWC_THREADS, 0, dev->stream>>>(log, rows, n, inner, (const double *)x, (double *)y);
    else
        return twc__fail("softmax: dtype %d is not a float type", dtype);
    return twc__launched("softmax");
}

/* ---- cross-entropies: per row, in double, as the CPU's row_logsumexp ------------- */
template <typename T> static __device__ double row_logsumexp(const T *row, int64_t n)
{
    double m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        m = (double)row[j] > m ? (double)row[j] : m;
    m = block_combine(m, [](double p, double q) { return p > q ? p : q; });
    if (!isfinite(m))
        return m;
    double s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        s += exp((double)row[j] - m);
    return m + log(block_combine(s, [](double p, double q) { return p + q; }));
}

template <typename T>
__global__ void dense_xent_kernel(int64_t rows, int64_t n, const T *logits, const T *labels, T *loss)
{
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = logits + r * n, *l = labels + r * n;
        double lse = row_logsumexp(x, n), acc = 0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
            acc += l[j] == 0 ? 0 : (double)l[j] * (lse - (double)x[j]);
        acc = block_combine(acc, [](double p, double q) { return p + q; });
        if (threadIdx.x == 0)
            loss[r] = (T)acc;
    }
}

template <typename T, typename L>
__global__ void sparse_xent_kernel(int64_t rows, int64_t n, const T *logits, const L *labels, T *loss)
{
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = logits + r * n;
        double lse = row_logsumexp(x, n);
        int64_t label = (int64_t)labels[r];
        if (threadIdx.x == 0)
            loss[r] = label >= 0 && label < n ? (T)(lse - (double)x[label]) : (T)NAN;
    }
}

int twc_softmax_cross_entropy(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t n, const void *logits,
                              const void *labels, void *loss)
{
    if (rows == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    unsigned g = blocks_for(rows);
    cudaStream_t s = dev->stream;
    if (dtype == TWK_FLOAT32)
        dense_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const float *)logits, (const float *)labels, (float *)loss);
    else if (dtype == TWK_FLOAT64)
        dense_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const double *)logits, (const double *)labels,
                                                    (double *)loss);
    else
        return twc__fail("softmax_cross_entropy: dtype %d is not a float type", dtype);
    return twc__launched("softmax_cross_entropy");
}

int twc_sparse_softmax_cross_entropy(twc_device *dev, twk_dtype dtype, twk_dtype label_dtype, int64_t rows, int64_t n,
                                     const void *logits, const void *labels, void *loss)
{
    if (rows == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    if (dtype != TWK_FLOAT32 && dtype != TWK_FLOAT64)
        return twc__fail("sparse_softmax_cross_entropy: dtype %d is not a float type", dtype);
    if (label_dtype != TWK_INT32 && label_dtype != TWK_INT64)
        return twc__fail("sparse_softmax_cross_entropy: labels must be int32 or int64");
    unsigned g = blocks_for(rows);
    cudaStream_t s = dev->stream;
    bool f32 = dtype == TWK_FLOAT32, i32 = label_dtype == TWK_INT32;
    if (f32 && i32)
        sparse_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const float *)logits, (const int32_t *)labels, (float *)loss);
    else if (f32)
        sparse_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const float *)logits, (const int64_t *)labels, (float *)loss);
    else if (i32)
        sparse_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const double *)logits, (const int32_t *)labels,
                                                     (double *)loss);
    else
        sparse_xent_kernel<<<g, TWC_THREADS, 0, s>>>(rows, n, (const double *)logits, (const int64_t *)labels,
                                                     (double *)loss);
    return twc__launched("sparse_softmax_cross_entropy");
}
