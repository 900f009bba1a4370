/* Cropping2D: rows cut from both ends of each spatial axis of
 * (batch, height, width, channels) inputs, Keras' tf.keras.layers.Cropping2D. */
#include "edges.h"
#include "sliding_window.h"

enum { CROPPING, DATA_FORMAT };

static const tw_param_def params[] = {
    [CROPPING] = {"cropping", TW_PARAM_INTS, "0,0,0,0", 0, 1e9, .pairs = 2,
                  .help = "Amounts to cut: "
                           "one for every side; (height, width), each at both ends; or (top, bottom, left, right)"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
};

static int cropping_configure(tw_layer *self)
{
    int64_t edges[2][2];
    if (tw__edges(self, CROPPING, 2, edges))
        return -1;
    return tw__check_channels_last(self, DATA_FORMAT);
}

static int cropping_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    static const char *const axes[] = {"height", "width"};
    int64_t edges[2][2];
    *nw = 0;
    if (tw__edges_check_input(self, 2, input) || tw__edges(self, CROPPING, 2, edges))
        return -1;
    *output = *input;
    for (int i = 0; i < 2; i++) {
        int64_t n = input->dims[1 + i];
        if (n < 0)
            continue; /* unknown stays unknown; the call checks the actual length */
        if (edges[i][0] + edges[i][1] >= n) {
            char in[128];
            return TW_LAYER_ERROR(self, "cropping %lld + %lld leaves nothing of the %s of input %s",
                                  (long long)edges[i][0], (long long)edges[i][1], axes[i],
                                  tw_shape_format(input, in, sizeof in));
        }
        output->dims[1 + i] = n - edges[i][0] - edges[i][1];
    }
    return 0;
}

static tw_tensor *cropping_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw_shape in = {tw_tensor_ndim(x)}, out;
    for (int d = 0; d < in.ndim; d++)
        in.dims[d] = tw_tensor_shape(x)[d];
    int64_t edges[2][2];
    if (cropping_infer(self, &in, &out, NULL, (int[1]){0}) || tw__edges(self, CROPPING, 2, edges))
        return NULL;
    for (int i = 0; i < 2; i++)
        x = tw_slice(x, 1 + i, edges[i][0], in.dims[1 + i] - edges[i][1], 1);
    return x;
}

const tw_layer_class tw_layer_class_Cropping2D = {
    .name = "Cropping2D",
    .group = "Convolution",
    .summary = "Cut the borders of images",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = cropping_configure,
    .infer = cropping_infer,
    .call = cropping_call,
};
