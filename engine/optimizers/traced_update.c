/* The optimizer's update as ops, for apply_gradients inside a traced
 * function (TensorFlow's ResourceApplyAdam and friends play this part) and
 * eagerly for variables on a device, where the update must run.
 *
 * Each variable's update is one stateful op, "optimizer_update", that runs
 * the same fused in-place loop as the eager call. Its inputs: the variable,
 * its gradient, the iteration counter (a variable, read when the graph
 * runs: the learning rate of a schedule and Adam's bias correction follow
 * it), the configuration's numbers as a float64 constant, the slots, and
 * for global_clipnorm the clipping factor, computed from all gradients with
 * ops. Its ints: the kind, nesterov, the schedule's kind, decay_steps and
 * staircase, the slot count and whether the factor is given. After the
 * updates, an assign_add of the counter: graphs run their stateful nodes in
 * trace order, so the updates read the count before it moves. */
#include <math.h>
#include <string.h>

#include "backend_cpu/cpu_ops.h"
#include "optimizer_internal.h"

enum { A_KIND, A_NESTEROV, A_SCHEDULE, A_DECAY_STEPS, A_STAIRCASE, A_NSLOTS, A_HAS_SCALE, A_COUNT };
enum {
    H_LEARNING_RATE,
    H_DECAY_RATE,
    H_ALPHA,
    H_MOMENTUM,
    H_BETA_1,
    H_BETA_2,
    H_EPSILON,
    H_WEIGHT_DECAY,
    H_RHO,
    H_CLIPVALUE,
    H_CLIPNORM,
    H_GLOBAL_CLIPNORM,
    H_COUNT
};
enum { IN_VARIABLE, IN_GRADIENT, IN_ITERATIONS, IN_CONFIG, IN_SLOTS };

static void config_numbers(const tw_optimizer_config *c, double *h)
{
    h[H_LEARNING_RATE] = c->learning_rate.initial_learning_rate;
    h[H_DECAY_RATE] = c->learning_rate.decay_rate;
    h[H_ALPHA] = c->learning_rate.alpha;
    h[H_MOMENTUM] = c->momentum;
    h[H_BETA_1] = c->beta_1;
    h[H_BETA_2] = c->beta_2;
    h[H_EPSILON] = c->epsilon;
    h[H_WEIGHT_DECAY] = c->weight_decay;
    h[H_RHO] = c->rho;
    h[H_CLIPVALUE] = c->clipvalue;
    h[H_CLIPNORM] = c->clipnorm;
    h[H_GLOBAL_CLIPNORM] = c->global_clipnorm;
}

static tw_optimizer_config config_of(const tw_attrs *a, const double *h)
{
    return (tw_optimizer_config){
        .kind = (tw_optimizer_kind)a->i[A_KIND],
        .learning_rate = {.kind = (tw_schedule_kind)a->i[A_SCHEDULE],
                          .initial_learning_rate = h[H_LEARNING_RATE],
                          .decay_steps = a->i[A_DECAY_STEPS],
                          .decay_rate = h[H_DECAY_RATE],
                          .staircase = a->i[A_STAIRCASE] != 0,
                          .alpha = h[H_ALPHA]},
        .momentum = h[H_MOMENTUM],
        .nesterov = a->i[A_NESTEROV] != 0,
        .beta_1 = h[H_BETA_1],
        .beta_2 = h[H_BETA_2],
        .epsilon = h[H_EPSILON],
        .weight_decay = h[H_WEIGHT_DECAY],
        .rho = h[H_RHO],
        .clipvalue = h[H_CLIPVALUE],
        .clipnorm = h[H_CLIPNORM],
        .global_clipnorm = h[H_GLOBAL_CLIPNORM],
    };
}

static bool same_layout(const tw_tensor *a, const tw_tensor *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * a->ndim) == 0;
}

static bool is_scalar(const tw_tensor *t, tw_dtype dtype)
{
    return t->dtype == dtype && t->ndim == 0;
}

static int update_infer(const tw_op_call *call, tw_desc *outs)
{
    (void)outs;
    const tw_attrs *a = call->attrs;
    if (!a || a->ni != A_COUNT || !tw__optimizer_algo((tw_optimizer_kind)a->i[A_KIND]) || a->i[A_NSLOTS] < 0 ||
        a->i[A_NSLOTS] > TW_OPT_MAX_SLOTS)
        return tw_error_set("optimizer_update: expected %d ints (a known kind, at most %d slots)", A_COUNT,
                            TW_OPT_MAX_SLOTS);
    int nslots = (int)a->i[A_NSLOTS], want = IN_SLOTS + nslots + (a->i[A_HAS_SCALE] != 0);
    if (call->ninputs != want)
        return tw_error_set("optimizer_update: expected %d inputs, got %d", want, call->ninputs);
    tw_tensor *const *in = call->inputs;
    const tw_tensor *v = in[IN_VARIABLE], *config = in[IN_CONFIG];
    if (!v->variable || (v->dtype != TW_FLOAT32 && v->dtype != TW_FLOAT64))
        return tw_error_set("optimizer_update: input 0 must be a float32 or float64 variable");
    if (!same_layout(in[IN_GRADIENT], v))
        return tw_error_set("optimizer_update: the gradient does not match variable '%s'", v->variable->name);
    if (!in[IN_ITERATIONS]->variable || !is_scalar(in[IN_ITERATIONS], TW_INT64))
        return tw_error_set("optimizer_update: input 2 must be the int64 iteration counter variable");
    if (config->dtype != TW_FLOAT64 || config->ndim != 1 || config->shape[0] != H_COUNT)
        return tw_error_set("optimizer_update: input 3 must be the %d float64 configuration numbers", H_COUNT);
    for (int k = 0; k < nslots; k++)
        if (!in[IN_SLOTS + k]->variable || !same_layout(in[IN_SLOTS + k], v) || !tw_tensor_is_contiguous(in[IN_SLOTS + k]))
            return tw_error_set("optimizer_update: slot %d does not match variable '%s'", k, v->variable->name);
    if (a->i[A_HAS_SCALE] && !is_scalar(in[IN_SLOTS + nslots], TW_FLOAT64))
        return tw_error_set("optimizer_update: the clipping factor must be a float64 scalar");
    return tw_tensor_is_contiguous(v) ? 0 : tw_error_set("optimizer_update: variable '%s' is not contiguous",
                                                   v->variable->name);
}

/* The CPU backend's kernel (backend_cpu/cpu_ops.h), kept beside the attrs
 * layout it decodes; it runs the eager optimizers' own update loops. */
int tw__cpu_optimizer_update(const tw_op_call *call, tw_tensor *const *outs)
{
    (void)outs;
    const tw_attrs *a = call->attrs;
    tw_tensor *const *in = call->inputs;
    tw_tensor *config_tensor = tw__contiguous_raw(in[IN_CONFIG]);
    if (!config_tensor)
        return -1;
    tw_optimizer_config c = config_of(a, tw__data(config_tensor));
    tw_tensor_unref(config_tensor);
    int nslots = (int)a->i[A_NSLOTS];
    int64_t done = tw__optimizer_iteration_value(in[IN_ITERATIONS]);
    double scale = a->i[A_HAS_SCALE] ? *(const double *)tw__data(in[IN_SLOTS + nslots]) : 1;
    return tw__optimizer_update_variable(&c, tw__optimizer_algo(c.kind), nslots, in[IN_VARIABLE], in[IN_GRADIENT],
                                         &in[IN_SLOTS], tw_lr_schedule_at(&c.learning_rate, done), scale, done + 1);
}

const tw_op_def tw_op_optimizer_update = {
    .name = "optimizer_update",
    .id = TW_OP_ID_optimizer_update,
    .noutputs = 0, .ninputs = TW_OP_VARIADIC,
    .flags = TW_OP_NOT_DIFFERENTIABLE | TW_OP_STATEFUL,
    .infer = update_infer,
};

/* TensorFlow's clip_by_global_norm factor as ops: clip / max(norm, clip). */
static tw_tensor *global_scale(const tw_optimizer *opt, int n, tw_tensor *const *gradients)
{
    tw_tensor *total = NULL;
    for (int i = 0; i < n; i++) {
        if (!gradients[i])
            continue;
        tw_tensor *squares = tw_sum(tw_square(tw_cast(gradients[i], TW_FLOAT64)), 0, NULL, false);
        total = total ? tw_add(total, squares) : squares;
    }
    tw_tensor *clip = tw_scalar(opt->config.global_clipnorm);
    return tw_div(clip, tw_maximum(tw_sqrt(total), clip));
}

/* The slots now, outside the trace: creating them is not part of the step. */
static int build_slots(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients)
{
    int first = 0;
    while (first < n - 1 && !gradients[first])
        first++;
    if (n > 0 && tw__optimizer_place(opt, variables[first]->storage->device) < 0)
        return -1;
    struct tw_tracer *tracer = tw__trace_suspend();
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (gradients[i] && !tw__optimizer_slot_set(opt, variables[i]))
            rc = -1;
    tw__trace_resume(tracer);
    return rc;
}

static tw_attrs update_attrs(const tw_optimizer *opt, bool has_scale)
{
    const tw_optimizer_config *c = &opt->config;
    tw_attrs a = {.ni = A_COUNT};
    a.i[A_KIND] = c->kind;
    a.i[A_NESTEROV] = c->nesterov;
    a.i[A_SCHEDULE] = c->learning_rate.kind;
    a.i[A_DECAY_STEPS] = c->learning_rate.decay_steps;
    a.i[A_STAIRCASE] = c->learning_rate.staircase;
    a.i[A_NSLOTS] = opt->nslots;
    a.i[A_HAS_SCALE] = has_scale;
    return a;
}

int tw__optimizer_apply_traced(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients)
{
    if (build_slots(opt, n, variables, gradients) < 0)
        return -1;
    tw_scope_begin();
    tw_name_scope_push(tw_optimizer_kind_name(opt->config.kind)); /* the update is one box in the graph view */
    double numbers[H_COUNT];
    config_numbers(&opt->config, numbers);
    tw_tensor *config = tw_tensor_from_data(numbers, TW_FLOAT64, 1, (int64_t[]){H_COUNT});
    tw_device device = opt->iterations->storage->device; /* the variables', after build_slots */
    if (config && (config->storage->device.kind != device.kind || config->storage->device.index != device.index))
        config = tw_tensor_to(config, device);
    bool has_scale = opt->config.global_clipnorm > 0 && !(opt->config.clipnorm > 0);
    tw_tensor *scale = has_scale ? global_scale(opt, n, gradients) : NULL;
    tw_attrs attrs = update_attrs(opt, has_scale);
    int rc = config && (!has_scale || scale) ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!gradients[i])
            continue;
        const tw_slot_set *set = tw__optimizer_slot_set(opt, variables[i]);
        tw_tensor *inputs[IN_SLOTS + TW_OPT_MAX_SLOTS + 1] = {variables[i], gradients[i], opt->iterations, config};
        for (int k = 0; k < opt->nslots; k++)
            inputs[IN_SLOTS + k] = set->slots[k];
        if (has_scale)
            inputs[IN_SLOTS + opt->nslots] = scale;
        tw_tensor *none[1];
        rc = tw_dispatch(&tw_op_optimizer_update, IN_SLOTS + opt->nslots + has_scale, inputs, &attrs, NULL, none);
    }
    if (rc == 0)
        rc = tw_assign_add(opt->iterations, tw_scalar(1));
    tw_name_scope_pop();
    tw_scope_end();
    return rc;
}
