/* Optimizers (tf.keras.optimizers, Keras 2.11+): configuration with Keras'
 * defaults, names, creation and the iteration counter. Slots live in
 * slots.c, apply_gradients in apply.c, the update rules one per file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "optimizer_internal.h"

static const char *const kind_names[TW_OPTIMIZER_KIND_COUNT] = {
    [TW_OPTIMIZER_SGD] = "sgd",         [TW_OPTIMIZER_ADAM] = "adam",       [TW_OPTIMIZER_ADAMW] = "adamw",
    [TW_OPTIMIZER_RMSPROP] = "rmsprop", [TW_OPTIMIZER_ADAGRAD] = "adagrad",
};

static const tw_optimizer_algo *const algos[TW_OPTIMIZER_KIND_COUNT] = {
    [TW_OPTIMIZER_SGD] = &tw__sgd_algo,         [TW_OPTIMIZER_ADAM] = &tw__adam_algo,
    [TW_OPTIMIZER_ADAMW] = &tw__adam_algo, /* Adam plus the decoupled decay every rule applies */
    [TW_OPTIMIZER_RMSPROP] = &tw__rmsprop_algo, [TW_OPTIMIZER_ADAGRAD] = &tw__adagrad_algo,
};

tw_optimizer_config tw_optimizer_defaults(tw_optimizer_kind kind)
{
    tw_optimizer_config c = {.kind = kind};
    c.learning_rate = (tw_lr_schedule){.kind = TW_SCHEDULE_CONSTANT, .initial_learning_rate = 0.001};
    switch (kind) {
    case TW_OPTIMIZER_SGD:
        c.learning_rate.initial_learning_rate = 0.01;
        break;
    case TW_OPTIMIZER_ADAMW:
        c.weight_decay = 0.004;
        /* fall through */
    case TW_OPTIMIZER_ADAM:
        c.beta_1 = 0.9;
        c.beta_2 = 0.999;
        c.epsilon = 1e-7;
        break;
    case TW_OPTIMIZER_RMSPROP:
        c.rho = 0.9;
        c.epsilon = 1e-7;
        break;
    case TW_OPTIMIZER_ADAGRAD:
        c.initial_accumulator_value = 0.1;
        c.epsilon = 1e-7;
        break;
    default:
        break;
    }
    return c;
}

int tw_optimizer_kind_from_name(const char *name, tw_optimizer_kind *kind)
{
    for (int k = 0; name && k < TW_OPTIMIZER_KIND_COUNT; k++) {
        if (strcasecmp(name, kind_names[k]) == 0) {
            *kind = (tw_optimizer_kind)k;
            return 0;
        }
    }
    return tw_error_set("optimizer: unknown optimizer '%s'; expected one of sgd, adam, adamw, rmsprop, adagrad",
                        name ? name : "(null)");
}

const char *tw_optimizer_kind_name(tw_optimizer_kind kind)
{
    return kind >= 0 && kind < TW_OPTIMIZER_KIND_COUNT ? kind_names[kind] : NULL;
}

static int check_schedule(const char *name, const tw_lr_schedule *s)
{
    if (s->kind < TW_SCHEDULE_CONSTANT || s->kind > TW_SCHEDULE_STEP_DECAY)
        return tw_error_set("%s: unknown learning-rate schedule kind %d", name, (int)s->kind);
    if (!isfinite(s->initial_learning_rate))
        return tw_error_set("%s: learning rate %g is not finite", name, s->initial_learning_rate);
    if (s->kind != TW_SCHEDULE_CONSTANT && s->decay_steps <= 0)
        return tw_error_set("%s: the schedule's decay_steps must be positive, got %lld", name,
                            (long long)s->decay_steps);
    return 0;
}

typedef struct {
    const char *field;
    double value, lo, hi;
    bool hi_open;
} range_check;

static int check_range(const char *name, const range_check *r)
{
    if (r->value >= r->lo && (r->hi_open ? r->value < r->hi : r->value <= r->hi))
        return 0;
    return tw_error_set("%s: %s must be in [%g, %g%s, got %g", name, r->field, r->lo, r->hi, r->hi_open ? ")" : "]",
                        r->value);
}

/* Keras' own checks plus what would otherwise give NaN (beta 1, negative epsilon). */
static int check_config(const tw_optimizer_config *c)
{
    const char *name = tw_optimizer_kind_name(c->kind);
    if (!name)
        return tw_error_set("optimizer: unknown optimizer kind %d", (int)c->kind);
    if (check_schedule(name, &c->learning_rate) < 0)
        return -1;
    const range_check ranges[] = {
        {"momentum", c->momentum, 0, 1, false},
        {"beta_1", c->beta_1, 0, 1, true},
        {"beta_2", c->beta_2, 0, 1, true},
        {"rho", c->rho, 0, 1, false},
        {"epsilon", c->epsilon, 0, INFINITY, false},
        {"weight_decay", c->weight_decay, 0, INFINITY, false},
        {"initial_accumulator_value", c->initial_accumulator_value, 0, INFINITY, false},
        {"clipvalue", c->clipvalue, 0, INFINITY, false},
        {"clipnorm", c->clipnorm, 0, INFINITY, false},
        {"global_clipnorm", c->global_clipnorm, 0, INFINITY, false},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (check_range(name, &ranges[i]) < 0)
            return -1;
    if (c->clipnorm > 0 && c->global_clipnorm > 0)
        return tw_error_set("%s: at most one of clipnorm (%g) and global_clipnorm (%g) can be set", name, c->clipnorm,
                            c->global_clipnorm);
    return 0;
}

/* The counter as a variable of its own, outside the caller's scope. */
static tw_tensor *new_iterations(const char *optimizer_name)
{
    char name[64];
    snprintf(name, sizeof name, "%s/iterations", optimizer_name);
    tw_scope_begin();
    tw_tensor *zero = tw_full(0, TW_INT64, 0, NULL);
    tw_tensor *counter = zero ? tw_tensor_ref(tw_variable(zero, name, false)) : NULL;
    tw_scope_end();
    return counter;
}

tw_optimizer *tw_optimizer_new(const tw_optimizer_config *config)
{
    if (!config) {
        tw_error_set("optimizer: NULL config");
        return NULL;
    }
    if (check_config(config) < 0)
        return NULL;
    tw_optimizer *opt = calloc(1, sizeof *opt);
    if (!opt) {
        tw_error_set("optimizer: out of memory");
        return NULL;
    }
    opt->config = *config;
    opt->algo = algos[config->kind];
    opt->name = kind_names[config->kind];
    opt->nslots = opt->algo->slots(config, opt->slot_names, opt->slot_initial_values);
    if (!(opt->iterations = new_iterations(opt->name))) {
        free(opt);
        return NULL;
    }
    return opt;
}

tw_optimizer *tw_optimizer_new_named(const char *name, double learning_rate)
{
    tw_optimizer_kind kind;
    if (tw_optimizer_kind_from_name(name, &kind) < 0)
        return NULL;
    tw_optimizer_config config = tw_optimizer_defaults(kind);
    config.learning_rate.initial_learning_rate = learning_rate;
    return tw_optimizer_new(&config);
}

void tw_optimizer_free(tw_optimizer *opt)
{
    if (!opt)
        return;
    tw__optimizer_free_slots(opt);
    tw_tensor_unref(opt->iterations);
    free(opt);
}

const tw_optimizer_config *tw_optimizer_get_config(const tw_optimizer *opt)
{
    return opt ? &opt->config : NULL;
}

const tw_optimizer_algo *tw__optimizer_algo(tw_optimizer_kind kind)
{
    return kind >= 0 && kind < TW_OPTIMIZER_KIND_COUNT ? algos[kind] : NULL;
}

/* Read straight from storage (not tw_tensor_item): C code asks for the
 * count between steps, also while a step is being traced. On a device,
 * through its backend; -1 when that fails (the error is set). */
int64_t tw__optimizer_iteration_value(const tw_tensor *iterations)
{
    tw_device device = iterations->storage->device;
    if (device.kind == TW_DEVICE_CPU)
        return *(const int64_t *)tw__data(iterations);
    const tw_backend *b = tw__backend(device, "optimizer");
    int64_t value;
    return b && b->read_element(device.index, sizeof value, tw__data(iterations), &value) == 0 ? value : -1;
}

int tw__optimizer_place(tw_optimizer *opt, tw_device device)
{
    tw_device now = opt->iterations->storage->device;
    if (now.kind == device.kind && now.index == device.index)
        return 0;
    struct tw_tracer *tracer = tw__trace_suspend();
    tw_scope_begin();
    tw_tensor *moved = tw_tensor_to(opt->iterations, device);
    tw_tensor *counter = moved ? tw_tensor_ref(tw_variable(moved, opt->iterations->variable->name, false)) : NULL;
    tw_scope_end();
    tw__trace_resume(tracer);
    if (!counter)
        return -1;
    tw_tensor_unref(opt->iterations);
    opt->iterations = counter;
    return 0;
}

int64_t tw_optimizer_iterations(const tw_optimizer *opt)
{
    return opt ? tw__optimizer_iteration_value(opt->iterations) : 0;
}

void tw_optimizer_set_iterations(tw_optimizer *opt, int64_t iterations)
{
    if (!opt)
        return;
    int64_t value = iterations > 0 ? iterations : 0;
    tw_device device = opt->iterations->storage->device;
    if (device.kind == TW_DEVICE_CPU) {
        *(int64_t *)tw__data(opt->iterations) = value;
    } else {
        const tw_backend *b = tw__backend(device, "optimizer");
        if (b)
            b->copy_from_host(device.index, sizeof value, 0, NULL, tw__data(opt->iterations), NULL, &value, NULL);
    }
    atomic_fetch_add(&opt->iterations->storage->version, 1);
}

tw_tensor *tw_optimizer_iterations_variable(tw_optimizer *opt)
{
    return opt ? opt->iterations : NULL;
}

double tw_optimizer_learning_rate(const tw_optimizer *opt)
{
    return opt ? tw_lr_schedule_at(&opt->config.learning_rate, tw_optimizer_iterations(opt)) : NAN;
}
