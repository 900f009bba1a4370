/* View ops: reshape, permute, strided slices, broadcast_to, expand_dims,
 * squeeze, stop_gradient. They share the input's storage; reshape falls
 * back to a copy only when no strides can express the new shape. */
#include <string.h>

#include "internal.h"

static void desc_from(tw_desc *out, tw_dtype dtype, int ndim, const int64_t *shape)
{
    out->dtype = dtype;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

/* ---- reshape --------------------------------------------------------------- */
static int reshape_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    desc_from(out, x->dtype, call->attrs->ni, call->attrs->i);
    if (tw__check_shape("reshape", out->ndim, out->shape) < 0)
        return -1;
    if (tw__numel(out->ndim, out->shape) != x->numel) {
        char a[160], b[160];
        return tw_error_set("reshape: cannot reshape %s (%lld elements) to %s", tw_shape_str(x->ndim, x->shape, a, sizeof a),
                            (long long)x->numel, tw_shape_str(out->ndim, out->shape, b, sizeof b));
    }
    return 0;
}

/* Strides for viewing x as shape when only size-1 axes differ; false otherwise. */
static bool strides_for_reshape(const tw_tensor *x, int ndim, const int64_t *shape, int64_t *strides)
{
    if (tw_tensor_is_contiguous(x)) {
        tw__contiguous_strides(ndim, shape, strides);
        return true;
    }
    int src = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        while (src < x->ndim && x->shape[src] == 1)
            src++;
        if (src >= x->ndim || x->shape[src] != shape[d])
            return false;
        strides[d] = x->strides[src++];
    }
    while (src < x->ndim && x->shape[src] == 1)
        src++;
    if (src != x->ndim)
        return false;
    int64_t next = 1; /* size-1 axes: any stride works; keep them tidy */
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] == 1)
            strides[d] = next;
        else
            next = strides[d] * shape[d];
    }
    return true;
}

static tw_tensor *reshape_view(const tw_op_call *call, const tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int64_t strides[TW_MAX_DIMS];
    if (strides_for_reshape(x, out->ndim, out->shape, strides))
        return tw__tensor_view(x, out->ndim, out->shape, strides, x->offset);
    tw_tensor *packed = tw__contiguous_raw(x);
    if (!packed)
        return NULL;
    tw__contiguous_strides(out->ndim, out->shape, strides);
    tw_tensor *r = tw__tensor_view(packed, out->ndim, out->shape, strides, packed->offset);
    tw_tensor_unref(packed);
    return r;
}

static int reshape_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0];
    gin[0] = tw_reshape(g[0], x->ndim, x->shape);
    return 0;
}

const tw_op_def tw_op_reshape = {
    .id = TW_OP_ID_reshape,
    .name = "reshape", .noutputs = 1, .ninputs = 1, .infer = reshape_infer, .view = reshape_view, .backward = reshape_backward,
};

tw_tensor *tw_reshape(tw_tensor *t, int ndim, const int64_t *shape)
{
    if (tw__check_inputs("reshape", 1, &t) < 0)
        return NULL;
    if (ndim < 0 || ndim > TW_MAX_DIMS) {
        tw_error_set("reshape: rank %d is outside 0..%d", ndim, TW_MAX_DIMS);
        return NULL;
    }
    tw_attrs a = {.ni = ndim};
    int infer_at = -1;
    int64_t known = 1;
    for (int d = 0; d < ndim; d++) {
        a.i[d] = shape[d];
        if (shape[d] == -1 && infer_at < 0)
            infer_at = d;
        else if (shape[d] < 0) {
            char buf[160];
            tw_error_set("reshape: bad target shape %s (only one -1 allowed)", tw_shape_str(ndim, shape, buf, sizeof buf));
            return NULL;
        } else if (__builtin_mul_overflow(known, shape[d], &known)) {
            char buf[160];
            tw_error_set("reshape: shape %s has more than INT64_MAX elements", tw_shape_str(ndim, shape, buf, sizeof buf));
            return NULL;
        }
    }
    if (infer_at >= 0)
        a.i[infer_at] = known ? t->numel / known : 0;
    return tw_dispatch1(&tw_op_reshape, 1, &t, &a);
}

tw_tensor *tw_expand_dims(tw_tensor *t, int axis)
{
    if (tw__check_inputs("expand_dims", 1, &t) < 0)
        return NULL;
    int ax;
    if (tw__normalize_axis("expand_dims", axis, t->ndim + 1, &ax) < 0)
        return NULL;
    if (t->ndim == TW_MAX_DIMS) {
        tw__shape_error("expand_dims", "would exceed 8 dimensions for shape", t);
        return NULL;
    }
    int64_t shape[TW_MAX_DIMS];
    for (int d = 0, s = 0; d <= t->ndim; d++)
        shape[d] = d == ax ? 1 : t->shape[s++];
    return tw_reshape(t, t->ndim + 1, shape);
}

tw_tensor *tw_squeeze(tw_tensor *t, int naxes, const int *axes)
{
    if (tw__check_inputs("squeeze", 1, &t) < 0)
        return NULL;
    bool drop[TW_MAX_DIMS] = {0};
    for (int k = 0; k < naxes; k++) {
        int ax;
        if (tw__normalize_axis("squeeze", axes[k], t->ndim, &ax) < 0)
            return NULL;
        if (t->shape[ax] != 1) {
            tw_error_set("squeeze: axis %d has size %lld, not 1", axes[k], (long long)t->shape[ax]);
            return NULL;
        }
        drop[ax] = true;
    }
    int64_t shape[TW_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++)
        if (!(naxes ? drop[d] : t->shape[d] == 1))
            shape[nd++] = t->shape[d];
    return tw_reshape(t, nd, shape);
}

/* ---- permute ------------------------------------------------------------------ */
static int permute_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    bool seen[TW_MAX_DIMS] = {0};
    if (call->attrs->ni != x->ndim)
        return tw_error_set("permute: %d axes given for a tensor of rank %d", call->attrs->ni, x->ndim);
    for (int d = 0; d < x->ndim; d++) {
        int64_t p = call->attrs->i[d];
        if (p < 0 || p >= x->ndim || seen[p])
            return tw_error_set("permute: axes are not a permutation of 0..%d", x->ndim - 1);
        seen[p] = true;
        out->shape[d] = x->shape[p];
    }
    out->ndim = x->ndim;
    out->dtype = x->dtype;
    return 0;
}

static tw_tensor *permute_view(const tw_op_call *call, const tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int64_t strides[TW_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        strides[d] = x->strides[call->attrs->i[d]];
    return tw__tensor_view(x, out->ndim, out->shape, strides, x->offset);
}

static int permute_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    int inverse[TW_MAX_DIMS];
    for (int d = 0; d < call->attrs->ni; d++)
        inverse[call->attrs->i[d]] = d;
    gin[0] = tw_permute(g[0], call->attrs->ni, inverse);
    return 0;
}

const tw_op_def tw_op_permute = {
    .id = TW_OP_ID_permute,
    .name = "permute", .noutputs = 1, .ninputs = 1, .infer = permute_infer, .view = permute_view, .backward = permute_backward,
};

tw_tensor *tw_permute(tw_tensor *t, int ndim, const int *perm)
{
    tw_attrs a = {.ni = ndim > TW_MAX_DIMS ? TW_MAX_DIMS : ndim};
    for (int d = 0; d < a.ni; d++) {
        int p = perm[d];
        a.i[d] = t && p < 0 ? p + t->ndim : p;
    }
    return tw_dispatch1(&tw_op_permute, 1, &t, &a);
}

tw_tensor *tw_transpose(tw_tensor *t)
{
    if (tw__check_inputs("transpose", 1, &t) < 0)
        return NULL;
    int perm[TW_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        perm[d] = t->ndim - 1 - d;
    return tw_permute(t, t->ndim, perm);
}

/* ---- strided slices -------------------------------------------------------------
 * attrs: for each axis d, i[3d] = begin, i[3d+1] = length, i[3d+2] = step
 * (already normalised); the gradient op adds the input shape at i[24 + d]. */
#define SLICE_SHAPE_AT 24

static int slice_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        out->shape[d] = call->attrs->i[3 * d + 1];
    return 0;
}

static tw_tensor *slice_view(const tw_op_call *call, const tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int64_t strides[TW_MAX_DIMS], offset = x->offset;
    for (int d = 0; d < x->ndim; d++) {
        offset += call->attrs->i[3 * d] * x->strides[d];
        strides[d] = x->strides[d] * call->attrs->i[3 * d + 2];
    }
    return tw__tensor_view(x, out->ndim, out->shape, strides, offset);
}

static tw_tensor *slice_grad(tw_tensor *g, const tw_attrs *slice, const tw_tensor *x);

static int slice_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                          tw_tensor **gin)
{
    gin[0] = slice_grad(g[0], call->attrs, call->inputs[0]);
    return 0;
}

const tw_op_def tw_op_strided_slice = {
    .id = TW_OP_ID_strided_slice,
    .name = "strided_slice", .noutputs = 1, .ninputs = 1, .infer = slice_infer, .view = slice_view, .backward = slice_backward,
};

/* The gradient of a slice: zeros with the incoming gradient in the sliced
 * positions. Its own gradient is the same slice again. */
static int slice_grad_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *g = call->inputs[0];
    out->dtype = g->dtype;
    out->ndim = g->ndim;
    for (int d = 0; d < g->ndim; d++)
        out->shape[d] = call->attrs->i[SLICE_SHAPE_AT + d];
    return 0;
}

static int slice_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                               tw_tensor **gin)
{
    gin[0] = tw_dispatch1(&tw_op_strided_slice, 1, &g[0], call->attrs);
    return 0;
}

const tw_op_def tw_op_strided_slice_grad = {
    .id = TW_OP_ID_strided_slice_grad,
    .name = "strided_slice_grad", .noutputs = 1, .ninputs = 1, .infer = slice_grad_infer,
    .backward = slice_grad_backward,
};

static tw_tensor *slice_grad(tw_tensor *g, const tw_attrs *slice, const tw_tensor *x)
{
    tw_attrs a = *slice;
    for (int d = 0; d < x->ndim; d++)
        a.i[SLICE_SHAPE_AT + d] = x->shape[d];
    a.ni = SLICE_SHAPE_AT + x->ndim;
    return tw_dispatch1(&tw_op_strided_slice_grad, 1, &g, &a);
}

/* Python's slice rules for one axis: clamp, negative counts from the end. */
static void normalize_slice(int64_t size, int64_t start, int64_t stop, int64_t step, int64_t *begin, int64_t *len)
{
    if (step > 0) {
        start = start < 0 ? (start + size < 0 ? 0 : start + size) : (start > size ? size : start);
        stop = stop == TW_END ? size : (stop < 0 ? (stop + size < 0 ? 0 : stop + size) : (stop > size ? size : stop));
        *len = stop > start ? (stop - start + step - 1) / step : 0;
    } else {
        start = start == TW_END ? size - 1
                                : (start < 0 ? (start + size < 0 ? -1 : start + size) : (start >= size ? size - 1 : start));
        stop = stop == TW_END || stop == INT64_MIN ? -1
                                                   : (stop < 0 ? (stop + size < 0 ? -1 : stop + size) : (stop >= size ? size - 1 : stop));
        *len = start > stop ? (start - stop + (-step) - 1) / (-step) : 0;
    }
    *begin = *len > 0 ? start : 0;
}

tw_tensor *tw_strided_slice(tw_tensor *t, const int64_t *begin, const int64_t *end, const int64_t *step)
{
    if (tw__check_inputs("strided_slice", 1, &t) < 0)
        return NULL;
    tw_attrs a = {.ni = 3 * t->ndim};
    for (int d = 0; d < t->ndim; d++) {
        if (step[d] == 0) {
            tw_error_set("strided_slice: step of axis %d is 0", d);
            return NULL;
        }
        normalize_slice(t->shape[d], begin[d], end[d], step[d], &a.i[3 * d], &a.i[3 * d + 1]);
        a.i[3 * d + 2] = step[d];
    }
    return tw_dispatch1(&tw_op_strided_slice, 1, &t, &a);
}

tw_tensor *tw_slice(tw_tensor *t, int axis, int64_t start, int64_t stop, int64_t step)
{
    if (tw__check_inputs("slice", 1, &t) < 0)
        return NULL;
    int ax;
    if (tw__normalize_axis("slice", axis, t->ndim, &ax) < 0)
        return NULL;
    int64_t b[TW_MAX_DIMS], e[TW_MAX_DIMS], s[TW_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        b[d] = d == ax ? start : 0;
        e[d] = d == ax ? stop : TW_END;
        s[d] = d == ax ? step : 1;
    }
    return tw_strided_slice(t, b, e, s);
}

/* ---- broadcast_to ---------------------------------------------------------------- */
static int broadcast_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int n;
    int64_t shape[TW_MAX_DIMS];
    if (tw__broadcast_shapes("broadcast_to", x->ndim, x->shape, call->attrs->ni, call->attrs->i, &n, shape) < 0)
        return -1;
    if (n != call->attrs->ni || memcmp(shape, call->attrs->i, sizeof(int64_t) * (size_t)n) != 0) {
        char a[160], b[160];
        return tw_error_set("broadcast_to: cannot broadcast %s to %s", tw_shape_str(x->ndim, x->shape, a, sizeof a),
                            tw_shape_str(call->attrs->ni, call->attrs->i, b, sizeof b));
    }
    desc_from(out, x->dtype, n, shape);
    return 0;
}

static tw_tensor *broadcast_view(const tw_op_call *call, const tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int64_t strides[TW_MAX_DIMS];
    tw__broadcast_strides(x, out->ndim, out->shape, strides);
    return tw__tensor_view(x, out->ndim, out->shape, strides, x->offset);
}

static int broadcast_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                              tw_tensor **gin)
{
    gin[0] = tw__sum_to_shape(g[0], call->inputs[0]->ndim, call->inputs[0]->shape);
    return 0;
}

const tw_op_def tw_op_broadcast_to = {
    .id = TW_OP_ID_broadcast_to,
    .name = "broadcast_to", .noutputs = 1, .ninputs = 1, .infer = broadcast_infer, .view = broadcast_view,
    .backward = broadcast_backward,
};

tw_tensor *tw_broadcast_to(tw_tensor *t, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > TW_MAX_DIMS) {
        tw_error_set("broadcast_to: rank %d is outside 0..%d", ndim, TW_MAX_DIMS);
        return NULL;
    }
    tw_attrs a = {.ni = ndim};
    if (ndim > 0)
        memcpy(a.i, shape, sizeof(int64_t) * (size_t)ndim);
    return tw_dispatch1(&tw_op_broadcast_to, 1, &t, &a);
}

/* ---- stop_gradient ------------------------------------------------------------------ */
static int identity_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    desc_from(out, x->dtype, x->ndim, x->shape);
    return 0;
}

static tw_tensor *identity_view(const tw_op_call *call, const tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    return tw__tensor_view(x, x->ndim, x->shape, x->strides, x->offset);
}

const tw_op_def tw_op_stop_gradient = {
    .id = TW_OP_ID_stop_gradient,
    .name = "stop_gradient", .noutputs = 1, .ninputs = 1, .flags = TW_OP_NOT_DIFFERENTIABLE, .infer = identity_infer,
    .view = identity_view,
};

tw_tensor *tw_stop_gradient(tw_tensor *x)
{
    return tw_dispatch1(&tw_op_stop_gradient, 1, &x, NULL);
}
