/* RandomZoom: in training, scale each image about its centre: the sampled
 * region's height is 1 + a draw from height_factor (f: (-f, f); negative
 * zooms in, positive out), its width likewise from width_factor or, when
 * that is none, the same draw (the aspect kept); points from outside follow
 * fill_mode. In inference, the identity. The matrix is Keras'
 * get_zoom_matrix; tw_image_transform passes gradients to the images. */
#include "image_augment.h"

static const tw_param_def params[] = {
    [TW_HW_HEIGHT_FACTOR] = {"height_factor", TW_PARAM_FLOATS, "0.1", -1, 1e9, 0,
                             .help = "Zoom range of the height: f for (-f, f), or lower,upper; negative zooms in"},
    [TW_HW_WIDTH_FACTOR] = {"width_factor", TW_PARAM_FLOATS, "", -1, 1e9, 0, .nullable = true,
                            .help = "Zoom range of the width; none: the height's draw (aspect kept)"},
    [TW_HW_FILL_MODE] = TW__FILL_MODE_PARAM,
    [TW_HW_INTERPOLATION] = TW__INTERPOLATION_PARAM,
    [TW_HW_SEED] = TW__SEED_PARAM("zooms"),
    [TW_HW_FILL_VALUE] = TW__FILL_VALUE_PARAM,
    [TW_HW_DATA_FORMAT] = TW__DATA_FORMAT_PARAM,
};

static int zoom_configure(tw_layer *self)
{
    tw_hw_augment_state *st = self->state;
    if (tw__factor_range(tw_layer_param(self, TW_HW_HEIGHT_FACTOR), "height_factor", -1, 1e9, &st->h_lower,
                         &st->h_upper))
        return -1;
    const tw_param_value *w = tw_layer_param(self, TW_HW_WIDTH_FACTOR);
    return w->is_null ? 0 : tw__factor_range(w, "width_factor", -1, 1e9, &st->w_lower, &st->w_upper);
}

/* Keras' get_zoom_matrix: the sampled region dw x dh of the image's size,
 * about its centre. */
static void zoom_transform(double dh, double dw, double h, double w, double *m)
{
    m[0] = dw;
    m[1] = 0;
    m[2] = (w - 1) / 2 * (1 - dw);
    m[3] = 0;
    m[4] = dh;
    m[5] = (h - 1) / 2 * (1 - dh);
    m[6] = m[7] = 0;
}

/* The draws are 1 + a factor; without width_factor the width takes the
 * height's draw. */
static tw_tensor *zoom_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw__hw_augment_call(self, x, ctx, 1, tw_layer_param(self, TW_HW_WIDTH_FACTOR)->is_null, zoom_transform);
}

const tw_layer_class tw_layer_class_RandomZoom = {
    .name = "RandomZoom",
    .group = "Regularization",
    .summary = "Zoom images in or out at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(tw_hw_augment_state),
    .configure = zoom_configure,
    .infer = tw__image_augment_infer,
    .call = zoom_call,
    .finalize = tw__hw_augment_finalize,
};
