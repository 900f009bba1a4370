/* twb sweep MODEL --data D --logdb F [--learning-rate V] [--batch-size V]
 *     [--optimizer V] [--epochs V] [--seed V] [--set LAYER.PROPERTY=V]...
 *     [--trials N] [--random] [--sweep NAME] [--metric NAME] [--median-stop]
 *     [--validation-split S] [--parallel N] [--device DEV]
 *     [--checkpoint-dir DIR]
 *
 * --set sweeps a numeric property of one of the model's layers (units,
 * rate, filters), given as often as there are; a layer of a nested model
 * by its path ("encoder/dense_1.units") or by its name when no other layer
 * has it; each trial's model gets its value before it is compiled, and the
 * run records it as a hyperparameter ("dense_1.units"). Over a model file
 * with weights, the weights whose shapes the values change start fresh and
 * the others are the file's (sweep_weights.h), said on stderr and in the
 * run's text tag sweep/weights. --device trains every trial there, as `twb train
 * --device`; --checkpoint-dir DIR checkpoints each trial every epoch (and
 * where a stop left it) to DIR/RUN.safetensors, as the window's worker
 * does its runs beside their run database.
 *
 * Trials one after another, each trained through the one training set-up
 * that `twb train` and the window use (train_session.h): compiled for its
 * settings, a run in the database named NAME-K and tagged with the sweep,
 * its result stored as the window stores its runs'
 * (twb_train_session_store_result: the last epoch's logs and the test
 * split's metrics, a classifier's evaluation). A line per trial as it
 * ends; at the end a table sorted by the chosen metric. A trial that fails
 * (a diverging loss, data the model cannot take) is recorded as a failed
 * run with its reason and the sweep goes on.
 *
 * --median-stop: the median stopping rule (sweep_median.h, as the
 * window's): after each epoch a trial stops when its best monitored value
 * (val_loss with a validation split, else loss) so far is worse than the
 * median of the other trials' running means of it up to the same epoch;
 * the run ends "stopped" with the rule's numbers in its notes.
 *
 * --parallel N: N trials at once, each a process of its own running this
 * command for its one trial (`--sweep NAME --run NAME-K` and one value of
 * each setting; sweep_processes.h); a line per trial as its process ends,
 * its outcome read from its run.
 *
 * Ctrl+C (or SIGTERM, SIGHUP) stops as `twb train` does: the running trial
 * after its step, its run "stopped"; the trials left are not run, and the
 * table shows those that were. */
#include "sweep_cmd.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/keras_file.h>
#include <tw/run_store.h>

#include "sweep_median.h"
#include "sweep_processes.h"
#include "sweep_spec.h"
#include "sweep_weights.h"
#include "train_data.h"
#include "train_session.h"

typedef struct {
    const char *model_path, *name, *metric;
    const char *run; /* --run: the one trial's run name (a trial of --parallel's) */
    const char *checkpoint_dir; /* each trial's checkpoint there, or NULL */
    tw_train_settings base; /* strings point into argv */
    twb_sweep_spec spec;
    bool median_stop, maximize;
    int parallel; /* trials at once, each a process (sweep_processes.h) */
} sweep_options;

typedef struct {
    tw_train_settings settings; /* the spec's trial, run_name owned */
    tw_run_status status;
    char *reason;                /* failed: why; stopped: the rule's numbers */
    tw_logs metrics;             /* the final metrics */
    int epochs;                  /* stopped by the median rule: after this many */
    double seconds;
} trial;

typedef struct {
    sweep_options *o;
    trial *trials;
    int n, current;
    tw_train_settings *block; /* the spec's trials, holding their layer values */
} sweep;

/* As train_cmd.c's: a stop signal stops after the step; a second one ends
 * the process at once. */
static volatile sig_atomic_t stop_requested;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop_signal(int sig)
{
    stop_requested = 1;
    signal(sig, SIG_DFL);
}

static void catch_stop_signals(bool on)
{
    for (size_t i = 0; i < G_N_ELEMENTS(stop_signals); i++)
        signal(stop_signals[i], on ? on_stop_signal : SIG_DFL);
}

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "twb sweep: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'twb --help'.\n");
    return 2;
}

/* ---- command line --------------------------------------------------------- */
static bool parse_number(const char *value, double min, double max, double *out)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end || !(v >= min && v <= max))
        return false;
    *out = v;
    return true;
}

static int set_option(sweep_options *o, const char *name, char *value)
{
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++)
        if (!strcmp(name, twb_sweep_param_option((twb_sweep_param)p))) {
            if (twb_sweep_spec_set(&o->spec, (twb_sweep_param)p, value) == 0)
                return 0;
            fprintf(stderr, "%s\n", tw_last_error());
            return 2;
        }
    if (!strcmp(name, "--set")) {
        if (twb_sweep_spec_set_layer(&o->spec, value) == 0)
            return 0;
        fprintf(stderr, "%s\n", tw_last_error());
        return 2;
    }
    double v;
    if (!strcmp(name, "--trials")) {
        if (!parse_number(value, 1, TWB_SWEEP_MAX_TRIALS, &v) || v != floor(v))
            return usage("--trials: '%s' is not a number of trials (1 to 10000)", value);
        o->spec.trials = (int)v;
        return 0;
    }
    if (!strcmp(name, "--parallel")) {
        if (!parse_number(value, 1, 64, &v) || v != floor(v))
            return usage("--parallel: '%s' is not a number of trials at once (1 to 64)", value);
        o->parallel = (int)v;
        return 0;
    }
    if (!strcmp(name, "--validation-split")) {
        if (!parse_number(value, 0, 0.99, &v))
            return usage("--validation-split: '%s' is not a fraction from 0 to 0.99", value);
        o->base.validation_split = v;
        return 0;
    }
    if (!strcmp(name, "--data") && o->base.data) /* a trial's processes get one (sweep_processes.c) */
        return usage("%s", "--data given twice: a sweep trains on one data set; for a model of several inputs, a "
                           "built-in set of as many (fashion-mnist-pairs, reverse-sequences)");
    const struct {
        const char *name;
        const char **field;
    } strings[] = {
        {"--data", (const char **)&o->base.data}, {"--labels", (const char **)&o->base.labels},
        {"--label-column", (const char **)&o->base.label_column}, {"--loss", (const char **)&o->base.loss},
        {"--logdb", (const char **)&o->base.logdb}, {"--sweep", &o->name}, {"--metric", &o->metric},
        {"--run", &o->run}, {"--device", (const char **)&o->base.device},
        {"--checkpoint-dir", &o->checkpoint_dir},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++)
        if (!strcmp(name, strings[i].name)) {
            *strings[i].field = value;
            return 0;
        }
    return usage("unknown option '%s'", name);
}

static int parse_args(sweep_options *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i];
        if (!strcmp(arg, "--random"))
            o->spec.random = true;
        else if (!strcmp(arg, "--median-stop"))
            o->median_stop = true;
        else if (!strncmp(arg, "--", 2)) {
            const char *eq = strchr(arg, '=');
            char name[64];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
            char *value = eq ? (char *)eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!value)
                return usage("option '%s' needs a value", name);
            int rc = set_option(o, name, value);
            if (rc)
                return rc;
        } else if (!o->model_path)
            o->model_path = arg;
        else
            return usage("unexpected argument '%s'", arg);
    }
    if (!o->model_path)
        return usage("%s", "name a model file (Keras JSON, .keras or .h5)");
    if (!o->base.data)
        return usage("%s", "name the data with --data fashion-mnist|spirals|blobs|linear|FILE");
    if (!o->base.logdb)
        return usage("%s", "name the run database with --logdb FILE: each trial is a run there");
    if (o->name && !*o->name)
        return usage("%s", "--sweep: the name is empty");
    if (o->metric && !*o->metric)
        return usage("%s", "--metric: the name is empty");
    if (o->run && (!*o->run || !o->name))
        return usage("%s", "--run names one trial's run of a sweep named with --sweep");
    if (o->checkpoint_dir && !*o->checkpoint_dir)
        return usage("%s", "--checkpoint-dir: the folder is empty");
    return 0;
}

/* Accuracy-like metrics are better high; losses and errors low. */
static bool higher_is_better(const char *metric)
{
    return strstr(metric, "acc") || strstr(metric, "auc") || strstr(metric, "precision") || strstr(metric, "recall");
}

/* ---- one trial ------------------------------------------------------------ */
static void tag_run(const sweep_options *o, const trial *t, const char *sweep_name)
{
    tw_run_store *store = tw_run_store_open(o->base.logdb, 0);
    if (!store || tw_run_store_set_sweep(store, t->settings.run_name, sweep_name) ||
        (t->status == TW_RUN_STOPPED && tw_run_store_set_notes(store, t->settings.run_name, t->reason)))
        fprintf(stderr, "twb sweep: warning: %s\n", tw_last_error());
    tw_run_store_close(store);
}

/* Trains and evaluates one trial; its status and reason tell how it went. */
static void run_trial(sweep *s, const twb_data *data, const char *sweep_name)
{
    trial *t = &s->trials[s->current];
    gint64 start = g_get_monotonic_time();
    char *notice = NULL; /* the file's weights that start fresh (sweep_weights.h) */
    tw_model *model = twb_sweep_trial_model(s->o->model_path, &t->settings, &notice);
    if (notice) {
        fprintf(stderr, "twb sweep: %s: %s\n", t->settings.run_name, notice);
        fflush(stderr);
    }
    twb_train_session session = {0};
    bool opened = false;
    int rc = model ? 0 : -1;
    if (!rc)
        rc = twb_train_compile(model, &t->settings, data->y);
    char *checkpoint = s->o->checkpoint_dir ? twb_train_checkpoint_in(s->o->checkpoint_dir, t->settings.run_name)
                                            : NULL;
    twb_train_session_options options = {.checkpoint_path = checkpoint, .log_every = TWB_LOG_EVERY_STEPS,
                                         .histogram_every = TWB_HISTOGRAM_EVERY_STEPS};
    if (!rc) {
        rc = twb_train_session_open(&session, model, &t->settings, &options);
        opened = true;
    }
    if (!rc)
        tag_run(s->o, t, sweep_name); /* at once: the window's view groups it while it trains */
    if (!rc && notice && tw_summary_text(session.writer, TWB_SWEEP_WEIGHTS_TAG, notice, 0))
        fprintf(stderr, "twb sweep: warning: %s\n", tw_last_error());
    twb_median_stop *median = s->o->median_stop ? twb_median_stop_new(&t->settings, sweep_name) : NULL;
    tw_callback own = median ? twb_median_stop_callback(median) : (tw_callback){0};
    tw_history *h = NULL;
    if (!rc) {
        tw_fit_options fit = twb_train_session_fit_options(&session, median ? &own : NULL, &stop_requested);
        h = twb_train_session_fit(&session, data, &fit);
        rc = h ? 0 : -1;
    }
    if (h && median && twb_median_stop_reason(median)) {
        t->status = TW_RUN_STOPPED;
        t->reason = g_strdup(twb_median_stop_reason(median));
        t->epochs = twb_median_stop_epochs(median);
    }
    twb_median_stop_free(median);
    if (h && h->stopped_early && stop_requested) {
        t->status = TW_RUN_STOPPED;
        g_free(t->reason);
        t->reason = g_strdup_printf("stopped by a signal (Ctrl+C) at epoch %d, step %lld", h->resume_epoch + 1,
                                    (long long)h->resume_step + 1);
        /* where it stopped, as the window's worker and `twb train` keep it */
        if (twb_train_session_save_stop(&session, h))
            fprintf(stderr, "twb sweep: warning: %s\n", tw_last_error());
    }
    if (!rc) {
        /* the result as the window stores its trials' (train_session.h) */
        int stored = twb_train_session_store_result(&session, h, data, stop_requested, &t->metrics);
        if (stored > 0)
            fprintf(stderr, "twb sweep: warning: trial %d's evaluation was not stored: %s\n", s->current + 1,
                    tw_last_error());
        rc = stored < 0 ? -1 : 0;
    }
    if (rc) {
        t->status = TW_RUN_FAILED;
        g_free(t->reason);
        t->reason = g_strdup(tw_last_error());
    }
    if (opened && twb_train_session_close(&session, t->status, t->reason))
        fprintf(stderr, "twb sweep: warning: %s\n", tw_last_error());
    if (opened && t->status == TW_RUN_STOPPED)
        tag_run(s->o, t, sweep_name); /* the notes say why */
    tw_history_free(h);
    tw_layer_unref(model);
    g_free(checkpoint);
    g_free(notice);
    t->seconds = (g_get_monotonic_time() - start) / 1e6;
}

/* ---- reporting ------------------------------------------------------------ */
static void print_trial_line(const sweep *s, const trial *t)
{
    char *values = twb_sweep_describe(&s->o->spec, &t->settings);
    printf("trial %d/%d %s  %s", s->current + 1, s->n, t->settings.run_name, values);
    if (t->status == TW_RUN_FAILED)
        printf("  failed: %s", t->reason);
    else {
        for (int i = 0; i < t->metrics.n; i++)
            printf("  %s %.4f", t->metrics.names[i], t->metrics.values[i]);
        if (t->status == TW_RUN_STOPPED && !stop_requested)
            printf("  (stopped after epoch %d by the median rule)", t->epochs);
        else if (t->status == TW_RUN_STOPPED)
            printf("  (%s)", t->reason);
    }
    printf("  (%.1f s)\n", t->seconds);
    fflush(stdout);
    g_free(values);
}

static const sweep *sorting;

/* By the metric, best first; trials without it (failed) last, in order. */
static int compare_trials(const void *a, const void *b)
{
    const trial *x = *(trial *const *)a, *y = *(trial *const *)b;
    double vx = tw_logs_get(&x->metrics, sorting->o->metric), vy = tw_logs_get(&y->metrics, sorting->o->metric);
    bool hx = !isnan(vx), hy = !isnan(vy);
    if (hx != hy)
        return hx ? -1 : 1;
    if (hx && vx != vy)
        return (sorting->o->maximize ? vx > vy : vx < vy) ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* A layer value's column: as wide as its "LAYER.PROPERTY" heading (paths
 * into nested models are long), at least the table's 13. */
static int layer_column_width(const twb_sweep_spec *spec, int i)
{
    return (int)MAX(13, strlen(spec->layers[i].layer) + 1 + strlen(spec->layers[i].property));
}

static void print_table(const sweep *s, const char *sweep_name)
{
    trial **order = g_new(trial *, s->n);
    int failed = 0, stopped = 0;
    for (int i = 0; i < s->n; i++) {
        order[i] = &s->trials[i];
        failed += s->trials[i].status == TW_RUN_FAILED;
        stopped += s->trials[i].status == TW_RUN_STOPPED;
    }
    bool known = false;
    for (int i = 0; i < s->n && !known; i++)
        known = !isnan(tw_logs_get(&s->trials[i].metrics, s->o->metric));
    if (!known && !stop_requested) /* stopped trials have no test metrics: nothing to warn about */
        fprintf(stderr, "twb sweep: warning: no trial has the metric '%s' (name one of the table's columns with "
                        "--metric); the trials stay in their order\n", s->o->metric);
    sorting = s;
    qsort(order, (size_t)s->n, sizeof *order, compare_trials);
    printf("\nsweep %s: %d trials, %d finished, %d stopped early, %d failed; sorted by %s (%s first)\n", sweep_name,
           s->n, s->n - failed - stopped, stopped, failed, s->o->metric, s->o->maximize ? "highest" : "lowest");
    /* the metric columns: the first finished trial's */
    const tw_logs *names = NULL;
    for (int i = 0; i < s->n && !names; i++)
        if (order[i]->metrics.n)
            names = &order[i]->metrics;
    printf("%-4s  %-24s", "rank", "run");
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++)
        if (twb_sweep_param_swept(&s->o->spec, (twb_sweep_param)p))
            printf("  %13s", twb_sweep_param_key((twb_sweep_param)p));
    for (int i = 0; i < s->o->spec.nlayers; i++)
        if (twb_sweep_layer_swept(&s->o->spec, i)) {
            char *key = g_strdup_printf("%s.%s", s->o->spec.layers[i].layer, s->o->spec.layers[i].property);
            printf("  %*s", layer_column_width(&s->o->spec, i), key);
            g_free(key);
        }
    for (int i = 0; names && i < names->n; i++)
        printf("  %13s", names->names[i]);
    printf("  %s\n", "status");
    for (int r = 0; r < s->n; r++) {
        const trial *t = order[r];
        const tw_train_settings *v = &t->settings;
        printf("%-4d  %-24s", r + 1, v->run_name);
        for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
            if (!twb_sweep_param_swept(&s->o->spec, (twb_sweep_param)p))
                continue;
            switch ((twb_sweep_param)p) {
            case TWB_SWEEP_LEARNING_RATE: printf("  %13.4g", v->learning_rate); break;
            case TWB_SWEEP_BATCH_SIZE: printf("  %13lld", (long long)v->batch_size); break;
            case TWB_SWEEP_OPTIMIZER: printf("  %13s", v->optimizer); break;
            case TWB_SWEEP_EPOCHS: printf("  %13d", v->epochs); break;
            default: printf("  %13llu", (unsigned long long)v->seed); break;
            }
        }
        for (int i = 0; i < s->o->spec.nlayers; i++)
            if (twb_sweep_layer_swept(&s->o->spec, i))
                printf("  %*.6g", layer_column_width(&s->o->spec, i), v->layer_values[i].value);
        for (int i = 0; names && i < names->n; i++) {
            double value = tw_logs_get(&t->metrics, names->names[i]);
            if (isnan(value))
                printf("  %13s", "-");
            else
                printf("  %13.4f", value);
        }
        printf("  %s\n", tw_run_status_name(t->status));
    }
    g_free(order);
}

/* ---- trials at once, as processes ----------------------------------------- */
/* The final metrics of a run's metrics_json. */
static void read_metrics(const char *json, tw_logs *logs)
{
    JsonNode *root = json ? json_from_string(json, NULL) : NULL;
    if (root && JSON_NODE_HOLDS_OBJECT(root)) {
        JsonObject *o = json_node_get_object(root);
        GList *members = json_object_get_members(o);
        for (GList *m = members; m; m = m->next) {
            JsonNode *value = json_object_get_member(o, m->data);
            if (JSON_NODE_HOLDS_VALUE(value) && json_node_get_value_type(value) != G_TYPE_STRING)
                tw_logs_set(logs, m->data, json_node_get_double(value));
        }
        g_list_free(members);
    }
    if (root)
        json_node_unref(root);
}

/* A trial's outcome from its run, which its process recorded; error: why
 * the process could not train (no run then). */
static void read_outcome(const sweep_options *o, trial *t, const char *error)
{
    tw_run_store *store = tw_run_store_open(o->base.logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    if (!store || tw_run_store_get_run(store, t->settings.run_name, &run)) {
        t->status = TW_RUN_FAILED;
        t->reason = g_strdup(error ? error : tw_last_error());
        tw_run_store_close(store);
        return;
    }
    t->status = run.status == TW_RUN_RUNNING || run.status == TW_RUN_INTERRUPTED ? TW_RUN_FAILED : run.status;
    if (t->status == TW_RUN_FAILED)
        t->reason = g_strdup(run.failure_reason ? run.failure_reason : error ? error : "the trial's process ended");
    else if (t->status == TW_RUN_STOPPED)
        t->reason = g_strdup(run.notes);
    read_metrics(run.metrics_json, &t->metrics);
    int64_t tag = tw_run_store_find_tag(store, run.id, t->settings.validation_split > 0 ? "validation/loss" : "epoch/loss");
    tw_tag_info *tags;
    int n;
    if (tag >= 0 && tw_run_store_list_tags(store, run.id, &tags, &n) == 0) {
        for (int i = 0; i < n; i++)
            if (tags[i].id == tag)
                t->epochs = (int)tags[i].count;
        tw_tag_info_free(tags, n);
    }
    tw_run_info_clear(&run);
    tw_run_store_close(store);
}

typedef struct {
    sweep *s;
    int started;
    gint64 *began; /* per trial */
} parallel_run;

static void on_process_started(int index, gpointer data)
{
    parallel_run *run = data;
    run->started = index + 1;
    run->began[index] = g_get_monotonic_time();
}

static void on_process_ended(int index, const char *error, gpointer data)
{
    parallel_run *run = data;
    sweep *s = run->s;
    trial *t = &s->trials[index];
    read_outcome(s->o, t, error);
    t->seconds = (g_get_monotonic_time() - run->began[index]) / 1e6;
    s->current = index;
    print_trial_line(s, t);
}

static gboolean wake(gpointer data)
{
    return G_SOURCE_CONTINUE;
}

/* --parallel N: each trial `twb sweep … --run NAME-K` in a process of its
 * own, N at once; a stop signal stops the running ones (the terminal's
 * Ctrl+C reaches them too) and starts no other. Returns the trials that
 * started (the first ones), or -1 with a message when the run database
 * cannot be made. */
static int run_parallel(sweep *s, const char *sweep_name)
{
    parallel_run run = {.s = s, .began = g_new0(gint64, s->n)};
    twb_sweep_processes_callbacks callbacks = {.started = on_process_started, .ended = on_process_ended,
                                               .user_data = &run};
    twb_sweep_processes_options options = {.model_path = s->o->model_path, .logdb = s->o->base.logdb,
                                           .sweep = sweep_name, .checkpoint_dir = s->o->checkpoint_dir,
                                           .median_stop = s->o->median_stop, .at_once = s->o->parallel};
    twb_sweep_processes *p = twb_sweep_processes_new(&options, &callbacks);
    if (!p) {
        g_free(run.began);
        return -1;
    }
    for (int i = 0; i < s->n; i++)
        twb_sweep_processes_add(p, &s->trials[i].settings);
    guint ticker = g_timeout_add(100, wake, NULL); /* to see the stop flag */
    bool cancelled = false;
    while (!twb_sweep_processes_idle(p)) {
        if (stop_requested && !cancelled) {
            for (int i = 0; i < s->n; i++)
                twb_sweep_processes_cancel(p, i);
            cancelled = true;
        }
        g_main_context_iteration(NULL, TRUE);
    }
    g_source_remove(ticker);
    twb_sweep_processes_free(p);
    g_free(run.began);
    return run.started;
}

/* ---- the sweep ------------------------------------------------------------ */
static int run_sweep(sweep_options *o)
{
    tw_train_settings *specs = NULL;
    sweep s = {.o = o};
    /* the model first: the layer properties are checked against it, and
     * their draws are whole numbers where the layer's are */
    tw_model *probe = tw_model_open(o->model_path);
    if (!probe) {
        fprintf(stderr, "twb sweep: %s\n", tw_last_error());
        return 1;
    }
    if (twb_sweep_spec_check_model(&o->spec, probe) || twb_sweep_spec_trials(&o->spec, &o->base, &specs, &s.n)) {
        fprintf(stderr, "%s\n", tw_last_error());
        tw_layer_unref(probe);
        return 2;
    }
    if (o->run && s.n != 1) {
        fprintf(stderr, "twb sweep: --run: the values make %d trials; one trial names one value of each\n", s.n);
        g_free(specs);
        tw_layer_unref(probe);
        return 2;
    }
    char *sweep_name = o->name ? g_strdup(o->name) : twb_sweep_default_name();
    if (o->run)
        specs[0].run_name = g_strdup(o->run);
    else
        twb_sweep_name_trials(specs, s.n, sweep_name);
    int rc = twb_sweep_check_names_free(o->base.logdb, specs, s.n);
    if (rc) {
        char *taken = g_strdup(tw_last_error());
        tw_error_set("%s; name the sweep another way with --sweep NAME", taken);
        g_free(taken);
    }
    s.trials = g_new0(trial, s.n);
    for (int i = 0; i < s.n; i++) {
        s.trials[i].settings = specs[i];
        s.trials[i].status = TW_RUN_FINISHED;
    }
    s.block = specs;
    twb_data data = {0};
    twb_data_spec spec = twb_data_spec_of(&o->base);
    if (!rc)
        rc = twb_data_load(&spec, &data);
    if (!rc)
        rc = twb_data_check(probe, &data);
    tw_layer_unref(probe);
    if (rc) {
        fprintf(stderr, "twb sweep: %s\n", tw_last_error());
    } else {
        printf("sweep %s: %d trials of %s on %s into %s\n", sweep_name, s.n, o->model_path, data.description,
               o->base.logdb);
        fflush(stdout);
        catch_stop_signals(true);
        int ran = 0;
        if (o->parallel > 1 && s.n > 1) {
            ran = run_parallel(&s, sweep_name);
            if (ran < 0) {
                fprintf(stderr, "twb sweep: %s\n", tw_last_error());
                rc = -1;
                ran = 0;
            }
        } else {
            for (s.current = 0; s.current < s.n && !stop_requested; s.current++) {
                run_trial(&s, &data, sweep_name);
                print_trial_line(&s, &s.trials[s.current]);
            }
            ran = s.current;
        }
        catch_stop_signals(false);
        int planned = s.n;
        s.n = ran; /* the table shows the trials that ran */
        if (s.n < planned && !rc)
            printf("\nsweep %s stopped: %d of %d trials ran\n", sweep_name, s.n, planned);
        if (!rc)
            print_table(&s, sweep_name);
        s.n = planned;
    }
    twb_data_clear(&data);
    for (int i = 0; i < s.n; i++) {
        g_free(s.trials[i].settings.run_name);
        g_free(s.trials[i].reason);
    }
    g_free(s.trials);
    g_free(s.block);
    g_free(sweep_name);
    return rc ? 1 : 0;
}

int twb_sweep_command(int argc, char **argv)
{
    sweep_options o = {.base = tw_train_settings_defaults()};
    int rc = parse_args(&o, argc, argv);
    /* the trials' models are made on the default device (as twb train's) */
    tw_device device;
    if (!rc && o.base.device && (tw_device_parse(o.base.device, &device) || tw_set_default_device(device))) {
        fprintf(stderr, "twb sweep: --device: %s\n", tw_last_error());
        rc = 1;
    }
    if (!rc) {
        if (!o.metric)
            o.metric = "test_loss";
        o.maximize = higher_is_better(o.metric);
        rc = run_sweep(&o);
    }
    twb_sweep_spec_clear(&o.spec);
    return rc;
}
