/* TwSweepDialog (see sweep_dialog.h): the sweep's form and its queue. */
#include "sweep_dialog.h"

#include <string.h>

#include <tw/layers.h>

#include "sweep_trial.h"

#define SWEEP_CSS "/io/github/twb/Workbench/sweep.css"

/* The swept settings: the field's name after "sweep-", its label, and a hint. */
static const struct {
    const char *setting, *label, *hint;
} fields[] = {
    {"learning-rate", "Learning rate", "1e-3,3e-3,1e-2  or  1e-4:1e-2 (random)"},
    {"batch-size", "Batch size", "32,64  or  16:128 (random)"},
    {"optimizer", "Optimizer", "sgd,adam"},
    {"epochs", "Epochs", "2,5"},
    {"seed", "Seed", "1,2,3"},
};
#define N_FIELDS G_N_ELEMENTS(fields)

struct _TwSweepDialog {
    GtkWindow parent_instance;
    GtkWidget *entries[N_FIELDS];
    GtkWidget *search, *trials, *name, *median_stop, *parallel, *error, *counts, *list;
    GtkWidget *layer_box; /* the layer property rows, then Add */
    GPtrArray *rows;      /* layer_row *, in order */
    /* The layer drop-downs' choices after "None": the model's layers with
     * numeric properties, and each one's properties (GStrv). */
    GPtrArray *layer_names, *layer_properties;
    GListModel *queue;
};

G_DEFINE_FINAL_TYPE(TwSweepDialog, tw_sweep_dialog, GTK_TYPE_WINDOW)

enum { SIGNAL_START, SIGNAL_CANCEL_TRIAL, SIGNAL_CANCEL_ALL, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The queue's colours, once per display (a program without the window's
 * resources, none). */
static void load_css(GtkWidget *widget)
{
    GdkDisplay *display = gtk_widget_get_display(widget);
    if (g_object_get_data(G_OBJECT(display), "tw-sweep-css") ||
        !g_resources_get_info(SWEEP_CSS, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL))
        return;
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(provider, SWEEP_CSS);
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_set_data_full(G_OBJECT(display), "tw-sweep-css", provider, g_object_unref);
}

/* ---- the queue ------------------------------------------------------------ */
/* "2 pending · 1 running · 1 finished · 0 failed" (stopped and cancelled
 * only when there are some). */
static void update_counts(TwSweepDialog *self)
{
    int count[TW_SWEEP_TRIAL_CANCELLED + 1] = {0};
    guint n = self->queue ? g_list_model_get_n_items(self->queue) : 0;
    for (guint i = 0; i < n; i++) {
        TwSweepTrial *t = g_list_model_get_item(self->queue, i);
        count[tw_sweep_trial_status(t)]++;
        g_object_unref(t);
    }
    GString *text = g_string_new(NULL);
    if (!n)
        g_string_append(text, "No trials yet");
    else
        g_string_append_printf(text, "%d pending · %d running · %d finished · %d failed", count[TW_SWEEP_TRIAL_PENDING],
                               count[TW_SWEEP_TRIAL_RUNNING], count[TW_SWEEP_TRIAL_FINISHED],
                               count[TW_SWEEP_TRIAL_FAILED]);
    if (count[TW_SWEEP_TRIAL_STOPPED])
        g_string_append_printf(text, " · %d stopped", count[TW_SWEEP_TRIAL_STOPPED]);
    if (count[TW_SWEEP_TRIAL_CANCELLED])
        g_string_append_printf(text, " · %d cancelled", count[TW_SWEEP_TRIAL_CANCELLED]);
    gtk_label_set_text(GTK_LABEL(self->counts), text->str);
    g_string_free(text, TRUE);
}

static void show_trial_status(GtkWidget *row, GParamSpec *pspec, TwSweepTrial *trial)
{
    GtkWidget *status = g_object_get_data(G_OBJECT(row), "status");
    GtkWidget *cancel = g_object_get_data(G_OBJECT(row), "cancel");
    TwSweepTrialStatus s = tw_sweep_trial_status(trial);
    const char *reason = tw_sweep_trial_reason(trial);
    char *text = reason ? g_strdup_printf("%s: %s", tw_sweep_trial_status_name(s), reason)
                        : g_strdup(tw_sweep_trial_status_name(s));
    gtk_label_set_text(GTK_LABEL(status), text);
    gtk_widget_set_tooltip_text(status, text);
    g_free(text);
    /* the status's own class, coloured by resources/sweep.css */
    for (int k = TW_SWEEP_TRIAL_PENDING; k <= TW_SWEEP_TRIAL_CANCELLED; k++)
        gtk_widget_remove_css_class(status, tw_sweep_trial_status_name((TwSweepTrialStatus)k));
    gtk_widget_add_css_class(status, tw_sweep_trial_status_name(s));
    if (s == TW_SWEEP_TRIAL_PENDING || s == TW_SWEEP_TRIAL_CANCELLED)
        gtk_widget_add_css_class(status, "dim-label");
    else
        gtk_widget_remove_css_class(status, "dim-label");
    gtk_widget_set_sensitive(cancel, tw_sweep_trial_is_open(trial));
    GtkWidget *dialog = gtk_widget_get_ancestor(row, TW_TYPE_SWEEP_DIALOG);
    if (dialog)
        update_counts(TW_SWEEP_DIALOG(dialog));
}

/* The trial: the row's, when the row's Cancel is clicked. */
static void on_cancel_clicked(GtkButton *button, TwSweepTrial *trial)
{
    GtkWidget *dialog = gtk_widget_get_ancestor(GTK_WIDGET(button), TW_TYPE_SWEEP_DIALOG);
    if (dialog)
        g_signal_emit(dialog, signals[SIGNAL_CANCEL_TRIAL], 0, trial);
}

static GtkWidget *create_row(gpointer item, gpointer data)
{
    TwSweepTrial *trial = item;
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_widget_set_margin_start(box, 6);
    gtk_widget_set_margin_end(box, 6);
    gtk_widget_set_margin_top(box, 3);
    gtk_widget_set_margin_bottom(box, 3);
    GtkWidget *name = gtk_label_new(tw_sweep_trial_run_name(trial));
    gtk_label_set_xalign(GTK_LABEL(name), 0);
    gtk_label_set_width_chars(GTK_LABEL(name), 18);
    gtk_widget_add_css_class(name, "heading");
    GtkWidget *values = gtk_label_new(tw_sweep_trial_values(trial));
    gtk_label_set_xalign(GTK_LABEL(values), 0);
    /* one width for every row, so the statuses line up */
    gtk_label_set_width_chars(GTK_LABEL(values), 36);
    gtk_label_set_max_width_chars(GTK_LABEL(values), 36);
    gtk_label_set_ellipsize(GTK_LABEL(values), PANGO_ELLIPSIZE_END);
    gtk_widget_set_tooltip_text(values, tw_sweep_trial_values(trial));
    gtk_widget_add_css_class(values, "numeric");
    GtkWidget *status = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(status), 0);
    gtk_label_set_ellipsize(GTK_LABEL(status), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(status, TRUE);
    gtk_widget_set_name(status, "status");
    gtk_widget_add_css_class(status, "trial-status");
    GtkWidget *cancel = gtk_button_new_with_label("Cancel");
    gtk_widget_set_name(cancel, "cancel");
    gtk_widget_set_tooltip_text(cancel, "A pending trial does not run; a running one stops after its step");
    g_signal_connect_object(cancel, "clicked", G_CALLBACK(on_cancel_clicked), trial, 0);
    gtk_box_append(GTK_BOX(box), name);
    gtk_box_append(GTK_BOX(box), values);
    gtk_box_append(GTK_BOX(box), status);
    gtk_box_append(GTK_BOX(box), cancel);
    GtkWidget *row = gtk_list_box_row_new();
    gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), FALSE);
    g_object_set_data(G_OBJECT(row), "status", status);
    g_object_set_data(G_OBJECT(row), "cancel", cancel);
    show_trial_status(row, NULL, trial);
    g_signal_connect_object(trial, "notify::status", G_CALLBACK(show_trial_status), row, G_CONNECT_SWAPPED);
    return row;
}

static void on_items_changed(TwSweepDialog *self)
{
    update_counts(self);
}

/* ---- the layer properties ------------------------------------------------------ */
/* One layer property row: a layer, one of its numeric properties, the
 * values; rows after the first have a Remove button. */
typedef struct {
    GtkWidget *box, *layer, *property, *values, *remove;
} layer_row;

/* The row's chosen layer's index in layer_names, or -1 for None. */
static int chosen_layer(TwSweepDialog *self, const layer_row *row)
{
    guint i = gtk_drop_down_get_selected(GTK_DROP_DOWN(row->layer));
    return i == GTK_INVALID_LIST_POSITION || i == 0 || !self->layer_names || i > self->layer_names->len ? -1
                                                                                                       : (int)i - 1;
}

/* The chosen layer's numeric properties in the row's second drop-down,
 * keeping the one chosen before when the layer has it. */
static void fill_properties(TwSweepDialog *self, layer_row *row, const char *keep)
{
    int layer = chosen_layer(self, row);
    const char *const *keys = layer >= 0 ? g_ptr_array_index(self->layer_properties, layer) : NULL;
    GtkStringList *list = gtk_string_list_new(keys);
    guint selected = 0;
    for (guint i = 0; keys && keys[i]; i++)
        if (!g_strcmp0(keys[i], keep))
            selected = i;
    gtk_drop_down_set_model(GTK_DROP_DOWN(row->property), G_LIST_MODEL(list));
    g_object_unref(list);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(row->property), selected);
    gtk_widget_set_visible(row->property, layer >= 0); /* empty, it would read "(None)" */
    gtk_widget_set_sensitive(row->values, layer >= 0);
}

static void on_layer_changed(GtkDropDown *down, GParamSpec *pspec, TwSweepDialog *self)
{
    fill_properties(self, g_object_get_data(G_OBJECT(down), "row"), NULL);
}

static const char *chosen_property(const layer_row *row)
{
    GtkStringObject *item = gtk_drop_down_get_selected_item(GTK_DROP_DOWN(row->property));
    return item ? gtk_string_object_get_string(item) : NULL;
}

/* The widgets' names for tests: the first row's "sweep-layer",
 * "sweep-property", "sweep-layer-values"; row k's (from 2) the same with
 * "-k", and its "sweep-remove-layer-k". */
static void name_rows(TwSweepDialog *self)
{
    for (guint k = 0; k < self->rows->len; k++) {
        layer_row *row = g_ptr_array_index(self->rows, k);
        char suffix[16] = "";
        if (k)
            g_snprintf(suffix, sizeof suffix, "-%u", k + 1);
        struct {
            GtkWidget *widget;
            const char *name;
        } names[] = {{row->layer, "sweep-layer"}, {row->property, "sweep-property"},
                     {row->values, "sweep-layer-values"}, {row->remove, "sweep-remove-layer"}};
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
            if (names[i].widget) {
                char *name = g_strconcat(names[i].name, suffix, NULL);
                gtk_widget_set_name(names[i].widget, name);
                g_free(name);
            }
    }
}

/* The layer drop-down's choices: None and the model's layers. */
static GListModel *layer_choices(TwSweepDialog *self)
{
    GtkStringList *list = gtk_string_list_new((const char *const[]){"None", NULL});
    for (guint i = 0; self->layer_names && i < self->layer_names->len; i++)
        gtk_string_list_append(list, g_ptr_array_index(self->layer_names, i));
    return G_LIST_MODEL(list);
}

static void on_remove_clicked(GtkButton *button, TwSweepDialog *self)
{
    for (guint k = 1; k < self->rows->len; k++) {
        layer_row *row = g_ptr_array_index(self->rows, k);
        if (row->remove == GTK_WIDGET(button)) {
            gtk_box_remove(GTK_BOX(self->layer_box), row->box);
            g_ptr_array_remove_index(self->rows, k);
            break;
        }
    }
    name_rows(self);
}

static void add_layer_row(TwSweepDialog *self)
{
    layer_row *row = g_new0(layer_row, 1);
    row->layer = gtk_drop_down_new(layer_choices(self), NULL);
    gtk_widget_set_tooltip_text(row->layer, "A layer of the designer's model whose property the trials vary "
                                            "(a nested model's layer by its path)");
    g_object_set_data(G_OBJECT(row->layer), "row", row);
    row->property = gtk_drop_down_new(NULL, NULL);
    gtk_widget_set_tooltip_text(row->property, "The layer's numeric property (units, rate, filters, …)");
    row->values = gtk_entry_new();
    gtk_entry_set_placeholder_text(GTK_ENTRY(row->values), "16,32,64  or  8:128 (random)");
    gtk_widget_set_hexpand(row->values, TRUE);
    row->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_append(GTK_BOX(row->box), row->layer);
    gtk_box_append(GTK_BOX(row->box), row->property);
    gtk_box_append(GTK_BOX(row->box), row->values);
    if (self->rows->len) {
        row->remove = gtk_button_new_from_icon_name("list-remove-symbolic");
        gtk_widget_set_tooltip_text(row->remove, "Remove this layer property");
        g_signal_connect(row->remove, "clicked", G_CALLBACK(on_remove_clicked), self);
        gtk_box_append(GTK_BOX(row->box), row->remove);
    }
    /* before the Add button, the box's last child */
    GtkWidget *add = gtk_widget_get_last_child(self->layer_box);
    gtk_box_insert_child_after(GTK_BOX(self->layer_box), row->box, add ? gtk_widget_get_prev_sibling(add) : NULL);
    g_signal_connect(row->layer, "notify::selected", G_CALLBACK(on_layer_changed), self);
    g_ptr_array_add(self->rows, row);
    fill_properties(self, row, NULL);
    name_rows(self);
}

static void on_add_clicked(TwSweepDialog *self)
{
    add_layer_row(self);
}

/* ---- the form ------------------------------------------------------------- */
static void on_start_clicked(TwSweepDialog *self)
{
    g_signal_emit(self, signals[SIGNAL_START], 0);
}

static void on_cancel_all_clicked(TwSweepDialog *self)
{
    g_signal_emit(self, signals[SIGNAL_CANCEL_ALL], 0);
}

static void on_search_changed(TwSweepDialog *self)
{
    gtk_widget_set_sensitive(self->trials, tw_sweep_dialog_random(self));
}

static GtkWidget *form_label(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 1);
    return label;
}

static void build(TwSweepDialog *self)
{
    GtkWidget *outer = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_margin_start(outer, 12);
    gtk_widget_set_margin_end(outer, 12);
    gtk_widget_set_margin_top(outer, 12);
    gtk_widget_set_margin_bottom(outer, 12);

    GtkWidget *intro = gtk_label_new("Values to try, separated by commas; a range min:max for random search. "
                                     "Empty: the training panel's value. Each trial is a run in the run database, "
                                     "tagged with the sweep.");
    gtk_label_set_wrap(GTK_LABEL(intro), TRUE);
    gtk_label_set_xalign(GTK_LABEL(intro), 0);
    gtk_widget_add_css_class(intro, "dim-label");
    gtk_box_append(GTK_BOX(outer), intro);

    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_row_spacing(GTK_GRID(grid), 6);
    gtk_grid_set_column_spacing(GTK_GRID(grid), 12);
    int row = 0;
    for (guint i = 0; i < N_FIELDS; i++, row++) {
        GtkWidget *entry = gtk_entry_new();
        char *name = g_strconcat("sweep-", fields[i].setting, NULL);
        gtk_widget_set_name(entry, name);
        g_free(name);
        gtk_entry_set_placeholder_text(GTK_ENTRY(entry), fields[i].hint);
        gtk_widget_set_hexpand(entry, TRUE);
        gtk_grid_attach(GTK_GRID(grid), form_label(fields[i].label), 0, row, 1, 1);
        gtk_grid_attach(GTK_GRID(grid), entry, 1, row, 2, 1);
        self->entries[i] = entry;
    }
    /* numeric properties of the model's layers, a row each */
    self->layer_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    GtkWidget *add = gtk_button_new_with_mnemonic("Add _Layer Property");
    gtk_widget_set_name(add, "sweep-add-layer");
    gtk_widget_set_halign(add, GTK_ALIGN_START);
    gtk_widget_set_tooltip_text(add, "Sweep another layer property too (the grid takes every combination)");
    g_signal_connect_swapped(add, "clicked", G_CALLBACK(on_add_clicked), self);
    gtk_box_append(GTK_BOX(self->layer_box), add);
    GtkWidget *label = form_label("Layer property");
    gtk_widget_set_valign(label, GTK_ALIGN_START);
    gtk_widget_set_margin_top(label, 6);
    gtk_grid_attach(GTK_GRID(grid), label, 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->layer_box, 1, row++, 2, 1);
    const char *searches[] = {"Grid: every combination", "Random: N draws", NULL};
    self->search = gtk_drop_down_new_from_strings(searches);
    gtk_widget_set_name(self->search, "sweep-search");
    g_signal_connect_swapped(self->search, "notify::selected", G_CALLBACK(on_search_changed), self);
    self->trials = gtk_spin_button_new_with_range(1, 10000, 1);
    gtk_widget_set_name(self->trials, "sweep-trials");
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->trials), 6);
    gtk_widget_set_tooltip_text(self->trials, "Trials drawn at random");
    gtk_grid_attach(GTK_GRID(grid), form_label("Search"), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->search, 1, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->trials, 2, row++, 1, 1);
    self->name = gtk_entry_new();
    gtk_widget_set_name(self->name, "sweep-name");
    gtk_entry_set_placeholder_text(GTK_ENTRY(self->name), "sweep-DATE-TIME; trials are NAME-1, NAME-2, …");
    gtk_grid_attach(GTK_GRID(grid), form_label("Sweep name"), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->name, 1, row++, 2, 1);
    self->median_stop = gtk_check_button_new_with_mnemonic("Stop _bad trials early (median stopping rule)");
    gtk_widget_set_name(self->median_stop, "sweep-median-stop");
    gtk_widget_set_tooltip_text(self->median_stop,
                                "After each epoch, a trial whose best loss (validation loss with a validation split) "
                                "is worse than the median of the other trials' running means stops");
    gtk_grid_attach(GTK_GRID(grid), self->median_stop, 1, row++, 2, 1);
    self->parallel = gtk_spin_button_new_with_range(1, 64, 1);
    gtk_widget_set_name(self->parallel, "sweep-parallel");
    gtk_widget_set_halign(self->parallel, GTK_ALIGN_START);
    gtk_widget_set_tooltip_text(self->parallel, "Trials trained together, each in a process of its own (1: one after "
                                                "another, shown in the training panel)");
    gtk_grid_attach(GTK_GRID(grid), form_label("At once"), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->parallel, 1, row++, 1, 1);
    gtk_box_append(GTK_BOX(outer), grid);

    self->error = gtk_label_new(NULL);
    gtk_widget_set_name(self->error, "sweep-error");
    gtk_label_set_wrap(GTK_LABEL(self->error), TRUE);
    gtk_label_set_xalign(GTK_LABEL(self->error), 0);
    gtk_widget_add_css_class(self->error, "error");
    gtk_widget_set_visible(self->error, FALSE);
    gtk_box_append(GTK_BOX(outer), self->error);

    GtkWidget *start = gtk_button_new_with_mnemonic("_Start Sweep");
    gtk_widget_set_name(start, "sweep-start");
    gtk_widget_add_css_class(start, "suggested-action");
    gtk_widget_set_halign(start, GTK_ALIGN_END);
    g_signal_connect_swapped(start, "clicked", G_CALLBACK(on_start_clicked), self);
    gtk_box_append(GTK_BOX(outer), start);

    gtk_box_append(GTK_BOX(outer), gtk_separator_new(GTK_ORIENTATION_HORIZONTAL));
    GtkWidget *head = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    GtkWidget *title = gtk_label_new("Queue");
    gtk_widget_add_css_class(title, "heading");
    self->counts = gtk_label_new(NULL);
    gtk_widget_set_name(self->counts, "sweep-counts");
    gtk_widget_set_hexpand(self->counts, TRUE);
    gtk_label_set_xalign(GTK_LABEL(self->counts), 0);
    gtk_widget_add_css_class(self->counts, "dim-label");
    GtkWidget *cancel_all = gtk_button_new_with_mnemonic("Cancel _All");
    gtk_widget_set_name(cancel_all, "sweep-cancel-all");
    gtk_widget_add_css_class(cancel_all, "destructive-action");
    g_signal_connect_swapped(cancel_all, "clicked", G_CALLBACK(on_cancel_all_clicked), self);
    gtk_box_append(GTK_BOX(head), title);
    gtk_box_append(GTK_BOX(head), self->counts);
    gtk_box_append(GTK_BOX(head), cancel_all);
    gtk_box_append(GTK_BOX(outer), head);

    self->list = gtk_list_box_new();
    gtk_widget_set_name(self->list, "sweep-queue");
    gtk_widget_add_css_class(self->list, "sweep-queue");
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->list), GTK_SELECTION_NONE);
    gtk_widget_add_css_class(self->list, "boxed-list");
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(scroll), 300);
    gtk_widget_set_vexpand(scroll, TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), self->list);
    gtk_box_append(GTK_BOX(outer), scroll);

    gtk_window_set_child(GTK_WINDOW(self), outer);
    on_search_changed(self);
    tw_sweep_dialog_set_model(self, NULL);
    add_layer_row(self);
}

static void tw_sweep_dialog_dispose(GObject *object)
{
    TwSweepDialog *self = TW_SWEEP_DIALOG(object);
    if (self->queue)
        g_signal_handlers_disconnect_by_data(self->queue, self);
    g_clear_object(&self->queue);
    g_clear_pointer(&self->layer_names, g_ptr_array_unref);
    g_clear_pointer(&self->layer_properties, g_ptr_array_unref);
    G_OBJECT_CLASS(tw_sweep_dialog_parent_class)->dispose(object);
}

/* The rows' structs outlive the widgets that point at them. */
static void tw_sweep_dialog_finalize(GObject *object)
{
    g_ptr_array_unref(TW_SWEEP_DIALOG(object)->rows);
    G_OBJECT_CLASS(tw_sweep_dialog_parent_class)->finalize(object);
}

static void tw_sweep_dialog_class_init(TwSweepDialogClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_sweep_dialog_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_sweep_dialog_finalize;
    signals[SIGNAL_START] =
        g_signal_new("start-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_CANCEL_TRIAL] = g_signal_new("cancel-trial", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 1, TW_TYPE_SWEEP_TRIAL);
    signals[SIGNAL_CANCEL_ALL] =
        g_signal_new("cancel-all", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void tw_sweep_dialog_init(TwSweepDialog *self)
{
    gtk_window_set_title(GTK_WINDOW(self), "Sweep");
    gtk_window_set_default_size(GTK_WINDOW(self), 760, 720);
    self->rows = g_ptr_array_new_with_free_func(g_free);
    build(self);
    load_css(GTK_WIDGET(self));
}

GtkWidget *tw_sweep_dialog_new(GtkWindow *parent, GListModel *queue)
{
    TwSweepDialog *self = g_object_new(TW_TYPE_SWEEP_DIALOG, "transient-for", parent, "hide-on-close", TRUE, NULL);
    self->queue = g_object_ref(queue);
    gtk_list_box_bind_model(GTK_LIST_BOX(self->list), queue, create_row, NULL, NULL);
    g_signal_connect_swapped(queue, "items-changed", G_CALLBACK(on_items_changed), self);
    update_counts(self);
    return GTK_WIDGET(self);
}

const char *tw_sweep_dialog_values(TwSweepDialog *self, const char *setting)
{
    for (guint i = 0; i < N_FIELDS; i++)
        if (!g_strcmp0(fields[i].setting, setting))
            return gtk_editable_get_text(GTK_EDITABLE(self->entries[i]));
    g_return_val_if_reached(NULL);
}

gboolean tw_sweep_dialog_random(TwSweepDialog *self)
{
    return gtk_drop_down_get_selected(GTK_DROP_DOWN(self->search)) == 1;
}

int tw_sweep_dialog_trials(TwSweepDialog *self)
{
    return gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(self->trials));
}

const char *tw_sweep_dialog_name(TwSweepDialog *self)
{
    const char *text = gtk_editable_get_text(GTK_EDITABLE(self->name));
    return *text ? text : NULL;
}

gboolean tw_sweep_dialog_median_stop(TwSweepDialog *self)
{
    return gtk_check_button_get_active(GTK_CHECK_BUTTON(self->median_stop));
}

int tw_sweep_dialog_parallel(TwSweepDialog *self)
{
    return gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(self->parallel));
}

void tw_sweep_dialog_show_error(TwSweepDialog *self, const char *message)
{
    gtk_label_set_text(GTK_LABEL(self->error), message ? message : "");
    gtk_widget_set_visible(self->error, message != NULL);
}

/* A layer with numeric properties becomes a choice, by its path
 * ("encoder/dense_1" inside a nested model). */
static int add_layer_choice(const char *path, tw_layer *layer, void *user_data)
{
    TwSweepDialog *self = user_data;
    const tw_layer_class *klass = tw_layer_class_of(layer);
    GStrvBuilder *keys = g_strv_builder_new();
    int n = 0;
    for (int k = 0; k < klass->nparams; k++)
        if (klass->params[k].type == TW_PARAM_INT || klass->params[k].type == TW_PARAM_FLOAT) {
            g_strv_builder_add(keys, klass->params[k].key);
            n++;
        }
    if (n) {
        g_ptr_array_add(self->layer_names, g_strdup(path));
        g_ptr_array_add(self->layer_properties, g_strv_builder_end(keys));
    }
    g_strv_builder_unref(keys);
    return 0;
}

/* The row's choices again, keeping its layer and property when the model
 * still has them. */
static void refill_row(TwSweepDialog *self, layer_row *row, const char *keep_layer, const char *keep_property)
{
    guint selected = 0;
    for (guint i = 0; keep_layer && i < self->layer_names->len; i++)
        if (!strcmp(g_ptr_array_index(self->layer_names, i), keep_layer))
            selected = i + 1;
    GListModel *choices = layer_choices(self);
    g_signal_handlers_block_by_func(row->layer, on_layer_changed, self);
    gtk_drop_down_set_model(GTK_DROP_DOWN(row->layer), choices);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(row->layer), selected);
    g_signal_handlers_unblock_by_func(row->layer, on_layer_changed, self);
    g_object_unref(choices);
    fill_properties(self, row, keep_property);
}

void tw_sweep_dialog_set_model(TwSweepDialog *self, const tw_model *model)
{
    /* each row's choice, by name, before the lists change */
    GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
    for (guint k = 0; k < self->rows->len; k++) {
        layer_row *row = g_ptr_array_index(self->rows, k);
        int old = chosen_layer(self, row);
        g_ptr_array_add(keep, old >= 0 ? g_strdup(g_ptr_array_index(self->layer_names, old)) : NULL);
        g_ptr_array_add(keep, old >= 0 ? g_strdup(chosen_property(row)) : NULL);
    }
    g_clear_pointer(&self->layer_names, g_ptr_array_unref);
    g_clear_pointer(&self->layer_properties, g_ptr_array_unref);
    self->layer_names = g_ptr_array_new_with_free_func(g_free);
    self->layer_properties = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    if (model)
        tw_model_foreach_layer(model, add_layer_choice, self);
    for (guint k = 0; k < self->rows->len; k++)
        refill_row(self, g_ptr_array_index(self->rows, k), g_ptr_array_index(keep, 2 * k),
                   g_ptr_array_index(keep, 2 * k + 1));
    g_ptr_array_unref(keep);
}

char **tw_sweep_dialog_layer_settings(TwSweepDialog *self)
{
    GStrvBuilder *out = g_strv_builder_new();
    for (guint k = 0; k < self->rows->len; k++) {
        layer_row *row = g_ptr_array_index(self->rows, k);
        int layer = chosen_layer(self, row);
        const char *property = chosen_property(row);
        char *values = g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(row->values))));
        if (layer >= 0 && property && *values) {
            char *setting = g_strdup_printf("%s.%s=%s", (const char *)g_ptr_array_index(self->layer_names, layer),
                                            property, values);
            g_strv_builder_add(out, setting);
            g_free(setting);
        }
        g_free(values);
    }
    char **settings = g_strv_builder_end(out);
    g_strv_builder_unref(out);
    return settings;
}
