/* UpSampling1D: each step of a (batch, steps, channels) sequence repeated
 * size times, Keras' tf.keras.layers.UpSampling1D. It runs the nearest
 * resize on a (batch, 1, steps, channels) view, which at a whole factor is
 * exactly that repetition. */
#include "layer_internal.h"

enum { SIZE };

static const tw_param_def params[] = {
    [SIZE] = {"size", TW_PARAM_INT, "2", 1, 1e9, .help = "Times each step is repeated"},
};

static int up_sampling1d_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                               int *nw)
{
    char in[128];
    *nw = 0;
    if (input->ndim != 3)
        return TW_LAYER_ERROR(self, "expected input of rank 3 (batch, steps, channels), got %s",
                              tw_shape_format(input, in, sizeof in));
    *output = *input;
    if (input->dims[1] >= 0)
        output->dims[1] *= tw__param_int(self, SIZE);
    return 0;
}

static tw_tensor *up_sampling1d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    int64_t steps = tw_tensor_shape(x)[1] * tw__param_int(self, SIZE);
    return tw_squeeze(tw_resize(tw_expand_dims(x, 1), 1, steps, TW_RESIZE_NEAREST), TW_AXES(1));
}

const tw_layer_class tw_layer_class_UpSampling1D = {
    .name = "UpSampling1D",
    .group = "Convolution",
    .summary = "Repeat each step of a sequence size times",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = up_sampling1d_infer,
    .call = up_sampling1d_call,
};
