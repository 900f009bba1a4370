/* Conv1DTranspose: activation(conv1d_transpose(x, kernel) + bias) over
 * (batch, steps, channels) inputs, Keras' tf.keras.layers.Conv1DTranspose,
 * with a (kernel_size, filters, in) kernel. It runs the 2-D transposed
 * convolution on a (batch, 1, steps, channels) view. */
#include "transposed_window.h"

enum {
    FILTERS, KERNEL_SIZE, STRIDES, PADDING, OUTPUT_PADDING, DATA_FORMAT, DILATION_RATE, GROUPS, ACTIVATION, USE_BIAS,
    KERNEL_INIT, BIAS_INIT, KERNEL_REG, BIAS_REG
};

static const char *const paddings[] = {"valid", "same", NULL};

static const tw_param_def params[] = {
    [FILTERS] = {"filters", TW_PARAM_INT, "32", 1, 1e9, .help = "Number of output channels"},
    [KERNEL_SIZE] = {"kernel_size", TW_PARAM_INTS, "3", 1, 1e9, .length = 1, .help = "Length of each kernel"},
    [STRIDES] = {"strides", TW_PARAM_INTS, "1", 1, 1e9, .length = 1,
                 .help = "Upsampling factor: output steps per input step"},
    [PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                 .help = "same: the output is input x strides; valid: it also keeps the kernel's overhang"},
    TW_OUTPUT_PADDING_PARAM(1, "\"1\""),
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, steps, channels)"},
    [DILATION_RATE] = {"dilation_rate", TW_PARAM_INTS, "1", 1, 1e9, .length = 1,
                       .help = "Spacing between kernel taps"},
    TW_CONV_TAIL_PARAMS,
};

static tw__window window(const tw_layer *self)
{
    return tw__window_from_params(self, "kernel", 1, KERNEL_SIZE, STRIDES, DILATION_RATE, PADDING);
}

static int conv1d_transpose_configure(tw_layer *self)
{
    tw__window win = window(self);
    if (tw__check_conv_config(self, GROUPS, DATA_FORMAT))
        return -1;
    return tw__check_output_padding(self, &win, tw_layer_param(self, OUTPUT_PADDING));
}

static int conv1d_transpose_infer(const tw_layer *self, const tw_shape *input, tw_shape *output,
                                  tw_weight_spec *w, int *nw)
{
    tw__window win = window(self);
    if (tw__transposed_output(self, &win, tw_layer_param(self, OUTPUT_PADDING), input, output))
        return -1;
    int64_t in = input->dims[2], filters = tw__param_int(self, FILTERS);
    output->dims[2] = filters;
    w[0] = (tw_weight_spec){"kernel", {3, {win.size[0], filters, in}}, tw__param_choice(self, KERNEL_INIT), true,
                            "kernel_regularizer"};
    *nw = 1;
    if (tw__param_bool(self, USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {filters}}, tw__param_choice(self, BIAS_INIT), true,
                                      "bias_regularizer"};
    return 0;
}

static tw_tensor *conv1d_transpose_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw__window win = window(self);
    tw_shape in = {3, {tw_tensor_shape(x)[0], tw_tensor_shape(x)[1], tw_tensor_shape(x)[2]}}, out;
    if (tw__transposed_output(self, &win, tw_layer_param(self, OUTPUT_PADDING), &in, &out))
        return NULL;
    tw_conv2d_params p = tw__window_conv_params(&win);
    tw_tensor *y = tw_conv2d_transpose(tw_expand_dims(x, 1), tw_expand_dims(self->weights[0], 0), 1, out.dims[1], &p);
    y = tw_squeeze(y, TW_AXES(1));
    if (self->nweights > 1)
        y = tw_add(y, self->weights[1]);
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), y);
}

const tw_layer_class tw_layer_class_Conv1DTranspose = {
    .name = "Conv1DTranspose",
    .group = "Convolution",
    .summary = "Transposed 1-D convolution: learned upsampling of sequences",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = conv1d_transpose_configure,
    .infer = conv1d_transpose_infer,
    .call = conv1d_transpose_call,
};
