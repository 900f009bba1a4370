/* Cropping1D and Cropping2D: amounts cut from both ends of each spatial
 * axis of (batch, steps, channels) or (batch, height, width, channels)
 * inputs, Keras' tf.keras.layers.Cropping1D and Cropping2D. One code for
 * both, over the class's number of spatial axes. */
#include "edges.h"
#include "sliding_window.h"

enum { CROPPING, DATA_FORMAT };

extern const tw_layer_class tw_layer_class_Cropping2D;

static const tw_param_def params_1d[] = {
    [CROPPING] = {"cropping", TW_PARAM_INTS, "1,1", 0, 1e9,
                  .help = "Steps to cut: one amount for both ends, or (start, end)"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, steps, channels)"},
};

static const tw_param_def params_2d[] = {
    [CROPPING] = {"cropping", TW_PARAM_INTS, "0,0,0,0", 0, 1e9, .pairs = 2,
                  .help = "Amounts to cut: "
                           "one for every side; (height, width), each at both ends; or (top, bottom, left, right)"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
};

/* The spatial axes: 1 for Cropping1D, 2 for Cropping2D. */
static int rank_of(const tw_layer *self)
{
    return self->klass == &tw_layer_class_Cropping2D ? 2 : 1;
}

static int cropping_configure(tw_layer *self)
{
    int64_t edges[2][2];
    if (tw__edges(self, CROPPING, rank_of(self), edges))
        return -1;
    return tw__check_channels_last(self, DATA_FORMAT);
}

static int cropping_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    int rank = rank_of(self);
    const char *const *axes = rank == 2 ? (const char *const[]){"height", "width"} : (const char *const[]){"length"};
    int64_t edges[2][2];
    *nw = 0;
    if (tw__edges_check_input(self, rank, input) || tw__edges(self, CROPPING, rank, edges))
        return -1;
    *output = *input;
    for (int i = 0; i < rank; i++) {
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
    int rank = rank_of(self);
    tw_shape in = {tw_tensor_ndim(x)}, out;
    for (int d = 0; d < in.ndim; d++)
        in.dims[d] = tw_tensor_shape(x)[d];
    int64_t edges[2][2];
    if (cropping_infer(self, &in, &out, NULL, (int[1]){0}) || tw__edges(self, CROPPING, rank, edges))
        return NULL;
    for (int i = 0; i < rank; i++)
        x = tw_slice(x, 1 + i, edges[i][0], in.dims[1 + i] - edges[i][1], 1);
    return x;
}

const tw_layer_class tw_layer_class_Cropping1D = {
    .name = "Cropping1D",
    .group = "Convolution",
    .summary = "Cut the borders of sequences",
    .params = params_1d,
    .nparams = sizeof params_1d / sizeof params_1d[0],
    .configure = cropping_configure,
    .infer = cropping_infer,
    .call = cropping_call,
};

const tw_layer_class tw_layer_class_Cropping2D = {
    .name = "Cropping2D",
    .group = "Convolution",
    .summary = "Cut the borders of images",
    .params = params_2d,
    .nparams = sizeof params_2d / sizeof params_2d[0],
    .configure = cropping_configure,
    .infer = cropping_infer,
    .call = cropping_call,
};
