/* The window's sweep queue (sweep_queue.h). */
#include "sweep_queue.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include <tw/error.h>
#include <tw/model_file.h>
#include <tw/run_store.h>

#include "sweep_dialog.h"
#include "sweep_median.h"
#include "sweep_processes.h"
#include "sweep_spec.h"
#include "sweep_trial.h"
#include "train_controller.h"
#include "train_session.h"

typedef struct {
    TwWindow *window; /* not a reference: the queue lives as long as the window */
    GListStore *trials; /* TwSweepTrial, each with its "settings" and "sweep" */
    GtkWidget *dialog;
    TwSweepTrial *running; /* the trial on the controller, or NULL */
    gboolean cancel_running;
    gboolean closing;
    guint next_source; /* the idle that starts the next trial */
    GPtrArray *process_sweeps; /* process_sweep *: sweeps of trials at once */
} queue;

/* A sweep whose trials train at once, each a process of its own
 * (sweep_processes.h): they never go through the window's controller. */
typedef struct {
    queue *q;
    twb_sweep_processes *processes;
    GPtrArray *trials; /* TwSweepTrial, by the processes' index */
    char *dir, *model; /* the designer's model, written for the processes */
} process_sweep;

#define CLI_PREFIX "twb sweep: "

static queue *queue_of(TwWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "twb-sweep-queue");
}

static void run_next(queue *q);
static gboolean run_next_idle(gpointer data);

/* Tags the run with its sweep (and a run the median rule stopped with the
 * rule's numbers in its notes, as the CLI does); a run that never opened
 * (the data did not load) is not in the database, and the trial's reason
 * says why. */
static void tag_run(const tw_train_settings *s, const char *sweep, const char *notes)
{
    tw_run_store *store = tw_run_store_open(s->logdb, 0);
    if (!store || tw_run_store_set_sweep(store, s->run_name, sweep) ||
        (notes && tw_run_store_set_notes(store, s->run_name, notes)))
        g_warning("sweep %s: %s", sweep, tw_last_error());
    tw_run_store_close(store);
}

/* The trial's median rule (set while it runs with the rule on), or NULL. */
static twb_median_stop *median_of(TwSweepTrial *t)
{
    return g_object_get_data(G_OBJECT(t), "median");
}

static gboolean run_exists(const tw_train_settings *s)
{
    tw_run_store *store = g_file_test(s->logdb, G_FILE_TEST_EXISTS) ? tw_run_store_open(s->logdb, TW_STORE_READ_ONLY)
                                                                     : NULL;
    tw_run_info run;
    gboolean found = store && tw_run_store_get_run(store, s->run_name, &run) == 0;
    if (found)
        tw_run_info_clear(&run);
    tw_run_store_close(store);
    return found;
}

static void on_trial_done(const twb_train_result *result, gpointer data)
{
    queue *q = data;
    TwSweepTrial *t = q->running;
    q->running = NULL;
    if (!t)
        return;
    const tw_train_settings *s = g_object_get_data(G_OBJECT(t), "settings");
    const char *median_reason = median_of(t) ? twb_median_stop_reason(median_of(t)) : NULL;
    if (run_exists(s))
        tag_run(s, g_object_get_data(G_OBJECT(t), "sweep"), median_reason);
    switch (result->end) {
    case TWB_TRAIN_FINISHED: tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FINISHED, NULL); break;
    case TWB_TRAIN_STOPPED:
        tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_STOPPED, q->cancel_running ? "cancelled" : median_reason);
        break;
    default: tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED, result->message); break;
    }
    q->cancel_running = FALSE;
    g_object_unref(t);
    /* after the controller has told the panel and let the worker go */
    if (!q->closing && !q->next_source)
        q->next_source = g_idle_add(run_next_idle, q);
}

static gboolean run_next_idle(gpointer data)
{
    queue *q = data;
    q->next_source = 0;
    run_next(q);
    return G_SOURCE_REMOVE;
}

/* Starts the first pending trial unless a run is going. */
static void run_next(queue *q)
{
    if (q->closing || q->running || twb_train_controller_busy(q->window))
        return;
    guint n = g_list_model_get_n_items(G_LIST_MODEL(q->trials));
    for (guint i = 0; i < n; i++) {
        TwSweepTrial *t = g_list_model_get_item(G_LIST_MODEL(q->trials), i);
        if (tw_sweep_trial_status(t) != TW_SWEEP_TRIAL_PENDING || g_object_get_data(G_OBJECT(t), "process-sweep")) {
            g_object_unref(t);
            continue;
        }
        q->running = t;
        tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_RUNNING, NULL);
        const tw_train_settings *settings = g_object_get_data(G_OBJECT(t), "settings");
        tw_callback median = {0};
        if (g_object_get_data(G_OBJECT(t), "median-stop")) {
            /* the worker's thread uses it until done; freed with the trial */
            twb_median_stop *m = twb_median_stop_new(settings, g_object_get_data(G_OBJECT(t), "sweep"));
            g_object_set_data_full(G_OBJECT(t), "median", m, (GDestroyNotify)twb_median_stop_free);
            median = twb_median_stop_callback(m);
        }
        if (twb_train_controller_run(q->window, settings, median.on_epoch_end ? &median : NULL, on_trial_done, q))
            return;
        /* the window's banner says why; the sweep goes on */
        q->running = NULL;
        tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED, "could not start (see the window's message)");
        g_object_unref(t);
    }
}

/* A run of the panel's own ended: the queue goes on, from an idle (the
 * panel hears of the end before the controller lets its worker go). */
static void on_panel_running(GObject *panel, GParamSpec *pspec, queue *q)
{
    gboolean running;
    g_object_get(panel, "running", &running, NULL);
    if (!running && !q->closing && !q->next_source)
        q->next_source = g_idle_add(run_next_idle, q);
}

/* ---- trials at once ---------------------------------------------------------- */
static void process_sweep_free(gpointer data)
{
    process_sweep *ps = data;
    twb_sweep_processes_free(ps->processes); /* the running ones stop after their step */
    g_ptr_array_unref(ps->trials);
    if (ps->model)
        g_remove(ps->model);
    if (ps->dir)
        g_rmdir(ps->dir);
    g_free(ps->model);
    g_free(ps->dir);
    g_free(ps);
}

static void on_process_started(int index, gpointer data)
{
    process_sweep *ps = data;
    tw_sweep_trial_set_status(g_ptr_array_index(ps->trials, index), TW_SWEEP_TRIAL_RUNNING, NULL);
}

/* How the trial went, from the run its process recorded. */
static void on_process_ended(int index, const char *error, gpointer data)
{
    process_sweep *ps = data;
    TwSweepTrial *t = g_ptr_array_index(ps->trials, index);
    const tw_train_settings *s = g_object_get_data(G_OBJECT(t), "settings");
    tw_run_store *store = tw_run_store_open(s->logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    if (!store || tw_run_store_get_run(store, s->run_name, &run)) {
        /* cancelled before its run opened (the signal ended it then) */
        if (g_object_get_data(G_OBJECT(t), "cancelled"))
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_CANCELLED, NULL);
        else
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED, error ? error : tw_last_error());
    } else {
        switch (run.status) {
        case TW_RUN_FINISHED: tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FINISHED, NULL); break;
        case TW_RUN_STOPPED:
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_STOPPED,
                                      g_object_get_data(G_OBJECT(t), "cancelled") ? "cancelled"
                                      : *run.notes                                ? run.notes
                                                                                  : NULL);
            break;
        case TW_RUN_FAILED:
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED, run.failure_reason ? run.failure_reason : error);
            break;
        default:
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED,
                                      error ? error : "the trial's process ended while it trained");
            break;
        }
        tw_run_info_clear(&run);
    }
    tw_run_store_close(store);
    tw_error_clear();
}

/* The designer's model as a file the processes read; NULL with a message. */
static process_sweep *process_sweep_new(queue *q, const char *logdb, const char *sweep, gboolean median_stop,
                                        int at_once)
{
    GError *error = NULL;
    tw_model *model = tw_model_doc_copy_model(tw_window_doc(q->window), &error);
    if (!model) {
        tw_error_set("%s", error->message);
        g_error_free(error);
        return NULL;
    }
    char *json = tw_model_to_json(model);
    tw_layer_unref(model);
    process_sweep *ps = g_new0(process_sweep, 1);
    ps->q = q;
    ps->trials = g_ptr_array_new_with_free_func(g_object_unref);
    ps->dir = g_dir_make_tmp("twb-sweep-XXXXXX", &error);
    if (ps->dir)
        ps->model = g_build_filename(ps->dir, "model.json", NULL);
    if (!json || !ps->dir || !g_file_set_contents(ps->model, json, -1, &error)) {
        if (error)
            tw_error_set("cannot write the model for the trials' processes: %s", error->message);
        g_clear_error(&error);
        free(json);
        process_sweep_free(ps);
        return NULL;
    }
    free(json);
    twb_sweep_processes_callbacks callbacks = {.started = on_process_started, .ended = on_process_ended,
                                               .user_data = ps};
    /* the checkpoints where the worker writes its runs' */
    char *checkpoints = twb_train_checkpoint_dir(logdb);
    twb_sweep_processes_options options = {.model_path = ps->model, .logdb = logdb, .sweep = sweep,
                                           .checkpoint_dir = checkpoints, .median_stop = median_stop,
                                           .at_once = at_once};
    ps->processes = twb_sweep_processes_new(&options, &callbacks);
    g_free(checkpoints);
    if (!ps->processes) {
        process_sweep_free(ps);
        return NULL;
    }
    return ps;
}

/* ---- the dialog's requests -------------------------------------------------- */
static int read_spec(queue *q, TwSweepDialog *d, twb_sweep_spec *spec)
{
    for (int p = 0; p < TWB_SWEEP_NPARAMS; p++) {
        char *text = g_strstrip(g_strdup(tw_sweep_dialog_values(d, twb_sweep_param_option((twb_sweep_param)p) + 2)));
        int rc = *text ? twb_sweep_spec_set(spec, (twb_sweep_param)p, text) : 0;
        g_free(text);
        if (rc)
            return -1;
    }
    /* the layer properties: as `twb sweep --set` takes them, checked
     * against the designer's model as it is now */
    char **layers = tw_sweep_dialog_layer_settings(d);
    int rc = 0;
    for (char **l = layers; *l && !rc; l++)
        rc = twb_sweep_spec_set_layer(spec, *l);
    g_strfreev(layers);
    tw_model *model = tw_model_doc_model(tw_window_doc(q->window));
    if (!rc && spec->nlayers && !model)
        rc = tw_error_set("the designer's graph is not a model yet: a layer property cannot be swept");
    if (!rc && model)
        rc = twb_sweep_spec_check_model(spec, model);
    if (rc)
        return -1;
    spec->random = tw_sweep_dialog_random(d);
    spec->trials = spec->random ? tw_sweep_dialog_trials(d) : 0;
    spec->sample_seed = (uint64_t)g_get_real_time();
    return 0;
}

static void on_start(TwSweepDialog *d, queue *q)
{
    TwTrainPanel *panel = tw_window_train_panel(q->window);
    /* while a run goes, the panel's answer is "training is running": each
     * trial is checked as it starts (a failure shows in its row) */
    const char *cannot = twb_train_controller_busy(q->window) ? NULL : tw_train_panel_cannot_train(panel);
    if (cannot) {
        char *text = g_strdup_printf("The training panel cannot train: %s", cannot);
        tw_sweep_dialog_show_error(d, text);
        g_free(text);
        return;
    }
    tw_train_settings *base = tw_train_settings_copy(tw_train_panel_settings(panel));
    twb_sweep_spec spec = {0};
    tw_train_settings *trials = NULL;
    int n = 0;
    char *name = tw_sweep_dialog_name(d) ? g_strdup(tw_sweep_dialog_name(d)) : twb_sweep_default_name();
    int rc = base->logdb ? read_spec(q, d, &spec) : tw_error_set("choose a run database in the training panel first");
    if (!rc)
        rc = twb_sweep_spec_trials(&spec, base, &trials, &n);
    if (!rc) {
        twb_sweep_name_trials(trials, n, name);
        rc = twb_sweep_check_names_free(base->logdb, trials, n);
    }
    /* names in the queue: not yet in the database */
    for (guint i = 0; !rc && i < g_list_model_get_n_items(G_LIST_MODEL(q->trials)); i++) {
        TwSweepTrial *t = g_list_model_get_item(G_LIST_MODEL(q->trials), i);
        if (!g_strcmp0(g_object_get_data(G_OBJECT(t), "sweep"), name))
            rc = tw_error_set("the queue holds a sweep named '%s' already; give this one another name", name);
        g_object_unref(t);
    }
    /* several at once: each trial a process of its own */
    process_sweep *ps = NULL;
    if (!rc && tw_sweep_dialog_parallel(d) > 1 && n > 1) {
        ps = process_sweep_new(q, base->logdb, name, tw_sweep_dialog_median_stop(d), tw_sweep_dialog_parallel(d));
        rc = ps ? 0 : -1;
    }
    if (rc) {
        /* sweep_spec.c's messages are the CLI's: the option names match
         * the fields' ("--batch-size"), the program's name does not */
        const char *message = tw_last_error();
        tw_sweep_dialog_show_error(d, g_str_has_prefix(message, CLI_PREFIX) ? message + strlen(CLI_PREFIX) : message);
    } else
        tw_sweep_dialog_show_error(d, NULL);
    for (int i = 0; i < n; i++) {
        if (!rc) {
            char *values = twb_sweep_describe(&spec, &trials[i]);
            TwSweepTrial *t = tw_sweep_trial_new(trials[i].run_name, values);
            g_free(values);
            /* a deep copy: the trial's strings point into base and spec */
            g_object_set_data_full(G_OBJECT(t), "settings", tw_train_settings_copy(&trials[i]),
                                   (GDestroyNotify)tw_train_settings_free);
            g_object_set_data_full(G_OBJECT(t), "sweep", g_strdup(name), g_free);
            g_object_set_data(G_OBJECT(t), "median-stop", GINT_TO_POINTER(tw_sweep_dialog_median_stop(d)));
            g_list_store_append(q->trials, t);
            if (ps) {
                g_object_set_data(G_OBJECT(t), "process-sweep", ps);
                g_object_set_data(G_OBJECT(t), "process-index", GINT_TO_POINTER(ps->trials->len));
                g_ptr_array_add(ps->trials, g_object_ref(t));
                twb_sweep_processes_add(ps->processes, &trials[i]);
            }
            g_object_unref(t);
        }
        g_free(trials[i].run_name);
    }
    g_free(trials);
    g_free(name);
    twb_sweep_spec_clear(&spec);
    tw_train_settings_free(base);
    if (ps)
        g_ptr_array_add(q->process_sweeps, ps);
    else if (!rc)
        run_next(q);
}

static void on_cancel_trial(TwSweepDialog *d, TwSweepTrial *t, queue *q)
{
    process_sweep *ps = g_object_get_data(G_OBJECT(t), "process-sweep");
    if (ps) {
        TwSweepTrialStatus status = tw_sweep_trial_status(t);
        if (status == TW_SWEEP_TRIAL_RUNNING)
            g_object_set_data(G_OBJECT(t), "cancelled", GINT_TO_POINTER(1));
        if (status == TW_SWEEP_TRIAL_RUNNING || status == TW_SWEEP_TRIAL_PENDING)
            twb_sweep_processes_cancel(ps->processes, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(t), "process-index")));
        if (status == TW_SWEEP_TRIAL_PENDING)
            tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_CANCELLED, NULL);
        return;
    }
    if (t == q->running) {
        q->cancel_running = TRUE;
        twb_train_controller_stop(q->window);
    } else if (tw_sweep_trial_status(t) == TW_SWEEP_TRIAL_PENDING)
        tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_CANCELLED, NULL);
}

static void on_cancel_all(TwSweepDialog *d, queue *q)
{
    guint n = g_list_model_get_n_items(G_LIST_MODEL(q->trials));
    for (guint i = 0; i < n; i++) {
        TwSweepTrial *t = g_list_model_get_item(G_LIST_MODEL(q->trials), i);
        if (t != q->running)
            on_cancel_trial(d, t, q);
        g_object_unref(t);
    }
    if (q->running)
        on_cancel_trial(d, q->running, q);
}

GtkWidget *twb_sweep_queue_dialog(TwWindow *win)
{
    queue *q = queue_of(win);
    g_return_val_if_fail(q, NULL);
    if (!q->dialog) {
        q->dialog = tw_sweep_dialog_new(GTK_WINDOW(win), G_LIST_MODEL(q->trials));
        tw_sweep_dialog_set_model(TW_SWEEP_DIALOG(q->dialog), tw_model_doc_model(tw_window_doc(win)));
        g_object_add_weak_pointer(G_OBJECT(q->dialog), (gpointer *)&q->dialog);
        g_signal_connect(q->dialog, "start-requested", G_CALLBACK(on_start), q);
        g_signal_connect(q->dialog, "cancel-trial", G_CALLBACK(on_cancel_trial), q);
        g_signal_connect(q->dialog, "cancel-all", G_CALLBACK(on_cancel_all), q);
    }
    return q->dialog;
}

static void on_sweep_action(GSimpleAction *action, GVariant *parameter, gpointer data)
{
    gtk_window_present(GTK_WINDOW(twb_sweep_queue_dialog(data)));
}

/* The designer's edits: the dialog's layers and properties follow them. */
static void on_doc_changed(TwModelDoc *doc, TwWindow *win)
{
    queue *q = queue_of(win);
    if (q && q->dialog)
        tw_sweep_dialog_set_model(TW_SWEEP_DIALOG(q->dialog), tw_model_doc_model(doc));
}

/* The window is going: no trial starts any more. The controller's handler,
 * connected first, has stopped the running trial and joined its worker
 * without a done report: its run is tagged here. */
static void on_window_destroy(GtkWidget *window, queue *q)
{
    q->closing = TRUE;
    if (q->running) {
        const tw_train_settings *s = g_object_get_data(G_OBJECT(q->running), "settings");
        if (run_exists(s))
            tag_run(s, g_object_get_data(G_OBJECT(q->running), "sweep"), NULL);
    }
    /* trials at once: the running processes stop after their step */
    g_ptr_array_set_size(q->process_sweeps, 0);
    if (q->dialog)
        gtk_window_destroy(GTK_WINDOW(q->dialog));
}

static void queue_free(gpointer data)
{
    queue *q = data;
    q->closing = TRUE;
    g_clear_handle_id(&q->next_source, g_source_remove);
    g_clear_object(&q->running);
    g_ptr_array_unref(q->process_sweeps);
    g_object_unref(q->trials);
    g_free(q);
}

void twb_sweep_queue_attach(TwWindow *win)
{
    queue *q = g_new0(queue, 1);
    q->window = win;
    q->trials = g_list_store_new(TW_TYPE_SWEEP_TRIAL);
    q->process_sweeps = g_ptr_array_new_with_free_func(process_sweep_free);
    g_object_set_data_full(G_OBJECT(win), "twb-sweep-queue", q, queue_free);
    GSimpleAction *action = g_simple_action_new("sweep", NULL);
    g_signal_connect(action, "activate", G_CALLBACK(on_sweep_action), win);
    g_action_map_add_action(G_ACTION_MAP(win), G_ACTION(action));
    g_object_unref(action);
    g_signal_connect(tw_window_train_panel(win), "notify::running", G_CALLBACK(on_panel_running), q);
    g_signal_connect(win, "destroy", G_CALLBACK(on_window_destroy), q);
    g_signal_connect_object(tw_window_doc(win), "changed", G_CALLBACK(on_doc_changed), win, 0);
}
