/* DepthwiseConv2D: activation(depthwise_conv2d(x, depthwise_kernel) + bias)
 * over (batch, height, width, channels) inputs, Keras'
 * tf.keras.layers.DepthwiseConv2D: each input channel convolved with its own
 * depth_multiplier kernels, output channel c * depth_multiplier + m. The
 * kernel is (kh, kw, in, depth_multiplier) as Keras stores it. */
#include "sliding_window.h"

enum {
    KERNEL_SIZE, STRIDES, PADDING, DEPTH_MULTIPLIER, DATA_FORMAT, DILATION_RATE, ACTIVATION, USE_BIAS, DEPTHWISE_INIT,
    BIAS_INIT, DEPTHWISE_REG, BIAS_REG
};

static const char *const paddings[] = {"valid", "same", NULL};

static const tw_param_def params[] = {
    [KERNEL_SIZE] = {"kernel_size", TW_PARAM_INTS, "3,3", 1, 1e9, .length = 2,
                     .help = "Height and width of each kernel"},
    [STRIDES] = {"strides", TW_PARAM_INTS, "1,1", 1, 1e9, .length = 2,
                 .help = "Step between windows, vertically and horizontally"},
    [PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                 .help = "valid: windows inside the input; same: zero-pad so the output is input/strides"},
    [DEPTH_MULTIPLIER] = {"depth_multiplier", TW_PARAM_INT, "1", 1, 1e9,
                          .help = "Output channels per input channel"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
    [DILATION_RATE] = {"dilation_rate", TW_PARAM_INTS, "1,1", 1, 1e9, .length = 2,
                       .help = "Spacing between kernel taps (atrous convolution)"},
    [ACTIVATION] = {"activation", TW_PARAM_CHOICE, "linear", .choices = tw_activation_names,
                    .help = "Applied to the output"},
    [USE_BIAS] = {"use_bias", TW_PARAM_BOOL, "true", .help = "Add a learned bias per output channel"},
    [DEPTHWISE_INIT] = {"depthwise_initializer", TW_PARAM_CHOICE, "glorot_uniform", .choices = tw_initializer_names,
                        .help = "How the depthwise kernel starts"},
    [BIAS_INIT] = {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How the bias starts"},
    [DEPTHWISE_REG] = {"depthwise_regularizer", TW_PARAM_REGULARIZER, "",
                       .help = "L1/L2 penalty on the depthwise kernel"},
    [BIAS_REG] = {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the bias"},
};

static int depthwise_configure(tw_layer *self)
{
    return tw__check_channels_last(self, DATA_FORMAT);
}

static tw__window window(const tw_layer *self)
{
    return tw__window_from_params(self, "kernel", 2, KERNEL_SIZE, STRIDES, DILATION_RATE, PADDING);
}

static int depthwise_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                           int *nw)
{
    tw__window win = window(self);
    if (tw__window_output(self, &win, input, output))
        return -1;
    int64_t in = input->dims[3], mult = tw__param_int(self, DEPTH_MULTIPLIER);
    output->dims[3] = in * mult;
    w[0] = (tw_weight_spec){"depthwise_kernel", {4, {win.size[0], win.size[1], in, mult}},
                            tw__param_choice(self, DEPTHWISE_INIT), true, "depthwise_regularizer"};
    *nw = 1;
    if (tw__param_bool(self, USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {in * mult}}, tw__param_choice(self, BIAS_INIT), true,
                                      "bias_regularizer"};
    return 0;
}

static tw_tensor *depthwise_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw__window win = window(self);
    tw_conv2d_params p = tw__window_conv_params(&win);
    tw_tensor *y = tw_depthwise_conv2d(x, self->weights[0], &p);
    if (self->nweights > 1)
        y = tw_add(y, self->weights[1]);
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), y);
}

const tw_layer_class tw_layer_class_DepthwiseConv2D = {
    .name = "DepthwiseConv2D",
    .group = "Convolution",
    .summary = "Per-channel 2-D convolution (MobileNet's depthwise step)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = depthwise_configure,
    .infer = depthwise_infer,
    .call = depthwise_call,
};
