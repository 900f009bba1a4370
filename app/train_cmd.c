/* twb train MODEL.json --data fashion-mnist|FILE [options] [--logdb FILE [--run NAME]]
 * twb evaluate MODEL.json --checkpoint FILE --data ...
 * twb predict MODEL.json --checkpoint FILE --data ... [--output FILE.npy]
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
 * epoch logs and the test metrics. --trace runs the training step traced
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
#include <tw/keras_file.h>
#include <tw/model_file.h>
#include <tw/summary.h>

#include "train_data.h"
#include "train_progress.h"

#define CHECKPOINT_NAME "checkpoint.safetensors"
/* --trace --logdb: steps whose node times make the stored profile. */
#define PROFILE_STEPS 50

typedef struct {
    const char *command;
    const char *model_path;
    twb_data_spec data;
    const char *optimizer, *loss, *checkpoint_dir, *checkpoint, *output, *logdb, *run_name;
    int epochs, log_every, histogram_every;
    int64_t batch_size;
    double learning_rate; /* NAN: the optimizer's default */
    double validation_split;
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
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
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

static int set_option(train_options *o, const char *name, const char *value)
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
        if (!parse_number(value, numbers[i].min, numbers[i].max, &v) ||
            (i != 2 && i != 4 && v != floor(v)))
            return usage(o->command, "bad value for option: %s", name);
        if (i == 0)
            o->epochs = (int)v;
        else if (i == 1)
            o->batch_size = (int64_t)v;
        else if (i == 2)
            o->learning_rate = v;
        else if (i == 3)
            o->data.seed = (uint64_t)v;
        else if (i == 4)
            o->validation_split = v;
        else if (i == 5)
            o->log_every = (int)v;
        else
            o->histogram_every = (int)v;
        return 0;
    }
    const struct {
        const char *name;
        const char **field;
    } strings[] = {
        {"--data", &o->data.data}, {"--labels", &o->data.labels}, {"--label-column", &o->data.label_column},
        {"--optimizer", &o->optimizer}, {"--loss", &o->loss}, {"--checkpoint-dir", &o->checkpoint_dir},
        {"--checkpoint", &o->checkpoint}, {"--output", &o->output}, {"--logdb", &o->logdb}, {"--run", &o->run_name},
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
        const char *arg = argv[i];
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
            const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
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
    if (!o->data.data)
        return usage(o->command, "%s", "name the data with --data fashion-mnist|spirals|blobs|linear|FILE");
    if (o->resume && !o->checkpoint_dir)
        return usage(o->command, "%s", "--resume needs --checkpoint-dir");
    if (o->run_name && !o->logdb)
        return usage(o->command, "%s", "--run needs --logdb");
    return 0;
}

/* ---- training ------------------------------------------------------------- */
typedef struct {
    train_options *opt;
    twb_progress progress;
    tw_model_checkpoint *checkpoint; /* NULL without --checkpoint-dir */
    char checkpoint_path[4096];
    tw_summary_writer *logdb; /* NULL without --logdb */
    tw_summary_logger *logger;
    bool logdb_warned;        /* its failure was reported (once) */
    int checkpoint_failures;  /* failed saves seen so far */
    char *checkpoint_warned;  /* the last failure's message warned about */
    tw_run_status status;
    bool graph_stored; /* --trace --logdb: the step's graph went into the run */
    const tw_graph *profiled; /* a reference while its steps are being profiled */
    int profiled_steps;
} train_run;

/* The builder's object as text (g_free), the builder freed. */
static char *builder_text(JsonBuilder *b)
{
    JsonNode *root = json_builder_get_root(b);
    char *text = json_to_string(root, FALSE);
    json_node_unref(root);
    g_object_unref(b);
    return text;
}

/* What a checkpoint records about how it was trained, as a JSON object. */
static char *settings_json(const train_options *o)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "data");
    json_builder_add_string_value(b, o->data.data);
    json_builder_set_member_name(b, "epochs");
    json_builder_add_int_value(b, o->epochs);
    json_builder_set_member_name(b, "batch_size");
    json_builder_add_int_value(b, o->batch_size);
    json_builder_set_member_name(b, "seed");
    json_builder_add_int_value(b, (gint64)o->data.seed);
    json_builder_set_member_name(b, "optimizer");
    json_builder_add_string_value(b, o->optimizer);
    json_builder_set_member_name(b, "learning_rate");
    if (isnan(o->learning_rate))
        json_builder_add_null_value(b);
    else
        json_builder_add_double_value(b, o->learning_rate);
    json_builder_set_member_name(b, "validation_split");
    json_builder_add_double_value(b, o->validation_split);
    json_builder_end_object(b);
    return builder_text(b);
}

/* --trace --logdb: the traced training step's graph, once, at step 0, for
 * the window's graph view. After the first step, which traced it. */
static int store_step_graph(train_run *run, tw_model *model)
{
    const tw_graph *g = tw_model_train_step_graph(model);
    char *json = g ? tw_graph_json(g) : NULL;
    int rc = json ? tw_summary_graph(run->logdb, "graph/train_step", json, 0)
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
        rc = tw_summary_text(run->logdb, "profile/train_step", json, 0);
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
    const char *error = tw_summary_writer_error(run->logdb);
    if (!error || run->logdb_warned)
        return;
    warn(run, error);
    run->logdb_warned = true;
}

/* A checkpoint that could not be saved (a full disk): the previous one
 * stays, training goes on. Once per message, not at every epoch. */
static void warn_checkpoint(train_run *run)
{
    if (!run->checkpoint || tw_model_checkpoint_failures(run->checkpoint) == run->checkpoint_failures)
        return;
    run->checkpoint_failures = tw_model_checkpoint_failures(run->checkpoint);
    const char *error = tw_model_checkpoint_error(run->checkpoint);
    if (!g_strcmp0(error, run->checkpoint_warned))
        return;
    g_free(run->checkpoint_warned);
    run->checkpoint_warned = g_strdup(error);
    warn(run, error);
}

static int on_batch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    train_run *run = user_data;
    twb_progress_batch(&run->progress, p, logs);
    warn_logdb(run);
    if (run->opt->trace && run->logdb && !run->graph_stored)
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
/* The run's name without --run: the model's name and the time. */
static char *default_run_name(const tw_model *model)
{
    GDateTime *now = g_date_time_new_now_local();
    char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    char *name = g_strdup_printf("%s-%s", tw_layer_name(model), stamp);
    g_free(stamp);
    g_date_time_unref(now);
    return name;
}

/* After compiling, so the settings hold the optimizer's actual rate. A
 * resumed training appends to its run. */
static int open_logdb(train_run *run, tw_model *model)
{
    const train_options *o = run->opt;
    train_options effective = *o;
    effective.learning_rate = tw_optimizer_learning_rate(tw_model_optimizer(model));
    char *model_json = tw_model_to_json(model), *settings = settings_json(&effective);
    char *name = o->run_name ? g_strdup(o->run_name) : default_run_name(model);
    tw_summary_run_options options = {.model_json = model_json, .hparams_json = settings, .append = o->resume};
    run->logdb = tw_summary_writer_open(o->logdb, name, &options);
    if (run->logdb)
        run->logger = tw_summary_logger_new(run->logdb, o->log_every, o->histogram_every);
    if (run->logdb)
        warn_logdb(run); /* a read-only file: known now */
    free(model_json);
    g_free(settings);
    g_free(name);
    return run->logger ? 0 : -1;
}

static void log_test_metrics(train_run *run, const tw_logs *test)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    for (int i = 0; i < test->n; i++) {
        char *name = g_strconcat("test_", test->names[i], NULL);
        json_builder_set_member_name(b, name);
        json_builder_add_double_value(b, test->values[i]);
        g_free(name);
    }
    json_builder_end_object(b);
    char *metrics = builder_text(b);
    tw_summary_hparams(run->logdb, NULL, metrics);
    g_free(metrics);
}

/* The run's end, with why it failed. Lost logs are a warning (once):
 * training's result stands. */
static void close_logdb(train_run *run, int rc)
{
    char *error = rc ? g_strdup(tw_last_error()) : NULL;
    char *reported = run->logdb_warned ? g_strdup(tw_summary_writer_error(run->logdb)) : NULL;
    if (tw_summary_writer_close_with_reason(run->logdb, rc ? TW_RUN_FAILED : run->status, error) &&
        g_strcmp0(reported, tw_last_error()))
        fprintf(stderr, "twb train: warning: %s\n", tw_last_error());
    g_free(reported);
    tw_summary_logger_free(run->logger);
    if (error)
        tw_error_set("%s", error);
    g_free(error);
}

static tw_optimizer *make_optimizer(const train_options *o)
{
    tw_optimizer_kind kind;
    if (tw_optimizer_kind_from_name(o->optimizer, &kind))
        return NULL;
    tw_optimizer_config config = tw_optimizer_defaults(kind);
    if (!isnan(o->learning_rate))
        config.learning_rate.initial_learning_rate = o->learning_rate;
    return tw_optimizer_new(&config);
}

static int compile_model(tw_model *model, const train_options *o, tw_tensor *y)
{
    tw_loss loss;
    if (o->loss ? tw_loss_from_name(o->loss, &loss) : twb_default_loss(model, y, &loss))
        return -1;
    if (o->loss && !tw_dtype_is_float(tw_tensor_dtype(y)) && loss.kind != TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
        loss.from_logits = false;
    bool classify = loss.kind >= TW_LOSS_BINARY_CROSSENTROPY;
    const char *metrics[] = {"accuracy"};
    tw_optimizer *opt = make_optimizer(o);
    if (!opt)
        return -1;
    return tw_model_compile(model, opt, &loss, classify ? 1 : 0, metrics);
}

/* x's shape with any batch size: what the model is built for. */
static tw_shape batch_shape_of(const tw_tensor *x)
{
    tw_shape in = {.ndim = tw_tensor_ndim(x)};
    memcpy(in.dims, tw_tensor_shape(x), sizeof(int64_t) * (size_t)in.ndim);
    in.dims[0] = -1;
    return in;
}

/* The checkpoint's settings (settings_json) against this training's: a
 * resumed run repeats the uninterrupted one only with the same data, batch
 * size, seed and learning rate. Warns, naming what differs. */
static void compare_settings(const char *path, const train_options *o)
{
    char *config = tw_checkpoint_read_metadata(path, "training_config");
    JsonParser *parser = json_parser_new();
    JsonNode *root = config && json_parser_load_from_data(parser, config, -1, NULL) ? json_parser_get_root(parser)
                                                                                     : NULL;
    JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *node = top ? json_object_get_member(top, "settings") : NULL;
    JsonObject *was = node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    GString *diff = g_string_new(NULL);
    if (was) {
        const char *data = json_object_get_string_member_with_default(was, "data", NULL);
        if (data && strcmp(data, o->data.data))
            g_string_append_printf(diff, ", data %s (was %s)", o->data.data, data);
        gint64 batch = json_object_get_int_member_with_default(was, "batch_size", o->batch_size);
        if (batch != o->batch_size)
            g_string_append_printf(diff, ", batch size %lld (was %lld)", (long long)o->batch_size, (long long)batch);
        gint64 seed = json_object_get_int_member_with_default(was, "seed", (gint64)o->data.seed);
        if (seed != (gint64)o->data.seed)
            g_string_append_printf(diff, ", seed %llu (was %lld)", (unsigned long long)o->data.seed, (long long)seed);
        JsonNode *rate = json_object_get_member(was, "learning_rate");
        double old_rate = rate && JSON_NODE_HOLDS_VALUE(rate) ? json_node_get_double(rate) : NAN;
        if (rate && !(isnan(old_rate) && isnan(o->learning_rate)) && old_rate != o->learning_rate) {
            char now_text[32] = "the optimizer's default", was_text[32] = "the optimizer's default";
            if (!isnan(o->learning_rate))
                g_snprintf(now_text, sizeof now_text, "%g", o->learning_rate);
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
    free(config);
}

static int restore(train_run *run, tw_model *model, tw_tensor *x, tw_fit_options *fit)
{
    if (!run->opt->resume)
        return 0;
    if (!g_file_test(run->checkpoint_path, G_FILE_TEST_EXISTS)) {
        fprintf(stderr, "twb train: no checkpoint at %s yet; starting from the beginning\n", run->checkpoint_path);
        return 0;
    }
    /* Optimizer slots are restored into the built model's variables. */
    tw_shape in = batch_shape_of(x);
    if ((!tw_layer_built(model) && tw_model_build(model, &in, fit->seed)) ||
        tw_checkpoint_restore(run->checkpoint_path, model, tw_model_optimizer(model)) ||
        tw_checkpoint_resume_position(run->checkpoint_path, &fit->initial_epoch, &fit->initial_step))
        return -1;
    /* A position past the data's batches cannot be one this data gave. */
    int64_t examples = tw_tensor_dim(x, 0), steps = examples / fit->batch_size + (examples % fit->batch_size != 0);
    if (fit->initial_step >= steps)
        return tw_error_set("%s: the training config says step %lld, past the %lld steps of an epoch of this data "
                            "(%lld examples, batch size %lld)",
                            run->checkpoint_path, (long long)fit->initial_step, (long long)steps,
                            (long long)examples, (long long)fit->batch_size);
    compare_settings(run->checkpoint_path, run->opt);
    if (fit->initial_epoch > fit->epochs)
        fit->initial_epoch = fit->epochs;
    fprintf(stderr, "twb train: resuming from %s at epoch %d, step %lld\n", run->checkpoint_path,
            fit->initial_epoch + 1, (long long)fit->initial_step + 1);
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

static int fit_and_report(train_run *run, tw_model *model, twb_data *data, tw_tensor *x, tw_tensor *test_x)
{
    const train_options *o = run->opt;
    tw_fit_options fit = tw_fit_options_default();
    fit.epochs = o->epochs;
    fit.batch_size = o->batch_size;
    fit.seed = o->data.seed;
    fit.validation_split = o->validation_split;
    fit.stop_flag = &stop_requested;
    /* The checkpoint first: the epoch's line then says whether it failed. */
    tw_callback callbacks[3];
    int ncallbacks = 0;
    if (run->checkpoint)
        callbacks[ncallbacks++] = tw_model_checkpoint_callback(run->checkpoint);
    callbacks[ncallbacks++] = (tw_callback){
        .on_batch_end = on_batch_end, .on_epoch_end = on_epoch_end, .on_train_end = on_train_end, .user_data = run};
    if (run->logger)
        callbacks[ncallbacks++] = tw_summary_logger_callback(run->logger);
    fit.callbacks = callbacks;
    fit.ncallbacks = ncallbacks;
    fit.expose_gradients = run->logger && o->histogram_every > 0;
    fit.traced = o->trace ? TW_TRACE_ON : TW_TRACE_AUTO;
    if (restore(run, model, x, &fit))
        return -1;
    tw_history *h = tw_model_fit(model, x, data->y, &fit);
    if (!h)
        return -1;
    int rc = 0;
    if (h->stopped_early && stop_requested) {
        run->status = TW_RUN_STOPPED;
        fprintf(stderr, "\ntwb train: stopped at epoch %d, step %lld", h->resume_epoch + 1,
                (long long)h->resume_step + 1);
        if (run->checkpoint)
            rc = tw_model_checkpoint_save_now(run->checkpoint, model, h->resume_epoch, h->resume_step);
        fprintf(stderr, o->checkpoint_dir && !rc ? "; checkpoint saved to %s\n" : "%s\n",
                o->checkpoint_dir && !rc ? run->checkpoint_path : "");
    }
    tw_logs test = {0};
    const char *on = test_x ? "test" : "training";
    if (!rc)
        rc = tw_model_evaluate(model, test_x ? test_x : x, test_x ? data->test_y : data->y, 256, &test);
    if (!rc && !o->json) {
        printf("%s:", on);
        for (int i = 0; i < test.n; i++)
            printf(" %s %.4f", test.names[i], test.values[i]);
        printf(" (%.0f samples/s in training)\n", h->samples_per_second);
    }
    if (!rc && o->json)
        print_json(o, model, h, &test, on);
    if (!rc && run->logdb)
        log_test_metrics(run, &test);
    tw_history_free(h);
    return rc;
}

static int train(train_options *o, tw_model *model, twb_data *data)
{
    train_run run = {.opt = o, .status = TW_RUN_FINISHED};
    twb_progress_init(&run.progress, o->json ? stderr : stdout);
    tw_tensor *x = twb_fit_input(model, data->x), *test_x = twb_fit_input(model, data->test_x);
    int rc = compile_model(model, o, data->y);
    if (!rc && o->checkpoint_dir) {
        snprintf(run.checkpoint_path, sizeof run.checkpoint_path, "%s/%s", o->checkpoint_dir, CHECKPOINT_NAME);
        if (g_mkdir_with_parents(o->checkpoint_dir, 0755))
            rc = tw_error_set("%s: cannot create the checkpoint directory: %s", o->checkpoint_dir, g_strerror(errno));
        char *model_json = tw_model_to_json(model), *settings = settings_json(o);
        run.checkpoint = tw_model_checkpoint_new(run.checkpoint_path, NULL, model_json, settings);
        free(model_json);
        g_free(settings);
    }
    if (!rc && o->logdb)
        rc = open_logdb(&run, model);
    if (!rc) {
        catch_stop_signals(true);
        rc = fit_and_report(&run, model, data, x, test_x);
        catch_stop_signals(false);
    }
    if (run.profiled) { /* fit failed before its end */
        tw_graph_profile_stop(run.profiled);
        tw_graph_unref(run.profiled);
    }
    if (run.logdb)
        close_logdb(&run, rc);
    tw_model_checkpoint_free(run.checkpoint);
    g_free(run.checkpoint_warned);
    tw_tensor_unref(x);
    tw_tensor_unref(test_x);
    return rc;
}

/* ---- evaluate and predict ------------------------------------------------- */
static int evaluate_or_predict(train_options *o, tw_model *model, twb_data *data)
{
    if (!o->checkpoint)
        return tw_error_set("%s: name the trained weights with --checkpoint FILE", o->command);
    bool test = data->test_x != NULL;
    tw_tensor *x = twb_fit_input(model, test ? data->test_x : data->x);
    tw_tensor *y = test ? data->test_y : data->y;
    /* Built first (from the data's shape), so the restore checks every
     * weight against the model and its messages name the checkpoint. */
    tw_shape in = batch_shape_of(x);
    int rc = tw_layer_built(model) ? 0 : tw_model_build(model, &in, 0);
    if (!rc)
        rc = tw_checkpoint_restore(o->checkpoint, model, NULL);
    if (!strcmp(o->command, "evaluate")) {
        tw_logs logs = {0};
        if (!rc)
            rc = compile_model(model, o, y);
        if (!rc)
            rc = tw_model_evaluate(model, x, y, o->batch_size, &logs);
        for (int i = 0; !rc && i < logs.n; i++)
            printf(o->json ? "%s\"%s\": %.6g" : "%s%s %.4f", i ? (o->json ? ", " : " ") : (o->json ? "{" : ""),
                   logs.names[i], logs.values[i]);
        if (!rc)
            printf(o->json ? "}\n" : "\n");
    } else if (!rc) {
        tw_tensor *pred = tw_model_predict(model, x, o->batch_size);
        rc = pred ? 0 : -1;
        if (pred && o->output)
            rc = tw_npy_save(o->output, pred);
        else if (pred)
            tw_tensor_print(pred, stdout);
        tw_tensor_unref(pred);
    }
    tw_tensor_unref(x);
    return rc;
}

int twb_train_command(const char *command, int argc, char **argv)
{
    train_options o = {.command = command, .optimizer = "adam", .epochs = 1, .batch_size = 32,
                       .learning_rate = NAN, .log_every = 10, .histogram_every = 100};
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    tw_model *model = tw_model_open(o.model_path);
    twb_data data = {0};
    if (!model || twb_data_load(&o.data, &data)) {
        fprintf(stderr, "twb %s: %s\n", command, tw_last_error());
        tw_layer_unref(model);
        return 1;
    }
    rc = !strcmp(command, "train") ? train(&o, model, &data) : evaluate_or_predict(&o, model, &data);
    if (rc)
        fprintf(stderr, "twb %s: %s\n", command, tw_last_error());
    twb_data_clear(&data);
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
