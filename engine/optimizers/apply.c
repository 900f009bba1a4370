/* apply_gradients: validate every pair first (so a bad call changes
 * nothing), clip, then run each variable's fused in-place update and bump
 * the storage versions so tapes that saw the old values refuse them. While
 * a function is traced the same update becomes graph ops instead
 * (traced_update.c). */
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
int tw__optimizer_update_variable(const tw_optimizer_config *c, const tw_optimizer_algo *algo, int nslots,
                                  tw_tensor *v, tw_tensor *gradient, tw_tensor *const *slots, double lr,
                                  double scale, int64_t t)
{
    tw_tensor *g = tw__contiguous_raw(gradient);
    if (!g)
        return -1;
    tw_update u = {
        .n = v->numel,
        .w = tw__data(v),
        .g = tw__data(g),
        .lr = lr,
        .keep = 1 - lr * c->weight_decay,
        .scale = c->clipnorm > 0 ? norm_scale(sum_of_squares(g), c->clipnorm) : scale,
        .clip = c->clipvalue > 0 && !(c->clipnorm > 0) && !(c->global_clipnorm > 0) ? c->clipvalue : INFINITY,
        .t = t,
        .config = c,
    };
    for (int k = 0; k < nslots; k++)
        u.slots[k] = tw__data(slots[k]);
    algo->update[v->dtype == TW_FLOAT64](&u);
    atomic_fetch_add(&v->storage->version, 1);
    for (int k = 0; k < nslots; k++)
        atomic_fetch_add(&slots[k]->storage->version, 1);
    tw_tensor_unref(g);
    return 0;
}

int tw__optimizer_check_call(const tw_optimizer *opt, int n, tw_tensor *const *variables,
                             tw_tensor *const *gradients)
{
    if (n < 0 || (n > 0 && (!variables || !gradients)))
        return tw_error_set("%s: apply_gradients needs n >= 0 variables and gradients, got n = %d", opt->name, n);
    int given = 0;
    for (int i = 0; i < n; i++) {
        if (check_pair(opt, variables[i], gradients[i]) < 0)
            return -1;
        given += gradients[i] != NULL;
    }
    return n > 0 && given == 0 ? no_gradients(opt, n, variables) : 0;
}

int tw_optimizer_apply_gradients(tw_optimizer *opt, int n, tw_tensor *const *variables, tw_tensor *const *gradients)
{
    if (!opt)
        return tw_error_set("optimizer: apply_gradients on a NULL optimizer");
    if (tw__optimizer_check_call(opt, n, variables, gradients) < 0)
        return -1;
    int first = 0;
    while (first < n - 1 && !gradients[first])
        first++;
    tw_device device = n > 0 ? variables[first]->storage->device : TW_CPU;
    if (tw__tracer || device.kind != TW_DEVICE_CPU)
        return tw__optimizer_apply_traced(opt, n, variables, gradients);
    double scale = global_scale(opt, n, gradients);
    if (scale < 0)
        return -1;
    double lr = tw_optimizer_learning_rate(opt);
    int64_t t = tw_optimizer_iterations(opt) + 1;
    for (int i = 0; i < n; i++) {
        if (!gradients[i])
            continue;
        tw_slot_set *set = tw__optimizer_slot_set(opt, variables[i]);
        if (!set || tw__optimizer_update_variable(&opt->config, opt->algo, opt->nslots, variables[i], gradients[i],
                                                  set->slots, lr, scale, t) < 0)
            return -1;
    }
    tw_optimizer_set_iterations(opt, t);
    return 0;
}
