/* TwLayerStack (layer_stack.h). Card i always shows layer i: on "changed"
 * the list grows or shrinks at the end and every card's labels are set
 * again (GtkLabel ignores a text it already has), which keeps a 50-layer
 * refresh far under a frame without tracking what an edit touched. */
#include "layer_stack.h"

#include "designer_canvas_draw.h"

#include <inttypes.h>
#include <string.h>

typedef struct {
    GtkWidget *row, *name, *klass, *shape, *params, *tag, *message, *duplicate, *remove;
} Card;

struct _TwLayerStack {
    GtkWidget parent_instance;
    TwModelDoc *doc;
    gulong changed_id;
    GtkWidget *list;
    GtkWidget *model_error; /* a problem of the whole model (no input shape) */
    GtkWidget *totals;
    GtkWidget *menu;
    GPtrArray *cards; /* of Card, one per layer */
    int selected;
    gboolean syncing;      /* selection changes made by refresh() itself */
    GtkWidget *drop_mark;  /* the row showing the insertion line, or NULL */
};

enum { PROP_0, PROP_DOC, PROP_SELECTED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwLayerStack, tw_layer_stack, GTK_TYPE_WIDGET)

static Card *card_at(TwLayerStack *self, int index)
{
    return index >= 0 && index < (int)self->cards->len ? self->cards->pdata[index] : NULL;
}


/* ---- the selection -------------------------------------------------------- */
static void set_selected(TwLayerStack *self, int index)
{
    if (self->selected == index)
        return;
    self->selected = index;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_SELECTED]);
}

static void show_selection(TwLayerStack *self)
{
    Card *card = card_at(self, self->selected);
    self->syncing = TRUE;
    if (card)
        gtk_list_box_select_row(GTK_LIST_BOX(self->list), GTK_LIST_BOX_ROW(card->row));
    else
        gtk_list_box_unselect_all(GTK_LIST_BOX(self->list));
    self->syncing = FALSE;
}

static void on_row_selected(GtkListBox *list, GtkListBoxRow *row, TwLayerStack *self)
{
    if (!self->syncing)
        set_selected(self, row ? gtk_list_box_row_get_index(row) : -1);
}

void tw_layer_stack_select(TwLayerStack *stack, int index)
{
    int n = (int)stack->cards->len;
    set_selected(stack, n ? CLAMP(index, -1, n - 1) : -1);
    show_selection(stack);
}

int tw_layer_stack_get_selected(TwLayerStack *stack)
{
    return stack->selected;
}

/* The keyboard to the selected card (or the list when there is none), so
 * that after a drop or a move the keys (Delete, Alt+Up, Ctrl+Z) act on the
 * stack and the model, not on a field of the property editor. */
static void focus_selected(TwLayerStack *self)
{
    Card *card = card_at(self, self->selected);
    gtk_widget_grab_focus(card ? card->row : self->list);
}

/* ---- edits ---------------------------------------------------------------- */
/* Edits from the stack's own controls; a refusal goes to the log, since
 * the controls only offer what the doc accepts. */
static void report(GError *error)
{
    if (error)
        g_warning("layer stack: %s", error->message);
    g_clear_error(&error);
}

gboolean tw_layer_stack_drop_class(TwLayerStack *stack, const char *class_name, int position)
{
    if (tw_model_doc_is_graph(stack->doc)) /* the totals line says why */
        return FALSE;
    if (!tw_layer_class_find(class_name))
        return FALSE; /* text dragged from elsewhere (a label's words): not ours to drop */
    GError *error = NULL;
    if (!tw_model_doc_insert(stack->doc, position, class_name, &error)) {
        report(error);
        return FALSE;
    }
    tw_layer_stack_select(stack, position);
    return TRUE;
}

gboolean tw_layer_stack_drop_layer(TwLayerStack *stack, int from, int position)
{
    if (tw_model_doc_is_graph(stack->doc))
        return FALSE;
    GError *error = NULL;
    int to = position > from ? position - 1 : position;
    if (!tw_model_doc_move(stack->doc, from, to, &error)) {
        report(error);
        return FALSE;
    }
    tw_layer_stack_select(stack, to);
    focus_selected(stack);
    return TRUE;
}

static void action_delete(GtkWidget *widget, const char *name, GVariant *param)
{
    TwLayerStack *self = TW_LAYER_STACK(widget);
    if (tw_model_doc_is_graph(self->doc))
        return;
    GError *error = NULL;
    int index = g_variant_get_int32(param);
    if (!tw_model_doc_remove(self->doc, index, &error))
        report(error);
    else
        tw_layer_stack_select(self, MIN(index, (int)self->cards->len - 1));
}

static void action_duplicate(GtkWidget *widget, const char *name, GVariant *param)
{
    TwLayerStack *self = TW_LAYER_STACK(widget);
    if (tw_model_doc_is_graph(self->doc))
        return;
    GError *error = NULL;
    int index = g_variant_get_int32(param);
    if (!tw_model_doc_duplicate(self->doc, index, &error))
        report(error);
    else
        tw_layer_stack_select(self, index + 1);
}

static void move_by(TwLayerStack *self, int index, int delta)
{
    if (tw_model_doc_is_graph(self->doc))
        return;
    int to = index + delta;
    if (to < 0 || to >= (int)self->cards->len)
        return;
    GError *error = NULL;
    if (!tw_model_doc_move(self->doc, index, to, &error)) {
        report(error);
        return;
    }
    tw_layer_stack_select(self, to);
    focus_selected(self);
}

static void action_move_up(GtkWidget *widget, const char *name, GVariant *param)
{
    move_by(TW_LAYER_STACK(widget), g_variant_get_int32(param), -1);
}

static void action_move_down(GtkWidget *widget, const char *name, GVariant *param)
{
    move_by(TW_LAYER_STACK(widget), g_variant_get_int32(param), 1);
}

/* Delete, Alt+Up and Alt+Down act on the selected card while the list has
 * the focus (not while typing in the property editor). */
static gboolean on_key(GtkWidget *widget, GVariant *args, gpointer data)
{
    TwLayerStack *self = TW_LAYER_STACK(gtk_widget_get_ancestor(widget, TW_TYPE_LAYER_STACK));
    const char *action = data;
    if (self->selected < 0)
        return FALSE;
    gtk_widget_activate_action(GTK_WIDGET(self), action, "i", self->selected);
    return TRUE;
}

static void add_key(GtkShortcutController *keys, guint keyval, GdkModifierType mods, const char *action)
{
    gtk_shortcut_controller_add_shortcut(
        keys, gtk_shortcut_new(gtk_keyval_trigger_new(keyval, mods), gtk_callback_action_new(on_key, (gpointer)action, NULL)));
}

/* ---- the context menu ----------------------------------------------------- */
static void add_menu_item(GMenu *menu, const char *label, const char *action, int index)
{
    GMenuItem *item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, action, g_variant_new_int32(index));
    g_menu_append_item(menu, item);
    g_object_unref(item);
}

static void on_right_click(GtkGestureClick *gesture, int n_press, double x, double y, TwLayerStack *self)
{
    GtkWidget *row = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(gesture));
    int index = gtk_list_box_row_get_index(GTK_LIST_BOX_ROW(row));
    tw_layer_stack_select(self, index);
    GMenu *menu = g_menu_new();
    add_menu_item(menu, "Duplicate", "stack.duplicate", index);
    add_menu_item(menu, "Move Up", "stack.move-up", index);
    add_menu_item(menu, "Move Down", "stack.move-down", index);
    add_menu_item(menu, "Delete", "stack.delete", index);
    gtk_popover_menu_set_menu_model(GTK_POPOVER_MENU(self->menu), G_MENU_MODEL(menu));
    g_object_unref(menu);
    double sx, sy;
    gtk_widget_translate_coordinates(row, GTK_WIDGET(self), x, y, &sx, &sy);
    gtk_popover_set_pointing_to(GTK_POPOVER(self->menu), &(GdkRectangle){(int)sx, (int)sy, 1, 1});
    gtk_popover_popup(GTK_POPOVER(self->menu));
}

/* ---- dragging cards and dropping classes ---------------------------------- */
static GdkContentProvider *on_card_drag_prepare(GtkDragSource *source, double x, double y, GtkWidget *row)
{
    return gdk_content_provider_new_typed(G_TYPE_INT, gtk_list_box_row_get_index(GTK_LIST_BOX_ROW(row)));
}

static void on_card_drag_begin(GtkDragSource *source, GdkDrag *drag, GtkWidget *row)
{
    GdkPaintable *icon = gtk_widget_paintable_new(gtk_list_box_row_get_child(GTK_LIST_BOX_ROW(row)));
    gtk_drag_source_set_icon(source, icon, 24, 16);
    g_object_unref(icon);
}

/* The gap a drop at y lands in: before the row under it when in that row's
 * upper half, else after it; below every row, the end. */
static int drop_position(TwLayerStack *self, double y)
{
    GtkListBoxRow *row = gtk_list_box_get_row_at_y(GTK_LIST_BOX(self->list), (int)y);
    if (!row)
        return y < 0 ? 0 : (int)self->cards->len;
    graphene_rect_t bounds;
    if (!gtk_widget_compute_bounds(GTK_WIDGET(row), self->list, &bounds))
        return gtk_list_box_row_get_index(row);
    int index = gtk_list_box_row_get_index(row);
    return y < bounds.origin.y + bounds.size.height / 2 ? index : index + 1;
}

static void clear_drop_mark(TwLayerStack *self)
{
    if (!self->drop_mark)
        return;
    gtk_widget_remove_css_class(self->drop_mark, "drop-before");
    gtk_widget_remove_css_class(self->drop_mark, "drop-after");
    self->drop_mark = NULL;
}

static void show_drop_mark(TwLayerStack *self, int position)
{
    int n = (int)self->cards->len;
    clear_drop_mark(self);
    if (!n)
        return;
    Card *card = card_at(self, MIN(position, n - 1));
    self->drop_mark = card->row;
    gtk_widget_add_css_class(card->row, position < n ? "drop-before" : "drop-after");
}

static GdkDragAction on_drop_motion(GtkDropTarget *target, double x, double y, TwLayerStack *self)
{
    show_drop_mark(self, drop_position(self, y));
    const GValue *value = gtk_drop_target_get_value(target);
    return value && G_VALUE_HOLDS_INT(value) ? GDK_ACTION_MOVE : GDK_ACTION_COPY;
}

static void on_drop_leave(GtkDropTarget *target, TwLayerStack *self)
{
    clear_drop_mark(self);
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y, TwLayerStack *self)
{
    int position = drop_position(self, y);
    gboolean dropped = FALSE;
    clear_drop_mark(self);
    if (G_VALUE_HOLDS_INT(value))
        dropped = tw_layer_stack_drop_layer(self, g_value_get_int(value), position);
    else if (G_VALUE_HOLDS_STRING(value) && g_value_get_string(value))
        dropped = tw_layer_stack_drop_class(self, g_value_get_string(value), position);
    if (dropped && G_VALUE_HOLDS_STRING(value))
        focus_selected(self); /* drop_layer does it for a moved card */
    return dropped;
}

/* A click below the cards takes the focus too (out of a text field), as a
 * click on a card does. */
static void on_background_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TwLayerStack *self)
{
    GtkWidget *scroller = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(gesture));
    double lx, ly;
    if (gtk_widget_translate_coordinates(scroller, self->list, x, y, &lx, &ly) &&
        gtk_list_box_get_row_at_y(GTK_LIST_BOX(self->list), (int)ly))
        return; /* on a card: the list box handles it */
    focus_selected(self);
}

/* ---- cards ---------------------------------------------------------------- */
static GtkWidget *label(const char *css_class, float xalign)
{
    GtkWidget *l = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(l), xalign);
    if (css_class)
        gtk_widget_add_css_class(l, css_class);
    return l;
}

static GtkWidget *card_button(const char *icon, const char *tooltip, const char *action)
{
    GtkWidget *button = gtk_button_new_from_icon_name(icon);
    gtk_widget_add_css_class(button, "flat");
    gtk_widget_add_css_class(button, "card-button");
    gtk_widget_set_tooltip_text(button, tooltip);
    gtk_widget_set_valign(button, GTK_ALIGN_CENTER);
    gtk_actionable_set_action_target(GTK_ACTIONABLE(button), "i", 0); /* the card's index, set by update_card */
    gtk_actionable_set_action_name(GTK_ACTIONABLE(button), action);
    return button;
}

static GtkWidget *hbox(GtkWidget *first, ...)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    va_list ap;
    va_start(ap, first);
    for (GtkWidget *w = first; w; w = va_arg(ap, GtkWidget *))
        gtk_box_append(GTK_BOX(box), w);
    va_end(ap);
    return box;
}

static void add_card_controllers(TwLayerStack *self, GtkWidget *row)
{
    GtkDragSource *source = gtk_drag_source_new();
    gtk_drag_source_set_actions(source, GDK_ACTION_MOVE);
    g_signal_connect(source, "prepare", G_CALLBACK(on_card_drag_prepare), row);
    g_signal_connect(source, "drag-begin", G_CALLBACK(on_card_drag_begin), row);
    gtk_widget_add_controller(row, GTK_EVENT_CONTROLLER(source));

    GtkGesture *click = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), GDK_BUTTON_SECONDARY);
    g_signal_connect_object(click, "pressed", G_CALLBACK(on_right_click), self, 0);
    gtk_widget_add_controller(row, GTK_EVENT_CONTROLLER(click));
}

static Card *card_new(TwLayerStack *self)
{
    Card *c = g_new0(Card, 1);
    c->name = label("layer-name", 0);
    gtk_label_set_ellipsize(GTK_LABEL(c->name), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(c->name, TRUE);
    /* In a narrow stack (an 800-pixel window) these texts end in "…" and
     * the buttons stay; widening the pane shows them whole. */
    c->klass = label("dim-label", 1);
    gtk_label_set_ellipsize(GTK_LABEL(c->klass), PANGO_ELLIPSIZE_END);
    c->duplicate = card_button("edit-copy-symbolic", "Duplicate", "stack.duplicate");
    c->remove = card_button("user-trash-symbolic", "Delete", "stack.delete");
    c->shape = label("layer-shape", 0);
    gtk_label_set_ellipsize(GTK_LABEL(c->shape), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(c->shape, TRUE);
    c->params = label("layer-params", 1);
    gtk_label_set_ellipsize(GTK_LABEL(c->params), PANGO_ELLIPSIZE_END);
    c->tag = label("layer-tag", 1);
    c->message = label("layer-message", 0);
    gtk_label_set_wrap(GTK_LABEL(c->message), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(c->message), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_selectable(GTK_LABEL(c->message), TRUE);

    GtkWidget *body = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_widget_add_css_class(body, "layer-card");
    gtk_box_append(GTK_BOX(body), hbox(c->name, c->klass, c->duplicate, c->remove, NULL));
    gtk_box_append(GTK_BOX(body), hbox(c->shape, c->params, c->tag, NULL));
    gtk_box_append(GTK_BOX(body), c->message);
    c->row = gtk_list_box_row_new();
    gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(c->row), body);
    add_card_controllers(self, c->row);
    return c;
}

static void set_class(GtkWidget *widget, const char *css_class, gboolean on)
{
    if (on)
        gtk_widget_add_css_class(widget, css_class);
    else
        gtk_widget_remove_css_class(widget, css_class);
}

static void params_text(const tw_layer_info *info, char *buf, size_t size)
{
    char count[40], frozen[40];
    int64_t total = info->trainable_params + info->non_trainable_params;
    tw_designer_format_count(total, count, sizeof count);
    tw_designer_format_count(info->non_trainable_params, frozen, sizeof frozen);
    if (!total)
        snprintf(buf, size, "no parameters");
    else if (info->non_trainable_params)
        g_snprintf(buf, size, "%s params (%s non-trainable)", count, frozen);
    else
        snprintf(buf, size, "%s params", count);
}

static void update_card(TwLayerStack *self, int index)
{
    Card *c = card_at(self, index);
    tw_layer *layer = tw_model_doc_layer(self->doc, index);
    const tw_layer_info *info = tw_model_doc_info(self->doc, index);
    int error_index = tw_model_doc_error_index(self->doc);
    /* The first failing layer, or one that cannot run in a valid model. */
    const char *message = index == error_index ? tw_model_doc_error(self->doc)
                                               : tw_model_doc_node_cannot_run(self->doc, index);
    gboolean failing = message != NULL;
    gboolean inferred = info->output.ndim > 0;
    char shape[160] = "—", params[96] = "";
    if (inferred) {
        tw_shape_format(&info->output, shape, sizeof shape);
        params_text(info, params, sizeof params);
    }
    gtk_label_set_text(GTK_LABEL(c->name), tw_layer_name(layer));
    gtk_label_set_text(GTK_LABEL(c->klass), tw_layer_class_of(layer)->name);
    gtk_label_set_text(GTK_LABEL(c->shape), shape);
    gtk_label_set_text(GTK_LABEL(c->params), params);
    gboolean has_params = inferred && info->trainable_params + info->non_trainable_params > 0;
    gtk_label_set_text(GTK_LABEL(c->tag), tw_layer_trainable(layer) ? "trainable" : "frozen");
    gtk_widget_set_visible(c->tag, has_params);
    gtk_label_set_text(GTK_LABEL(c->message), failing ? message : "");
    gtk_widget_set_visible(c->message, failing);
    set_class(c->row, "layer-error", failing);
    set_class(c->row, "layer-unreached", !inferred && !failing);
    gtk_actionable_set_action_target(GTK_ACTIONABLE(c->duplicate), "i", index);
    gtk_actionable_set_action_target(GTK_ACTIONABLE(c->remove), "i", index);
}

static void update_totals(TwLayerStack *self)
{
    int64_t trainable, non_trainable;
    char total_s[40], trainable_s[40], non_trainable_s[40], partial[120] = "", text[300];
    tw_model_doc_totals(self->doc, &trainable, &non_trainable);
    tw_designer_format_count(trainable + non_trainable, total_s, sizeof total_s);
    tw_designer_format_count(trainable, trainable_s, sizeof trainable_s);
    tw_designer_format_count(non_trainable, non_trainable_s, sizeof non_trainable_s);
    int n = tw_model_doc_n_layers(self->doc), error_index = tw_model_doc_error_index(self->doc);
    /* An invalid model's counts stop at the failing layer; say so. */
    if (error_index >= 0 && error_index < n)
        snprintf(partial, sizeof partial, "     (layers above %s only)",
                 tw_layer_name(tw_model_doc_layer(self->doc, error_index)));
    if (tw_model_doc_is_graph(self->doc))
        snprintf(partial, sizeof partial,
                 "\nA graph, not a stack: its layers in call order, edited on the Canvas");
    snprintf(text, sizeof text, "Total params: %s     Trainable: %s     Non-trainable: %s%s", total_s, trainable_s,
             non_trainable_s, partial);
    gtk_label_set_text(GTK_LABEL(self->totals), text);
    /* An empty stack says what to do in its placeholder already. */
    gboolean model_error = n > 0 && error_index == n;
    gtk_label_set_text(GTK_LABEL(self->model_error), model_error ? tw_model_doc_error(self->doc) : "");
    gtk_widget_set_visible(self->model_error, model_error);
}

/* A card about to go that holds the focus (a Tab or a click put it on its
 * row or a button) gives it to the list at once. GTK would keep it on the
 * removed widget until its next frame and only then move it on; meanwhile
 * the row could be freed, and moving the focus from the freed widget into
 * a selectable label then failed a critical in gtk_widget_is_ancestor (the
 * monkey, seed 20261127; tests/test_ui_window.c, delete_focused_card). */
static void give_up_focus(TwLayerStack *self, GtkWidget *row)
{
    GtkRoot *root = gtk_widget_get_root(row);
    GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
    if (focus && (focus == row || gtk_widget_is_ancestor(focus, row)) && !gtk_widget_grab_focus(self->list))
        gtk_root_set_focus(root, NULL);
}

static void refresh(TwLayerStack *self)
{
    int n = tw_model_doc_n_layers(self->doc);
    clear_drop_mark(self);
    while ((int)self->cards->len < n) {
        Card *card = card_new(self);
        g_ptr_array_add(self->cards, card);
        gtk_list_box_append(GTK_LIST_BOX(self->list), card->row);
    }
    while ((int)self->cards->len > n) {
        Card *card = self->cards->pdata[self->cards->len - 1];
        give_up_focus(self, card->row);
        gtk_list_box_remove(GTK_LIST_BOX(self->list), card->row);
        g_ptr_array_remove_index(self->cards, self->cards->len - 1);
    }
    for (int i = 0; i < n; i++)
        update_card(self, i);
    update_totals(self);
    tw_layer_stack_select(self, self->selected < n ? self->selected : n - 1);
}

/* ---- texts for tests ------------------------------------------------------ */
const char *tw_layer_stack_card_text(TwLayerStack *stack, int index, const char *what)
{
    Card *c = card_at(stack, index);
    GtkWidget *l = !c                         ? NULL
                   : !strcmp(what, "name")    ? c->name
                   : !strcmp(what, "class")   ? c->klass
                   : !strcmp(what, "shape")   ? c->shape
                   : !strcmp(what, "params")  ? c->params
                   : !strcmp(what, "tag")     ? c->tag
                   : !strcmp(what, "message") ? c->message
                                              : NULL;
    if (!l || !gtk_widget_get_visible(l))
        return NULL;
    return gtk_label_get_text(GTK_LABEL(l));
}

gboolean tw_layer_stack_card_has_class(TwLayerStack *stack, int index, const char *css_class)
{
    Card *c = card_at(stack, index);
    return c && gtk_widget_has_css_class(c->row, css_class);
}

const char *tw_layer_stack_totals_text(TwLayerStack *stack)
{
    return gtk_label_get_text(GTK_LABEL(stack->totals));
}

/* ---- GObject -------------------------------------------------------------- */
static void tw_layer_stack_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwLayerStack *self = TW_LAYER_STACK(object);
    switch (id) {
    case PROP_DOC:
        self->doc = g_value_dup_object(value);
        break;
    case PROP_SELECTED:
        tw_layer_stack_select(self, g_value_get_int(value));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_layer_stack_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwLayerStack *self = TW_LAYER_STACK(object);
    switch (id) {
    case PROP_DOC:
        g_value_set_object(value, self->doc);
        break;
    case PROP_SELECTED:
        g_value_set_int(value, self->selected);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_layer_stack_constructed(GObject *object)
{
    TwLayerStack *self = TW_LAYER_STACK(object);
    G_OBJECT_CLASS(tw_layer_stack_parent_class)->constructed(object);
    self->changed_id = g_signal_connect_swapped(self->doc, "changed", G_CALLBACK(refresh), self);
    refresh(self);
}

static void tw_layer_stack_dispose(GObject *object)
{
    TwLayerStack *self = TW_LAYER_STACK(object);
    if (self->doc)
        g_clear_signal_handler(&self->changed_id, self->doc);
    g_clear_object(&self->doc);
    g_clear_pointer(&self->menu, gtk_widget_unparent);
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(object))))
        gtk_widget_unparent(child);
    if (self->cards)
        g_ptr_array_set_size(self->cards, 0);
    G_OBJECT_CLASS(tw_layer_stack_parent_class)->dispose(object);
}

static void tw_layer_stack_finalize(GObject *object)
{
    g_ptr_array_unref(TW_LAYER_STACK(object)->cards);
    G_OBJECT_CLASS(tw_layer_stack_parent_class)->finalize(object);
}

static void tw_layer_stack_class_init(TwLayerStackClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->set_property = tw_layer_stack_set_property;
    object_class->get_property = tw_layer_stack_get_property;
    object_class->constructed = tw_layer_stack_constructed;
    object_class->dispose = tw_layer_stack_dispose;
    object_class->finalize = tw_layer_stack_finalize;
    props[PROP_DOC] = g_param_spec_object("doc", NULL, NULL, TW_TYPE_MODEL_DOC,
                                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    props[PROP_SELECTED] = g_param_spec_int("selected", NULL, NULL, -1, G_MAXINT, -1,
                                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BOX_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "layerstack");
    gtk_widget_class_install_action(widget_class, "stack.delete", "i", action_delete);
    gtk_widget_class_install_action(widget_class, "stack.duplicate", "i", action_duplicate);
    gtk_widget_class_install_action(widget_class, "stack.move-up", "i", action_move_up);
    gtk_widget_class_install_action(widget_class, "stack.move-down", "i", action_move_down);
}

static void make_list(TwLayerStack *self)
{
    self->list = gtk_list_box_new();
    gtk_widget_add_css_class(self->list, "layer-stack");
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->list), GTK_SELECTION_SINGLE);
    /* The list box can outlive the stack (GTK keeps a focused widget a
     * while after its window's other widgets went), and it reports its
     * selected row removed as it goes: the stack's handlers go with the
     * stack. */
    g_signal_connect_object(self->list, "row-selected", G_CALLBACK(on_row_selected), self, 0);
    GtkWidget *empty = gtk_label_new("No layers yet.\nDouble-click a layer in the palette, or drag one here.");
    gtk_label_set_justify(GTK_LABEL(empty), GTK_JUSTIFY_CENTER);
    gtk_widget_add_css_class(empty, "dim-label");
    gtk_list_box_set_placeholder(GTK_LIST_BOX(self->list), empty);

    GtkDropTarget *drop = gtk_drop_target_new(G_TYPE_INVALID, GDK_ACTION_COPY | GDK_ACTION_MOVE);
    gtk_drop_target_set_gtypes(drop, (GType[]){G_TYPE_STRING, G_TYPE_INT}, 2);
    gtk_drop_target_set_preload(drop, TRUE);
    g_signal_connect_object(drop, "motion", G_CALLBACK(on_drop_motion), self, 0);
    g_signal_connect_object(drop, "enter", G_CALLBACK(on_drop_motion), self, 0);
    g_signal_connect_object(drop, "leave", G_CALLBACK(on_drop_leave), self, 0);
    g_signal_connect_object(drop, "drop", G_CALLBACK(on_drop), self, 0);
    gtk_widget_add_controller(self->list, GTK_EVENT_CONTROLLER(drop));

    GtkEventController *keys = gtk_shortcut_controller_new();
    add_key(GTK_SHORTCUT_CONTROLLER(keys), GDK_KEY_Delete, 0, "stack.delete");
    add_key(GTK_SHORTCUT_CONTROLLER(keys), GDK_KEY_Up, GDK_ALT_MASK, "stack.move-up");
    add_key(GTK_SHORTCUT_CONTROLLER(keys), GDK_KEY_Down, GDK_ALT_MASK, "stack.move-down");
    gtk_widget_add_controller(self->list, keys);
}

static void tw_layer_stack_init(TwLayerStack *self)
{
    GtkWidget *widget = GTK_WIDGET(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(gtk_widget_get_layout_manager(widget)), GTK_ORIENTATION_VERTICAL);
    self->cards = g_ptr_array_new_with_free_func(g_free);
    self->selected = -1;
    make_list(self);

    GtkWidget *scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), self->list);
    gtk_widget_set_vexpand(scroller, TRUE);
    gtk_widget_set_parent(scroller, widget);
    GtkGesture *background = gtk_gesture_click_new();
    g_signal_connect_object(background, "pressed", G_CALLBACK(on_background_pressed), self, 0);
    gtk_widget_add_controller(scroller, GTK_EVENT_CONTROLLER(background));

    self->model_error = label("model-error", 0);
    gtk_label_set_wrap(GTK_LABEL(self->model_error), TRUE);
    gtk_widget_set_parent(self->model_error, widget);
    self->totals = label("layer-totals", 0);
    gtk_label_set_wrap(GTK_LABEL(self->totals), TRUE);
    gtk_label_set_selectable(GTK_LABEL(self->totals), TRUE);
    gtk_widget_set_parent(self->totals, widget);

    self->menu = gtk_popover_menu_new_from_model(NULL);
    gtk_popover_set_has_arrow(GTK_POPOVER(self->menu), FALSE);
    gtk_widget_set_halign(self->menu, GTK_ALIGN_START);
    gtk_widget_set_parent(self->menu, widget);
}

GtkWidget *tw_layer_stack_new(TwModelDoc *doc)
{
    return g_object_new(TW_TYPE_LAYER_STACK, "doc", doc, NULL);
}
