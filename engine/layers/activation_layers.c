/* The activation functions Keras also offers as layer classes of their own,
 * with their parameters: ReLU (max_value, negative_slope, threshold),
 * LeakyReLU (alpha 0.3), ELU (alpha 1.0) and Softmax (axis). Model files
 * from Keras users contain these as often as Activation layers. */
#include "layer_internal.h"

static int same_shape_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                            int *nw)
{
    *output = *input;
    *nw = 0;
    return 0;
}

/* ---- ReLU ----------------------------------------------------------------- */
enum { MAX_VALUE, NEGATIVE_SLOPE, THRESHOLD };

static const tw_param_def relu_params[] = {
    [MAX_VALUE] = {"max_value", TW_PARAM_FLOAT, "", 0, 1e9, .nullable = true,
                   .help = "Upper limit of the output (6 gives ReLU6); none for no limit"},
    [NEGATIVE_SLOPE] = {"negative_slope", TW_PARAM_FLOAT, "0", 0, 1e9, .help = "Slope below the threshold"},
    [THRESHOLD] = {"threshold", TW_PARAM_FLOAT, "0", 0, 1e9, .help = "Values at or below it count as negative"},
};

/* Keras' backend.relu: x above the threshold (else 0), clipped to
 * max_value, minus negative_slope * relu(threshold - x). */
static tw_tensor *relu_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    const tw_param_value *max_value = tw_layer_param(self, MAX_VALUE);
    double slope = tw__param_float(self, NEGATIVE_SLOPE), threshold = tw__param_float(self, THRESHOLD);
    if (max_value->is_null && threshold == 0 && slope != 0)
        return tw_leaky_relu(x, slope);
    tw_tensor *y;
    if (threshold == 0)
        y = tw_relu(x);
    else
        y = tw_mul(x, tw_cast(tw_greater(x, tw_scalar(threshold)), tw_tensor_dtype(x)));
    if (!max_value->is_null)
        y = tw_clip(y, 0, max_value->number);
    if (slope != 0)
        y = tw_sub(y, tw_mul_scalar(tw_relu(tw_rsub_scalar(threshold, x)), slope));
    return y;
}

const tw_layer_class tw_layer_class_ReLU = {
    .name = "ReLU",
    .group = "Activation",
    .summary = "Rectified linear unit, optionally capped, leaky or thresholded",
    .params = relu_params,
    .nparams = sizeof relu_params / sizeof relu_params[0],
    .infer = same_shape_infer,
    .call = relu_call,
};

/* ---- LeakyReLU and ELU ---------------------------------------------------- */
enum { ALPHA };

static const tw_param_def leaky_relu_params[] = {
    [ALPHA] = {"alpha", TW_PARAM_FLOAT, "0.3", 0, 1e9, .help = "Slope for negative values"},
};

static tw_tensor *leaky_relu_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_leaky_relu(x, tw__param_float(self, ALPHA));
}

const tw_layer_class tw_layer_class_LeakyReLU = {
    .name = "LeakyReLU",
    .group = "Activation",
    .summary = "x for x > 0, alpha · x otherwise",
    .params = leaky_relu_params,
    .nparams = 1,
    .infer = same_shape_infer,
    .call = leaky_relu_call,
};

static const tw_param_def elu_params[] = {
    [ALPHA] = {"alpha", TW_PARAM_FLOAT, "1.0", 0, 1e9, .help = "Scale of the negative part"},
};

static tw_tensor *elu_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_elu(x, tw__param_float(self, ALPHA));
}

const tw_layer_class tw_layer_class_ELU = {
    .name = "ELU",
    .group = "Activation",
    .summary = "Exponential linear unit: x for x > 0, alpha · (exp(x) - 1) otherwise",
    .params = elu_params,
    .nparams = 1,
    .infer = same_shape_infer,
    .call = elu_call,
};

/* ---- Softmax -------------------------------------------------------------- */
enum { AXIS };

static const tw_param_def softmax_params[] = {
    [AXIS] = {"axis", TW_PARAM_INT, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1,
              .help = "The axis normalised to sum to 1; negative counts from the end"},
};

static int softmax_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    int64_t axis = tw__param_int(self, AXIS);
    if (axis < -input->ndim || axis >= input->ndim)
        return TW_LAYER_ERROR(self, "axis %lld is out of range for input %s", (long long)axis,
                              tw_shape_format(input, buf, sizeof buf));
    return same_shape_infer(self, input, output, w, nw);
}

static tw_tensor *softmax_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_softmax(x, (int)tw__param_int(self, AXIS));
}

const tw_layer_class tw_layer_class_Softmax = {
    .name = "Softmax",
    .group = "Activation",
    .summary = "Normalise an axis into probabilities: exp(x) / sum(exp(x))",
    .params = softmax_params,
    .nparams = 1,
    .infer = softmax_infer,
    .call = softmax_call,
};
