/* Batch normalization in training mode as one op, with the features on the
 * last axis (NHWC, or dense activations): BatchNormalization runs it instead
 * of its composite of moments and elementwise ops (layers/batch_normalization.c).
 *
 *   batch_norm(x, gamma, beta) -> y, mean, inv_std
 *       mean and the biased variance over every axis but the last;
 *       inv_std = 1 / sqrt(variance + epsilon);
 *       y = (x - mean) * inv_std * gamma + beta
 *   backward: batch_norm_grad(x, dy, gamma, mean, inv_std) -> dx, dgamma, dbeta,
 *       plus the paths through the mean and inv_std outputs where those
 *       have gradients
 *   batch_norm_grad: backward through the same formulas written with ops
 *       (second and higher derivatives)
 *
 * The formulas are kernels/cpu/batch_norm_kernels.h's; CUDA runs cuDNN's
 * spatial batch norm, which saves the same mean and inverse standard
 * deviation. attrs.f[0]: epsilon. */
#include <math.h>
#include <string.h>

#include "internal.h"

extern const tw_op_def tw_op_batch_norm, tw_op_batch_norm_grad;

/* t: a float tensor of x's dtype and, when shape is given, that shape. */
static int check_like(const char *op, const char *name, const tw_tensor *t, const tw_tensor *x, int ndim,
                      const int64_t *shape)
{
    char st[160], sw[160];
    if (t->dtype != x->dtype)
        return tw_error_set("%s: %s is %s, x is %s", op, name, tw_dtype_name(t->dtype), tw_dtype_name(x->dtype));
    if (t->ndim != ndim || memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim) != 0)
        return tw_error_set("%s: %s has shape %s, want %s", op, name, tw_shape_str(t->ndim, t->shape, st, sizeof st),
                            tw_shape_str(ndim, shape, sw, sizeof sw));
    return 0;
}

/* x float32/float64 of rank >= 1 with known features; the per-feature
 * inputs (from `first`) of shape (C,). */
static int check_inputs(const char *op, const tw_op_call *call, int first, const char *const *names)
{
    const tw_tensor *x = call->inputs[0];
    char sx[160];
    if (!tw_dtype_is_float(x->dtype))
        return tw_error_set("%s: x must be float32 or float64, got %s", op, tw_dtype_name(x->dtype));
    if (x->ndim < 1)
        return tw_error_set("%s: x must have a feature axis (rank 1 or more), got shape %s", op,
                            tw_shape_str(x->ndim, x->shape, sx, sizeof sx));
    if (call->attrs->nf < 1 || !(call->attrs->f[0] >= 0))
        return tw_error_set("%s: epsilon must be 0 or more, got %g", op, call->attrs->nf ? call->attrs->f[0] : NAN);
    const int64_t *c = &x->shape[x->ndim - 1];
    for (int k = first; k < call->ninputs; k++)
        if (check_like(op, names[k - first], call->inputs[k], x, 1, c) < 0)
            return -1;
    return 0;
}

static void set_desc(tw_desc *out, const tw_tensor *like, int ndim, const int64_t *shape)
{
    out->dtype = like->dtype;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

/* ---- batch_norm(x, gamma, beta) -> y, mean, inv_std ------------------------------- */

static int bn_infer(const tw_op_call *call, tw_desc *out)
{
    static const char *const names[] = {"gamma", "beta"};
    if (check_inputs("batch_norm", call, 1, names) < 0)
        return -1;
    const tw_tensor *x = call->inputs[0];
    set_desc(&out[0], x, x->ndim, x->shape);
    set_desc(&out[1], x, 1, &x->shape[x->ndim - 1]);
    set_desc(&out[2], x, 1, &x->shape[x->ndim - 1]);
    return 0;
}

static int bn_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                       tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *mean = outs[1], *inv = outs[2];
    tw_tensor *grads[3] = {NULL, NULL, NULL};
    tw_tensor *dy = g[0] ? g[0] : tw_zeros_like(x);
    if (tw_dispatch(&tw_op_batch_norm_grad, 5, (tw_tensor *const[]){x, dy, call->inputs[1], mean, inv}, call->attrs,
                    NULL, grads) < 0)
        return -1;
    tw_tensor *dx = grads[0];
    double rows = 1;
    for (int d = 0; d < x->ndim - 1; d++)
        rows *= (double)x->shape[d];
    if (needs[0] && g[1]) /* mean = sum(x) / rows */
        dx = tw_add(dx, tw_div_scalar(g[1], rows));
    if (needs[0] && g[2]) /* d inv_std / dx = -inv_std^3 (x - mean) / rows */
        dx = tw_add(dx, tw_mul(tw_sub(x, mean), tw_mul_scalar(tw_mul(g[2], tw_mul(inv, tw_square(inv))), -1 / rows)));
    gin[0] = needs[0] ? dx : NULL;
    gin[1] = needs[1] ? grads[1] : NULL;
    gin[2] = needs[2] ? grads[2] : NULL;
    return dx ? 0 : -1;
}

const tw_op_def tw_op_batch_norm = {
    .id = TW_OP_ID_batch_norm,
    .name = "batch_norm", .noutputs = 3, .ninputs = 3, .infer = bn_infer,
    .backward = bn_backward,
};

/* ---- batch_norm_grad(x, dy, gamma, mean, inv_std) -> dx, dgamma, dbeta ------------- */

static int bn_grad_infer(const tw_op_call *call, tw_desc *out)
{
    static const char *const names[] = {"gamma", "mean", "inv_std"};
    const tw_tensor *x = call->inputs[0];
    if (check_inputs("batch_norm_grad", call, 2, names) < 0 ||
        check_like("batch_norm_grad", "dy", call->inputs[1], x, x->ndim, x->shape) < 0)
        return -1;
    set_desc(&out[0], x, x->ndim, x->shape);
    set_desc(&out[1], x, 1, &x->shape[x->ndim - 1]);
    set_desc(&out[2], x, 1, &x->shape[x->ndim - 1]);
    return 0;
}

/* The kernel's formulas (batch_norm_kernels.h) written with ops, mean and
 * inv_std taken as inputs. */
static void composite_grad(tw_tensor *const *in, tw_tensor **out)
{
    tw_tensor *x = in[0], *dy = in[1], *gamma = in[2], *mean = in[3], *inv = in[4];
    int axes[TW_MAX_DIMS], n = x->ndim - 1;
    double rows = 1;
    for (int d = 0; d < n; d++)
        axes[d] = d, rows *= (double)x->shape[d];
    tw_tensor *xhat = tw_mul(tw_sub(x, mean), inv);
    out[2] = tw_sum(dy, n, axes, false);
    out[1] = tw_sum(tw_mul(dy, xhat), n, axes, false);
    tw_tensor *centered = tw_sub(tw_sub(dy, tw_div_scalar(out[2], rows)), tw_mul(xhat, tw_div_scalar(out[1], rows)));
    out[0] = tw_mul(tw_mul(gamma, inv), centered);
}

/* Second derivatives: the gradient of <outputs, upstream gradients> through
 * the composite formulas on a tape of its own, whose rules dispatch ops
 * that any outer tape records in turn. */
static int bn_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    tw_tape *tape = tw_tape_begin(false);
    for (int i = 0; i < 5; i++)
        tw_tape_watch(tape, call->inputs[i]);
    tw_tensor *o[3], *target = NULL;
    composite_grad(call->inputs, o);
    for (int k = 0; k < 3; k++)
        if (g[k]) {
            tw_tensor *term = tw_sum_all(tw_mul(o[k], g[k]));
            target = target ? tw_add(target, term) : term;
        }
    tw_tape_end(tape);
    int rc = target ? tw_tape_gradient(tape, target, 5, call->inputs, gin) : 0;
    tw_tape_free(tape);
    for (int i = 0; i < 5; i++)
        if (!needs[i])
            gin[i] = NULL;
    return rc;
}

const tw_op_def tw_op_batch_norm_grad = {
    .id = TW_OP_ID_batch_norm_grad,
    .name = "batch_norm_grad", .noutputs = 3, .ninputs = 5, .infer = bn_grad_infer,
    .backward = bn_grad_backward,
};

int tw_batch_norm(tw_tensor *x, tw_tensor *gamma, tw_tensor *beta, double epsilon, tw_tensor **y, tw_tensor **mean,
                  tw_tensor **inv_std)
{
    tw_tensor *outs[3] = {NULL, NULL, NULL};
    tw_attrs a = {.f = {epsilon}, .nf = 1};
    int rc = tw_dispatch(&tw_op_batch_norm, 3, (tw_tensor *const[]){x, gamma, beta}, &a, NULL, outs);
    *y = outs[0], *mean = outs[1], *inv_std = outs[2];
    return rc;
}
