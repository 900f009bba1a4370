/* Tensor Workbench — optimizers and learning-rate schedules (tf.keras.optimizers).
 *
 *     tw_optimizer *opt = tw_optimizer_new_named("adam", 0.001);
 *     ... tape, loss, gradients ...
 *     tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads);
 *
 * Updates happen in place on the variables, outside any tape. Slots (Adam's
 * m and v, momentum buffers) are created on the first update of a variable,
 * or ahead of time by tw_optimizer_build, and are exposed so checkpoints can
 * save and restore them. The iteration counter counts applied updates.
 *
 * Traced: apply_gradients inside a tw_function (tw/function.h) records the
 * update as graph ops instead of running it: one "optimizer_update" node per
 * variable (the same fused update the eager call runs, reading the
 * iteration counter when the graph runs, so schedules, Adam's bias
 * correction and clipping by norm follow the count), the global norm for
 * global_clipnorm as ops, and an assign_add of the counter. Every kind,
 * schedule and clipping mode traces; a traced step gives the eager step's
 * results.
 */
#ifndef TW_OPTIMIZERS_H
#define TW_OPTIMIZERS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum {
    TW_SCHEDULE_CONSTANT,
    TW_SCHEDULE_EXPONENTIAL_DECAY, /* lr * rate^(step/decay_steps), floor()ed when staircase */
    TW_SCHEDULE_COSINE_DECAY,      /* Keras' CosineDecay: down to alpha*lr over decay_steps */
    TW_SCHEDULE_STEP_DECAY,        /* lr * rate^floor(step/decay_steps) (a staircase exponential) */
} tw_schedule_kind;

typedef struct {
    tw_schedule_kind kind;
    double initial_learning_rate;
    int64_t decay_steps;
    double decay_rate;
    bool staircase;
    double alpha; /* cosine: the final fraction of the initial rate */
} tw_lr_schedule;

/* The learning rate at an iteration (0-based). */
double tw_lr_schedule_at(const tw_lr_schedule *schedule, int64_t step);

typedef enum {
    TW_OPTIMIZER_SGD,
    TW_OPTIMIZER_ADAM,
    TW_OPTIMIZER_ADAMW,
    TW_OPTIMIZER_RMSPROP,
    TW_OPTIMIZER_ADAGRAD,
    TW_OPTIMIZER_KIND_COUNT
} tw_optimizer_kind;

typedef struct {
    tw_optimizer_kind kind;
    tw_lr_schedule learning_rate; /* CONSTANT with initial_learning_rate for a fixed rate */
    double momentum;              /* SGD, RMSprop */
    bool nesterov;                /* SGD */
    double beta_1, beta_2;        /* Adam, AdamW */
    double epsilon;               /* Adam, AdamW, RMSprop, Adagrad */
    double weight_decay;          /* AdamW (decoupled); 0 elsewhere */
    double rho;                   /* RMSprop */
    double initial_accumulator_value; /* Adagrad */
    /* Gradient clipping before the update, 0 for off: each gradient's
     * values, each gradient's norm, or all gradients' global norm. */
    double clipvalue, clipnorm, global_clipnorm;
} tw_optimizer_config;

/* Keras' defaults for the kind (learning rates 0.01 for SGD and 0.001 for the rest, ...). */
tw_optimizer_config tw_optimizer_defaults(tw_optimizer_kind kind);
/* "sgd", "adam", "adamw", "rmsprop", "adagrad" (case-insensitive). */
int tw_optimizer_kind_from_name(const char *name, tw_optimizer_kind *kind);
const char *tw_optimizer_kind_name(tw_optimizer_kind kind);

typedef struct tw_optimizer tw_optimizer;
tw_optimizer *tw_optimizer_new(const tw_optimizer_config *config);
/* The kind's defaults with a fixed learning rate. */
tw_optimizer *tw_optimizer_new_named(const char *name, double learning_rate);
void tw_optimizer_free(tw_optimizer *opt);
const tw_optimizer_config *tw_optimizer_get_config(const tw_optimizer *opt);

/* Apply one update. A NULL gradient leaves its variable alone (TF warns, we
 * skip). Gradients must match their variables' shapes and dtypes. */
int tw_optimizer_apply_gradients(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients);
/* Create the slots for these variables now (before restoring a checkpoint). */
int tw_optimizer_build(tw_optimizer *opt, int n, tw_tensor *const *variables);

int64_t tw_optimizer_iterations(const tw_optimizer *opt);
void tw_optimizer_set_iterations(tw_optimizer *opt, int64_t iterations);
/* The counter itself: an int64 scalar variable ("<kind>/iterations", not
 * trainable), borrowed. A traced update increments it in the graph. */
tw_tensor *tw_optimizer_iterations_variable(tw_optimizer *opt);
/* The rate the next update will use. */
double tw_optimizer_learning_rate(const tw_optimizer *opt);

/* Slots, for checkpoints: slot names are "m", "v" (Adam), "momentum" (SGD,
 * RMSprop), "velocity"/"rms" (RMSprop), "accumulator" (Adagrad). */
typedef int (*tw_slot_fn)(tw_tensor *variable, const char *slot_name, tw_tensor *slot, void *user_data);
int tw_optimizer_foreach_slot(const tw_optimizer *opt, tw_slot_fn fn, void *user_data);
/* The slot of a variable, created if needed (NULL with a message for an unknown name). */
tw_tensor *tw_optimizer_slot(tw_optimizer *opt, tw_tensor *variable, const char *slot_name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
