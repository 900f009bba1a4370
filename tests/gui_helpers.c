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

void drain(void)
{
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

void must(gboolean ok, GError *error)
{
    g_assert_no_error(error);
    g_assert_true(ok);
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

void designer_window_open(int width, int height, TwModelDoc **doc, GtkWidget **window, TwDesignerView **view)
{
    *doc = tw_model_doc_new();
    *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(*window), width, height);
    *view = TW_DESIGNER_VIEW(tw_designer_view_new(*doc));
    gtk_window_set_child(GTK_WINDOW(*window), GTK_WIDGET(*view));
    gtk_window_present(GTK_WINDOW(*window));
    drain();
}

void designer_window_close(GtkWidget *window, TwModelDoc *doc)
{
    gtk_window_destroy(GTK_WINDOW(window));
    drain();
    g_object_unref(doc);
}
