/* ActivityRegularization: the identity, plus a penalty on its input added to
 * the training loss: (l1 * sum|x| + l2 * sum x^2) / batch, divided by the
 * batch size as tf.keras does so the strength does not depend on it. The
 * penalty goes to the call context's activity_loss (the training step
 * collects it; see tw_call_context); a call that does not collect
 * penalties (predict, evaluate) computes none. */
#include "layer_common.h"

enum { L1, L2 };

static const tw_param_def params[] = {
    [L1] = {"l1", TW_PARAM_FLOAT, "0", 0, 1e9, .help = "Weight of the sum of absolute values"},
    [L2] = {"l2", TW_PARAM_FLOAT, "0", 0, 1e9, .help = "Weight of the sum of squares"},
};

static tw_tensor *activity_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double l1 = tw__param_float(self, L1), l2 = tw__param_float(self, L2);
    if (ctx->activity_loss && (l1 > 0 || l2 > 0)) {
        tw_tensor *penalty = tw_scalar_of(0, tw_tensor_dtype(x));
        if (l1 > 0)
            penalty = tw_add(penalty, tw_mul_scalar(tw_sum_all(tw_abs(x)), l1));
        if (l2 > 0)
            penalty = tw_add(penalty, tw_mul_scalar(tw_sum_all(tw_square(x)), l2));
        int64_t batch = tw_tensor_ndim(x) ? tw_tensor_dim(x, 0) : 1;
        if (batch > 0)
            penalty = tw_div_scalar(penalty, (double)batch);
        tw_tensor *sum = *ctx->activity_loss ? tw_add(*ctx->activity_loss, tw_cast(penalty, tw_tensor_dtype(*ctx->activity_loss))) : penalty;
        if (!sum)
            return NULL;
        tw_tensor_ref(sum); /* past this call's scope, for the caller */
        tw_tensor_unref(*ctx->activity_loss);
        *ctx->activity_loss = sum;
    }
    return tw_activation_apply("linear", x);
}

const tw_layer_class tw_layer_class_ActivityRegularization = {
    .name = "ActivityRegularization",
    .group = "Regularization",
    .summary = "Add an L1/L2 penalty on the activations to the training loss",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = tw__same_shape_infer,
    .call = activity_call,
};
