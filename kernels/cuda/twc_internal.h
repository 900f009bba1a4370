/* What the .cu files share: the device context, error reporting and launch
 * sizes. C++ (nvcc) only. */
#ifndef TWC_INTERNAL_H
#define TWC_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <mutex>
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
#define TWC_FOR(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

#endif
