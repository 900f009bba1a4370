/* compile(): the optimizer, loss and metrics a model trains with, and the
 * logs they produce. "accuracy" is resolved against the loss as Keras does:
 * sparse labels get sparse_categorical_accuracy, one-hot labels
 * categorical_accuracy, binary cross-entropy binary_accuracy. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

static void clear_compiled(tw_model *model)
{
    tw_model_state *st = model->state;
    tw_optimizer_free(st->optimizer);
    for (int i = 0; i < st->nmetrics; i++)
        tw_metric_free(st->metrics[i]);
    for (int i = 0; i < st->noutputs; i++)
        tw_metric_free(st->output_loss_means[i]);
    tw_metric_free(st->loss_mean);
    tw_rng_free(st->step_rng);
    tw__traced_step_free(st->traced_step); /* it captured the optimizer and the loss */
    st->traced_step = NULL;
    st->optimizer = NULL;
    st->loss_mean = NULL;
    st->step_rng = NULL;
    st->nmetrics = 0;
    st->noutputs = 0;
    st->compiled = false;
}

static const char *resolve_metric(const char *name, const tw_loss *loss)
{
    if (strcmp(name, "accuracy") && strcmp(name, "acc"))
        return name;
    switch (loss->kind) {
    case TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
        return "sparse_categorical_accuracy";
    case TW_LOSS_CATEGORICAL_CROSSENTROPY:
        return "categorical_accuracy";
    case TW_LOSS_BINARY_CROSSENTROPY:
        return "binary_accuracy";
    default:
        return "accuracy";
    }
}

/* The name of output i in logs: its layer's ("head1"). */
static void output_name(const tw_model *model, int i, char *buf, size_t size)
{
    tw_keras_history h;
    if (tw_functional_output(model, i, &h) == 0)
        snprintf(buf, size, "%s", tw_layer_name(tw_model_layer_at(model, h.layer)));
    else
        snprintf(buf, size, "output_%d", i + 1);
}

static int check_compile(tw_model *model, const tw_compile_options *o, int noutputs)
{
    if (!o || !o->losses || o->nlosses < 1)
        return tw_error_set("compile: needs a model, an optimizer and a loss");
    if (o->nlosses != 1 && o->nlosses != noutputs)
        return tw_error_set("compile: model '%s' has %d outputs; give one loss for all or one per output, got %d",
                            model->name, noutputs, o->nlosses);
    if (noutputs > TW_MAX_MODEL_OUTPUTS)
        return tw_error_set("compile: model '%s' has %d outputs; at most %d can be trained", model->name, noutputs,
                            TW_MAX_MODEL_OUTPUTS);
    if (o->nmetrics < 0 || o->nmetrics > TW_MAX_MODEL_METRICS)
        return tw_error_set("compile: %d metrics; at most %d", o->nmetrics, TW_MAX_MODEL_METRICS);
    for (int i = 0; o->loss_weights && i < noutputs; i++)
        if (!(o->loss_weights[i] >= 0) || isinf(o->loss_weights[i]))
            return tw_error_set("compile: loss_weights[%d] must be a finite number of at least 0, got %g", i,
                                o->loss_weights[i]);
    return 0;
}

int tw_model_compile_n(tw_model *model, tw_optimizer *optimizer, const tw_compile_options *o)
{
    int noutputs = tw_model_noutputs(model);
    int rc = !optimizer || noutputs < 1 ? tw_error_set("compile: needs a model, an optimizer and a loss")
                                        : check_compile(model, o, noutputs);
    if (rc) {
        tw_optimizer_free(optimizer);
        return -1;
    }
    tw_model_state *st = model->state;
    clear_compiled(model);
    st->clear_compiled = clear_compiled;
    st->optimizer = optimizer;
    st->noutputs = noutputs;
    st->loss_mean = tw_metric_new("mean");
    for (int i = 0; i < noutputs; i++) {
        st->losses[i] = o->losses[o->nlosses == 1 ? 0 : i];
        st->loss_weights[i] = o->loss_weights ? o->loss_weights[i] : 1;
        st->output_loss_means[i] = tw_metric_new("mean");
        output_name(model, i, st->output_names[i], sizeof st->output_names[i]);
    }
    for (int k = 0; k < noutputs; k++)
        for (int i = 0; i < o->nmetrics; i++) {
            tw_metric *m = tw_metric_new(resolve_metric(o->metrics[i], &st->losses[k]));
            if (!m) {
                clear_compiled(model);
                return -1;
            }
            st->metrics[st->nmetrics] = m;
            st->metric_output[st->nmetrics] = k;
            if (noutputs == 1)
                snprintf(st->metric_names[st->nmetrics], sizeof st->metric_names[0], "%s", o->metrics[i]);
            else
                snprintf(st->metric_names[st->nmetrics], sizeof st->metric_names[0], "%.20s_%.24s",
                         st->output_names[k], o->metrics[i]);
            st->nmetrics++;
        }
    st->compiled = true;
    return 0;
}

int tw_model_compile(tw_model *model, tw_optimizer *optimizer, const tw_loss *loss, int nmetrics,
                     const char *const *metric_names)
{
    tw_compile_options o = {.nlosses = loss ? 1 : 0, .losses = loss, .nmetrics = nmetrics, .metrics = metric_names};
    return tw_model_compile_n(model, optimizer, &o);
}

int tw__model_check_compiled(const tw_model *model, const char *fn)
{
    if (!tw_layer_is_model(model))
        return tw_error_set("%s: not a model", fn);
    if (!((tw_model_state *)model->state)->compiled)
        return tw_error_set("%s: model '%s' is not compiled; call tw_model_compile first", fn, model->name);
    return 0;
}

tw_optimizer *tw_model_optimizer(const tw_model *model)
{
    return tw_layer_is_model(model) ? ((tw_model_state *)model->state)->optimizer : NULL;
}

const tw_loss *tw_model_loss(const tw_model *model)
{
    tw_model_state *st = tw_layer_is_model(model) ? model->state : NULL;
    return st && st->compiled ? &st->losses[0] : NULL;
}

void tw_model_reset_metrics(tw_model *model)
{
    tw_model_state *st = model->state;
    if (!st->compiled)
        return;
    tw_metric_reset_state(st->loss_mean);
    for (int i = 0; i < st->noutputs; i++)
        tw_metric_reset_state(st->output_loss_means[i]);
    for (int i = 0; i < st->nmetrics; i++)
        tw_metric_reset_state(st->metrics[i]);
}

void tw__model_collect_logs(tw_model *model, tw_logs *logs, const char *prefix)
{
    tw_model_state *st = model->state;
    char name[64];
    snprintf(name, sizeof name, "%sloss", prefix);
    tw_logs_set(logs, name, tw_metric_result(st->loss_mean));
    for (int i = 0; st->noutputs > 1 && i < st->noutputs; i++) {
        snprintf(name, sizeof name, "%s%.40s_loss", prefix, st->output_names[i]);
        tw_logs_set(logs, name, tw_metric_result(st->output_loss_means[i]));
    }
    for (int i = 0; i < st->nmetrics; i++) {
        snprintf(name, sizeof name, "%s%s", prefix, st->metric_names[i]);
        tw_logs_set(logs, name, tw_metric_result(st->metrics[i]));
    }
}

double tw_logs_get(const tw_logs *logs, const char *name)
{
    for (int i = 0; i < logs->n; i++)
        if (!strcmp(logs->names[i], name))
            return logs->values[i];
    return NAN;
}

int tw_logs_set(tw_logs *logs, const char *name, double value)
{
    for (int i = 0; i < logs->n; i++)
        if (!strcmp(logs->names[i], name)) {
            logs->values[i] = value;
            return 0;
        }
    if (logs->n == TW_MAX_LOGS)
        return tw_error_set("logs: more than %d values", TW_MAX_LOGS);
    snprintf(logs->names[logs->n], sizeof logs->names[0], "%s", name);
    logs->values[logs->n++] = value;
    return 0;
}
