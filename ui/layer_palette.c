/* TwLayerPalette (layer_palette.h): a search entry over a GtkListBox with
 * one row per engine layer class and a heading where the group changes. */
#include "layer_palette.h"

#include <string.h>

#include <tw/layers.h>

#include "designer_blocks.h"

struct _TwLayerPalette {
    GtkWidget parent_instance;
    GtkWidget *search;
    GtkWidget *list;
    char *needle; /* the search text, lower case; "" shows everything */
};

enum { LAYER_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwLayerPalette, tw_layer_palette, GTK_TYPE_WIDGET)

/* The palette's order of groups; a group not listed goes last. */
static const char *const group_order[] = {"Core",          "Merging",        "Convolution", "Pooling",
                                          "Normalization", "Regularization", "Recurrent",   "Attention", "Activation",
                                          "Preprocessing"};

static int group_rank(const char *group)
{
    for (size_t i = 0; i < G_N_ELEMENTS(group_order); i++)
        if (group && !strcmp(group, group_order[i]))
            return (int)i;
    return G_N_ELEMENTS(group_order);
}

/* A row's entry: a layer class's or a block's name, and its group. */
static const char *row_name(GtkListBoxRow *row)
{
    return g_object_get_data(G_OBJECT(row), "entry-name");
}

static const char *row_group(GtkListBoxRow *row)
{
    return g_object_get_data(G_OBJECT(row), "entry-group");
}

/* ---- rows ----------------------------------------------------------------- */
static void on_drag_begin(GtkDragSource *source, GdkDrag *drag, gpointer row)
{
    GtkWidget *icon = gtk_label_new(row_name(row));
    gtk_widget_add_css_class(icon, "layer-drag-icon");
    gtk_drag_icon_set_child(GTK_DRAG_ICON(gtk_drag_icon_get_for_drag(drag)), icon);
}

static GdkContentProvider *on_drag_prepare(GtkDragSource *source, double x, double y, gpointer row)
{
    return gdk_content_provider_new_typed(G_TYPE_STRING, row_name(row));
}

/* A row for an entry (static strings): a class, or a block when klass is
 * NULL. */
static GtkWidget *make_row(const tw_layer_class *klass, const char *entry, const char *about, const char *group,
                           const char *tooltip)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    GtkWidget *name = gtk_label_new(entry);
    GtkWidget *summary = gtk_label_new(about ? about : "");
    gtk_label_set_xalign(GTK_LABEL(name), 0);
    /* Long class names (GlobalAveragePooling2D) would set the palette's
     * least width; in a narrow window they give way, as the summary does. */
    gtk_label_set_ellipsize(GTK_LABEL(name), PANGO_ELLIPSIZE_END);
    gtk_widget_add_css_class(name, "layer-class-name");
    gtk_label_set_xalign(GTK_LABEL(summary), 0);
    gtk_label_set_wrap(GTK_LABEL(summary), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(summary), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_max_width_chars(GTK_LABEL(summary), 30);
    gtk_widget_add_css_class(summary, "dim-label");
    gtk_widget_add_css_class(summary, "caption");
    gtk_box_append(GTK_BOX(box), name);
    gtk_box_append(GTK_BOX(box), summary);

    GtkWidget *row = gtk_list_box_row_new();
    gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
    gtk_widget_add_css_class(row, "palette-entry");
    gtk_widget_set_tooltip_text(row, tooltip);
    g_object_set_data(G_OBJECT(row), "layer-class", (gpointer)klass);
    g_object_set_data(G_OBJECT(row), "entry-name", (gpointer)entry);
    g_object_set_data(G_OBJECT(row), "entry-group", (gpointer)(group ? group : "Other"));
    char *text = g_strdup_printf("%s\n%s", entry, about ? about : "");
    g_object_set_data_full(G_OBJECT(row), "search-text", g_ascii_strdown(text, -1), g_free);
    g_free(text);

    GtkDragSource *source = gtk_drag_source_new();
    gtk_drag_source_set_actions(source, GDK_ACTION_COPY);
    g_signal_connect(source, "prepare", G_CALLBACK(on_drag_prepare), row);
    g_signal_connect(source, "drag-begin", G_CALLBACK(on_drag_begin), row);
    gtk_widget_add_controller(row, GTK_EVENT_CONTROLLER(source));
    return row;
}

/* Engine classes in group order, registry order within a group. */
static int compare_classes(gconstpointer a, gconstpointer b)
{
    const tw_layer_class *ca = *(const tw_layer_class *const *)a, *cb = *(const tw_layer_class *const *)b;
    return group_rank(ca->group) - group_rank(cb->group);
}

static void fill(TwLayerPalette *self)
{
    GPtrArray *classes = g_ptr_array_new();
    for (int i = 0; i < tw_layer_class_count(); i++) {
        const tw_layer_class *klass = tw_layer_class_at(i);
        if (strcmp(klass->name, "Sequential")) /* a whole model, not a layer to add */
            g_ptr_array_add(classes, (gpointer)klass);
    }
    g_ptr_array_sort(classes, compare_classes); /* GLib's sort is stable */
    gboolean blocks_added = FALSE;
    for (guint i = 0; i <= classes->len; i++) {
        const tw_layer_class *klass = i < classes->len ? classes->pdata[i] : NULL;
        /* The designer's blocks after the merging layers they end in. */
        if (!blocks_added && (!klass || group_rank(klass->group) > group_rank("Merging"))) {
            blocks_added = TRUE;
            for (int b = 0; b < tw_designer_block_count(); b++) {
                const tw_designer_block *block = tw_designer_block_at(b);
                gtk_list_box_append(GTK_LIST_BOX(self->list),
                                    make_row(NULL, block->name, block->summary, "Blocks",
                                             "Double-click to add its layers after the selected layer, or drag "
                                             "it onto the box it should follow"));
            }
        }
        if (klass)
            gtk_list_box_append(GTK_LIST_BOX(self->list),
                                make_row(klass, klass->name, klass->summary, klass->group,
                                         "Double-click to add it after the selected layer, or drag it onto the "
                                         "canvas or onto an edge"));
    }
    g_ptr_array_free(classes, TRUE);
}

/* ---- headings and the filter ---------------------------------------------- */
static void update_header(GtkListBoxRow *row, GtkListBoxRow *before, gpointer data)
{
    const char *group = row_group(row);
    if (before && !strcmp(row_group(before), group)) {
        gtk_list_box_row_set_header(row, NULL);
        return;
    }
    GtkWidget *header = gtk_list_box_row_get_header(row);
    if (header && !strcmp(gtk_label_get_text(GTK_LABEL(header)), group))
        return;
    header = gtk_label_new(group);
    gtk_label_set_xalign(GTK_LABEL(header), 0);
    gtk_widget_add_css_class(header, "palette-group");
    gtk_widget_add_css_class(header, "heading");
    gtk_list_box_row_set_header(row, header);
}

static gboolean matches(GtkListBoxRow *row, gpointer data)
{
    TwLayerPalette *self = data;
    return !self->needle[0] || strstr(g_object_get_data(G_OBJECT(row), "search-text"), self->needle);
}

static void refilter(TwLayerPalette *self)
{
    g_free(self->needle);
    self->needle = g_ascii_strdown(g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(self->search)))), -1);
    gtk_list_box_invalidate_filter(GTK_LIST_BOX(self->list));
    gtk_list_box_invalidate_headers(GTK_LIST_BOX(self->list));
}

static GtkListBoxRow *first_shown(TwLayerPalette *self)
{
    for (GtkWidget *c = gtk_widget_get_first_child(self->list); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_LIST_BOX_ROW(c) && gtk_widget_get_child_visible(c))
            return GTK_LIST_BOX_ROW(c);
    return NULL;
}

/* ---- activation ----------------------------------------------------------- */
static void on_row_activated(GtkListBox *list, GtkListBoxRow *row, TwLayerPalette *self)
{
    g_signal_emit(self, signals[LAYER_ACTIVATED], 0, row_name(row));
}

/* Enter or Space on a row adds the row that has the keyboard focus.
 * GtkListBox's own binding activates its cursor row, which focus moves do
 * not always carry along (Tab into the list, then the arrows): Enter added
 * the selected InputLayer instead. */
static gboolean on_activate_key(GtkWidget *list, GVariant *args, gpointer data)
{
    TwLayerPalette *self = data;
    GtkWidget *row = gtk_widget_get_focus_child(self->list);
    if (!GTK_IS_LIST_BOX_ROW(row))
        return FALSE;
    gtk_list_box_select_row(GTK_LIST_BOX(self->list), GTK_LIST_BOX_ROW(row));
    g_signal_emit(self, signals[LAYER_ACTIVATED], 0, row_name(GTK_LIST_BOX_ROW(row)));
    return TRUE;
}

/* Ahead of the list box's bindings (the capture phase). */
static void add_activate_keys(TwLayerPalette *self)
{
    static const guint keys[] = {GDK_KEY_Return, GDK_KEY_KP_Enter, GDK_KEY_ISO_Enter, GDK_KEY_space, GDK_KEY_KP_Space};
    GtkEventController *controller = gtk_shortcut_controller_new();
    gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE);
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(controller),
                                             gtk_shortcut_new(gtk_keyval_trigger_new(keys[i], 0),
                                                              gtk_callback_action_new(on_activate_key, self, NULL)));
    gtk_widget_add_controller(self->list, controller);
}

/* Enter in the search entry adds the first match. */
static void on_search_activate(GtkSearchEntry *entry, TwLayerPalette *self)
{
    GtkListBoxRow *row = first_shown(self);
    if (row)
        gtk_widget_activate(GTK_WIDGET(row));
}

/* ---- GObject -------------------------------------------------------------- */
static void tw_layer_palette_dispose(GObject *object)
{
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(object))))
        gtk_widget_unparent(child);
    G_OBJECT_CLASS(tw_layer_palette_parent_class)->dispose(object);
}

static void tw_layer_palette_finalize(GObject *object)
{
    g_free(TW_LAYER_PALETTE(object)->needle);
    G_OBJECT_CLASS(tw_layer_palette_parent_class)->finalize(object);
}

static void tw_layer_palette_class_init(TwLayerPaletteClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_layer_palette_dispose;
    object_class->finalize = tw_layer_palette_finalize;
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BOX_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "layerpalette");
    signals[LAYER_ACTIVATED] = g_signal_new("layer-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                            NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void tw_layer_palette_init(TwLayerPalette *self)
{
    GtkWidget *widget = GTK_WIDGET(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(gtk_widget_get_layout_manager(widget)), GTK_ORIENTATION_VERTICAL);
    self->needle = g_strdup("");

    self->search = gtk_search_entry_new();
    g_object_set(self->search, "placeholder-text", "Search layers", NULL);
    gtk_widget_add_css_class(self->search, "palette-search");
    g_signal_connect_swapped(self->search, "search-changed", G_CALLBACK(refilter), self);
    g_signal_connect(self->search, "activate", G_CALLBACK(on_search_activate), self);
    gtk_widget_set_parent(self->search, widget);

    self->list = gtk_list_box_new();
    gtk_widget_add_css_class(self->list, "layer-palette");
    gtk_widget_add_css_class(self->list, "navigation-sidebar");
    gtk_list_box_set_activate_on_single_click(GTK_LIST_BOX(self->list), FALSE);
    gtk_list_box_set_header_func(GTK_LIST_BOX(self->list), update_header, NULL, NULL);
    gtk_list_box_set_filter_func(GTK_LIST_BOX(self->list), matches, self, NULL);
    GtkWidget *none = gtk_label_new("No layer matches");
    gtk_widget_add_css_class(none, "dim-label");
    gtk_list_box_set_placeholder(GTK_LIST_BOX(self->list), none);
    g_signal_connect(self->list, "row-activated", G_CALLBACK(on_row_activated), self);
    add_activate_keys(self);
    fill(self);

    GtkWidget *scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), self->list);
    gtk_widget_set_vexpand(scroller, TRUE);
    gtk_widget_set_parent(scroller, widget);
    gtk_search_entry_set_key_capture_widget(GTK_SEARCH_ENTRY(self->search), self->list);
}

GtkWidget *tw_layer_palette_new(void)
{
    return g_object_new(TW_TYPE_LAYER_PALETTE, NULL);
}

void tw_layer_palette_set_search(TwLayerPalette *palette, const char *text)
{
    gtk_editable_set_text(GTK_EDITABLE(palette->search), text);
    refilter(palette);
}

char **tw_layer_palette_visible_classes(TwLayerPalette *palette)
{
    GStrvBuilder *names = g_strv_builder_new();
    for (GtkWidget *c = gtk_widget_get_first_child(palette->list); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_LIST_BOX_ROW(c) && gtk_widget_get_child_visible(c) && g_object_get_data(G_OBJECT(c), "layer-class"))
            g_strv_builder_add(names, row_name(GTK_LIST_BOX_ROW(c)));
    char **strv = g_strv_builder_end(names);
    g_strv_builder_unref(names);
    return strv;
}

static GtkListBoxRow *find_row(TwLayerPalette *palette, const char *class_name)
{
    for (GtkWidget *c = gtk_widget_get_first_child(palette->list); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_LIST_BOX_ROW(c) && gtk_widget_get_child_visible(c) &&
            !strcmp(row_name(GTK_LIST_BOX_ROW(c)), class_name))
            return GTK_LIST_BOX_ROW(c);
    return NULL;
}

const char *tw_layer_palette_heading_of(TwLayerPalette *palette, const char *class_name)
{
    GtkListBoxRow *row = find_row(palette, class_name);
    GtkWidget *header = row ? gtk_list_box_row_get_header(row) : NULL;
    return header ? gtk_label_get_text(GTK_LABEL(header)) : NULL;
}

gboolean tw_layer_palette_activate(TwLayerPalette *palette, const char *class_name)
{
    GtkListBoxRow *row = find_row(palette, class_name);
    if (!row)
        return FALSE;
    gtk_list_box_select_row(GTK_LIST_BOX(palette->list), row);
    return gtk_widget_activate(GTK_WIDGET(row));
}
