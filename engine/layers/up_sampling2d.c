/* UpSampling2D: images enlarged by whole factors, each pixel repeated
 * (nearest) or interpolated (bilinear, TensorFlow's half-pixel rule); Keras'
 * tf.keras.layers.UpSampling2D on (batch, height, width, channels). */
#include <string.h>

#include "sliding_window.h"

enum { SIZE, DATA_FORMAT, INTERPOLATION };

/* Keras' choices; configure refuses the ones not computed here. */
static const char *const interpolations[] = {"nearest", "bilinear", "bicubic", "area", "lanczos3", "lanczos5",
                                             "gaussian", "mitchellcubic", NULL};

static const tw_param_def params[] = {
    [SIZE] = {"size", TW_PARAM_INTS, "2,2", 1, 1e9, .length = 2,
              .help = "Factors for height and width"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
    [INTERPOLATION] = {"interpolation", TW_PARAM_CHOICE, "nearest", .choices = interpolations,
                       .help = "nearest: repeat each pixel; bilinear: blend the neighbours"},
};

static int up_sampling2d_configure(tw_layer *self)
{
    const char *method = tw__param_choice(self, INTERPOLATION);
    if (strcmp(method, "nearest") && strcmp(method, "bilinear"))
        return TW_LAYER_ERROR(self, "interpolation %s is not supported; nearest and bilinear are", method);
    return tw__check_channels_last(self, DATA_FORMAT);
}

static int up_sampling2d_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                               int *nw)
{
    char in[128];
    *nw = 0;
    if (input->ndim != 4)
        return TW_LAYER_ERROR(self, "expected input of rank 4 (batch, height, width, channels), got %s",
                              tw_shape_format(input, in, sizeof in));
    const tw_param_value *size = tw_layer_param(self, SIZE);
    *output = *input;
    for (int i = 0; i < 2; i++)
        if (input->dims[1 + i] >= 0)
            output->dims[1 + i] *= size->ints[i];
    return 0;
}

static tw_tensor *up_sampling2d_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    const tw_param_value *size = tw_layer_param(self, SIZE);
    const int64_t *shape = tw_tensor_shape(x);
    bool nearest = !strcmp(tw__param_choice(self, INTERPOLATION), "nearest");
    return tw_resize(x, shape[1] * size->ints[0], shape[2] * size->ints[1],
                     nearest ? TW_RESIZE_NEAREST : TW_RESIZE_BILINEAR);
}

const tw_layer_class tw_layer_class_UpSampling2D = {
    .name = "UpSampling2D",
    .group = "Convolution",
    .summary = "Enlarge images by whole factors (nearest or bilinear)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = up_sampling2d_configure,
    .infer = up_sampling2d_infer,
    .call = up_sampling2d_call,
};
