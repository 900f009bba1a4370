/* The CPU backend: host memory, the CPU kernels of kernels/cpu. Its storage
 * comes from alloc.c's pool (header and data in one block), so it has no
 * alloc/free of its own here; its kernels (engine/backend_cpu/, which
 * unpack op calls for kernels/cpu) are indexed by op number below. */
#include <string.h>

#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"

static int cpu_count(void) { return 1; }

static void cpu_describe(int index, char *buf, size_t size) { snprintf(buf, size, "cpu:0, %s", tw_blas_info()); }

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

#define ENTRY(name, ...) [TW_OP_ID_##name] = tw__cpu_##name,
static const tw_kernel_fn kernels[TW_OP_COUNT] = {TWK_BINARY_OPS(ENTRY) TWK_UNARY_OPS(ENTRY) TW_OPS(ENTRY)};

tw_kernel_fn tw__cpu_kernel(const tw_op_def *op)
{
    return op->id > TW_OP_ID_NONE && op->id < TW_OP_COUNT ? kernels[op->id] : NULL;
}

const tw_backend tw__backend_cpu = {
    .abi = TW_BACKEND_ABI,
    .kind = TW_DEVICE_CPU,
    .name = "cpu",
    .device_count = cpu_count,
    .describe = cpu_describe,
    .copy_from_host = cpu_copy,
    .copy_to_host = cpu_copy,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .read_element = cpu_read_element,
    .synchronize = cpu_synchronize,
    .kernel = tw__cpu_kernel,
};
