/* Ops built from primitives: their gradients come from the primitives'
 * rules, to any order. */
#include <math.h>

#include "internal.h"

tw_tensor *tw_swish(tw_tensor *x)
{
    tw_scope_begin();
    return tw__scope_return(tw_mul(x, tw_sigmoid(x)));
}

/* Name this op (not an inner one) when an axis is out of range. */
static int check_axes(const char *op, const tw_tensor *x, int naxes, const int *axes)
{
    if (tw__check_inputs(op, 1, (tw_tensor *const[]){(tw_tensor *)x}) < 0)
        return -1;
    for (int k = 0; k < naxes; k++) {
        int ax;
        if (tw__normalize_axis(op, axes[k], x->ndim, &ax) < 0)
            return -1;
    }
    return 0;
}

/* The reduced shape of x over axes, for dropping keepdims. */
/* r reduced with keepdims, reshaped to drop the reduced axes (axes were
 * checked by the caller). */
static tw_tensor *drop_reduced_axes(tw_tensor *r, tw_tensor *x, int naxes, const int *axes)
{
    bool reduced[TW_MAX_DIMS] = {0};
    for (int k = 0; k < naxes; k++)
        reduced[axes[k] < 0 ? axes[k] + x->ndim : axes[k]] = true;
    int64_t shape[TW_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++)
        if (naxes > 0 && !reduced[d])
            shape[nd++] = x->shape[d];
    return tw_reshape(r, nd, shape);
}

tw_tensor *tw_logsumexp(tw_tensor *x, int naxes, const int *axes, bool keepdims)
{
    if (check_axes("logsumexp", x, naxes, axes) < 0)
        return NULL;
    if (!tw_dtype_is_float(x->dtype)) {
        tw_error_set("logsumexp: needs a float tensor, got %s", tw_dtype_name(x->dtype));
        return NULL;
    }
    bool empty = x->numel == 0 && naxes == 0; /* an empty group: log(0) = -inf, as TensorFlow and PyTorch give */
    for (int k = 0; k < naxes; k++)
        empty |= x->shape[axes[k] < 0 ? axes[k] + x->ndim : axes[k]] == 0;
    tw_scope_begin();
    /* Subtract the (constant) max for stability; rows of -inf keep it 0.
     * An empty group has no max: nothing to subtract. */
    tw_tensor *shift = tw_scalar(0);
    if (!empty) {
        tw_tensor *m = tw_stop_gradient(tw_max(x, naxes, axes, true));
        shift = tw_where(tw_less(tw_abs(m), tw_scalar(INFINITY)), m, shift);
    }
    tw_tensor *r = tw_add(tw_log(tw_sum(tw_exp(tw_sub(x, shift)), naxes, axes, true)), shift);
    if (!keepdims && r)
        r = drop_reduced_axes(r, x, naxes, axes);
    return tw__scope_return(r);
}

tw_tensor *tw_variance(tw_tensor *x, int naxes, const int *axes, bool keepdims)
{
    if (check_axes("variance", x, naxes, axes) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *centered = tw_sub(x, tw_mean(x, naxes, axes, true));
    return tw__scope_return(tw_mean(tw_square(centered), naxes, axes, keepdims));
}

int tw_moments(tw_tensor *x, int naxes, const int *axes, bool keepdims, tw_tensor **mean, tw_tensor **variance)
{
    *mean = *variance = NULL;
    if (check_axes("moments", x, naxes, axes) < 0)
        return -1;
    tw_scope_begin();
    tw_tensor *m = tw_mean(x, naxes, axes, true);
    tw_tensor *v = tw_mean(tw_square(tw_sub(x, m)), naxes, axes, keepdims);
    if (!keepdims && m)
        m = drop_reduced_axes(m, x, naxes, axes);
    if (!m || !v) {
        tw_scope_end();
        return -1;
    }
    tw_tensor_ref(m);
    tw_tensor_ref(v);
    tw_scope_end();
    *mean = tw__track(m);
    *variance = tw__track(v);
    return 0;
}

/* ||t||_2 with a gradient of 0 (not NaN) at t = 0, as TensorFlow does. */
static tw_tensor *safe_norm(tw_tensor *sum_of_squares)
{
    tw_tensor *positive = tw_greater(sum_of_squares, tw_scalar(0));
    tw_tensor *safe = tw_where(positive, sum_of_squares, tw_scalar(1));
    return tw_where(positive, tw_sqrt(safe), sum_of_squares);
}

tw_tensor *tw_clip_by_norm(tw_tensor *t, double clip_norm)
{
    if (!(clip_norm > 0)) {
        tw_error_set("clip_by_norm: clip_norm %g must be positive", clip_norm);
        return NULL;
    }
    tw_scope_begin();
    tw_tensor *norm = safe_norm(tw_sum_all(tw_square(t)));
    tw_tensor *scale = tw_rdiv_scalar(clip_norm, tw_maximum(norm, tw_scalar(clip_norm)));
    return tw__scope_return(tw_mul(t, scale));
}

int tw_clip_by_global_norm(int n, tw_tensor *const *tensors, double clip_norm, tw_tensor **outs, tw_tensor **global_norm)
{
    for (int i = 0; i < n; i++)
        outs[i] = NULL;
    if (global_norm)
        *global_norm = NULL;
    if (!(clip_norm > 0))
        return tw_error_set("clip_by_global_norm: clip_norm %g must be positive", clip_norm);
    if (tw__check_inputs("clip_by_global_norm", n, tensors) < 0)
        return -1;
    tw_scope_begin();
    tw_tensor *total = NULL;
    for (int i = 0; i < n; i++) {
        tw_tensor *s = tw_sum_all(tw_square(tensors[i]));
        total = total ? tw_add(total, s) : s;
    }
    tw_tensor *norm = total ? safe_norm(total) : tw_scalar(0);
    tw_tensor *scale = tw_rdiv_scalar(clip_norm, tw_maximum(norm, tw_scalar(clip_norm)));
    int rc = 0;
    for (int i = 0; i < n; i++) {
        outs[i] = tw_tensor_ref(tw_mul(tensors[i], scale));
        rc |= outs[i] ? 0 : -1;
    }
    tw_tensor *kept_norm = tw_tensor_ref(norm);
    tw_scope_end();
    for (int i = 0; i < n; i++)
        tw__track(outs[i]);
    if (global_norm)
        *global_norm = tw__track(kept_norm);
    else
        tw_tensor_unref(kept_norm);
    return rc;
}
