/* TwRunList (run_list.h): a GListStore of TwRunItem, filtered by the
 * regular expression and shown by a GtkListView whose factory builds only
 * the rows on screen. Items are kept by run id across snapshots, so a
 * run's colour and check box survive updates. */
#include "run_list.h"

#include <math.h>

#define SWATCH_SIZE 12
#define ROWS_PER_FRAME 4
#define DURATION_TICK_MS 500 /* twice a second: no second shown is skipped */

/* ---- TwRunItem: one run's row state ------------------------------------------- */
#define TW_TYPE_RUN_ITEM (tw_run_item_get_type())
G_DECLARE_FINAL_TYPE(TwRunItem, tw_run_item, TW, RUN_ITEM, GObject)

struct _TwRunItem {
    GObject parent_instance;
    gint64 id;
    char *name, *status, *duration, *host;
    char *failure_reason; /* NULL unless the run failed and said why */
    gint64 pid;
    tw_run_status state;
    double start_time, end_time;
    int color_index;
    gboolean checked;
};

enum { ITEM_PROP_0, ITEM_PROP_NAME, ITEM_PROP_STATUS, ITEM_PROP_DURATION, ITEM_PROP_RUNNING, ITEM_PROP_CHECKED, N_ITEM_PROPS };
static GParamSpec *item_props[N_ITEM_PROPS];

G_DEFINE_FINAL_TYPE(TwRunItem, tw_run_item, G_TYPE_OBJECT)

static void tw_run_item_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwRunItem *item = TW_RUN_ITEM(object);
    switch (id) {
    case ITEM_PROP_NAME: g_value_set_string(value, item->name); break;
    case ITEM_PROP_STATUS: g_value_set_string(value, item->status); break;
    case ITEM_PROP_DURATION: g_value_set_string(value, item->duration); break;
    case ITEM_PROP_RUNNING: g_value_set_boolean(value, item->state == TW_RUN_RUNNING); break;
    case ITEM_PROP_CHECKED: g_value_set_boolean(value, item->checked); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_run_item_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwRunItem *item = TW_RUN_ITEM(object);
    if (id != ITEM_PROP_CHECKED) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    if (item->checked == g_value_get_boolean(value))
        return;
    item->checked = g_value_get_boolean(value);
    g_object_notify_by_pspec(object, pspec);
}

static void tw_run_item_finalize(GObject *object)
{
    TwRunItem *item = TW_RUN_ITEM(object);
    g_free(item->name);
    g_free(item->status);
    g_free(item->duration);
    g_free(item->host);
    g_free(item->failure_reason);
    G_OBJECT_CLASS(tw_run_item_parent_class)->finalize(object);
}

static void tw_run_item_class_init(TwRunItemClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->get_property = tw_run_item_get_property;
    object_class->set_property = tw_run_item_set_property;
    object_class->finalize = tw_run_item_finalize;
    GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
    item_props[ITEM_PROP_NAME] = g_param_spec_string("name", NULL, NULL, NULL, ro);
    item_props[ITEM_PROP_STATUS] = g_param_spec_string("status", NULL, NULL, NULL, ro);
    item_props[ITEM_PROP_DURATION] = g_param_spec_string("duration", NULL, NULL, NULL, ro);
    item_props[ITEM_PROP_RUNNING] = g_param_spec_boolean("running", NULL, NULL, FALSE, ro);
    item_props[ITEM_PROP_CHECKED] = g_param_spec_boolean("checked", NULL, NULL, FALSE, ro | G_PARAM_WRITABLE);
    g_object_class_install_properties(object_class, N_ITEM_PROPS, item_props);
}

static void tw_run_item_init(TwRunItem *item)
{
}

/* "· 45s", "· 3m 05s", "· 2h 07m" after the status; nothing unknown. */
static char *format_duration(double seconds)
{
    if (!isfinite(seconds) || seconds < 0)
        return g_strdup("");
    long s = (long)seconds;
    if (s < 60)
        return g_strdup_printf("· %lds", s);
    if (s < 3600)
        return g_strdup_printf("· %ldm %02lds", s / 60, s % 60);
    return g_strdup_printf("· %ldh %02ldm", s / 3600, s % 3600 / 60);
}

static void set_string(TwRunItem *item, char **field, char *value, int prop)
{
    if (!g_strcmp0(*field, value)) {
        g_free(value);
        return;
    }
    g_free(*field);
    *field = value;
    g_object_notify_by_pspec(G_OBJECT(item), item_props[prop]);
}

static void item_update_duration(TwRunItem *item)
{
    double end = item->state == TW_RUN_RUNNING ? g_get_real_time() / 1e6 : item->end_time;
    set_string(item, &item->duration, format_duration(end - item->start_time), ITEM_PROP_DURATION);
}

/* Made when a row shows the run. */
static char *run_tooltip(const TwRunItem *item)
{
    GDateTime *start = g_date_time_new_from_unix_local((gint64)item->start_time);
    char *when = start ? g_date_time_format(start, "%Y-%m-%d %H:%M:%S") : g_strdup("?");
    char *text = g_strdup_printf("%s\nStarted %s on %s (process %" G_GINT64_FORMAT ")%s%s", item->name, when,
                                 item->host ? item->host : "?", item->pid,
                                 item->failure_reason ? "\nFailed: " : "",
                                 item->failure_reason ? item->failure_reason : "");
    g_free(when);
    if (start)
        g_date_time_unref(start);
    return text;
}

static void item_update(TwRunItem *item, const tw_run_info *run)
{
    gboolean was_running = item->state == TW_RUN_RUNNING;
    item->state = run->status;
    item->start_time = run->start_time;
    item->end_time = run->end_time;
    item->pid = run->pid;
    if (g_strcmp0(item->host, run->host)) {
        g_free(item->host);
        item->host = g_strdup(run->host);
    }
    if (g_strcmp0(item->failure_reason, run->failure_reason)) {
        g_free(item->failure_reason);
        item->failure_reason = g_strdup(run->failure_reason);
    }
    set_string(item, &item->name, g_strdup(run->name), ITEM_PROP_NAME);
    set_string(item, &item->status, g_strdup(tw_run_status_name(run->status)), ITEM_PROP_STATUS);
    if (was_running != (run->status == TW_RUN_RUNNING))
        g_object_notify_by_pspec(G_OBJECT(item), item_props[ITEM_PROP_RUNNING]);
    item_update_duration(item);
}

static TwRunItem *item_new(const tw_run_info *run, int color_index, gboolean checked)
{
    TwRunItem *item = g_object_new(TW_TYPE_RUN_ITEM, NULL);
    item->id = run->id;
    item->color_index = color_index;
    item->checked = checked;
    item->state = run->status;
    item_update(item, run);
    return item;
}

/* ---- TwRunList ------------------------------------------------------------------ */
struct _TwRunList {
    GtkWidget parent_instance;
    GtkWidget *box, *entry, *view, *empty;
    GListStore *store;
    GtkFilterListModel *filtered;
    GtkCustomFilter *filter;
    GPtrArray *order;  /* TwRunItem, newest first: the rows to show */
    guint shown;       /* of them in the store so far */
    guint fill;        /* the tick callback adding them */
    GHashTable *items; /* run id -> TwRunItem (order's references) */
    GRegex *regex;     /* the last valid filter, NULL for all */
    gboolean filter_valid, synced;
    int next_color;
    guint tick; /* the durations' timer while a run is running */
};

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwRunList, tw_run_list, GTK_TYPE_WIDGET)

static gboolean matches(gpointer object, gpointer data)
{
    TwRunList *list = data;
    return !list->regex || g_regex_match(list->regex, TW_RUN_ITEM(object)->name, 0, NULL);
}

static void update_empty(TwRunList *list)
{
    guint n = g_list_model_get_n_items(G_LIST_MODEL(list->filtered));
    gboolean any = list->order->len > 0;
    gtk_widget_set_visible(list->empty, any && n == 0);
}

static void on_filter_changed(TwRunList *list)
{
    const char *text = gtk_editable_get_text(GTK_EDITABLE(list->entry));
    GError *error = NULL;
    GRegex *regex = *text ? g_regex_new(text, G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, &error) : NULL;
    list->filter_valid = error == NULL;
    if (error) {
        gtk_widget_add_css_class(list->entry, "error");
        gtk_widget_set_tooltip_text(list->entry, error->message);
        g_error_free(error);
        return;
    }
    gtk_widget_remove_css_class(list->entry, "error");
    gtk_widget_set_tooltip_text(list->entry, "Show runs whose name matches a regular expression");
    if (list->regex)
        g_regex_unref(list->regex);
    list->regex = regex;
    gtk_filter_changed(GTK_FILTER(list->filter), GTK_FILTER_CHANGE_DIFFERENT);
    update_empty(list);
    g_signal_emit(list, signals[SIGNAL_CHANGED], 0);
}

static void on_item_checked(TwRunList *list)
{
    g_signal_emit(list, signals[SIGNAL_CHANGED], 0);
}

/* ---- rows ------------------------------------------------------------------------- */
static void draw_swatch(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwRunItem *item = g_object_get_data(G_OBJECT(area), "item");
    if (!item)
        return;
    tw_rgb c = tw_run_color(item->color_index);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    double r = 3;
    cairo_new_sub_path(cr);
    cairo_arc(cr, width - r, r, r, -G_PI / 2, 0);
    cairo_arc(cr, width - r, height - r, r, 0, G_PI / 2);
    cairo_arc(cr, r, height - r, r, G_PI / 2, G_PI);
    cairo_arc(cr, r, r, r, G_PI, 3 * G_PI / 2);
    cairo_close_path(cr);
    cairo_fill(cr);
}

static GtkWidget *row_label(const char *css_class, gboolean expand)
{
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), expand ? PANGO_ELLIPSIZE_END : PANGO_ELLIPSIZE_NONE);
    gtk_widget_set_hexpand(label, expand);
    gtk_widget_add_css_class(label, css_class);
    return label;
}

static void setup_row(GtkSignalListItemFactory *factory, GtkListItem *list_item)
{
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_add_css_class(row, "run-row");
    GtkWidget *swatch = gtk_drawing_area_new();
    gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(swatch), SWATCH_SIZE);
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(swatch), SWATCH_SIZE);
    gtk_widget_set_valign(swatch, GTK_ALIGN_CENTER);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(swatch), draw_swatch, NULL, NULL);
    GtkWidget *check = gtk_check_button_new();
    GtkWidget *text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *state = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    GtkWidget *dot = gtk_label_new("●");
    gtk_widget_add_css_class(dot, "run-running-dot");
    gtk_box_append(GTK_BOX(state), dot);
    gtk_box_append(GTK_BOX(state), row_label("run-status", FALSE));
    gtk_box_append(GTK_BOX(state), row_label("run-duration", FALSE));
    gtk_box_append(GTK_BOX(text), row_label("run-name", TRUE));
    gtk_box_append(GTK_BOX(text), state);
    gtk_box_append(GTK_BOX(row), swatch);
    gtk_box_append(GTK_BOX(row), check);
    gtk_box_append(GTK_BOX(row), text);
    g_object_set_data(G_OBJECT(row), "list-item", list_item);
    gtk_list_item_set_child(list_item, row);
    gtk_list_item_set_activatable(list_item, FALSE);
}

/* One tooltip handler on the list for the row under the pointer: a
 * tooltip set on each row asks the X server where the pointer is at every
 * bind (a round trip per row). */
static gboolean on_query_tooltip(GtkWidget *view, int x, int y, gboolean keyboard, GtkTooltip *tooltip, gpointer data)
{
    GtkWidget *w = keyboard ? gtk_root_get_focus(gtk_widget_get_root(view)) : gtk_widget_pick(view, x, y, GTK_PICK_DEFAULT);
    for (; w && w != view && !g_object_get_data(G_OBJECT(w), "list-item"); w = gtk_widget_get_parent(w))
        ;
    GtkListItem *list_item = w && w != view ? g_object_get_data(G_OBJECT(w), "list-item") : NULL;
    TwRunItem *item = list_item ? gtk_list_item_get_item(list_item) : NULL;
    if (!item)
        return FALSE;
    char *text = run_tooltip(item);
    gtk_tooltip_set_text(tooltip, text);
    g_free(text);
    return TRUE;
}

static void bind(GPtrArray *bindings, gpointer source, const char *from, gpointer target, const char *to,
                 GBindingFlags flags)
{
    g_ptr_array_add(bindings, g_object_ref(g_object_bind_property(source, from, target, to,
                                                                  flags | G_BINDING_SYNC_CREATE)));
}

static void unbind_all(gpointer data)
{
    GPtrArray *bindings = data;
    for (guint i = 0; i < bindings->len; i++)
        g_binding_unbind(bindings->pdata[i]);
    g_ptr_array_free(bindings, TRUE);
}

static void bind_row(GtkSignalListItemFactory *factory, GtkListItem *list_item)
{
    TwRunItem *item = gtk_list_item_get_item(list_item);
    GtkWidget *row = gtk_list_item_get_child(list_item);
    GtkWidget *swatch = gtk_widget_get_first_child(row);
    GtkWidget *check = gtk_widget_get_next_sibling(swatch);
    GtkWidget *name = gtk_widget_get_first_child(gtk_widget_get_next_sibling(check));
    GtkWidget *dot = gtk_widget_get_first_child(gtk_widget_get_next_sibling(name));
    GtkWidget *status = gtk_widget_get_next_sibling(dot), *duration = gtk_widget_get_next_sibling(status);
    g_object_set_data_full(G_OBJECT(swatch), "item", g_object_ref(item), g_object_unref);
    gtk_widget_queue_draw(swatch);
    GPtrArray *bindings = g_ptr_array_new_with_free_func(g_object_unref);
    bind(bindings, item, "checked", check, "active", G_BINDING_BIDIRECTIONAL);
    bind(bindings, item, "name", name, "label", 0);
    bind(bindings, item, "running", dot, "visible", 0);
    bind(bindings, item, "status", status, "label", 0);
    bind(bindings, item, "duration", duration, "label", 0);
    g_object_set_data_full(G_OBJECT(list_item), "bindings", bindings, unbind_all);
    gtk_widget_remove_css_class(row, "run-failed");
    gtk_widget_remove_css_class(row, "run-interrupted");
    if (item->state == TW_RUN_FAILED)
        gtk_widget_add_css_class(row, "run-failed");
    if (item->state == TW_RUN_INTERRUPTED)
        gtk_widget_add_css_class(row, "run-interrupted");
}

static void unbind_row(GtkSignalListItemFactory *factory, GtkListItem *list_item)
{
    g_object_set_data(G_OBJECT(list_item), "bindings", NULL);
    GtkWidget *swatch = gtk_widget_get_first_child(gtk_list_item_get_child(list_item));
    g_object_set_data(G_OBJECT(swatch), "item", NULL);
}

/* ---- durations ------------------------------------------------------------------------ */
static gboolean tick_durations(gpointer data)
{
    TwRunList *list = data;
    GHashTableIter iter;
    gpointer item;
    gboolean any = FALSE;
    g_hash_table_iter_init(&iter, list->items);
    while (g_hash_table_iter_next(&iter, NULL, &item))
        if (TW_RUN_ITEM(item)->state == TW_RUN_RUNNING) {
            item_update_duration(item);
            any = TRUE;
        }
    if (!any)
        list->tick = 0;
    return any ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* ---- sync --------------------------------------------------------------------------- */
/* Items for data's runs, newest first. Runs new to the list get the next
 * colours, oldest first, and a check; at the first sync with runs (an
 * empty snapshot may be a file not read yet) only the newest and the
 * running ones are checked. */
static GPtrArray *snapshot_items(TwRunList *list, TwDashboardData *data, gboolean *set_changed)
{
    int n = tw_dashboard_data_n_runs(data);
    GPtrArray *items = g_ptr_array_new_full(n, g_object_unref);
    for (int i = 0; i < n; i++) {
        const tw_run_info *run = tw_dashboard_data_run(data, i);
        TwRunItem *item = g_hash_table_lookup(list->items, &run->id);
        if (item) {
            item_update(item, run);
            g_object_ref(item);
        } else {
            gboolean checked = list->synced || i == n - 1 || run->status == TW_RUN_RUNNING;
            item = item_new(run, list->next_color++, checked);
            g_signal_connect_swapped(item, "notify::checked", G_CALLBACK(on_item_checked), list);
            *set_changed = TRUE;
        }
        g_ptr_array_add(items, item);
    }
    list->synced |= n > 0;
    for (guint i = 0; i < items->len / 2; i++) { /* newest first */
        gpointer swap = items->pdata[i];
        items->pdata[i] = items->pdata[items->len - 1 - i];
        items->pdata[items->len - 1 - i] = swap;
    }
    return items;
}

static gboolean same_items(GPtrArray *a, guint from, GPtrArray *b)
{
    if (a->len - from != b->len)
        return FALSE;
    for (guint i = 0; i < b->len; i++)
        if (a->pdata[from + i] != b->pdata[i])
            return FALSE;
    return TRUE;
}

/* Rows go into the store a few a frame: GTK 4.8's list view builds a row
 * for each of up to 200 items at once, and styling a row's widgets takes
 * most of a millisecond, so 200 runs at once would hold the main loop for
 * several frames. TRUE while rows remain. */
static gboolean fill_store(TwRunList *list)
{
    guint n = MIN(ROWS_PER_FRAME, list->order->len - list->shown);
    g_list_store_splice(list->store, list->shown, 0, list->order->pdata + list->shown, n);
    list->shown += n;
    update_empty(list);
    return list->shown < list->order->len;
}

static gboolean on_fill_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
    TwRunList *list = TW_RUN_LIST(widget);
    if (fill_store(list))
        return G_SOURCE_CONTINUE;
    list->fill = 0;
    return G_SOURCE_REMOVE;
}

/* The new order: a few runs that appeared on top of an unchanged list are
 * inserted; anything else refills the store. */
static void set_order(TwRunList *list, GPtrArray *items)
{
    guint added = items->len >= list->order->len ? items->len - list->order->len : 0;
    gboolean on_top = list->order->len > 0 && list->shown == list->order->len && added <= ROWS_PER_FRAME &&
                      same_items(items, added, list->order);
    g_hash_table_remove_all(list->items);
    for (guint i = 0; i < items->len; i++)
        g_hash_table_insert(list->items, &TW_RUN_ITEM(items->pdata[i])->id, items->pdata[i]);
    g_ptr_array_unref(list->order);
    list->order = g_ptr_array_ref(items);
    if (on_top) {
        g_list_store_splice(list->store, 0, 0, items->pdata, added);
        list->shown = items->len;
        return;
    }
    g_list_store_remove_all(list->store);
    list->shown = 0;
    if (!list->fill)
        list->fill = gtk_widget_add_tick_callback(GTK_WIDGET(list), on_fill_tick, NULL, NULL);
}

void tw_run_list_sync(TwRunList *list, TwDashboardData *data)
{
    g_return_if_fail(TW_IS_RUN_LIST(list));
    gboolean set_changed = FALSE;
    GPtrArray *items = snapshot_items(list, data, &set_changed);
    if (!same_items(list->order, 0, items))
        set_order(list, items);
    gboolean running = FALSE;
    for (guint i = 0; i < items->len && !running; i++)
        running = TW_RUN_ITEM(items->pdata[i])->state == TW_RUN_RUNNING;
    if (running && !list->tick)
        list->tick = g_timeout_add(DURATION_TICK_MS, tick_durations, list);
    g_ptr_array_unref(items);
    update_empty(list);
    if (set_changed)
        g_signal_emit(list, signals[SIGNAL_CHANGED], 0);
}

static void forget_items(TwRunList *list)
{
    if (list->fill)
        gtk_widget_remove_tick_callback(GTK_WIDGET(list), list->fill);
    list->fill = 0;
    for (guint i = 0; i < list->order->len; i++)
        g_signal_handlers_disconnect_by_data(list->order->pdata[i], list);
    g_hash_table_remove_all(list->items);
    g_ptr_array_set_size(list->order, 0);
    list->shown = 0;
}

void tw_run_list_reset(TwRunList *list)
{
    g_return_if_fail(TW_IS_RUN_LIST(list));
    g_list_store_remove_all(list->store);
    forget_items(list);
    list->synced = FALSE;
    list->next_color = 0;
    update_empty(list);
}

/* ---- lookups --------------------------------------------------------------------------- */
gboolean tw_run_list_shown(TwRunList *list, gint64 run_id)
{
    TwRunItem *item = g_hash_table_lookup(list->items, &run_id);
    return item && item->checked && matches(item, list);
}

tw_rgb tw_run_list_color(TwRunList *list, gint64 run_id)
{
    TwRunItem *item = g_hash_table_lookup(list->items, &run_id);
    return tw_run_color(item ? item->color_index : 0);
}

void tw_run_list_set_checked(TwRunList *list, gint64 run_id, gboolean checked)
{
    TwRunItem *item = g_hash_table_lookup(list->items, &run_id);
    if (item)
        g_object_set(item, "checked", checked, NULL);
}

gboolean tw_run_list_checked(TwRunList *list, gint64 run_id)
{
    TwRunItem *item = g_hash_table_lookup(list->items, &run_id);
    return item && item->checked;
}

guint tw_run_list_n_visible(TwRunList *list)
{
    return g_list_model_get_n_items(G_LIST_MODEL(list->filtered));
}

GtkEditable *tw_run_list_filter_entry(TwRunList *list)
{
    return GTK_EDITABLE(list->entry);
}

gboolean tw_run_list_filter_valid(TwRunList *list)
{
    return list->filter_valid;
}

/* ---- the widget ------------------------------------------------------------------------- */
static void tw_run_list_dispose(GObject *object)
{
    TwRunList *list = TW_RUN_LIST(object);
    if (list->tick)
        g_source_remove(list->tick);
    list->tick = 0;
    if (list->order)
        forget_items(list);
    g_clear_pointer(&list->box, gtk_widget_unparent);
    g_clear_object(&list->filtered);
    g_clear_pointer(&list->items, g_hash_table_unref);
    g_clear_pointer(&list->order, g_ptr_array_unref);
    g_clear_object(&list->store);
    g_clear_pointer(&list->regex, g_regex_unref);
    G_OBJECT_CLASS(tw_run_list_parent_class)->dispose(object);
}

static void tw_run_list_class_init(TwRunListClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_run_list_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "runlist");
    signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                           NULL, G_TYPE_NONE, 0);
}

static GtkWidget *list_view(TwRunList *list)
{
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_row), NULL);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_row), NULL);
    g_signal_connect(factory, "unbind", G_CALLBACK(unbind_row), NULL);
    GtkNoSelection *selection = gtk_no_selection_new(G_LIST_MODEL(g_object_ref(list->filtered)));
    GtkWidget *view = gtk_list_view_new(GTK_SELECTION_MODEL(selection), factory);
    gtk_widget_add_css_class(view, "run-list");
    gtk_widget_set_has_tooltip(view, TRUE);
    g_signal_connect(view, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), view);
    gtk_widget_set_vexpand(scrolled, TRUE);
    list->view = view;
    return scrolled;
}

static void tw_run_list_init(TwRunList *list)
{
    list->items = g_hash_table_new(g_int64_hash, g_int64_equal);
    list->order = g_ptr_array_new_with_free_func(g_object_unref);
    list->store = g_list_store_new(TW_TYPE_RUN_ITEM);
    list->filter = gtk_custom_filter_new(matches, list, NULL);
    list->filtered = gtk_filter_list_model_new(G_LIST_MODEL(g_object_ref(list->store)), GTK_FILTER(list->filter));
    list->filter_valid = TRUE;
    list->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_parent(list->box, GTK_WIDGET(list));
    list->entry = gtk_search_entry_new();
    g_object_set(list->entry, "placeholder-text", "Filter runs (regex)", NULL);
    gtk_widget_set_tooltip_text(list->entry, "Show runs whose name matches a regular expression");
    g_signal_connect_swapped(list->entry, "search-changed", G_CALLBACK(on_filter_changed), list);
    gtk_box_append(GTK_BOX(list->box), list->entry);
    list->empty = gtk_label_new("No run matches the filter.");
    gtk_widget_add_css_class(list->empty, "dim-label");
    gtk_widget_set_visible(list->empty, FALSE);
    gtk_box_append(GTK_BOX(list->box), list->empty);
    gtk_box_append(GTK_BOX(list->box), list_view(list));
}

GtkWidget *tw_run_list_new(void)
{
    return g_object_new(TW_TYPE_RUN_LIST, NULL);
}
