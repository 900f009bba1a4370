/* Sweep specifications and their trials (sweep_spec.h). */
#include "sweep_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include <tw/error.h>
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

/* One number of p's kind from text; -1 with a message otherwise. */
static int parse_value(twb_sweep_param p, const char *text, double *out)
{
    const param_def *d = &params[p];
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    bool number = !errno && end != text && !*end && isfinite(v);
    /* the learning rate's 0 is excluded: an optimizer that never moves */
    bool in_range = p == TWB_SWEEP_LEARNING_RATE ? v > d->min && v <= d->max : v >= d->min && v <= d->max;
    if (!number || !in_range || (d->whole && v != floor(v)))
        return tw_error_set("twb sweep: %s: '%s' is not %s", d->option, text, d->what);
    *out = v;
    return 0;
}

static int set_range(twb_sweep_axis *axis, twb_sweep_param p, const char *text, const char *colon)
{
    const param_def *d = &params[p];
    if (p == TWB_SWEEP_OPTIMIZER)
        return tw_error_set("twb sweep: --optimizer: '%s': optimizers are listed (adam,sgd), not ranges", text);
    char *lo = g_strndup(text, (gsize)(colon - text));
    int rc = parse_value(p, lo, &axis->min) || parse_value(p, colon + 1, &axis->max) ? -1 : 0;
    g_free(lo);
    if (rc)
        return -1;
    if (axis->min > axis->max)
        return tw_error_set("twb sweep: %s: the range %s has its minimum above its maximum", d->option, text);
    axis->range = true;
    return 0;
}

int twb_sweep_spec_set(twb_sweep_spec *spec, twb_sweep_param p, const char *text)
{
    const param_def *d = &params[p];
    twb_sweep_axis *axis = &spec->axes[p];
    if (axis->given)
        return tw_error_set("twb sweep: %s given twice; list every value in one (%s 1,2,3)", d->option, d->option);
    if (!text || !*text)
        return tw_error_set("twb sweep: %s: no values (give a list such as %s or a range min:max)", d->option,
                            p == TWB_SWEEP_OPTIMIZER ? "adam,sgd" : "1,2");
    axis->given = true;
    const char *colon = strchr(text, ':');
    if (colon)
        return set_range(axis, p, text, colon);
    char **items = g_strsplit(text, ",", -1);
    axis->n = (int)g_strv_length(items);
    if (p == TWB_SWEEP_OPTIMIZER)
        axis->names = g_new0(char *, axis->n + 1);
    else
        axis->values = g_new0(double, axis->n);
    int rc = 0;
    for (int i = 0; i < axis->n && !rc; i++) {
        char *item = g_strstrip(items[i]);
        tw_optimizer_kind kind;
        if (!*item)
            rc = tw_error_set("twb sweep: %s: an empty value in '%s'", d->option, text);
        else if (p == TWB_SWEEP_OPTIMIZER && tw_optimizer_kind_from_name(item, &kind)) {
            const char *why = tw_last_error(); /* "optimizer: unknown optimizer 'x'; expected ..." */
            rc = tw_error_set("twb sweep: --optimizer: %s", g_str_has_prefix(why, "optimizer: ") ? why + 11 : why);
        }
        else if (p == TWB_SWEEP_OPTIMIZER)
            axis->names[i] = g_strdup(item);
        else
            rc = parse_value(p, item, &axis->values[i]);
    }
    g_strfreev(items);
    return rc;
}

bool twb_sweep_param_swept(const twb_sweep_spec *spec, twb_sweep_param p)
{
    return spec->axes[p].given && (spec->axes[p].range || spec->axes[p].n > 1);
}

void twb_sweep_spec_clear(twb_sweep_spec *spec)
{
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
        g_free(spec->axes[p].values);
        g_strfreev(spec->axes[p].names);
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

static int check_trials(const twb_sweep_spec *spec, double *grid)
{
    *grid = 1;
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
        const twb_sweep_axis *axis = &spec->axes[p];
        if (axis->range && !spec->random)
            return tw_error_set("twb sweep: %s: a range (%g:%g) needs --random; list the values for a grid",
                                params[p].option, axis->min, axis->max);
        if (axis->given && !axis->range)
            *grid *= axis->n;
    }
    if (spec->random && spec->trials < 1)
        return tw_error_set("twb sweep: --random needs --trials N (how many draws)");
    if (!spec->random && !spec->trials && *grid > TWB_SWEEP_MAX_TRIALS)
        return tw_error_set("twb sweep: the grid has %.0f trials, more than %d; list fewer values or add --trials N",
                            *grid, TWB_SWEEP_MAX_TRIALS);
    return 0;
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
    tw_train_settings *out = g_new(tw_train_settings, count);
    GRand *rand = g_rand_new_with_seed_array((const guint32[]){(guint32)spec->sample_seed,
                                                              (guint32)(spec->sample_seed >> 32)}, 2);
    for (int t = 0; t < count; t++) {
        out[t] = *base;
        int rest = t; /* the grid's index, the last parameter fastest */
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
    return g_string_free(out, FALSE);
}
