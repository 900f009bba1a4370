/* Keras' EarlyStopping callback: stop when the monitored value has not
 * improved by min_delta for `patience` epochs, optionally putting back the
 * weights of the best epoch. Values whose name contains "acc", "precision"
 * or "recall" improve upwards; everything else (losses) downwards. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

struct tw_early_stopping {
    char monitor[48];
    double min_delta;
    int patience;
    bool restore_best_weights;
    bool maximize;
    double best;
    int wait, stopped_epoch;
    int nbest;
    tw_tensor **best_weights; /* copies of tw_model_variables at the best epoch */
};

static void drop_best(tw_early_stopping *es)
{
    for (int i = 0; i < es->nbest; i++)
        tw_tensor_unref(es->best_weights[i]);
    free(es->best_weights);
    es->best_weights = NULL;
    es->nbest = 0;
}

static void keep_best(tw_early_stopping *es, tw_model *model)
{
    drop_best(es);
    tw_variables vars = tw_model_variables(model);
    es->best_weights = calloc(vars.n ? vars.n : 1, sizeof *es->best_weights);
    for (int i = 0; i < vars.n; i++) {
        tw_scope_begin();
        es->best_weights[i] = tw_tensor_ref(tw_copy(vars.items[i]));
        tw_scope_end();
    }
    es->nbest = vars.n;
}

static int on_train_begin(tw_model *model, void *user_data)
{
    tw_early_stopping *es = user_data;
    es->best = es->maximize ? -INFINITY : INFINITY;
    es->wait = 0;
    es->stopped_epoch = -1;
    drop_best(es);
    return 0;
}

static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    tw_early_stopping *es = user_data;
    double v = tw_logs_get(logs, es->monitor);
    if (isnan(v))
        return tw_error_set("EarlyStopping: the logs have no \"%s\" (is there validation data?)", es->monitor);
    bool improved = es->maximize ? v > es->best + es->min_delta : v < es->best - es->min_delta;
    if (improved) {
        es->best = v;
        es->wait = 0;
        if (es->restore_best_weights)
            keep_best(es, model);
        return 0;
    }
    if (++es->wait < es->patience)
        return 0;
    es->stopped_epoch = p->epoch;
    if (es->restore_best_weights && es->nbest) {
        tw_variables vars = tw_model_variables(model);
        for (int i = 0; i < vars.n && i < es->nbest; i++)
            if (tw_assign(vars.items[i], es->best_weights[i]))
                return -1;
    }
    return 1;
}

tw_early_stopping *tw_early_stopping_new(const char *monitor, double min_delta, int patience,
                                         bool restore_best_weights)
{
    tw_early_stopping *es = calloc(1, sizeof *es);
    snprintf(es->monitor, sizeof es->monitor, "%s", monitor ? monitor : "val_loss");
    es->min_delta = fabs(min_delta);
    es->patience = patience > 0 ? patience : 0;
    es->restore_best_weights = restore_best_weights;
    es->maximize = strstr(es->monitor, "acc") || strstr(es->monitor, "precision") || strstr(es->monitor, "recall");
    es->stopped_epoch = -1;
    return es;
}

tw_callback tw_early_stopping_callback(tw_early_stopping *es)
{
    return (tw_callback){.on_train_begin = on_train_begin, .on_epoch_end = on_epoch_end, .user_data = es};
}

int tw_early_stopping_stopped_epoch(const tw_early_stopping *es)
{
    return es->stopped_epoch;
}

void tw_early_stopping_free(tw_early_stopping *es)
{
    if (!es)
        return;
    drop_best(es);
    free(es);
}
