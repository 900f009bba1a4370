/* gather (TensorFlow's tf.gather with batch_dims 0) and its adjoint,
 * scatter_add: an unsorted segment sum along one axis. Each is the other's
 * gradient, so gradients of any order stay inside these two ops.
 *
 * gather(params, indices, axis) has shape
 *   params.shape[:axis] + indices.shape + params.shape[axis+1:]
 * and scatter_add(updates, indices) -> params' shape adds every updates
 * slice into the row its index names; repeated indices accumulate. */
#include <string.h>

#include "internal.h"

#define IN(i) call->inputs[i]

static int check_indices_dtype(const char *op, const tw_tensor *indices)
{
    if (indices->dtype == TW_INT32 || indices->dtype == TW_INT64)
        return 0;
    return tw_error_set("%s: indices must be int32 or int64, got %s", op, tw_dtype_name(indices->dtype));
}

/* params.shape[:axis] + indices.shape + params.shape[axis+1:] into out. */
static int gathered_shape(const char *op, int ndim, const int64_t *shape, int axis, const tw_tensor *indices,
                          int *out_ndim, int64_t *out_shape)
{
    int n = ndim - 1 + indices->ndim;
    if (n > TW_MAX_DIMS) {
        char a[160], b[160];
        return tw_error_set("%s: the result would have rank %d, more than %d (params %s, indices %s)", op, n,
                            TW_MAX_DIMS, tw_shape_str(ndim, shape, a, sizeof a),
                            tw_shape_str(indices->ndim, indices->shape, b, sizeof b));
    }
    memcpy(out_shape, shape, sizeof(int64_t) * (size_t)axis);
    memcpy(out_shape + axis, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    memcpy(out_shape + axis + indices->ndim, shape + axis + 1, sizeof(int64_t) * (size_t)(ndim - axis - 1));
    *out_ndim = n;
    return 0;
}

static tw_tensor *scatter_add(tw_tensor *updates, tw_tensor *indices, int ndim, const int64_t *shape, int axis);

/* ---- gather ------------------------------------------------------------------
 * inputs: params, indices; attrs: i[0] = axis (normalised). */
static int gather_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *params = IN(0), *indices = IN(1);
    if (check_indices_dtype("gather", indices) < 0)
        return -1;
    if (params->ndim == 0)
        return tw__shape_error("gather", "params must have at least one axis, got shape", params);
    int64_t axis = call->attrs->i[0];
    if (axis < 0 || axis >= params->ndim)
        return tw_error_set("gather: axis %lld is out of range for params of rank %d", (long long)axis, params->ndim);
    out->dtype = params->dtype;
    return gathered_shape("gather", params->ndim, params->shape, (int)axis, indices, &out->ndim, out->shape);
}

static int gather_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    if (needs[0]) {
        const tw_tensor *params = IN(0);
        gin[0] = scatter_add(g[0], IN(1), params->ndim, params->shape, (int)call->attrs->i[0]);
        if (!gin[0])
            return -1;
    }
    return 0;
}

const tw_op_def tw_op_gather = {
    .id = TW_OP_ID_gather,
    .name = "gather", .noutputs = 1, .ninputs = 2, .infer = gather_infer,
    .backward = gather_backward,
};

tw_tensor *tw_gather(tw_tensor *params, tw_tensor *indices, int axis)
{
    if (tw__check_inputs("gather", 2, (tw_tensor *const[]){params, indices}) < 0)
        return NULL;
    if (params->ndim == 0) {
        tw__shape_error("gather", "params must have at least one axis, got shape", params);
        return NULL;
    }
    int a;
    if (tw__normalize_axis("gather", axis, params->ndim, &a) < 0)
        return NULL;
    tw_attrs attrs = {.i = {a}, .ni = 1};
    return tw_dispatch1(&tw_op_gather, 2, (tw_tensor *const[]){params, indices}, &attrs);
}

/* ---- scatter_add ---------------------------------------------------------------
 * inputs: updates, indices; attrs: i[0] = axis, i[1] = rank of the result,
 * i[2..] = its shape (the shape of the params gathered from). */
static int scatter_add_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *updates = IN(0), *indices = IN(1);
    const tw_attrs *at = call->attrs;
    if (check_indices_dtype("scatter_add", indices) < 0)
        return -1;
    int64_t axis = at->i[0], ndim = at->i[1];
    if (ndim < 1 || ndim > TW_MAX_DIMS || at->ni < 2 + ndim || axis < 0 || axis >= ndim)
        return tw_error_set("scatter_add: bad attributes: axis %lld of a result of rank %lld", (long long)axis,
                            (long long)ndim);
    const int64_t *shape = &at->i[2];
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0)
            return tw_error_set("scatter_add: negative dimension %lld in the result's shape", (long long)shape[d]);
    int n;
    int64_t expect[TW_MAX_DIMS];
    if (gathered_shape("scatter_add", (int)ndim, shape, (int)axis, indices, &n, expect) < 0)
        return -1;
    if (n != updates->ndim || memcmp(expect, updates->shape, sizeof(int64_t) * (size_t)n) != 0) {
        char a[160], b[160], c[160], e[160];
        return tw_error_set("scatter_add: updates of shape %s do not match indices %s into shape %s along axis %lld "
                            "(expected updates %s)",
                            tw_shape_str(updates->ndim, updates->shape, a, sizeof a),
                            tw_shape_str(indices->ndim, indices->shape, b, sizeof b),
                            tw_shape_str((int)ndim, shape, c, sizeof c), (long long)axis,
                            tw_shape_str(n, expect, e, sizeof e));
    }
    out->dtype = updates->dtype;
    out->ndim = (int)ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
    return 0;
}

static int scatter_add_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g,
                                const bool *needs, tw_tensor **gin)
{
    if (needs[0] && !(gin[0] = tw_gather(g[0], IN(1), (int)call->attrs->i[0])))
        return -1;
    return 0;
}

const tw_op_def tw_op_scatter_add = {
    .id = TW_OP_ID_scatter_add,
    .name = "scatter_add", .noutputs = 1, .ninputs = 2, .infer = scatter_add_infer,
    .backward = scatter_add_backward,
};

static tw_tensor *scatter_add(tw_tensor *updates, tw_tensor *indices, int ndim, const int64_t *shape, int axis)
{
    tw_attrs attrs = {.i = {axis, ndim}, .ni = 2 + ndim};
    memcpy(&attrs.i[2], shape, sizeof(int64_t) * (size_t)ndim);
    return tw_dispatch1(&tw_op_scatter_add, 2, (tw_tensor *const[]){updates, indices}, &attrs);
}
