/* GTK 4.8's GtkPathBar (the folder buttons atop a GtkFileChooserDialog,
 * which GtkFileChooserNative shows where there is no portal) lays out
 * nothing until the folder's information, asked of GIO in a thread, has
 * come back: its size_allocate returns early while it has no folder
 * buttons. Its two scroll buttons ("slider-button") are mapped with it
 * all the same, so a frame drawn meanwhile snapshots them unallocated:
 * "Trying to snapshot GtkButton ... without a current allocation", twice.
 * That is the intermittent warning of the monkey test (the data file's
 * chooser, opened on the file's folder): on a loaded machine the answer
 * comes after the dialog's first frame (tests/test_ui_window.c,
 * chooser_before_its_folder, holds the answer back to make it certain).
 * An emission hook on "map" makes the scroll buttons of a path bar that
 * has no folder buttons yet child-invisible, so they are neither mapped
 * nor drawn; the path bar's own size_allocate makes them child-visible
 * again once it lays them out, and hides them when it needs none. */
#include "path_bar_guard.h"

#include <string.h>

#include <gtk/gtk.h>

static GType path_bar_type; /* GtkPathBar is private: known by name */

static gboolean is_path_bar(GObject *object)
{
    GType type = G_OBJECT_TYPE(object);
    if (!path_bar_type && !strcmp(g_type_name(type), "GtkPathBar"))
        path_bar_type = type;
    return path_bar_type && type == path_bar_type;
}

static gboolean on_map(GSignalInvocationHint *hint, guint n_values, const GValue *values, gpointer data)
{
    (void)hint;
    (void)data;
    GObject *object = n_values ? g_value_get_object(&values[0]) : NULL;
    if (!object || !is_path_bar(object))
        return TRUE; /* stay installed */
    GtkWidget *bar = GTK_WIDGET(object);
    /* Its folder buttons are toggle buttons; the scroll buttons are not. */
    for (GtkWidget *c = gtk_widget_get_first_child(bar); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_TOGGLE_BUTTON(c))
            return TRUE; /* laid out already: its size_allocate decides */
    /* The hook runs before the path bar's own map maps its children. */
    for (GtkWidget *c = gtk_widget_get_first_child(bar); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_BUTTON(c) && gtk_widget_has_css_class(c, "slider-button"))
            gtk_widget_set_child_visible(c, FALSE);
    return TRUE;
}

void tw_path_bar_guard_install(void)
{
    static gsize installed;
    if (g_once_init_enter(&installed)) {
        g_signal_add_emission_hook(g_signal_lookup("map", GTK_TYPE_WIDGET), 0, on_map, NULL, NULL);
        g_once_init_leave(&installed, 1);
    }
}
