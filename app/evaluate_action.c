/* The run list's Evaluate (evaluate_action.h). */
#include "evaluate_action.h"

#include <json-glib/json-glib.h>

#include <tw/checkpoint.h>
#include <tw/error.h>
#include <tw/model_file.h>
#include <tw/run_store.h>

#include "evaluate_run.h"
#include "train_data.h"
#include "train_session.h"
#include "window.h"

/* The data settings of a run's record (tw_train_settings_json). */
static int data_settings(const tw_run_info *run, tw_train_settings *s)
{
    JsonParser *parser = json_parser_new();
    JsonObject *o = NULL;
    if (run->hparams_json && json_parser_load_from_data(parser, run->hparams_json, -1, NULL) &&
        JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser)))
        o = json_node_get_object(json_parser_get_root(parser));
    int rc = 0;
    if (!o || !json_object_has_member(o, "data"))
        rc = tw_error_set("run '%s' does not record which data it trained on", run->name);
    else {
        s->data = g_strdup(json_object_get_string_member_with_default(o, "data", ""));
        const char *labels = json_object_get_string_member_with_default(o, "labels", NULL);
        const char *column = json_object_get_string_member_with_default(o, "label_column", NULL);
        s->labels = labels ? g_strdup(labels) : NULL;
        s->label_column = column ? g_strdup(column) : NULL;
        s->seed = (uint64_t)json_object_get_int_member_with_default(o, "seed", 0);
    }
    g_object_unref(parser);
    return rc;
}

int twb_evaluate_stored_run(const char *logdb, const char *name)
{
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    tw_run_info run = {0};
    if (!store || tw_run_store_get_run(store, name, &run)) {
        tw_run_store_close(store);
        return -1;
    }
    tw_run_store_close(store);
    char *checkpoint = twb_train_checkpoint_path(logdb, name);
    tw_train_settings s = {0}; /* only the data settings are read */
    tw_model *model = NULL;
    twb_data data = {0};
    int rc = 0;
    if (!run.model_json)
        rc = tw_error_set("run '%s' has no model stored", name);
    else if (!g_file_test(checkpoint, G_FILE_TEST_IS_REGULAR))
        rc = tw_error_set("run '%s' has no checkpoint at %s (where the window keeps its runs' checkpoints; for "
                          "others: twb evaluate MODEL --checkpoint FILE --data … --logdb %s --run '%s')",
                          name, checkpoint, logdb, name);
    else if (data_settings(&run, &s) == 0) {
        twb_data_spec spec = twb_data_spec_of(&s);
        model = tw_model_from_json(run.model_json, strlen(run.model_json), name);
        /* restored before the build: applied by it, each weight checked */
        rc = !model || tw_checkpoint_restore(checkpoint, model, NULL) || twb_data_load(&spec, &data) ? -1 : 0;
        if (rc == 0) {
            rc = twb_evaluation_store(logdb, name, model, &data);
            if (rc == 1)
                rc = tw_error_set("run '%s': %s has no classes (float targets); an evaluation is a classifier's",
                                  name, data.description);
        }
    } else {
        rc = -1;
    }
    twb_data_clear(&data);
    tw_layer_unref(model);
    tw_train_settings_clear(&s);
    g_free(checkpoint);
    tw_run_info_clear(&run);
    return rc;
}

typedef struct {
    char *logdb, *run;
} EvalJob;

static void eval_job_free(gpointer data)
{
    EvalJob *job = data;
    g_free(job->logdb);
    g_free(job->run);
    g_free(job);
}

static void eval_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    EvalJob *job = data;
    if (twb_evaluate_stored_run(job->logdb, job->run))
        g_task_return_new_error(task, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s", tw_last_error());
    else
        g_task_return_boolean(task, TRUE);
    tw_error_clear();
}

static void eval_done(GObject *source, GAsyncResult *result, gpointer data)
{
    GtkApplication *app = GTK_APPLICATION(source);
    EvalJob *job = g_task_get_task_data(G_TASK(result));
    GError *error = NULL;
    g_task_propagate_boolean(G_TASK(result), &error);
    GtkWindow *win = gtk_application_get_active_window(app);
    char *message = error ? g_strdup_printf("Cannot evaluate “%s”: %s", job->run, error->message)
                          : g_strdup_printf("The evaluation of “%s” is stored: see the Dashboard's Evaluation tab",
                                            job->run);
    if (win && TW_IS_WINDOW(win))
        tw_window_show_banner(TW_WINDOW(win), message, error != NULL);
    else
        g_printerr("%s\n", message);
    g_free(message);
    g_clear_error(&error);
}

void twb_evaluate_run_activate(GSimpleAction *action, GVariant *parameter, gpointer app)
{
    EvalJob *job = g_new0(EvalJob, 1);
    g_variant_get(parameter, "(ss)", &job->logdb, &job->run);
    GTask *task = g_task_new(app, NULL, eval_done, NULL);
    g_task_set_task_data(task, job, eval_job_free);
    g_task_run_in_thread(task, eval_thread);
    g_object_unref(task);
}
