/* Rescaling: x * scale + offset, Keras' preprocessing layer that maps pixel
 * bytes to [0, 1] (scale 1/255) or [-1, 1] (scale 1/127.5, offset -1).
 * Inputs that are not in the layer's dtype (uint8 images) are cast first,
 * as Keras does. */
#include "layer_internal.h"

enum { SCALE, OFFSET };

static const tw_param_def params[] = {
    [SCALE] = {"scale", TW_PARAM_FLOAT, "0.00392156862745098", -1e9, 1e9,
               .help = "Multiplies the input (1/255 maps bytes to [0, 1])"},
    [OFFSET] = {"offset", TW_PARAM_FLOAT, "0", -1e9, 1e9, .help = "Added after scaling"},
};

static int rescaling_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                           int *nw)
{
    *output = *input;
    *nw = 0;
    return 0;
}

static tw_tensor *rescaling_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    return tw_add_scalar(tw_mul_scalar(x, tw__param_float(self, SCALE)), tw__param_float(self, OFFSET));
}

const tw_layer_class tw_layer_class_Rescaling = {
    .name = "Rescaling",
    .group = "Core",
    .summary = "Rescale values: x · scale + offset (e.g. pixels to [0, 1])",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = rescaling_infer,
    .call = rescaling_call,
};
