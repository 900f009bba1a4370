/* ThresholdedReLU: x where x > theta, 0 elsewhere (Keras 2's layer; its
 * gradient is 1 above theta and 0 below). */
#include "layer_common.h"

enum { THETA };

static const tw_param_def params[] = {
    [THETA] = {"theta", TW_PARAM_FLOAT, "1.0", 0, 1e9, .help = "Values at or below it become 0"},
};

static tw_tensor *thresholded_relu_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_tensor *above = tw_greater(x, tw_scalar(tw__param_float(self, THETA)));
    return tw_mul(x, tw_cast(above, tw_tensor_dtype(x)));
}

const tw_layer_class tw_layer_class_ThresholdedReLU = {
    .name = "ThresholdedReLU",
    .group = "Activation",
    .summary = "x above theta, 0 elsewhere",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = tw__same_shape_infer,
    .call = thresholded_relu_call,
};
