/* ZeroPadding2D: zeros added at both ends of each spatial axis of
 * (batch, height, width, channels) inputs, Keras' tf.keras.layers.ZeroPadding2D. */
#include "edges.h"
#include "sliding_window.h"

enum { PADDING, DATA_FORMAT };

static const tw_param_def params[] = {
    [PADDING] = {"padding", TW_PARAM_INTS, "1,1", 0, 1e9, .pairs = 2,
                 .help = "Zeros to add: "
                          "one amount for every side; (height, width), each at both ends; or (top, bottom, left, right)"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
};

static int zero_padding_configure(tw_layer *self)
{
    int64_t edges[2][2];
    if (tw__edges(self, PADDING, 2, edges))
        return -1;
    return tw__check_channels_last(self, DATA_FORMAT);
}

static int zero_padding_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                              int *nw)
{
    int64_t edges[2][2];
    *nw = 0;
    if (tw__edges_check_input(self, 2, input) || tw__edges(self, PADDING, 2, edges))
        return -1;
    *output = *input;
    for (int i = 0; i < 2; i++)
        if (input->dims[1 + i] >= 0)
            output->dims[1 + i] += edges[i][0] + edges[i][1];
    return 0;
}

static tw_tensor *zero_padding_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    int64_t edges[2][2], paddings[2 * (2 + 2)] = {0};
    if (tw__edges(self, PADDING, 2, edges))
        return NULL;
    for (int i = 0; i < 2; i++) {
        paddings[2 * (1 + i)] = edges[i][0];
        paddings[2 * (1 + i) + 1] = edges[i][1];
    }
    return tw_pad(x, paddings, 0);
}

const tw_layer_class tw_layer_class_ZeroPadding2D = {
    .name = "ZeroPadding2D",
    .group = "Convolution",
    .summary = "Zeros around images",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = zero_padding_configure,
    .infer = zero_padding_infer,
    .call = zero_padding_call,
};
