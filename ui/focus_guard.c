/* When the focused widget is removed from its window, GTK 4.8 keeps it as
 * the window's focus (holding the window's reference to it) and moves the
 * focus on at the next frame. If the next focusable widget is a selectable
 * GtkLabel, its grab_focus reads the window's focus widget, takes the
 * focus (which drops the window's reference: the removed widget is freed)
 * and only then asks whether the widget it read is its ancestor: the
 * critical `gtk_widget_is_ancestor: assertion 'GTK_IS_WIDGET (widget)'`
 * that the monkey test found (tests/test_ui_window.c,
 * removed_focus_before_label). Every window here has selectable labels
 * (messages, totals, the graph inspector), so the guard holds a reference of
 * its own to the window's focus widget; when the focus moves to a label
 * it gives that up from an idle callback, after the label is done with it,
 * and otherwise at once, when GTK would have. */
#include "focus_guard.h"

#include <gtk/gtk.h>

#define HOLD_KEY "tw-focus-guard-hold"

static gboolean unref_later(gpointer data)
{
    g_object_unref(data);
    return G_SOURCE_REMOVE;
}

static void on_focus_widget(GtkWindow *window, GParamSpec *pspec, gpointer data)
{
    (void)pspec;
    (void)data;
    GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
    gpointer previous = g_object_steal_data(G_OBJECT(window), HOLD_KEY);
    if (focus)
        g_object_set_data(G_OBJECT(window), HOLD_KEY, g_object_ref(focus));
    if (!previous)
        return;
    if (GTK_IS_LABEL(focus))
        g_idle_add(unref_later, previous); /* the label reads it after this */
    else
        g_object_unref(previous); /* when GTK itself would have */
}

/* A window going away gives up its focus widget at once, as GTK does. */
static void on_destroy(GtkWidget *window, gpointer data)
{
    (void)data;
    gpointer held = g_object_steal_data(G_OBJECT(window), HOLD_KEY);
    if (held)
        g_object_unref(held);
}

void tw_focus_guard_attach(GtkWindow *window)
{
    g_signal_connect(window, "notify::focus-widget", G_CALLBACK(on_focus_widget), NULL);
    g_signal_connect(window, "destroy", G_CALLBACK(on_destroy), NULL);
}
