/* RandomRotation: in training, rotate each image about its centre by an
 * angle drawn per image from factor * 2π (factor f: (-f, f); a pair:
 * (lower, upper); positive is counter-clockwise), filling what comes from
 * outside by fill_mode; in inference, the identity. The matrix is Keras'
 * get_rotation_matrix; sampling is tw_image_transform, which passes
 * gradients to the images. */
#include <math.h>
#include <stdlib.h>

#include "image_augment.h"

enum { FACTOR, FILL_MODE, INTERPOLATION, SEED, FILL_VALUE, DATA_FORMAT };

static const tw_param_def params[] = {
    [FACTOR] = {"factor", TW_PARAM_FLOATS, "0.1", -1e9, 1e9, 0,
                .help = "Rotation range as a fraction of a full turn: f for (-f, f), or lower,upper"},
    [FILL_MODE] = TW__FILL_MODE_PARAM,
    [INTERPOLATION] = TW__INTERPOLATION_PARAM,
    [SEED] = TW__SEED_PARAM("angles"),
    [FILL_VALUE] = TW__FILL_VALUE_PARAM,
    [DATA_FORMAT] = TW__DATA_FORMAT_PARAM,
};

typedef struct {
    tw_rng *rng;
    double lower, upper;
} rotation_state;

static int rotation_configure(tw_layer *self)
{
    rotation_state *st = self->state;
    return tw__factor_range(tw_layer_param(self, FACTOR), "factor", -1e9, 1e9, &st->lower, &st->upper);
}

static tw_tensor *rotation_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    rotation_state *st = self->state;
    if (!ctx->training || (st->lower == 0 && st->upper == 0))
        return tw_activation_apply("linear", x);
    int64_t n = tw_tensor_dim(x, 0);
    double h = (double)tw_tensor_dim(x, 1), w = (double)tw_tensor_dim(x, 2);
    double *angles = malloc(sizeof(double) * (size_t)(n ? n : 1)), *t = malloc(sizeof(double) * 8 * (size_t)(n ? n : 1));
    tw_tensor *y = NULL;
    if (angles && t &&
        !tw__draw_uniform(tw__layer_rng(self, ctx, &st->rng), n, st->lower * 2 * M_PI, st->upper * 2 * M_PI, angles)) {
        for (int64_t i = 0; i < n; i++) {
            double c = cos(angles[i]), s = sin(angles[i]);
            double *m = t + 8 * i;
            m[0] = c;
            m[1] = -s;
            m[2] = ((w - 1) - (c * (w - 1) - s * (h - 1))) / 2;
            m[3] = s;
            m[4] = c;
            m[5] = ((h - 1) - (s * (w - 1) + c * (h - 1))) / 2;
            m[6] = m[7] = 0;
        }
        y = tw__apply_transforms(x, t, tw__param_choice(self, INTERPOLATION), tw__param_choice(self, FILL_MODE),
                                 tw__param_float(self, FILL_VALUE));
    } else if (!angles || !t) {
        TW_LAYER_ERROR(self, "out of memory for %lld transforms", (long long)n);
    }
    free(angles);
    free(t);
    return y;
}

static void rotation_finalize(tw_layer *self)
{
    rotation_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_RandomRotation = {
    .name = "RandomRotation",
    .group = "Regularization",
    .summary = "Rotate images by a random angle while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(rotation_state),
    .configure = rotation_configure,
    .infer = tw__image_augment_infer,
    .call = rotation_call,
    .finalize = rotation_finalize,
};
