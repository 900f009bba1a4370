/* MaxPooling2D and AveragePooling2D: the largest value or the mean of each
 * pool_size window of a (batch, height, width, channels) input, Keras'
 * tf.keras.layers of those names. SAME average pooling divides by the
 * window's elements inside the input, as TensorFlow does. */
#include "sliding_window.h"

enum { POOL_SIZE, STRIDES, PADDING, DATA_FORMAT };

static const char *const paddings[] = {"valid", "same", NULL};

static const tw_param_def params[] = {
    [POOL_SIZE] = {"pool_size", TW_PARAM_INTS, "2,2", 1, 1e9, .length = 2,
                   .help = "Height and width of each window"},
    [STRIDES] = {"strides", TW_PARAM_INTS, "", 1, 1e9, .length = 2, .nullable = true,
                 .help = "Step between windows; None means pool_size (windows that do not overlap)"},
    [PADDING] = {"padding", TW_PARAM_CHOICE, "valid", .choices = paddings,
                 .help = "valid: windows inside the input; same: pad so the output is input/strides"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
};

static int pool2d_configure(tw_layer *self)
{
    return tw__check_channels_last(self, DATA_FORMAT);
}

static tw__window window(const tw_layer *self)
{
    return tw__window_from_params(self, "pool", 2, POOL_SIZE, STRIDES, -1, PADDING);
}

static int pool2d_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    tw__window win = window(self);
    *nw = 0;
    return tw__window_output(self, &win, input, output);
}

typedef tw_tensor *(*pool_op)(tw_tensor *, const tw_pool2d_params *);

static tw_tensor *pool2d(tw_layer *self, tw_tensor *x, pool_op op)
{
    tw__window win = window(self);
    tw_pool2d_params p = tw__window_pool_params(&win);
    return op(x, &p);
}

static tw_tensor *max_pool2d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return pool2d(self, x, tw_max_pool2d);
}

static tw_tensor *avg_pool2d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return pool2d(self, x, tw_avg_pool2d);
}

const tw_layer_class tw_layer_class_MaxPooling2D = {
    .name = "MaxPooling2D",
    .group = "Pooling",
    .summary = "Largest value in each window of an image, per channel",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = pool2d_configure,
    .infer = pool2d_infer,
    .call = max_pool2d_call,
};

const tw_layer_class tw_layer_class_AveragePooling2D = {
    .name = "AveragePooling2D",
    .group = "Pooling",
    .summary = "Mean of each window of an image, per channel",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = pool2d_configure,
    .infer = pool2d_infer,
    .call = avg_pool2d_call,
};
