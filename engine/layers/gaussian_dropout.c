/* GaussianDropout: in training, multiply by normal noise of mean 1 and
 * standard deviation sqrt(rate / (1 - rate)) (the variance of inverted
 * dropout at that rate, without zeros); in inference, the identity. */
#include <math.h>

#include "layer_common.h"

enum { RATE, SEED };

static const tw_param_def params[] = {
    [RATE] = {"rate", TW_PARAM_FLOAT, "0.5", 0, 1, .help = "Drop probability it imitates, below 1"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the noise"},
};

typedef struct {
    tw_rng *rng;
} noise_state;

static int gaussian_dropout_configure(tw_layer *self)
{
    if (tw__param_float(self, RATE) >= 1)
        return tw_error_set("rate: expected a number from 0 up to (not including) 1, got %g",
                            tw__param_float(self, RATE));
    return 0;
}

static tw_tensor *gaussian_dropout_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double rate = tw__param_float(self, RATE);
    if (!ctx->training || rate == 0)
        return tw_activation_apply("linear", x);
    if (!tw_dtype_is_float(tw_tensor_dtype(x))) {
        TW_LAYER_ERROR(self, "expected a float input, got %s", tw_dtype_name(tw_tensor_dtype(x)));
        return NULL;
    }
    noise_state *st = self->state;
    tw_tensor *noise = tw_random_normal(tw__layer_rng(self, ctx, &st->rng), tw_tensor_dtype(x), tw_tensor_ndim(x),
                                        tw_tensor_shape(x), 1, sqrt(rate / (1 - rate)));
    return tw_mul(x, noise);
}

static void gaussian_dropout_finalize(tw_layer *self)
{
    noise_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_GaussianDropout = {
    .name = "GaussianDropout",
    .group = "Regularization",
    .summary = "Multiply by normal noise of mean 1 while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(noise_state),
    .configure = gaussian_dropout_configure,
    .infer = tw__same_shape_infer,
    .call = gaussian_dropout_call,
    .finalize = gaussian_dropout_finalize,
};
