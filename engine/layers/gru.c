/* GRU (Cho et al. 2014) in Keras' layout: one kernel and one recurrent
 * kernel for the gates in the order update (z), reset (r), candidate (h):
 *   z, r = recurrent_activation(x W + h R + b)
 *   reset_after=false: hh = activation(x W_h + (r * h) R_h + b_h)
 *   reset_after=true:  hh = activation(x W_h + b_h + r * (h R_h + rb_h))
 *   h_t = z * h_{t-1} + (1 - z) * hh
 * reset_after=true (Keras 2's default, CuDNN's form) has a bias of shape
 * (2, 3 units): row 0 for the input projection, row 1 for the recurrent. */
#include "rnn_common.h"

static const tw_param_def params[] = {
    RNN_PARAM_UNITS,
    RNN_PARAM_ACTIVATION,
    RNN_PARAM_RECURRENT_ACTIVATION,
    RNN_PARAM_USE_BIAS,
    RNN_PARAM_KERNEL_INIT,
    RNN_PARAM_RECURRENT_INIT,
    RNN_PARAM_BIAS_INIT,
    RNN_PARAM_KERNEL_REG,
    RNN_PARAM_RECURRENT_REG,
    RNN_PARAM_BIAS_REG,
    RNN_PARAM_DROPOUT,
    RNN_PARAM_RECURRENT_DROPOUT,
    RNN_PARAM_IMPLEMENTATION,
    {"reset_after", TW_PARAM_BOOL, "true",
     .help = "Apply the reset gate after the recurrent matmul, with a second bias (CuDNN's form); false is the "
             "original GRU"},
    RNN_PARAM_RETURN_SEQUENCES,
    RNN_PARAM_RETURN_STATE,
    RNN_PARAM_GO_BACKWARDS,
    RNN_PARAM_STATEFUL,
    RNN_PARAM_UNROLL,
    RNN_PARAM_TIME_MAJOR,
};

/* What the steps read from loop->extra. */
enum { RECURRENT_ZR, RECURRENT_H, RECURRENT_BIAS };

static bool reset_after(const tw_layer *self)
{
    return tw_layer_get(self, "reset_after")->number != 0;
}

static int gru_infer(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs, int *noutputs,
                     tw_weight_spec *w, int *nw)
{
    return rnn_infer(self, 3, reset_after(self) ? 2 : 1, 1, inputs, ninputs, outputs, noutputs, w, nw);
}

/* The update and reset gates from the input and recurrent projections. */
static int gates(const rnn_loop *loop, tw_tensor *const *x, tw_tensor *const *rec, tw_tensor **z, tw_tensor **r)
{
    *z = tw_activation_apply(loop->cfg->recurrent_activation, tw_add(x[0], rec[0]));
    *r = tw_activation_apply(loop->cfg->recurrent_activation, tw_add(x[1], rec[1]));
    return *z && *r ? 0 : -1;
}

static tw_tensor *mix(const rnn_loop *loop, tw_tensor *z, tw_tensor *h, tw_tensor *candidate)
{
    tw_tensor *hh = tw_activation_apply(loop->cfg->activation, candidate);
    return tw_add(tw_mul(z, h), tw_mul(tw_rsub_scalar(1, z), hh));
}

static tw_tensor *gru_step_reset_after(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states)
{
    tw_tensor *inner = tw_matmul(rnn_recurrent_input(loop, states[0]), loop->self->weights[1]);
    if (loop->extra[RECURRENT_BIAS])
        inner = tw_add(inner, loop->extra[RECURRENT_BIAS]);
    tw_tensor *x[3], *rec[3], *z, *r;
    if (tw_split(xw, 3, 1, x) || tw_split(inner, 3, 1, rec) || gates(loop, x, rec, &z, &r))
        return NULL;
    return states[0] = mix(loop, z, states[0], tw_add(x[2], tw_mul(r, rec[2])));
}

static tw_tensor *gru_step_reset_before(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states)
{
    tw_tensor *h = rnn_recurrent_input(loop, states[0]);
    tw_tensor *inner = tw_matmul(h, loop->extra[RECURRENT_ZR]);
    tw_tensor *x[3], *rec[2], *z, *r;
    if (tw_split(xw, 3, 1, x) || tw_split(inner, 2, 1, rec) || gates(loop, x, rec, &z, &r))
        return NULL;
    tw_tensor *candidate = tw_add(x[2], tw_matmul(tw_mul(r, h), loop->extra[RECURRENT_H]));
    return states[0] = mix(loop, z, states[0], candidate);
}

static int gru_call(tw_layer *self, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                    const tw_call_context *ctx)
{
    rnn_loop loop = {0};
    tw_tensor *bias = self->nweights > 2 ? self->weights[2] : NULL, *input_bias = bias;
    int64_t u = ((const rnn_config *)self->state)->units;
    if (reset_after(self)) {
        tw_tensor *rows[2];
        if (bias && tw_split(bias, 2, 0, rows))
            return -1;
        input_bias = bias ? tw_squeeze(rows[0], TW_AXES(0)) : NULL;
        loop.extra[RECURRENT_BIAS] = bias ? tw_squeeze(rows[1], TW_AXES(0)) : NULL;
        return rnn_run(self, inputs, ninputs, ctx, input_bias, &loop, 1, gru_step_reset_after, outputs);
    }
    /* The candidate's part of the recurrent kernel multiplies r * h, so it
     * is split off once here. */
    if (tw_split_sizes(self->weights[1], 2, (int64_t[]){2 * u, u}, 1, &loop.extra[RECURRENT_ZR]))
        return -1;
    return rnn_run(self, inputs, ninputs, ctx, input_bias, &loop, 1, gru_step_reset_before, outputs);
}

const tw_layer_class tw_layer_class_GRU = {
    .name = "GRU",
    .group = "Recurrent",
    .summary = "Gated recurrent unit: update and reset gates, lighter than LSTM",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(rnn_config),
    .configure = rnn_configure,
    .infer_n = gru_infer,
    .call_n = gru_call,
    .finalize = rnn_finalize,
};
