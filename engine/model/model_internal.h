/* Model internals: what a Sequential model holds beyond its layers. */
#ifndef TW_MODEL_INTERNAL_H
#define TW_MODEL_INTERNAL_H

#include "../layers/layer_internal.h"

typedef struct {
    int n, capacity;
    tw_tensor **items;
} tw_var_list;

#define TW_MAX_MODEL_METRICS 8

typedef struct {
    uint64_t seed;
    tw_rng *rng; /* weight initialisation, dropout */
    tw_var_list trainable, all;

    /* compile() (training.c); set by compile so the model core does not
     * depend on optimizers and metrics. */
    void (*clear_compiled)(tw_model *model);
    bool compiled;
    tw_optimizer *optimizer;
    tw_loss loss;
    int nmetrics;
    tw_metric *metrics[TW_MAX_MODEL_METRICS];
    char metric_names[TW_MAX_MODEL_METRICS][40]; /* as the user named them: "accuracy" */
    tw_rng *step_rng; /* dropout in fit: keyed by (seed, iteration), so resuming repeats it */
    /* The last step's variables and gradients (references) when a fit
     * exposes them to callbacks. */
    bool keep_gradients;
    tw_var_list kept_vars, kept_grads;
    tw_var_list grads; /* a train step's gradient slots, reused */
    tw_metric *loss_mean; /* the running "loss" of fit's logs */
} tw_model_state;

void tw__snake_case(const char *camel, char *out, size_t size);

/* compile.c */
int tw__model_check_compiled(const tw_model *model, const char *fn);
/* The batch's loss and metric values, into the running metrics and logs. */
void tw__model_collect_logs(tw_model *model, tw_logs *logs, const char *prefix);

#endif
