/* pad (constant padding), tile (repetition) and one_hot. All move bytes, so
 * every dtype works; only one_hot's result is built from values. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define IN(i) call->inputs[i]
#define TW_STR_(x) #x
#define TW_STR(x) TW_STR_(x)

/* ---- pad -------------------------------------------------------------------
 * attrs: i[2d], i[2d+1] = amounts before and after axis d; f[0] = value. */
static int check_paddings(const tw_tensor *x, const int64_t *paddings)
{
    for (int d = 0; d < x->ndim; d++) {
        for (int side = 0; side < 2; side++) {
            int64_t p = paddings[2 * d + side];
            if (p >= 0 && p <= INT64_MAX / 4 - x->shape[d])
                continue;
            char s[160];
            return tw_error_set("pad: padding %lld %s axis %d is %s (shape %s); amounts must be non-negative",
                                (long long)p, side ? "after" : "before", d, p < 0 ? "negative" : "too large",
                                tw_shape_str(x->ndim, x->shape, s, sizeof s));
        }
    }
    return 0;
}

static int pad_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = IN(0);
    const int64_t *p = call->attrs->i;
    if (call->attrs->ni != 2 * x->ndim)
        return tw_error_set("pad: got %d padding amounts for a tensor of rank %d; need %d (before, after) pairs",
                            call->attrs->ni, x->ndim, x->ndim);
    if (check_paddings(x, p) < 0)
        return -1;
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        out->shape[d] = p[2 * d] + x->shape[d] + p[2 * d + 1];
    return 0;
}

/* The gradient is the gradient's interior: a slice, no copy. */
static int pad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    if (!needs[0])
        return 0;
    const tw_tensor *x = IN(0);
    const int64_t *p = call->attrs->i;
    if (x->ndim == 0) {
        gin[0] = tw_reshape(g[0], 0, x->shape);
    } else {
        int64_t begin[TW_MAX_DIMS], end[TW_MAX_DIMS], step[TW_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) {
            begin[d] = p[2 * d];
            end[d] = p[2 * d] + x->shape[d];
            step[d] = 1;
        }
        gin[0] = tw_strided_slice(g[0], begin, end, step);
    }
    return gin[0] ? 0 : -1;
}

const tw_op_def tw_op_pad = {
    .id = TW_OP_ID_pad,
    .name = "pad", .noutputs = 1, .ninputs = 1, .infer = pad_infer,
    .backward = pad_backward,
};

tw_tensor *tw_pad(tw_tensor *x, const int64_t *paddings, double constant_value)
{
    if (tw__check_inputs("pad", 1, &x) < 0)
        return NULL;
    if (!paddings && x->ndim > 0) {
        tw__shape_error("pad", "paddings is NULL; give a (before, after) pair per axis of shape", x);
        return NULL;
    }
    if (check_paddings(x, paddings) < 0)
        return NULL;
    tw_attrs attrs = {.f = {constant_value}, .nf = 1, .ni = 2 * x->ndim};
    if (x->ndim > 0)
        memcpy(attrs.i, paddings, sizeof(int64_t) * (size_t)(2 * x->ndim));
    return tw_dispatch1(&tw_op_pad, 1, &x, &attrs);
}

/* ---- tile --------------------------------------------------------------------
 * attrs: i[d] = multiple of axis d. */
static int check_multiples(const tw_tensor *x, int n, const int64_t *multiples)
{
    char s[160];
    if (n != x->ndim)
        return tw_error_set("tile: got %d multiples for a tensor of rank %d (shape %s); give one per axis", n,
                            x->ndim, tw_shape_str(x->ndim, x->shape, s, sizeof s));
    for (int d = 0; d < n; d++) {
        int64_t m = multiples[d];
        if (m < 0)
            return tw_error_set("tile: multiple %lld for axis %d is negative (shape %s)", (long long)m, d,
                                tw_shape_str(x->ndim, x->shape, s, sizeof s));
        if (m > 0 && x->shape[d] > INT64_MAX / 4 / m)
            return tw_error_set("tile: multiple %lld for axis %d of shape %s is too large", (long long)m, d,
                                tw_shape_str(x->ndim, x->shape, s, sizeof s));
    }
    return 0;
}

static int tile_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = IN(0);
    if (check_multiples(x, call->attrs->ni, call->attrs->i) < 0)
        return -1;
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        out->shape[d] = x->shape[d] * call->attrs->i[d];
    return 0;
}

/* Sum g over the multiples one tiled axis at a time, each step viewing the
 * gradient as (before, multiple, size, after): used when the one-step view
 * needs more than TW_MAX_DIMS axes. */
static tw_tensor *tile_grad_by_axis(tw_tensor *g, const tw_tensor *x, const int64_t *multiples)
{
    int ndim = x->ndim;
    int64_t cur[TW_MAX_DIMS];
    memcpy(cur, g->shape, sizeof(int64_t) * (size_t)ndim);
    for (int d = 0; d < ndim && g; d++) {
        if (multiples[d] == 1)
            continue;
        int64_t view[4] = {tw__numel(d, cur), multiples[d], x->shape[d], tw__numel(ndim - d - 1, cur + d + 1)};
        g = tw_sum(tw_reshape(g, 4, view), TW_AXES(1), false);
        cur[d] = x->shape[d];
    }
    return g ? tw_reshape(g, ndim, x->shape) : NULL;
}

/* View the gradient as (m0, d0, m1, d1, ...) and sum the m axes. Axes with
 * multiple 1 have no m axis, size-1 axes are dropped and neighbours of the
 * same kind merged, so the view is as small as it can be. */
static int tile_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                         tw_tensor **gin)
{
    if (!needs[0])
        return 0;
    const tw_tensor *x = IN(0);
    const int64_t *m = call->attrs->i;
    if (x->numel == 0 || g[0]->numel == 0) {
        gin[0] = tw_zeros(x->dtype, x->ndim, x->shape);
        return gin[0] ? 0 : -1;
    }
    int64_t view[2 * TW_MAX_DIMS];
    bool summed[2 * TW_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        int64_t sizes[2] = {m[d], x->shape[d]};
        for (int k = 0; k < 2; k++) {
            if (sizes[k] == 1)
                continue;
            if (n > 0 && summed[n - 1] == (k == 0))
                view[n - 1] *= sizes[k];
            else {
                view[n] = sizes[k];
                summed[n++] = k == 0;
            }
        }
    }
    int axes[2 * TW_MAX_DIMS], naxes = 0;
    for (int k = 0; k < n; k++)
        if (summed[k])
            axes[naxes++] = k;
    if (naxes == 0) {
        gin[0] = tw_reshape(g[0], x->ndim, x->shape);
    } else if (n <= TW_MAX_DIMS) {
        tw_tensor *sum = tw_sum(tw_reshape(g[0], n, view), naxes, axes, false);
        gin[0] = tw_reshape(sum, x->ndim, x->shape);
    } else {
        gin[0] = tile_grad_by_axis(g[0], x, m);
    }
    return gin[0] ? 0 : -1;
}

const tw_op_def tw_op_tile = {
    .id = TW_OP_ID_tile,
    .name = "tile", .noutputs = 1, .ninputs = 1, .infer = tile_infer,
    .backward = tile_backward,
};

tw_tensor *tw_tile(tw_tensor *x, int n, const int64_t *multiples)
{
    if (tw__check_inputs("tile", 1, &x) < 0)
        return NULL;
    if (!multiples && n > 0) {
        tw_error_set("tile: multiples is NULL");
        return NULL;
    }
    if (check_multiples(x, n, multiples) < 0)
        return NULL;
    tw_attrs attrs = {.ni = n};
    if (n > 0)
        memcpy(attrs.i, multiples, sizeof(int64_t) * (size_t)n);
    return tw_dispatch1(&tw_op_tile, 1, &x, &attrs);
}

/* ---- one_hot -----------------------------------------------------------------
 * attrs: i[0] = depth, i[1] = dtype. Not differentiable: indices are integers. */
static int one_hot_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *indices = IN(0);
    int64_t depth = call->attrs->i[0], dtype = call->attrs->i[1];
    if (indices->dtype != TW_INT32 && indices->dtype != TW_INT64)
        return tw_error_set("one_hot: indices must be int32 or int64, got %s", tw_dtype_name(indices->dtype));
    if (depth < 0)
        return tw_error_set("one_hot: depth must be non-negative, got %lld", (long long)depth);
    if (dtype < 0 || dtype >= TW_DTYPE_COUNT)
        return tw_error_set("one_hot: unknown dtype %lld", (long long)dtype);
    if (indices->ndim + 1 > TW_MAX_DIMS)
        return tw__shape_error("one_hot", "the result would have more than " TW_STR(TW_MAX_DIMS)
                               " axes; indices have shape", indices);
    out->dtype = (tw_dtype)dtype;
    out->ndim = indices->ndim + 1;
    memcpy(out->shape, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    out->shape[indices->ndim] = depth;
    return 0;
}

const tw_op_def tw_op_one_hot = {
    .id = TW_OP_ID_one_hot,
    .name = "one_hot", .noutputs = 1, .ninputs = 1, .flags = TW_OP_NOT_DIFFERENTIABLE, .infer = one_hot_infer,
};

tw_tensor *tw_one_hot(tw_tensor *indices, int64_t depth, tw_dtype dtype)
{
    if (tw__check_inputs("one_hot", 1, &indices) < 0)
        return NULL;
    tw_attrs attrs = {.i = {depth, (int64_t)dtype}, .ni = 2};
    return tw_dispatch1(&tw_op_one_hot, 1, &indices, &attrs);
}
