/* Keras' activation functions by name, built from engine ops. */
#include <string.h>

#include "layer_internal.h"

const char *const tw_activation_names[] = {
    "linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "leaky_relu", "elu", "selu",
    "swish", "silu", "softplus", "hard_sigmoid", "exponential", NULL,
};

tw_tensor *tw_activation_apply(const char *name, tw_tensor *x)
{
    if (!x)
        return NULL;
    if (!name || !strcmp(name, "linear"))
        return tw__track(tw_tensor_ref(x));
    if (!strcmp(name, "relu"))
        return tw_relu(x);
    if (!strcmp(name, "sigmoid"))
        return tw_sigmoid(x);
    if (!strcmp(name, "tanh"))
        return tw_tanh(x);
    if (!strcmp(name, "softmax"))
        return tw_softmax(x, -1);
    if (!strcmp(name, "gelu"))
        return tw_gelu(x);
    if (!strcmp(name, "leaky_relu"))
        return tw_leaky_relu(x, 0.2); /* tf.keras.activations.leaky_relu's default */
    if (!strcmp(name, "elu"))
        return tw_elu(x, 1.0);
    if (!strcmp(name, "selu"))
        return tw_mul_scalar(tw_elu(x, 1.6732632423543772), 1.0507009873554805);
    if (!strcmp(name, "swish") || !strcmp(name, "silu"))
        return tw_swish(x);
    if (!strcmp(name, "softplus"))
        return tw_softplus(x);
    if (!strcmp(name, "hard_sigmoid")) /* Keras 2: clip(0.2 x + 0.5, 0, 1) */
        return tw_clip(tw_add_scalar(tw_mul_scalar(x, 0.2), 0.5), 0, 1);
    if (!strcmp(name, "exponential"))
        return tw_exp(x);
    tw_error_set("unknown activation \"%s\"", name);
    return NULL;
}
