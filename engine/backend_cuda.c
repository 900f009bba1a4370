/* The CUDA backend: the engine's side of libtw-cuda.so (backend.h). Built
 * into the plugin, not the engine: the engine dlopen()s the plugin, calls
 * tw_backend_plugin_init, and this file registers the CUDA devices and
 * maps ops to the kernels of kernels/cuda (twc_kernels.h). Engine symbols
 * (tw_error_set, tw_backend_register, tw_dtype_size) resolve from the
 * libtw-engine.so that opened it.
 *
 * Kernels so far: every elementwise op of the formula table (integer div
 * and floormod excepted: the CPU refuses a zero divisor, which needs a look
 * at the divisor's values first), where, cast, copy, the reductions
 * (sum/prod/max/min/argmax/argmin) and matmul. An op without a CUDA kernel
 * fails with the engine's "OP: no kernel for device cuda:N". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu/cpu_kernels.h"
#include "cuda/twc_kernels.h"

#define MAX_DEVICES 16

static twc_device *devices[MAX_DEVICES];
static int device_total;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device context of index, opened on first use; NULL with the error set. */
static twc_device *device(int index)
{
    if (index < 0 || index >= device_total || index >= MAX_DEVICES) {
        tw_error_set("cuda:%d: no such device (%d CUDA device%s)", index, device_total, device_total == 1 ? "" : "s");
        return NULL;
    }
    pthread_mutex_lock(&open_lock);
    if (!devices[index])
        devices[index] = twc_device_open(index);
    twc_device *d = devices[index];
    pthread_mutex_unlock(&open_lock);
    if (!d)
        tw_error_set("cuda:%d: %s", index, twc_last_error());
    return d;
}

/* -1 with the plugin's message under the device's name when rc < 0. */
static int check(int rc, int index)
{
    return rc < 0 ? tw_error_set("cuda:%d: %s", index, twc_last_error()) : 0;
}

static int cuda_count(void) { return device_total; }

static void cuda_describe(int index, char *buf, size_t size)
{
    twc_device_info info;
    if (twc_device_info_get(index, &info) < 0) {
        snprintf(buf, size, "%s", twc_last_error());
        return;
    }
    snprintf(buf, size, "%s, %.1f GiB, compute capability %d.%d", info.name, info.total_memory / 1073741824.0,
             info.major, info.minor);
}

static void *cuda_alloc(int index, size_t nbytes)
{
    twc_device *d = device(index);
    void *p = d ? twc_alloc(d, nbytes) : NULL;
    if (d && !p)
        tw_error_set("cuda:%d: %s", index, twc_last_error());
    return p;
}

static void cuda_free(int index, void *ptr)
{
    twc_device *d = device(index);
    if (d)
        twc_free(d, ptr);
}

static bool contiguous(size_t itemsize, int ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t expect = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && strides[d] != expect)
            return false;
        expect *= shape[d];
    }
    return true;
}

static int64_t count(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

static void dense_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
}

/* Host <-> device: the host side packed (or unpacked) on the CPU, one dense
 * transfer, the device side walked by a strided copy when it is not dense. */
static int cuda_copy_from_host(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                               const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twc_device *d = device(index);
    if (!d)
        return -1;
    int64_t n = count(ndim, shape);
    size_t bytes = (size_t)n * itemsize;
    int64_t dense[TW_MAX_DIMS];
    dense_strides(ndim, shape, dense);
    if (contiguous(itemsize, ndim, shape, src_strides) && contiguous(itemsize, ndim, shape, dst_strides))
        return check(twc_copy_to_device(d, dst, src, bytes), index);
    void *packed = malloc(bytes ? bytes : 1);
    void *staged = twc_alloc(d, bytes);
    int rc = -1;
    if (!packed || !staged) {
        rc = tw_error_set("cuda:%d: out of memory staging %zu bytes", index, bytes);
    } else {
        twk_copy(itemsize, ndim, shape, packed, dense, src, src_strides);
        rc = check(twc_copy_to_device(d, staged, packed, bytes), index);
        if (rc == 0)
            rc = check(twc_copy(d, itemsize, ndim, shape, dst, dst_strides, staged, dense), index);
        if (rc == 0)
            rc = check(twc_sync(d), index); /* staged goes back to the cache */
    }
    twc_free(d, staged);
    free(packed);
    return rc;
}

static int cuda_copy_to_host(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst,
                             const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twc_device *d = device(index);
    if (!d)
        return -1;
    int64_t n = count(ndim, shape);
    size_t bytes = (size_t)n * itemsize;
    int64_t dense[TW_MAX_DIMS];
    dense_strides(ndim, shape, dense);
    if (contiguous(itemsize, ndim, shape, src_strides) && contiguous(itemsize, ndim, shape, dst_strides))
        return check(twc_copy_to_host(d, dst, src, bytes), index);
    void *packed = malloc(bytes ? bytes : 1);
    void *staged = twc_alloc(d, bytes);
    int rc = -1;
    if (!packed || !staged) {
        rc = tw_error_set("cuda:%d: out of memory staging %zu bytes", index, bytes);
    } else {
        rc = check(twc_copy(d, itemsize, ndim, shape, staged, dense, src, src_strides), index);
        if (rc == 0)
            rc = check(twc_copy_to_host(d, packed, staged, bytes), index);
        if (rc == 0)
            twk_copy(itemsize, ndim, shape, dst, dst_strides, packed, dense);
    }
    twc_free(d, staged);
    free(packed);
    return rc;
}

static int cuda_copy(int index, size_t itemsize, int ndim, const int64_t *shape, void *dst, const int64_t *dst_strides,
                     const void *src, const int64_t *src_strides)
{
    twc_device *d = device(index);
    return d ? check(twc_copy(d, itemsize, ndim, shape, dst, dst_strides, src, src_strides), index) : -1;
}

static int cuda_fill(int index, tw_dtype dtype, int64_t n, void *dst, double value)
{
    twc_device *d = device(index);
    return d ? check(twc_fill(d, dtype, n, dst, value), index) : -1;
}

static int cuda_read_element(int index, size_t itemsize, const void *src, void *host_dst)
{
    twc_device *d = device(index);
    return d ? check(twc_copy_to_host(d, host_dst, src, itemsize), index) : -1;
}

static int cuda_synchronize(int index)
{
    twc_device *d = device(index);
    return d ? check(twc_sync(d), index) : -1;
}

/* ---- kernels ---------------------------------------------------------------------- */
static int index_of(const tw_tensor *t) { return t->storage->device.index; }

/* Strides of t read at every position of the output shape (right-aligned,
 * size-1 axes broadcast), as the CPU's tw__broadcast_strides. */
static void broadcast_strides(const tw_tensor *t, int ndim, int64_t *strides)
{
    for (int d = 0; d < ndim; d++) {
        int td = d - (ndim - t->ndim);
        strides[d] = td < 0 || t->shape[td] == 1 ? 0 : t->strides[td];
    }
}

static int run_unary(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twc_device *d = device(index_of(out));
    return d ? check(twc_unary(d, call->op->elementwise_op, x->dtype, x->ndim, x->shape, tw__data(out), out->strides,
                               tw__data(x), x->strides, call->attrs->f[0], call->attrs->f[1]),
                     index_of(out))
             : -1;
}

static int run_binary(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *a = call->inputs[0], *b = call->inputs[1], *out = outs[0];
    twc_device *d = device(index_of(out));
    int64_t sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    broadcast_strides(a, out->ndim, sa);
    broadcast_strides(b, out->ndim, sb);
    return d ? check(twc_binary(d, call->op->elementwise_op, a->dtype, out->ndim, out->shape, tw__data(out),
                                out->strides, tw__data(a), sa, tw__data(b), sb),
                     index_of(out))
             : -1;
}

static int run_where(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *c = call->inputs[0], *a = call->inputs[1], *b = call->inputs[2], *out = outs[0];
    twc_device *d = device(index_of(out));
    int64_t sc[TW_MAX_DIMS], sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    broadcast_strides(c, out->ndim, sc);
    broadcast_strides(a, out->ndim, sa);
    broadcast_strides(b, out->ndim, sb);
    return d ? check(twc_where(d, out->dtype, out->ndim, out->shape, tw__data(out), out->strides, tw__data(c), sc,
                               tw__data(a), sa, tw__data(b), sb),
                     index_of(out))
             : -1;
}

static int run_cast(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twc_device *d = device(index_of(out));
    return d ? check(twc_cast(d, out->dtype, x->dtype, x->ndim, x->shape, tw__data(out), out->strides, tw__data(x),
                              x->strides),
                     index_of(out))
             : -1;
}

static int run_copy(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twc_device *d = device(index_of(out));
    return d ? check(twc_copy(d, tw_dtype_size(x->dtype), x->ndim, x->shape, tw__data(out), out->strides,
                              tw__data(x), x->strides),
                     index_of(out))
             : -1;
}

/* sum/prod/max/min: attrs i[1 + d] marks the reduced axes (ops/reduce.c). */
static int run_reduce(int kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twc_device *d = device(index_of(out));
    if (!d)
        return -1;
    if (x->numel == 0)
        return check(twc_fill(d, out->dtype, out->numel, tw__data(out), kop == TWK_PROD ? 1 : 0), index_of(out));
    bool mask[TW_MAX_DIMS];
    for (int k = 0; k < x->ndim; k++)
        mask[k] = call->attrs->i[1 + k];
    return check(twc_reduce(d, kop, x->dtype, x->ndim, x->shape, x->strides, tw__data(x), mask, tw__data(out)),
                 index_of(out));
}

/* argmax/argmin: attrs i[0] is the axis. */
static int run_arg(int kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twc_device *d = device(index_of(out));
    bool mask[TW_MAX_DIMS] = {0};
    mask[call->attrs->i[0]] = true;
    return d ? check(twc_reduce(d, kop, x->dtype, x->ndim, x->shape, x->strides, tw__data(x), mask, tw__data(out)),
                     index_of(out))
             : -1;
}

#define REDUCER(NAME, KOP, RUN)                                                                                \
    static int NAME##_kernel(const tw_op_call *call, tw_tensor *const *outs) { return RUN(KOP, call, outs); }
REDUCER(sum, TWK_SUM, run_reduce)
REDUCER(prod, TWK_PROD, run_reduce)
REDUCER(max, TWK_RMAX, run_reduce)
REDUCER(min, TWK_RMIN, run_reduce)
REDUCER(argmax, TWK_ARGMAX, run_arg)
REDUCER(argmin, TWK_ARGMIN, run_arg)

/* How cuBLAS reads the last two axes of t (as ops/matmul.c's blas_layout):
 * leading dimension and whether the transpose flag flips; false when the
 * layout needs packing first. */
static bool blas_layout(const tw_tensor *t, bool *flip, int64_t *ld)
{
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    int64_t sr = t->strides[t->ndim - 2], sc = t->strides[t->ndim - 1];
    if ((sc == 1 || c == 1) && (sr >= c || r == 1)) {
        *flip = false;
        *ld = r == 1 ? (c > 0 ? c : 1) : sr;
        return *ld >= (c > 0 ? c : 1);
    }
    if ((sr == 1 || r == 1) && (sc >= r || c == 1)) {
        *flip = true;
        *ld = c == 1 ? (r > 0 ? r : 1) : sc;
        return *ld >= (r > 0 ? r : 1);
    }
    return false;
}

/* matmul (attrs i[0], i[1]: transpose a, b): the last batch axis in one
 * strided-batched call, the axes before it looped. */
static int run_matmul(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *a = call->inputs[0], *b = call->inputs[1], *c = outs[0];
    int index = index_of(c);
    twc_device *d = device(index);
    if (!d)
        return -1;
    bool ta = call->attrs->i[0], tb = call->attrs->i[1], flip_a, flip_b;
    int64_t lda, ldb;
    if (!blas_layout(a, &flip_a, &lda) || !blas_layout(b, &flip_b, &ldb))
        return tw_error_set("matmul: cuda:%d takes operands whose last two axes are dense rows or columns; "
                            "make them contiguous first (tw_contiguous)", index);
    int64_t m = c->shape[c->ndim - 2], n = c->shape[c->ndim - 1];
    int64_t k = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    int nb = c->ndim - 2;
    int64_t sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    for (int k2 = 0; k2 < nb; k2++) {
        int ia = k2 - (nb - (a->ndim - 2)), ib = k2 - (nb - (b->ndim - 2));
        sa[k2] = ia < 0 || a->shape[ia] == 1 ? 0 : a->strides[ia];
        sb[k2] = ib < 0 || b->shape[ib] == 1 ? 0 : b->strides[ib];
    }
    int64_t inner = nb > 0 ? c->shape[nb - 1] : 1, outer = nb > 1 ? count(nb - 1, c->shape) : 1;
    int64_t isa = nb > 0 ? sa[nb - 1] : 0, isb = nb > 0 ? sb[nb - 1] : 0;
    size_t isz = tw_dtype_size(c->dtype);
    for (int64_t o = 0; o < outer; o++) {
        int64_t oa = 0, ob = 0, rest = o;
        for (int k2 = nb - 2; k2 >= 0; k2--) {
            int64_t i = rest % c->shape[k2];
            rest /= c->shape[k2];
            oa += i * sa[k2];
            ob += i * sb[k2];
        }
        if (twc_gemm(d, c->dtype, ta != flip_a, tb != flip_b, m, n, k, (char *)tw__data(a) + oa * (int64_t)isz, lda,
                     isa, (char *)tw__data(b) + ob * (int64_t)isz, ldb, isb, 0.0f,
                     (char *)tw__data(c) + o * inner * m * n * (int64_t)isz, n, m * n, inner) < 0)
            return check(-1, index);
    }
    return 0;
}

/* Kernels by op name (op definitions are the engine's hidden symbols). */
static const struct {
    const char *name;
    tw_kernel_fn fn;
} by_name[] = {
    {"where", run_where},     {"cast", run_cast},       {"copy", run_copy},     {"sum", sum_kernel},
    {"prod", prod_kernel},    {"max", max_kernel},      {"min", min_kernel},    {"argmax", argmax_kernel},
    {"argmin", argmin_kernel}, {"matmul", run_matmul},
};

static tw_kernel_fn cuda_kernel(int index, const tw_op_def *op)
{
    if (op->elementwise == 1)
        return run_unary;
    if (op->elementwise == 2)
        return run_binary;
    for (size_t i = 0; i < sizeof by_name / sizeof by_name[0]; i++)
        if (strcmp(op->name, by_name[i].name) == 0)
            return by_name[i].fn;
    return NULL;
}

/* Integer div and floormod need the divisor checked for zeros on the host
 * first (the CPU's error); float matmul only. */
static bool cuda_supports_op(int index, const tw_op_call *call)
{
    const tw_op_def *op = call->op;
    if (op->elementwise == 2 && (op->elementwise_op == TWK_BINARY_div || op->elementwise_op == TWK_BINARY_floormod) &&
        !tw_dtype_is_float(call->inputs[0]->dtype)) {
        tw_error_set("%s: integer division on cuda:%d is not supported yet (the zero-divisor check runs on the CPU)",
                     op->name, index);
        return false;
    }
    if (strcmp(op->name, "matmul") == 0 && !tw_dtype_is_float(call->inputs[0]->dtype)) {
        tw_error_set("matmul: cuda:%d multiplies float32 and float64 only, got %s", index,
                     tw_dtype_name(call->inputs[0]->dtype));
        return false;
    }
    return true;
}

static const tw_backend backend_cuda = {
    .abi = TW_BACKEND_ABI,
    .kind = TW_DEVICE_CUDA,
    .name = "cuda",
    .device_count = cuda_count,
    .describe = cuda_describe,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_from_host = cuda_copy_from_host,
    .copy_to_host = cuda_copy_to_host,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .read_element = cuda_read_element,
    .synchronize = cuda_synchronize,
    .kernel = cuda_kernel,
    .supports_op = cuda_supports_op,
};

__attribute__((visibility("default"))) int tw_backend_plugin_init(int abi)
{
    if (abi != TW_BACKEND_ABI)
        return tw_error_set("libtw-cuda.so speaks backend ABI %d, the engine %d", TW_BACKEND_ABI, abi);
    device_total = twc_device_count();
    if (device_total == 0)
        return tw_error_set("%s", twc_last_error());
    if (device_total > MAX_DEVICES)
        device_total = MAX_DEVICES;
    return tw_backend_register(&backend_cuda);
}
