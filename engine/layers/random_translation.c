/* RandomTranslation: in training, shift each image by a fraction of its
 * height drawn from height_factor and of its width from width_factor (f:
 * (-f, f); a pair: (lower, upper); positive moves the content down and
 * right), filling what comes from outside by fill_mode; in inference, the
 * identity. The matrix is Keras' get_translation_matrix;
 * tw_image_transform passes gradients to the images. */
#include <stdlib.h>

#include "image_augment.h"

enum { HEIGHT_FACTOR, WIDTH_FACTOR, FILL_MODE, INTERPOLATION, SEED, FILL_VALUE, DATA_FORMAT };

static const tw_param_def params[] = {
    [HEIGHT_FACTOR] = {"height_factor", TW_PARAM_FLOATS, "0.1", -1, 1, 0,
                       .help = "Vertical shift range as a fraction of the height: f for (-f, f), or lower,upper"},
    [WIDTH_FACTOR] = {"width_factor", TW_PARAM_FLOATS, "0.1", -1, 1, 0,
                      .help = "Horizontal shift range as a fraction of the width"},
    [FILL_MODE] = {"fill_mode", TW_PARAM_CHOICE, "reflect", .choices = tw__fill_modes,
                   .help = "What points from outside the image read"},
    [INTERPOLATION] = {"interpolation", TW_PARAM_CHOICE, "bilinear", .choices = tw__interpolations,
                       .help = "How pixels are sampled"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the shifts"},
    [FILL_VALUE] = {"fill_value", TW_PARAM_FLOAT, "0", -1e9, 1e9, .help = "The value outside with fill_mode constant"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__channels_last,
                     .help = "Where the images keep their channels"},
};

typedef struct {
    tw_rng *rng;
    double h_lower, h_upper, w_lower, w_upper;
} translation_state;

static int translation_configure(tw_layer *self)
{
    translation_state *st = self->state;
    if (tw__factor_range(tw_layer_param(self, HEIGHT_FACTOR), "height_factor", -1, 1, &st->h_lower, &st->h_upper))
        return -1;
    return tw__factor_range(tw_layer_param(self, WIDTH_FACTOR), "width_factor", -1, 1, &st->w_lower, &st->w_upper);
}

static tw_tensor *translation_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    if (!ctx->training)
        return tw_activation_apply("linear", x);
    translation_state *st = self->state;
    int64_t n = tw_tensor_dim(x, 0);
    size_t count = (size_t)(n ? n : 1);
    double h = (double)tw_tensor_dim(x, 1), w = (double)tw_tensor_dim(x, 2);
    double *dy = malloc(sizeof(double) * count), *dx = malloc(sizeof(double) * count);
    double *t = malloc(sizeof(double) * 8 * count);
    tw_rng *rng = tw__layer_rng(self, ctx, &st->rng);
    tw_tensor *y = NULL;
    if (!dy || !dx || !t) {
        TW_LAYER_ERROR(self, "out of memory for %lld transforms", (long long)n);
    } else if (!tw__draw_uniform(rng, n, st->h_lower, st->h_upper, dy) &&
               !tw__draw_uniform(rng, n, st->w_lower, st->w_upper, dx)) {
        for (int64_t i = 0; i < n; i++) {
            double *m = t + 8 * i;
            m[0] = 1;
            m[1] = 0;
            m[2] = -dx[i] * w;
            m[3] = 0;
            m[4] = 1;
            m[5] = -dy[i] * h;
            m[6] = m[7] = 0;
        }
        y = tw__apply_transforms(x, t, tw__param_choice(self, INTERPOLATION), tw__param_choice(self, FILL_MODE),
                                 tw__param_float(self, FILL_VALUE));
    }
    free(dy);
    free(dx);
    free(t);
    return y;
}

static void translation_finalize(tw_layer *self)
{
    translation_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_RandomTranslation = {
    .name = "RandomTranslation",
    .group = "Regularization",
    .summary = "Shift images at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(translation_state),
    .configure = translation_configure,
    .infer = tw__image_augment_infer,
    .call = translation_call,
    .finalize = translation_finalize,
};
