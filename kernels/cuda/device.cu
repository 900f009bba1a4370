/* Devices, errors, the caching allocator and the copies. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include "twc_internal.h"

static thread_local char last_error[512];

const char *twc_last_error(void)
{
    return last_error;
}

int twc__fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
}

int twc__cuda(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 0;
    return twc__fail("%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

int twc__launched(const char *what)
{
    return twc__cuda(cudaGetLastError(), what);
}

int twc__blas(cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return 0;
    return twc__fail("%s: cuBLAS %s", what, cublasGetStatusString(st));
}

int twc__dnn(cudnnStatus_t st, const char *what)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return 0;
    return twc__fail("%s: cuDNN %s", what, cudnnGetErrorString(st));
}

int twc__use(twc_device *dev)
{
    return twc__cuda(cudaSetDevice(dev->ordinal), "cudaSetDevice");
}

/* Free cached blocks back to the driver (the allocator's lock held). */
static void release_free_blocks(twc_device *dev);

/* ---- devices ---------------------------------------------------------------- */
int twc_device_count(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorInsufficientDriver) {
        /* what cudart says when libcuda.so is absent, too */
        twc__fail("no CUDA device: no NVIDIA driver, or one older than this CUDA %d.%d runtime needs",
                  CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
        return 0;
    }
    if (err != cudaSuccess) {
        twc__fail("no CUDA device: %s", cudaGetErrorString(err));
        return 0;
    }
    if (n == 0)
        twc__fail("no CUDA device");
    return n;
}

int twc_device_info_get(int ordinal, twc_device_info *info)
{
    cudaDeviceProp p;
    if (twc__cuda(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties") < 0)
        return -1;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->total_memory = p.totalGlobalMem;
    info->major = p.major;
    info->minor = p.minor;
    return 0;
}

twc_device *twc_device_open(int ordinal)
{
    int n = twc_device_count();
    if (ordinal < 0 || ordinal >= n) {
        if (n > 0)
            twc__fail("cuda:%d: no such device (%d CUDA device%s)", ordinal, n, n == 1 ? "" : "s");
        return NULL;
    }
    twc_device *dev = new (std::nothrow) twc_device();
    if (!dev) {
        twc__fail("cuda:%d: out of host memory", ordinal);
        return NULL;
    }
    dev->ordinal = ordinal;
    if (twc__use(dev) < 0 ||
        twc__cuda(cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking), "cudaStreamCreate") < 0 ||
        twc__blas(cublasCreate(&dev->blas), "cublasCreate") < 0 ||
        twc__blas(cublasSetStream(dev->blas, dev->stream), "cublasSetStream") < 0 ||
        twc__dnn(cudnnCreate(&dev->dnn), "cudnnCreate") < 0 ||
        twc__dnn(cudnnSetStream(dev->dnn, dev->stream), "cudnnSetStream") < 0 ||
        twc__cuda(cudaEventCreateWithFlags(&dev->staged, cudaEventDisableTiming), "cudaEventCreate") < 0) {
        twc_device_close(dev);
        return NULL;
    }
    return dev;
}

void twc_device_close(twc_device *dev)
{
    if (!dev)
        return;
    cudaSetDevice(dev->ordinal);
    if (dev->stream)
        cudaStreamSynchronize(dev->stream);
    for (auto &live : dev->live_blocks)
        cudaFree(live.first);
    dev->live_blocks.clear();
    dev->workspace = NULL;
    release_free_blocks(dev);
    if (dev->pinned)
        cudaFreeHost(dev->pinned);
    if (dev->staged)
        cudaEventDestroy(dev->staged);
    if (dev->dnn)
        cudnnDestroy(dev->dnn);
    if (dev->blas)
        cublasDestroy(dev->blas);
    if (dev->stream)
        cudaStreamDestroy(dev->stream);
    delete dev;
}

int twc_sync(twc_device *dev)
{
    return twc__cuda(cudaStreamSynchronize(dev->stream), "cudaStreamSynchronize");
}

/* ---- the caching allocator ----------------------------------------------------
 * Sizes round up (512 bytes below 1 MiB, 1 MiB above) so that a training
 * step's tensors, allocated again each step with the same shapes, find the
 * blocks the previous step freed. A freed block may be handed out again at
 * once: work on the one stream runs in order, so the next user's kernels
 * start after the last user's finished. */
static size_t round_size(size_t bytes)
{
    size_t unit = bytes < ((size_t)1 << 20) ? 512 : ((size_t)1 << 20);
    return (bytes + unit - 1) / unit * unit;
}

void *twc_alloc(twc_device *dev, size_t bytes)
{
    size_t size = round_size(bytes ? bytes : 1);
    void *p = NULL;
    std::lock_guard<std::mutex> hold(dev->lock);
    auto fl = dev->free_blocks.find(size);
    if (fl != dev->free_blocks.end() && !fl->second.empty()) {
        p = fl->second.back();
        fl->second.pop_back();
    } else {
        if (twc__use(dev) < 0)
            return NULL;
        cudaError_t err = cudaMalloc(&p, size);
        if (err == cudaErrorMemoryAllocation) { /* the cache may hold enough */
            cudaGetLastError();
            release_free_blocks(dev);
            err = cudaMalloc(&p, size);
        }
        if (err != cudaSuccess) {
            twc__fail("cuda:%d: cannot allocate %zu bytes: %s", dev->ordinal, bytes, cudaGetErrorString(err));
            return NULL;
        }
        dev->held += size;
        dev->driver_allocs++;
    }
    dev->live_blocks[p] = size;
    dev->in_use += size;
    return p;
}

void twc_free(twc_device *dev, void *ptr)
{
    if (!ptr)
        return;
    std::lock_guard<std::mutex> hold(dev->lock);
    auto it = dev->live_blocks.find(ptr);
    if (it == dev->live_blocks.end())
        return;
    dev->in_use -= it->second;
    dev->free_blocks[it->second].push_back(ptr);
    dev->live_blocks.erase(it);
}

void twc_memory_stats(twc_device *dev, size_t *held, size_t *in_use, uint64_t *driver_allocs)
{
    std::lock_guard<std::mutex> hold(dev->lock);
    *held = dev->held;
    *in_use = dev->in_use;
    *driver_allocs = dev->driver_allocs;
}

static void release_free_blocks(twc_device *dev)
{
    cudaStreamSynchronize(dev->stream);
    for (auto &fl : dev->free_blocks) {
        for (void *p : fl.second) {
            cudaFree(p);
            dev->held -= fl.first;
        }
    }
    dev->free_blocks.clear();
}

void twc_release_cached(twc_device *dev)
{
    cudaSetDevice(dev->ordinal);
    twc_free(dev, dev->workspace); /* the cuDNN workspace, a live block, goes too */
    dev->workspace = NULL;
    dev->workspace_bytes = 0;
    std::lock_guard<std::mutex> hold(dev->lock);
    release_free_blocks(dev);
}

void *twc__workspace(twc_device *dev, size_t bytes)
{
    if (bytes <= dev->workspace_bytes)
        return dev->workspace;
    twc_free(dev, dev->workspace);
    dev->workspace = twc_alloc(dev, bytes);
    dev->workspace_bytes = dev->workspace ? bytes : 0;
    return dev->workspace;
}

/* ---- copies through the pinned staging buffer ------------------------------------ */
#define STAGING_MAX ((size_t)64 << 20)

static int staging(twc_device *dev, size_t bytes)
{
    size_t want = bytes < STAGING_MAX ? bytes : STAGING_MAX;
    if (want <= dev->pinned_bytes)
        return 0;
    if (dev->pinned && twc__cuda(cudaEventSynchronize(dev->staged), "staging buffer") < 0)
        return -1;
    if (dev->pinned)
        cudaFreeHost(dev->pinned);
    dev->pinned = NULL;
    dev->pinned_bytes = 0;
    if (twc__cuda(cudaMallocHost(&dev->pinned, want), "cudaMallocHost") < 0)
        return -1;
    dev->pinned_bytes = want;
    return 0;
}

int twc_copy_to_device(twc_device *dev, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (twc__use(dev) < 0 || staging(dev, bytes) < 0)
        return -1;
    for (size_t done = 0; done < bytes; done += dev->pinned_bytes) {
        size_t n = bytes - done < dev->pinned_bytes ? bytes - done : dev->pinned_bytes;
        /* the last copy out of the staging buffer must have run (not the
         * kernels queued since) */
        if (twc__cuda(cudaEventSynchronize(dev->staged), "copy to device") < 0)
            return -1;
        memcpy(dev->pinned, (const char *)src + done, n);
        if (twc__cuda(cudaMemcpyAsync((char *)dst + done, dev->pinned, n, cudaMemcpyHostToDevice, dev->stream),
                      "copy to device") < 0 ||
            twc__cuda(cudaEventRecord(dev->staged, dev->stream), "copy to device") < 0)
            return -1;
    }
    return 0;
}

int twc_copy_to_host(twc_device *dev, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (twc__use(dev) < 0 || staging(dev, bytes) < 0)
        return -1;
    for (size_t done = 0; done < bytes; done += dev->pinned_bytes) {
        size_t n = bytes - done < dev->pinned_bytes ? bytes - done : dev->pinned_bytes;
        if (twc__cuda(cudaMemcpyAsync(dev->pinned, (const char *)src + done, n, cudaMemcpyDeviceToHost, dev->stream),
                      "copy to host") < 0 ||
            twc_sync(dev) < 0)
            return -1;
        memcpy((char *)dst + done, dev->pinned, n);
    }
    return 0;
}

int twc_copy_device(twc_device *dev, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    return twc__cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, dev->stream), "copy on device");
}

int twc_read(twc_device *dev, twk_dtype dtype, const void *p, double *value)
{
    unsigned char buf[8];
    if (twc_copy_to_host(dev, buf, p, twk_dtype_size(dtype)) < 0)
        return -1;
    switch (dtype) {
    case TWK_FLOAT32: { float v; memcpy(&v, buf, 4); *value = v; break; }
    case TWK_FLOAT64: memcpy(value, buf, 8); break;
    case TWK_INT32: { int32_t v; memcpy(&v, buf, 4); *value = v; break; }
    case TWK_INT64: { int64_t v; memcpy(&v, buf, 8); *value = (double)v; break; }
    case TWK_UINT8: *value = buf[0]; break;
    case TWK_BOOL: *value = buf[0] ? 1.0 : 0.0; break;
    default: return twc__fail("read: unknown dtype %d", dtype);
    }
    return 0;
}
