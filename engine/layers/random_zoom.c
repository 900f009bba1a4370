/* RandomZoom: in training, scale each image about its centre: the sampled
 * region's height is 1 + a draw from height_factor (f: (-f, f); negative
 * zooms in, positive out), its width likewise from width_factor or, when
 * that is none, the same draw (the aspect kept); points from outside follow
 * fill_mode. In inference, the identity. The matrix is Keras'
 * get_zoom_matrix; tw_image_transform passes gradients to the images. */
#include <stdlib.h>

#include "image_augment.h"

enum { HEIGHT_FACTOR, WIDTH_FACTOR, FILL_MODE, INTERPOLATION, SEED, FILL_VALUE, DATA_FORMAT };

static const tw_param_def params[] = {
    [HEIGHT_FACTOR] = {"height_factor", TW_PARAM_FLOATS, "0.1", -1, 1e9, 0,
                       .help = "Zoom range of the height: f for (-f, f), or lower,upper; negative zooms in"},
    [WIDTH_FACTOR] = {"width_factor", TW_PARAM_FLOATS, "", -1, 1e9, 0, .nullable = true,
                      .help = "Zoom range of the width; none: the height's draw (aspect kept)"},
    [FILL_MODE] = {"fill_mode", TW_PARAM_CHOICE, "reflect", .choices = tw__fill_modes,
                   .help = "What points from outside the image read"},
    [INTERPOLATION] = {"interpolation", TW_PARAM_CHOICE, "bilinear", .choices = tw__interpolations,
                       .help = "How pixels are sampled"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the zooms"},
    [FILL_VALUE] = {"fill_value", TW_PARAM_FLOAT, "0", -1e9, 1e9, .help = "The value outside with fill_mode constant"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__channels_last,
                     .help = "Where the images keep their channels"},
};

typedef struct {
    tw_rng *rng;
    double h_lower, h_upper, w_lower, w_upper;
} zoom_state;

static int zoom_configure(tw_layer *self)
{
    zoom_state *st = self->state;
    if (tw__factor_range(tw_layer_param(self, HEIGHT_FACTOR), "height_factor", -1, 1e9, &st->h_lower, &st->h_upper))
        return -1;
    const tw_param_value *w = tw_layer_param(self, WIDTH_FACTOR);
    return w->is_null ? 0 : tw__factor_range(w, "width_factor", -1, 1e9, &st->w_lower, &st->w_upper);
}

static tw_tensor *zoom_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    if (!ctx->training)
        return tw_activation_apply("linear", x);
    zoom_state *st = self->state;
    bool same = tw_layer_param(self, WIDTH_FACTOR)->is_null;
    int64_t n = tw_tensor_dim(x, 0);
    size_t count = (size_t)(n ? n : 1);
    double h = (double)tw_tensor_dim(x, 1), w = (double)tw_tensor_dim(x, 2);
    double *zh = malloc(sizeof(double) * count), *zw = malloc(sizeof(double) * count);
    double *t = malloc(sizeof(double) * 8 * count);
    tw_rng *rng = tw__layer_rng(self, ctx, &st->rng);
    tw_tensor *y = NULL;
    if (!zh || !zw || !t) {
        TW_LAYER_ERROR(self, "out of memory for %lld transforms", (long long)n);
    } else if (!tw__draw_uniform(rng, n, 1 + st->h_lower, 1 + st->h_upper, zh) &&
               (same || !tw__draw_uniform(rng, n, 1 + st->w_lower, 1 + st->w_upper, zw))) {
        for (int64_t i = 0; i < n; i++) {
            double sx = same ? zh[i] : zw[i], sy = zh[i];
            double *m = t + 8 * i;
            m[0] = sx;
            m[1] = 0;
            m[2] = (w - 1) / 2 * (1 - sx);
            m[3] = 0;
            m[4] = sy;
            m[5] = (h - 1) / 2 * (1 - sy);
            m[6] = m[7] = 0;
        }
        y = tw__apply_transforms(x, t, tw__param_choice(self, INTERPOLATION), tw__param_choice(self, FILL_MODE),
                                 tw__param_float(self, FILL_VALUE));
    }
    free(zh);
    free(zw);
    free(t);
    return y;
}

static void zoom_finalize(tw_layer *self)
{
    zoom_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_RandomZoom = {
    .name = "RandomZoom",
    .group = "Regularization",
    .summary = "Zoom images in or out at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(zoom_state),
    .configure = zoom_configure,
    .infer = tw__image_augment_infer,
    .call = zoom_call,
    .finalize = zoom_finalize,
};
