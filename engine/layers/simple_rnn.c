/* SimpleRNN: h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel +
 * bias), Keras' fully connected recurrence. */
#include "rnn_common.h"

static const tw_param_def params[] = {
    RNN_PARAM_UNITS,
    RNN_PARAM_ACTIVATION,
    RNN_PARAM_USE_BIAS,
    RNN_PARAM_KERNEL_INIT,
    RNN_PARAM_RECURRENT_INIT,
    RNN_PARAM_BIAS_INIT,
    RNN_PARAM_KERNEL_REG,
    RNN_PARAM_RECURRENT_REG,
    RNN_PARAM_BIAS_REG,
    RNN_PARAM_DROPOUT,
    RNN_PARAM_RECURRENT_DROPOUT,
    RNN_PARAM_RETURN_SEQUENCES,
    RNN_PARAM_RETURN_STATE,
    RNN_PARAM_GO_BACKWARDS,
    RNN_PARAM_STATEFUL,
    RNN_PARAM_UNROLL,
    RNN_PARAM_TIME_MAJOR,
};

static int simple_rnn_infer(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                            int *noutputs, tw_weight_spec *w, int *nw)
{
    return rnn_infer(self, 1, 1, 1, inputs, ninputs, outputs, noutputs, w, nw);
}

static tw_tensor *simple_rnn_step(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states)
{
    tw_tensor *recurrent = tw_matmul(rnn_recurrent_input(loop, states[0]), loop->self->weights[1]);
    states[0] = tw_activation_apply(loop->cfg->activation, tw_add(xw, recurrent));
    return states[0];
}

static int simple_rnn_call(tw_layer *self, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                           const tw_call_context *ctx)
{
    rnn_loop loop = {0};
    return rnn_run(self, inputs, ninputs, ctx, self->nweights > 2 ? self->weights[2] : NULL, &loop, 1,
                   simple_rnn_step, outputs);
}

const tw_layer_class tw_layer_class_SimpleRNN = {
    .name = "SimpleRNN",
    .group = "Recurrent",
    .summary = "Fully connected recurrence: h = activation(x · kernel + h · recurrent_kernel + bias)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(rnn_config),
    .configure = rnn_configure,
    .infer_n = simple_rnn_infer,
    .call_n = simple_rnn_call,
    .finalize = rnn_finalize,
};
