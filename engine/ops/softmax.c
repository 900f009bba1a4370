/* Softmax, log-softmax and the fused, numerically stable softmax
 * cross-entropy (dense and sparse labels). The fused ops compute each row in
 * one pass with the max subtracted; their backward rules use the composite
 * softmax, so second derivatives work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* logits minus their (constant) max along axis, rows of -inf shifted by 0.
 * Working from the shifted values keeps float32 exact for logits like 1000:
 * exp(x - logsumexp(x)) would lose the low bits of x to a large lse. */
static tw_tensor *shifted(tw_tensor *logits, int axis)
{
    tw_tensor *m = tw_stop_gradient(tw_max(logits, 1, &axis, true));
    tw_tensor *finite = tw_less(tw_abs(m), tw_scalar(INFINITY));
    return tw_sub(logits, tw_where(finite, m, tw_scalar(0)));
}

static int check_softmax_args(const char *op, tw_tensor *logits, int axis)
{
    int ax;
    if (tw__check_inputs(op, 1, &logits) < 0 || tw__normalize_axis(op, axis, logits->ndim, &ax) < 0)
        return -1;
    if (!tw_dtype_is_float(logits->dtype))
        return tw_error_set("%s: logits must be float, got %s", op, tw_dtype_name(logits->dtype));
    return 0;
}

tw_tensor *tw_softmax(tw_tensor *logits, int axis)
{
    if (check_softmax_args("softmax", logits, axis) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *e = tw_exp(shifted(logits, axis));
    return tw__scope_return(tw_div(e, tw_sum(e, 1, &axis, true)));
}

tw_tensor *tw_log_softmax(tw_tensor *logits, int axis)
{
    if (check_softmax_args("log_softmax", logits, axis) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *z = shifted(logits, axis);
    return tw__scope_return(tw_sub(z, tw_log(tw_sum(tw_exp(z), 1, &axis, true))));
}

static int check_logits(const char *op, const tw_tensor *logits)
{
    if (logits->ndim < 1 || logits->shape[logits->ndim - 1] == 0)
        return tw__shape_error(op, "logits need a non-empty last axis (classes), got shape", logits);
    if (!tw_dtype_is_float(logits->dtype))
        return tw_error_set("%s: logits must be float, got %s", op, tw_dtype_name(logits->dtype));
    return 0;
}

static void rows_desc(const tw_tensor *logits, tw_desc *out)
{
    out->dtype = logits->dtype;
    out->ndim = logits->ndim - 1;
    memcpy(out->shape, logits->shape, sizeof(int64_t) * (size_t)out->ndim);
}

/* ---- dense labels ----------------------------------------------------------- */
static int dense_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *logits = call->inputs[0], *labels = call->inputs[1];
    if (check_logits("softmax_cross_entropy", logits) < 0)
        return -1;
    if (labels->dtype != logits->dtype || labels->ndim != logits->ndim ||
        memcmp(labels->shape, logits->shape, sizeof(int64_t) * (size_t)logits->ndim) != 0) {
        char a[160], b[160];
        return tw_error_set("softmax_cross_entropy: labels %s %s must match logits %s %s",
                            tw_shape_str(labels->ndim, labels->shape, a, sizeof a), tw_dtype_name(labels->dtype),
                            tw_shape_str(logits->ndim, logits->shape, b, sizeof b), tw_dtype_name(logits->dtype));
    }
    rows_desc(logits, out);
    return 0;
}

/* d/dlogits = g * (softmax * sum(labels) - labels); d/dlabels = -g * log_softmax. */
static int dense_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                          tw_tensor **gin)
{
    tw_tensor *logits = call->inputs[0], *labels = call->inputs[1];
    tw_tensor *gcol = tw_expand_dims(g[0], -1);
    if (needs[0]) {
        tw_tensor *mass = tw_sum(labels, TW_AXES(-1), true);
        gin[0] = tw_mul(gcol, tw_sub(tw_mul(tw_softmax(logits, -1), mass), labels));
    }
    if (needs[1])
        gin[1] = tw_neg(tw_mul(gcol, tw_log_softmax(logits, -1)));
    return 0;
}

const tw_op_def tw_op_softmax_cross_entropy = {
    .id = TW_OP_ID_softmax_cross_entropy,
    .name = "softmax_cross_entropy", .noutputs = 1, .ninputs = 2, .infer = dense_infer,
    .backward = dense_backward,
};

tw_tensor *tw_softmax_cross_entropy(tw_tensor *logits, tw_tensor *labels)
{
    return tw_dispatch1(&tw_op_softmax_cross_entropy, 2, (tw_tensor *const[]){logits, labels}, NULL);
}

/* ---- sparse labels ---------------------------------------------------------- */
static int sparse_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *logits = call->inputs[0], *labels = call->inputs[1];
    if (check_logits("sparse_softmax_cross_entropy", logits) < 0)
        return -1;
    if (labels->dtype != TW_INT32 && labels->dtype != TW_INT64)
        return tw_error_set("sparse_softmax_cross_entropy: labels must be int32 or int64 class indices, got %s",
                            tw_dtype_name(labels->dtype));
    if (labels->ndim != logits->ndim - 1 ||
        memcmp(labels->shape, logits->shape, sizeof(int64_t) * (size_t)labels->ndim) != 0) {
        char a[160], b[160];
        return tw_error_set("sparse_softmax_cross_entropy: labels %s must have the shape of logits %s without "
                            "the class axis",
                            tw_shape_str(labels->ndim, labels->shape, a, sizeof a),
                            tw_shape_str(logits->ndim, logits->shape, b, sizeof b));
    }
    rows_desc(logits, out);
    return 0;
}

static int sparse_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *logits = call->inputs[0];
    tw_tensor *onehot = tw_one_hot(call->inputs[1], logits->shape[logits->ndim - 1], logits->dtype);
    gin[0] = tw_mul(tw_expand_dims(g[0], -1), tw_sub(tw_softmax(logits, -1), onehot));
    return 0;
}

const tw_op_def tw_op_sparse_softmax_cross_entropy = {
    .id = TW_OP_ID_sparse_softmax_cross_entropy,
    .name = "sparse_softmax_cross_entropy", .noutputs = 1, .ninputs = 2, .infer = sparse_infer,
    .backward = sparse_backward,
};

tw_tensor *tw_sparse_softmax_cross_entropy(tw_tensor *logits, tw_tensor *labels)
{
    return tw_dispatch1(&tw_op_sparse_softmax_cross_entropy, 2, (tw_tensor *const[]){logits, labels}, NULL);
}
