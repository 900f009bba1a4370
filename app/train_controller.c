/* The window's training: panel signals in, worker reports out (see
 * train_controller.h). Everything here runs on the main loop and returns at
 * once; the worker does the work. */
#include "train_controller.h"

#include <string.h>

#include "train_worker.h"

typedef struct {
    TwWindow *window; /* not a reference: the controller lives as long as the window */
    TwTrainPanel *panel;
    TwTrainWorker *worker; /* NULL when no run is going */
    char *logdb;           /* the running run's database */
} controller;

static void on_progress(const TwTrainProgress *progress, gpointer data)
{
    controller *c = data;
    tw_train_panel_update(c->panel, progress);
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

static void on_done(const TwTrainResult *result, gpointer data)
{
    controller *c = data;
    char *summary;
    if (result->end == TW_TRAIN_FAILED) {
        char *banner = g_strdup_printf("Training failed: %s", result->message);
        tw_window_show_banner(c->window, banner, TRUE);
        g_free(banner);
        summary = g_strdup("Failed (see the message above)");
    } else {
        if (result->last.steps > 0)
            tw_train_panel_update(c->panel, &result->last);
        char *checkpoint = checkpoint_line(result->checkpoint_path, c->logdb);
        summary = g_strdup_printf("%s%s%s", result->end == TW_TRAIN_FINISHED ? "Finished: " : "Stopped ",
                                  result->message, checkpoint);
        g_free(checkpoint);
    }
    tw_train_panel_finished(c->panel, summary);
    g_free(summary);
    g_clear_pointer(&c->worker, tw_train_worker_free);
}

static void on_train_requested(TwTrainPanel *panel, const TwTrainSettings *settings, gpointer data)
{
    controller *c = data;
    if (c->worker)
        return;
    TwTrainWorkerCallbacks callbacks = {.progress = on_progress, .problem = on_problem, .done = on_done,
                                        .user_data = c};
    GError *error = NULL;
    c->worker = tw_train_worker_start(tw_window_doc(c->window), settings, &callbacks, &error);
    if (!c->worker) {
        tw_window_show_banner(c->window, error->message, TRUE);
        g_error_free(error);
        return;
    }
    g_free(c->logdb);
    c->logdb = g_strdup(settings->logdb);
    tw_window_set_logdb(c->window, settings->logdb);
    tw_train_panel_started(panel);
}

static void on_pause_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (!c->worker)
        return;
    tw_train_worker_set_paused(c->worker, TRUE);
    tw_train_panel_paused(panel, TRUE);
}

static void on_resume_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (!c->worker)
        return;
    tw_train_worker_set_paused(c->worker, FALSE);
    tw_train_panel_paused(panel, FALSE);
}

static void on_stop_requested(TwTrainPanel *panel, gpointer data)
{
    controller *c = data;
    if (c->worker)
        tw_train_worker_stop(c->worker);
}

/* The window is going: stop the run and wait for the worker (a step). */
static void on_window_destroy(GtkWidget *window, gpointer data)
{
    controller *c = data;
    g_clear_pointer(&c->worker, tw_train_worker_free);
}

static void controller_free(gpointer data)
{
    controller *c = data;
    tw_train_worker_free(c->worker);
    g_free(c->logdb);
    g_free(c);
}

void tw_train_controller_attach(TwWindow *win)
{
    controller *c = g_new0(controller, 1);
    c->window = win;
    c->panel = tw_window_train_panel(win);
    g_object_set_data_full(G_OBJECT(win), "tw-train-controller", c, controller_free);
    g_signal_connect(c->panel, "train-requested", G_CALLBACK(on_train_requested), c);
    g_signal_connect(c->panel, "pause-requested", G_CALLBACK(on_pause_requested), c);
    g_signal_connect(c->panel, "resume-requested", G_CALLBACK(on_resume_requested), c);
    g_signal_connect(c->panel, "stop-requested", G_CALLBACK(on_stop_requested), c);
    g_signal_connect(win, "destroy", G_CALLBACK(on_window_destroy), c);
}
