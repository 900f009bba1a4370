/* AlphaDropout: dropout for SELU networks. In training, each value is kept
 * with probability 1 - rate or set to SELU's negative saturation
 * alpha' = -scale * alpha, then the result is shifted and scaled (a, b
 * below) so the mean and variance stay those of the input, as Keras
 * computes them; in inference, the identity. */
#include <math.h>

#include "layer_common.h"

enum { RATE, NOISE_SHAPE, SEED };

static const tw_param_def params[] = {
    [RATE] = {"rate", TW_PARAM_FLOAT, "0.5", 0, 1, .help = "Fraction of the values to drop, below 1"},
    [NOISE_SHAPE] = {"noise_shape", TW_PARAM_INTS, "", -1, 1e9, 0, .nullable = true,
                     .help = "Accepted from Keras files and ignored: every value gets its own draw"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the masks"},
};

typedef struct {
    tw_rng *rng;
} noise_state;

static int alpha_dropout_configure(tw_layer *self)
{
    if (tw__param_float(self, RATE) >= 1)
        return tw_error_set("rate: expected a number from 0 up to (not including) 1, got %g",
                            tw__param_float(self, RATE));
    return 0;
}

static tw_tensor *alpha_dropout_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double rate = tw__param_float(self, RATE);
    if (!ctx->training || rate == 0)
        return tw_activation_apply("linear", x);
    if (!tw_dtype_is_float(tw_tensor_dtype(x))) {
        TW_LAYER_ERROR(self, "expected a float input, got %s", tw_dtype_name(tw_tensor_dtype(x)));
        return NULL;
    }
    const double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
    const double alpha_p = -alpha * scale;
    double a = pow((1 - rate) * (1 + rate * alpha_p * alpha_p), -0.5), b = -a * alpha_p * rate;
    noise_state *st = self->state;
    tw_tensor *u = tw_random_uniform(tw__layer_rng(self, ctx, &st->rng), tw_tensor_dtype(x), tw_tensor_ndim(x),
                                     tw_tensor_shape(x), 0, 1);
    tw_tensor *keep = tw_cast(tw_greater_equal(u, tw_scalar(rate)), tw_tensor_dtype(x));
    /* x * keep + alpha' * (1 - keep), then a * that + b */
    tw_tensor *dropped = tw_add(tw_mul(x, keep), tw_mul_scalar(tw_rsub_scalar(1, keep), alpha_p));
    return tw_add_scalar(tw_mul_scalar(dropped, a), b);
}

static void alpha_dropout_finalize(tw_layer *self)
{
    noise_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_AlphaDropout = {
    .name = "AlphaDropout",
    .group = "Regularization",
    .summary = "Dropout that keeps SELU's mean and variance",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(noise_state),
    .configure = alpha_dropout_configure,
    .infer = tw__same_shape_infer,
    .call = alpha_dropout_call,
    .finalize = alpha_dropout_finalize,
};
