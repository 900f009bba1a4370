/* The parts SimpleRNN, LSTM and GRU share (see rnn_common.h). */
#include <stdlib.h>

#include "rnn_common.h"

static bool flag(const tw_layer *self, const char *key)
{
    return tw_layer_get(self, key)->number != 0;
}

int rnn_configure(tw_layer *self)
{
    if (flag(self, "stateful"))
        return TW_LAYER_ERROR(self, "stateful=true (the state carried from one batch to the next) is not supported");
    if (flag(self, "time_major"))
        return TW_LAYER_ERROR(self, "time_major=true is not supported; give input as (batch, timesteps, features)");
    rnn_config *cfg = self->state;
    cfg->units = (int64_t)tw_layer_get(self, "units")->number;
    cfg->activation = tw_layer_get(self, "activation")->choice;
    cfg->recurrent_activation = tw_layer_class_param(self->klass, "recurrent_activation")
                                    ? tw_layer_get(self, "recurrent_activation")->choice
                                    : NULL;
    cfg->use_bias = flag(self, "use_bias");
    cfg->return_sequences = flag(self, "return_sequences");
    cfg->return_state = flag(self, "return_state");
    cfg->go_backwards = flag(self, "go_backwards");
    cfg->dropout = tw_layer_get(self, "dropout")->number;
    cfg->recurrent_dropout = tw_layer_get(self, "recurrent_dropout")->number;
    return 0;
}

void rnn_finalize(tw_layer *self)
{
    rnn_config *cfg = self->state;
    tw_rng_free(cfg->rng);
}

static int check_input(const tw_layer *self, const tw_shape *input)
{
    char buf[96];
    if (input->ndim != 3 || input->dims[2] < 1)
        return TW_LAYER_ERROR(self, "expected input of rank 3 (batch, timesteps, features) with known features, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    if (input->dims[1] == 0)
        return TW_LAYER_ERROR(self, "needs at least one timestep, got %s", tw_shape_format(input, buf, sizeof buf));
    return 0;
}

/* Keras' initial_state: one (batch, units) tensor per state, or none. */
static int check_states(const tw_layer *self, int nstates, const tw_shape *inputs, int ninputs)
{
    const rnn_config *cfg = self->state;
    char buf[96];
    if (ninputs != 1 && ninputs != 1 + nstates)
        return TW_LAYER_ERROR(self, "takes a sequence and %d initial state%s (initial_state), got %d input%s besides "
                                    "the sequence",
                              nstates, nstates == 1 ? "" : "s", ninputs - 1, ninputs == 2 ? "" : "s");
    for (int i = 1; i < ninputs; i++)
        if (inputs[i].ndim != 2 || inputs[i].dims[1] != cfg->units)
            return TW_LAYER_ERROR(self, "initial_state[%d] must be (batch, %lld), got %s", i - 1,
                                  (long long)cfg->units, tw_shape_format(&inputs[i], buf, sizeof buf));
    return 0;
}

int rnn_infer(const tw_layer *self, int gates, int bias_rows, int nstates, const tw_shape *inputs, int ninputs,
              tw_shape *outputs, int *noutputs, tw_weight_spec *w, int *nw)
{
    const tw_shape *input = &inputs[0];
    if (check_input(self, input) || check_states(self, nstates, inputs, ninputs))
        return -1;
    const rnn_config *cfg = self->state;
    int64_t u = cfg->units, in = input->dims[2];
    outputs[0] = cfg->return_sequences ? (tw_shape){3, {input->dims[0], input->dims[1], u}}
                                       : (tw_shape){2, {input->dims[0], u}};
    *noutputs = 1;
    for (int i = 0; cfg->return_state && i < nstates; i++)
        outputs[(*noutputs)++] = (tw_shape){2, {input->dims[0], u}};
    const char *kernel_init = tw_layer_get(self, "kernel_initializer")->choice;
    const char *recurrent_init = tw_layer_get(self, "recurrent_initializer")->choice;
    w[0] = (tw_weight_spec){"kernel", {2, {in, gates * u}}, kernel_init, true, "kernel_regularizer"};
    w[1] = (tw_weight_spec){"recurrent_kernel", {2, {u, gates * u}}, recurrent_init, true, "recurrent_regularizer"};
    *nw = 2;
    if (cfg->use_bias) {
        tw_shape shape = bias_rows == 2 ? (tw_shape){2, {2, gates * u}} : (tw_shape){1, {gates * u}};
        w[(*nw)++] = (tw_weight_spec){"bias", shape, tw_layer_get(self, "bias_initializer")->choice, true,
                                      "bias_regularizer"};
    }
    return 0;
}

/* x's shape with the batch unknown, as infer sees it. */
static tw_shape shape_of(const tw_tensor *x)
{
    tw_shape s = {.ndim = tw_tensor_ndim(x)};
    for (int i = 0; i < s.ndim; i++)
        s.dims[i] = i ? tw_tensor_dim(x, i) : -1;
    return s;
}

/* A stable seed from the layer's name, so a layer called without a
 * generator still drops the same units from run to run. */
static uint64_t name_seed(const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

/* Keras draws one mask per sequence: ones(batch, size) through dropout,
 * reused at every step. *mask stays NULL when the rate does not apply (Keras
 * applies a rate only strictly between 0 and 1). */
static int sequence_mask(tw_layer *self, const tw_call_context *ctx, double rate, tw_dtype dtype, int64_t batch,
                         int64_t size, tw_tensor **mask)
{
    *mask = NULL;
    if (!ctx->training || !(rate > 0 && rate < 1))
        return 0;
    rnn_config *cfg = self->state;
    tw_rng *rng = ctx->rng;
    if (!rng) {
        if (!cfg->rng)
            cfg->rng = tw_rng_new(name_seed(self->name));
        rng = cfg->rng;
    }
    *mask = tw_dropout(tw_ones(dtype, TW_SHAPE(batch, size)), rate, rng);
    return *mask ? 0 : -1;
}

/* x @ kernel for every step at once: (batch, timesteps, gates * units). */
static tw_tensor *project(tw_tensor *x, tw_tensor *kernel, tw_tensor *bias)
{
    int64_t batch = tw_tensor_dim(x, 0), steps = tw_tensor_dim(x, 1);
    tw_tensor *flat = tw_reshape(tw_contiguous(x), TW_SHAPE(batch * steps, tw_tensor_dim(x, 2)));
    tw_tensor *xw = tw_reshape(tw_matmul(flat, kernel), TW_SHAPE(batch, steps, tw_tensor_dim(kernel, 1)));
    return bias ? tw_add(xw, bias) : xw;
}

/* parts[i] = xw[:, i] for every step, found by halving the time axis: a
 * slice's gradient is as large as the tensor it slices, so one slice per
 * step would cost a pass over all of xw per step in the backward pass;
 * halving costs a few passes per level, log2(timesteps) levels. */
static int unstack(tw_tensor *xw, tw_tensor **parts)
{
    int64_t n = tw_tensor_dim(xw, 1), half = n / 2;
    if (n == 1)
        return (parts[0] = tw_squeeze(xw, TW_AXES(1))) ? 0 : -1;
    tw_tensor *halves[2];
    if (tw_split_sizes(xw, 2, (int64_t[]){half, n - half}, 1, halves))
        return -1;
    return unstack(halves[0], parts) || unstack(halves[1], parts + half) ? -1 : 0;
}

static tw_tensor *loop_over_time(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states, rnn_step_fn step)
{
    const rnn_config *cfg = loop->cfg;
    int64_t steps = tw_tensor_dim(xw, 1);
    tw_tensor **parts = calloc((size_t)steps, sizeof *parts), **outs = calloc((size_t)steps, sizeof *outs);
    tw_tensor *h = NULL;
    if (!parts || !outs) {
        tw_error_set("%s '%s': out of memory for %lld timesteps", loop->self->klass->name, loop->self->name,
                     (long long)steps);
    } else if (!unstack(xw, parts)) {
        for (int64_t i = 0; i < steps; i++) {
            int64_t t = cfg->go_backwards ? steps - 1 - i : i;
            if (!(h = outs[i] = step(loop, parts[t], states)))
                break;
        }
        /* Keras returns the outputs in the order it processed the steps. */
        if (h && cfg->return_sequences)
            h = tw_stack((int)steps, outs, 1);
    }
    free(parts);
    free(outs);
    return h;
}

int rnn_run(tw_layer *self, tw_tensor *const *inputs, int ninputs, const tw_call_context *ctx, tw_tensor *input_bias,
            rnn_loop *loop, int nstates, rnn_step_fn step, tw_tensor **outputs)
{
    tw_tensor *x = inputs[0];
    tw_shape in[TW_MAX_LAYER_IO];
    for (int i = 0; i < ninputs; i++)
        in[i] = shape_of(inputs[i]);
    char a[96], b[96];
    if (check_input(self, &in[0]) || check_states(self, nstates, in, ninputs))
        return -1;
    if (in[0].dims[2] != self->input_shape.dims[2])
        return TW_LAYER_ERROR(self, "was built for input %s and cannot take %s",
                              tw_shape_format(&self->input_shape, a, sizeof a), tw_shape_format(&in[0], b, sizeof b));
    const rnn_config *cfg = self->state;
    int64_t batch = tw_tensor_dim(x, 0);
    for (int i = 1; i < ninputs; i++)
        if (tw_tensor_dim(inputs[i], 0) != batch)
            return TW_LAYER_ERROR(self, "initial_state[%d] has a batch of %lld for a sequence batch of %lld", i - 1,
                                  (long long)tw_tensor_dim(inputs[i], 0), (long long)batch);
    tw_tensor *kernel = self->weights[0], *input_mask;
    tw_dtype dtype = tw_tensor_dtype(kernel);
    loop->self = self;
    loop->cfg = cfg;
    if (sequence_mask(self, ctx, cfg->dropout, tw_tensor_dtype(x), batch, in[0].dims[2], &input_mask) ||
        sequence_mask(self, ctx, cfg->recurrent_dropout, dtype, batch, cfg->units, &loop->recurrent_mask))
        return -1;
    if (input_mask)
        x = tw_mul(x, tw_expand_dims(input_mask, 1));
    tw_tensor *xw = x ? project(x, kernel, input_bias) : NULL;
    if (!xw)
        return -1;
    tw_tensor *states[2];
    for (int i = 0; i < nstates; i++)
        states[i] = ninputs > 1 ? inputs[1 + i] : tw_zeros(dtype, TW_SHAPE(batch, cfg->units));
    if (!(outputs[0] = loop_over_time(loop, xw, states, step)))
        return -1;
    int n = 1;
    for (int i = 0; cfg->return_state && i < nstates; i++)
        outputs[n++] = states[i];
    return n;
}

tw_tensor *rnn_recurrent_input(const rnn_loop *loop, tw_tensor *h)
{
    return loop->recurrent_mask ? tw_mul(h, loop->recurrent_mask) : h;
}
