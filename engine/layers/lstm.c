/* LSTM (Hochreiter & Schmidhuber 1997) in Keras' layout: one kernel, one
 * recurrent kernel and one bias for the four gates in the order input,
 * forget, cell, output:
 *   i, f, o = recurrent_activation(...), g = activation(...)
 *   c_t = f * c_{t-1} + i * g,  h_t = o * activation(c_t) */
#include "rnn_common.h"

static const tw_param_def params[] = {
    RNN_PARAM_UNITS,
    RNN_PARAM_ACTIVATION,
    RNN_PARAM_RECURRENT_ACTIVATION,
    RNN_PARAM_USE_BIAS,
    RNN_PARAM_KERNEL_INIT,
    RNN_PARAM_RECURRENT_INIT,
    RNN_PARAM_BIAS_INIT,
    {"unit_forget_bias", TW_PARAM_BOOL, "true",
     .help = "Start the forget gate's bias at 1 (Jozefowicz et al. 2015); the other biases use bias_initializer"},
    RNN_PARAM_KERNEL_REG,
    RNN_PARAM_RECURRENT_REG,
    RNN_PARAM_BIAS_REG,
    RNN_PARAM_DROPOUT,
    RNN_PARAM_RECURRENT_DROPOUT,
    RNN_PARAM_IMPLEMENTATION,
    RNN_PARAM_RETURN_SEQUENCES,
    RNN_PARAM_RETURN_STATE,
    RNN_PARAM_GO_BACKWARDS,
    RNN_PARAM_STATEFUL,
    RNN_PARAM_UNROLL,
    RNN_PARAM_TIME_MAJOR,
};

static int lstm_infer(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                      tw_weight_spec *w, int *nw)
{
    return rnn_infer(self, 4, 1, 2, inputs, ninputs, outputs, noutputs, w, nw);
}

/* unit_forget_bias: the bias's forget slice [units, 2 units) becomes one,
 * the rest keeps bias_initializer's values (Keras' initializer does the
 * same). Runs before a restored bias would replace it. */
static int lstm_init_weight(tw_layer *self, int index)
{
    const rnn_config *cfg = self->state;
    if (index != 2 || !tw_layer_get(self, "unit_forget_bias")->number)
        return 0;
    tw_tensor *bias = self->weights[2], *parts[3];
    int64_t u = cfg->units;
    tw_tape_pause();
    tw_scope_begin();
    int rc = tw_split_sizes(bias, 3, (int64_t[]){u, u, 2 * u}, 0, parts);
    if (!rc)
        rc = tw_assign(bias, tw_concat(TW_TENSORS(parts[0], tw_ones_like(parts[1]), parts[2]), 0));
    tw_scope_end();
    tw_tape_resume();
    return rc;
}

static tw_tensor *lstm_step(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states)
{
    const rnn_config *cfg = loop->cfg;
    tw_tensor *z = tw_add(xw, tw_matmul(rnn_recurrent_input(loop, states[0]), loop->self->weights[1]));
    tw_tensor *gate[4];
    if (tw_split(z, 4, 1, gate))
        return NULL;
    tw_tensor *i = tw_activation_apply(cfg->recurrent_activation, gate[0]);
    tw_tensor *f = tw_activation_apply(cfg->recurrent_activation, gate[1]);
    tw_tensor *g = tw_activation_apply(cfg->activation, gate[2]);
    tw_tensor *o = tw_activation_apply(cfg->recurrent_activation, gate[3]);
    states[1] = tw_add(tw_mul(f, states[1]), tw_mul(i, g));
    states[0] = tw_mul(o, tw_activation_apply(cfg->activation, states[1]));
    return states[0];
}

static int lstm_call(tw_layer *self, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                     const tw_call_context *ctx)
{
    rnn_loop loop = {0};
    return rnn_run(self, inputs, ninputs, ctx, self->nweights > 2 ? self->weights[2] : NULL, &loop, 2, lstm_step,
                   outputs);
}

const tw_layer_class tw_layer_class_LSTM = {
    .name = "LSTM",
    .group = "Recurrent",
    .summary = "Long short-term memory: gated cell state for long-range dependencies",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(rnn_config),
    .configure = rnn_configure,
    .infer_n = lstm_infer,
    .call_n = lstm_call,
    .finalize = rnn_finalize,
    .init_weight = lstm_init_weight,
};
