/* GTK 4.8 gives up an autohide popover's grab only when the popover is
 * hidden, not when it is unmapped because its parent was: then the grab,
 * which holds a reference to the popover, stays in the window group. A
 * removed popover outlives its widgets, unrealized, while its grab keeps
 * taking the window group's input; and if the pointer last moved over it,
 * GTK's tooltip timer asks its missing surface for the pointer (the
 * critical in gdk_surface_get_device_position that the monkey found, seed
 * 20261126; tests/test_ui_window.c, close_with_popover and
 * popover_of_removed_field). An emission hook on "unmap" sees every such
 * popover and, just after, outside GTK's unmapping (hiding it there would
 * unmap it a second time within the first), has it give up the grab and
 * with it the reference: by popping down one still in place, by turning
 * insensitive one removed with its owner (popping that one down ran the
 * dead owner's handlers: a GtkText's emoji chooser called back the freed
 * text, a critical the monkey found with seed 20261127).
 *
 * GTK 4.8's popover also answers Return ("activate-default") by asking
 * whether the window's focus widget is inside it, without checking that
 * there is one: with the focus gone (its widget removed while the popover
 * stayed open) that is a critical in gtk_widget_is_ancestor (the monkey,
 * seed 20261129). A handler of each mapped popover's own runs before
 * GTK's and ends the emission when there is no focus: with nothing
 * focused, Return has nothing to activate. */
#include "popover_guard.h"

#include <gtk/gtk.h>

static gboolean close_unmapped(gpointer data)
{
    GtkWidget *popover = data;
    if (!gtk_widget_get_visible(popover) || gtk_widget_get_mapped(popover))
        return G_SOURCE_REMOVE; /* closed meanwhile, or shown again */
    if (gtk_widget_get_parent(popover))
        gtk_popover_popdown(GTK_POPOVER(popover)); /* its owner hears it close */
    else
        /* Removed with its owner (a drop-down, a text field), whose
         * handlers of "hide" and "closed" must not run any more: an
         * insensitive widget gives up its grab without either signal. */
        gtk_widget_set_sensitive(popover, FALSE);
    return G_SOURCE_REMOVE;
}

static void on_activate_default(GtkPopover *popover, gpointer data)
{
    (void)data;
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(popover));
    if (!GTK_IS_WINDOW(root) || !gtk_window_get_focus(GTK_WINDOW(root)))
        g_signal_stop_emission_by_name(popover, "activate-default");
}

static gboolean on_map(GSignalInvocationHint *hint, guint n_values, const GValue *values, gpointer data)
{
    (void)hint;
    (void)data;
    GObject *object = n_values ? g_value_get_object(&values[0]) : NULL;
    if (GTK_IS_POPOVER(object) && !g_object_get_data(object, "tw-popover-guard")) {
        g_object_set_data(object, "tw-popover-guard", GINT_TO_POINTER(1));
        g_signal_connect(object, "activate-default", G_CALLBACK(on_activate_default), NULL);
    }
    return TRUE; /* stay installed */
}

static gboolean on_unmap(GSignalInvocationHint *hint, guint n_values, const GValue *values, gpointer data)
{
    (void)hint;
    (void)data;
    GObject *object = n_values ? g_value_get_object(&values[0]) : NULL;
    /* A popover being hidden is no longer visible when it unmaps: only
     * one unmapped with its parent gets here. */
    if (GTK_IS_POPOVER(object) && gtk_widget_get_visible(GTK_WIDGET(object)))
        /* Before any timer of GTK's (the tooltip's is 500 ms). */
        g_idle_add_full(G_PRIORITY_HIGH, close_unmapped, g_object_ref(object), g_object_unref);
    return TRUE; /* stay installed */
}

void tw_popover_guard_install(void)
{
    static gsize installed;
    if (g_once_init_enter(&installed)) {
        g_type_class_ref(GTK_TYPE_WIDGET); /* its signals exist once its class does; kept */
        g_signal_add_emission_hook(g_signal_lookup("unmap", GTK_TYPE_WIDGET), 0, on_unmap, NULL, NULL);
        g_signal_add_emission_hook(g_signal_lookup("map", GTK_TYPE_WIDGET), 0, on_map, NULL, NULL);
        g_once_init_leave(&installed, 1);
    }
}
