/* apply_gradients: validate every pair first (so a bad call changes
 * nothing), clip, then run each variable's fused in-place update and bump
 * the storage versions so tapes that saw the old values refuse them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optimizer_internal.h"

static int check_pair(const tw_optimizer *opt, const tw_tensor *v, const tw_tensor *g)
{
    if (tw__optimizer_check_variable(opt, v) < 0)
        return -1;
    if (!g)
        return 0;
    if (g->dtype != v->dtype)
        return tw_error_set("%s: the gradient of variable '%s' is %s but the variable is %s", opt->name,
                            v->variable->name, tw_dtype_name(g->dtype), tw_dtype_name(v->dtype));
    if (g->ndim != v->ndim || memcmp(g->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim) != 0) {
        char a[160], b[160];
        return tw_error_set("%s: gradient of shape %s does not match variable '%s' of shape %s", opt->name,
                            tw_shape_str(g->ndim, g->shape, a, sizeof a), v->variable->name,
                            tw_shape_str(v->ndim, v->shape, b, sizeof b));
    }
    return 0;
}

/* Keras' "No gradients provided for any variable", naming them. */
static int no_gradients(const tw_optimizer *opt, int n, tw_tensor *const *variables)
{
    char names[512] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "", variables[i]->variable->name);
    }
    return tw_error_set("%s: no gradients provided for any variable: %s", opt->name, names);
}

static double sum_of_squares(const tw_tensor *g)
{
    double s = 0;
    if (g->dtype == TW_FLOAT32) {
        const float *d = tw__data(g);
        for (int64_t i = 0; i < g->numel; i++)
            s += (double)d[i] * d[i];
    } else {
        const double *d = tw__data(g);
        for (int64_t i = 0; i < g->numel; i++)
            s += d[i] * d[i];
    }
    return s;
}

/* TensorFlow's clip_by_norm factor: clip_norm / max(norm, clip_norm). */
static double norm_scale(double sum_squares, double clip_norm)
{
    return clip_norm / fmax(sqrt(sum_squares), clip_norm);
}

/* The global_clipnorm factor over all gradients (1 when off); -1 on failure. */
static double global_scale(const tw_optimizer *opt, int n, tw_tensor *const *gradients)
{
    if (!(opt->config.global_clipnorm > 0))
        return 1;
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (!gradients[i])
            continue;
        tw_tensor *g = tw__contiguous_raw(gradients[i]);
        if (!g)
            return -1;
        total += sum_of_squares(g);
        tw_tensor_unref(g);
    }
    return norm_scale(total, opt->config.global_clipnorm);
}

/* One variable. As Keras 2.11+ (_clip_gradients), one kind of clipping
 * applies: clipnorm, else global_clipnorm, else clipvalue. */
static int update_variable(tw_optimizer *opt, tw_update u, tw_tensor *v, tw_tensor *gradient)
{
    tw_slot_set *set = tw__optimizer_slot_set(opt, v);
    tw_tensor *g = set ? tw__contiguous_raw(gradient) : NULL;
    if (!g)
        return -1;
    const tw_optimizer_config *c = &opt->config;
    if (c->clipnorm > 0)
        u.scale = norm_scale(sum_of_squares(g), c->clipnorm);
    if (c->clipvalue > 0 && !(c->clipnorm > 0) && !(c->global_clipnorm > 0))
        u.clip = c->clipvalue;
    u.n = v->numel;
    u.w = tw__data(v);
    u.g = tw__data(g);
    for (int k = 0; k < opt->nslots; k++)
        u.slots[k] = tw__data(set->slots[k]);
    opt->algo->update[v->dtype == TW_FLOAT64](&u);
    atomic_fetch_add(&v->storage->version, 1);
    for (int k = 0; k < opt->nslots; k++)
        atomic_fetch_add(&set->slots[k]->storage->version, 1);
    tw_tensor_unref(g);
    return 0;
}

int tw_optimizer_apply_gradients(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients)
{
    if (!opt)
        return tw_error_set("optimizer: apply_gradients on a NULL optimizer");
    if (tw__tracer) /* its fused in-place update is not an op: a graph would skip it */
        tw__trace_unsupported("tw_optimizer_apply_gradients (the optimizer's update is not a graph op yet)");
    if (n < 0 || (n > 0 && (!variables || !gradients)))
        return tw_error_set("%s: apply_gradients needs n >= 0 variables and gradients, got n = %d", opt->name, n);
    int given = 0;
    for (int i = 0; i < n; i++) {
        if (check_pair(opt, variables[i], gradients[i]) < 0)
            return -1;
        given += gradients[i] != NULL;
    }
    if (n > 0 && given == 0)
        return no_gradients(opt, n, variables);
    double scale = global_scale(opt, n, gradients);
    if (scale < 0)
        return -1;
    double lr = tw_optimizer_learning_rate(opt);
    tw_update u = {
        .lr = lr,
        .keep = 1 - lr * opt->config.weight_decay,
        .scale = scale,
        .clip = INFINITY,
        .t = opt->iterations + 1,
        .config = &opt->config,
    };
    for (int i = 0; i < n; i++)
        if (gradients[i] && update_variable(opt, u, variables[i], gradients[i]) < 0)
            return -1;
    opt->iterations++;
    return 0;
}
