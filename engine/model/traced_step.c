/* fit's training step as a traced function (tf.function around Keras'
 * train_step): the tape, the forward pass, the loss with the regularization
 * losses, the gradients and the optimizer's update go into one graph per
 * batch signature, and later batches of that shape run the graph.
 *
 * The graph's outputs are the loss and the predictions (and the gradients
 * when a fit exposes them to callbacks); reading the loss, the NaN check
 * and the metrics happen after the graph ran, eagerly, as in Keras.
 *
 * The trace captures the model's trainable variables, its optimizer and
 * its loss: a change of the variables (a layer frozen, added) starts over,
 * and compile drops the step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* The graph's outputs: the loss, then with several outputs each one's
 * loss, then the predictions, then the gradients when kept. */
static int step_outputs(const tw_model_state *st)
{
    return 1 + (st->noutputs > 1 ? st->noutputs : 0) + st->noutputs;
}

typedef struct tw_traced_step {
    tw_model *model; /* borrowed: the step lives in its state */
    /* One function without and one with the gradients as outputs, indexed
     * by the state's keep_gradients (which step_fn reads while tracing). */
    tw_function *functions[2];
    int nvars;
    uint64_t *ids;         /* the trainable variables traced, in order */
    bool *has_gradient;    /* per variable: whether its gradient is an output */
    bool untraceable;      /* an automatic fit found the step cannot be traced */
    const tw_graph *last;  /* the graph the last traced step ran */
} tw_traced_step;

/* The batch a trace's inputs hold: the model's inputs, then its targets. */
static void batch_of(const tw_model *model, tw_tensor *const *inputs, tw_batch *b)
{
    b->nx = tw_model_ninputs(model);
    b->ny = tw_model_noutputs(model);
    for (int i = 0; i < b->nx; i++)
        b->x[i] = inputs[i];
    for (int i = 0; i < b->ny; i++)
        b->y[i] = inputs[b->nx + i];
}

static int step_fn(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *user_data)
{
    (void)ninputs;
    (void)max_outputs; /* a trace offers room for more: the gradients go out when the fit keeps them */
    tw_traced_step *ts = user_data;
    tw_model_state *st = ts->model->state;
    tw_call_context ctx = {.training = true, .rng = st->step_rng};
    tw_step_result r = {0};
    tw_batch b;
    batch_of(ts->model, inputs, &b);
    if (tw__model_loss_and_gradients(ts->model, &b, &ctx, &r) < 0 ||
        tw_optimizer_apply_gradients(st->optimizer, r.vars.n, r.vars.items, r.grads) < 0)
        return -1;
    int n = 0;
    outputs[n++] = r.loss;
    for (int i = 0; st->noutputs > 1 && i < st->noutputs; i++)
        outputs[n++] = r.out_losses[i];
    for (int i = 0; i < st->noutputs; i++)
        outputs[n++] = r.preds[i];
    for (int i = 0; st->keep_gradients && i < r.vars.n; i++) {
        ts->has_gradient[i] = r.grads[i] != NULL;
        if (r.grads[i])
            outputs[n++] = r.grads[i];
    }
    return n;
}

void tw__traced_step_free(tw_traced_step *ts)
{
    if (!ts)
        return;
    tw_function_free(ts->functions[0]);
    tw_function_free(ts->functions[1]);
    free(ts->ids);
    free(ts->has_gradient);
    free(ts);
}

static bool same_variables(const tw_traced_step *ts, tw_variables vars)
{
    if (ts->nvars != vars.n)
        return false;
    for (int i = 0; i < vars.n; i++)
        if (ts->ids[i] != vars.items[i]->id)
            return false;
    return true;
}

static tw_traced_step *new_step(tw_model *model, tw_variables vars)
{
    tw_traced_step *ts = calloc(1, sizeof *ts);
    if (ts) {
        ts->model = model;
        ts->nvars = vars.n;
        ts->ids = calloc((size_t)(vars.n ? vars.n : 1), sizeof *ts->ids);
        ts->has_gradient = calloc((size_t)(vars.n ? vars.n : 1), sizeof *ts->has_gradient);
        ts->functions[0] = tw_function_new("train_step", step_fn, ts);
        ts->functions[1] = tw_function_new("train_step", step_fn, ts);
    }
    if (!ts || !ts->ids || !ts->has_gradient || !ts->functions[0] || !ts->functions[1]) {
        tw__traced_step_free(ts);
        tw_error_set("fit: out of memory making the traced training step");
        return NULL;
    }
    for (int i = 0; i < vars.n; i++)
        ts->ids[i] = vars.items[i]->id;
    return ts;
}

/* The model's traced step, new when its trainable variables changed. */
static tw_traced_step *step_of(tw_model *model)
{
    tw_model_state *st = model->state;
    tw_variables vars = tw_model_trainable_variables(model);
    if (st->traced_step && same_variables(st->traced_step, vars))
        return st->traced_step;
    tw__traced_step_free(st->traced_step);
    st->traced_step = new_step(model, vars);
    return st->traced_step;
}

/* After the graph ran: the loss read, the metrics and the kept gradients. */
static int finish_step(tw_traced_step *ts, const tw_batch *b, tw_tensor *const *outs)
{
    tw_model_state *st = ts->model->state;
    double value = tw_tensor_item(outs[0]);
    if (!isfinite(value))
        return tw__model_nonfinite_loss(value);
    int several = st->noutputs > 1 ? st->noutputs : 0;
    tw__model_update_metrics(ts->model, b, outs + 1 + several, value, outs + 1, tw_tensor_dim(b->x[0], 0));
    if (!st->keep_gradients)
        return 0;
    tw_variables vars = tw_model_trainable_variables(ts->model);
    tw_tensor **grads = tw__model_gradient_slots(st, vars.n);
    for (int i = 0, k = step_outputs(st); i < vars.n; i++)
        grads[i] = ts->has_gradient[i] ? outs[k++] : NULL;
    tw__model_keep_gradients(st, vars, grads);
    return 0;
}

int tw__model_traced_train_step(tw_model *model, const tw_batch *b, bool required)
{
    tw_model_state *st = model->state;
    tw_traced_step *ts = step_of(model);
    if (!ts)
        return -1;
    if (ts->untraceable && !required)
        return 1;
    if (!st->step_rng)
        st->step_rng = tw_rng_new(0);
    tw_function *f = ts->functions[st->keep_gradients];
    tw_tensor *inputs[2 * TW_MAX_MODEL_IO];
    int ninputs = b->nx + b->ny;
    memcpy(inputs, b->x, sizeof(tw_tensor *) * (size_t)b->nx);
    memcpy(inputs + b->nx, b->y, sizeof(tw_tensor *) * (size_t)b->ny);
    /* Traced (without running) first, so a step that cannot be traced is
     * told apart from one whose graph failed while changing the weights. */
    const tw_graph *g = tw_function_get_graph(f, ninputs, inputs);
    if (!g) {
        if (required)
            return tw_error_set("the training step cannot run traced (traced = on): %s", tw_last_error());
        ts->untraceable = true;
        tw_error_clear();
        return 1;
    }
    ts->last = g;
    int max = step_outputs(st) + (st->keep_gradients ? ts->nvars : 0);
    tw_tensor *stack_outs[16], **outs = max <= 16 ? stack_outs : calloc((size_t)max, sizeof *outs);
    if (!outs)
        return tw_error_set("fit: out of memory running the traced training step");
    tw_scope_begin();
    int n = tw_function_call(f, ninputs, inputs, outs, max);
    int rc = n < 0 ? -1 : finish_step(ts, b, outs);
    tw_scope_end();
    if (outs != stack_outs)
        free(outs);
    return rc;
}

const tw_graph *tw_model_train_step_graph(const tw_model *model)
{
    if (!tw_layer_is_model(model))
        return NULL;
    const tw_model_state *st = model->state;
    return st->traced_step ? st->traced_step->last : NULL;
}
