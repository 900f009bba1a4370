/* Keras' training loop: train_on_batch / test_on_batch, and fit, evaluate and
 * predict over tensors whose first axis is the examples.
 *
 * Reproducibility: an epoch's shuffle is drawn from (seed, epoch) and a
 * step's dropout from (seed, iteration), so a run stopped after any epoch and
 * resumed from a checkpoint (weights, optimizer slots, iteration count) gives
 * the same losses as one that never stopped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../optimizers/optimizer_internal.h"
#include "model_internal.h"
#include "tw/distributed.h"

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool has_regularizers(const tw_layer *layer)
{
    for (int i = 0; i < layer->nweights; i++) {
        const char *key = layer->specs[i].regularizer_key;
        const tw_param_value *r = key ? tw_layer_get(layer, key) : NULL;
        if (r && !r->is_null && (r->number > 0 || r->number2 > 0))
            return true;
    }
    for (int i = 0; i < layer->nchildren; i++)
        if (has_regularizers(layer->children[i]))
            return true;
    return false;
}

static tw_shape input_shape_of(const tw_tensor *x)
{
    tw_shape s = {.ndim = tw_tensor_ndim(x)};
    memcpy(s.dims, tw_tensor_shape(x), sizeof(int64_t) * s.ndim);
    s.dims[0] = -1;
    return s;
}

int tw__model_ensure_built(tw_model *model, const tw_batch *b, uint64_t seed)
{
    if (model->built)
        return 0;
    if (tw_layer_is_functional(model))
        return tw_model_build(model, NULL, seed);
    tw_shape in = input_shape_of(b->x[0]);
    return tw_model_build(model, &in, seed);
}

int tw__model_forward(tw_model *model, tw_tensor *const *x, int nx, tw_tensor **preds, const tw_call_context *ctx)
{
    if (tw_layer_is_functional(model))
        return tw_layer_call_n(model, x, nx, preds, ctx);
    preds[0] = tw_layer_call_ex(model, x[0], ctx);
    return preds[0] ? 1 : -1;
}

void tw__model_update_metrics(tw_model *model, const tw_batch *b, tw_tensor *const *preds, double loss,
                              tw_tensor *const *out_losses, int64_t n)
{
    tw_model_state *st = model->state;
    tw_metric_update_value(st->loss_mean, loss, (double)n);
    for (int i = 0; st->noutputs > 1 && i < st->noutputs; i++)
        tw_metric_update_value(st->output_loss_means[i], tw_tensor_item(out_losses[i]), (double)n);
    for (int i = 0; i < st->nmetrics; i++)
        tw_metric_update_state(st->metrics[i], b->y[st->metric_output[i]], preds[st->metric_output[i]]);
}

static void drop_kept_gradients(tw_model_state *st)
{
    for (int i = 0; i < st->kept_grads.n; i++)
        tw_tensor_unref(st->kept_grads.items[i]);
    st->kept_grads.n = st->kept_vars.n = 0;
}

void tw__model_keep_gradients(tw_model_state *st, tw_variables vars, tw_tensor *const *grads)
{
    drop_kept_gradients(st);
    if (st->kept_vars.capacity < vars.n) {
        st->kept_vars.capacity = st->kept_grads.capacity = vars.n;
        st->kept_vars.items = realloc(st->kept_vars.items, sizeof(tw_tensor *) * vars.n);
        st->kept_grads.items = realloc(st->kept_grads.items, sizeof(tw_tensor *) * vars.n);
    }
    for (int i = 0; i < vars.n; i++) {
        st->kept_vars.items[i] = vars.items[i];
        st->kept_grads.items[i] = tw_tensor_ref(grads[i]);
    }
    st->kept_vars.n = st->kept_grads.n = vars.n;
}

tw_tensor **tw__model_gradient_slots(tw_model_state *st, int n)
{
    /* The gradient slots live with the model: no allocation per step. */
    if (st->grads.capacity < n) {
        st->grads.capacity = n;
        st->grads.items = realloc(st->grads.items, sizeof *st->grads.items * n);
    }
    if (n)
        memset(st->grads.items, 0, sizeof *st->grads.items * n);
    return st->grads.items;
}

/* The weighted sum of the outputs' losses; each output's own into out_losses. */
static tw_tensor *compiled_loss(tw_model_state *st, const tw_batch *b, tw_tensor *const *preds, tw_tensor **out_losses)
{
    if (st->noutputs == 1)
        return out_losses[0] = tw_loss_compute(&st->losses[0], b->y[0], preds[0]);
    tw_tensor *total = NULL;
    for (int i = 0; i < st->noutputs; i++) {
        out_losses[i] = tw_loss_compute(&st->losses[i], b->y[i], preds[i]);
        if (!out_losses[i])
            return NULL;
        tw_tensor *term = st->loss_weights[i] == 1 ? out_losses[i] : tw_mul_scalar(out_losses[i], st->loss_weights[i]);
        total = total ? tw_add(total, term) : term;
    }
    return total;
}

int tw__model_loss_and_gradients(tw_model *model, const tw_batch *b, const tw_call_context *ctx, tw_step_result *r)
{
    tw_model_state *st = model->state;
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *activity = NULL; /* what ActivityRegularization layers add */
    tw_call_context step_ctx = *ctx;
    step_ctx.activity_loss = &activity;
    r->npreds = tw__model_forward(model, b->x, b->nx, r->preds, &step_ctx);
    tw_name_scope_push("loss"); /* a traced step's loss nodes group as one box */
    r->loss = r->npreds == st->noutputs ? compiled_loss(st, b, r->preds, r->out_losses) : NULL;
    tw_tensor *total = r->loss && has_regularizers(model) ? tw_add(r->loss, tw_layer_regularization_loss(model))
                                                          : r->loss;
    if (total && activity)
        total = tw_add(total, tw_cast(activity, tw_tensor_dtype(total)));
    tw_tensor_unref(activity);
    tw_name_scope_pop();
    tw_tape_end(tape);
    int rc = -1;
    if (total) {
        r->vars = tw_model_trainable_variables(model);
        r->grads = tw__model_gradient_slots(st, r->vars.n);
        /* A data-parallel optimizer starts averaging each gradient as soon
         * as the backward pass has it. */
        rc = tw__optimizer_reduces(st->optimizer)
                 ? tw_tape_gradient_hooked(tape, total, r->vars.n, r->vars.items, r->grads,
                                           tw_distributed_gradient_ready, st->optimizer)
                 : tw_tape_gradient(tape, total, r->vars.n, r->vars.items, r->grads);
    }
    tw_tape_free(tape);
    return rc;
}

/* One eager optimizer step on a batch; the running metrics take its values. */
static int eager_train_step(tw_model *model, const tw_batch *b)
{
    tw_model_state *st = model->state;
    if (!st->step_rng)
        st->step_rng = tw_rng_new(0);
    tw_rng_set_state(st->step_rng, mix(st->seed, (uint64_t)tw_optimizer_iterations(st->optimizer)), 0);
    tw_call_context ctx = {.training = true, .rng = st->step_rng,
                           .sync_batch_stats = tw__optimizer_reduces(st->optimizer)};

    tw_scope_begin();
    tw_step_result r = {0};
    int rc = tw__model_loss_and_gradients(model, b, &ctx, &r);
    if (!rc) {
        double value = tw_tensor_item(r.loss);
        if (!isfinite(value))
            rc = tw__model_nonfinite_loss(value);
        if (!rc)
            rc = tw_optimizer_apply_gradients(st->optimizer, r.vars.n, r.vars.items, r.grads);
        if (!rc)
            tw__model_update_metrics(model, b, r.preds, value, r.out_losses, tw_tensor_dim(b->x[0], 0));
        if (!rc && st->keep_gradients)
            tw__model_keep_gradients(st, r.vars, r.grads);
    }
    tw_scope_end();
    return rc;
}

int tw__model_nonfinite_loss(double value)
{
    return tw_error_set("the loss is %s (look for NaN or huge values in the data, or lower the learning rate)",
                        isnan(value) ? "NaN" : "infinite");
}

/* One step: traced unless the mode says eager or (auto) the step cannot
 * be traced. */
static int train_step(tw_model *model, const tw_batch *b, tw_trace_mode mode)
{
    /* A data-parallel update cannot be part of a graph. */
    if (mode != TW_TRACE_OFF && !tw__optimizer_reduces(((tw_model_state *)model->state)->optimizer)) {
        int rc = tw__model_traced_train_step(model, b, mode == TW_TRACE_ON);
        if (rc <= 0)
            return rc;
    }
    return eager_train_step(model, b);
}

static int test_step(tw_model *model, const tw_batch *b)
{
    tw_model_state *st = model->state;
    tw_scope_begin();
    tw_tape_pause();
    tw_tensor *preds[TW_MAX_LAYER_IO], *out_losses[TW_MAX_MODEL_OUTPUTS];
    tw_call_context ctx = {.training = false};
    int n = tw__model_forward(model, b->x, b->nx, preds, &ctx);
    tw_tensor *loss = n == st->noutputs ? compiled_loss(st, b, preds, out_losses) : NULL;
    if (loss)
        tw__model_update_metrics(model, b, preds, tw_tensor_item(loss), out_losses, tw_tensor_dim(b->x[0], 0));
    tw_tape_resume();
    tw_scope_end();
    return loss ? 0 : -1;
}

/* x and y as a batch: the model's counts of each, one number of examples. */
static int make_batch(const char *fn, const tw_model *model, int nx, tw_tensor *const *x, int ny,
                      tw_tensor *const *y, tw_batch *b)
{
    int want_x = tw_model_ninputs(model), want_y = tw_model_noutputs(model);
    if (nx != want_x || (y && ny != want_y))
        return tw_error_set("%s: model '%s' takes %d input%s and %d target%s, got %d and %d", fn, model->name,
                            want_x, want_x == 1 ? "" : "s", want_y, want_y == 1 ? "" : "s", nx, y ? ny : 0);
    b->nx = nx;
    b->ny = y ? ny : 0;
    for (int i = 0; i < nx; i++)
        b->x[i] = x[i];
    for (int i = 0; i < b->ny; i++)
        b->y[i] = y[i];
    for (int i = 0; i < nx + b->ny; i++) {
        tw_tensor *t = i < nx ? x[i] : y[i - nx];
        if (!t)
            return tw_error_set("%s: x and y are required", fn);
        if (tw_tensor_ndim(t) < 1 || tw_tensor_dim(t, 0) != tw_tensor_dim(x[0], 0)) {
            if (nx == 1 && b->ny == 1)
                return tw_error_set("%s: x has %lld examples but y has %lld", fn,
                                    tw_tensor_ndim(x[0]) ? (long long)tw_tensor_dim(x[0], 0) : 0LL,
                                    tw_tensor_ndim(t) ? (long long)tw_tensor_dim(t, 0) : 0LL);
            return tw_error_set("%s: x[0] has %lld examples but %s[%d] has %lld", fn,
                                tw_tensor_ndim(x[0]) ? (long long)tw_tensor_dim(x[0], 0) : 0LL, i < nx ? "x" : "y",
                                i < nx ? i : i - nx, tw_tensor_ndim(t) ? (long long)tw_tensor_dim(t, 0) : 0LL);
        }
    }
    return 0;
}

int tw_model_train_on_batch_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                              tw_logs *logs)
{
    tw_batch b;
    if (tw__model_check_compiled(model, "train_on_batch") || make_batch("train_on_batch", model, nx, x, ny, y, &b) ||
        tw__model_ensure_built(model, &b, ((tw_model_state *)model->state)->seed))
        return -1;
    tw_model_reset_metrics(model);
    if (train_step(model, &b, TW_TRACE_OFF))
        return -1;
    if (logs) {
        logs->n = 0;
        tw__model_collect_logs(model, logs, "");
    }
    return 0;
}

int tw_model_train_on_batch(tw_model *model, tw_tensor *x, tw_tensor *y, tw_logs *logs)
{
    return tw_model_train_on_batch_n(model, 1, &x, 1, &y, logs);
}

int tw_model_test_on_batch_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                             tw_logs *logs)
{
    tw_batch b;
    if (tw__model_check_compiled(model, "test_on_batch") || make_batch("test_on_batch", model, nx, x, ny, y, &b) ||
        tw__model_ensure_built(model, &b, ((tw_model_state *)model->state)->seed))
        return -1;
    tw_model_reset_metrics(model);
    if (test_step(model, &b))
        return -1;
    if (logs) {
        logs->n = 0;
        tw__model_collect_logs(model, logs, "");
    }
    return 0;
}

int tw_model_test_on_batch(tw_model *model, tw_tensor *x, tw_tensor *y, tw_logs *logs)
{
    return tw_model_test_on_batch_n(model, 1, &x, 1, &y, logs);
}

static bool same_device(tw_device a, tw_device b) { return a.kind == b.kind && a.index == b.index; }

/* Where the model's variables live (the default device before it is
 * built): its batches are copied there, as Keras places input batches. */
static tw_device model_device(tw_model *model)
{
    tw_variables vars = tw_model_variables(model);
    return vars.n > 0 ? tw_tensor_device(vars.items[0]) : tw_default_device();
}

/* Rows [start, end) of t, in `order` when shuffling (a gather) or as a
 * view, on device (NULL: where t is). */
static tw_tensor *rows(tw_tensor *t, tw_tensor *order, int64_t start, int64_t end, const tw_device *device)
{
    tw_tensor *r;
    if (!order) {
        r = tw_slice(t, 0, start, end, 1);
    } else {
        tw_tensor *picked = tw_slice(order, 0, start, end, 1);
        if (picked && !same_device(tw_tensor_device(picked), tw_tensor_device(t)))
            picked = tw_tensor_to(picked, tw_tensor_device(t));
        r = tw_gather(t, picked, 0);
    }
    if (r && device && !same_device(tw_tensor_device(r), *device))
        r = tw_tensor_to(r, *device);
    return r;
}

/* Rows [start, end) of every tensor of a batch, on device (NULL: where
 * they are). */
static void batch_rows(const tw_batch *all, tw_tensor *order, int64_t start, int64_t end, const tw_device *device,
                       tw_batch *b)
{
    b->nx = all->nx;
    b->ny = all->ny;
    for (int i = 0; i < all->nx; i++)
        b->x[i] = rows(all->x[i], order, start, end, device);
    for (int i = 0; i < all->ny; i++)
        b->y[i] = rows(all->y[i], order, start, end, device);
}

static int run_batches(tw_model *model, const tw_batch *data, int64_t batch_size)
{
    int64_t n = tw_tensor_dim(data->x[0], 0);
    tw_model_reset_metrics(model);
    for (int64_t start = 0; start < n; start += batch_size) {
        int64_t end = start + batch_size < n ? start + batch_size : n;
        tw_scope_begin();
        tw_batch b;
        tw_device device = model_device(model);
        batch_rows(data, NULL, start, end, &device, &b);
        int rc = test_step(model, &b);
        tw_scope_end();
        if (rc)
            return -1;
    }
    return 0;
}

int tw_model_evaluate_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                        int64_t batch_size, tw_logs *logs)
{
    tw_batch b;
    if (tw__model_check_compiled(model, "evaluate") || make_batch("evaluate", model, nx, x, ny, y, &b))
        return -1;
    if (batch_size <= 0)
        return tw_error_set("evaluate: batch size must be positive, got %lld", (long long)batch_size);
    if (tw__model_ensure_built(model, &b, ((tw_model_state *)model->state)->seed) || run_batches(model, &b, batch_size))
        return -1;
    if (logs) {
        logs->n = 0;
        tw__model_collect_logs(model, logs, "");
    }
    return 0;
}

int tw_model_evaluate(tw_model *model, tw_tensor *x, tw_tensor *y, int64_t batch_size, tw_logs *logs)
{
    return tw_model_evaluate_n(model, 1, &x, 1, &y, batch_size, logs);
}

int tw_model_predict_n(tw_model *model, int nx, tw_tensor *const *x, int64_t batch_size, tw_tensor **outputs)
{
    tw_batch b;
    if (!tw_layer_is_model(model) || nx < 1 || !x || !x[0] || tw_tensor_ndim(x[0]) < 1 || batch_size <= 0)
        return tw_error_set("predict: needs a model, an input with a batch axis and a positive batch size");
    if (make_batch("predict", model, nx, x, 0, NULL, &b))
        return -1;
    int64_t n = tw_tensor_dim(x[0], 0), nbatches = (n + batch_size - 1) / batch_size;
    if (tw__model_ensure_built(model, &b, ((tw_model_state *)model->state)->seed))
        return -1;
    int nout = tw_model_noutputs(model);
    tw_scope_begin();
    tw_tape_pause();
    /* outs[k * nbatches + batch]: output k of each batch, concatenated after. */
    tw_tensor **outs = calloc((size_t)(nbatches ? nbatches : 1) * (size_t)nout, sizeof *outs);
    tw_call_context ctx = {.training = false};
    int64_t i = 0;
    for (; i < nbatches; i++) {
        int64_t start = i * batch_size, end = start + batch_size < n ? start + batch_size : n;
        tw_batch part;
        tw_tensor *preds[TW_MAX_LAYER_IO];
        tw_device device = model_device(model);
        batch_rows(&b, NULL, start, end, &device, &part);
        if (tw__model_forward(model, part.x, part.nx, preds, &ctx) != nout)
            break;
        for (int k = 0; k < nout; k++)
            outs[k * nbatches + i] = preds[k];
    }
    int rc = i == nbatches ? nout : -1;
    for (int k = 0; rc > 0 && k < nout; k++) {
        tw_tensor **of = outs + k * nbatches;
        outputs[k] = tw_tensor_ref(nbatches == 1 ? of[0] : tw_concat((int)nbatches, of, 0));
        if (!outputs[k])
            rc = -1;
    }
    free(outs);
    tw_tape_resume();
    tw_scope_end();
    for (int k = 0; rc > 0 && k < nout; k++)
        tw__track(outputs[k]);
    return rc;
}

tw_tensor *tw_model_predict(tw_model *model, tw_tensor *x, int64_t batch_size)
{
    tw_tensor *outs[TW_MAX_LAYER_IO];
    int n = tw_model_predict_n(model, 1, &x, batch_size, outs);
    if (n > 1) {
        tw_error_set("predict: model '%s' has %d outputs; use tw_model_predict_n", model->name, n);
        return NULL;
    }
    return n == 1 ? outs[0] : NULL;
}

/* ---- fit ------------------------------------------------------------------ */
typedef struct {
    tw_model *model;
    const tw_fit_options *opt;
    tw_batch train, val;
    bool has_val;
    tw_history *history;
    bool stop;
    int64_t samples;   /* trained on, over the fit (all ranks) */
    double first_loss; /* the fit's first step's; NaN before it */
    int rank, ranks;   /* a distributed fit's (0 and 1 otherwise) */
    double *exchange;  /* distributed: every rank's logs and times, rank-major */
    double *rank_ms;   /* distributed: step times, then allreduce waits */
} fit_run;

/* Divergence that stays finite: Adam, RMSprop and Adagrad move each weight
 * by at most about the learning rate per step, so at a huge rate the loss
 * grows without ever overflowing (1e19 after a few epochs) where SGD's
 * turns infinite. A running loss a million times the first step's (and
 * over 1000) is no training any more: the fit stops as on a NaN. */
#define DIVERGED_FACTOR 1e6
#define DIVERGED_FLOOR 1e3

static int check_divergence(fit_run *run, const tw_logs *logs)
{
    double loss = tw_logs_get(logs, "loss");
    if (isnan(run->first_loss)) {
        run->first_loss = loss;
        return 0;
    }
    if (!(loss > DIVERGED_FLOOR && loss > DIVERGED_FACTOR * run->first_loss))
        return 0;
    return tw_error_set("the loss diverged: %.4g, over a million times the first step's %.4g (lower the learning "
                        "rate)",
                        loss, run->first_loss);
}

static int call_batch_callbacks(fit_run *run, const tw_progress *p, const tw_logs *logs)
{
    for (int i = 0; i < run->opt->ncallbacks; i++) {
        const tw_callback *cb = &run->opt->callbacks[i];
        int rc = cb->on_batch_end ? cb->on_batch_end(run->model, p, logs, cb->user_data) : 0;
        if (rc < 0)
            return -1;
        run->stop |= rc > 0;
    }
    return 0;
}

static int call_epoch_callbacks(fit_run *run, const tw_progress *p, const tw_logs *logs)
{
    for (int i = 0; i < run->opt->ncallbacks; i++) {
        const tw_callback *cb = &run->opt->callbacks[i];
        int rc = cb->on_epoch_end ? cb->on_epoch_end(run->model, p, logs, cb->user_data) : 0;
        if (rc < 0)
            return -1;
        run->stop |= rc > 0;
    }
    return 0;
}

static tw_tensor *epoch_order(const fit_run *run, int epoch, int64_t n)
{
    if (!run->opt->shuffle)
        return NULL;
    tw_rng *rng = tw_rng_new(mix(run->opt->seed ^ 0x5348554646ull, (uint64_t)epoch));
    tw_tensor *order = tw_random_permutation(rng, n);
    tw_rng_free(rng);
    return order;
}

/* Per-step values every rank sends: its logs, its step and allreduce
 * times, and the examples its logs are the mean of. */
#define EXCHANGED (TW_MAX_LOGS + 3)

/* Distributed: logs become the ranks' mean weighted by their examples (the
 * mean one process would have); p gets every rank's times. */
static int exchange_step(fit_run *run, tw_logs *logs, double step_ms, int64_t examples, tw_progress *p)
{
    tw_model_state *st = run->model->state;
    double mine[EXCHANGED] = {0};
    memcpy(mine, logs->values, sizeof *logs->values * (size_t)logs->n);
    mine[TW_MAX_LOGS] = step_ms;
    mine[TW_MAX_LOGS + 1] = tw_distributed_optimizer_wait_ms(st->optimizer);
    mine[TW_MAX_LOGS + 2] = (double)examples;
    if (tw_allgather_values(mine, EXCHANGED, run->exchange))
        return -1;
    double total = 0;
    for (int r = 0; r < run->ranks; r++)
        total += run->exchange[r * EXCHANGED + TW_MAX_LOGS + 2];
    for (int k = 0; k < logs->n && total > 0; k++) {
        double sum = 0;
        for (int r = 0; r < run->ranks; r++)
            sum += run->exchange[r * EXCHANGED + k] * run->exchange[r * EXCHANGED + TW_MAX_LOGS + 2];
        logs->values[k] = sum / total;
    }
    for (int r = 0; r < run->ranks; r++) {
        run->rank_ms[r] = run->exchange[r * EXCHANGED + TW_MAX_LOGS];
        run->rank_ms[run->ranks + r] = run->exchange[r * EXCHANGED + TW_MAX_LOGS + 1];
    }
    p->ranks = run->ranks;
    p->rank_step_ms = run->rank_ms;
    p->rank_allreduce_ms = run->rank_ms + run->ranks;
    return 0;
}

/* Distributed: a stop on any rank (its flag, a callback) stops every rank. */
static int agree_on_stop(fit_run *run)
{
    double stop = run->stop;
    if (tw_allreduce_mean_values(&stop, 1))
        return -1;
    run->stop = stop > 0;
    return 0;
}

/* This rank's rows of a step: the global batch [start, end) of the epoch's
 * order, split evenly over the ranks. */
static void rank_rows(const fit_run *run, int64_t start, int64_t end, int64_t *from, int64_t *to)
{
    int64_t len = end - start;
    *from = start + len * run->rank / run->ranks;
    *to = start + len * (run->rank + 1) / run->ranks;
}

/* 0: the epoch ran to its end; 1: stopped within it; -1: failed. */
static int fit_epoch(fit_run *run, int epoch, tw_logs *logs)
{
    const tw_fit_options *opt = run->opt;
    tw_model_state *st = run->model->state;
    int64_t n = tw_tensor_dim(run->train.x[0], 0), bs = opt->batch_size * run->ranks;
    tw_progress p = {.epoch = epoch, .epochs = opt->epochs, .steps = (n + bs - 1) / bs};
    if (run->ranks > 1 && n % bs && n % bs < run->ranks)
        p.steps--; /* a last batch some rank would have no example of */
    double t0 = now();
    int64_t seen = 0, mine = 0, first = epoch == opt->initial_epoch ? opt->initial_step : 0;
    tw_model_reset_metrics(run->model);
    tw_scope_begin();
    tw_tensor *order = epoch_order(run, epoch, n);
    int rc = 0;
    for (p.step = first; p.step < p.steps && !run->stop && !rc; p.step++) {
        int64_t start = p.step * bs, end = start + bs < n ? start + bs : n, from = start, to = end;
        if (run->ranks > 1) {
            rank_rows(run, start, end, &from, &to);
            /* An uneven split weighs each rank's mean gradient by its share. */
            tw__optimizer_weigh_gradients(st->optimizer, (double)(to - from) * run->ranks / (double)(end - start));
        }
        double step_t0 = now();
        tw_scope_begin();
        tw_batch b;
        tw_device device = model_device(run->model);
        batch_rows(&run->train, order, from, to, &device, &b);
        rc = train_step(run->model, &b, opt->traced);
        tw_scope_end();
        if (rc) {
            tw_error_set("fit: epoch %d, step %lld: %s", epoch + 1, (long long)p.step + 1, tw_last_error());
            break;
        }
        double step_ms = 1e3 * (now() - step_t0);
        seen += end - start;
        mine += to - from;
        run->samples += end - start;
        run->history->resume_epoch = p.step + 1 < p.steps ? epoch : epoch + 1;
        run->history->resume_step = p.step + 1 < p.steps ? p.step + 1 : 0;
        p.iterations = tw_optimizer_iterations(st->optimizer);
        p.ngradients = st->kept_grads.n;
        p.variables = st->kept_vars.items;
        p.gradients = st->kept_grads.items;
        p.elapsed = now() - t0;
        p.samples_per_second = p.elapsed > 0 ? (double)seen / p.elapsed : 0;
        logs->n = 0;
        tw__model_collect_logs(run->model, logs, "");
        if (run->ranks > 1 && exchange_step(run, logs, step_ms, mine, &p)) {
            tw_error_set("fit: epoch %d, step %lld: %s", epoch + 1, (long long)p.step + 1, tw_last_error());
            rc = -1;
            break;
        }
        if (check_divergence(run, logs)) {
            tw_error_set("fit: epoch %d, step %lld: %s", epoch + 1, (long long)p.step + 1, tw_last_error());
            rc = -1;
            break;
        }
        rc = call_batch_callbacks(run, &p, logs);
        if (opt->stop_flag && *opt->stop_flag)
            run->stop = true;
        if (!rc && run->ranks > 1 && agree_on_stop(run)) {
            tw_error_set("fit: epoch %d, step %lld: %s", epoch + 1, (long long)p.step + 1, tw_last_error());
            rc = -1;
        }
    }
    tw_scope_end();
    if (rc)
        return -1;
    /* Stopped mid-epoch: the epoch did not end, so no validation and no
     * epoch-end callbacks (a checkpoint there would claim the epoch done). */
    if (p.step < p.steps)
        return 1;
    if (run->has_val) {
        if (run_batches(run->model, &run->val, opt->batch_size))
            return -1;
        tw__model_collect_logs(run->model, logs, "val_");
    }
    p.step = p.steps;
    return call_epoch_callbacks(run, &p, logs);
}

tw_fit_options tw_fit_options_default(void)
{
    return (tw_fit_options){.epochs = 1, .batch_size = 32, .shuffle = true};
}

static int split_validation(fit_run *run, const tw_batch *all)
{
    const tw_fit_options *opt = run->opt;
    run->train = *all;
    if (opt->validation_x || opt->validation_y || opt->validation_inputs || opt->validation_targets) {
        run->has_val = true;
        if (opt->validation_inputs || opt->validation_targets)
            return make_batch("fit: validation data", run->model, all->nx, opt->validation_inputs, all->ny,
                              opt->validation_targets, &run->val);
        return make_batch("fit: validation data", run->model, 1, &opt->validation_x, 1, &opt->validation_y,
                          &run->val);
    }
    if (opt->validation_split <= 0)
        return 0;
    if (opt->validation_split >= 1)
        return tw_error_set("fit: validation_split must be in [0, 1), got %g", opt->validation_split);
    /* Keras keeps the last fraction, before any shuffling. */
    int64_t n = tw_tensor_dim(all->x[0], 0), split_at = (int64_t)((double)n * (1 - opt->validation_split));
    if (split_at < 1 || split_at >= n)
        return tw_error_set("fit: validation_split %g leaves no %s data out of %lld examples",
                            opt->validation_split, split_at < 1 ? "training" : "validation", (long long)n);
    batch_rows(all, NULL, 0, split_at, NULL, &run->train);
    batch_rows(all, NULL, split_at, n, NULL, &run->val);
    run->has_val = true;
    return 0;
}

static int check_fit_options(const tw_fit_options *opt)
{
    if (opt->epochs < 1 || opt->initial_epoch < 0 || opt->initial_epoch > opt->epochs)
        return tw_error_set("fit: epochs must be at least 1 and initial_epoch in [0, epochs], got %d and %d",
                            opt->epochs, opt->initial_epoch);
    if (opt->batch_size < 1)
        return tw_error_set("fit: batch size must be positive, got %lld", (long long)opt->batch_size);
    return 0;
}

/* Every rank starts from rank 0's weights, with a data-parallel optimizer. */
static int start_distributed(fit_run *run)
{
    run->rank = tw_distributed_rank();
    run->ranks = tw_distributed_size();
    if (run->ranks == 1)
        return 0;
    tw_model_state *st = run->model->state;
    run->exchange = calloc((size_t)run->ranks * EXCHANGED, sizeof *run->exchange);
    run->rank_ms = calloc((size_t)run->ranks * 2, sizeof *run->rank_ms);
    if (!run->exchange || !run->rank_ms)
        return tw_error_set("fit: out of memory");
    if (!tw_distributed_optimizer(st->optimizer, 0))
        return -1;
    tw_variables vars = tw_model_variables(run->model);
    return tw_broadcast_variables(vars.n, vars.items);
}

static int fit_epochs(fit_run *run)
{
    const tw_fit_options *opt = run->opt;
    for (int i = 0; i < opt->ncallbacks; i++)
        if (opt->callbacks[i].on_train_begin && opt->callbacks[i].on_train_begin(run->model, opt->callbacks[i].user_data) < 0)
            return -1;
    tw_logs logs = {0};
    double t0 = now();
    run->history->resume_epoch = opt->initial_epoch;
    run->history->resume_step = opt->initial_step;
    for (int epoch = opt->initial_epoch; epoch < opt->epochs && !run->stop; epoch++) {
        int rc = fit_epoch(run, epoch, &logs);
        if (rc < 0)
            return -1;
        if (rc == 0)
            run->history->epoch_logs[run->history->epochs++] = logs;
    }
    run->history->stopped_early = run->stop;
    double elapsed = now() - t0;
    run->history->samples_per_second = elapsed > 0 ? (double)run->samples / elapsed : 0;
    for (int i = 0; i < opt->ncallbacks; i++)
        if (opt->callbacks[i].on_train_end && opt->callbacks[i].on_train_end(run->model, &logs, opt->callbacks[i].user_data) < 0)
            return -1;
    return 0;
}

tw_history *tw_model_fit_n(tw_model *model, int nx, tw_tensor *const *x, int ny, tw_tensor *const *y,
                           const tw_fit_options *options)
{
    tw_fit_options defaults = tw_fit_options_default();
    const tw_fit_options *opt = options ? options : &defaults;
    fit_run run = {.model = model, .opt = opt, .first_loss = NAN, .ranks = 1};
    tw_batch all;
    if (tw__model_check_compiled(model, "fit") || make_batch("fit", model, nx, x, ny, y, &all) ||
        check_fit_options(opt))
        return NULL;
    tw_scope_begin();
    int rc = split_validation(&run, &all);
    if (!rc)
        rc = tw__model_ensure_built(model, &run.train, opt->seed);
    tw_model_state *st = model->state;
    st->keep_gradients = opt->expose_gradients;
    if (!rc && opt->distributed)
        rc = start_distributed(&run);
    if (!rc) {
        st->seed = opt->seed;
        run.history = calloc(1, sizeof *run.history);
        run.history->epoch_logs = calloc((size_t)opt->epochs, sizeof *run.history->epoch_logs);
        rc = fit_epochs(&run);
    }
    tw_scope_end();
    st->keep_gradients = false;
    drop_kept_gradients(st);
    free(run.exchange);
    free(run.rank_ms);
    if (rc) {
        tw_history_free(run.history);
        return NULL;
    }
    return run.history;
}

tw_history *tw_model_fit(tw_model *model, tw_tensor *x, tw_tensor *y, const tw_fit_options *options)
{
    return tw_model_fit_n(model, 1, &x, 1, &y, options);
}

void tw_history_free(tw_history *history)
{
    if (!history)
        return;
    free(history->epoch_logs);
    free(history);
}
