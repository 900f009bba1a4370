/* RandomContrast: in training, scale each image's deviation from its own
 * per-channel mean (over height and width) by a factor drawn per image from
 * [1 - lower, 1 + upper] (factor f: lower = upper = f), then clip to
 * value_range, as Keras 3 does (tf.keras 2 drew one factor per batch and
 * clipped to [0, 255]); in inference, the identity. */
#include "image_augment.h"

enum { FACTOR, SEED, VALUE_RANGE, DATA_FORMAT };

static const tw_param_def params[] = {
    [FACTOR] = {"factor", TW_PARAM_FLOATS, "0.1", 0, 1e9, 0,
                .help = "Contrast range: f for factors in [1 - f, 1 + f], or lower,upper"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the factors"},
    [VALUE_RANGE] = {"value_range", TW_PARAM_FLOATS, "0,255", -1e9, 1e9, 2,
                     .help = "The range pixel values are clipped to"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__channels_last,
                     .help = "Where the images keep their channels"},
};

typedef struct {
    tw_rng *rng;
    double lower, upper;
} contrast_state;

static int contrast_configure(tw_layer *self)
{
    contrast_state *st = self->state;
    const tw_param_value *f = tw_layer_param(self, FACTOR), *range = tw_layer_param(self, VALUE_RANGE);
    if (f->n == 1) {
        st->lower = st->upper = f->floats[0];
    } else if (f->n == 2) {
        st->lower = f->floats[0];
        st->upper = f->floats[1];
    } else {
        return tw_error_set("factor: expected a number or a (lower, upper) pair, got %d numbers", f->n);
    }
    if (st->lower > 1)
        return tw_error_set("factor: the lower bound must be at most 1 (factors stay non-negative), got %g",
                            st->lower);
    if (range->floats[0] > range->floats[1])
        return tw_error_set("value_range: the low end %g is above the high end %g", range->floats[0],
                            range->floats[1]);
    return 0;
}

static tw_tensor *contrast_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    if (!ctx->training)
        return tw_activation_apply("linear", x);
    contrast_state *st = self->state;
    const tw_param_value *range = tw_layer_param(self, VALUE_RANGE);
    int64_t shape[4] = {tw_tensor_dim(x, 0), 1, 1, 1};
    tw_tensor *factor = tw__uniform(tw__layer_rng(self, ctx, &st->rng), tw_tensor_dtype(x), 4, shape, 1 - st->lower,
                                    1 + st->upper);
    tw_tensor *mean = tw_mean(x, 2, (const int[]){1, 2}, true);
    tw_tensor *y = tw_add(tw_mul(tw_sub(x, mean), factor), mean);
    return tw_clip(y, range->floats[0], range->floats[1]);
}

static void contrast_finalize(tw_layer *self)
{
    contrast_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_RandomContrast = {
    .name = "RandomContrast",
    .group = "Regularization",
    .summary = "Change image contrast at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(contrast_state),
    .configure = contrast_configure,
    .infer = tw__image_augment_infer,
    .call = contrast_call,
    .finalize = contrast_finalize,
};
