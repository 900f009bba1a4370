/* TwDesignerView (designer_view.h): palette | canvas or layer list |
 * property editor in two GtkPaneds. The canvas and the list share one
 * selected layer, which drives the editor; a class activated in the
 * palette goes in after the selected layer.
 *
 * Drill-down: each level is a document with its own canvas, list and
 * editor (the top one the view's document, each below a nested model of
 * the one above, loaded from its JSON); the deepest is shown, the others
 * kept as they were, and a breadcrumb bar above the canvas names the
 * path. Every edit of a level is written into its parent's nested layer
 * as it is made (tw_model_doc_replace_nested, and so on up to the top),
 * all of one visit grouped into one undo step of the parent
 * (tw_model_doc_begin_group): the top document is always the whole model
 * with the edits on screen, which Train trains and the status line
 * counts. An edit the parent refuses (the nested model no longer fits
 * its input) stays on its level until it fits, and Train says why. */
#include "designer_view.h"

#include "designer_canvas.h"
#include "designer_canvas_draw.h"
#include "layer_palette.h"
#include "layer_stack.h"
#include "property_editor.h"

#define DESIGNER_CSS "/io/github/twb/Workbench/designer.css"

typedef struct {
    TwModelDoc *doc;
    int node; /* the nested model's node in the level above; -1 at the top */
    GtkWidget *canvas, *stack, *editor; /* references: kept while hidden */
    char *page;                         /* canvas or list, while hidden */
    char *refused; /* why its last edit is not in the level above, or NULL */
    char *entry;   /* the nested model's JSON as it was entered */
} Level;

struct _TwDesignerView {
    GtkWidget parent_instance;
    TwModelDoc *doc;
    GPtrArray *levels; /* of Level, the top first; the last is shown */
    GtkWidget *palette, *stack, *editor; /* the shown level's */
    GtkWidget *canvas, *pages, *status, *whole, *problem, *inner;
    GtkWidget *crumbs, *crumb_message;
    gboolean syncing; /* a selection passed from the canvas to the list or back */
    char *cannot_train; /* a level's edit that is not in the whole model yet, else NULL */
};

enum { PROP_0, PROP_DOC, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { SHOWN_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwDesignerView, tw_designer_view, GTK_TYPE_WIDGET)

/* The designer's styles (cards, error marks, the drop line), once per
 * display; programs without the resource bundle get GTK's defaults. */
static void load_css(GtkWidget *widget)
{
    GdkDisplay *display = gtk_widget_get_display(widget);
    if (g_object_get_data(G_OBJECT(display), "tw-designer-css") ||
        !g_resources_get_info(DESIGNER_CSS, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL))
        return;
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(provider, DESIGNER_CSS);
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_set_data_full(G_OBJECT(display), "tw-designer-css", provider, g_object_unref);
}

/* A double-click or Enter in the palette: after the selection. */
static void on_layer_activated(TwLayerPalette *palette, const char *class_name, TwDesignerView *self)
{
    tw_designer_canvas_append_class(TW_DESIGNER_CANVAS(self->canvas), class_name);
}

static void on_stack_selected(TwLayerStack *stack, GParamSpec *pspec, TwDesignerView *self)
{
    if (GTK_WIDGET(stack) != self->stack) /* a hidden level's */
        return;
    int index = tw_layer_stack_get_selected(stack);
    tw_property_editor_set_index(TW_PROPERTY_EDITOR(self->editor), index);
    if (self->syncing)
        return;
    self->syncing = TRUE;
    tw_designer_canvas_select(TW_DESIGNER_CANVAS(self->canvas), index);
    self->syncing = FALSE;
}

static void on_canvas_selected(TwDesignerCanvas *canvas, TwDesignerView *self)
{
    if (GTK_WIDGET(canvas) != self->canvas)
        return;
    int index = tw_designer_canvas_primary(canvas);
    tw_property_editor_set_index(TW_PROPERTY_EDITOR(self->editor), index);
    if (self->syncing)
        return;
    self->syncing = TRUE;
    tw_layer_stack_select(TW_LAYER_STACK(self->stack), index);
    self->syncing = FALSE;
}

/* The name a level goes by in the breadcrumb: the top model's, else the
 * nested model's layer name in the level above. */
static const char *level_name(TwDesignerView *self, guint i)
{
    Level *level = g_ptr_array_index(self->levels, i);
    if (i == 0)
        return tw_model_doc_name(level->doc);
    Level *above = g_ptr_array_index(self->levels, i - 1);
    return tw_layer_name(tw_model_doc_layer(above->doc, level->node));
}

/* "12 layers · Total params: 54,410 · Trainable: ... " of doc. */
static char *totals_text(TwModelDoc *doc)
{
    int64_t trainable, frozen;
    tw_model_doc_totals(doc, &trainable, &frozen);
    char total_s[32], trainable_s[32], frozen_s[32];
    tw_designer_format_count(trainable + frozen, total_s, sizeof total_s);
    tw_designer_format_count(trainable, trainable_s, sizeof trainable_s);
    tw_designer_format_count(frozen, frozen_s, sizeof frozen_s);
    return g_strdup_printf("%d layers · Total params: %s · Trainable: %s · Non-trainable: %s",
                           tw_model_doc_n_layers(doc), total_s, trainable_s, frozen_s);
}

/* The status line: the shown model's totals; inside a nested model, named
 * so ("Inside base: 4 layers · ..."), and under them the whole model's,
 * which has the edits made inside and is what Train trains ("Whole model
 * outer: ..."). Then why the whole model cannot train, if it cannot: a
 * level's edit its parent refused, else the top document's problem. */
static void update_status(TwDesignerView *self)
{
    if (!self->status) /* built after the top level */
        return;
    TwModelDoc *doc = tw_designer_view_doc(self), *top = self->doc;
    guint depth = self->levels->len - 1;
    char *totals = totals_text(doc);
    char *text = depth ? g_strdup_printf("Inside %s: %s", level_name(self, depth), totals) : g_strdup(totals);
    gtk_label_set_text(GTK_LABEL(self->status), text);
    g_free(text);
    g_free(totals);
    if (depth) {
        totals = totals_text(top);
        text = g_strdup_printf("Whole model %s%s: %s", level_name(self, 0),
                               self->cannot_train ? " (without the edit that does not fit)" : "", totals);
        gtk_label_set_text(GTK_LABEL(self->whole), text);
        gtk_widget_set_tooltip_text(self->whole, text);
        g_free(text);
        g_free(totals);
    }
    gtk_widget_set_visible(self->whole, depth > 0);
    const char *error = self->cannot_train ? self->cannot_train : tw_model_doc_error(top);
    text = error ? g_strdup_printf("Cannot train: %s", error) : NULL;
    gtk_label_set_text(GTK_LABEL(self->problem), text ? text : "");
    gtk_widget_set_tooltip_text(self->problem, text);
    gtk_widget_set_visible(self->problem, error != NULL);
    g_free(text);
}

static void on_arrange_clicked(GtkButton *button, TwDesignerView *self)
{
    tw_designer_canvas_arrange(TW_DESIGNER_CANVAS(self->canvas));
}

static void on_fit_clicked(GtkButton *button, TwDesignerView *self)
{
    tw_designer_canvas_fit(TW_DESIGNER_CANVAS(self->canvas));
}

static GtkWidget *tool_button(const char *label, const char *tooltip, GCallback callback, TwDesignerView *self)
{
    GtkWidget *button = gtk_button_new_with_label(label);
    gtk_widget_set_tooltip_text(button, tooltip);
    gtk_widget_set_focus_on_click(button, FALSE);
    g_signal_connect(button, "clicked", callback, self);
    return button;
}

/* The middle: a switcher (Canvas | List), Arrange and Fit, the canvas or
 * the layer list, and the status line. */
static GtkWidget *middle(TwDesignerView *self)
{
    GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_add_css_class(bar, "designer-toolbar");
    GtkWidget *switcher = gtk_stack_switcher_new();
    gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(switcher), GTK_STACK(self->pages));
    gtk_box_append(GTK_BOX(bar), switcher);
    gtk_box_append(GTK_BOX(bar), tool_button("Arrange", "Lay the boxes out in layers (Ctrl+L)",
                                             G_CALLBACK(on_arrange_clicked), self));
    gtk_box_append(GTK_BOX(bar), tool_button("Fit", "Show the whole model (0)", G_CALLBACK(on_fit_clicked), self));
    self->status = gtk_label_new(NULL);
    self->whole = gtk_label_new(NULL);
    self->problem = gtk_label_new(NULL);
    GtkWidget *labels[] = {self->status, self->whole, self->problem};
    for (int i = 0; i < 3; i++) {
        gtk_label_set_xalign(GTK_LABEL(labels[i]), 0);
        gtk_label_set_ellipsize(GTK_LABEL(labels[i]), PANGO_ELLIPSIZE_END);
        gtk_widget_add_css_class(labels[i], "designer-status");
    }
    gtk_widget_add_css_class(self->problem, "error");
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_box_append(GTK_BOX(box), bar);
    gtk_box_append(GTK_BOX(box), self->crumbs);
    gtk_box_append(GTK_BOX(box), self->pages);
    gtk_box_append(GTK_BOX(box), self->status);
    gtk_box_append(GTK_BOX(box), self->whole);
    gtk_box_append(GTK_BOX(box), self->problem);
    gtk_widget_set_visible(self->whole, FALSE);
    gtk_widget_set_vexpand(self->pages, TRUE);
    return box;
}

/* The stack takes what the palette and the editor leave; in a narrow
 * window (800 pixels) every pane gives way down to its least width,
 * scrolling or ellipsizing what does not fit, and every pane can be
 * dragged. */
static GtkWidget *paned(GtkWidget *start, GtkWidget *end, gboolean resize_start, gboolean resize_end)
{
    GtkWidget *p = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_set_start_child(GTK_PANED(p), start);
    gtk_paned_set_end_child(GTK_PANED(p), end);
    gtk_paned_set_resize_start_child(GTK_PANED(p), resize_start);
    gtk_paned_set_resize_end_child(GTK_PANED(p), resize_end);
    gtk_paned_set_shrink_start_child(GTK_PANED(p), FALSE);
    gtk_paned_set_shrink_end_child(GTK_PANED(p), FALSE);
    return p;
}

typedef struct {
    gboolean end;   /* the width is the end child's */
    int width, full; /* the child's width when the paned is full wide */
} InitialWidth;

static void on_paned_allocated(GtkPaned *paned, GParamSpec *pspec, InitialWidth *want)
{
    int width = gtk_widget_get_width(GTK_WIDGET(paned));
    if (width <= want->width) /* not yet sized (the least width comes first) */
        return;
    g_signal_handlers_disconnect_by_func(paned, on_paned_allocated, want);
    /* In a narrower window every side pane gives up its share, so that the
     * middle (the layer stack) keeps room for its cards' names and shapes. */
    int child = width >= want->full ? want->width : (int)((gint64)want->width * width / want->full);
    gtk_paned_set_position(paned, want->end ? width - child : child);
}

void tw_designer_paned_initial_width(GtkPaned *paned, gboolean end, int width, int full)
{
    InitialWidth *want = g_new(InitialWidth, 1);
    *want = (InitialWidth){end, width, full};
    g_signal_connect_data(paned, "notify::max-position", G_CALLBACK(on_paned_allocated), want,
                          (GClosureNotify)(void (*)(void))g_free, 0);
}

static Level *shown(TwDesignerView *self)
{
    return g_ptr_array_index(self->levels, self->levels->len - 1);
}

static void level_free(gpointer data)
{
    Level *level = data;
    g_object_unref(level->canvas);
    g_object_unref(level->stack);
    g_object_unref(level->editor);
    g_object_unref(level->doc);
    g_free(level->page);
    g_free(level->refused);
    g_free(level->entry);
    g_free(level);
}

static void emit_shown_changed(TwDesignerView *self)
{
    g_signal_emit(self, signals[SHOWN_CHANGED], 0);
}

static int level_of(TwDesignerView *self, TwModelDoc *doc)
{
    for (guint i = 0; i < self->levels->len; i++)
        if (((Level *)g_ptr_array_index(self->levels, i))->doc == doc)
            return (int)i;
    return -1;
}

/* Why Train is off for the whole model beyond the top document's own
 * problem: the deepest level whose last edit its parent refused, whose
 * parents then hold it as it was before. */
static void update_cannot_train(TwDesignerView *self)
{
    g_clear_pointer(&self->cannot_train, g_free);
    for (guint i = self->levels->len; i-- > 1 && !self->cannot_train;) {
        Level *level = g_ptr_array_index(self->levels, i);
        if (level->refused)
            self->cannot_train = g_strdup(level->refused);
    }
}

/* Level i's model written into its nested layer in the level above, as
 * one step with the others of this visit (tw_model_doc_begin_group on
 * entering); that level's "changed" then writes it further up. Refused,
 * the level above unchanged, when the model no longer fits its input or
 * is not a model; the reason names the level. */
static gboolean write_back(TwDesignerView *self, guint i, GError **error)
{
    Level *level = g_ptr_array_index(self->levels, i), *parent = g_ptr_array_index(self->levels, i - 1);
    GError *failed = NULL;
    g_clear_pointer(&level->refused, g_free);
    if (!tw_model_doc_model(level->doc))
        g_set_error(&failed, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "Inside %s: not a model yet: %s",
                    level_name(self, i), tw_model_doc_error(level->doc));
    else {
        /* Back as it was entered (edits undone): the parent as it was too,
         * not even the boxes' places written in where it had none. */
        char *json = tw_model_doc_modified(level->doc) ? tw_model_doc_to_json(level->doc) : g_strdup(level->entry);
        GError *refusal = NULL;
        if (!tw_model_doc_replace_nested(parent->doc, level->node, json, &refusal)) {
            g_set_error(&failed, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "Inside %s: the edit does not fit %s: %s",
                        level_name(self, i), level_name(self, i - 1), refusal->message);
            g_error_free(refusal);
        }
        g_free(json);
    }
    if (failed) {
        level->refused = g_strdup(failed->message);
        g_propagate_error(error, failed);
        return FALSE;
    }
    return TRUE;
}

/* The status line, Train's reason and the window (undo, redo, Train)
 * follow the shown level and the whole model. */
static void refresh(TwDesignerView *self)
{
    update_cannot_train(self);
    update_status(self);
    emit_shown_changed(self);
}

/* An edit of a level goes up into the whole model as it is made. */
static void on_level_doc_changed(TwModelDoc *doc, TwDesignerView *self)
{
    int i = level_of(self, doc);
    if (i > 0)
        write_back(self, (guint)i, NULL);
    if (doc != tw_designer_view_doc(self)) /* a level above, written into */
        return;
    gtk_widget_set_visible(self->crumb_message, FALSE); /* a refusal's message is about what was */
    refresh(self);
}

static void on_level_doc_notify(TwModelDoc *doc, GParamSpec *pspec, TwDesignerView *self)
{
    if (doc == tw_designer_view_doc(self))
        emit_shown_changed(self);
}

static void on_edit_nested(TwDesignerCanvas *canvas, int node, TwDesignerView *self);
static void on_leave_nested(TwDesignerCanvas *canvas, TwDesignerView *self);

/* The List page's keys for nested models, as the canvas has them:
 * Shift+Return edits the selected one, Escape goes back one level. */
static gboolean on_stack_key(GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
                             TwDesignerView *self)
{
    if (gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(key)) != self->stack)
        return FALSE;
    state &= gtk_accelerator_get_default_mod_mask();
    if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter || keyval == GDK_KEY_ISO_Enter) &&
        state == GDK_SHIFT_MASK) {
        int selected = tw_layer_stack_get_selected(TW_LAYER_STACK(self->stack));
        tw_layer *layer = tw_model_doc_layer(tw_designer_view_doc(self), selected);
        if (!layer || !tw_layer_is_model(layer))
            return FALSE;
        on_edit_nested(NULL, selected, self);
        return TRUE;
    }
    if (keyval == GDK_KEY_Escape && !state && self->levels->len > 1) {
        on_leave_nested(NULL, self);
        return TRUE;
    }
    return FALSE;
}

static Level *level_new(TwDesignerView *self, TwModelDoc *doc, int node)
{
    Level *level = g_new0(Level, 1);
    level->doc = g_object_ref(doc);
    level->node = node;
    level->page = g_strdup("canvas");
    level->stack = g_object_ref_sink(tw_layer_stack_new(doc));
    level->canvas = g_object_ref_sink(tw_designer_canvas_new(doc));
    level->editor = g_object_ref_sink(tw_property_editor_new(doc));
    g_signal_connect_object(level->stack, "notify::selected", G_CALLBACK(on_stack_selected), self, 0);
    g_signal_connect_object(level->canvas, "selection-changed", G_CALLBACK(on_canvas_selected), self, 0);
    g_signal_connect_object(level->canvas, "edit-nested", G_CALLBACK(on_edit_nested), self, 0);
    g_signal_connect_object(level->canvas, "leave-nested", G_CALLBACK(on_leave_nested), self, 0);
    GtkEventController *keys = gtk_event_controller_key_new();
    g_signal_connect_object(keys, "key-pressed", G_CALLBACK(on_stack_key), self, 0);
    gtk_widget_add_controller(level->stack, keys);
    g_signal_connect_object(doc, "changed", G_CALLBACK(on_level_doc_changed), self, 0);
    g_signal_connect_object(doc, "notify::can-undo", G_CALLBACK(on_level_doc_notify), self, 0);
    g_signal_connect_object(doc, "notify::can-redo", G_CALLBACK(on_level_doc_notify), self, 0);
    return level;
}

/* ---- the breadcrumb ------------------------------------------------------- */
static void on_crumb_clicked(GtkButton *button, TwDesignerView *self)
{
    int depth = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "tw-depth"));
    tw_designer_view_leave_to(self, depth, NULL);
}

/* "model › base › block": every level above the shown one a button that
 * goes back to it; hidden at the top. */
static void update_crumbs(TwDesignerView *self)
{
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->crumbs)) && child != self->crumb_message)
        gtk_box_remove(GTK_BOX(self->crumbs), child);
    guint n = self->levels->len;
    for (guint i = 0; i < n; i++) {
        const char *name = level_name(self, i);
        GtkWidget *crumb;
        if (i + 1 < n) {
            crumb = gtk_button_new_with_label(name);
            gtk_widget_add_css_class(crumb, "flat");
            gtk_widget_set_focus_on_click(crumb, FALSE);
            gtk_widget_set_tooltip_text(crumb, "Back to this model, keeping the edits made inside (Escape: one level)");
            g_object_set_data(G_OBJECT(crumb), "tw-depth", GINT_TO_POINTER(i));
            g_signal_connect(crumb, "clicked", G_CALLBACK(on_crumb_clicked), self);
        } else {
            crumb = gtk_label_new(name);
            gtk_widget_add_css_class(crumb, "heading");
            gtk_widget_set_margin_start(crumb, 6); /* a button's padding, which the label lacks */
        }
        gtk_box_insert_child_after(GTK_BOX(self->crumbs), crumb, gtk_widget_get_prev_sibling(self->crumb_message));
        if (i + 1 < n)
            gtk_box_insert_child_after(GTK_BOX(self->crumbs), gtk_label_new("›"), crumb);
    }
    gtk_widget_set_visible(self->crumbs, n > 1);
}

/* The shown level's widgets in place of the others'. */
static void show_level(TwDesignerView *self, Level *level)
{
    if (self->canvas) {
        Level *was = NULL;
        for (guint i = 0; i < self->levels->len && !was; i++)
            if (((Level *)g_ptr_array_index(self->levels, i))->canvas == self->canvas)
                was = g_ptr_array_index(self->levels, i);
        if (was) {
            g_free(was->page);
            was->page = g_strdup(gtk_stack_get_visible_child_name(GTK_STACK(self->pages)));
        }
        gtk_stack_remove(GTK_STACK(self->pages), self->canvas);
        gtk_stack_remove(GTK_STACK(self->pages), self->stack);
    }
    self->canvas = level->canvas;
    self->stack = level->stack;
    self->editor = level->editor;
    gtk_stack_add_titled(GTK_STACK(self->pages), self->canvas, "canvas", "Canvas");
    gtk_stack_add_titled(GTK_STACK(self->pages), self->stack, "list", "List");
    gtk_stack_set_visible_child_name(GTK_STACK(self->pages), level->page);
    if (self->inner)
        gtk_paned_set_end_child(GTK_PANED(self->inner), self->editor);
    update_crumbs(self);
    update_cannot_train(self);
    update_status(self);
}

static void on_edit_nested(TwDesignerCanvas *canvas, int node, TwDesignerView *self)
{
    GError *error = NULL;
    if (!tw_designer_view_enter_nested(self, node, &error)) {
        gtk_label_set_text(GTK_LABEL(self->crumb_message), error->message);
        gtk_widget_set_visible(self->crumb_message, TRUE);
        gtk_widget_set_visible(self->crumbs, TRUE);
        g_error_free(error);
    }
}

static void on_leave_nested(TwDesignerCanvas *canvas, TwDesignerView *self)
{
    if (self->levels->len > 1)
        tw_designer_view_leave_to(self, (int)self->levels->len - 2, NULL);
}

gboolean tw_designer_view_enter_nested(TwDesignerView *self, int node, GError **error)
{
    TwModelDoc *parent = tw_designer_view_doc(self);
    char *json = tw_model_doc_nested_json(parent, node);
    if (!json) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "layer %d is not a nested model", node);
        return FALSE;
    }
    TwModelDoc *child = tw_model_doc_new();
    gboolean ok = tw_model_doc_load_json(child, json, tw_layer_name(tw_model_doc_layer(parent, node)), error);
    if (ok) {
        /* The edits of this visit: one step of the parent. */
        tw_model_doc_begin_group(parent);
        Level *level = level_new(self, child, node);
        level->entry = g_steal_pointer(&json);
        g_ptr_array_add(self->levels, level);
        show_level(self, level);
        gtk_widget_set_visible(self->crumb_message, FALSE);
        if (tw_model_doc_n_layers(child))
            tw_designer_view_select(self, 0);
        gtk_widget_grab_focus(self->canvas);
        emit_shown_changed(self);
    }
    g_free(json);
    g_object_unref(child);
    return ok;
}

gboolean tw_designer_view_leave_to(TwDesignerView *self, int depth, GError **error)
{
    while ((int)self->levels->len - 1 > MAX(depth, 0)) {
        guint i = self->levels->len - 1;
        Level *level = shown(self), *parent = g_ptr_array_index(self->levels, i - 1);
        GError *failed = NULL;
        /* Its edits are in the parent already, unless it refused the last. */
        if (level->refused && !write_back(self, i, &failed)) { /* stay inside, with the reason */
            char *text = g_strdup_printf("Cannot go back: %s", failed->message);
            gtk_label_set_text(GTK_LABEL(self->crumb_message), text);
            gtk_widget_set_tooltip_text(self->crumb_message, text);
            gtk_widget_set_visible(self->crumb_message, TRUE);
            g_free(text);
            g_propagate_error(error, failed);
            refresh(self);
            return FALSE;
        }
        tw_model_doc_end_group(parent->doc); /* the visit's step is done */
        int node = level->node;
        g_ptr_array_remove_index(self->levels, i); /* its widgets live on in the stack */
        show_level(self, parent);
        gtk_widget_set_visible(self->crumb_message, FALSE);
        tw_designer_view_select(self, node);
        gtk_widget_grab_focus(self->canvas);
        emit_shown_changed(self);
    }
    return TRUE;
}

gboolean tw_designer_view_write_back(TwDesignerView *self, GError **error)
{
    for (guint i = self->levels->len; i-- > 1;) {
        Level *level = g_ptr_array_index(self->levels, i);
        if (level->refused && !write_back(self, i, error)) {
            refresh(self);
            return FALSE;
        }
    }
    refresh(self);
    return TRUE;
}

gboolean tw_designer_view_pending(TwDesignerView *self)
{
    for (guint i = 1; i < self->levels->len; i++)
        if (((Level *)g_ptr_array_index(self->levels, i))->refused)
            return TRUE;
    return FALSE;
}

/* The top document loaded anew: the levels below were of the old model. */
static void on_top_loaded(TwModelDoc *doc, GParamSpec *pspec, TwDesignerView *self)
{
    if (self->levels->len < 2)
        return;
    tw_model_doc_end_group(doc);
    g_ptr_array_set_size(self->levels, 1);
    show_level(self, g_ptr_array_index(self->levels, 0));
    gtk_widget_set_visible(self->crumb_message, FALSE);
    emit_shown_changed(self);
}

const char *tw_designer_view_cannot_train(TwDesignerView *self)
{
    return self->cannot_train;
}

int tw_designer_view_depth(TwDesignerView *self)
{
    return (int)self->levels->len - 1;
}

TwModelDoc *tw_designer_view_doc(TwDesignerView *self)
{
    return self->levels && self->levels->len ? shown(self)->doc : self->doc;
}

static void tw_designer_view_constructed(GObject *object)
{
    TwDesignerView *self = TW_DESIGNER_VIEW(object);
    G_OBJECT_CLASS(tw_designer_view_parent_class)->constructed(object);
    self->palette = tw_layer_palette_new();
    g_signal_connect(self->palette, "layer-activated", G_CALLBACK(on_layer_activated), self);
    self->pages = gtk_stack_new();
    self->crumbs = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2);
    gtk_widget_add_css_class(self->crumbs, "designer-breadcrumb");
    self->crumb_message = gtk_label_new(NULL);
    gtk_widget_add_css_class(self->crumb_message, "error");
    gtk_label_set_ellipsize(GTK_LABEL(self->crumb_message), PANGO_ELLIPSIZE_END);
    gtk_label_set_xalign(GTK_LABEL(self->crumb_message), 0);
    gtk_widget_set_hexpand(self->crumb_message, TRUE);
    gtk_widget_set_margin_start(self->crumb_message, 12);
    gtk_box_append(GTK_BOX(self->crumbs), self->crumb_message);
    gtk_widget_set_visible(self->crumb_message, FALSE);
    self->levels = g_ptr_array_new_with_free_func(level_free);
    Level *top = level_new(self, self->doc, -1);
    g_ptr_array_add(self->levels, top);
    show_level(self, top);
    g_signal_connect_object(self->doc, "notify::path", G_CALLBACK(on_top_loaded), self, 0);
    self->inner = paned(middle(self), self->editor, TRUE, FALSE);
    GtkWidget *inner = self->inner;
    GtkWidget *outer = paned(self->palette, inner, FALSE, TRUE);
    /* Their widths in a 1280-pixel window that also holds the training panel. */
    tw_designer_paned_initial_width(GTK_PANED(outer), FALSE, 220, 940);
    tw_designer_paned_initial_width(GTK_PANED(inner), TRUE, 280, 880);
    gtk_widget_set_parent(outer, GTK_WIDGET(self));
    update_status(self);
    if (tw_model_doc_n_layers(self->doc))
        tw_designer_view_select(self, 0);
}

static void tw_designer_view_root(GtkWidget *widget)
{
    GTK_WIDGET_CLASS(tw_designer_view_parent_class)->root(widget);
    load_css(widget);
}

static void tw_designer_view_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        TW_DESIGNER_VIEW(object)->doc = g_value_dup_object(value);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_designer_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        g_value_set_object(value, TW_DESIGNER_VIEW(object)->doc);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_designer_view_dispose(GObject *object)
{
    TwDesignerView *self = TW_DESIGNER_VIEW(object);
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(object))))
        gtk_widget_unparent(child);
    g_clear_pointer(&self->levels, g_ptr_array_unref);
    g_clear_object(&self->doc);
    g_clear_pointer(&self->cannot_train, g_free);
    G_OBJECT_CLASS(tw_designer_view_parent_class)->dispose(object);
}

static void tw_designer_view_class_init(TwDesignerViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->set_property = tw_designer_view_set_property;
    object_class->get_property = tw_designer_view_get_property;
    object_class->constructed = tw_designer_view_constructed;
    object_class->dispose = tw_designer_view_dispose;
    widget_class->root = tw_designer_view_root;
    props[PROP_DOC] = g_param_spec_object("doc", NULL, NULL, TW_TYPE_MODEL_DOC,
                                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    signals[SHOWN_CHANGED] = g_signal_new("shown-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                          NULL, NULL, G_TYPE_NONE, 0);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "designerview");
}

static void tw_designer_view_init(TwDesignerView *self)
{
}

GtkWidget *tw_designer_view_new(TwModelDoc *doc)
{
    return g_object_new(TW_TYPE_DESIGNER_VIEW, "doc", doc, NULL);
}

int tw_designer_view_selected(TwDesignerView *view)
{
    return tw_designer_canvas_primary(TW_DESIGNER_CANVAS(view->canvas));
}

void tw_designer_view_select(TwDesignerView *view, int index)
{
    tw_designer_canvas_select(TW_DESIGNER_CANVAS(view->canvas), index);
}

GtkWidget *tw_designer_view_palette(TwDesignerView *view)
{
    return view->palette;
}

GtkWidget *tw_designer_view_stack(TwDesignerView *view)
{
    return view->stack;
}

GtkWidget *tw_designer_view_canvas(TwDesignerView *view)
{
    return view->canvas;
}

GtkWidget *tw_designer_view_status(TwDesignerView *view)
{
    return view->status;
}

GtkWidget *tw_designer_view_whole_status(TwDesignerView *view)
{
    return view->whole;
}

GtkWidget *tw_designer_view_problem(TwDesignerView *view)
{
    return view->problem;
}

GtkWidget *tw_designer_view_property_editor(TwDesignerView *view)
{
    return view->editor;
}
