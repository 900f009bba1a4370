/* TwWindow: the main window. A header bar with Open / Save, the view
 * switcher (Designer, Dashboard, Graph) and Train; the Designer view with
 * the training panel beside it; a banner for errors. Actions (win.*):
 * undo, redo, delete-layer, duplicate-layer, train, open, save, save-as,
 * template::NAME, show-view::NAME, open-recent::PATH, open-logdir,
 * open-run-model((run name, model JSON)): a stored run's model opened in
 * the Designer as a model with no file (the run list's "Open Model in
 * Designer"). */
#ifndef TW_UI_WINDOW_H
#define TW_UI_WINDOW_H

#include <gtk/gtk.h>

#include "model_doc.h"
#include "train_panel.h"

G_BEGIN_DECLS

#define TW_TYPE_WINDOW (tw_window_get_type())
G_DECLARE_FINAL_TYPE(TwWindow, tw_window, TW, WINDOW, GtkApplicationWindow)

TwWindow *tw_window_new(GtkApplication *app, TwModelDoc *doc);
TwModelDoc *tw_window_doc(TwWindow *win);
TwTrainPanel *tw_window_train_panel(TwWindow *win);
/* "designer", "dashboard" or "graph". */
void tw_window_show_view(TwWindow *win, const char *name);
const char *tw_window_visible_view(TwWindow *win);
/* Load a model file into the window's doc; errors go to the banner. */
void tw_window_open_file(TwWindow *win, const char *path);
/* A banner across the top with the message; error banners stay until
 * dismissed, others hide after a few seconds. */
void tw_window_show_banner(TwWindow *win, const char *message, gboolean is_error);
/* The run database the Dashboard will read (from the training panel's
 * setting or --logdb). */
void tw_window_set_logdb(TwWindow *win, const char *path);
/* Show a TensorBoard log directory's runs, live, in the Dashboard
 * (tw_dashboard_view_open_logdir); a folder that cannot be read gets the
 * banner. */
void tw_window_open_logdir(TwWindow *win, const char *dir);

G_END_DECLS

#endif
