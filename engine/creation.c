/* Creating tensors from C data and constants. Creation is not an op: the
 * results are constants, never recorded. */
#include <math.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "backend.h"

static tw_tensor *filled_on(double value, tw_dtype dtype, int ndim, const int64_t *shape, tw_device device)
{
    if ((unsigned)dtype >= TW_DTYPE_COUNT) {
        tw_error_set("tensor: invalid dtype %d", (int)dtype);
        return NULL;
    }
    tw_tensor *t = tw__tensor_new(dtype, ndim, shape, device);
    if (!t)
        return NULL;
    if (device.kind == TW_DEVICE_CPU) {
        twk_fill(dtype, t->numel, tw__data(t), value);
    } else {
        const tw_backend *b = tw__backend(device, "tensor");
        if (!b || b->fill(device.index, dtype, t->numel, tw__data(t), value) < 0) {
            tw_tensor_unref(t);
            return NULL;
        }
    }
    return tw__track(t);
}

static tw_tensor *filled(double value, tw_dtype dtype, int ndim, const int64_t *shape)
{
    return filled_on(value, dtype, ndim, shape, tw_default_device());
}

tw_tensor *tw_tensor_empty_on(tw_device device, tw_dtype dtype, int ndim, const int64_t *shape)
{
    if ((unsigned)dtype >= TW_DTYPE_COUNT) {
        tw_error_set("tensor: invalid dtype %d", (int)dtype);
        return NULL;
    }
    if (device.kind != TW_DEVICE_CPU && !tw__backend(device, "tensor"))
        return NULL;
    return tw__track(tw__tensor_new(dtype, ndim, shape, device));
}

tw_tensor *tw_tensor_empty(tw_dtype dtype, int ndim, const int64_t *shape)
{
    return tw_tensor_empty_on(tw_default_device(), dtype, ndim, shape);
}

tw_tensor *tw_tensor_from_data(const void *data, tw_dtype dtype, int ndim, const int64_t *shape)
{
    if (!data) {
        tw_error_set("tensor_from_data: data is NULL");
        return NULL;
    }
    if ((unsigned)dtype >= TW_DTYPE_COUNT) {
        tw_error_set("tensor_from_data: invalid dtype %d", (int)dtype);
        return NULL;
    }
    tw_device device = tw_default_device();
    tw_tensor *t = tw__tensor_new(dtype, ndim, shape, device);
    if (!t)
        return NULL;
    if (device.kind == TW_DEVICE_CPU) {
        memcpy(tw__data(t), data, (size_t)t->numel * tw_dtype_size(dtype));
    } else if (t->numel > 0) {
        const tw_backend *b = tw__backend(device, "tensor_from_data");
        if (!b || b->copy_from_host(device.index, tw_dtype_size(dtype), ndim, shape, tw__data(t), t->strides, data,
                                    t->strides) < 0) {
            tw_tensor_unref(t);
            return NULL;
        }
    }
    return tw__track(t);
}

tw_tensor *tw_scalar_of(double value, tw_dtype dtype)
{
    return filled(value, dtype, 0, NULL);
}

tw_tensor *tw_scalar(double value)
{
    tw_tensor *t = filled(value, TW_FLOAT64, 0, NULL);
    if (t)
        t->weak = true;
    return t;
}

tw_tensor *tw_zeros(tw_dtype dtype, int ndim, const int64_t *shape) { return filled(0, dtype, ndim, shape); }
tw_tensor *tw_ones(tw_dtype dtype, int ndim, const int64_t *shape) { return filled(1, dtype, ndim, shape); }

tw_tensor *tw_full(double value, tw_dtype dtype, int ndim, const int64_t *shape)
{
    return filled(value, dtype, ndim, shape);
}

tw_tensor *tw_zeros_like(const tw_tensor *t)
{
    if (tw__check_inputs("zeros_like", 1, (tw_tensor *const[]){(tw_tensor *)t}) < 0)
        return NULL;
    return filled_on(0, t->dtype, t->ndim, t->shape, t->storage->device);
}

tw_tensor *tw_ones_like(const tw_tensor *t)
{
    if (tw__check_inputs("ones_like", 1, (tw_tensor *const[]){(tw_tensor *)t}) < 0)
        return NULL;
    return filled_on(1, t->dtype, t->ndim, t->shape, t->storage->device);
}

tw_tensor *tw_arange(double start, double stop, double step, tw_dtype dtype)
{
    if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step)) {
        tw_error_set("arange: start %g, stop %g, step %g do not make a finite range", start, stop, step);
        return NULL;
    }
    double n = ceil((stop - start) / step);
    int64_t len = n > 0 ? (int64_t)n : 0;
    tw_tensor *t = tw__tensor_new(dtype, 1, &len, TW_CPU);
    if (!t)
        return NULL;
    size_t sz = tw_dtype_size(dtype);
    for (int64_t i = 0; i < len; i++)
        twk_store(dtype, (char *)tw__data(t) + i * (int64_t)sz, start + (double)i * step);
    return tw__track(tw__host_to(t, tw_default_device()));
}

tw_tensor *tw_linspace(double start, double stop, int64_t num, tw_dtype dtype)
{
    if (num < 0) {
        tw_error_set("linspace: num %lld is negative", (long long)num);
        return NULL;
    }
    tw_tensor *t = tw__tensor_new(dtype, 1, &num, TW_CPU);
    if (!t)
        return NULL;
    size_t sz = tw_dtype_size(dtype);
    double step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    for (int64_t i = 0; i < num; i++)
        twk_store(dtype, (char *)tw__data(t) + i * (int64_t)sz, i == num - 1 && num > 1 ? stop : start + (double)i * step);
    return tw__track(tw__host_to(t, tw_default_device()));
}

tw_tensor *tw_eye(int64_t rows, int64_t cols, tw_dtype dtype)
{
    if (rows < 0 || cols < 0) {
        tw_error_set("eye: negative size (%lld, %lld)", (long long)rows, (long long)cols);
        return NULL;
    }
    if ((unsigned)dtype >= TW_DTYPE_COUNT) {
        tw_error_set("eye: invalid dtype %d", (int)dtype);
        return NULL;
    }
    int64_t shape[2] = {rows, cols};
    tw_tensor *t = tw__tensor_new(dtype, 2, shape, TW_CPU);
    if (!t)
        return NULL;
    twk_fill(dtype, t->numel, tw__data(t), 0);
    size_t sz = tw_dtype_size(dtype);
    for (int64_t i = 0; i < rows && i < cols; i++)
        twk_store(dtype, (char *)tw__data(t) + (i * cols + i) * (int64_t)sz, 1);
    return tw__track(tw__host_to(t, tw_default_device()));
}
