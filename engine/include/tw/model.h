/* Tensor Workbench — Sequential models and training (tf.keras.Sequential, fit).
 *
 * A model is a layer of class "Sequential" holding a stack of layers, so
 * models nest (the seeds' shared trunk with two heads):
 *
 *     tw_model *trunk = tw_sequential_new("trunk");
 *     tw_model_add(trunk, tw_dense(64, "relu"));
 *     tw_model *path1 = tw_sequential_new(NULL);
 *     tw_model_add(path1, tw_layer_ref(trunk));   // shared: take a reference
 *     tw_model_add(path1, tw_layer_ref(head1));
 *
 * tw_model_add takes over the caller's reference. Layers without a name get
 * one unique within the model ("dense", "dense_1", ...).
 *
 * The seeds' custom loop stays as short as theirs:
 *
 *     tw_tape *tape = tw_tape_begin(false);
 *     tw_tensor *loss = tw_loss_compute(&loss_fn, y, tw_model_call(model, x, true));
 *     tw_tape_end(tape);
 *     tw_variables vars = tw_model_trainable_variables(model);
 *     tw_tape_gradient(tape, loss, vars.n, vars.items, grads);
 *     tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads);
 *
 * Or compile and fit, as Keras.
 */
#ifndef TW_MODEL_H
#define TW_MODEL_H

#include "function.h"
#include "functional.h"
#include "layers.h"
#include "losses.h"
#include "metrics.h"
#include "optimizers.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef tw_layer tw_model;

tw_model *tw_sequential_new(const char *name);
bool tw_layer_is_model(const tw_layer *layer);
int tw_model_add(tw_model *model, tw_layer *layer);
int tw_model_insert(tw_model *model, int index, tw_layer *layer);
int tw_model_remove(tw_model *model, int index); /* drops the model's reference */
int tw_model_nlayers(const tw_model *model);
tw_layer *tw_model_layer_at(const tw_model *model, int index); /* borrowed */
tw_layer *tw_model_find_layer(const tw_model *model, const char *name);
/* Layers of nested models (a Sequential or Functional model used as a
 * layer) by path: a layer's path is its name in the model, and
 * "encoder/dense_1" for the layer dense_1 of the nested model encoder, as
 * weight paths name them (tw_layer_foreach_weight). Wrappers' layers are
 * not entered. tw_model_foreach_layer calls fn for every layer, depth first
 * (a nested model, then its layers); a non-zero return stops the walk and
 * is returned. */
typedef int (*tw_layer_path_fn)(const char *path, tw_layer *layer, void *user_data);
int tw_model_foreach_layer(const tw_model *model, tw_layer_path_fn fn, void *user_data);
/* A layer by path; a bare name that is not one of the model's own layers
 * finds the one nested layer of that name. NULL with a message naming the
 * candidates: the paths of every layer of that name when there are several,
 * else the model's layers. full_path (NULL: not wanted) gets the found
 * layer's path (free()). Borrowed. */
tw_layer *tw_model_find_layer_path(const tw_model *model, const char *path, char **full_path);

/* The model's input shape: its first layer's batch_input_shape (an
 * InputLayer's, or any first layer's), searched into nested models. */
const tw_shape *tw_model_input_shape(const tw_model *model);
/* Input k's shape with its batch axis: a Functional model's k-th
 * InputLayer's; a Sequential model has input 0 only. NULL when there is no
 * such input or no shape. */
const tw_shape *tw_model_input_shape_at(const tw_model *model, int k);

/* Per-layer static inference for summaries and the designer: fills one
 * entry per layer of this model (not recursing into nested ones, whose
 * entry covers them). Stops at the first layer whose input cannot work,
 * leaving its message in `error` and returning its index; returns
 * nlayers when every layer fits. */
typedef struct {
    tw_shape output;
    int64_t trainable_params, non_trainable_params;
    char error[256];
    /* The counts depend on an input of unknown shape (after a Lambda whose
     * shape the file does not give): both are 0 and mean nothing. */
    bool params_unknown;
} tw_layer_info;
int tw_model_infer(const tw_model *model, const tw_shape *input, tw_layer_info *info);

/* Build every layer from the input shape (NULL: the model's own). */
int tw_model_build(tw_model *model, const tw_shape *input, uint64_t seed);
tw_tensor *tw_model_call(tw_model *model, tw_tensor *x, bool training);

/* Models of several inputs and outputs (Functional, tw/functional.h); a
 * Sequential model has one of each. tw_model_call_n fills outputs (room
 * for tw_model_noutputs) and returns their count, or -1. */
int tw_model_ninputs(const tw_model *model);
int tw_model_noutputs(const tw_model *model);
int tw_model_call_n(tw_model *model, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, bool training);

/* Trainable weights of every layer inside, recursively, without
 * duplicates (a layer used twice contributes once); frozen layers' weights
 * are left out. Borrowed; valid until the model or a layer in it changes. */
typedef struct {
    int n;
    tw_tensor *const *items;
} tw_variables;
tw_variables tw_model_trainable_variables(tw_model *model);
tw_variables tw_model_variables(tw_model *model); /* all, frozen and statistics too */

/* Keras' parameter counts and summary table (malloc'd). */
int tw_model_count_params(const tw_model *model, int64_t *total, int64_t *trainable, int64_t *non_trainable);
char *tw_model_summary(const tw_model *model, int line_length);

/* ---- compile and fit ------------------------------------------------------ */
/* The model takes over the optimizer. Metric names as tw_metric_new. */
int tw_model_compile(tw_model *model, tw_optimizer *optimizer, const tw_loss *loss, int nmetrics,
                     const char *const *metric_names);
/* compile for models of several outputs, with Keras' semantics: one loss
 * for every output or one per output (in the model's output order); the
 * total is their sum weighted by loss_weights (NULL: 1 each) plus the
 * regularization losses; metrics apply to every output. Logs name them as
 * Keras does: "loss" (the total), and with several outputs
 * "<output layer>_loss" and "<output layer>_<metric>". */
#define TW_MAX_MODEL_OUTPUTS 8
typedef struct {
    int nlosses;                 /* 1, or the model's output count */
    const tw_loss *losses;
    const double *loss_weights;  /* the model's output count, or NULL */
    int nmetrics;
    const char *const *metrics;  /* names as tw_metric_new, "accuracy" resolved per output's loss */
} tw_compile_options;
int tw_model_compile_n(tw_model *model, tw_optimizer *optimizer, const tw_compile_options *options);
tw_optimizer *tw_model_optimizer(const tw_model *model);
const tw_loss *tw_model_loss(const tw_model *model);

/* Named values after a batch or an epoch: "loss", "accuracy",
 * "val_loss", "val_accuracy", ... in Keras' naming. */
#define TW_MAX_LOGS 16
typedef struct {
    int n;
    char names[TW_MAX_LOGS][48];
    double values[TW_MAX_LOGS];
} tw_logs;
double tw_logs_get(const tw_logs *logs, const char *name); /* NAN when absent */
int tw_logs_set(tw_logs *logs, const char *name, double value);

typedef struct {
    int epoch;           /* 0-based */
    int epochs;
    int64_t step;        /* batch within the epoch, 0-based */
    int64_t steps;       /* batches per epoch */
    int64_t iterations;  /* optimizer updates so far */
    double elapsed;      /* seconds since the epoch began */
    double samples_per_second;
    /* With tw_fit_options.expose_gradients, during on_batch_end: the step's
     * trainable variables and their gradients (NULL where none), borrowed. */
    int ngradients;
    tw_tensor *const *variables;
    tw_tensor *const *gradients;
    /* A distributed fit's ranks (0 otherwise), and each rank's last step:
     * its milliseconds and the part spent waiting for the gradients'
     * allreduce after its backward pass (ranks entries each, borrowed). */
    int ranks;
    const double *rank_step_ms, *rank_allreduce_ms;
} tw_progress;

/* Callbacks return 0 to go on, 1 to stop training after this batch/epoch
 * (cleanly: fit returns 0), -1 for an error (fit fails with its message). */
typedef struct tw_callback {
    int (*on_train_begin)(tw_model *model, void *user_data);
    int (*on_batch_end)(tw_model *model, const tw_progress *progress, const tw_logs *logs, void *user_data);
    int (*on_epoch_end)(tw_model *model, const tw_progress *progress, const tw_logs *logs, void *user_data);
    int (*on_train_end)(tw_model *model, const tw_logs *logs, void *user_data);
    void *user_data;
} tw_callback;

/* Whether fit runs its training step as a traced function (tw/function.h):
 * forward, the tape's backward and the optimizer's update traced once per
 * batch signature into one graph, run for every later batch of that shape
 * (the last, smaller batch traces once more). Losses, metrics and
 * callbacks see the same values as eager (the loss is read after the
 * graph ran; metrics update eagerly from the graph's outputs). One
 * difference: a traced step applies its update before fit reads the loss,
 * so a step whose loss is NaN has changed the weights when fit fails.
 *   AUTO: traced when the step can be traced, else eager without a word.
 *         Traced was faster where measured (bench traced_mlp_step: the
 *         Fashion-MNIST MLP, batch 32, CPU), so AUTO is the default.
 *   ON:   traced; fit fails with the tracer's message when the step cannot
 *         be traced (a Dropout layer's random draw names the op it feeds).
 *   OFF:  eager, op by op. */
typedef enum { TW_TRACE_AUTO, TW_TRACE_ON, TW_TRACE_OFF } tw_trace_mode;

typedef struct {
    int epochs;                 /* default 1 */
    int initial_epoch;          /* resume: the epoch to start at */
    int64_t initial_step;       /* resume: batches of initial_epoch already done */
    int64_t batch_size;         /* default 32 */
    bool shuffle;               /* default true (fit_options_default) */
    uint64_t seed;              /* shuffling, dropout and weight initialisation */
    double validation_split;    /* the last fraction of x and y, as Keras */
    tw_tensor *validation_x;    /* or explicit validation data */
    tw_tensor *validation_y;
    int ncallbacks;
    const tw_callback *callbacks;
    volatile int *stop_flag;    /* set from another thread (Ctrl+C, the UI's Stop): stop after this step */
    bool expose_gradients;      /* keep each step's gradients for on_batch_end (gradient histograms) */
    tw_trace_mode traced;       /* default TW_TRACE_AUTO */
    /* Validation data of a model of several inputs or outputs (the
     * model's counts of each; instead of validation_x and validation_y). */
    tw_tensor *const *validation_inputs;
    tw_tensor *const *validation_targets;
    /* Data-parallel over the ranks of tw/distributed.h (launched by
     * mpirun; with one rank, a plain fit): batch_size is each rank's
     * share. Every step takes the next ranks x batch_size examples of the
     * epoch's order (the order a single process with the same seed uses)
     * and this rank its slice of them (an uneven split weighs each rank's
     * gradient by its share, so the average is the batch's mean gradient;
     * a last batch smaller than the number of ranks is skipped). Rank 0's
     * weights are broadcast first, the optimizer is made data-parallel
     * (tw_distributed_optimizer), the logs are averaged over the ranks
     * (weighted by examples), and steps run eagerly (the allreduce starts
     * during the backward pass). Every rank must call fit with the same
     * data and options; a stop on any rank stops all after the step. */
    bool distributed;
} tw_fit_options;
tw_fit_options tw_fit_options_default(void);

/* The per-epoch logs of a fit, and where a resumed fit would start. */
typedef struct {
    int epochs;
    tw_logs *epoch_logs; /* epochs entries (completed epochs) */
    bool stopped_early;  /* a callback or the stop flag ended it */
    int resume_epoch;    /* the next batch to run: epoch and step */
    int64_t resume_step;
    double samples_per_second; /* over the whole fit */
} tw_history;
void tw_history_free(tw_history *history);

/* x and y are the whole training set (first axis: examples). Returns the
 * history (free with tw_history_free) or NULL with a message (NaN loss
 * names the epoch and step). */
tw_history *tw_model_fit(tw_model *model, tw_tensor *x, tw_tensor *y, const tw_fit_options *options);
/* Loss and compiled metrics over the data, into logs. */
int tw_model_evaluate(tw_model *model, tw_tensor *x, tw_tensor *y, int64_t batch_size, tw_logs *logs);
tw_tensor *tw_model_predict(tw_model *model, tw_tensor *x, int64_t batch_size);
/* The same for several inputs (x: tw_model_ninputs tensors) and outputs
 * (y: tw_model_noutputs tensors), every one with the same number of
 * examples. predict_n fills outputs and returns their count, or -1. */
tw_history *tw_model_fit_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                           const tw_fit_options *options);
int tw_model_evaluate_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                        int64_t batch_size, tw_logs *logs);
int tw_model_predict_n(tw_model *model, int nx, tw_tensor *const *x, int64_t batch_size, tw_tensor **outputs);
int tw_model_train_on_batch_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                              tw_logs *logs);
int tw_model_test_on_batch_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                             tw_logs *logs);
/* One step on one batch; logs hold the batch's loss and metrics. */
int tw_model_train_on_batch(tw_model *model, tw_tensor *x, tw_tensor *y, tw_logs *logs);
int tw_model_test_on_batch(tw_model *model, tw_tensor *x, tw_tensor *y, tw_logs *logs);
/* The graph of fit's traced training step for the last batch signature it
 * ran (borrowed: valid until the next fit, compile or the model's end), or
 * NULL when no step of this model has been traced. For tw_graph_json. */
const tw_graph *tw_model_train_step_graph(const tw_model *model);
/* Reset the compiled metrics (fit does it every epoch). */
void tw_model_reset_metrics(tw_model *model);

/* ---- built-in callbacks --------------------------------------------------- */
/* Keras' EarlyStopping: stop when `monitor` ("val_loss") has not improved by
 * min_delta for patience epochs; mode is inferred from the name (accuracy:
 * max, else min). restore_best_weights puts the best epoch's weights back. */
typedef struct tw_early_stopping tw_early_stopping;
tw_early_stopping *tw_early_stopping_new(const char *monitor, double min_delta, int patience,
                                         bool restore_best_weights);
tw_callback tw_early_stopping_callback(tw_early_stopping *es);
int tw_early_stopping_stopped_epoch(const tw_early_stopping *es); /* -1 when it did not stop */
void tw_early_stopping_free(tw_early_stopping *es);

/* ---- convenience constructors (Keras' defaults otherwise) ---------------- */
tw_layer *tw_dense(int64_t units, const char *activation);
tw_layer *tw_conv2d_layer(int64_t filters, int kernel_size, const char *activation);
tw_layer *tw_max_pooling2d_layer(int pool_size);
tw_layer *tw_flatten_layer(void);
tw_layer *tw_dropout_layer(double rate);
tw_layer *tw_input_layer(const tw_shape *batch_input_shape);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
