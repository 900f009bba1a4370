/* SeparableConv1D: a depthwise convolution of each channel over the steps,
 * then a width-1 convolution mixing them, plus bias and activation; Keras'
 * tf.keras.layers.SeparableConv1D (shared code in separable_conv.c). */
#include "separable_conv.h"

static const char *const paddings[] = {"valid", "same", "causal", NULL};

static const tw_param_def params[] = {
    [SEP_FILTERS] = {"filters", TW_PARAM_INT, "32", 1, 1e9, .help = "Number of output channels"},
    [SEP_KERNEL_SIZE] = {"kernel_size", TW_PARAM_INTS, "3", 1, 1e9, .length = 1,
                         .help = "Length of each depthwise kernel"},
    [SEP_STRIDES] = {"strides", TW_PARAM_INTS, "1", 1, 1e9, .length = 1, .help = "Step between windows"},
    [SEP_PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                     .help = "valid: windows inside the input; same: zero-pad both ends; causal: pad the start only"},
    [SEP_DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                         .nullable = true, .help = "Axis order; only channels_last (batch, steps, channels)"},
    [SEP_DILATION_RATE] = {"dilation_rate", TW_PARAM_INTS, "1", 1, 1e9, .length = 1,
                           .help = "Spacing between kernel taps (dilated convolution)"},
    TW_SEPARABLE_TAIL_PARAMS,
};

static int separable1d_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                             int *nw)
{
    return tw__separable_infer(self, 1, input, output, w, nw);
}

static tw_tensor *separable1d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw__separable_call(self, 1, x);
}

const tw_layer_class tw_layer_class_SeparableConv1D = {
    .name = "SeparableConv1D",
    .group = "Convolution",
    .summary = "Depthwise then pointwise 1-D convolution over sequences",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = tw__separable_configure,
    .infer = separable1d_infer,
    .call = separable1d_call,
};
