/* What the GUI suites share: running the main loop until a condition
 * holds or for a while, finding widgets in a window's tree, the
 * designer's window of the designer and canvas suites, the workbench
 * window of the training suites and the Dashboard's window of the
 * dashboard suites, each on a run database in a scratch folder, the
 * models they load, and the set-up of the training suites' main. */
#ifndef TW_TESTS_GUI_HELPERS_H
#define TW_TESTS_GUI_HELPERS_H

#include <gtk/gtk.h>

#include <tw/run_store.h>

#include "designer_view.h"
#include "widget_tree.h"
#include "window.h"

/* A GSourceFunc setting the gboolean at data. */
gboolean timed_out(gpointer data);
/* Runs the main loop until cond holds, failing the test after `seconds`. */
void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what);
/* Runs the main loop, woken every 10 ms (for a condition that a worker
 * thread or another process changes without a main-loop event), until
 * cond(data) holds; FALSE when it still does not after `seconds`. */
gboolean wait_polled(GSourceFunc cond, gpointer data, double seconds);
/* Runs what the main loop has pending, without waiting. */
void drain(void);
/* Fails the test unless ok, with error's message when there is one. */
void must(gboolean ok, GError *error);
/* Runs the main loop for `seconds`. */
void spin(double seconds);
/* Appends to out every widget under root (root included) with the CSS class. */
void collect_class(GtkWidget *root, const char *css_class, GPtrArray *out);
/* The first widget of the window's header bar for which match(widget,
 * data) holds, and the header bar's button whose action is `action`
 * ("win.train"); each fails the test when there is none. */
GtkWidget *titlebar_find(GtkWindow *window, gboolean (*match)(GtkWidget *widget, gconstpointer data),
                         gconstpointer data);
GtkWidget *titlebar_button(GtkWindow *window, const char *action);

/* A new document in a designer view, in a window of width x height,
 * presented and drawn; designer_window_close destroys the window and
 * unrefs the document. */
void designer_window_open(int width, int height, TwModelDoc **doc, GtkWidget **window, TwDesignerView **view);
void designer_window_close(GtkWidget *window, TwModelDoc *doc);

/* A new scratch folder (g_dir_make_tmp's template) in *dir and the path of
 * a run database in it, runs.db; scratch_close frees both. */
char *scratch_logdb(const char *dir_template, char **dir);
/* Destroys window (unless NULL), runs what the main loop has pending,
 * removes the folder dir and all in it, and frees dir and logdb. */
void scratch_close(GtkWidget *window, char *dir, char *logdb);
/* The run of that name in the run database logdb (tw_run_info_clear it),
 * failing the test when there is none; and its id. */
void stored_run(const char *logdb, const char *name, tw_run_info *run);
gint64 run_id_of(const char *logdb, const char *name);

/* A small classifier for the two spirals (2000 examples): 2 inputs, 16
 * ReLU units, 2 softmax outputs; an epoch is a fraction of a second. */
extern const char *const spirals_model;

/* A model the engine refuses: a Conv2D after a Dense, with no Reshape (the
 * window and graph suites show its message). */
extern const char *const invalid_model;

/* The workbench window the training suites train from, on the model of
 * the file model_path or else of the JSON text model_json: attach(window)
 * hooks on what the suite needs (the training controller, the sweep
 * queue), then the training panel gets the run database logdb, and the
 * window is presented. */
TwWindow *train_window_open(GtkApplication *app, const char *model_json, const char *model_path,
                            void (*attach)(TwWindow *), const char *logdb);

/* The start of a training suite's main, after g_test_init: a scratch
 * home (g_dir_make_tmp's template) for XDG_CONFIG_HOME and XDG_DATA_HOME
 * (the remembered run database, the trash: G_TEST_OPTION_ISOLATE_DIRS
 * would hide GTK's GSettings schemas, which the file chooser needs), the
 * settings Xvfb wants, GTK and the application app_id registered. NULL,
 * the home removed, when there is no display (the suite returns 77).
 * train_suite_finish unrefs app, removes the home and returns rc. */
GtkApplication *train_suite_start(const char *home_template, const char *app_id, char **home);
int train_suite_finish(int rc, GtkApplication *app, char *home);

/* A 1280x800 window with a Dashboard on logdb, presented, showing tab,
 * once the Dashboard says its first data are on screen; *dashboard is
 * the TwDashboardView. */
GtkWidget *dashboard_window_open(const char *logdb, const char *tab, GtkWidget **dashboard);

#endif
