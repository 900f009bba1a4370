/* GaussianNoise: in training, add zero-mean normal noise of standard
 * deviation stddev (a regularizer against overfitting, also a simple data
 * augmentation); in inference, the identity. Noise comes from the call's
 * generator (see tw__layer_rng), so a fit repeats exactly. */
#include "layer_common.h"

enum { STDDEV, SEED };

static const tw_param_def params[] = {
    [STDDEV] = {"stddev", TW_PARAM_FLOAT, "0.1", 0, 1e9, .help = "Standard deviation of the noise"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the noise"},
};

typedef struct {
    tw_rng *rng;
} noise_state;

static tw_tensor *gaussian_noise_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double stddev = tw__param_float(self, STDDEV);
    if (!ctx->training || stddev == 0)
        return tw_activation_apply("linear", x);
    if (!tw_dtype_is_float(tw_tensor_dtype(x))) {
        TW_LAYER_ERROR(self, "expected a float input, got %s", tw_dtype_name(tw_tensor_dtype(x)));
        return NULL;
    }
    noise_state *st = self->state;
    tw_tensor *noise = tw_random_normal(tw__layer_rng(self, ctx, &st->rng), tw_tensor_dtype(x), tw_tensor_ndim(x),
                                        tw_tensor_shape(x), 0, stddev);
    return tw_add(x, noise);
}

static void gaussian_noise_finalize(tw_layer *self)
{
    noise_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_GaussianNoise = {
    .name = "GaussianNoise",
    .group = "Regularization",
    .summary = "Add normal noise while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(noise_state),
    .infer = tw__same_shape_infer,
    .call = gaussian_noise_call,
    .finalize = gaussian_noise_finalize,
};
