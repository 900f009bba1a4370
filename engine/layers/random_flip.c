/* RandomFlip: in training, flip each image left-right and/or upside down,
 * each with probability 1/2 drawn per image; in inference, the identity.
 * Inputs not in the layer's dtype (uint8 images) are cast first, as Keras
 * does. Gradients pass through (a flip is a permutation). */
#include "image_augment.h"

enum { MODE, SEED, DATA_FORMAT };

static const char *const modes[] = {"horizontal_and_vertical", "horizontal", "vertical", NULL};

static const tw_param_def params[] = {
    [MODE] = {"mode", TW_PARAM_CHOICE, "horizontal_and_vertical", .choices = modes,
              .help = "Which flips to draw: left-right, upside down, or both"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the flips"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__channels_last,
                     .help = "Where the images keep their channels"},
};

typedef struct {
    tw_rng *rng;
} flip_state;

/* x with the images whose draw is below 1/2 reversed along axis. */
static tw_tensor *flip_some(tw_tensor *x, int axis, tw_rng *rng)
{
    int64_t n = tw_tensor_dim(x, 0), mask_shape[4] = {n, 1, 1, 1};
    tw_tensor *u = tw_random_uniform(rng, tw_tensor_dtype(x), 4, mask_shape, 0, 1);
    return tw_where(tw_less(u, tw_scalar(0.5)), tw_slice(x, axis, TW_END, TW_END, -1), x);
}

static tw_tensor *random_flip_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    if (!ctx->training)
        return tw_activation_apply("linear", x);
    flip_state *st = self->state;
    tw_rng *rng = tw__layer_rng(self, ctx, &st->rng);
    const char *mode = tw__param_choice(self, MODE);
    if (mode != modes[2])
        x = flip_some(x, 2, rng);
    if (mode != modes[1])
        x = flip_some(x, 1, rng);
    return x;
}

static void random_flip_finalize(tw_layer *self)
{
    flip_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_RandomFlip = {
    .name = "RandomFlip",
    .group = "Regularization",
    .summary = "Flip images at random while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(flip_state),
    .infer = tw__image_augment_infer,
    .call = random_flip_call,
    .finalize = random_flip_finalize,
};
