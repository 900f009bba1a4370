/* TwPropertyEditor (property_editor.h). The fields are built when the
 * shown layer's class (or whether it takes an input shape) changes; on
 * every other change of the doc only their values are written again.
 *
 * A rebuild drops the old fields' widgets, but GTK may still hold one (the
 * window keeps its focus widget until its next frame) and send it signals
 * afterwards. So each Field belongs to its widget (freed with it), a
 * rebuild detaches it (editor = NULL), and every handler of a detached
 * field does nothing. Text typed but not yet committed is committed before
 * any other edit of the doc ("changing"), so a rebuild never loses it. */
#include "property_editor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FIELD_NAME, FIELD_INPUT_SHAPE, FIELD_PARAM } FieldKind;

typedef struct {
    TwPropertyEditor *editor; /* NULL once a rebuild detached the field */
    FieldKind kind;
    const tw_param_def *def; /* FIELD_PARAM */
    const char *key;         /* def->key, "name" or "input_shape" */
    char *default_text;      /* the value of a new layer of the class, as text */
    GtkWidget *widget;       /* what tw_property_editor_field returns */
    GtkWidget *spins[TW_MAX_DIMS]; /* a tuple's elements */
    int nspins;
    GtkWidget *at_default;   /* "default" beside the key while it is */
    GtkWidget *default_note; /* "Keras' default: 32" under the field otherwise */
    GtkWidget *reset, *message;
} Field;

struct _TwPropertyEditor {
    GtkWidget parent_instance;
    TwModelDoc *doc;
    gulong changed_id, changing_id;
    int index;
    const tw_layer_class *shown_class; /* what the fields were built for */
    gboolean shown_input_shape;
    GtkWidget *content;
    GPtrArray *fields;   /* of Field, each owned by its widget */
    gboolean updating;   /* writing values into fields: no commits */
    gboolean committing; /* sending a field's value to the doc */
};

enum { PROP_0, PROP_DOC, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwPropertyEditor, tw_property_editor, GTK_TYPE_WIDGET)

static void field_free(gpointer data)
{
    Field *f = data;
    g_free(f->default_text);
    g_free(f);
}

/* The field's editor, or NULL when a rebuild detached the field or the
 * editor is writing values into the fields. */
static TwPropertyEditor *live_editor(Field *f)
{
    return f->editor && !f->editor->updating ? f->editor : NULL;
}

static tw_layer *shown_layer(TwPropertyEditor *self)
{
    return self->index >= 0 ? tw_model_doc_layer(self->doc, self->index) : NULL;
}

/* ---- values as text ------------------------------------------------------- */
/* "28,28,1" for (None, 28, 28, 1); "" when there is none. */
static char *input_shape_text(const tw_layer *layer)
{
    const tw_shape *shape = tw_layer_input_shape(layer);
    GString *text = g_string_new(NULL);
    for (int i = 1; shape && i < shape->ndim; i++) {
        if (i > 1)
            g_string_append_c(text, ',');
        if (shape->dims[i] < 0)
            g_string_append(text, "None");
        else
            g_string_append_printf(text, "%" G_GINT64_FORMAT, shape->dims[i]);
    }
    return g_string_free(text, FALSE);
}

/* The engine's text of a value, as an entry shows it: None as empty text
 * (the placeholder says None), a penalty without its zero part. */
static char *entry_text(const char *text)
{
    if (!g_ascii_strcasecmp(text, "none"))
        return g_strdup("");
    if (g_str_has_prefix(text, "l1=0,l2=") && strcmp(text, "l1=0,l2=0"))
        return g_strdup(text + strlen("l1=0,"));
    if (g_str_has_prefix(text, "l1=") && g_str_has_suffix(text, ",l2=0") && strcmp(text, "l1=0,l2=0"))
        return g_strndup(text, strlen(text) - strlen(",l2=0"));
    return g_strdup(text);
}

static char *current_text(Field *f, const tw_layer *layer)
{
    if (f->kind == FIELD_NAME)
        return g_strdup(tw_layer_name(layer));
    if (f->kind == FIELD_INPUT_SHAPE)
        return input_shape_text(layer);
    char *text = tw_layer_get_text(layer, f->key);
    char *copy = g_strdup(text ? text : "");
    free(text);
    return copy;
}

static char *format_number(double v, gboolean integer)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(integer ? g_ascii_formatd(buf, sizeof buf, "%.0f", v) : g_ascii_formatd(buf, sizeof buf, "%.9g", v));
}

/* The text a field holds now, in tw_layer_set's form. */
static char *field_text(Field *f)
{
    GtkWidget *w = f->widget;
    if (f->nspins) {
        GString *text = g_string_new(NULL);
        for (int i = 0; i < f->nspins; i++)
            g_string_append_printf(text, "%s%d", i ? "," : "", gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(f->spins[i])));
        return g_string_free(text, FALSE);
    }
    if (GTK_IS_SPIN_BUTTON(w))
        return format_number(gtk_spin_button_get_value(GTK_SPIN_BUTTON(w)), f->def->type == TW_PARAM_INT);
    if (GTK_IS_SWITCH(w))
        return g_strdup(gtk_switch_get_active(GTK_SWITCH(w)) ? "true" : "false");
    if (GTK_IS_DROP_DOWN(w)) {
        GtkStringObject *item = gtk_drop_down_get_selected_item(GTK_DROP_DOWN(w));
        const char *s = item ? gtk_string_object_get_string(item) : "";
        return g_strdup(!strcmp(s, "None") ? "none" : s);
    }
    return g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(w))));
}

/* ---- writing values into the fields --------------------------------------- */
static void show_drop_down_value(GtkDropDown *drop, const char *text)
{
    GListModel *items = gtk_drop_down_get_model(drop);
    const char *want = !g_ascii_strcasecmp(text, "none") ? "None" : text;
    for (guint i = 0; i < g_list_model_get_n_items(items); i++)
        if (!strcmp(gtk_string_list_get_string(GTK_STRING_LIST(items), i), want)) {
            gtk_drop_down_set_selected(drop, i);
            return;
        }
}

static void show_value(Field *f, const char *text)
{
    GtkWidget *w = f->widget;
    if (f->nspins) {
        char **parts = g_strsplit(text, ",", -1);
        for (int i = 0; i < f->nspins && parts[i]; i++)
            gtk_spin_button_set_value(GTK_SPIN_BUTTON(f->spins[i]), g_ascii_strtod(parts[i], NULL));
        g_strfreev(parts);
    } else if (GTK_IS_SPIN_BUTTON(w)) {
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), g_ascii_strtod(text, NULL));
    } else if (GTK_IS_SWITCH(w)) {
        gtk_switch_set_active(GTK_SWITCH(w), !strcmp(text, "true"));
    } else if (GTK_IS_DROP_DOWN(w)) {
        show_drop_down_value(GTK_DROP_DOWN(w), text);
    } else {
        char *shown = f->kind == FIELD_PARAM ? entry_text(text) : g_strdup(text);
        if (strcmp(gtk_editable_get_text(GTK_EDITABLE(w)), shown))
            gtk_editable_set_text(GTK_EDITABLE(w), shown);
        g_free(shown);
    }
}

/* At the default: "default" beside the key. Otherwise the default under
 * the field and the reset button, hidden by transparency when not wanted so
 * that the line keeps its height. */
static void show_default_state(Field *f, gboolean differs)
{
    gtk_widget_set_visible(f->at_default, !differs);
    gtk_widget_set_visible(f->default_note, differs);
    gtk_widget_set_opacity(f->reset, differs ? 1 : 0);
    gtk_widget_set_sensitive(f->reset, differs);
    gtk_widget_set_can_target(f->reset, differs);
}

static void load_values(TwPropertyEditor *self)
{
    tw_layer *layer = shown_layer(self);
    if (!layer)
        return;
    self->updating = TRUE;
    for (guint i = 0; i < self->fields->len; i++) {
        Field *f = self->fields->pdata[i];
        char *text = current_text(f, layer);
        show_value(f, text);
        if (f->default_text)
            show_default_state(f, strcmp(text, f->default_text) != 0);
        g_free(text);
    }
    self->updating = FALSE;
}

/* ---- committing edits ----------------------------------------------------- */
static void show_message(Field *f, const char *message)
{
    gtk_label_set_text(GTK_LABEL(f->message), message ? message : "");
    gtk_widget_set_visible(f->message, message != NULL);
    if (message)
        gtk_widget_add_css_class(f->widget, "error");
    else
        gtk_widget_remove_css_class(f->widget, "error");
}

static gboolean apply(Field *f, const char *text, GError **error)
{
    TwPropertyEditor *self = f->editor;
    if (f->kind == FIELD_NAME)
        return tw_model_doc_rename_layer(self->doc, self->index, text, error);
    if (f->kind == FIELD_INPUT_SHAPE)
        return tw_model_doc_set_input_shape(self->doc, self->index, text, error);
    return tw_model_doc_set_param(self->doc, self->index, f->key, text, error);
}

/* Send text to the doc; a refusal leaves the old value in the field and
 * the engine's message under it. The doc's "changed" may rebuild the
 * editor meanwhile: the widget is held so that f stays readable, and a
 * detached f is left alone. */
static void commit_text(Field *f, const char *text)
{
    TwPropertyEditor *self = live_editor(f);
    if (!self || self->committing || !shown_layer(self))
        return;
    GError *error = NULL;
    GtkWidget *widget = g_object_ref(f->widget);
    self->committing = TRUE;
    gboolean ok = apply(f, text, &error);
    self->committing = FALSE;
    if (f->editor) {
        show_message(f, ok ? NULL : error->message);
        if (!ok)
            load_values(self);
    }
    g_clear_error(&error);
    g_object_unref(widget);
}

static void commit(Field *f)
{
    if (!live_editor(f))
        return;
    char *text = field_text(f);
    commit_text(f, text);
    g_free(text);
}

/* Whether a spin button shows text typed and not yet taken as its value. */
static gboolean spin_typed(GtkWidget *spin)
{
    const char *text = gtk_editable_get_text(GTK_EDITABLE(spin));
    char *end;
    double typed = g_ascii_strtod(text, &end), value = gtk_spin_button_get_value(GTK_SPIN_BUTTON(spin));
    /* The shown text rounds floats to 6 digits (on_float_output). */
    return end == text || *end || fabs(typed - value) > 1e-6 * MAX(1.0, fabs(value));
}

/* Whether a field holds text typed and not yet committed: an entry's text
 * that differs from the layer's value, a spin button's text that is not
 * its value. */
static gboolean field_changed(Field *f)
{
    tw_layer *layer = live_editor(f) ? shown_layer(f->editor) : NULL;
    if (!layer)
        return FALSE;
    for (int i = 0; i < f->nspins; i++)
        if (spin_typed(f->spins[i]))
            return TRUE;
    if (GTK_IS_SPIN_BUTTON(f->widget))
        return spin_typed(f->widget);
    if (!GTK_IS_ENTRY(f->widget))
        return FALSE;
    char *now = current_text(f, layer), *shown = f->kind == FIELD_PARAM ? entry_text(now) : g_strdup(now);
    char *text = field_text(f);
    gboolean changed = strcmp(text, shown) != 0;
    g_free(text);
    g_free(shown);
    g_free(now);
    return changed;
}

/* An entry commits on Enter and when the focus leaves it, if it changed;
 * so does typed text in a spin button, which GTK takes on focus-out. */
static void commit_if_changed(Field *f)
{
    if (!field_changed(f))
        return;
    if (!f->nspins && !GTK_IS_SPIN_BUTTON(f->widget)) {
        commit(f);
        return;
    }
    /* A spin button takes its text as its value, and commits on value-changed. */
    for (int i = 0; i < f->nspins; i++)
        gtk_spin_button_update(GTK_SPIN_BUTTON(f->spins[i]));
    if (!f->nspins)
        gtk_spin_button_update(GTK_SPIN_BUTTON(f->widget));
}

static void on_reset(GtkButton *button, Field *f)
{
    commit_text(f, f->default_text);
}

/* ---- building the fields -------------------------------------------------- */
static GtkWidget *make_spin(double min, double max, gboolean integer, double step)
{
    GtkWidget *spin = gtk_spin_button_new_with_range(min, max, step);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(spin), integer ? 0 : 6);
    gtk_spin_button_set_numeric(GTK_SPIN_BUTTON(spin), FALSE);
    gtk_editable_set_width_chars(GTK_EDITABLE(spin), integer ? 5 : 8);
    gtk_widget_set_hexpand(spin, TRUE);
    return spin;
}

/* Floats show as few digits as they need ("0.001", not "0.001000"). */
static gboolean on_float_output(GtkSpinButton *spin, gpointer data)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.6g", gtk_spin_button_get_value(spin));
    if (strcmp(gtk_editable_get_text(GTK_EDITABLE(spin)), buf))
        gtk_editable_set_text(GTK_EDITABLE(spin), buf);
    return TRUE;
}

/* A step of the value's own order of magnitude: 0.1 for 0.5, 0.001 for 0.001. */
static double float_step(const tw_param_def *def)
{
    double v = fabs(g_ascii_strtod(def->default_value, NULL));
    return v > 0 && v < 1 ? pow(10, floor(log10(v))) : 0.1;
}

static GtkWidget *make_entry(Field *f, const char *placeholder)
{
    GtkWidget *entry = gtk_entry_new();
    gtk_entry_set_placeholder_text(GTK_ENTRY(entry), placeholder);
    gtk_widget_set_hexpand(entry, TRUE);
    g_signal_connect_swapped(entry, "activate", G_CALLBACK(commit_if_changed), f);
    GtkEventController *focus = gtk_event_controller_focus_new();
    g_signal_connect_swapped(focus, "leave", G_CALLBACK(commit_if_changed), f);
    gtk_widget_add_controller(entry, focus);
    return entry;
}

static GtkWidget *make_tuple(Field *f)
{
    const tw_param_def *def = f->def;
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    gtk_widget_add_css_class(box, "linked-tuple");
    f->nspins = def->length;
    for (int i = 0; i < def->length; i++) {
        f->spins[i] = make_spin(def->min, def->max, TRUE, 1);
        g_signal_connect_swapped(f->spins[i], "value-changed", G_CALLBACK(commit), f);
        gtk_box_append(GTK_BOX(box), f->spins[i]);
    }
    return box;
}

static GtkWidget *make_choice(Field *f)
{
    GtkStringList *items = gtk_string_list_new((const char *const *)f->def->choices);
    if (f->def->nullable)
        gtk_string_list_append(items, "None");
    GtkWidget *drop = gtk_drop_down_new(G_LIST_MODEL(items), NULL);
    gtk_widget_set_hexpand(drop, TRUE);
    g_signal_connect_swapped(drop, "notify::selected", G_CALLBACK(commit), f);
    return drop;
}

static GtkWidget *make_number(Field *f)
{
    const tw_param_def *def = f->def;
    gboolean integer = def->type == TW_PARAM_INT;
    GtkWidget *spin = make_spin(def->min, def->max, integer, integer ? 1 : float_step(def));
    if (!integer)
        g_signal_connect(spin, "output", G_CALLBACK(on_float_output), NULL);
    g_signal_connect_swapped(spin, "value-changed", G_CALLBACK(commit), f);
    return spin;
}

/* The widget for a parameter's type (see property_editor.h). */
static GtkWidget *make_param_widget(Field *f)
{
    const tw_param_def *def = f->def;
    switch (def->type) {
    case TW_PARAM_INT:
    case TW_PARAM_FLOAT:
        return def->nullable ? make_entry(f, "None") : make_number(f);
    case TW_PARAM_BOOL: {
        GtkWidget *sw = gtk_switch_new();
        gtk_widget_set_halign(sw, GTK_ALIGN_START);
        g_signal_connect_swapped(sw, "notify::active", G_CALLBACK(commit), f);
        return sw;
    }
    case TW_PARAM_CHOICE:
        return make_choice(f);
    case TW_PARAM_INTS:
        if (def->length >= 1 && def->length <= 3 && !def->nullable)
            return make_tuple(f);
        return make_entry(f, def->nullable ? "None" : "e.g. 3,3");
    case TW_PARAM_REGULARIZER:
        return make_entry(f, "None (e.g. l2=0.01)");
    case TW_PARAM_FLOATS:
        return make_entry(f, def->nullable ? "None (e.g. 0.5,0.25)" : "e.g. 0.5,0.25");
    }
    return make_entry(f, "");
}

static GtkWidget *caption_label(const char *text, const char *css_class)
{
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(l), PANGO_WRAP_WORD_CHAR);
    if (css_class)
        gtk_widget_add_css_class(l, css_class);
    return l;
}

/* The first line's "default" mark and reset button, and the note of
 * Keras' default under the field. */
static void add_default(Field *f, GtkWidget *top)
{
    char *shown = entry_text(f->default_text);
    const char *value = shown[0] ? shown : "None";
    f->at_default = caption_label("default", "dim-label");
    gtk_widget_add_css_class(f->at_default, "caption");
    gtk_widget_set_valign(f->at_default, GTK_ALIGN_CENTER);
    gtk_widget_set_tooltip_text(f->at_default, "Keras' default value");
    gtk_box_append(GTK_BOX(top), f->at_default);
    f->reset = gtk_button_new_from_icon_name("edit-undo-symbolic");
    char *tip = g_strdup_printf("Reset to Keras' default (%s)", value);
    gtk_widget_set_tooltip_text(f->reset, tip);
    gtk_widget_add_css_class(f->reset, "flat");
    gtk_widget_add_css_class(f->reset, "property-reset");
    g_signal_connect(f->reset, "clicked", G_CALLBACK(on_reset), f);
    gtk_box_append(GTK_BOX(top), f->reset);
    char *note = g_strdup_printf("Keras' default: %s", value);
    f->default_note = caption_label(note, "dim-label");
    gtk_widget_add_css_class(f->default_note, "caption");
    g_free(note);
    g_free(tip);
    g_free(shown);
}

/* One property: its key (with the help as tooltip) and the default mark or
 * reset button on the first line, the field, Keras' default when the value
 * differs, then the message line. */
static void add_field(TwPropertyEditor *self, Field *f, const char *title, const char *help)
{
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *key = caption_label(title, "property-key");
    /* One line, ellipsized: GTK 4.8 measures a wrapped and ellipsized label
     * shorter than the ellipsis ("n", RepeatVector's key) as narrower than
     * its least width, and warns. */
    gtk_label_set_wrap(GTK_LABEL(key), FALSE);
    gtk_label_set_ellipsize(GTK_LABEL(key), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(key, TRUE);
    gtk_widget_set_valign(key, GTK_ALIGN_CENTER);
    gtk_box_append(GTK_BOX(top), key);
    if (f->default_text)
        add_default(f, top);
    if (help) {
        gtk_widget_set_tooltip_text(key, help);
        gtk_widget_set_tooltip_text(f->widget, help);
    }
    f->message = caption_label("", "property-message");
    gtk_widget_set_visible(f->message, FALSE);

    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 3);
    gtk_widget_add_css_class(box, "property");
    gtk_box_append(GTK_BOX(box), top);
    gtk_box_append(GTK_BOX(box), f->widget);
    if (f->default_note)
        gtk_box_append(GTK_BOX(box), f->default_note);
    gtk_box_append(GTK_BOX(box), f->message);
    gtk_box_append(GTK_BOX(self->content), box);
    g_object_set_data_full(G_OBJECT(f->widget), "tw-field", f, field_free);
    g_ptr_array_add(self->fields, f);
}

static Field *field_new(TwPropertyEditor *self, FieldKind kind, const char *key)
{
    Field *f = g_new0(Field, 1);
    f->editor = self;
    f->kind = kind;
    f->key = key;
    return f;
}

static void add_param(TwPropertyEditor *self, const tw_param_def *def, const tw_layer *fresh)
{
    Field *f = field_new(self, FIELD_PARAM, def->key);
    f->def = def;
    char *text = tw_layer_get_text(fresh, def->key);
    f->default_text = g_strdup(text ? text : def->default_value);
    free(text);
    f->widget = make_param_widget(f);
    add_field(self, f, def->key, def->help);
}

static void add_header(TwPropertyEditor *self, const tw_layer_class *klass)
{
    GtkWidget *title = caption_label(klass->name, "title-4");
    gtk_box_append(GTK_BOX(self->content), title);
    if (klass->summary)
        gtk_box_append(GTK_BOX(self->content), caption_label(klass->summary, "dim-label"));
}

static gboolean takes_input_shape(TwPropertyEditor *self, const tw_layer *layer)
{
    return self->index == 0 || !strcmp(tw_layer_class_of(layer)->name, "InputLayer");
}

/* The field holding the window's focus, or NULL. */
static Field *focused_field(TwPropertyEditor *self)
{
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
    for (guint i = 0; focus && i < self->fields->len; i++) {
        Field *f = self->fields->pdata[i];
        if (focus == f->widget || gtk_widget_is_ancestor(focus, f->widget))
            return f;
    }
    return NULL;
}

/* Detach the fields and drop their widgets. A focused field gives the
 * focus up first, at once: GTK would otherwise keep it on the dropped
 * widget until the next frame and then move it to the first new field.
 * Returns the key of the field that had the focus (or NULL). */
static const char *clear_fields(TwPropertyEditor *self)
{
    Field *focused = focused_field(self);
    const char *focused_key = focused ? focused->key : NULL;
    self->updating = TRUE; /* focus leaving a dying entry commits nothing */
    if (focused)
        gtk_root_set_focus(gtk_widget_get_root(GTK_WIDGET(self)), NULL);
    for (guint i = 0; i < self->fields->len; i++)
        ((Field *)self->fields->pdata[i])->editor = NULL;
    g_ptr_array_set_size(self->fields, 0);
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->content)))
        gtk_box_remove(GTK_BOX(self->content), child);
    self->updating = FALSE;
    return focused_key;
}

static Field *find_field(TwPropertyEditor *editor, const char *key);

/* A rebuild by an edit while the user is in a field (an undo changing the
 * layer's class) keeps the keyboard in the same field of the new layer
 * when it has one. Not one for another selection: whatever chose the layer
 * (a click or drop on the stack) has the focus then. */
static void refocus(TwPropertyEditor *self, const char *key)
{
    Field *f = key ? find_field(self, key) : NULL;
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    if (f && root && !gtk_root_get_focus(root))
        gtk_widget_grab_focus(f->nspins ? f->spins[0] : f->widget);
}

static void build_fields(TwPropertyEditor *self);

static void rebuild(TwPropertyEditor *self, gboolean keep_focus)
{
    /* A static string: "name", "input_shape" or a parameter definition's key. */
    const char *focused_key = clear_fields(self);
    build_fields(self);
    if (keep_focus)
        refocus(self, focused_key);
}

static void build_fields(TwPropertyEditor *self)
{
    tw_layer *layer = shown_layer(self);
    self->shown_class = layer ? tw_layer_class_of(layer) : NULL;
    self->shown_input_shape = layer && takes_input_shape(self, layer);
    if (!layer) {
        GtkWidget *empty = caption_label("Select a layer in the stack to see and edit its settings.", "dim-label");
        gtk_label_set_justify(GTK_LABEL(empty), GTK_JUSTIFY_CENTER);
        gtk_widget_set_vexpand(empty, TRUE);
        gtk_box_append(GTK_BOX(self->content), empty);
        return;
    }
    add_header(self, self->shown_class);
    Field *name = field_new(self, FIELD_NAME, "name");
    name->widget = make_entry(name, "a unique name");
    add_field(self, name, "name", "The layer's name, unique in the model");
    if (self->shown_input_shape) {
        Field *shape = field_new(self, FIELD_INPUT_SHAPE, "input_shape");
        shape->widget = make_entry(shape, "e.g. 28,28,1");
        add_field(self, shape, "input_shape",
                  "The shape of one example, without the batch axis: 28,28,1 for 28x28 grey images; None for "
                  "an unknown size");
    }
    tw_layer *fresh = tw_layer_new(self->shown_class->name, "default");
    for (int i = 0; fresh && i < self->shown_class->nparams; i++)
        add_param(self, &self->shown_class->params[i], fresh);
    tw_layer_unref(fresh);
    load_values(self);
}

/* ---- following the doc ---------------------------------------------------- */
static void on_doc_changed(TwPropertyEditor *self)
{
    if (self->index >= tw_model_doc_n_layers(self->doc))
        self->index = -1;
    tw_layer *layer = shown_layer(self);
    if (!layer || tw_layer_class_of(layer) != self->shown_class ||
        takes_input_shape(self, layer) != self->shown_input_shape)
        rebuild(self, TRUE);
    else
        load_values(self);
}

/* Typing in an entry and then choosing another layer, or editing the
 * model elsewhere, keeps what was typed: it is committed first (when the
 * selection or the model changes before the focus leaves the entry). */
static void flush_focused_entry(TwPropertyEditor *self)
{
    Field *f = self->committing ? NULL : focused_field(self);
    if (f)
        commit_if_changed(f);
}

void tw_property_editor_set_index(TwPropertyEditor *editor, int index)
{
    if (index == editor->index && editor->shown_class)
        return;
    flush_focused_entry(editor);
    editor->index = index >= 0 && index < tw_model_doc_n_layers(editor->doc) ? index : -1;
    rebuild(editor, FALSE);
}

int tw_property_editor_get_index(TwPropertyEditor *editor)
{
    return editor->index;
}

gboolean tw_property_editor_editing(TwPropertyEditor *editor)
{
    Field *f = focused_field(editor);
    return f && field_changed(f);
}

static Field *find_field(TwPropertyEditor *editor, const char *key)
{
    for (guint i = 0; i < editor->fields->len; i++) {
        Field *f = editor->fields->pdata[i];
        if (!strcmp(f->key, key))
            return f;
    }
    return NULL;
}

GtkWidget *tw_property_editor_field(TwPropertyEditor *editor, const char *key)
{
    Field *f = find_field(editor, key);
    return f ? f->widget : NULL;
}

const char *tw_property_editor_message(TwPropertyEditor *editor, const char *key)
{
    Field *f = find_field(editor, key);
    return f && gtk_widget_get_visible(f->message) ? gtk_label_get_text(GTK_LABEL(f->message)) : NULL;
}

gboolean tw_property_editor_reset(TwPropertyEditor *editor, const char *key)
{
    Field *f = find_field(editor, key);
    if (!f || !f->reset || !gtk_widget_get_sensitive(f->reset))
        return FALSE;
    g_signal_emit_by_name(f->reset, "clicked");
    return TRUE;
}

/* ---- GObject -------------------------------------------------------------- */
static void tw_property_editor_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        TW_PROPERTY_EDITOR(object)->doc = g_value_dup_object(value);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_property_editor_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_DOC)
        g_value_set_object(value, TW_PROPERTY_EDITOR(object)->doc);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_property_editor_constructed(GObject *object)
{
    TwPropertyEditor *self = TW_PROPERTY_EDITOR(object);
    G_OBJECT_CLASS(tw_property_editor_parent_class)->constructed(object);
    self->changed_id = g_signal_connect_swapped(self->doc, "changed", G_CALLBACK(on_doc_changed), self);
    self->changing_id = g_signal_connect_swapped(self->doc, "changing", G_CALLBACK(flush_focused_entry), self);
    rebuild(self, FALSE);
}

static void tw_property_editor_dispose(GObject *object)
{
    TwPropertyEditor *self = TW_PROPERTY_EDITOR(object);
    if (self->doc) {
        g_clear_signal_handler(&self->changed_id, self->doc);
        g_clear_signal_handler(&self->changing_id, self->doc);
    }
    self->updating = TRUE;
    for (guint i = 0; self->fields && i < self->fields->len; i++)
        ((Field *)self->fields->pdata[i])->editor = NULL;
    if (self->fields)
        g_ptr_array_set_size(self->fields, 0);
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(object))))
        gtk_widget_unparent(child);
    g_clear_object(&self->doc);
    G_OBJECT_CLASS(tw_property_editor_parent_class)->dispose(object);
}

static void tw_property_editor_finalize(GObject *object)
{
    g_ptr_array_unref(TW_PROPERTY_EDITOR(object)->fields);
    G_OBJECT_CLASS(tw_property_editor_parent_class)->finalize(object);
}

static void tw_property_editor_class_init(TwPropertyEditorClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->set_property = tw_property_editor_set_property;
    object_class->get_property = tw_property_editor_get_property;
    object_class->constructed = tw_property_editor_constructed;
    object_class->dispose = tw_property_editor_dispose;
    object_class->finalize = tw_property_editor_finalize;
    props[PROP_DOC] = g_param_spec_object("doc", NULL, NULL, TW_TYPE_MODEL_DOC,
                                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "propertyeditor");
}

static void tw_property_editor_init(TwPropertyEditor *self)
{
    self->index = -1;
    self->fields = g_ptr_array_new();
    self->content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10);
    gtk_widget_add_css_class(self->content, "property-editor");
    GtkWidget *scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_AUTOMATIC, GTK_POLICY_AUTOMATIC);
    /* Asks for 280 pixels (its share of a 1280-pixel window) and makes do
     * with fewer (the designer's panes give way in a narrow window): a
     * layer's widest field (a pair of spin buttons, 252 px) scrolls
     * sideways below 280 rather than widening an 800-pixel window. */
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(scroller), TRUE);
    gtk_scrolled_window_set_min_content_width(GTK_SCROLLED_WINDOW(scroller), 140);
    gtk_scrolled_window_set_max_content_width(GTK_SCROLLED_WINDOW(scroller), 280);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), self->content);
    gtk_widget_set_parent(scroller, GTK_WIDGET(self));
}

GtkWidget *tw_property_editor_new(TwModelDoc *doc)
{
    return g_object_new(TW_TYPE_PROPERTY_EDITOR, "doc", doc, NULL);
}
