/* Finding widgets (widget_tree.h). */
#include "widget_tree.h"

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

GtkWidget *widget_find(GtkWidget *root, gboolean (*match)(GtkWidget *widget, gconstpointer data),
                       gconstpointer data)
{
    GPtrArray *pending = g_ptr_array_new();
    GtkWidget *found = NULL;
    g_ptr_array_add(pending, root);
    while (pending->len && !found) {
        GtkWidget *w = g_ptr_array_steal_index(pending, pending->len - 1);
        if (match(w, data))
            found = w;
        for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
            g_ptr_array_add(pending, c);
    }
    g_ptr_array_free(pending, TRUE);
    return found;
}
