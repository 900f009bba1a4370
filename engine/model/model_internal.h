/* Model internals: what a Sequential model holds beyond its layers. */
#ifndef TW_MODEL_INTERNAL_H
#define TW_MODEL_INTERNAL_H

#include "../layers/layer_internal.h"

typedef struct {
    int n, capacity;
    tw_tensor **items;
} tw_var_list;

#define TW_MAX_MODEL_METRICS 8 /* names given to compile */
#define TW_MAX_COMPILED_METRICS (TW_MAX_MODEL_METRICS * TW_MAX_MODEL_OUTPUTS) /* one per output and name */

typedef struct {
    uint64_t seed;
    tw_rng *rng; /* weight initialisation, dropout */
    tw_var_list trainable, all;

    /* compile() (compile.c); set by compile so the model core does not
     * depend on optimizers and metrics. */
    void (*clear_compiled)(tw_model *model);
    bool compiled;
    tw_optimizer *optimizer;
    int noutputs; /* compiled for: the model's outputs */
    tw_loss losses[TW_MAX_MODEL_OUTPUTS];
    double loss_weights[TW_MAX_MODEL_OUTPUTS];
    tw_metric *output_loss_means[TW_MAX_MODEL_OUTPUTS]; /* "<output>_loss", with several outputs */
    char output_names[TW_MAX_MODEL_OUTPUTS][64];
    int nmetrics;
    tw_metric *metrics[TW_MAX_COMPILED_METRICS];
    int metric_output[TW_MAX_COMPILED_METRICS];   /* the output each one follows */
    char metric_names[TW_MAX_COMPILED_METRICS][48]; /* log names: "accuracy", "head1_accuracy" */
    tw_rng *step_rng; /* dropout in fit: keyed by (seed, iteration), so resuming repeats it */
    /* The last step's variables and gradients (references) when a fit
     * exposes them to callbacks. */
    bool keep_gradients;
    tw_var_list kept_vars, kept_grads;
    tw_var_list grads; /* a train step's gradient slots, reused */
    tw_metric *loss_mean; /* the running "loss" of fit's logs */
    struct tw_traced_step *traced_step; /* fit's traced step (traced_step.c), made on first use */
} tw_model_state;

void tw__snake_case(const char *camel, char *out, size_t size);

/* compile.c */
int tw__model_check_compiled(const tw_model *model, const char *fn);
/* The batch's loss and metric values, into the running metrics and logs. */
void tw__model_collect_logs(tw_model *model, tw_logs *logs, const char *prefix);

/* A batch: the model's inputs and targets. */
#define TW_MAX_MODEL_IO TW_MAX_LAYER_IO
typedef struct {
    int nx, ny;
    tw_tensor *x[TW_MAX_MODEL_IO], *y[TW_MAX_MODEL_IO];
} tw_batch;

/* The model's outputs for the inputs: their count, or -1. */
int tw__model_forward(tw_model *model, tw_tensor *const *x, int nx, tw_tensor **preds, const tw_call_context *ctx);

/* training.c: the parts of a train step the eager and the traced step
 * share. A step's forward pass, loss (the weighted sum of the outputs'
 * losses, plus regularization losses) and the gradients of the trainable
 * variables, under a tape of its own; grads are the model's reused slots;
 * out_losses the outputs' own losses (with several outputs). */
typedef struct {
    int npreds;
    tw_tensor *preds[TW_MAX_MODEL_OUTPUTS], *out_losses[TW_MAX_MODEL_OUTPUTS];
    tw_tensor *loss;
    tw_variables vars;
    tw_tensor **grads;
} tw_step_result;
int tw__model_loss_and_gradients(tw_model *model, const tw_batch *b, const tw_call_context *ctx, tw_step_result *r);
tw_tensor **tw__model_gradient_slots(tw_model_state *st, int n);
void tw__model_update_metrics(tw_model *model, const tw_batch *b, tw_tensor *const *preds, double loss,
                              tw_tensor *const *out_losses, int64_t n);
void tw__model_keep_gradients(tw_model_state *st, tw_variables vars, tw_tensor *const *grads);
/* "the loss is NaN ...": the message of a step whose loss is not finite. */
int tw__model_nonfinite_loss(double value);
int tw__model_ensure_built(tw_model *model, const tw_batch *b, uint64_t seed);

/* traced_step.c: one fit step as a traced function (keyed on the batch's
 * signature). Returns 0 when the step ran, -1 on failure, and 1 when it
 * cannot be traced and `required` is false (run it eagerly instead; the
 * answer is remembered until the model's variables or compile change). */
int tw__model_traced_train_step(tw_model *model, const tw_batch *b, bool required);
void tw__traced_step_free(struct tw_traced_step *ts);

#endif
