/* What the GUI suites share: running the main loop until a condition
 * holds or for a while, and finding widgets in a window's tree. */
#ifndef TW_TESTS_GUI_HELPERS_H
#define TW_TESTS_GUI_HELPERS_H

#include <gtk/gtk.h>

/* A GSourceFunc setting the gboolean at data. */
gboolean timed_out(gpointer data);
/* Runs the main loop until cond holds, failing the test after `seconds`. */
void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what);
/* Runs the main loop for `seconds`. */
void spin(double seconds);
/* The first widget of the type, or named so, under root (root included). */
GtkWidget *find_type(GtkWidget *root, GType type);
GtkWidget *find_named(GtkWidget *root, const char *name);

#endif
