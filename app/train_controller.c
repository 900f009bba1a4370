/* The window's training: panel signals in, worker reports out (see
 * train_controller.h). Everything here runs on the main loop and returns at
 * once; the worker does the work. */
#include "train_controller.h"

#include <string.h>

#include "chart_view.h"
#include "train_data_cache.h"

typedef struct {
    TwWindow *window; /* not a reference: the controller lives as long as the window */
    TwTrainPanel *panel;   /* a weak pointer: the window's, gone before the controller */
    twb_train_worker *worker; /* NULL when no run is going */
    char *logdb;           /* the running run's database */
    gboolean logs_lost_shown;
    twb_data_cache *data;
    guint load_source; /* an idle that loads the panel's data choice */
    twb_train_controller_done done; /* the running run's, from twb_train_controller_run */
    gpointer done_data;
} controller;

/* ---- the data, checked against the model before Train is offered ----------- */
/* Loading starts from an idle, for the choice the panel shows then: a
 * window opened and set to another data set at once loads only that one. */
static gboolean load_chosen_data(gpointer data)
{
    controller *c = data;
    c->load_source = 0;
    if (!c->panel || !c->data)
        return G_SOURCE_REMOVE;
    const tw_train_settings *s = tw_train_panel_settings(c->panel);
    if (s->data) {
        twb_data_spec spec = twb_data_spec_of(s);
        twb_data_cache_load(c->data, &spec);
    }
    return G_SOURCE_REMOVE;
}

static void on_data_loaded(gpointer data)
{
    controller *c = data;
    if (c->panel)
        tw_train_panel_recheck(c->panel);
}

/* The panel's data check (TwTrainDataCheck). */
static char *check_data(const tw_train_settings *s, tw_model *model, gpointer data)
{
    controller *c = data;
    if (!c->data) /* the window is going */
        return NULL;
    twb_data_spec spec = twb_data_spec_of(s);
    const twb_data *loaded;
    const char *error;
    switch (twb_data_cache_lookup(c->data, &spec, &loaded, &error)) {
    case TWB_DATA_READY:
        return twb_data_check(model, loaded) ? g_strdup(tw_last_error()) : NULL;
    case TWB_DATA_FAILED:
        return g_strdup(error);
    case TWB_DATA_ABSENT:
        if (!c->load_source)
            c->load_source = g_idle_add(load_chosen_data, c);
        break;
    case TWB_DATA_LOADING:
        break;
    }
    char *name = g_path_get_basename(s->data);
    char *text = g_strdup_printf("Loading the data (%s) to check it against the model…", name);
    g_free(name);
    return text;
}

/* ---- the worker's reports --------------------------------------------------- */
/* Once per run, as soon as the run database starts losing logs: training goes on. */
static void show_logs_lost(controller *c, const tw_train_progress *p)
{
    if (p->logs_lost_from_step < 0 || c->logs_lost_shown)
        return;
    c->logs_lost_shown = TRUE;
    /* The writer's message starts with the file, which the banner names already. */
    const char *reason = p->logs_lost_reason ? p->logs_lost_reason : "";
    if (g_str_has_prefix(reason, c->logdb) && g_str_has_prefix(reason + strlen(c->logdb), ": "))
        reason += strlen(c->logdb) + 2;
    char *text = g_strdup_printf("The run database %s lost this run's logs from step %lld on (%s). Training goes on; "
                                 "the checkpoints are written beside it as before.",
                                 c->logdb, (long long)p->logs_lost_from_step, reason);
    tw_window_show_banner(c->window, text, TRUE);
    g_free(text);
}

static void on_progress(const tw_train_progress *progress, gpointer data)
{
    controller *c = data;
    tw_train_panel_update(c->panel, progress);
    show_logs_lost(c, progress);
}

static void on_problem(const char *message, gpointer data)
{
    controller *c = data;
    tw_window_show_banner(c->window, message, TRUE);
}

/* "\nCheckpoint: checkpoints/run.safetensors beside runs.db" (the run
 * database's button shows where that is), or "" */
static char *checkpoint_line(const char *path, const char *logdb)
{
    if (!path)
        return g_strdup("");
    char *dir = g_path_get_dirname(logdb), *db = g_path_get_basename(logdb);
    size_t n = strlen(dir);
    char *line = !strncmp(path, dir, n) && path[n] == '/'
                     ? g_strdup_printf("\nCheckpoint: %s beside %s", path + n + 1, db)
                     : g_strdup_printf("\nCheckpoint: %s", path);
    g_free(dir);
    g_free(db);
    return line;
}

/* The worker freed (a run stopped and waited for, if still going), and its
 * hold on the charts' live gap released. */
static void drop_worker(controller *c)
{
    if (!c->worker)
        return;
    g_clear_pointer(&c->worker, twb_train_worker_free);
    tw_chart_view_hold_live_gap(FALSE);
}

static void on_done(const twb_train_result *result, gpointer data)
{
    controller *c = data;
    twb_train_controller_done done = c->done;
    c->done = NULL;
    if (done)
        done(result, c->done_data);
    char *summary;
    if (result->end == TWB_TRAIN_FAILED) {
        char *banner = g_strdup_printf("Training failed: %s", result->message);
        tw_window_show_banner(c->window, banner, TRUE);
        g_free(banner);
        summary = g_strdup("Failed (see the message above)");
    } else {
        if (result->last.steps > 0)
            tw_train_panel_update(c->panel, &result->last);
        show_logs_lost(c, &result->last);
        char *checkpoint = checkpoint_line(result->checkpoint_path, c->logdb);
        summary = g_strdup_printf("%s%s%s", result->end == TWB_TRAIN_FINISHED ? "Finished: " : "Stopped ",
                                  result->message, checkpoint);
        g_free(checkpoint);
    }
    tw_train_panel_finished(c->panel, summary);
    g_free(summary);
    drop_worker(c);
}

static gboolean start_run(controller *c, const tw_train_settings *settings, const tw_callback *epoch_end)
{
    if (c->worker || !c->panel)
        return FALSE;
    twb_train_worker_callbacks callbacks = {.progress = on_progress, .problem = on_problem, .done = on_done,
                                        .user_data = c, .epoch_end = epoch_end ? *epoch_end : (tw_callback){0}};
    GError *error = NULL;
    twb_data_spec spec = twb_data_spec_of(settings);
    const twb_data *loaded = NULL;
    if (c->data)
        twb_data_cache_lookup(c->data, &spec, &loaded, NULL);
    c->worker = twb_train_worker_start(tw_window_doc(c->window), settings, loaded, &callbacks, &error);
    if (!c->worker) {
        tw_window_show_banner(c->window, error->message, TRUE);
        g_error_free(error);
        return FALSE;
    }
    g_free(c->logdb);
    c->logdb = g_strdup(settings->logdb);
    c->logs_lost_shown = FALSE;
    tw_window_set_logdb(c->window, settings->logdb);
    tw_train_panel_started_as(c->panel, settings->run_name);
    tw_chart_view_hold_live_gap(TRUE); /* until on_done */
    return TRUE;
}

static void on_train_requested(TwTrainPanel *panel, const tw_train_settings *settings, gpointer data)
{
    start_run(data, settings, NULL);
}

static void on_pause_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (!c->worker)
        return;
    twb_train_worker_set_paused(c->worker, TRUE);
    tw_train_panel_paused(panel, TRUE);
}

static void on_resume_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (!c->worker)
        return;
    twb_train_worker_set_paused(c->worker, FALSE);
    tw_train_panel_paused(panel, FALSE);
}

static void on_stop_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (c->worker)
        twb_train_worker_stop(c->worker);
}

/* The window is going: stop the run and wait for the worker (a step). */
static void on_window_destroy(GtkWidget *window, gpointer data)
{
    controller *c = data;
    drop_worker(c);
    g_clear_handle_id(&c->load_source, g_source_remove);
    g_clear_pointer(&c->data, twb_data_cache_free); /* loads still going are dropped */
}

static void controller_free(gpointer data)
{
    controller *c = data;
    drop_worker(c);
    g_clear_handle_id(&c->load_source, g_source_remove);
    twb_data_cache_free(c->data);
    if (c->panel)
        g_object_remove_weak_pointer(G_OBJECT(c->panel), (gpointer *)&c->panel);
    g_free(c->logdb);
    g_free(c);
}

void twb_train_controller_attach(TwWindow *win)
{
    controller *c = g_new0(controller, 1);
    c->window = win;
    c->panel = tw_window_train_panel(win);
    g_object_add_weak_pointer(G_OBJECT(c->panel), (gpointer *)&c->panel);
    c->data = twb_data_cache_new(on_data_loaded, c);
    g_object_set_data_full(G_OBJECT(win), "tw-train-controller", c, controller_free);
    g_signal_connect(c->panel, "train-requested", G_CALLBACK(on_train_requested), c);
    g_signal_connect(c->panel, "pause-requested", G_CALLBACK(on_pause_requested), c);
    g_signal_connect(c->panel, "resume-requested", G_CALLBACK(on_resume_requested), c);
    g_signal_connect(c->panel, "stop-requested", G_CALLBACK(on_stop_requested), c);
    g_signal_connect(win, "destroy", G_CALLBACK(on_window_destroy), c);
    tw_train_panel_set_data_check(c->panel, check_data, c);
    tw_train_panel_recheck(c->panel);
}

gboolean twb_train_controller_run(TwWindow *win, const tw_train_settings *settings, const tw_callback *epoch_end,
                                  twb_train_controller_done done, gpointer user_data)
{
    controller *c = g_object_get_data(G_OBJECT(win), "tw-train-controller");
    g_return_val_if_fail(c, FALSE);
    if (!start_run(c, settings, epoch_end))
        return FALSE;
    c->done = done;
    c->done_data = user_data;
    return TRUE;
}

gboolean twb_train_controller_busy(TwWindow *win)
{
    controller *c = g_object_get_data(G_OBJECT(win), "tw-train-controller");
    return c && c->worker;
}

void twb_train_controller_stop(TwWindow *win)
{
    controller *c = g_object_get_data(G_OBJECT(win), "tw-train-controller");
    if (c && c->worker)
        twb_train_worker_stop(c->worker);
}
