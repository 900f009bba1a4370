/* The CPU's ops that move elements: concat, gather, scatter_add, pad, tile,
 * one_hot and the strided slice's gradient. */
#include <string.h>

#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"
#include "cpu/gather_kernels.h"

#define IN(i) call->inputs[i]

extern const tw_op_def tw_op_strided_slice;

int tw__cpu_concat(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    int axis = (int)call->attrs->i[0];
    size_t itemsize = tw_dtype_size(out->dtype);
    char *base = tw__data(out);
    int64_t at = 0;
    /* Each input lands in its block of the output: a strided copy through
     * the output's strides (twk_copy coalesces and threads the big ones). */
    for (int i = 0; i < call->ninputs; i++) {
        const tw_tensor *in = IN(i);
        if (in->numel > 0)
            twk_copy(itemsize, in->ndim, in->shape, base + at * out->strides[axis] * (int64_t)itemsize, out->strides,
                     tw__data(in), in->strides);
        at += in->shape[axis];
    }
    return 0;
}

/* The (outer, axis, inner) view of a shape around axis. */
static void split_around(int ndim, const int64_t *shape, int axis, int64_t *outer, int64_t *inner)
{
    *outer = tw__numel(axis, shape);
    *inner = tw__numel(ndim - axis - 1, shape + axis + 1);
}

/* Every index inside [0, size), or an error naming the first one outside. */
static int check_index_range(const char *op, const tw_tensor *indices, const void *data, int axis, int64_t size)
{
    int64_t pos = twk_index_check(indices->dtype, indices->numel, data, size);
    if (pos < 0)
        return 0;
    return tw_error_set("%s: index %lld at position %lld is out of range for axis %d of size %lld", op,
                        (long long)twk_index_at(indices->dtype, data, pos), (long long)pos, axis, (long long)size);
}

int tw__cpu_gather(const tw_op_call *call, tw_tensor *const *outs)
{
    int axis = (int)call->attrs->i[0];
    tw_tensor *params = tw__contiguous_raw(IN(0));
    tw_tensor *indices = tw__contiguous_raw(IN(1));
    int rc = -1;
    if (!params || !indices)
        goto out;
    const void *ix = tw__data(indices);
    if (check_index_range("gather", indices, ix, axis, params->shape[axis]) < 0)
        goto out;
    int64_t outer, inner;
    split_around(params->ndim, params->shape, axis, &outer, &inner);
    twk_gather(tw_dtype_size(params->dtype), outer, params->shape[axis], inner, tw__data(params), indices->dtype,
               indices->numel, ix, tw__data(outs[0]));
    rc = 0;
out:
    tw_tensor_unref(params);
    tw_tensor_unref(indices);
    return rc;
}

int tw__cpu_scatter_add(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    int axis = (int)call->attrs->i[0];
    tw_tensor *updates = tw__contiguous_raw(IN(0));
    tw_tensor *indices = tw__contiguous_raw(IN(1));
    int rc = -1;
    if (!updates || !indices)
        goto out;
    const void *ix = tw__data(indices);
    if (check_index_range("scatter_add", indices, ix, axis, out->shape[axis]) < 0)
        goto out;
    int64_t outer, inner;
    split_around(out->ndim, out->shape, axis, &outer, &inner);
    twk_scatter_add(out->dtype, outer, out->shape[axis], inner, tw__data(updates), indices->dtype, indices->numel,
                    ix, tw__data(out));
    rc = 0;
out:
    tw_tensor_unref(updates);
    tw_tensor_unref(indices);
    return rc;
}

int tw__cpu_pad(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    const tw_tensor *x = IN(0);
    const int64_t *p = call->attrs->i;
    size_t itemsize = tw_dtype_size(out->dtype);
    twk_fill(out->dtype, out->numel, tw__data(out), call->attrs->f[0]);
    if (x->numel == 0)
        return 0;
    int64_t at = 0;
    for (int d = 0; d < x->ndim; d++)
        at += p[2 * d] * out->strides[d];
    twk_copy(itemsize, x->ndim, x->shape, (char *)tw__data(out) + at * (int64_t)itemsize, out->strides, tw__data(x),
             x->strides);
    return 0;
}

int tw__cpu_tile(const tw_op_call *call, tw_tensor *const *outs)
{
    const tw_tensor *x = IN(0);
    if (outs[0]->numel > 0)
        twk_tile(tw_dtype_size(x->dtype), x->ndim, x->shape, tw__data(x), x->strides, call->attrs->i,
                 tw__data(outs[0]));
    return 0;
}

int tw__cpu_one_hot(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *indices = tw__contiguous_raw(IN(0));
    if (!indices)
        return -1;
    twk_one_hot(outs[0]->dtype, indices->dtype, indices->numel, tw__data(indices), call->attrs->i[0],
                tw__data(outs[0]));
    tw_tensor_unref(indices);
    return 0;
}

int tw__cpu_strided_slice_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *g = call->inputs[0], *out = outs[0];
    memset(tw__data(out), 0, (size_t)out->numel * tw_dtype_size(out->dtype));
    /* The sliced region of the output, as the slice op views it. */
    tw_op_call view_call = {&tw_op_strided_slice, 1, outs, call->attrs, NULL};
    tw_desc d;
    tw_op_strided_slice.infer(&view_call, &d);
    tw_tensor *region = tw_op_strided_slice.view(&view_call, &d);
    if (!region)
        return -1;
    tw__copy_into(region, g);
    tw_tensor_unref(region);
    return 0;
}
