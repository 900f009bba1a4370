/* Reductions: sum, prod, max, min over any axes (primitive ops), argmax and
 * argmin along one axis; mean is a composite. */
#include <string.h>

#include "internal.h"

extern const tw_op_def tw_op_max, tw_op_min;

/* attrs: i[0] keepdims, i[1 + d] = 1 when axis d is reduced. */
static int make_attrs(const char *op, const tw_tensor *x, int naxes, const int *axes, bool keepdims, tw_attrs *a)
{
    *a = (tw_attrs){0};
    a->i[0] = keepdims;
    a->ni = 1 + x->ndim;
    for (int d = 0; d < x->ndim; d++)
        a->i[1 + d] = naxes == 0;
    for (int k = 0; k < naxes; k++) {
        int ax;
        if (tw__normalize_axis(op, axes[k], x->ndim, &ax) < 0)
            return -1;
        if (a->i[1 + ax])
            return tw_error_set("%s: axis %d is repeated", op, axes[k]);
        a->i[1 + ax] = 1;
    }
    return 0;
}

static void reduced_shape(const tw_tensor *x, const tw_attrs *a, bool keepdims, int *ndim, int64_t *shape)
{
    *ndim = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!a->i[1 + d])
            shape[(*ndim)++] = x->shape[d];
        else if (keepdims)
            shape[(*ndim)++] = 1;
    }
}

static int reduce_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    const tw_attrs *a = call->attrs;
    bool is_extreme = call->op == &tw_op_max || call->op == &tw_op_min;
    if (x->dtype == TW_BOOL && !is_extreme)
        return tw_error_set("%s: not defined for bool tensors; cast first", call->op->name);
    if (is_extreme) {
        for (int d = 0; d < x->ndim; d++)
            if (a->i[1 + d] && x->shape[d] == 0)
                return tw__shape_error(call->op->name, "cannot reduce an empty axis of shape", x);
    }
    out->dtype = x->dtype;
    reduced_shape(x, a, a->i[0], &out->ndim, out->shape);
    return 0;
}

/* g (reduced shape) read back at every input position. */
static tw_tensor *expand_back(tw_tensor *g, const tw_tensor *x, const tw_attrs *a)
{
    int nd;
    int64_t shape[TW_MAX_DIMS];
    reduced_shape(x, a, true, &nd, shape);
    return tw_broadcast_to(tw_reshape(g, nd, shape), x->ndim, x->shape);
}

static int sum_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    gin[0] = expand_back(g[0], call->inputs[0], call->attrs);
    return 0;
}

/* y with every row shifted by k places along axis 1, towards the end
 * (forward) or the start, the places left open holding 1. */
static tw_tensor *shifted(tw_tensor *y, int64_t k, bool forward)
{
    if (!y)
        return NULL;
    int64_t n = y->shape[1];
    int64_t pads[4] = {0, 0, forward ? k : 0, forward ? 0 : k};
    return tw_pad(tw_slice(y, 1, forward ? 0 : k, forward ? n - k : n, 1), pads, 1);
}

/* For each element of each row of m (rows, n), the product of the elements
 * before it (forward) or after it: log-step scans of multiplications. */
static tw_tensor *exclusive_products(tw_tensor *m, bool forward)
{
    int64_t n = m->shape[1];
    tw_tensor *y = shifted(m, 1, forward);
    for (int64_t k = 1; k < n && y; k *= 2)
        y = tw_mul(y, shifted(y, k, forward));
    return y;
}

/* d prod / d x_i is the product of the other elements of x_i's group. It is
 * computed as the products before and after x_i within the group, multiplied:
 * a polynomial in x with no division and no test for zero, so its own
 * derivatives (every order) are right however many zeros a group holds.
 * The groups become rows: kept axes first, reduced axes last. */
static tw_tensor *others_product(tw_tensor *x, const tw_attrs *a)
{
    if (x->numel == 0)
        return tw_zeros(x->dtype, x->ndim, x->shape);
    int perm[TW_MAX_DIMS], back[TW_MAX_DIMS], np = 0;
    int64_t rows = 1, permuted[TW_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        if (!a->i[1 + d]) {
            rows *= x->shape[d];
            perm[np++] = d;
        }
    for (int d = 0; d < x->ndim; d++)
        if (a->i[1 + d])
            perm[np++] = d;
    for (int d = 0; d < x->ndim; d++) {
        back[perm[d]] = d;
        permuted[d] = x->shape[perm[d]];
    }
    tw_tensor *m = tw_reshape(tw_permute(x, x->ndim, perm), 2, (int64_t[]){rows, x->numel / rows});
    tw_tensor *others = tw_mul(exclusive_products(m, true), exclusive_products(m, false));
    return tw_permute(tw_reshape(others, x->ndim, permuted), x->ndim, back);
}

static int prod_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                         tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0];
    gin[0] = tw_mul(expand_back(g[0], x, call->attrs), others_product(x, call->attrs));
    return 0;
}

/* max/min: the gradient is shared equally among the elements that tie for
 * the extreme (TensorFlow's rule). */
static int extreme_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0];
    tw_tensor *hit = tw_cast(tw_equal(x, expand_back(outs[0], x, call->attrs)), x->dtype);
    int axes[TW_MAX_DIMS], naxes = 0;
    for (int d = 0; d < x->ndim; d++)
        if (call->attrs->i[1 + d])
            axes[naxes++] = d;
    tw_tensor *count = naxes ? tw_sum(hit, naxes, axes, true) : hit;
    tw_tensor *share = tw_div(hit, count);
    gin[0] = tw_mul(share, expand_back(g[0], x, call->attrs));
    return 0;
}

#define REDUCE_OP(NAME, BACKWARD)                                                                       \
    const tw_op_def tw_op_##NAME = {                                                                   \
        .name = #NAME, .id = TW_OP_ID_##NAME, .noutputs = 1, .ninputs = 1, .infer = reduce_infer,      \
        .backward = BACKWARD,                                                                          \
    };                                                                                                 \
    tw_tensor *tw_##NAME(tw_tensor *x, int naxes, const int *axes, bool keepdims)                      \
    {                                                                                                  \
        tw_attrs a;                                                                                    \
        if (tw__check_inputs(#NAME, 1, &x) < 0 || make_attrs(#NAME, x, naxes, axes, keepdims, &a) < 0) \
            return NULL;                                                                               \
        return tw_dispatch1(&tw_op_##NAME, 1, &x, &a);                                                 \
    }

REDUCE_OP(sum, sum_backward)
REDUCE_OP(prod, prod_backward)
REDUCE_OP(max, extreme_backward)
REDUCE_OP(min, extreme_backward)

tw_tensor *tw_sum_all(tw_tensor *x)
{
    return tw_sum(x, 0, NULL, false);
}

tw_tensor *tw_mean(tw_tensor *x, int naxes, const int *axes, bool keepdims)
{
    tw_attrs a;
    if (tw__check_inputs("mean", 1, &x) < 0 || make_attrs("mean", x, naxes, axes, keepdims, &a) < 0)
        return NULL;
    if (!tw_dtype_is_float(x->dtype)) {
        tw_error_set("mean: needs a float tensor, got %s; cast first", tw_dtype_name(x->dtype));
        return NULL;
    }
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        if (a.i[1 + d])
            count *= x->shape[d];
    tw_scope_begin();
    return tw__scope_return(tw_div_scalar(tw_sum(x, naxes, axes, keepdims), (double)count));
}

tw_tensor *tw_mean_all(tw_tensor *x)
{
    return tw_mean(x, 0, NULL, false);
}

/* ---- argmax / argmin ------------------------------------------------------- */
static int arg_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    int64_t axis = call->attrs->i[0]; /* normalised by the wrapper; a graph file's is checked here */
    if (axis < 0 || axis >= x->ndim)
        return tw_error_set("%s: axis %lld is out of range for a tensor of rank %d", call->op->name,
                            (long long)axis, x->ndim);
    if (x->shape[axis] == 0)
        return tw__shape_error(call->op->name, "cannot take an index over an empty axis of shape", x);
    out->dtype = TW_INT64;
    out->ndim = 0;
    for (int d = 0; d < x->ndim; d++)
        if (d != axis)
            out->shape[out->ndim++] = x->shape[d];
    return 0;
}

#define ARG_OP(NAME)                                                                                   \
    const tw_op_def tw_op_##NAME = {                                                                   \
        .name = #NAME, .id = TW_OP_ID_##NAME, .noutputs = 1, .ninputs = 1,                             \
        .flags = TW_OP_NOT_DIFFERENTIABLE, .infer = arg_infer,                                         \
    };                                                                                                 \
    tw_tensor *tw_##NAME(tw_tensor *x, int axis)                                                       \
    {                                                                                                  \
        int ax;                                                                                        \
        if (tw__check_inputs(#NAME, 1, &x) < 0 || tw__normalize_axis(#NAME, axis, x->ndim, &ax) < 0)  \
            return NULL;                                                                               \
        tw_attrs a = {.i = {ax}, .ni = 1};                                                             \
        return tw_dispatch1(&tw_op_##NAME, 1, &x, &a);                                                 \
    }

ARG_OP(argmax)
ARG_OP(argmin)
