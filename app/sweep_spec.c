/* Sweep specifications and their trials (sweep_spec.h). */
#include "sweep_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include <tw/error.h>
#include <tw/layers.h>
#include <tw/optimizers.h>
#include <tw/run_store.h>

typedef struct {
    const char *option, *key, *what;
    double min, max;
    bool whole;
} param_def;

static const param_def params[TWB_SWEEP_NPARAMS] = {
    [TWB_SWEEP_LEARNING_RATE] = {"--learning-rate", "learning_rate", "a learning rate (above 0, at most 1000)",
                                 0, 1e3, false},
    [TWB_SWEEP_BATCH_SIZE] = {"--batch-size", "batch_size", "a batch size (a whole number from 1 to 10000000)", 1,
                              1e7, true},
    [TWB_SWEEP_OPTIMIZER] = {"--optimizer", "optimizer", "an optimizer", 0, 0, false},
    [TWB_SWEEP_EPOCHS] = {"--epochs", "epochs", "a number of epochs (a whole number from 1 to 1000000)", 1, 1e6,
                          true},
    [TWB_SWEEP_SEED] = {"--seed", "seed", "a seed (a whole number from 0 to 2^53)", 0, 9007199254740992.0, true},
};

const char *twb_sweep_param_option(twb_sweep_param p)
{
    return params[p].option;
}

const char *twb_sweep_param_key(twb_sweep_param p)
{
    return params[p].key;
}

/* A layer property's values: any finite number here; the layer's own
 * rules later (twb_sweep_spec_check_model). */
static const param_def layer_def = {NULL, NULL, "a number", -INFINITY, INFINITY, false};

/* One number of d's kind from text (option: d's, or a layer axis's); -1
 * with a message otherwise. */
static int parse_value(const param_def *d, const char *option, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    bool number = !errno && end != text && !*end && isfinite(v);
    /* the learning rate's 0 is excluded: an optimizer that never moves */
    bool in_range = d == &params[TWB_SWEEP_LEARNING_RATE] ? v > d->min && v <= d->max : v >= d->min && v <= d->max;
    if (!number || !in_range || (d->whole && v != floor(v)))
        return tw_error_set("twb sweep: %s: '%s' is not %s", option, text, d->what);
    *out = v;
    return 0;
}

static int set_range(twb_sweep_axis *axis, const param_def *d, const char *option, const char *text,
                     const char *colon)
{
    if (d == &params[TWB_SWEEP_OPTIMIZER])
        return tw_error_set("twb sweep: --optimizer: '%s': optimizers are listed (adam,sgd), not ranges", text);
    char *lo = g_strndup(text, (gsize)(colon - text));
    int rc = parse_value(d, option, lo, &axis->min) || parse_value(d, option, colon + 1, &axis->max) ? -1 : 0;
    g_free(lo);
    if (rc)
        return -1;
    if (axis->min > axis->max)
        return tw_error_set("twb sweep: %s: the range %s has its minimum above its maximum", option, text);
    axis->range = true;
    return 0;
}

/* A list or a range of d's values into the axis. */
static int set_axis(twb_sweep_axis *axis, const param_def *d, const char *option, const char *text)
{
    bool optimizer = d == &params[TWB_SWEEP_OPTIMIZER];
    if (axis->given)
        return tw_error_set("twb sweep: %s given twice; list every value in one (%s 1,2,3)", option, option);
    if (!text || !*text)
        return tw_error_set(optimizer ? "twb sweep: %s: no values (give a list such as %s)"
                                      : "twb sweep: %s: no values (give a list such as %s or a range min:max)",
                            option, optimizer ? "adam,sgd" : "1,2");
    axis->given = true;
    const char *colon = strchr(text, ':');
    if (colon)
        return set_range(axis, d, option, text, colon);
    char **items = g_strsplit(text, ",", -1);
    axis->n = (int)g_strv_length(items);
    if (optimizer)
        axis->names = g_new0(char *, axis->n + 1);
    else
        axis->values = g_new0(double, axis->n);
    int rc = 0;
    for (int i = 0; i < axis->n && !rc; i++) {
        char *item = g_strstrip(items[i]);
        tw_optimizer_kind kind;
        if (!*item)
            rc = tw_error_set("twb sweep: %s: an empty value in '%s'", option, text);
        else if (optimizer && tw_optimizer_kind_from_name(item, &kind)) {
            const char *why = tw_last_error(); /* "optimizer: unknown optimizer 'x'; expected ..." */
            rc = tw_error_set("twb sweep: --optimizer: %s", g_str_has_prefix(why, "optimizer: ") ? why + 11 : why);
        }
        else if (optimizer)
            axis->names[i] = g_strdup(item);
        else
            rc = parse_value(d, option, item, &axis->values[i]);
    }
    g_strfreev(items);
    return rc;
}

int twb_sweep_spec_set(twb_sweep_spec *spec, twb_sweep_param p, const char *text)
{
    return set_axis(&spec->axes[p], &params[p], params[p].option, text);
}

int twb_sweep_spec_set_layer(twb_sweep_spec *spec, const char *text)
{
    const char *eq = text ? strchr(text, '=') : NULL;
    char *target = eq ? g_strndup(text, (gsize)(eq - text)) : NULL;
    char *dot = target ? strrchr(target, '.') : NULL; /* a property's key has no dot; a layer's name may */
    if (!dot || dot == target || !dot[1]) {
        g_free(target);
        return tw_error_set("twb sweep: --set: '%s' is not LAYER.PROPERTY=VALUES (such as dense_1.units=32,64)",
                            text ? text : "");
    }
    char *option = g_strdup_printf("--set %s", target);
    for (int i = 0; i < spec->nlayers; i++)
        if (!strcmp(spec->layers[i].option, option)) {
            tw_error_set("twb sweep: %s given twice; list every value in one (--set %s=1,2,3)", option, target);
            g_free(option);
            g_free(target);
            return -1;
        }
    if (spec->nlayers == TWB_SWEEP_MAX_LAYER_AXES) {
        g_free(option);
        g_free(target);
        return tw_error_set("twb sweep: --set: more than %d layer properties", TWB_SWEEP_MAX_LAYER_AXES);
    }
    twb_sweep_layer_axis *l = &spec->layers[spec->nlayers++];
    *dot = 0;
    l->layer = g_strdup(target);
    l->property = g_strdup(dot + 1);
    l->option = option;
    g_free(target);
    return set_axis(&l->axis, &layer_def, l->option, eq + 1);
}

/* The engine's message without the key it starts with ("units: expected
 * ..."): the --set named it already. */
static const char *without_key(const char *message, const char *key)
{
    size_t n = strlen(key);
    return !strncmp(message, key, n) && !strncmp(message + n, ": ", 2) ? message + n + 2 : message;
}

/* "units, rate": the numeric properties of the layer's class. */
static char *numeric_properties(const tw_layer_class *klass)
{
    GString *out = g_string_new(NULL);
    for (int i = 0; i < klass->nparams; i++)
        if (klass->params[i].type == TW_PARAM_INT || klass->params[i].type == TW_PARAM_FLOAT)
            g_string_append_printf(out, "%s%s", out->len ? ", " : "", klass->params[i].key);
    return g_string_free(out, FALSE);
}

/* Whether a copy of the layer takes the value: -1 with a message otherwise. */
static int check_value(const twb_sweep_layer_axis *l, tw_layer *copy, double v)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    if (!tw_layer_set(copy, l->property, g_ascii_dtostr(text, sizeof text, v)))
        return 0;
    char *why = g_strdup(without_key(tw_last_error(), l->property));
    tw_error_set("twb sweep: %s: %s", l->option, why);
    g_free(why);
    return -1;
}

static int check_layer_axis(twb_sweep_layer_axis *l, const tw_model *model)
{
    tw_layer *layer = tw_model_find_layer_path(model, l->layer, NULL);
    if (!layer) {
        char *why = g_strdup(tw_last_error()); /* the candidates: the layers of that name, or all */
        tw_error_set("twb sweep: %s: %s", l->option, why);
        g_free(why);
        return -1;
    }
    const tw_layer_class *klass = tw_layer_class_of(layer);
    const tw_param_def *def = tw_layer_class_param(klass, l->property);
    if (!def || (def->type != TW_PARAM_INT && def->type != TW_PARAM_FLOAT)) {
        char *numeric = numeric_properties(klass);
        tw_error_set("twb sweep: %s: layer '%s' (%s) has no numeric property '%s'%s%s", l->option, l->layer,
                     klass->name, l->property, *numeric ? "; it has " : "", numeric);
        g_free(numeric);
        return -1;
    }
    l->whole = def->type == TW_PARAM_INT;
    tw_layer *copy = tw_layer_clone(layer, NULL);
    if (!copy)
        return -1;
    int rc = 0;
    if (l->axis.range)
        rc = check_value(l, copy, l->axis.min) || check_value(l, copy, l->axis.max) ? -1 : 0;
    for (int i = 0; i < l->axis.n && !rc && l->axis.values; i++)
        rc = check_value(l, copy, l->axis.values[i]);
    tw_layer_unref(copy);
    return rc;
}

int twb_sweep_spec_check_model(twb_sweep_spec *spec, const tw_model *model)
{
    for (int i = 0; i < spec->nlayers; i++)
        if (check_layer_axis(&spec->layers[i], model))
            return -1;
    return 0;
}

static bool axis_swept(const twb_sweep_axis *axis)
{
    return axis->given && (axis->range || axis->n > 1);
}

bool twb_sweep_param_swept(const twb_sweep_spec *spec, twb_sweep_param p)
{
    return axis_swept(&spec->axes[p]);
}

bool twb_sweep_layer_swept(const twb_sweep_spec *spec, int i)
{
    return axis_swept(&spec->layers[i].axis);
}

void twb_sweep_spec_clear(twb_sweep_spec *spec)
{
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
        g_free(spec->axes[p].values);
        g_strfreev(spec->axes[p].names);
    }
    for (int i = 0; i < spec->nlayers; i++) {
        g_free(spec->layers[i].layer);
        g_free(spec->layers[i].property);
        g_free(spec->layers[i].option);
        g_free(spec->layers[i].axis.values);
    }
    *spec = (twb_sweep_spec){0};
}

/* Value i of axis p (a list) into the settings. */
static void set_listed(tw_train_settings *s, const twb_sweep_spec *spec, twb_sweep_param p, int i)
{
    const twb_sweep_axis *axis = &spec->axes[p];
    double v = axis->values ? axis->values[i] : 0;
    switch (p) {
    case TWB_SWEEP_LEARNING_RATE: s->learning_rate = v; break;
    case TWB_SWEEP_BATCH_SIZE: s->batch_size = (int64_t)v; break;
    case TWB_SWEEP_OPTIMIZER: s->optimizer = axis->names[i]; break;
    case TWB_SWEEP_EPOCHS: s->epochs = (int)v; break;
    case TWB_SWEEP_SEED: s->seed = (uint64_t)v; break;
    default: break;
    }
}

/* A draw from axis p's range: the learning rate log-uniform (its scale),
 * whole numbers uniform (the ends are whole: parse_value checks them). */
static void set_drawn(tw_train_settings *s, const twb_sweep_axis *axis, twb_sweep_param p, GRand *rand)
{
    if (p == TWB_SWEEP_LEARNING_RATE) {
        s->learning_rate = exp(g_rand_double_range(rand, log(axis->min), log(axis->max)));
        if (s->learning_rate > axis->max) /* exp(log(x)) may round above x */
            s->learning_rate = axis->max;
        return;
    }
    double lo = axis->min, hi = axis->max;
    double v = lo + floor(g_rand_double(rand) * (hi - lo + 1));
    if (v > hi)
        v = hi;
    if (p == TWB_SWEEP_BATCH_SIZE)
        s->batch_size = (int64_t)v;
    else if (p == TWB_SWEEP_EPOCHS)
        s->epochs = (int)v;
    else
        s->seed = (uint64_t)v;
}

/* A layer axis's draw from its range: whole numbers uniform (the ends are
 * whole: tw_layer_set took them), others uniform. */
static double draw_layer_value(const twb_sweep_layer_axis *l, GRand *rand)
{
    const twb_sweep_axis *axis = &l->axis;
    double v = l->whole ? axis->min + floor(g_rand_double(rand) * (axis->max - axis->min + 1))
                        : g_rand_double_range(rand, axis->min, axis->max);
    return v > axis->max ? axis->max : v;
}

static int check_axis(const twb_sweep_spec *spec, const twb_sweep_axis *axis, const char *option, double *grid)
{
    if (axis->range && !spec->random)
        return tw_error_set("twb sweep: %s: a range (%g:%g) needs --random; list the values for a grid", option,
                            axis->min, axis->max);
    if (axis->given && !axis->range)
        *grid *= axis->n;
    return 0;
}

static int check_trials(const twb_sweep_spec *spec, double *grid)
{
    *grid = 1;
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++)
        if (check_axis(spec, &spec->axes[p], params[p].option, grid))
            return -1;
    for (int i = 0; i < spec->nlayers; i++)
        if (check_axis(spec, &spec->layers[i].axis, spec->layers[i].option, grid))
            return -1;
    if (spec->random && spec->trials < 1)
        return tw_error_set("twb sweep: --random needs --trials N (how many draws)");
    bool swept = false; /* a range, or more than one value */
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++)
        swept |= spec->axes[p].given && (spec->axes[p].range || spec->axes[p].n > 1);
    for (int i = 0; i < spec->nlayers; i++)
        swept |= spec->layers[i].axis.range || spec->layers[i].axis.n > 1;
    if (spec->random && !swept)
        return tw_error_set("twb sweep: --random draws the swept settings' values, and none is swept; give one "
                            "(--learning-rate 1e-4:1e-2, --batch-size 32,64, --set LAYER.PROPERTY=8:64, ...)");
    if (!spec->random && !spec->trials && *grid > TWB_SWEEP_MAX_TRIALS)
        return tw_error_set("twb sweep: the grid has %.0f trials, more than %d; list fewer values or add --trials N",
                            *grid, TWB_SWEEP_MAX_TRIALS);
    return 0;
}

/* Layer axis i's value in trial t: drawn, picked at random, or the grid's
 * (rest: the grid index left for this axis and the slower ones). */
static double layer_value(const twb_sweep_spec *spec, int i, GRand *rand, int *rest)
{
    const twb_sweep_layer_axis *l = &spec->layers[i];
    if (l->axis.range)
        return draw_layer_value(l, rand);
    if (spec->random)
        return l->axis.values[g_rand_int_range(rand, 0, l->axis.n)];
    double v = l->axis.values[*rest % l->axis.n];
    *rest /= l->axis.n;
    return v;
}

int twb_sweep_spec_trials(const twb_sweep_spec *spec, const tw_train_settings *base, tw_train_settings **trials,
                          int *n)
{
    *trials = NULL;
    *n = 0;
    double grid;
    if (check_trials(spec, &grid))
        return -1;
    int count = spec->random ? spec->trials : (int)(spec->trials ? MIN(spec->trials, grid) : grid);
    /* one block: the trials, then each trial's layer values */
    tw_train_settings *out = g_malloc(sizeof *out * (size_t)count + sizeof(tw_layer_value) * (size_t)count *
                                      (size_t)spec->nlayers);
    tw_layer_value *values = (tw_layer_value *)(out + count);
    GRand *rand = g_rand_new_with_seed_array((const guint32[]){(guint32)spec->sample_seed,
                                                              (guint32)(spec->sample_seed >> 32)}, 2);
    for (int t = 0; t < count; t++) {
        out[t] = *base;
        out[t].nlayer_values = spec->nlayers;
        out[t].layer_values = spec->nlayers ? values + (size_t)t * (size_t)spec->nlayers : NULL;
        int rest = t; /* the grid's index, the last parameter fastest: the layer properties last */
        for (int i = spec->nlayers - 1; i >= 0; i--)
            out[t].layer_values[i] = (tw_layer_value){spec->layers[i].layer, spec->layers[i].property,
                                                      layer_value(spec, i, rand, &rest)};
        for (int p = TWB_SWEEP_NPARAMS - 1; p >= 0; p--) {
            const twb_sweep_axis *axis = &spec->axes[p];
            if (!axis->given)
                continue;
            if (axis->range)
                set_drawn(&out[t], axis, (twb_sweep_param)p, rand);
            else if (spec->random)
                set_listed(&out[t], spec, (twb_sweep_param)p, g_rand_int_range(rand, 0, axis->n));
            else {
                set_listed(&out[t], spec, (twb_sweep_param)p, rest % axis->n);
                rest /= axis->n;
            }
        }
    }
    g_rand_free(rand);
    *trials = out;
    *n = count;
    return 0;
}

char *twb_sweep_default_name(void)
{
    GDateTime *now = g_date_time_new_now_local();
    char *name = g_date_time_format(now, "sweep-%Y%m%d-%H%M%S");
    g_date_time_unref(now);
    return name;
}

void twb_sweep_name_trials(tw_train_settings *trials, int n, const char *sweep_name)
{
    int width = n >= 100 ? 3 : n >= 10 ? 2 : 1;
    for (int i = 0; i < n; i++)
        trials[i].run_name = g_strdup_printf("%s-%0*d", sweep_name, width, i + 1);
}

int twb_sweep_check_names_free(const char *logdb, const tw_train_settings *trials, int n)
{
    /* no runs yet: absent, or a run (the window's Train) is creating it */
    if (tw_run_store_is_new(logdb))
        return 0;
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    if (!store)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        tw_run_info run;
        if (tw_run_store_get_run(store, trials[i].run_name, &run) == 0) {
            rc = tw_error_set("%s: a run named '%s' exists already", logdb, trials[i].run_name);
            tw_run_info_clear(&run);
        }
    }
    tw_run_store_close(store);
    return rc;
}

char *twb_sweep_describe(const twb_sweep_spec *spec, const tw_train_settings *v)
{
    GString *out = g_string_new(NULL);
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
        if (!twb_sweep_param_swept(spec, (twb_sweep_param)p))
            continue;
        g_string_append_printf(out, "%s%s=", out->len ? " " : "", params[p].key);
        switch ((twb_sweep_param)p) {
        case TWB_SWEEP_LEARNING_RATE: g_string_append_printf(out, "%.4g", v->learning_rate); break;
        case TWB_SWEEP_BATCH_SIZE: g_string_append_printf(out, "%lld", (long long)v->batch_size); break;
        case TWB_SWEEP_OPTIMIZER: g_string_append(out, v->optimizer); break;
        case TWB_SWEEP_EPOCHS: g_string_append_printf(out, "%d", v->epochs); break;
        default: g_string_append_printf(out, "%llu", (unsigned long long)v->seed); break;
        }
    }
    for (int i = 0; i < spec->nlayers && i < v->nlayer_values; i++) {
        const tw_layer_value *l = &v->layer_values[i];
        if (!twb_sweep_layer_swept(spec, i))
            continue;
        g_string_append_printf(out, "%s%s.%s=", out->len ? " " : "", l->layer, l->property);
        if (l->value == floor(l->value) && fabs(l->value) < 1e15) /* units, filters: every digit */
            g_string_append_printf(out, "%.0f", l->value);
        else
            g_string_append_printf(out, "%.4g", l->value);
    }
    return g_string_free(out, FALSE);
}
