/* One training session, shared by `twb train` and the window's worker (see
 * train_session.h). */
#include "train_session.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/distributed.h>
#include <tw/model_file.h>
#include <tw/optimizers.h>
#include <tw/run_store.h>

#include "evaluate_run.h"
#include "train_data.h"

int twb_train_set_layer_values(tw_model *model, const tw_train_settings *s)
{
    for (int i = 0; i < s->nlayer_values; i++) {
        const tw_layer_value *v = &s->layer_values[i];
        tw_layer *layer = tw_model_find_layer_path(model, v->layer, NULL);
        if (!layer)
            return -1; /* the message names the model's candidates */
        /* a value the layer has already: nothing changes, built or not
         * (twb_sweep_trial_model sets them before it builds) */
        const tw_param_value *now = tw_layer_get(layer, v->property);
        if (now && !now->is_null && now->number == v->value)
            continue;
        char text[G_ASCII_DTOSTR_BUF_SIZE];
        if (tw_layer_set(layer, v->property, g_ascii_dtostr(text, sizeof text, v->value))) {
            char *why = g_strdup(tw_last_error());
            tw_error_set("layer '%s': %s", v->layer, why);
            g_free(why);
            return -1;
        }
    }
    return 0;
}

static int is_functional(const char *path, tw_layer *layer, void *user_data)
{
    (void)path;
    (void)user_data;
    return tw_layer_is_functional(layer);
}

tw_model *twb_model_with_layer_values(tw_model *model, const tw_train_settings *s)
{
    if (!model || !s->nlayer_values)
        return model;
    if (twb_train_set_layer_values(model, s)) {
        tw_layer_unref(model);
        return NULL;
    }
    /* A Functional model's graph keeps the shapes its layers had when it
     * was made: read it again from its JSON, which has the new values. */
    if (!tw_layer_is_functional(model) && !tw_model_foreach_layer(model, is_functional, NULL))
        return model;
    char *json = tw_model_to_json(model);
    tw_model *again = json ? tw_model_from_json(json, strlen(json), tw_layer_name(model)) : NULL;
    free(json);
    tw_layer_unref(model);
    return again;
}

int twb_train_compile(tw_model *model, const tw_train_settings *s, tw_tensor *y)
{
    if (twb_train_set_layer_values(model, s))
        return -1;
    tw_loss loss;
    if (s->loss ? tw_loss_from_name(s->loss, &loss) : twb_default_loss(model, y, &loss))
        return -1;
    /* A named loss on integer labels takes probabilities, as Keras' does,
     * except the sparse cross-entropy's usual logits. */
    if (s->loss && !tw_dtype_is_float(tw_tensor_dtype(y)) && loss.kind != TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
        loss.from_logits = false;
    tw_optimizer_kind kind;
    if (tw_optimizer_kind_from_name(s->optimizer, &kind))
        return -1;
    tw_optimizer_config config = tw_optimizer_defaults(kind);
    if (!isnan(s->learning_rate))
        config.learning_rate.initial_learning_rate = s->learning_rate;
    tw_optimizer *opt = tw_optimizer_new(&config);
    if (!opt)
        return -1;
    const char *metrics[] = {"accuracy"};
    bool classify = loss.kind >= TW_LOSS_BINARY_CROSSENTROPY;
    return tw_model_compile(model, opt, &loss, classify ? 1 : 0, metrics);
}

/* The run's name without one in the settings: the model's name and the time. */
static char *default_run_name(const tw_model *model)
{
    GDateTime *now = g_date_time_new_now_local();
    char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    char *name = g_strdup_printf("%s-%s", tw_layer_name(model), stamp);
    g_free(stamp);
    g_date_time_unref(now);
    return name;
}

static int open_checkpoint(twb_train_session *ts, const char *model_json, const char *settings_json)
{
    char *dir = g_path_get_dirname(ts->checkpoint_path);
    int rc = g_mkdir_with_parents(dir, 0755);
    if (rc)
        tw_error_set("%s: cannot create the checkpoint folder: %s", dir, g_strerror(errno));
    g_free(dir);
    if (!rc)
        ts->checkpoint = tw_model_checkpoint_new(ts->checkpoint_path, NULL, model_json, settings_json);
    return rc ? -1 : 0;
}

/* The run: the model, the settings, and (through the logger) the batch
 * logs, histograms and epoch logs. A resumed training appends to its run. */
static int open_run(twb_train_session *ts, const char *model_json, const char *settings_json,
                    const twb_train_session_options *o)
{
    const tw_train_settings *s = ts->settings;
    char *name = s->run_name ? g_strdup(s->run_name) : default_run_name(ts->model);
    tw_summary_run_options options = {.model_json = model_json, .hparams_json = settings_json, .append = o->resume,
                                      .unique = !s->run_name && !o->resume, .tfevents_dir = o->tfevents_dir};
    ts->writer = tw_summary_writer_open(s->logdb, name, &options);
    g_free(name);
    if (ts->writer)
        ts->logger = tw_summary_logger_new(ts->writer, o->log_every, o->histogram_every);
    return ts->logger ? 0 : -1;
}

int twb_train_session_open(twb_train_session *ts, tw_model *model, const tw_train_settings *settings,
                           const twb_train_session_options *o)
{
    *ts = (twb_train_session){.settings = settings, .model = model, .histogram_every = o->histogram_every,
                              .log_every = o->log_every,
                              .checkpoint_path = g_strdup(o->checkpoint_path)};
    char *model_json = tw_model_to_json(model);
    char *settings_json = tw_train_settings_json(settings, tw_optimizer_learning_rate(tw_model_optimizer(model)));
    int rc = 0;
    bool writes = tw_distributed_rank() == 0; /* rank 0 writes for all */
    if (ts->checkpoint_path && writes)
        rc = open_checkpoint(ts, model_json, settings_json);
    if (!rc && settings->logdb && writes)
        rc = open_run(ts, model_json, settings_json, o);
    free(model_json);
    free(settings_json);
    ts->run_id = ts->writer ? tw_summary_writer_run_id(ts->writer) : -1;
    if (settings->logdb && tw_distributed_size() > 1) {
        /* Every rank takes part, rank 0 even when its open failed. */
        double mine = (double)ts->run_id, *all = g_new(double, tw_distributed_size());
        int shared = tw_allgather_values(&mine, 1, all);
        if (!shared)
            ts->run_id = (int64_t)all[0];
        g_free(all);
        if (!rc)
            rc = shared;
    }
    return rc;
}

/* Every rank's step and allreduce times, every log_every steps as the
 * logger's batch logs. */
static int log_rank_times(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    (void)model;
    (void)logs;
    twb_train_session *ts = user_data;
    int every = ts->log_every > 0 ? ts->log_every : 1;
    if (p->ranks < 2 || p->iterations % every)
        return 0;
    for (int r = 0; r < p->ranks; r++) {
        char tag[64];
        g_snprintf(tag, sizeof tag, "dist/rank_%d/step_ms", r);
        tw_summary_scalar(ts->writer, tag, p->rank_step_ms[r], p->iterations);
        g_snprintf(tag, sizeof tag, "dist/rank_%d/allreduce_ms", r);
        tw_summary_scalar(ts->writer, tag, p->rank_allreduce_ms[r], p->iterations);
    }
    return 0;
}

tw_fit_options twb_train_session_fit_options(twb_train_session *ts, const tw_callback *own, volatile int *stop)
{
    const tw_train_settings *s = ts->settings;
    tw_fit_options fit = tw_fit_options_default();
    fit.epochs = s->epochs;
    fit.batch_size = s->batch_size;
    fit.seed = s->seed;
    fit.validation_split = s->validation_split;
    fit.stop_flag = stop;
    int n = 0;
    if (ts->checkpoint)
        ts->callbacks[n++] = tw_model_checkpoint_callback(ts->checkpoint);
    if (own)
        ts->callbacks[n++] = *own;
    if (ts->logger)
        ts->callbacks[n++] = tw_summary_logger_callback(ts->logger);
    fit.distributed = tw_distributed_size() > 1;
    if (fit.distributed && ts->writer)
        ts->callbacks[n++] = (tw_callback){.on_batch_end = log_rank_times, .user_data = ts};
    fit.callbacks = ts->callbacks;
    fit.ncallbacks = n;
    fit.expose_gradients = ts->logger && ts->histogram_every > 0; /* gradient histograms for the dashboard */
    return fit;
}

tw_history *twb_train_session_fit(twb_train_session *ts, const twb_data *data, const tw_fit_options *fit)
{
    tw_tensor *x[TWB_MAX_INPUTS], *y;
    int nx = twb_fit_inputs(ts->model, data, false, x, &y);
    tw_history *h = tw_model_fit_n(ts->model, nx, x, 1, &y, fit);
    twb_inputs_clear(nx, x);
    return h;
}

int twb_train_session_save_stop(twb_train_session *ts, const tw_history *h)
{
    if (!ts->checkpoint)
        return 0;
    return tw_model_checkpoint_save_now(ts->checkpoint, ts->model, h->resume_epoch, h->resume_step);
}

void twb_train_session_log_metrics(twb_train_session *ts, const tw_logs *logs, const char *prefix)
{
    if (!ts->writer)
        return;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    for (int i = 0; i < logs->n; i++) {
        char *name = g_strconcat(prefix, logs->names[i], NULL);
        json_builder_set_member_name(b, name);
        json_builder_add_double_value(b, logs->values[i]);
        g_free(name);
    }
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    char *metrics = json_to_string(root, FALSE);
    tw_summary_hparams(ts->writer, NULL, metrics);
    g_free(metrics);
    json_node_unref(root);
    g_object_unref(b);
}

/* Predictions for the test metrics are made in batches of this many. */
#define TEST_BATCH 256

int twb_train_session_store_result(twb_train_session *ts, const tw_history *h, const twb_data *data,
                                   bool stopped_by_person, tw_logs *metrics)
{
    tw_logs result = {0}, test = {0};
    if (h->epochs)
        result = h->epoch_logs[h->epochs - 1];
    int rc = 0, nx = 0;
    tw_tensor *x[TWB_MAX_INPUTS], *y = NULL;
    if (!stopped_by_person) {
        nx = twb_fit_inputs(ts->model, data, true, x, &y);
        rc = tw_model_evaluate_n(ts->model, nx, x, 1, &y, TEST_BATCH, &test);
    }
    for (int i = 0; !rc && i < test.n; i++) {
        char name[sizeof test.names[0]];
        g_snprintf(name, sizeof name, "test_%s", test.names[i]);
        tw_logs_set(&result, name, test.values[i]);
    }
    twb_train_session_log_metrics(ts, &result, "");
    if (metrics)
        *metrics = result;
    /* the confusion matrix and examples for the Evaluation tab, for a
     * classifier of one input (twb_evaluation_applies) */
    if (!rc && nx && ts->writer && twb_evaluation_applies(data)) {
        tw_optimizer *opt = tw_model_optimizer(ts->model);
        if (twb_evaluation_write(ts->writer, ts->model, x[0], y, data, opt ? tw_optimizer_iterations(opt) : 0) < 0)
            rc = 1;
    }
    twb_inputs_clear(nx, x);
    return rc;
}

const char *twb_train_session_checkpoint_warning(twb_train_session *ts)
{
    if (!ts->checkpoint || tw_model_checkpoint_failures(ts->checkpoint) == ts->checkpoint_failures)
        return NULL;
    ts->checkpoint_failures = tw_model_checkpoint_failures(ts->checkpoint);
    const char *error = tw_model_checkpoint_error(ts->checkpoint);
    if (!g_strcmp0(error, ts->checkpoint_warned))
        return NULL;
    g_free(ts->checkpoint_warned);
    ts->checkpoint_warned = g_strdup(error);
    return ts->checkpoint_warned;
}

/* Rank 0 died: this rank records the run's failure in its place. */
static int fail_for_rank0(const twb_train_session *ts, const char *reason)
{
    tw_run_store *store = tw_run_store_open(ts->settings->logdb, 0);
    int rc = store ? tw_run_store_fail_dead_run(store, ts->run_id, reason) : -1;
    tw_run_store_close(store);
    return rc;
}

int twb_train_session_close(twb_train_session *ts, tw_run_status status, const char *reason)
{
    int rc = 0;
    if (ts->writer)
        rc = tw_summary_writer_close_with_reason(ts->writer, status, status == TW_RUN_FAILED ? reason : NULL);
    else if (status == TW_RUN_FAILED && ts->settings && ts->run_id > 0 && tw_distributed_replaces_rank0())
        rc = fail_for_rank0(ts, reason);
    ts->writer = NULL;
    g_clear_pointer(&ts->logger, tw_summary_logger_free);
    g_clear_pointer(&ts->checkpoint, tw_model_checkpoint_free);
    g_clear_pointer(&ts->checkpoint_path, g_free);
    g_clear_pointer(&ts->checkpoint_warned, g_free);
    return rc;
}

char *twb_train_checkpoint_dir(const char *logdb)
{
    char *dir = g_path_get_dirname(logdb);
    char *path = g_build_filename(dir, "checkpoints", NULL);
    g_free(dir);
    return path;
}

char *twb_train_checkpoint_in(const char *dir, const char *run_name)
{
    char *file = g_strdup(run_name && *run_name ? run_name : "run");
    for (char *c = file; *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_' && (*c != '.' || c == file))
            *c = '_';
    char *name = g_strconcat(file, ".safetensors", NULL);
    char *path = g_build_filename(dir, name, NULL);
    g_free(file);
    g_free(name);
    return path;
}

char *twb_train_checkpoint_path(const char *logdb, const char *run_name)
{
    char *dir = twb_train_checkpoint_dir(logdb);
    char *path = twb_train_checkpoint_in(dir, run_name);
    g_free(dir);
    return path;
}
