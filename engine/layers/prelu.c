/* PReLU: x for x > 0, alpha * x otherwise, with alpha learned per feature:
 * a weight of the example's shape (input without the batch axis), size 1
 * on the shared_axes (counted from 1, as Keras: shared_axes (1, 2) after a
 * Conv2D learns one alpha per channel). */
#include "layer_common.h"

enum { ALPHA_INIT, ALPHA_REG, SHARED_AXES };

static const tw_param_def params[] = {
    [ALPHA_INIT] = {"alpha_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                    .help = "How alpha starts (zeros: a plain ReLU)"},
    [ALPHA_REG] = {"alpha_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on alpha"},
    [SHARED_AXES] = {"shared_axes", TW_PARAM_INTS, "", 1, TW_MAX_DIMS - 1, 0, .nullable = true,
                     .help = "Axes (from 1) that share one alpha, e.g. 1,2 for images; none: one per value"},
};

static int prelu_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    const tw_param_value *shared = tw_layer_param(self, SHARED_AXES);
    if (input->ndim < 2)
        return TW_LAYER_ERROR(self, "expected input with a batch axis and features, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    tw_shape shape = {input->ndim - 1};
    for (int d = 1; d < input->ndim; d++)
        shape.dims[d - 1] = input->dims[d];
    for (int i = 0; !shared->is_null && i < shared->n; i++) {
        if (shared->ints[i] >= input->ndim)
            return TW_LAYER_ERROR(self, "shared axis %lld is out of range for input %s", (long long)shared->ints[i],
                                  tw_shape_format(input, buf, sizeof buf));
        shape.dims[shared->ints[i] - 1] = 1;
    }
    for (int d = 0; d < shape.ndim; d++)
        if (shape.dims[d] < 0)
            return TW_LAYER_ERROR(self, "axis %d of input %s must have a known size or be shared", d + 1,
                                  tw_shape_format(input, buf, sizeof buf));
    w[0] = (tw_weight_spec){"alpha", shape, tw__param_choice(self, ALPHA_INIT), true, "alpha_regularizer"};
    *nw = 1;
    *output = *input;
    return 0;
}

static tw_tensor *prelu_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    /* relu(x) - alpha * relu(-x), as Keras writes it */
    return tw_sub(tw_relu(x), tw_mul(self->weights[0], tw_relu(tw_neg(x))));
}

const tw_layer_class tw_layer_class_PReLU = {
    .name = "PReLU",
    .group = "Activation",
    .summary = "Leaky ReLU whose negative slope is learned",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = prelu_infer,
    .call = prelu_call,
};
