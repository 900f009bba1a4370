/* TW_OP_PROFILE=1: where a program's kernel time goes, per device and op.
 *
 * When the variable is set, tw__kernel_lookup keeps a timing wrapper in the
 * kernel cache instead of the kernel itself, so the eager path and graphs
 * pay nothing when it is not. The wrapper waits for the device after each
 * kernel (a GPU's work is asynchronous: without the wait the time would be
 * the launch's), which serialises the program; the totals say which ops
 * dominate, not how fast the program runs. The table goes to stderr at exit:
 *
 *   op-profile: DEVICE OP CALLS TOTAL_MS US_PER_CALL
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"
#include "internal.h"

static _Atomic(tw_kernel_fn) real[TW_DEVICE_KIND_COUNT][TW_OP_COUNT];
static const char *_Atomic names[TW_OP_COUNT];
static _Atomic uint64_t calls[TW_DEVICE_KIND_COUNT][TW_OP_COUNT], nanos[TW_DEVICE_KIND_COUNT][TW_OP_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool enabled;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct {
    int kind, id;
    uint64_t ns;
} row;

static int by_time(const void *a, const void *b)
{
    uint64_t x = ((const row *)a)->ns, y = ((const row *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report(void)
{
    static row rows[TW_DEVICE_KIND_COUNT * TW_OP_COUNT];
    int n = 0;
    uint64_t total = 0;
    for (int k = 0; k < TW_DEVICE_KIND_COUNT; k++)
        for (int i = 0; i < TW_OP_COUNT; i++)
            if (atomic_load(&calls[k][i])) {
                rows[n++] = (row){k, i, atomic_load(&nanos[k][i])};
                total += rows[n - 1].ns;
            }
    qsort(rows, (size_t)n, sizeof rows[0], by_time);
    static const char *const kinds[] = {"cpu", "cuda", "sim"};
    fprintf(stderr, "op-profile: %-6s %-28s %9s %11s %11s (all ops: %.3f ms)\n", "device", "op", "calls", "total_ms",
            "us_per_call", total / 1e6);
    for (int r = 0; r < n; r++) {
        uint64_t c = atomic_load(&calls[rows[r].kind][rows[r].id]);
        fprintf(stderr, "op-profile: %-6s %-28s %9llu %11.3f %11.2f\n", kinds[rows[r].kind],
                atomic_load(&names[rows[r].id]), (unsigned long long)c, rows[r].ns / 1e6, rows[r].ns / 1e3 / c);
    }
}

static void init(void)
{
    const char *v = getenv("TW_OP_PROFILE");
    enabled = v && *v && *v != '0';
    if (enabled)
        atexit(report);
}

static int profiled(const tw_op_call *call, tw_tensor *const *outs)
{
    const tw_op_def *op = call->op;
    const tw_tensor *where = op->noutputs > 0 ? outs[0] : call->ninputs > 0 ? call->inputs[0] : NULL;
    tw_device device = where ? tw_tensor_device(where) : TW_CPU;
    tw_kernel_fn k = atomic_load_explicit(&real[device.kind][op->id], memory_order_relaxed);
    if (!k)
        return tw_error_set("%s: no kernel for this device", op->name);
    uint64_t t0 = now_ns();
    int rc = k(call, outs);
    if (device.kind != TW_DEVICE_CPU) {
        const tw_backend *b = tw__backend(device, op->name);
        if (b && b->synchronize)
            b->synchronize(device.index);
    }
    atomic_fetch_add_explicit(&nanos[device.kind][op->id], now_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&calls[device.kind][op->id], 1, memory_order_relaxed);
    return rc;
}

tw_kernel_fn tw__op_profile_wrap(const tw_op_def *op, tw_device device, tw_kernel_fn kernel)
{
    pthread_once(&once, init);
    if (!enabled || !kernel)
        return kernel;
    atomic_store(&names[op->id], op->name);
    atomic_store(&real[device.kind][op->id], kernel);
    return profiled;
}
