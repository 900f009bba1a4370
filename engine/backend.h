/* Backends: what the engine asks of a device.
 *
 * Every device kind (tw_device_kind) is served by one backend. The CPU's is
 * built in (backend_cpu.c); the simulated device of the tests is built in
 * and off until tw__sim_devices_enable (backend_sim.c); CUDA comes from a
 * plugin, libtw-cuda.so, that the engine opens at run time the first time
 * anyone asks about a device other than the CPU (tw_device_count,
 * tw_set_default_device, tw_tensor_to), so the same program runs where the
 * NVIDIA driver is missing and says there is no CUDA device.
 *
 * Nothing outside a backend touches device memory. The engine holds device
 * memory as tw_storage whose `data` is a device pointer (with the tensor's
 * offset and strides applied by tw__data as for the CPU: a backend must
 * accept `(char *)data + offset * itemsize` as a pointer into its memory).
 * Reading values on the host goes through copy_to_host; tw_tensor_data
 * refuses a tensor that is not on the CPU.
 *
 * How a plugin registers
 * ----------------------
 * The plugin library exports one function, TW_BACKEND_PLUGIN_ENTRY:
 *
 *     int tw_backend_plugin_init(int abi);
 *
 * The engine dlopen()s the library (beside libtw-engine.so first, then the
 * loader's search path; TW_CUDA_PLUGIN names another file), calls it with
 * TW_BACKEND_ABI, and the plugin, if it can serve the ABI and finds at least
 * one device, calls tw_backend_register(&its_backend) and returns 0. It
 * returns -1 with tw_error_set("...") when it cannot (no driver, no device,
 * other ABI); the engine keeps the message (tw_device_describe and the
 * "device cuda:0 is not available (...)" errors give it) and goes on with
 * the CPU alone. The plugin resolves tw_backend_register, tw_error_set and
 * the rest of the engine's exported symbols from the already loaded
 * libtw-engine.so. The tw_backend it passes must stay valid until the
 * process exits (a static const). A plugin is built from this tree and
 * includes this header (internal.h with it): the tensor layout and the op
 * table are part of the ABI, so changing them means a new TW_BACKEND_ABI.
 *
 * What each function must do (index is the device's index within the kind,
 * 0 <= index < device_count(); every pointer is device memory unless named
 * host; all return 0, or -1 with tw_error_set naming the device and what
 * failed, unless said otherwise):
 *
 *  - alloc / free: raw device memory of at least nbytes, aligned for any
 *    dtype (256 bytes for CUDA). The engine caches freed blocks per device
 *    in power-of-two size classes (device_pool.c), so alloc is not on the
 *    steady-state path and need not cache. free may be called from any
 *    thread, only with a pointer alloc returned; work queued on the device
 *    that uses the block must be ordered before any later reuse (a single
 *    stream per device orders it).
 *  - copy_from_host / copy_to_host / copy: copy ndim/shape elements of
 *    itemsize bytes between strided layouts (strides in elements, never
 *    negative, zero on broadcast axes of the source). copy_to_host
 *    returns only when the host buffer holds the values; copy_from_host may
 *    return before the copy ran only if the host buffer may be reused at
 *    once (stage it). copy is within one device.
 *  - fill: n contiguous elements of dtype at dst set to value (converted as
 *    twk_store does: bool is value != 0, integers truncate).
 *  - read_element: one element of itemsize bytes at src into host memory
 *    (tw_tensor_item, tw_tensor_get).
 *  - synchronize: returns when all work queued on the device has finished.
 *  - describe (may be NULL): one line about the device for tw_device_describe.
 *  - kernel: the backend's kernel for an op of the table (tw_op_def), or
 *    NULL when it has none; the engine reports "OP: no kernel for device D".
 *    The engine asks once per op and kind and keeps the answer (so it must
 *    be the same for every device of the kind): a table indexed by op->id
 *    (op_ids.h) is the natural form. A kernel computes into freshly
 *    allocated contiguous outputs (device memory from alloc) from inputs
 *    that may be strided views, with attrs as the op's CPU kernel
 *    (engine/backend_cpu/) reads them.
 *  - supports_op (may be NULL: every op with a kernel is supported): false
 *    when this call (dtypes, ranks, attrs) is beyond the kernel; it sets the
 *    error, naming the op and the reason, before returning false.
 */
#ifndef TW_BACKEND_H
#define TW_BACKEND_H

#include "internal.h"

#define TW_BACKEND_ABI 2
#define TW_BACKEND_PLUGIN_ENTRY "tw_backend_plugin_init"

typedef int (*tw_kernel_fn)(const tw_op_call *call, tw_tensor *const *outs);

typedef struct tw_backend {
    int abi;              /* TW_BACKEND_ABI */
    tw_device_kind kind;  /* the kind it serves */
    const char *name;     /* device names read "NAME:INDEX": "cpu", "cuda", "sim" */
    int (*device_count)(void);
    /* A line describing device index for `twb --version` ("NVIDIA H100, 80 GiB,
     * compute 9.0"); may be NULL. Writes at most size bytes into buf. */
    void (*describe)(int index, char *buf, size_t size);

    void *(*alloc)(int index, size_t nbytes); /* NULL with the error set */
    void (*free)(int index, void *ptr);

    int (*copy_from_host)(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                          const int64_t *dst_strides, const void *host_src, const int64_t *src_strides);
    int (*copy_to_host)(int index, size_t itemsize, int ndim, const int64_t *shape, void *host_dst,
                        const int64_t *dst_strides, const void *src, const int64_t *src_strides);
    int (*copy)(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst, const int64_t *dst_strides,
                const void *src, const int64_t *src_strides);
    int (*fill)(int index, tw_dtype dtype, int64_t n, void *dst, double value);
    int (*read_element)(int index, size_t itemsize, const void *src, void *host_dst);
    int (*synchronize)(int index);

    tw_kernel_fn (*kernel)(const tw_op_def *op);
    bool (*supports_op)(int index, const tw_op_call *call);
} tw_backend;

#pragma GCC visibility push(default)
/* Called by a plugin from tw_backend_plugin_init: 0, or -1 with the error
 * set (wrong ABI, a kind already served, a required function missing). */
int tw_backend_register(const tw_backend *backend);
#pragma GCC visibility pop

/* ---- the engine's side (backend.c) ------------------------------------------ */
/* The backend serving device, or NULL with "WHAT: device D is not available
 * (...)" set when none does or the index is out of range. Opens the plugins
 * on first use of a kind other than the CPU. */
const tw_backend *tw__backend(tw_device device, const char *what);
/* The kernel op runs with on device, or NULL with "OP: no kernel for device
 * D" set. Every device alike, the CPU included: the backend's answer,
 * asked once per kind and op and kept in tw__kernels, so the eager path
 * pays one load. */
extern _Atomic(tw_kernel_fn) tw__kernels[TW_DEVICE_KIND_COUNT][TW_OP_COUNT];
tw_kernel_fn tw__kernel_lookup(const tw_op_def *op, tw_device device);
static inline tw_kernel_fn tw__kernel_for(const tw_op_def *op, tw_device device)
{
    tw_kernel_fn k = atomic_load_explicit(&tw__kernels[device.kind][op->id], memory_order_relaxed);
    return k ? k : tw__kernel_lookup(op, device);
}
/* kernel itself, or with TW_OP_PROFILE set a wrapper that times it per
 * device and op and prints the table at exit (op_profile.c). */
tw_kernel_fn tw__op_profile_wrap(const tw_op_def *op, tw_device device, tw_kernel_fn kernel);
/* The CPU backend's kernel for op, or NULL (no error set): for the
 * simulated device, which runs the CPU's kernels, and constant folding. */
tw_kernel_fn tw__cpu_kernel(const tw_op_def *op);
/* Why the CUDA plugin did not load ("" when it did or was not tried). */
const char *tw__plugin_message(tw_device_kind kind);

/* The simulated device (backend_sim.c): n devices "sim:0".."sim:N-1" of
 * host memory behind this interface, for tests. Its data pointers are
 * tagged so that reading them on the host outside the backend faults.
 * TW_SIM_DEVICES=N in the environment enables them at the first question
 * about a device other than the CPU (for programs outside the engine). */
void tw__sim_devices_enable(int n);

/* Device memory for storage (device_pool.c): cached per device and size
 * class, returned to the backend by tw__pool_trim. */
void *tw__device_pool_take(const tw_backend *backend, int index, size_t nbytes, int *size_class);
void tw__device_pool_put(const tw_backend *backend, int index, void *ptr, int size_class);
void tw__device_pool_trim(void);

/* Copies between any two tensors of one shape and dtype, on any devices
 * (through the host when neither is the CPU). */
int tw__copy_between(tw_tensor *dst, const tw_tensor *src);
/* A contiguous CPU copy of t's values (a new reference to t when t is a
 * contiguous CPU tensor); caller-owned, not scoped, never recorded. For the
 * engine's own readers of values: printing, metrics, checkpoints. */
tw_tensor *tw__to_host(const tw_tensor *t);
/* host (a caller-owned CPU tensor, consumed) moved to device: host itself
 * when device is the CPU; NULL on failure. For values computed on the host
 * (random draws, ranges) that belong on a device. */
tw_tensor *tw__host_to(tw_tensor *host, tw_device device);

#endif
