/* Finding widgets in a window's tree by type, by name (gtk_widget_set_name,
 * as the .ui templates' ids name them) or by a predicate: for the GUI
 * suites (through gui_helpers.h) and the GUI benchmarks, which need no
 * test harness. */
#ifndef TW_TESTS_WIDGET_TREE_H
#define TW_TESTS_WIDGET_TREE_H

#include <gtk/gtk.h>

/* The first widget of the type, or named so, under root (root included). */
GtkWidget *find_type(GtkWidget *root, GType type);
GtkWidget *find_named(GtkWidget *root, const char *name);
/* The first widget under root (depth first, root included) that match
 * accepts, or NULL. */
GtkWidget *widget_find(GtkWidget *root, gboolean (*match)(GtkWidget *widget, gconstpointer data),
                       gconstpointer data);

#endif
