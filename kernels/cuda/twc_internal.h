/* What the .cu files share: the device context, error reporting and launch
 * sizes. C++ (nvcc) only. */
#ifndef TWC_INTERNAL_H
#define TWC_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "twc_index.h"
#include "twc_kernels.h"

struct twc_device {
    int ordinal;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudnnHandle_t dnn;
    /* caching allocator: free blocks by rounded size, live blocks' sizes;
     * the lock because the engine frees from any thread */
    std::mutex lock;
    std::unordered_map<size_t, std::vector<void *>> free_blocks;
    std::unordered_map<void *, size_t> live_blocks;
    size_t held, in_use;
    uint64_t driver_allocs;
    /* pinned staging buffer for host copies, grown on demand; the event
     * marks the end of the last copy out of it */
    void *pinned;
    size_t pinned_bytes;
    cudaEvent_t staged;
    /* cuDNN workspace, grown on demand (a cached device block) */
    void *workspace;
    size_t workspace_bytes;
    /* the algorithm and workspace each convolution (shape, dtype, pass)
     * was given, so cuDNN's heuristics are asked once (dnn.cu) */
    std::mutex conv_lock;
    std::unordered_map<std::string, std::pair<int, size_t>> conv_algos;
};

/* Record an error for twc_last_error; returns -1. */
int twc__fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -1 with the CUDA error's text when err is not cudaSuccess, else 0. */
int twc__cuda(cudaError_t err, const char *what);
/* After a launch: a launch error (bad configuration) as -1. */
int twc__launched(const char *what);
int twc__blas(cublasStatus_t st, const char *what);
int twc__dnn(cudnnStatus_t st, const char *what);
/* Make dev current on this thread. */
int twc__use(twc_device *dev);
/* A device workspace of at least bytes (kept for the next call). */
void *twc__workspace(twc_device *dev, size_t bytes);

/* Threads per block of the elementwise kernels, and the grid for n elements:
 * grid-stride loops, so the grid is capped and any n is covered. */
#define TWC_THREADS 256
static inline unsigned twc__grid(int64_t n)
{
    int64_t blocks = (n + TWC_THREADS - 1) / TWC_THREADS;
    return (unsigned)(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}
/* The start of every launch over n elements: 0 when there are none (nothing
 * to do), -1 with the error set when dev cannot be made current, else 1. */
static inline int twc__begin(twc_device *dev, int64_t n)
{
    if (n <= 0)
        return 0;
    return twc__use(dev) < 0 ? -1 : 1;
}

/* Launch by dtype: calls f with a null pointer of the dtype's C type
 * (uint8_t for uint8 and bool), so one generic lambda launches a kernel
 * template for every dtype; then reports the launch as twc__launched does.
 * An unknown dtype is -1 with the error naming what. */
template <typename F> static inline int twc__by_dtype(twk_dtype dtype, const char *what, F f)
{
    switch (dtype) {
    case TWK_FLOAT32: f((float *)nullptr); break;
    case TWK_FLOAT64: f((double *)nullptr); break;
    case TWK_INT32: f((int32_t *)nullptr); break;
    case TWK_INT64: f((int64_t *)nullptr); break;
    case TWK_UINT8:
    case TWK_BOOL: f((uint8_t *)nullptr); break;
    default: return twc__fail("%s: unknown dtype %d", what, dtype);
    }
    return twc__launched(what);
}

/* The same by element size, for kernels that only move elements: an
 * unsigned type of 1, 2, 4 or 8 bytes. */
template <typename F> static inline int twc__by_size(size_t itemsize, const char *what, F f)
{
    switch (itemsize) {
    case 1: f((uint8_t *)nullptr); break;
    case 2: f((uint16_t *)nullptr); break;
    case 4: f((uint32_t *)nullptr); break;
    case 8: f((uint64_t *)nullptr); break;
    default: return twc__fail("%s: unsupported element size %zu", what, itemsize);
    }
    return twc__launched(what);
}

/* The element type behind the null pointer twc__by_dtype and twc__by_size pass. */
#define TWC_TYPE(p) std::remove_pointer_t<decltype(p)>

/* A value of T from a double as the CPU's twk_store converts it: bool is
 * value != 0, integers truncate. */
template <typename T> static inline T twc__value_as(twk_dtype dtype, double value)
{
    if (dtype == TWK_BOOL)
        return (T)(value != 0.0);
    if constexpr (std::is_floating_point_v<T>)
        return (T)value;
    else
        return (T)(int64_t)value;
}

/* Column sums over (rows, columns), the columns contiguous (reduce.cu,
 * batch_norm.cu): a block of COL_W x COL_H threads takes COL_W neighbouring
 * columns (coalesced reads) over one chunk of rows and writes its partial
 * sums; a second kernel adds the chunks' partials, one warp per column
 * (twc__warp_total), in an order fixed by the sizes, so results do not
 * depend on scheduling. The number of chunks (about COL_BLOCKS blocks in
 * all, at least 4 * COL_H rows a chunk) and their rows. */
enum { COL_W = 32, COL_H = 8, COL_BLOCKS = 2048 };
static inline int64_t twc__column_parts(int64_t nrows, int64_t ncols, int64_t *chunk)
{
    int64_t cblocks = (ncols + COL_W - 1) / COL_W, want = COL_BLOCKS / cblocks;
    int64_t most = (nrows + 4 * COL_H - 1) / (4 * COL_H);
    int64_t nparts = want < 1 ? 1 : want > most ? most : want;
    if (nparts < 1)
        nparts = 1;
    *chunk = (nrows + nparts - 1) / nparts;
    return *chunk > 0 ? (nrows + *chunk - 1) / *chunk : 1;
}

#define TWC_FOR(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* One warp per item c < n (blockDim.x a multiple of 32, the grid
 * twc__grid(n * 32)): every lane of a warp takes the same c, lane its
 * index in the warp. */
#define TWC_FOR_WARP(c, lane, n)                                                                                 \
    for (int64_t c = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32; c < (n);   \
         c += (int64_t)gridDim.x * blockDim.x / 32)

/* The sum of part[p * stride + c] over p < nparts by the 32 lanes of a warp
 * (TWC_FOR_WARP): lane l adds p = l, l + 32, ... in turn, then a fixed
 * shuffle tree adds the lanes' sums; lane 0 holds the total. One thread
 * adding 1024 chunks' partials waited on each load in turn: about 100 us
 * for each of ResNet50's 64-channel batch norms on an H200. */
static __device__ __forceinline__ double twc__warp_total(int64_t nparts, int64_t stride, const double *part, int64_t c,
                                                         int64_t lane)
{
    double t = 0;
    for (int64_t p = lane; p < nparts; p += 32)
        t += part[p * stride + c];
    for (int offset = 16; offset > 0; offset >>= 1)
        t += __shfl_down_sync(0xffffffffu, t, offset);
    return t;
}

#endif
