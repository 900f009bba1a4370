/* The CPU backend: host memory, the CPU kernels of kernels/cpu. Its storage
 * comes from alloc.c's pool (header and data in one block), so it has no
 * alloc/free of its own here; its kernels are the op table's CPU slots. */
#include <string.h>

#include "backend.h"
#include "cpu/cpu_kernels.h"

static int cpu_count(void) { return 1; }

static int cpu_copy(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                    const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twk_copy(itemsize, ndim, shape, dst, dst_strides, src, src_strides);
    return 0;
}

static int cpu_fill(int index, tw_dtype dtype, int64_t n, void *dst, double value)
{
    twk_fill(dtype, n, dst, value);
    return 0;
}

static int cpu_read_element(int index, size_t itemsize, const void *src, void *host_dst)
{
    memcpy(host_dst, src, itemsize);
    return 0;
}

static int cpu_synchronize(int index) { return 0; }

static tw_kernel_fn cpu_kernel(int index, const tw_op_def *op) { return op->kernel[TW_DEVICE_CPU]; }

const tw_backend tw__backend_cpu = {
    .abi = TW_BACKEND_ABI,
    .kind = TW_DEVICE_CPU,
    .name = "cpu",
    .device_count = cpu_count,
    .copy_from_host = cpu_copy,
    .copy_to_host = cpu_copy,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .read_element = cpu_read_element,
    .synchronize = cpu_synchronize,
    .kernel = cpu_kernel,
};
