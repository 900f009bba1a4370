/* Conv1D: activation(conv1d(x, kernel) + bias) over (batch, steps, channels)
 * inputs with a (kernel_size, in, filters) kernel, Keras'
 * tf.keras.layers.Conv1D. It runs the 2-D convolution on a (batch, 1, steps,
 * channels) view; causal padding pads the start of the sequence by the
 * dilated kernel's extent minus one, so step t sees only steps <= t. */
#include <string.h>

#include "sliding_window.h"

enum {
    FILTERS, KERNEL_SIZE, STRIDES, PADDING, DATA_FORMAT, DILATION_RATE, GROUPS, ACTIVATION, USE_BIAS, KERNEL_INIT,
    BIAS_INIT, KERNEL_REG, BIAS_REG
};

static const char *const paddings[] = {"valid", "same", "causal", NULL};

static const tw_param_def params[] = {
    [FILTERS] = {"filters", TW_PARAM_INT, "32", 1, 1e9, .help = "Number of output channels (kernels)"},
    [KERNEL_SIZE] = {"kernel_size", TW_PARAM_INTS, "3", 1, 1e9, .length = 1, .help = "Length of each kernel"},
    [STRIDES] = {"strides", TW_PARAM_INTS, "1", 1, 1e9, .length = 1, .help = "Step between windows"},
    [PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                 .help = "valid: windows inside the input; same: zero-pad both ends; causal: pad the start only"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, steps, channels)"},
    [DILATION_RATE] = {"dilation_rate", TW_PARAM_INTS, "1", 1, 1e9, .length = 1,
                       .help = "Spacing between kernel taps (dilated convolution)"},
    TW_CONV_TAIL_PARAMS,
};

static int conv1d_configure(tw_layer *self)
{
    return tw__check_conv_config(self, GROUPS, DATA_FORMAT);
}

static tw__window window(const tw_layer *self)
{
    return tw__window_from_params(self, "kernel", 1, KERNEL_SIZE, STRIDES, DILATION_RATE, PADDING);
}

static int conv1d_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    tw__window win = window(self);
    if (tw__window_output(self, &win, input, output))
        return -1;
    int64_t in = input->dims[2], filters = tw__param_int(self, FILTERS);
    output->dims[2] = filters;
    w[0] = (tw_weight_spec){"kernel", {3, {win.size[0], in, filters}}, tw__param_choice(self, KERNEL_INIT), true,
                            "kernel_regularizer"};
    *nw = 1;
    if (tw__param_bool(self, USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {filters}}, tw__param_choice(self, BIAS_INIT), true,
                                      "bias_regularizer"};
    return 0;
}

static tw_tensor *conv1d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw__window win = window(self);
    tw_conv2d_params p = tw__window_conv_params(&win);
    if (!strcmp(win.padding, "causal"))
        x = tw_pad(x, (const int64_t[]){0, 0, (win.size[0] - 1) * win.dilation[0], 0, 0, 0}, 0);
    tw_tensor *y = tw_conv2d(tw_expand_dims(x, 1), tw_expand_dims(self->weights[0], 0), &p);
    y = tw_squeeze(y, TW_AXES(1));
    if (self->nweights > 1)
        y = tw_add(y, self->weights[1]);
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), y);
}

const tw_layer_class tw_layer_class_Conv1D = {
    .name = "Conv1D",
    .group = "Convolution",
    .summary = "1-D convolution over sequences (steps, channels), optionally causal",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = conv1d_configure,
    .infer = conv1d_infer,
    .call = conv1d_call,
};
