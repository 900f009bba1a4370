/* Resizing: images resized to height x width, bilinear or nearest as
 * TensorFlow 2's tf.image.resize (half-pixel centres, no antialiasing);
 * Keras' tf.keras.layers.Resizing on (batch, height, width, channels).
 * With crop_to_aspect_ratio the largest centred box of the target's aspect
 * ratio is cut out first (Keras' smart_resize). Integer images come out as
 * float32, as Keras' compute dtype. */
#include <string.h>

#include "sliding_window.h"

enum {
    HEIGHT, WIDTH, INTERPOLATION, CROP_TO_ASPECT_RATIO, PAD_TO_ASPECT_RATIO, FILL_MODE, FILL_VALUE, ANTIALIAS,
    DATA_FORMAT
};

/* Keras' choices; configure refuses the ones not computed here. */
static const char *const interpolations[] = {"bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                                             "gaussian", "mitchellcubic", NULL};
static const char *const fill_modes[] = {"constant", NULL};

static const tw_param_def params[] = {
    [HEIGHT] = {"height", TW_PARAM_INT, "224", 1, 1e9, .help = "Height of the output images"},
    [WIDTH] = {"width", TW_PARAM_INT, "224", 1, 1e9, .help = "Width of the output images"},
    [INTERPOLATION] = {"interpolation", TW_PARAM_CHOICE, "bilinear", .choices = interpolations,
                       .help = "bilinear: blend the neighbours; nearest: take the closest pixel"},
    [CROP_TO_ASPECT_RATIO] = {"crop_to_aspect_ratio", TW_PARAM_BOOL, "false",
                              .help = "Cut the largest centred box of the output's aspect ratio first"},
    [PAD_TO_ASPECT_RATIO] = {"pad_to_aspect_ratio", TW_PARAM_BOOL, "false",
                             .help = "Pad to the output's aspect ratio first; not supported"},
    [FILL_MODE] = {"fill_mode", TW_PARAM_CHOICE, "constant", .choices = fill_modes,
                   .help = "How pad_to_aspect_ratio fills"},
    [FILL_VALUE] = {"fill_value", TW_PARAM_FLOAT, "0", -1e300, 1e300,
                    .help = "The value pad_to_aspect_ratio fills with"},
    [ANTIALIAS] = {"antialias", TW_PARAM_BOOL, "false", .help = "Filter when downsampling; not supported"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (batch, height, width, channels)"},
};

static int resizing_configure(tw_layer *self)
{
    const char *method = tw__param_choice(self, INTERPOLATION);
    if (strcmp(method, "nearest") && strcmp(method, "bilinear"))
        return TW_LAYER_ERROR(self, "interpolation %s is not supported; bilinear and nearest are", method);
    if (tw__param_bool(self, PAD_TO_ASPECT_RATIO))
        return TW_LAYER_ERROR(self, "pad_to_aspect_ratio is not supported (crop_to_aspect_ratio is)");
    if (tw__param_bool(self, ANTIALIAS))
        return TW_LAYER_ERROR(self, "antialias is not supported");
    return tw__check_channels_last(self, DATA_FORMAT);
}

static int resizing_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                          int *nw)
{
    char in[128];
    *nw = 0;
    if (input->ndim != 4)
        return TW_LAYER_ERROR(self, "expected input of rank 4 (batch, height, width, channels), got %s",
                              tw_shape_format(input, in, sizeof in));
    if (input->dims[1] == 0 || input->dims[2] == 0)
        return TW_LAYER_ERROR(self, "cannot resize images with no pixels: input %s",
                              tw_shape_format(input, in, sizeof in));
    *output = *input;
    output->dims[1] = tw__param_int(self, HEIGHT);
    output->dims[2] = tw__param_int(self, WIDTH);
    return 0;
}

/* Keras' smart_resize crop box, in its float32 arithmetic. */
static void crop_box(int64_t height, int64_t width, int64_t target_h, int64_t target_w, int64_t *top, int64_t *left,
                     int64_t *crop_h, int64_t *crop_w)
{
    *crop_h = (int64_t)((float)(width * target_h) / (float)target_w);
    *crop_h = *crop_h < height ? *crop_h : height;
    *crop_w = (int64_t)((float)(height * target_w) / (float)target_h);
    *crop_w = *crop_w < width ? *crop_w : width;
    *top = (int64_t)((float)(height - *crop_h) / 2);
    *left = (int64_t)((float)(width - *crop_w) / 2);
}

static tw_tensor *resizing_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    int64_t th = tw__param_int(self, HEIGHT), tw = tw__param_int(self, WIDTH);
    if (!tw_dtype_is_float(tw_tensor_dtype(x)))
        x = tw_cast(x, TW_FLOAT32);
    if (tw__param_bool(self, CROP_TO_ASPECT_RATIO)) {
        int64_t h = tw_tensor_shape(x)[1], w = tw_tensor_shape(x)[2], top, left, ch, cw;
        crop_box(h, w, th, tw, &top, &left, &ch, &cw);
        if (ch < 1 || cw < 1) {
            TW_LAYER_ERROR(self, "the %lldx%lld image has no %lld:%lld box to crop", (long long)h, (long long)w,
                           (long long)th, (long long)tw);
            return NULL;
        }
        x = tw_slice(tw_slice(x, 1, top, top + ch, 1), 2, left, left + cw, 1);
    }
    bool nearest = !strcmp(tw__param_choice(self, INTERPOLATION), "nearest");
    return tw_resize(x, th, tw, nearest ? TW_RESIZE_NEAREST : TW_RESIZE_BILINEAR);
}

const tw_layer_class tw_layer_class_Resizing = {
    .name = "Resizing",
    .group = "Preprocessing",
    .summary = "Resize images to height x width (bilinear or nearest)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = resizing_configure,
    .infer = resizing_infer,
    .call = resizing_call,
};
