/* Conv2DTranspose: activation(conv2d_transpose(x, kernel) + bias) over
 * (batch, height, width, channels) inputs, Keras'
 * tf.keras.layers.Conv2DTranspose. The kernel is (kh, kw, filters, in) as
 * Keras stores it: the filter of the convolution this one transposes. */
#include "transposed_window.h"

enum {
    FILTERS, KERNEL_SIZE, STRIDES, PADDING, OUTPUT_PADDING, DATA_FORMAT, DILATION_RATE, GROUPS, ACTIVATION, USE_BIAS,
    KERNEL_INIT, BIAS_INIT, KERNEL_REG, BIAS_REG
};

static const char *const paddings[] = {"valid", "same", NULL};

static const tw_param_def params[] = {
    [FILTERS] = {"filters", TW_PARAM_INT, "32", 1, 1e9, .help = "Number of output channels"},
    [KERNEL_SIZE] = {"kernel_size", TW_PARAM_INTS, "3,3", 1, 1e9, .length = 2,
                     .help = "Height and width of each kernel"},
    [STRIDES] = {"strides", TW_PARAM_INTS, "1,1", 1, 1e9, .length = 2,
                 .help = "Upsampling factor: output pixels per input pixel, vertically and horizontally"},
    [PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                 .help = "same: the output is input x strides; valid: it also keeps the kernel's overhang"},
    TW_OUTPUT_PADDING_PARAM(2, "\"1,1\""),
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
    [DILATION_RATE] = {"dilation_rate", TW_PARAM_INTS, "1,1", 1, 1e9, .length = 2,
                       .help = "Spacing between kernel taps"},
    TW_CONV_TAIL_PARAMS,
};

static tw__window window(const tw_layer *self)
{
    return tw__window_from_params(self, "kernel", 2, KERNEL_SIZE, STRIDES, DILATION_RATE, PADDING);
}

static int conv2d_transpose_configure(tw_layer *self)
{
    tw__window win = window(self);
    if (tw__check_conv_config(self, GROUPS, DATA_FORMAT))
        return -1;
    return tw__check_output_padding(self, &win, tw_layer_param(self, OUTPUT_PADDING));
}

static int conv2d_transpose_infer(const tw_layer *self, const tw_shape *input, tw_shape *output,
                                  tw_weight_spec *w, int *nw)
{
    tw__window win = window(self);
    if (tw__transposed_output(self, &win, tw_layer_param(self, OUTPUT_PADDING), input, output))
        return -1;
    int64_t in = input->dims[3], filters = tw__param_int(self, FILTERS);
    output->dims[3] = filters;
    w[0] = (tw_weight_spec){"kernel", {4, {win.size[0], win.size[1], filters, in}}, tw__param_choice(self, KERNEL_INIT),
                            true, "kernel_regularizer"};
    *nw = 1;
    if (tw__param_bool(self, USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {filters}}, tw__param_choice(self, BIAS_INIT), true,
                                      "bias_regularizer"};
    return 0;
}

static tw_tensor *conv2d_transpose_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw__window win = window(self);
    tw_shape in = {4}, out;
    for (int d = 0; d < 4; d++)
        in.dims[d] = tw_tensor_shape(x)[d];
    if (tw__transposed_output(self, &win, tw_layer_param(self, OUTPUT_PADDING), &in, &out))
        return NULL;
    tw_conv2d_params p = tw__window_conv_params(&win);
    tw_tensor *y = tw_conv2d_transpose(x, self->weights[0], out.dims[1], out.dims[2], &p);
    if (self->nweights > 1)
        y = tw_add(y, self->weights[1]);
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), y);
}

const tw_layer_class tw_layer_class_Conv2DTranspose = {
    .name = "Conv2DTranspose",
    .group = "Convolution",
    .summary = "Transposed 2-D convolution: learned upsampling of images",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = conv2d_transpose_configure,
    .infer = conv2d_transpose_infer,
    .call = conv2d_transpose_call,
};
