/* The simulated device ("sim:N"), for tests on machines without a GPU: host
 * memory behind the backend interface, so every placement path (copies,
 * mixed devices, checkpoints, summaries, traced graphs on a device) runs in
 * `make test`. Its pointers carry a tag that makes them non-canonical
 * addresses: code outside the backend that reads a sim tensor's memory as
 * host memory faults at once instead of passing unnoticed, as it would on a
 * GPU. Its kernels are the CPU's, run on untagged shadows of the tensors. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu/cpu_kernels.h"

#define TAG ((uintptr_t)1 << 62)

static void *untag(const void *p) { return (void *)((uintptr_t)p - TAG); }

static atomic_int sim_devices;

static int sim_count(void) { return atomic_load(&sim_devices); }

static void sim_describe(int index, char *buf, size_t size)
{
    snprintf(buf, size, "simulated device (host memory) for tests");
}

static void *sim_alloc(int index, size_t nbytes)
{
    void *p;
    if (posix_memalign(&p, 256, nbytes ? nbytes : 1) != 0) {
        tw_error_set("sim:%d: out of memory allocating %zu bytes", index, nbytes);
        return NULL;
    }
    return (char *)p + TAG;
}

static void sim_free(int index, void *ptr) { free(untag(ptr)); }

static int sim_copy_from_host(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                              const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twk_copy(itemsize, ndim, shape, untag(dst), dst_strides, src, src_strides);
    return 0;
}

static int sim_copy_to_host(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                            const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twk_copy(itemsize, ndim, shape, dst, dst_strides, untag(src), src_strides);
    return 0;
}

static int sim_copy(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                    const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twk_copy(itemsize, ndim, shape, untag(dst), dst_strides, untag(src), src_strides);
    return 0;
}

static int sim_fill(int index, tw_dtype dtype, int64_t n, void *dst, double value)
{
    twk_fill(dtype, n, untag(dst), value);
    return 0;
}

static int sim_read_element(int index, size_t itemsize, const void *src, void *host_dst)
{
    memcpy(host_dst, untag(src), itemsize);
    return 0;
}

static int sim_synchronize(int index) { return 0; }

/* A CPU view of a sim tensor: same header, storage copied with the data
 * pointer untagged and the device the CPU's. */
static void shadow(const tw_tensor *t, tw_tensor *ts, tw_storage *ss)
{
    memcpy(ts, t, sizeof *ts);
    memcpy(ss, t->storage, sizeof *ss);
    ss->data = untag(t->storage->data);
    ss->device = TW_CPU;
    ts->storage = ss;
    /* Kernels take and drop references (a contiguous input is its own
     * packed copy): never the last one of a shadow on the stack. */
    atomic_store(&ts->refcount, 1 << 30);
    atomic_store(&ss->refcount, 1 << 30);
}

/* Every op on the device: its CPU kernel over shadows of inputs and outputs.
 * Writes land in the device memory; an in-place write's version bump is
 * carried back to the real storage. */
static int sim_run(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor in_t[TW_MAX_INPUTS], out_t[TW_MAX_OUTPUTS];
    tw_storage in_s[TW_MAX_INPUTS], out_s[TW_MAX_OUTPUTS];
    tw_tensor *ins[TW_MAX_INPUTS], *os[TW_MAX_OUTPUTS];
    for (int i = 0; i < call->ninputs; i++) {
        shadow(call->inputs[i], &in_t[i], &in_s[i]);
        ins[i] = &in_t[i];
    }
    for (int k = 0; k < call->op->noutputs; k++) {
        shadow(outs[k], &out_t[k], &out_s[k]);
        os[k] = &out_t[k];
    }
    tw_op_call c = *call;
    c.inputs = ins;
    int rc = tw__cpu_kernel(call->op)(&c, os);
    for (int i = 0; i < call->ninputs; i++) {
        unsigned bumped = atomic_load(&in_s[i].version) - atomic_load(&call->inputs[i]->storage->version);
        if (bumped)
            atomic_fetch_add(&call->inputs[i]->storage->version, bumped);
    }
    return rc;
}

static tw_kernel_fn sim_kernel(const tw_op_def *op)
{
    return tw__cpu_kernel(op) ? sim_run : NULL;
}

static const tw_backend backend_sim = {
    .abi = TW_BACKEND_ABI,
    .kind = TW_DEVICE_SIM,
    .name = "sim",
    .device_count = sim_count,
    .describe = sim_describe,
    .alloc = sim_alloc,
    .free = sim_free,
    .copy_from_host = sim_copy_from_host,
    .copy_to_host = sim_copy_to_host,
    .copy = sim_copy,
    .fill = sim_fill,
    .read_element = sim_read_element,
    .synchronize = sim_synchronize,
    .kernel = sim_kernel,
};

void tw__sim_devices_enable(int n)
{
    atomic_store(&sim_devices, n);
    tw_backend_register(&backend_sim);
}
