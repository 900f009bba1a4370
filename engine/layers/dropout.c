/* Dropout: in training, zero each value with probability rate and scale the
 * rest by 1 / (1 - rate) (inverted dropout, tw_dropout); in inference, the
 * identity. Masks come from the call's generator (a model's, seeded by fit);
 * a layer called on its own draws from a generator of its own, seeded from
 * its name, so its masks are still reproducible from run to run. */
#include <stdio.h>

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
    tw_rng *rng; /* the layer's own generator, made on first need */
} dropout_state;

static int dropout_configure(tw_layer *self)
{
    if (tw__param_float(self, RATE) >= 1)
        return tw_error_set("rate: expected a number from 0 up to (not including) 1, got %g",
                            tw__param_float(self, RATE));
    return 0;
}

static int dropout_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    *output = *input;
    *nw = 0;
    return 0;
}

static tw_tensor *dropout_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double rate = tw__param_float(self, RATE);
    if (!ctx->training || rate == 0)
        return tw_activation_apply("linear", x);
    dropout_state *st = self->state;
    tw_tensor *y = tw_dropout(x, rate, tw__layer_rng(self, ctx, &st->rng));
    if (!y) { /* name the layer: "Dropout 'dropout': dropout: dtype int32 is not a float type" */
        char why[512];
        snprintf(why, sizeof why, "%s", tw_last_error());
        TW_LAYER_ERROR(self, "%s", why);
    }
    return y;
}

static void dropout_finalize(tw_layer *self)
{
    dropout_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_Dropout = {
    .name = "Dropout",
    .group = "Regularization",
    .summary = "Randomly zero a fraction of the values while training",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(dropout_state),
    .configure = dropout_configure,
    .infer = dropout_infer,
    .call = dropout_call,
    .finalize = dropout_finalize,
};
