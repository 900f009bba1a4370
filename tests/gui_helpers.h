/* What the GUI suites share: running the main loop until a condition
 * holds or for a while, finding widgets in a window's tree, and the
 * designer's window of the designer and canvas suites. */
#ifndef TW_TESTS_GUI_HELPERS_H
#define TW_TESTS_GUI_HELPERS_H

#include <gtk/gtk.h>

#include "designer_view.h"

/* A GSourceFunc setting the gboolean at data. */
gboolean timed_out(gpointer data);
/* Runs the main loop until cond holds, failing the test after `seconds`. */
void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what);
/* Runs what the main loop has pending, without waiting. */
void drain(void);
/* Fails the test unless ok, with error's message when there is one. */
void must(gboolean ok, GError *error);
/* Runs the main loop for `seconds`. */
void spin(double seconds);
/* The first widget of the type, or named so, under root (root included). */
GtkWidget *find_type(GtkWidget *root, GType type);
GtkWidget *find_named(GtkWidget *root, const char *name);

/* A new document in a designer view, in a window of width x height,
 * presented and drawn; designer_window_close destroys the window and
 * unrefs the document. */
void designer_window_open(int width, int height, TwModelDoc **doc, GtkWidget **window, TwDesignerView **view);
void designer_window_close(GtkWidget *window, TwModelDoc *doc);

#endif
