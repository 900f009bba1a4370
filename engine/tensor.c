/* Tensor headers: allocation, reference counting, inspection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "backend.h"

static atomic_uint_fast64_t next_tensor_id = 1;

int64_t tw__numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

int tw__check_shape(const char *op, int ndim, const int64_t *shape)
{
    char buf[160];
    if ((unsigned)ndim > TW_MAX_DIMS)
        return tw_error_set("%s: rank %d is outside 0..%d", op, ndim, TW_MAX_DIMS);
    int64_t n = 1; /* zeros count as ones: contiguous strides multiply the other sizes all the same */
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return tw_error_set("%s: negative dimension in shape %s", op, tw_shape_str(ndim, shape, buf, sizeof buf));
        if (__builtin_mul_overflow(n, shape[d] ? shape[d] : 1, &n))
            return tw_error_set("%s: shape %s has more than INT64_MAX elements", op,
                                tw_shape_str(ndim, shape, buf, sizeof buf));
    }
    return 0;
}

void tw__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
}

static tw_tensor *header_new(tw_dtype dtype, int ndim, const int64_t *shape, int64_t numel)
{
    tw_tensor *t = tw__header_alloc();
    if (!t) {
        tw_error_set("out of memory allocating a tensor header");
        return NULL;
    }
    atomic_init(&t->refcount, 1);
    t->dtype = dtype;
    t->ndim = ndim;
    t->weak = false;
    if (ndim > 0)
        memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    t->numel = numel;
    t->offset = 0;
    t->storage = NULL;
    t->variable = NULL;
    t->id = atomic_fetch_add_explicit(&next_tensor_id, 1, memory_order_relaxed);
    return t;
}

tw_tensor *tw__tensor_new(tw_dtype dtype, int ndim, const int64_t *shape, tw_device device)
{
    return tw__check_shape("tensor", ndim, shape) < 0 ? NULL : tw__tensor_new_checked(dtype, ndim, shape, device);
}

tw_tensor *tw__tensor_new_checked(tw_dtype dtype, int ndim, const int64_t *shape, tw_device device)
{
    int64_t numel = tw__numel(ndim, shape);
    size_t bytes;
    if (__builtin_mul_overflow((size_t)numel, twk_dtype_size(dtype), &bytes)) {
        char buf[160];
        tw_error_set("tensor: shape %s of %s needs more bytes than memory can address",
                     tw_shape_str(ndim, shape, buf, sizeof buf), tw_dtype_name(dtype));
        return NULL;
    }
    tw_tensor *t = header_new(dtype, ndim, shape, numel);
    if (!t)
        return NULL;
    t->storage = tw__storage_new(bytes ? bytes : 1, device);
    if (!t->storage) {
        tw__header_free(t);
        return NULL;
    }
    tw__contiguous_strides(ndim, shape, t->strides);
    return t;
}

tw_tensor *tw__tensor_view(tw_tensor *base, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    tw_tensor *t = header_new(base->dtype, ndim, shape, tw__numel(ndim, shape));
    if (!t)
        return NULL;
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    t->offset = offset;
    t->storage = base->storage;
    atomic_fetch_add_explicit(&t->storage->refcount, 1, memory_order_relaxed);
    return t;
}

tw_tensor *tw_tensor_ref(tw_tensor *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
    return t;
}

void tw_tensor_unref(tw_tensor *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1)
        return;
    tw__storage_unref(t->storage);
    if (t->variable) {
        free(t->variable->name);
        free(t->variable);
    }
    tw__header_free(t);
}

tw_dtype tw_tensor_dtype(const tw_tensor *t) { return t->dtype; }
tw_device tw_tensor_device(const tw_tensor *t) { return t->storage->device; }
int tw_tensor_ndim(const tw_tensor *t) { return t->ndim; }
const int64_t *tw_tensor_shape(const tw_tensor *t) { return t->shape; }
const int64_t *tw_tensor_strides(const tw_tensor *t) { return t->strides; }
int64_t tw_tensor_numel(const tw_tensor *t) { return t->numel; }
void *tw_tensor_data(const tw_tensor *t)
{
    if (tw__tracer && tw__trace_read(t, "tw_tensor_data") < 0)
        return NULL;
    if (t->storage->device.kind != TW_DEVICE_CPU) {
        char name[32];
        tw_error_set("tensor_data: the tensor is on %s, not in host memory; copy it with tw_tensor_to(t, TW_CPU) "
                     "first",
                     tw_device_name(t->storage->device, name, sizeof name));
        return NULL;
    }
    return tw__data(t);
}

int64_t tw_tensor_dim(const tw_tensor *t, int axis)
{
    int a;
    if (tw__normalize_axis("dim", axis, t->ndim, &a) < 0)
        return -1;
    return t->shape[a];
}

bool tw_tensor_is_contiguous(const tw_tensor *t)
{
    int64_t expected = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != expected)
            return false;
        expected *= t->shape[d];
    }
    return true;
}

bool tw_tensor_shares_storage(const tw_tensor *a, const tw_tensor *b)
{
    return a && b && a->storage == b->storage;
}

static int64_t element_offset(const tw_tensor *t, const int64_t *index)
{
    int64_t off = t->offset;
    for (int d = 0; d < t->ndim; d++)
        off += index[d] * t->strides[d];
    return off;
}

double tw_tensor_get(const tw_tensor *t, const int64_t *index)
{
    if (tw__tracer && tw__trace_read(t, "tw_tensor_get") < 0)
        return NAN;
    for (int d = 0; d < t->ndim; d++) {
        if (index[d] < 0 || index[d] >= t->shape[d]) {
            tw_error_set("get: index %lld is out of range for axis %d of size %lld", (long long)index[d], d,
                         (long long)t->shape[d]);
            return NAN;
        }
    }
    const char *base = t->storage->data;
    const char *at = base + element_offset(t, index) * (int64_t)tw_dtype_size(t->dtype);
    if (t->storage->device.kind == TW_DEVICE_CPU)
        return twk_load(t->dtype, at);
    const tw_backend *b = tw__backend(t->storage->device, "get");
    char value[8];
    if (!b || b->read_element(t->storage->device.index, tw_dtype_size(t->dtype), at, value) < 0)
        return NAN;
    return twk_load(t->dtype, value);
}

double tw_tensor_item(const tw_tensor *t)
{
    if (!t) {
        if (!tw_error_pending())
            tw_error_set("item: tensor is NULL");
        return NAN;
    }
    if (t->numel != 1) {
        tw__shape_error("item", "needs exactly one element, got shape", t);
        return NAN;
    }
    if (tw__tracer && tw__trace_read(t, "tw_tensor_item") < 0)
        return NAN;
    int64_t zero[TW_MAX_DIMS] = {0};
    return tw_tensor_get(t, zero);
}

void tw__copy_into(tw_tensor *dst, const tw_tensor *src)
{
    if (dst->storage->device.kind == TW_DEVICE_CPU && src->storage->device.kind == TW_DEVICE_CPU)
        twk_copy(tw_dtype_size(src->dtype), src->ndim, src->shape, tw__data(dst), dst->strides, tw__data(src),
                 src->strides);
    else
        tw__copy_between(dst, src);
}

int tw_tensor_copy_to(const tw_tensor *t, void *buf, size_t bytes)
{
    if (!t)
        return tw__check_inputs("copy_to", 1, (tw_tensor *const[]){NULL});
    if (tw__tracer && tw__trace_read(t, "tw_tensor_copy_to") < 0)
        return -1;
    size_t need = (size_t)t->numel * tw_dtype_size(t->dtype);
    if (bytes != need)
        return tw_error_set("copy_to: buffer has %zu bytes, tensor needs %zu", bytes, need);
    if (need == 0)
        return 0; /* an empty tensor: nothing to copy, and buf may be NULL */
    int64_t strides[TW_MAX_DIMS];
    tw__contiguous_strides(t->ndim, t->shape, strides);
    const tw_backend *b = tw__backend(t->storage->device, "copy_to");
    return b ? b->copy_to_host(t->storage->device.index, tw_dtype_size(t->dtype), t->ndim, t->shape, buf, strides,
                               tw__data(t), t->strides)
             : -1;
}

tw_tensor *tw__contiguous_raw(tw_tensor *t)
{
    if (tw_tensor_is_contiguous(t))
        return tw_tensor_ref(t);
    tw_tensor *c = tw__tensor_new(t->dtype, t->ndim, t->shape, t->storage->device);
    if (c)
        tw__copy_into(c, t);
    return c;
}

const char *tw_shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
    return buf;
}
