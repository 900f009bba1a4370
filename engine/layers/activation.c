/* Activation: applies a named activation function (Keras' Activation layer). */
#include "layer_internal.h"

enum { ACTIVATION };

static const tw_param_def params[] = {
    [ACTIVATION] = {"activation", TW_PARAM_CHOICE, "relu", .choices = tw_activation_names,
                    .help = "The function applied to every value"},
};

static int activation_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                            int *nw)
{
    *output = *input;
    *nw = 0;
    return 0;
}

static tw_tensor *activation_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), x);
}

const tw_layer_class tw_layer_class_Activation = {
    .name = "Activation",
    .group = "Activation",
    .summary = "Apply an activation function (relu, softmax, tanh, ...)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = activation_infer,
    .call = activation_call,
};
