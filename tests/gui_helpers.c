#include "gui_helpers.h"

gboolean timed_out(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what)
{
    gboolean expired = FALSE;
    guint timer = g_timeout_add((guint)(seconds * 1000), timed_out, &expired);
    while (!cond(data) && !expired)
        g_main_context_iteration(NULL, TRUE);
    if (expired)
        g_error("waited %.0f s for %s", seconds, what);
    g_source_remove(timer);
}

void spin(double seconds)
{
    gboolean expired = FALSE;
    g_timeout_add((guint)(seconds * 1000), timed_out, &expired);
    while (!expired)
        g_main_context_iteration(NULL, TRUE);
}

GtkWidget *find_type(GtkWidget *root, GType type)
{
    if (G_TYPE_CHECK_INSTANCE_TYPE(root, type))
        return root;
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = find_type(c, type);
        if (found)
            return found;
    }
    return NULL;
}

GtkWidget *find_named(GtkWidget *root, const char *name)
{
    if (!g_strcmp0(gtk_widget_get_name(root), name))
        return root;
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = find_named(c, name);
        if (found)
            return found;
    }
    return NULL;
}
