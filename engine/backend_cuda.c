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
 * (sum/prod/max/min/argmax/argmin), matmul, the two softmax
 * cross-entropies, gather, one_hot, the variable assignments, the
 * optimizer update (SGD, Adam, AdamW), conv2d and its two gradients (cuDNN),
 * max/avg pooling with their gradients, concat, pad, tile, scatter_add and the
 * fused batch_norm with its gradient (batch_norm.cu). An op without a CUDA kernel fails with the engine's "OP: no
 * kernel for device cuda:N". */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu/gather_kernels.h"
#include "cuda/twc_kernels.h"
#include "ops/geometry.h"
#include "optimizers/optimizer_internal.h"

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
        /* packed is in the pinned buffer once this returns; staged may go
         * back to the cache at once (reuse is ordered on the stream) */
        rc = check(twc_copy_to_device(d, staged, packed, bytes), index);
        if (rc == 0)
            rc = check(twc_copy(d, itemsize, ndim, shape, dst, dst_strides, staged, dense), index);
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
/* A contiguous device copy of t's values: tw__data(t) itself when t is
 * contiguous, else a block from the allocator in *tmp (the caller frees it
 * with twc_free after the kernels that read it were queued). */
static const void *dense_data(twc_device *d, const tw_tensor *t, void **tmp)
{
    *tmp = NULL;
    if (contiguous(tw_dtype_size(t->dtype), t->ndim, t->shape, t->strides))
        return tw__data(t);
    int64_t dense[TW_MAX_DIMS];
    dense_strides(t->ndim, t->shape, dense);
    size_t isz = tw_dtype_size(t->dtype);
    *tmp = twc_alloc(d, (size_t)t->numel * isz);
    if (!*tmp || twc_copy(d, isz, t->ndim, t->shape, *tmp, dense, tw__data(t), t->strides) < 0)
        return NULL;
    return *tmp;
}

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

/* A kernel's device and its first n inputs made dense there (dense_data):
 * in[i], with the temporary copies dense_end frees once the work that reads
 * them is queued. */
typedef struct {
    int index, n;
    twc_device *d;
    const void *in[TW_MAX_INPUTS];
    void *tmp[TW_MAX_INPUTS];
} dense_args;

/* -1 with the error set (the device, or an input that could not be made dense). */
static int dense_begin(dense_args *a, const tw_tensor *out, int n, tw_tensor *const *inputs)
{
    *a = (dense_args){.index = index_of(out)};
    if (!(a->d = device(a->index)))
        return -1;
    for (; a->n < n; a->n++)
        if (!(a->in[a->n] = dense_data(a->d, inputs[a->n], &a->tmp[a->n]))) {
            a->n++;
            return -1;
        }
    return 0;
}

/* Frees the temporaries; rc as the kernel's result (check names the device). */
static int dense_end(dense_args *a, int rc)
{
    for (int i = 0; i < a->n; i++)
        twc_free(a->d, a->tmp[i]);
    return a->d ? check(rc, a->index) : -1;
}

/* The (outer, axis, inner) sizes of a shape around axis. */
static void split_around(int ndim, const int64_t *shape, int axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int k = 0; k < ndim; k++)
        *outer *= k < axis ? shape[k] : 1, *inner *= k > axis ? shape[k] : 1;
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
    /* An operand cuBLAS cannot read as it is: a dense copy, seen through a
     * shallow header (as ops/matmul.c packs with tw__contiguous_raw). */
    tw_tensor packed_t[2];
    tw_storage packed_s[2];
    void *tmp[2] = {NULL, NULL};
    tw_tensor *ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        bool flip;
        int64_t ld;
        if (tw__blas_layout(ops[i], &flip, &ld))
            continue;
        const void *dense = dense_data(d, ops[i], &tmp[i]);
        if (!dense) {
            twc_free(d, tmp[0]);
            return check(-1, index);
        }
        packed_t[i] = *ops[i];
        packed_s[i] = *ops[i]->storage;
        packed_s[i].data = (void *)dense;
        packed_t[i].storage = &packed_s[i];
        packed_t[i].offset = 0;
        dense_strides(ops[i]->ndim, ops[i]->shape, packed_t[i].strides);
        ops[i] = &packed_t[i];
    }
    a = ops[0], b = ops[1];
    tw__blas_layout(a, &flip_a, &lda);
    tw__blas_layout(b, &flip_b, &ldb);
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
                     (char *)tw__data(c) + o * inner * m * n * (int64_t)isz, n, m * n, inner) < 0) {
            twc_free(d, tmp[0]), twc_free(d, tmp[1]);
            return check(-1, index);
        }
    }
    twc_free(d, tmp[0]), twc_free(d, tmp[1]);
    return 0;
}

/* Values of a small device tensor on the host (labels and indices to check,
 * configuration numbers): a malloc'd contiguous buffer, or NULL with the
 * error set. */
static void *to_host(int index, const tw_tensor *t)
{
    size_t isz = tw_dtype_size(t->dtype), bytes = (size_t)t->numel * isz;
    void *h = malloc(bytes ? bytes : 1);
    int64_t dense[TW_MAX_DIMS];
    dense_strides(t->ndim, t->shape, dense);
    if (!h) {
        tw_error_set("cuda:%d: out of host memory", index);
        return NULL;
    }
    if (cuda_copy_to_host(index, isz, t->ndim, t->shape, h, dense, tw__data(t), t->strides) < 0) {
        free(h);
        return NULL;
    }
    return h;
}

/* The values of a small dense device tensor (optimizer_update's
 * configuration numbers, iteration counter and clipping factor) into dst:
 * from the storage's host mirror while its version is unchanged (every
 * in-place write bumps it), else copied again. Each of ResNet50's 214
 * variable updates read two of them from the device, two waits for the
 * device per variable; now a step waits once for the counter. 0, or -1 with
 * the error set. */
#define MIRROR_MAX_BYTES 1024
static pthread_mutex_t mirror_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_small(int index, const tw_tensor *t, void *dst, size_t bytes)
{
    size_t isz = tw_dtype_size(t->dtype);
    if ((size_t)t->numel * isz != bytes)
        return tw_error_set("cuda:%d: expected %zu bytes of values, the tensor has %zu", index, bytes,
                            (size_t)t->numel * isz);
    tw_storage *s = t->storage;
    if (!contiguous(isz, t->ndim, t->shape, t->strides) || s->nbytes > MIRROR_MAX_BYTES) {
        void *h = to_host(index, t);
        if (!h)
            return -1;
        memcpy(dst, h, bytes);
        free(h);
        return 0;
    }
    pthread_mutex_lock(&mirror_lock);
    unsigned version = atomic_load(&s->version); /* before the copy: a write queued meanwhile bumps it again */
    int rc = 0;
    if (!s->mirror || s->mirror_version != version) {
        if (!s->mirror && !(s->mirror = malloc(s->nbytes ? s->nbytes : 1)))
            rc = tw_error_set("cuda:%d: out of host memory", index);
        else if (cuda_copy_to_host(index, 1, 1, (int64_t[]){(int64_t)s->nbytes}, s->mirror, (int64_t[]){1}, s->data,
                                   (int64_t[]){1}) < 0)
            rc = -1;
        if (rc < 0) {
            free(s->mirror);
            s->mirror = NULL;
        } else {
            s->mirror_version = version;
        }
    }
    if (rc == 0)
        memcpy(dst, (const char *)s->mirror + ((const char *)tw__data(t) - (const char *)s->data), bytes);
    pthread_mutex_unlock(&mirror_lock);
    return rc;
}

/* The first position of the device tensor indices whose value is outside
 * [0, size), checked on the host as the CPU's kernels do, with that value in
 * *value; -1 when all are inside, -2 with the error set when the copy failed. */
static int64_t first_outside(int index, const tw_tensor *indices, int64_t size, int64_t *value)
{
    void *host = to_host(index, indices);
    if (!host)
        return -2;
    int64_t bad = twk_index_check(indices->dtype, indices->numel, host, size);
    if (bad >= 0)
        *value = twk_index_at(indices->dtype, host, bad);
    free(host);
    return bad;
}

/* Rows of the last axis of a contiguous tensor: rows and classes. */
static void rows_of(const tw_tensor *logits, int64_t *rows, int64_t *classes)
{
    *classes = logits->shape[logits->ndim - 1];
    *rows = *classes ? logits->numel / *classes : 0;
}

static int run_softmax_xent(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *logits = call->inputs[0], *out = outs[0];
    dense_args a;
    int64_t rows, classes;
    rows_of(logits, &rows, &classes);
    int rc = dense_begin(&a, out, 2, call->inputs) == 0
                 ? twc_softmax_cross_entropy(a.d, logits->dtype, rows, classes, a.in[0], a.in[1], tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* The labels are checked on the host first, as the CPU's kernel does. */
static int run_sparse_softmax_xent(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *logits = call->inputs[0], *labels = call->inputs[1], *out = outs[0];
    int64_t rows, classes, label;
    rows_of(logits, &rows, &classes);
    int64_t bad = first_outside(index_of(out), labels, classes, &label);
    if (bad >= 0) {
        char shape[160];
        tw_error_set("sparse_softmax_cross_entropy: label %lld at position %lld is outside [0, %lld) for logits of "
                     "shape %s",
                     (long long)label, (long long)bad, (long long)classes,
                     tw_shape_str(logits->ndim, logits->shape, shape, sizeof shape));
    }
    if (bad != -1)
        return -1;
    dense_args a;
    int rc = dense_begin(&a, out, 2, call->inputs) == 0
                 ? twc_sparse_softmax_cross_entropy(a.d, logits->dtype, labels->dtype, rows, classes, a.in[0], a.in[1],
                                                    tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* gather (attrs i[0]: axis): indices checked on the host, as the CPU's. */
static int run_gather(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *params = call->inputs[0], *indices = call->inputs[1], *out = outs[0];
    int axis = (int)call->attrs->i[0];
    int64_t value, bad = first_outside(index_of(out), indices, params->shape[axis], &value);
    if (bad >= 0)
        tw_error_set("gather: index %lld at position %lld is out of range for axis %d of size %lld", (long long)value,
                     (long long)bad, axis, (long long)params->shape[axis]);
    if (bad != -1)
        return -1;
    int64_t outer, inner;
    split_around(params->ndim, params->shape, axis, &outer, &inner);
    dense_args a;
    int rc = dense_begin(&a, out, 2, call->inputs) == 0
                 ? twc_gather(a.d, tw_dtype_size(params->dtype), outer, params->shape[axis], inner, a.in[0],
                              indices->dtype, indices->numel, a.in[1], tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* one_hot (attrs i[0]: depth): indices outside [0, depth) give zeros. */
static int run_one_hot(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *indices = call->inputs[0], *out = outs[0];
    dense_args a;
    int rc = dense_begin(&a, out, 1, call->inputs) == 0
                 ? twc_one_hot(a.d, out->dtype, indices->dtype, indices->numel, a.in[0], call->attrs->i[0],
                               tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* optimizer_update (optimizers/traced_update.c's op): inputs variable,
 * gradient, iteration counter, the configuration's float64 numbers, the
 * slots and maybe the global clipping factor; ints kind, nesterov,
 * schedule kind, decay_steps, staircase, slot count, factor given. The
 * numbers come to the host (a few bytes), the update runs fused on the
 * device as engine/optimizers' loop does on the CPU. The numbering below
 * mirrors traced_update.c's A_* and H_* (private there): keep them in step. */
enum { OPT_KIND, OPT_NESTEROV, OPT_SCHEDULE, OPT_DECAY_STEPS, OPT_STAIRCASE, OPT_NSLOTS, OPT_HAS_SCALE };
enum { H_LR, H_DECAY_RATE, H_ALPHA, H_MOMENTUM, H_BETA_1, H_BETA_2, H_EPSILON, H_WEIGHT_DECAY, H_RHO, H_CLIPVALUE,
       H_CLIPNORM, H_GLOBAL_CLIPNORM, H_COUNT };

static int run_optimizer_update(const tw_op_call *call, tw_tensor *const *outs)
{
    (void)outs;
    const tw_attrs *a = call->attrs;
    tw_tensor *const *in = call->inputs;
    tw_tensor *v = in[0], *g = in[1];
    int index = index_of(v), nslots = (int)a->i[OPT_NSLOTS];
    twc_device *d = device(index);
    if (!d)
        return -1;
    double h[H_COUNT], factor = 1;
    int64_t done;
    if (read_small(index, in[3], h, sizeof h) < 0 || read_small(index, in[2], &done, sizeof done) < 0 ||
        (a->i[OPT_HAS_SCALE] && read_small(index, in[4 + nslots], &factor, sizeof factor) < 0))
        return -1;
    if (h[H_CLIPNORM] > 0)
        return tw_error_set("optimizer_update: clipnorm on cuda:%d is not supported yet (use clipvalue or "
                            "global_clipnorm)", index);
    tw_lr_schedule schedule = {.kind = (tw_schedule_kind)a->i[OPT_SCHEDULE], .initial_learning_rate = h[H_LR],
                               .decay_steps = a->i[OPT_DECAY_STEPS], .decay_rate = h[H_DECAY_RATE],
                               .staircase = a->i[OPT_STAIRCASE] != 0, .alpha = h[H_ALPHA]};
    double lr = tw_lr_schedule_at(&schedule, done);
    twc_update u = {.lr = lr, .keep = 1 - lr * h[H_WEIGHT_DECAY], .scale = factor,
                    .clip = h[H_CLIPVALUE] > 0 && !(h[H_GLOBAL_CLIPNORM] > 0) ? h[H_CLIPVALUE] : INFINITY,
                    .momentum = h[H_MOMENTUM], .beta_1 = h[H_BETA_1], .beta_2 = h[H_BETA_2], .epsilon = h[H_EPSILON],
                    .nesterov = a->i[OPT_NESTEROV] != 0, .t = done + 1};
    void *tg;
    const void *gd = dense_data(d, g, &tg);
    if (!gd)
        return -1;
    int rc;
    if (a->i[OPT_KIND] == TW_OPTIMIZER_SGD)
        rc = twc_sgd_update(d, v->dtype, v->numel, tw__data(v), gd, nslots ? tw__data(in[4]) : NULL, &u);
    else
        rc = twc_adam_update(d, v->dtype, v->numel, tw__data(v), gd, tw__data(in[4]), tw__data(in[5]), &u);
    twc_free(d, tg);
    rc = check(rc, index);
    if (rc == 0) { /* in-place writes, as the CPU's loop records them */
        atomic_fetch_add(&v->storage->version, 1);
        for (int k = 0; k < nslots; k++)
            atomic_fetch_add(&in[4 + k]->storage->version, 1);
    }
    return rc;
}

/* assign, assign_add, assign_sub (variable.c): the value (broadcast, a weak
 * scalar cast to the variable's dtype first) into the variable, in place. */
static int run_assign(int kind, const tw_op_call *call)
{
    tw_tensor *v = call->inputs[0], *value = call->inputs[1];
    int index = index_of(v);
    twc_device *d = device(index);
    if (!d)
        return -1;
    const void *src = tw__data(value);
    void *converted = NULL;
    int64_t strides[TW_MAX_DIMS];
    broadcast_strides(value, v->ndim, strides);
    if (value->dtype != v->dtype) {
        converted = twc_alloc(d, (size_t)value->numel * tw_dtype_size(v->dtype));
        int64_t dense[TW_MAX_DIMS];
        dense_strides(value->ndim, value->shape, dense);
        if (!converted || twc_cast(d, v->dtype, value->dtype, value->ndim, value->shape, converted, dense,
                                   tw__data(value), value->strides) < 0) {
            twc_free(d, converted);
            return check(-1, index);
        }
        src = converted;
        for (int k = 0; k < v->ndim; k++) { /* strides of the dense copy, broadcast */
            int vk = k - (v->ndim - value->ndim);
            strides[k] = vk < 0 || value->shape[vk] == 1 ? 0 : dense[vk];
        }
    }
    int rc = kind == 0 ? twc_copy(d, tw_dtype_size(v->dtype), v->ndim, v->shape, tw__data(v), v->strides, src, strides)
                       : twc_binary(d, kind > 0 ? TWK_BINARY_add : TWK_BINARY_sub, v->dtype, v->ndim, v->shape,
                                    tw__data(v), v->strides, tw__data(v), v->strides, src, strides);
    twc_free(d, converted);
    if (rc == 0)
        atomic_fetch_add(&v->storage->version, 1);
    return check(rc, index);
}

static int assign_kernel(const tw_op_call *call, tw_tensor *const *outs) { return run_assign(0, call); }
static int assign_add_kernel(const tw_op_call *call, tw_tensor *const *outs) { return run_assign(1, call); }
static int assign_sub_kernel(const tw_op_call *call, tw_tensor *const *outs) { return run_assign(-1, call); }

/* ---- conv2d and pooling: attrs and geometry as the CPU's (ops/geometry.h) ---- */
enum { CONV_FORWARD, CONV_INPUT, CONV_FILTER, MAX_POOL, MAX_POOL_GRAD, AVG_POOL, AVG_POOL_GRAD };

/* Inputs made dense, then the pass; kind says which. */
static int run_window(int kind, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    dense_args args;
    int rc = dense_begin(&args, out, call->ninputs, call->inputs);
    twc_device *d = args.d;
    const void *const *in = args.in;
    const tw_attrs *a = call->attrs;
    tw_tensor *const *x = call->inputs;
    tw_dtype dt = out->dtype;
    if (rc == 0) {
        twk_conv2d_shape cs;
        twk_pool2d_shape ps;
        const char *op = call->op->name;
        const int64_t *shape_attr = a->i + TW_CONV_ATTR_SHAPE;
        switch (kind) {
        case CONV_FORWARD:
            rc = tw__conv2d_geometry(op, a, x[0]->shape, x[1]->shape, &cs) < 0
                     ? -1
                     : twc_conv2d_forward(d, dt, &cs, in[0], in[1], tw__data(out));
            break;
        case CONV_INPUT: /* (filter, grad_output); the input's shape in the attrs */
            rc = tw__conv2d_geometry(op, a, shape_attr, x[0]->shape, &cs) < 0
                     ? -1
                     : twc_conv2d_backprop_input(d, dt, &cs, in[0], in[1], tw__data(out));
            break;
        case CONV_FILTER: /* (input, grad_output); the filter's shape in the attrs */
            rc = tw__conv2d_geometry(op, a, x[0]->shape, shape_attr, &cs) < 0
                     ? -1
                     : twc_conv2d_backprop_filter(d, dt, &cs, in[0], in[1], tw__data(out));
            break;
        case MAX_POOL:
            rc = tw__pool2d_geometry(op, a, x[0]->shape, &ps) < 0 ? -1
                                                                  : twc_max_pool2d(d, dt, &ps, in[0], tw__data(out));
            break;
        case MAX_POOL_GRAD: /* (input, output, grad_output) */
            rc = tw__pool2d_geometry(op, a, x[0]->shape, &ps) < 0
                     ? -1
                     : twc_max_pool2d_grad(d, dt, &ps, in[0], in[2], tw__data(out));
            break;
        case AVG_POOL:
            rc = tw__pool2d_geometry(op, a, x[0]->shape, &ps) < 0 ? -1
                                                                  : twc_avg_pool2d(d, dt, &ps, in[0], tw__data(out));
            break;
        case AVG_POOL_GRAD: /* (grad_output); the input's shape in the attrs */
            rc = tw__pool2d_geometry(op, a, a->i + TW_POOL_ATTR_SHAPE, &ps) < 0
                     ? -1
                     : twc_avg_pool2d_grad(d, dt, &ps, in[0], tw__data(out));
            break;
        }
    }
    return dense_end(&args, rc);
}

#define WINDOW_KERNEL(NAME, KIND)                                                                              \
    static int NAME##_kernel(const tw_op_call *call, tw_tensor *const *outs) { return run_window(KIND, call, outs); }
WINDOW_KERNEL(conv2d, CONV_FORWARD)
WINDOW_KERNEL(conv2d_backprop_input, CONV_INPUT)
WINDOW_KERNEL(conv2d_backprop_filter, CONV_FILTER)
WINDOW_KERNEL(max_pool2d, MAX_POOL)
WINDOW_KERNEL(max_pool2d_grad, MAX_POOL_GRAD)
WINDOW_KERNEL(avg_pool2d, AVG_POOL)
WINDOW_KERNEL(avg_pool2d_grad, AVG_POOL_GRAD)

/* ---- concat, pad, tile, scatter_add (ops/concat.c, pad_tile.c, gather.c) ---- */
/* concat (attrs i[0]: axis): each input packed, then placed. */
static int run_concat(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    int axis = (int)call->attrs->i[0], n = call->ninputs;
    if (n > TW_MAX_INPUTS)
        return tw_error_set("concat: cuda:%d joins at most %d tensors at once, got %d", index_of(out), TW_MAX_INPUTS, n);
    int64_t sizes[TW_MAX_INPUTS], outer, inner;
    split_around(out->ndim, out->shape, axis, &outer, &inner);
    for (int i = 0; i < n; i++)
        sizes[i] = call->inputs[i]->shape[axis];
    dense_args a;
    int rc = dense_begin(&a, out, n, call->inputs) == 0
                 ? twc_concat(a.d, tw_dtype_size(out->dtype), n, a.in, sizes, outer, inner, tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* pad (attrs i: the (before, after) pairs, f[0]: the value). */
static int run_pad(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    int index = index_of(out);
    twc_device *d = device(index);
    return d ? check(twc_pad(d, x->dtype, x->ndim, x->shape, tw__data(x), x->strides, call->attrs->i,
                             call->attrs->f[0], tw__data(out)),
                     index)
             : -1;
}

/* tile (attrs i: the multiples). */
static int run_tile(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    int index = index_of(out);
    twc_device *d = device(index);
    return d ? check(twc_tile(d, tw_dtype_size(x->dtype), x->ndim, x->shape, tw__data(x), x->strides, call->attrs->i,
                              tw__data(out)),
                     index)
             : -1;
}

/* scatter_add (updates, indices; attrs i[0]: axis): indices checked on the
 * host as the CPU's; the output zeroed, then the atomic adds. */
static int run_scatter_add(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *indices = call->inputs[1], *out = outs[0];
    int axis = (int)call->attrs->i[0];
    int64_t value, bad = first_outside(index_of(out), indices, out->shape[axis], &value);
    if (bad >= 0)
        tw_error_set("scatter_add: index %lld at position %lld is out of range for axis %d of size %lld",
                     (long long)value, (long long)bad, axis, (long long)out->shape[axis]);
    if (bad != -1)
        return -1;
    int64_t outer, inner;
    split_around(out->ndim, out->shape, axis, &outer, &inner);
    dense_args a;
    int rc = dense_begin(&a, out, 2, call->inputs) == 0 && twc_fill(a.d, out->dtype, out->numel, tw__data(out), 0) == 0
                 ? twc_scatter_add(a.d, out->dtype, outer, out->shape[axis], inner, a.in[0], indices->dtype,
                                   indices->numel, a.in[1], tw__data(out))
                 : -1;
    return dense_end(&a, rc);
}

/* ---- batch_norm, batch_norm_grad (ops/batch_norm.c; attrs f[0]: epsilon) ---- */
/* Forward (x, gamma, beta) -> y, mean, inv_std, or backward (x, dy, gamma,
 * mean, inv_std) -> dx, dgamma, dbeta from the saved statistics, over x as
 * (rows, channels) with the channel last. No rows: the mean and inv_std of
 * nothing are NaN, as the CPU's 0 / 0, and their gradients 0. */
static int run_bn(const tw_op_call *call, tw_tensor *const *outs, bool backward)
{
    tw_tensor *x = call->inputs[0];
    int64_t channels = x->shape[x->ndim - 1], rows = 1;
    for (int d = 0; d < x->ndim - 1; d++)
        rows *= x->shape[d];
    dense_args a;
    int rc = dense_begin(&a, outs[0], backward ? 5 : 3, call->inputs);
    if (rc == 0 && rows == 0) {
        double empty = backward ? 0 : NAN;
        rc = twc_fill(a.d, x->dtype, channels, tw__data(outs[1]), empty) < 0 ||
                     twc_fill(a.d, x->dtype, channels, tw__data(outs[2]), empty) < 0
                 ? -1
                 : 0;
    } else if (rc == 0 && channels > 0 && backward)
        rc = twc_batch_norm_backward(a.d, x->dtype, rows, channels, a.in[0], a.in[1], a.in[2], a.in[3], a.in[4],
                                     tw__data(outs[0]), tw__data(outs[1]), tw__data(outs[2]));
    else if (rc == 0 && channels > 0)
        rc = twc_batch_norm_forward(a.d, x->dtype, rows, channels, a.in[0], a.in[1], a.in[2], call->attrs->f[0],
                                    tw__data(outs[0]), tw__data(outs[1]), tw__data(outs[2]));
    return dense_end(&a, rc);
}

static int run_batch_norm(const tw_op_call *call, tw_tensor *const *outs)
{
    return run_bn(call, outs, false);
}

static int run_batch_norm_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    return run_bn(call, outs, true);
}

/* Kernels by op number (op_ids.h); every elementwise op of the table runs
 * through run_unary or run_binary. */
#define UNARY_ENTRY(name, ...) [TW_OP_ID_##name] = run_unary,
#define BINARY_ENTRY(name, ...) [TW_OP_ID_##name] = run_binary,
static const tw_kernel_fn kernels[TW_OP_COUNT] = {
    TWK_UNARY_OPS(UNARY_ENTRY) TWK_BINARY_OPS(BINARY_ENTRY)
    [TW_OP_ID_where] = run_where,
    [TW_OP_ID_cast] = run_cast,
    [TW_OP_ID_copy] = run_copy,
    [TW_OP_ID_sum] = sum_kernel,
    [TW_OP_ID_prod] = prod_kernel,
    [TW_OP_ID_max] = max_kernel,
    [TW_OP_ID_min] = min_kernel,
    [TW_OP_ID_argmax] = argmax_kernel,
    [TW_OP_ID_argmin] = argmin_kernel,
    [TW_OP_ID_matmul] = run_matmul,
    [TW_OP_ID_softmax_cross_entropy] = run_softmax_xent,
    [TW_OP_ID_sparse_softmax_cross_entropy] = run_sparse_softmax_xent,
    [TW_OP_ID_gather] = run_gather,
    [TW_OP_ID_one_hot] = run_one_hot,
    [TW_OP_ID_optimizer_update] = run_optimizer_update,
    [TW_OP_ID_assign] = assign_kernel,
    [TW_OP_ID_assign_add] = assign_add_kernel,
    [TW_OP_ID_assign_sub] = assign_sub_kernel,
    [TW_OP_ID_conv2d] = conv2d_kernel,
    [TW_OP_ID_conv2d_backprop_input] = conv2d_backprop_input_kernel,
    [TW_OP_ID_conv2d_backprop_filter] = conv2d_backprop_filter_kernel,
    [TW_OP_ID_max_pool2d] = max_pool2d_kernel,
    [TW_OP_ID_max_pool2d_grad] = max_pool2d_grad_kernel,
    [TW_OP_ID_avg_pool2d] = avg_pool2d_kernel,
    [TW_OP_ID_avg_pool2d_grad] = avg_pool2d_grad_kernel,
    [TW_OP_ID_concat] = run_concat,
    [TW_OP_ID_pad] = run_pad,
    [TW_OP_ID_tile] = run_tile,
    [TW_OP_ID_scatter_add] = run_scatter_add,
    [TW_OP_ID_batch_norm] = run_batch_norm,
    [TW_OP_ID_batch_norm_grad] = run_batch_norm_grad,
};

static tw_kernel_fn cuda_kernel(const tw_op_def *op)
{
    return op->id > TW_OP_ID_NONE && op->id < TW_OP_COUNT ? kernels[op->id] : NULL;
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
    if (op->id == TW_OP_ID_optimizer_update) {
        int64_t kind = call->attrs->i[OPT_KIND];
        if (kind != TW_OPTIMIZER_SGD && kind != TW_OPTIMIZER_ADAM && kind != TW_OPTIMIZER_ADAMW) {
            tw_error_set("optimizer_update: cuda:%d runs SGD, Adam and AdamW; RMSprop and Adagrad not yet", index);
            return false;
        }
    }
    if (op->id == TW_OP_ID_matmul && !tw_dtype_is_float(call->inputs[0]->dtype)) {
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
