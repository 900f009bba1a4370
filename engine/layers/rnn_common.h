/* What SimpleRNN, LSTM and GRU share: the config keys of Keras' RNN base
 * class and cells, the checks on them, the weights' shapes, and the time
 * loop (input projection for every step in one matmul, dropout masks drawn
 * once per sequence, steps in order or backwards, last output or all). */
#ifndef TW_RNN_COMMON_H
#define TW_RNN_COMMON_H

#include "layer_internal.h"

/* Parameter definitions each class lists in Keras' key order. */
#define RNN_PARAM_UNITS {"units", TW_PARAM_INT, "32", 1, 1e9, .help = "Size of the hidden state (and of the output)"}
#define RNN_PARAM_ACTIVATION                                                                                      \
    {"activation", TW_PARAM_CHOICE, "tanh", .choices = tw_activation_names,                                     \
     .help = "Applied to the state update (and, in LSTM, to the cell state on output)"}
#define RNN_PARAM_RECURRENT_ACTIVATION                                                                            \
    {"recurrent_activation", TW_PARAM_CHOICE, "sigmoid", .choices = tw_activation_names,                        \
     .help = "Applied to the gates"}
#define RNN_PARAM_USE_BIAS {"use_bias", TW_PARAM_BOOL, "true", .help = "Add learned biases"}
#define RNN_PARAM_KERNEL_INIT                                                                                     \
    {"kernel_initializer", TW_PARAM_CHOICE, "glorot_uniform", .choices = tw_initializer_names,                  \
     .help = "How the input kernel starts"}
#define RNN_PARAM_RECURRENT_INIT                                                                                  \
    {"recurrent_initializer", TW_PARAM_CHOICE, "orthogonal", .choices = tw_initializer_names,                   \
     .help = "How the recurrent kernel starts"}
#define RNN_PARAM_BIAS_INIT                                                                                       \
    {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,                             \
     .help = "How the bias starts"}
#define RNN_PARAM_KERNEL_REG {"kernel_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the kernel"}
#define RNN_PARAM_RECURRENT_REG                                                                                   \
    {"recurrent_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the recurrent kernel"}
#define RNN_PARAM_BIAS_REG {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the bias"}
#define RNN_PARAM_DROPOUT                                                                                         \
    {"dropout", TW_PARAM_FLOAT, "0", 0, 1,                                                                      \
     .help = "Fraction of input features dropped in training (one mask per sequence)"}
#define RNN_PARAM_RECURRENT_DROPOUT                                                                               \
    {"recurrent_dropout", TW_PARAM_FLOAT, "0", 0, 1,                                                            \
     .help = "Fraction of the state dropped before the recurrent kernel in training (one mask per sequence)"}
/* Keras' LSTM and GRU save their cell implementation (1 or 2; Keras 2.0
 * also had 0, its CPU layout); all compute the same. */
#define RNN_PARAM_IMPLEMENTATION                                                                                  \
    {"implementation", TW_PARAM_INT, "2", 0, 2, .help = "Keras' kernel layout choice; no effect here"}
#define RNN_PARAM_RETURN_SEQUENCES                                                                                \
    {"return_sequences", TW_PARAM_BOOL, "false",                                                                \
     .help = "Output every step (batch, timesteps, units) instead of the last (batch, units)"}
#define RNN_PARAM_RETURN_STATE                                                                                    \
    {"return_state", TW_PARAM_BOOL, "false",                                                                    \
     .help = "Also return the final states (h; LSTM h and c) as extra outputs; Functional models only"}
#define RNN_PARAM_GO_BACKWARDS                                                                                    \
    {"go_backwards", TW_PARAM_BOOL, "false", .help = "Read the sequence from its end; sequences come out reversed"}
#define RNN_PARAM_STATEFUL                                                                                        \
    {"stateful", TW_PARAM_BOOL, "false", .help = "Carry the state across batches; not supported (must be false)"}
#define RNN_PARAM_UNROLL {"unroll", TW_PARAM_BOOL, "false", .help = "Keras' graph unrolling; no effect here"}
#define RNN_PARAM_TIME_MAJOR                                                                                      \
    {"time_major", TW_PARAM_BOOL, "false", .help = "Input as (timesteps, batch, features); only false is supported"}

/* The config the time loop reads, cached by rnn_configure (the state of all
 * three classes). */
typedef struct {
    int64_t units;
    const char *activation, *recurrent_activation;
    bool use_bias, return_sequences, return_state, go_backwards;
    double dropout, recurrent_dropout;
    tw_rng *rng; /* masks' generator when the call brings none, made on first need */
} rnn_config;

/* A class's configure: reads the shared keys and refuses the options a
 * Sequential model cannot use. */
int rnn_configure(tw_layer *self);
void rnn_finalize(tw_layer *self);

/* Inputs: the sequence (batch, timesteps, features), then optionally its
 * nstates initial states (batch, units) (Keras' initial_state). Outputs:
 * (batch, units) or (batch, timesteps, units), then with return_state the
 * nstates final states (batch, units). Weights kernel (features, gates *
 * units), recurrent_kernel (units, gates * units) and, with use_bias, bias
 * of shape (gates * units) or, when bias_rows is 2, (2, gates * units). */
int rnn_infer(const tw_layer *self, int gates, int bias_rows, int nstates, const tw_shape *inputs, int ninputs,
              tw_shape *outputs, int *noutputs, tw_weight_spec *w, int *nw);

/* What a step sees besides its input and state. */
typedef struct {
    const tw_layer *self;
    const rnn_config *cfg;
    tw_tensor *recurrent_mask; /* (batch, units) or NULL: scales the state fed to the recurrent kernel */
    tw_tensor *extra[3];       /* what the class prepared before the loop (kernel parts, biases) */
} rnn_loop;

/* One step: xw is this step's input projection (batch, gates * units) with
 * the input bias added; states[0] is h (and states[1] LSTM's c), replaced by
 * the new ones. Returns the new h, NULL on failure. */
typedef tw_tensor *(*rnn_step_fn)(const rnn_loop *loop, tw_tensor *xw, tw_tensor **states);

/* The whole sequence: checks inputs[0], applies the input mask, projects
 * x @ kernel (+ input_bias, may be NULL) for every step at once, then runs
 * step over time from the initial states inputs[1 .. nstates] (zeros when
 * the call gives none). nstates is 1 or 2. Fills outputs as rnn_infer
 * lists them and returns their count, or -1. */
int rnn_run(tw_layer *self, tw_tensor *const *inputs, int ninputs, const tw_call_context *ctx, tw_tensor *input_bias,
            rnn_loop *loop, int nstates, rnn_step_fn step, tw_tensor **outputs);

/* h as the recurrent kernel sees it: with recurrent dropout's mask applied. */
tw_tensor *rnn_recurrent_input(const rnn_loop *loop, tw_tensor *h);

#endif
