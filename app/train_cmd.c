/* twb train MODEL.json --data fashion-mnist|FILE [options] [--logdb FILE [--run NAME]]
 * (a model of several inputs: --data once per input, in the model's input
 * order, or a built-in set of as many: fashion-mnist-pairs, reverse-sequences)
 * twb evaluate MODEL [--checkpoint FILE | --weights FILE] --data ... [--logdb FILE --run NAME]
 * twb predict MODEL [--checkpoint FILE | --weights FILE] --data ... [--output FILE.npy]
 * (the checkpoint may be left out when MODEL, a .keras or .h5, carries
 * its weights). --weights, for all three, puts a weight file into the
 * model first: a Keras save_weights .h5, a .weights.h5, a .keras or a
 * checkpoint (tw_model_load_weights, which names the layer and weight
 * that do not match).
 *
 * The headless counterpart of the window's Train button: load a Keras model
 * file, load the data whole, compile with the chosen optimizer and Keras'
 * usual loss for the labels, fit with a progress bar, checkpoint every epoch
 * and on Ctrl+C, SIGTERM or SIGHUP, evaluate on the test set, and optionally
 * end with one JSON object for scripts. A checkpoint or a run database that
 * cannot be written (full disk, read-only) is a warning, given at once, and
 * training goes on; a failed run's reason goes into the run database.
 * --resume refuses a checkpoint position this data cannot have and warns
 * when the data, batch size, seed or learning rate differ from the
 * checkpoint's. With --logdb the run goes into the run database: the
 * model, the settings, the batch logs and learning rate every --log-every
 * steps, weight and gradient histograms every --histogram-every steps, the
 * epoch logs, and the run's result as sweeps and the window store theirs
 * (twb_train_session_store_result: the last epoch's logs and the test
 * metrics as final metrics and, for a classifier, the evaluation —
 * evaluate_run.c: confusion matrix, per-class figures, examples; after
 * Ctrl+C the epoch's logs only), an evaluation
 * `twb evaluate --logdb F --run NAME` also stores into an existing run. --trace runs the training step traced
 * (tw_fit_options.traced on: a model that cannot be traced, such as one
 * with Dropout, fails with the tracer's message) and, with --logdb, stores
 * the step's graph under "graph/train_step" for the graph view and its
 * per-node time profile over the next PROFILE_STEPS steps under
 * "profile/train_step" (text), which the graph view pairs with the graph. */
#include "train_cmd.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/checkpoint.h>
#include <tw/data.h>
#include <tw/distributed.h>
#include <tw/keras_file.h>
#include <tw/model_file.h>
#include <tw/optimizers.h>
#include <tw/summary.h>

#include "evaluate_run.h"
#include "train_data.h"
#include "train_progress.h"
#include "train_session.h"

#define CHECKPOINT_NAME "checkpoint.safetensors"
/* --trace --logdb: steps whose node times make the stored profile. */
#define PROFILE_STEPS 50

typedef struct {
    const char *command;
    const char *model_path;
    tw_train_settings settings; /* its strings point into argv */
    char *more_data[TWB_MAX_INPUTS]; /* --data after the first (NULL-terminated): settings.more_data */
    char *checkpoint_dir, *checkpoint, *output;
    char *weights; /* --weights FILE: put into the model as it opens */
    char *tfevents; /* --tfevents DIR: a TensorBoard event file beside the run database */
    int log_every, histogram_every;
    bool resume, json;
    bool trace; /* fit traced (on, not auto); with --logdb the step's graph is stored */
} train_options;

static volatile sig_atomic_t stop_requested;

/* Ctrl+C, kill (SIGTERM) and a closed terminal (SIGHUP) all stop training
 * the same way: checkpoint, run "stopped". */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop_signal(int sig)
{
    stop_requested = 1;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

static void catch_stop_signals(bool on)
{
    /* Under mpirun, SIGTERM is mpirun stopping the ranks (one died):
     * tw/distributed.h's own handler makes the waits fail, naming it. */
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        if (stop_signals[i] != SIGTERM || tw_distributed_size() == 1)
            signal(stop_signals[i], on ? on_stop_signal : SIG_DFL);
}

/* ---- command line --------------------------------------------------------- */
static int usage(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "twb %s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'twb --help'.\n");
    return 2;
}

static bool parse_number(const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min && v <= max))
        return false;
    *out = v;
    return true;
}

typedef struct {
    const char *name;
    double min, max;
} numeric_option;

static int set_option(train_options *o, const char *name, char *value)
{
    double v;
    static const numeric_option numbers[] = {
        {"--epochs", 1, 1e6}, {"--batch-size", 1, 1e7}, {"--learning-rate", 0, 1e3},
        {"--seed", 0, 9007199254740992.0}, {"--validation-split", 0, 0.99},
        {"--log-every", 1, 1e9}, {"--histogram-every", 0, 1e9},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (strcmp(name, numbers[i].name))
            continue;
        gboolean whole = i != 2 && i != 4; /* all but the learning rate and the validation split */
        if (!parse_number(value, numbers[i].min, numbers[i].max, &v) || (whole && v != floor(v)))
        {
            char *why = g_strdup_printf("%s: '%s' (%s from %.16g to %.16g)", name, value,
                                        whole ? "a whole number" : "a number", numbers[i].min, numbers[i].max);
            int rc = usage(o->command, "bad value for option %s", why);
            g_free(why);
            return rc;
        }
        if (i == 0)
            o->settings.epochs = (int)v;
        else if (i == 1)
            o->settings.batch_size = (int64_t)v;
        else if (i == 2)
            o->settings.learning_rate = v;
        else if (i == 3)
            o->settings.seed = (uint64_t)v;
        else if (i == 4)
            o->settings.validation_split = v;
        else if (i == 5)
            o->log_every = (int)v;
        else
            o->histogram_every = (int)v;
        return 0;
    }
    tw_train_settings *s = &o->settings;
    if (!strcmp(name, "--data") && s->data) { /* once per model input */
        int n = 0;
        while (o->more_data[n])
            n++;
        if (n + 1 == TWB_MAX_INPUTS)
            return usage(o->command, "more than %s --data files: data for at most that many inputs",
                         G_STRINGIFY(TWB_MAX_INPUTS));
        o->more_data[n] = value;
        s->more_data = o->more_data;
        return 0;
    }
    const struct {
        const char *name;
        char **field;
    } strings[] = {
        {"--data", &s->data}, {"--labels", &s->labels}, {"--label-column", &s->label_column},
        {"--optimizer", &s->optimizer}, {"--loss", &s->loss}, {"--logdb", &s->logdb}, {"--run", &s->run_name},
        {"--checkpoint-dir", &o->checkpoint_dir}, {"--checkpoint", &o->checkpoint}, {"--output", &o->output},
        {"--tfevents", &o->tfevents}, {"--device", &s->device}, {"--weights", &o->weights},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (!strcmp(name, strings[i].name)) {
            *strings[i].field = value;
            return 0;
        }
    return usage(o->command, "unknown option '%s'", name);
}

static int parse_args(train_options *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i];
        if (!strcmp(arg, "--resume"))
            o->resume = true;
        else if (!strcmp(arg, "--json"))
            o->json = true;
        else if (!strcmp(arg, "--trace"))
            o->trace = true;
        else if (!strncmp(arg, "--", 2)) {
            const char *eq = strchr(arg, '=');
            char name[64];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
            char *value = eq ? (char *)eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!value)
                return usage(o->command, "option '%s' needs a value", name);
            int rc = set_option(o, name, value);
            if (rc)
                return rc;
        } else if (!o->model_path)
            o->model_path = arg;
        else
            return usage(o->command, "unexpected argument '%s'", arg);
    }
    if (!o->model_path)
        return usage(o->command, "%s", "name a model file (Keras Sequential JSON)");
    if (!o->settings.data)
        return usage(o->command, "%s", "name the data with --data fashion-mnist|spirals|blobs|linear|FILE");
    if (o->resume && !o->checkpoint_dir)
        return usage(o->command, "%s", "--resume needs --checkpoint-dir");
    if (o->settings.run_name && !o->settings.logdb)
        return usage(o->command, "%s", "--run needs --logdb");
    if (!strcmp(o->command, "evaluate") && o->settings.logdb && !o->settings.run_name)
        return usage(o->command, "%s", "--logdb needs --run NAME: the run to store the evaluation in");
    if (!strcmp(o->command, "predict") && o->settings.logdb)
        return usage(o->command, "%s", "--logdb is for train and evaluate");
    if (o->weights && o->checkpoint)
        return usage(o->command, "%s", "name the weights once: --weights or --checkpoint, not both");
    return 0;
}

/* ---- training ------------------------------------------------------------- */
typedef struct {
    train_options *opt;
    twb_progress progress;
    twb_train_session session; /* checkpoints with --checkpoint-dir, the run with --logdb */
    bool logdb_warned;        /* its failure was reported (once) */
    tw_run_status status;
    bool graph_stored; /* --trace --logdb: the step's graph went into the run */
    const tw_graph *profiled; /* a reference while its steps are being profiled */
    int profiled_steps;
} train_run;

/* --trace --logdb: the traced training step's graph, once, at step 0, for
 * the window's graph view. After the first step, which traced it. */
static int store_step_graph(train_run *run, tw_model *model)
{
    const tw_graph *g = tw_model_train_step_graph(model);
    char *json = g ? tw_graph_json(g) : NULL;
    int rc = json ? tw_summary_graph(run->session.writer, "graph/train_step", json, 0)
                  : tw_error_set("twb train --trace: no traced training step to store: %s",
                                 g ? tw_last_error() : "the step ran eagerly");
    free(json);
    run->graph_stored = rc == 0;
    if (rc == 0 && tw_graph_profile_start(g) == 0) /* profiling is a bonus: the run goes on without it */
        run->profiled = tw_graph_ref(g);
    return rc;
}

/* Profiling off, and the profile into the run when a step was timed. */
static int store_step_profile(train_run *run)
{
    const tw_graph *g = run->profiled;
    tw_graph_profile_stop(g);
    char *json = tw_graph_profile_json(g);
    int rc = json ? 0 : -1;
    if (json && run->profiled_steps > 0)
        rc = tw_summary_text(run->session.writer, "profile/train_step", json, 0);
    free(json);
    tw_graph_unref(g);
    run->profiled = NULL;
    return rc;
}

/* A warning between progress lines: a terminal's bar ends its line first. */
static void warn(train_run *run, const char *message)
{
    if (run->progress.tty)
        fputc('\n', run->progress.out);
    fflush(run->progress.out);
    fprintf(stderr, "twb train: warning: %s; training goes on\n", message);
}

/* The run database's failure (full disk, read-only file), the moment the
 * writer meets it, once: training goes on without logs. */
static void warn_logdb(train_run *run)
{
    const char *error = run->session.writer ? tw_summary_writer_error(run->session.writer) : NULL;
    if (!error || run->logdb_warned)
        return;
    warn(run, error);
    run->logdb_warned = true;
}

/* A checkpoint that could not be saved (a full disk): the previous one
 * stays, training goes on. */
static void warn_checkpoint(train_run *run)
{
    const char *error = twb_train_session_checkpoint_warning(&run->session);
    if (error)
        warn(run, error);
}

static int on_batch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    train_run *run = user_data;
    twb_progress_batch(&run->progress, p, logs);
    warn_logdb(run);
    if (run->opt->trace && run->session.writer && !run->graph_stored)
        return store_step_graph(run, model) < 0 ? -1 : 0;
    if (run->profiled && ++run->profiled_steps == PROFILE_STEPS)
        return store_step_profile(run) < 0 ? -1 : 0;
    return 0;
}

/* A fit shorter than the profile's steps stores what it has. */
static int on_train_end(tw_model *model, const tw_logs *logs, void *user_data)
{
    train_run *run = user_data;
    return run->profiled && store_step_profile(run) < 0 ? -1 : 0;
}

static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    train_run *run = user_data;
    twb_progress_epoch(&run->progress, p, logs);
    warn_checkpoint(run);
    warn_logdb(run);
    return 0;
}

/* ---- the run database ----------------------------------------------------- */
/* The run's end, with why it failed. Lost logs are a warning (once):
 * training's result stands. */
static void close_session(train_run *run, int rc)
{
    char *error = rc ? g_strdup(tw_last_error()) : NULL;
    char *reported = run->logdb_warned ? g_strdup(tw_summary_writer_error(run->session.writer)) : NULL;
    if (twb_train_session_close(&run->session, rc ? TW_RUN_FAILED : run->status, error) &&
        g_strcmp0(reported, tw_last_error()))
        fprintf(stderr, "twb train: warning: %s\n", tw_last_error());
    g_free(reported);
    if (error)
        tw_error_set("%s", error);
    g_free(error);
}

/* x's shape with any batch size: what the model is built for. */
static tw_shape batch_shape_of(const tw_tensor *x)
{
    tw_shape in = {.ndim = tw_tensor_ndim(x)};
    memcpy(in.dims, tw_tensor_shape(x), sizeof(int64_t) * (size_t)in.ndim);
    in.dims[0] = -1;
    return in;
}

/* Build the model unless it is: for one input from the examples' shape as
 * fitted to it (an input with a None axis takes the data's), for several
 * from the model's own input shapes. */
static int build_for(tw_model *model, const twb_data *data, uint64_t seed)
{
    if (tw_layer_built(model))
        return 0;
    if (data->ninputs > 1)
        return tw_model_build(model, NULL, seed);
    tw_tensor *x = twb_fit_input(model, 0, data->x[0]);
    tw_shape in = batch_shape_of(x);
    tw_tensor_unref(x);
    return tw_model_build(model, &in, seed);
}

/* The settings a checkpoint was trained with (its "training_config"'s
 * "settings", tw_train_settings_json), held by parser; NULL without. */
static JsonObject *checkpoint_settings(const char *path, JsonParser *parser)
{
    char *config = tw_checkpoint_read_metadata(path, "training_config");
    JsonNode *root = config && json_parser_load_from_data(parser, config, -1, NULL) ? json_parser_get_root(parser)
                                                                                     : NULL;
    free(config);
    JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *node = top ? json_object_get_member(top, "settings") : NULL;
    return node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

/* The checkpoint's settings (tw_train_settings_json) against this
 * training's: a resumed run repeats the uninterrupted one only with the same
 * data, batch size, seed and learning rate (the compiled optimizer's).
 * Warns, naming what differs. */
static void compare_settings(const char *path, const tw_train_settings *s, double learning_rate)
{
    JsonParser *parser = json_parser_new();
    JsonObject *was = checkpoint_settings(path, parser);
    GString *diff = g_string_new(NULL);
    if (was) {
        const char *data = json_object_get_string_member_with_default(was, "data", NULL);
        if (data && strcmp(data, s->data))
            g_string_append_printf(diff, ", data %s (was %s)", s->data, data);
        for (int k = 0; s->more_data && s->more_data[k]; k++) {
            char key[32];
            g_snprintf(key, sizeof key, "data_%d", k + 1);
            data = json_object_get_string_member_with_default(was, key, NULL);
            if (data && strcmp(data, s->more_data[k]))
                g_string_append_printf(diff, ", data of input %d %s (was %s)", k + 1, s->more_data[k], data);
        }
        gint64 batch = json_object_get_int_member_with_default(was, "batch_size", s->batch_size);
        if (batch != s->batch_size)
            g_string_append_printf(diff, ", batch size %lld (was %lld)", (long long)s->batch_size, (long long)batch);
        gint64 seed = json_object_get_int_member_with_default(was, "seed", (gint64)s->seed);
        if (seed != (gint64)s->seed)
            g_string_append_printf(diff, ", seed %llu (was %lld)", (unsigned long long)s->seed, (long long)seed);
        /* null: the optimizer's default, as checkpoints without the
         * compiled rate recorded it */
        JsonNode *rate = json_object_get_member(was, "learning_rate");
        double old_rate = rate && JSON_NODE_HOLDS_VALUE(rate) ? json_node_get_double(rate) : NAN;
        bool same = isnan(old_rate) ? isnan(s->learning_rate) : old_rate == learning_rate;
        if (rate && !same) {
            char now_text[32] = "the optimizer's default", was_text[32] = "the optimizer's default";
            if (!isnan(s->learning_rate))
                g_snprintf(now_text, sizeof now_text, "%g", s->learning_rate);
            if (!isnan(old_rate))
                g_snprintf(was_text, sizeof was_text, "%g", old_rate);
            g_string_append_printf(diff, ", learning rate %s (was %s)", now_text, was_text);
        }
    }
    if (diff->len)
        fprintf(stderr,
                "twb train: warning: %s was saved with other training settings: %s; the resumed run will not "
                "repeat the uninterrupted one\n",
                path, diff->str + 2);
    g_string_free(diff, TRUE);
    g_object_unref(parser);
}

/* The ranks a checkpoint was trained on (its settings' "ranks"; 1 without). */
static int checkpoint_ranks(const char *path)
{
    JsonParser *parser = json_parser_new();
    JsonObject *was = checkpoint_settings(path, parser);
    gint64 ranks = was ? json_object_get_int_member_with_default(was, "ranks", 1) : 1;
    g_object_unref(parser);
    return ranks > 0 && ranks < INT32_MAX ? (int)ranks : 1;
}

static int restore(train_run *run, tw_model *model, const twb_data *data, tw_fit_options *fit)
{
    const char *path = run->session.checkpoint_path;
    if (!run->opt->resume)
        return 0;
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        fprintf(stderr, "twb train: no checkpoint at %s yet; starting from the beginning\n", path);
        return 0;
    }
    /* Optimizer slots are restored into the built model's variables. */
    if (build_for(model, data, fit->seed) ||
        tw_checkpoint_restore(path, model, tw_model_optimizer(model)) ||
        tw_checkpoint_resume_position(path, &fit->initial_epoch, &fit->initial_step))
        return -1;
    /* After the restore, which refuses a training config nested too deep
     * for the JSON parser. */
    int ranks = checkpoint_ranks(path), now_ranks = tw_distributed_size();
    if (ranks != now_ranks)
        return tw_error_set("%s: trained on %d rank%s, resumed on %d: resume with mpirun -np %d (the steps of an "
                            "epoch depend on it)",
                            path, ranks, ranks == 1 ? "" : "s", now_ranks, ranks);
    /* A position past the data's batches cannot be one this data gave. */
    int64_t examples = tw_tensor_dim(data->x[0], 0), global = fit->batch_size * now_ranks,
            steps = examples / global + (examples % global != 0);
    if (fit->initial_step >= steps)
        return tw_error_set("%s: the training config says step %lld, past the %lld steps of an epoch of this data "
                            "(%lld examples, batch size %lld)",
                            path, (long long)fit->initial_step, (long long)steps, (long long)examples,
                            (long long)fit->batch_size);
    compare_settings(path, &run->opt->settings, tw_optimizer_learning_rate(tw_model_optimizer(model)));
    if (fit->initial_epoch > fit->epochs)
        fit->initial_epoch = fit->epochs;
    fprintf(stderr, "twb train: resuming from %s at epoch %d, step %lld\n", path, fit->initial_epoch + 1,
            (long long)fit->initial_step + 1);
    return 0;
}

static void print_json(const train_options *o, tw_model *model, const tw_history *h, const tw_logs *test,
                       const char *evaluated_on)
{
    int64_t params = 0;
    tw_model_count_params(model, &params, NULL, NULL);
    printf("{\"epochs\": %d, \"parameters\": %lld, \"samples_per_second\": %.1f", h->resume_epoch, (long long)params,
           h->samples_per_second);
    printf(", \"stopped_early\": %s, \"evaluated_on\": \"%s\"", h->stopped_early ? "true" : "false", evaluated_on);
    const tw_logs *last = h->epochs ? &h->epoch_logs[h->epochs - 1] : NULL;
    for (int i = 0; last && i < last->n; i++)
        printf(", \"%s\": %.6g", last->names[i], last->values[i]);
    for (int i = 0; i < test->n; i++)
        printf(", \"test_%s\": %.6g", test->names[i], test->values[i]);
    printf("}\n");
}

static int fit_and_report(train_run *run, tw_model *model, twb_data *data)
{
    const train_options *o = run->opt;
    /* The session puts the checkpoint first: the epoch's line then says
     * whether it failed. */
    tw_callback own = {
        .on_batch_end = on_batch_end, .on_epoch_end = on_epoch_end, .on_train_end = on_train_end, .user_data = run};
    tw_fit_options fit = twb_train_session_fit_options(&run->session, &own, &stop_requested);
    fit.traced = o->trace ? TW_TRACE_ON : TW_TRACE_AUTO;
    if (restore(run, model, data, &fit))
        return -1;
    tw_history *h = twb_train_session_fit(&run->session, data, &fit);
    if (!h)
        return -1;
    int rc = 0;
    if (h->stopped_early && stop_requested) {
        run->status = TW_RUN_STOPPED;
        fprintf(stderr, "\ntwb train: stopped at epoch %d, step %lld", h->resume_epoch + 1,
                (long long)h->resume_step + 1);
        rc = twb_train_session_save_stop(&run->session, h);
        fprintf(stderr, o->checkpoint_dir && !rc ? "; checkpoint saved to %s\n" : "%s\n",
                o->checkpoint_dir && !rc ? run->session.checkpoint_path : "");
    }
    tw_logs test = {0}, result = {0};
    const char *on = data->test_x[0] ? "test" : "training";
    if (!rc) {
        /* the run's result as the sweeps' and the window's (train_session.h):
         * the epoch's logs, and unless Ctrl+C stopped it the test metrics
         * and the Evaluation tab's confusion matrix and examples */
        int stored = twb_train_session_store_result(&run->session, h, data, stop_requested, &result);
        if (stored > 0)
            fprintf(stderr, "twb train: warning: the evaluation was not stored: %s\n", tw_last_error());
        rc = stored < 0 ? -1 : 0;
        for (int i = 0; i < result.n; i++)
            if (g_str_has_prefix(result.names[i], "test_"))
                tw_logs_set(&test, result.names[i] + strlen("test_"), result.values[i]);
    }
    bool quiet = tw_distributed_rank() != 0; /* rank 0 reports for all */
    if (!rc && !o->json && !quiet && test.n) {
        printf("%s:", on);
        for (int i = 0; i < test.n; i++)
            printf(" %s %.4f", test.names[i], test.values[i]);
        printf(" (%.0f samples/s in training)\n", h->samples_per_second);
    }
    if (!rc && o->json && !quiet)
        print_json(o, model, h, &test, on);
    tw_history_free(h);
    return rc;
}

static int train(train_options *o, tw_model *model, twb_data *data)
{
    train_run run = {.opt = o, .status = TW_RUN_FINISHED};
    /* Under mpirun only rank 0 shows progress. */
    FILE *devnull = tw_distributed_rank() ? fopen("/dev/null", "w") : NULL;
    twb_progress_init(&run.progress, devnull ? devnull : o->json ? stderr : stdout);
    char *checkpoint_path = o->checkpoint_dir ? g_build_filename(o->checkpoint_dir, CHECKPOINT_NAME, NULL) : NULL;
    twb_train_session_options options = {.checkpoint_path = checkpoint_path, .log_every = o->log_every,
                                         .histogram_every = o->histogram_every, .resume = o->resume,
                                         .tfevents_dir = o->tfevents};
    int rc = twb_train_compile(model, &o->settings, data->y);
    if (!rc)
        rc = twb_train_session_open(&run.session, model, &o->settings, &options);
    if (!rc) {
        warn_logdb(&run); /* a read-only file: known now */
        if (run.session.writer && tw_summary_writer_tfevents_path(run.session.writer) && !o->json)
            printf("TensorBoard event file: %s\n", tw_summary_writer_tfevents_path(run.session.writer));
        catch_stop_signals(true);
        rc = fit_and_report(&run, model, data);
        catch_stop_signals(false);
    }
    if (run.profiled) { /* fit failed before its end */
        tw_graph_profile_stop(run.profiled);
        tw_graph_unref(run.profiled);
    }
    close_session(&run, rc);
    if (devnull)
        fclose(devnull);
    g_free(checkpoint_path);
    return rc;
}

/* ---- evaluate and predict ------------------------------------------------- */
/* The weights are the checkpoint's, or those the model file carries (a
 * .keras or .h5 saved with its weights, or put in with --weights) when none
 * is named. */
static int evaluate_or_predict(train_options *o, tw_model *model, bool file_has_weights, twb_data *data)
{
    if (!o->checkpoint && !file_has_weights)
        return tw_error_set("%s: %s carries no weights; name the trained weights with --checkpoint FILE or "
                            "--weights FILE",
                            o->command,
                            o->model_path);
    tw_tensor *x[TWB_MAX_INPUTS], *y;
    int nx = twb_fit_inputs(model, data, true, x, &y);
    /* Built first (from the data's shape), so the restore checks every
     * weight against the model and its messages name the checkpoint. */
    int rc = build_for(model, data, 0);
    if (!rc && o->checkpoint)
        rc = tw_checkpoint_restore(o->checkpoint, model, NULL);
    if (!strcmp(o->command, "evaluate")) {
        tw_logs logs = {0};
        if (!rc)
            rc = twb_train_compile(model, &o->settings, y);
        if (!rc)
            rc = tw_model_evaluate_n(model, nx, x, 1, &y, o->settings.batch_size, &logs);
        for (int i = 0; !rc && i < logs.n; i++)
            printf(o->json ? "%s\"%s\": %.6g" : "%s%s %.4f", i ? (o->json ? ", " : " ") : (o->json ? "{" : ""),
                   logs.names[i], logs.values[i]);
        if (!rc)
            printf(o->json ? "}\n" : "\n");
        int stored = rc || !o->settings.logdb ? 0 : twb_evaluation_store(o->settings.logdb, o->settings.run_name, model, data);
        if (stored == 1)
            rc = tw_error_set("--run: the stored evaluation is a classifier's of one input with one class label per "
                              "example; %s is not such data",
                              data->description);
        else if (stored)
            rc = -1;
        else if (!rc && o->settings.logdb && !o->json)
            printf("evaluation stored in run '%s' of %s\n", o->settings.run_name, o->settings.logdb);
    } else if (!rc) {
        tw_tensor *pred[TW_MAX_LAYER_IO];
        int npred = tw_model_predict_n(model, nx, x, o->settings.batch_size, pred);
        rc = npred == 1 ? 0 : -1;
        if (npred > 1)
            tw_error_set("predict: model '%s' gives %d outputs; twb predict writes one", tw_layer_name(model), npred);
        if (!rc && o->output)
            rc = tw_npy_save(o->output, pred[0]);
        else if (!rc)
            tw_tensor_print(pred[0], stdout);
        for (int k = 0; k < npred; k++)
            tw_tensor_unref(pred[k]);
    }
    twb_inputs_clear(nx, x);
    return rc;
}

/* Files of examples, one per model input (--data given once per input),
 * counted before any is read. 0, or -1 with a message. */
static int check_data_files(const train_options *o, tw_model *model)
{
    if (twb_data_is_builtin(o->settings.data, NULL))
        return 0; /* twb_data_check compares the set's inputs with the model's */
    int files = 1, inputs = tw_model_ninputs(model);
    while (o->more_data[files - 1])
        files++;
    if (files < inputs)
        return tw_error_set("%s: model '%s' takes %d inputs, got %d --data file%s: give --data once per input, in "
                            "the model's input order (--data A.npy --data B.npy --labels Y.npy)",
                            o->model_path, tw_layer_name(model), inputs, files, files == 1 ? "" : "s");
    if (files > inputs)
        return tw_error_set("%s: model '%s' takes %d input%s, got %d --data files: give --data once per input",
                            o->model_path, tw_layer_name(model), inputs, inputs == 1 ? "" : "s", files);
    return 0;
}

int twb_train_command(const char *command, int argc, char **argv)
{
    train_options o = {.command = command, .settings = tw_train_settings_defaults(), .log_every = TWB_LOG_EVERY_STEPS,
                       .histogram_every = TWB_HISTOGRAM_EVERY_STEPS};
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    /* Under mpirun, train is data-parallel over the ranks. */
    if (!strcmp(command, "train") && tw_distributed_init(NULL, NULL)) {
        fprintf(stderr, "twb %s: %s\n", command, tw_last_error());
        return 1;
    }
    o.settings.ranks = tw_distributed_size();
    if (o.trace && o.settings.ranks > 1) {
        fprintf(stderr, "twb %s: --trace is not available under mpirun: a data-parallel step runs eagerly, its "
                        "allreduce cannot be part of the traced graph\n",
                command);
        tw_distributed_finalize();
        return 1;
    }
    /* The model's variables are made on the thread's default device, and
     * fit, evaluate and predict copy each batch to them. */
    tw_device device;
    bool parsed = o.settings.device && !tw_device_parse(o.settings.device, &device);
    /* Under mpirun, "--device cuda" without an index: one GPU a rank, the
     * rank's index on its machine (as llm.c). */
    if (parsed && device.kind == TW_DEVICE_CUDA && !strchr(o.settings.device, ':'))
        device.index = tw_distributed_local_rank();
    if (o.settings.device && (!parsed || tw_set_default_device(device))) {
        fprintf(stderr, "twb %s: --device: %s\n", command, tw_last_error());
        tw_distributed_finalize();
        return 1;
    }
    tw_model *model = tw_model_open(o.model_path);
    /* A layer that opens but cannot run (a Lambda's Python code, whose
     * output shape may be unknown too): its reason, before any data. */
    if (model && tw_layer_check_runnable(model)) {
        fprintf(stderr, "twb %s: %s: %s\n", command, o.model_path, tw_last_error());
        tw_layer_unref(model);
        tw_distributed_finalize();
        return 1;
    }
    bool file_has_weights = model && tw_model_open_had_weights();
    /* Built from the model's input shape by the load, which checks every
     * weight before assigning any. */
    if (model && o.weights && tw_model_input_shape(model)) {
        if (tw_model_load_weights(model, o.weights)) {
            fprintf(stderr, "twb %s: --weights %s\n", command, tw_last_error());
            tw_layer_unref(model);
            tw_distributed_finalize();
            return 1;
        }
        file_has_weights = true;
    }
    twb_data data = {0};
    twb_data_spec spec = twb_data_spec_of(&o.settings);
    if (model && !tw_model_input_shape(model)) /* a fault of the file: name it */
        tw_error_set("%s: model '%s' has no input shape; give its first layer one or add an InputLayer",
                     o.model_path, tw_layer_name(model));
    /* train refuses what the window's Train and `twb sweep` refuse, with
     * their words (twb_data_check: no weights to train, output units
     * against the classes, ...); evaluate and predict need only inputs the
     * data can feed (a frozen model has nothing to train, yet evaluates). */
    if (!model || !tw_model_input_shape(model) || check_data_files(&o, model) || twb_data_load(&spec, &data) ||
        ((!strcmp(command, "train") || tw_model_ninputs(model) != data.ninputs) && twb_data_check(model, &data))) {
        fprintf(stderr, "twb %s: %s\n", command, tw_last_error());
        tw_layer_unref(model);
        tw_distributed_finalize();
        return 1;
    }
    rc = !strcmp(command, "train") ? train(&o, model, &data) : evaluate_or_predict(&o, model, file_has_weights, &data);
    if (rc)
        fprintf(stderr, "twb %s: %s\n", command, tw_last_error());
    twb_data_clear(&data);
    tw_layer_unref(model);
    tw_distributed_finalize();
    return rc ? 1 : 0;
}
