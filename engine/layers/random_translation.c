/* RandomTranslation: in training, shift each image by a fraction of its
 * height drawn from height_factor and of its width from width_factor (f:
 * (-f, f); a pair: (lower, upper); positive moves the content down and
 * right), filling what comes from outside by fill_mode; in inference, the
 * identity. The matrix is Keras' get_translation_matrix;
 * tw_image_transform passes gradients to the images. */
#include "image_augment.h"

static const tw_param_def params[] = {
    [TW_HW_HEIGHT_FACTOR] = {"height_factor", TW_PARAM_FLOATS, "0.1", -1, 1, 0,
                             .help = "Vertical shift range as a fraction of the height: f for (-f, f), or lower,upper"},
    [TW_HW_WIDTH_FACTOR] = {"width_factor", TW_PARAM_FLOATS, "0.1", -1, 1, 0,
                            .help = "Horizontal shift range as a fraction of the width"},
    [TW_HW_FILL_MODE] = TW__FILL_MODE_PARAM,
    [TW_HW_INTERPOLATION] = TW__INTERPOLATION_PARAM,
    [TW_HW_SEED] = TW__SEED_PARAM("shifts"),
    [TW_HW_FILL_VALUE] = TW__FILL_VALUE_PARAM,
    [TW_HW_DATA_FORMAT] = TW__DATA_FORMAT_PARAM,
};

static int translation_configure(tw_layer *self)
{
    tw_hw_augment_state *st = self->state;
    if (tw__factor_range(tw_layer_param(self, TW_HW_HEIGHT_FACTOR), "height_factor", -1, 1, &st->h_lower,
                         &st->h_upper))
        return -1;
    return tw__factor_range(tw_layer_param(self, TW_HW_WIDTH_FACTOR), "width_factor", -1, 1, &st->w_lower,
                            &st->w_upper);
}

/* Keras' get_translation_matrix: content moved down by dh * h, right by
 * dw * w. */
static void translation_transform(double dh, double dw, double h, double w, double *m)
{
    m[0] = 1;
    m[1] = 0;
    m[2] = -dw * w;
    m[3] = 0;
    m[4] = 1;
    m[5] = -dh * h;
    m[6] = m[7] = 0;
}

static tw_tensor *translation_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw__hw_augment_call(self, x, ctx, 0, false, translation_transform);
}

const tw_layer_class tw_layer_class_RandomTranslation = {
    .name = "RandomTranslation",
    .group = "Regularization",
    .summary = "Shift images at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(tw_hw_augment_state),
    .configure = translation_configure,
    .infer = tw__image_augment_infer,
    .call = translation_call,
    .finalize = tw__hw_augment_finalize,
};
