/* Dense: activation(x @ kernel + bias), applied to the last axis (a 3-D
 * input (batch, steps, features) gets the same kernel at every step, as in
 * Keras). */
#include "layer_internal.h"

enum { UNITS, ACTIVATION, USE_BIAS, KERNEL_INIT, BIAS_INIT, KERNEL_REG, BIAS_REG };

static const tw_param_def params[] = {
    [UNITS] = {"units", TW_PARAM_INT, "32", 1, 1e9, .help = "Number of output features"},
    [ACTIVATION] = {"activation", TW_PARAM_CHOICE, "linear", .choices = tw_activation_names,
                    .help = "Applied to the output"},
    [USE_BIAS] = {"use_bias", TW_PARAM_BOOL, "true", .help = "Add a learned bias"},
    [KERNEL_INIT] = {"kernel_initializer", TW_PARAM_CHOICE, "glorot_uniform", .choices = tw_initializer_names,
                     .help = "How the kernel starts"},
    [BIAS_INIT] = {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How the bias starts"},
    [KERNEL_REG] = {"kernel_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the kernel"},
    [BIAS_REG] = {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the bias"},
};

static int dense_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    if (input->ndim < 2 || input->dims[input->ndim - 1] < 1)
        return TW_LAYER_ERROR(self, "expected input of rank 2 or more with a known last dimension, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    int64_t in = input->dims[input->ndim - 1], units = tw__param_int(self, UNITS);
    *output = *input;
    output->dims[output->ndim - 1] = units;
    w[0] = (tw_weight_spec){"kernel", {2, {in, units}}, tw__param_choice(self, KERNEL_INIT), true, "kernel_regularizer"};
    *nw = 1;
    if (tw__param_bool(self, USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {units}}, tw__param_choice(self, BIAS_INIT), true, "bias_regularizer"};
    return 0;
}

static tw_tensor *dense_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw_tensor *y;
    if (tw_tensor_ndim(x) == 2) {
        y = tw_matmul(x, self->weights[0]);
    } else { /* fold the leading axes into the batch, as Keras' tensordot does */
        int nd = tw_tensor_ndim(x);
        int64_t shape[TW_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            shape[i] = tw_tensor_dim(x, i);
        shape[nd - 1] = tw_tensor_dim(self->weights[0], 1);
        y = tw_matmul(tw_reshape(tw_contiguous(x), 2, (int64_t[]){-1, tw_tensor_dim(x, -1)}), self->weights[0]);
        y = tw_reshape(y, nd, shape);
    }
    if (self->nweights > 1)
        y = tw_add(y, self->weights[1]);
    return tw_activation_apply(tw__param_choice(self, ACTIVATION), y);
}

const tw_layer_class tw_layer_class_Dense = {
    .name = "Dense",
    .group = "Core",
    .summary = "Fully connected: activation(x · kernel + bias)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = dense_infer,
    .call = dense_call,
};
