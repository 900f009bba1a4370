/* TwRunList (run_list.h): a GListStore of TwRunItem, filtered by the
 * regular expression and shown by a GtkListView whose factory builds only
 * the rows on screen. Items are kept by run id across snapshots, so a
 * run's colour and check box survive updates. */
#include "run_list.h"

#include <math.h>
#include <string.h>

#include "run_edit.h"

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
    gboolean has_color; /* a colour the person chose, over the palette's */
    tw_rgb color;
    gboolean pinned;
    char *notes;
    char *reason; /* the failed run's third line: why, or "" */
    char *model_json; /* the run's model (Keras JSON), or NULL */
};

enum { ITEM_PROP_0, ITEM_PROP_NAME, ITEM_PROP_STATUS, ITEM_PROP_DURATION, ITEM_PROP_RUNNING, ITEM_PROP_CHECKED,
       ITEM_PROP_PINNED, ITEM_PROP_REASON, N_ITEM_PROPS };
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
    case ITEM_PROP_PINNED: g_value_set_boolean(value, item->pinned); break;
    case ITEM_PROP_REASON: g_value_set_string(value, item->reason); break;
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
    g_free(item->notes);
    g_free(item->model_json);
    g_free(item->reason);
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
    item_props[ITEM_PROP_PINNED] = g_param_spec_boolean("pinned", NULL, NULL, FALSE, ro);
    item_props[ITEM_PROP_REASON] = g_param_spec_string("reason", NULL, NULL, NULL, ro);
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
    char *text = g_strdup_printf("%s\nStarted %s on %s (process %" G_GINT64_FORMAT ")%s%s%s%s", item->name, when,
                                 item->host ? item->host : "?", item->pid,
                                 item->failure_reason ? "\nFailed: " : "",
                                 item->failure_reason ? item->failure_reason : "",
                                 item->notes && *item->notes ? "\nNotes: " : "", item->notes ? item->notes : "");
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
    if (g_strcmp0(item->notes, run->notes)) {
        g_free(item->notes);
        item->notes = g_strdup(run->notes);
    }
    if (g_strcmp0(item->model_json, run->model_json)) {
        g_free(item->model_json);
        item->model_json = g_strdup(run->model_json);
    }
    GdkRGBA rgba;
    item->has_color = run->color && gdk_rgba_parse(&rgba, run->color);
    if (item->has_color)
        item->color = (tw_rgb){rgba.red, rgba.green, rgba.blue};
    if (item->pinned != run->pinned) {
        item->pinned = run->pinned;
        g_object_notify_by_pspec(G_OBJECT(item), item_props[ITEM_PROP_PINNED]);
    }
    /* A failed run says why on its row; the tooltip has the whole text. */
    set_string(item, &item->reason, g_strdup(run->failure_reason ? run->failure_reason : ""), ITEM_PROP_REASON);
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
    char *path;         /* the run database the runs are in (changes go there) */
    GPtrArray *trashed; /* names deleted this session, the last on top: Undo takes it back */
    GtkWidget *bar, *bar_label, *undo; /* "Deleted “x”. Undo", or a change's error */
    gboolean batch;   /* checking many runs: one "changed" after them */
    gboolean batched; /* a check changed during it */
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
    if (list->batch)
        list->batched = TRUE;
    else
        g_signal_emit(list, signals[SIGNAL_CHANGED], 0);
}

/* ---- changing runs: rename, notes, colour, pin, delete with undo ---------------------- */
/* Changes go to the file off the main loop (run_edit.h); the rows show
 * them when the dashboard's reader next lists the runs. Deleting moves the
 * run to the file's trash: Undo (the bar's button, Ctrl+Z) takes the last
 * one back, and the trash is emptied for good when the list goes (the
 * window closes) or turns to another file. */
typedef struct {
    TwRunList *list; /* a reference */
    tw_run_edit_kind kind;
    char *name;
} pending_edit;

static void show_message(TwRunList *list, const char *text, gboolean error)
{
    gtk_label_set_text(GTK_LABEL(list->bar_label), text);
    if (error)
        gtk_widget_add_css_class(list->bar_label, "error");
    else
        gtk_widget_remove_css_class(list->bar_label, "error");
    gtk_widget_set_visible(list->undo, list->trashed->len > 0);
    gtk_widget_set_visible(list->bar, TRUE);
}

static void show_last_trashed(TwRunList *list)
{
    if (!list->trashed->len) {
        gtk_widget_set_visible(list->bar, FALSE);
        return;
    }
    char *text = g_strdup_printf("Deleted “%s”.", (char *)g_ptr_array_index(list->trashed, list->trashed->len - 1));
    show_message(list, text, FALSE);
    g_free(text);
}

static void on_edited(GObject *source, GAsyncResult *result, gpointer data)
{
    pending_edit *p = data;
    TwRunList *list = p->list;
    GError *error = NULL;
    gboolean ok = tw_run_edit_finish(result, &error);
    if (list->bar) { /* still on screen */
        if (ok && p->kind == TW_RUN_EDIT_TRASH)
            g_ptr_array_add(list->trashed, g_strdup(p->name));
        if (!ok && p->kind == TW_RUN_EDIT_UNTRASH) /* still in the trash: Undo may try again */
            g_ptr_array_add(list->trashed, g_strdup(p->name));
        if (!ok)
            show_message(list, error->message, TRUE);
        else if (p->kind == TW_RUN_EDIT_TRASH || p->kind == TW_RUN_EDIT_UNTRASH)
            show_last_trashed(list);
    }
    g_clear_error(&error);
    g_object_unref(list);
    g_free(p->name);
    g_free(p);
}

static void edit_run(TwRunList *list, tw_run_edit_kind kind, const char *name, const char *value)
{
    if (!list->path)
        return;
    pending_edit *p = g_new(pending_edit, 1);
    *p = (pending_edit){g_object_ref(list), kind, g_strdup(name)};
    tw_run_edit_async(list->path, kind, name, value, on_edited, p);
}

static void empty_trash(TwRunList *list)
{
    GError *error = NULL;
    if (list->trashed->len && list->path &&
        !tw_run_edit_apply(list->path, TW_RUN_EDIT_EMPTY_TRASH, NULL, NULL, &error)) {
        g_printerr("twb: the deleted runs stay in the trash: %s\n", error->message);
        g_error_free(error);
    }
    g_ptr_array_set_size(list->trashed, 0);
    if (list->bar)
        gtk_widget_set_visible(list->bar, FALSE);
}

/* ---- asking for a name, notes or a colour ---- */
typedef struct {
    TwRunList *list; /* a reference: an edit asked of a disposed list is dropped (edit_run) */
    tw_run_edit_kind kind;
    char *name;
    GtkWidget *window, *input;
} ask;

static void ask_free(gpointer data)
{
    ask *a = data;
    g_object_unref(a->list);
    g_free(a->name);
    g_free(a);
}

static char *rgba_hex(const GdkRGBA *c)
{
    return g_strdup_printf("#%02x%02x%02x", (int)lround(c->red * 255), (int)lround(c->green * 255),
                           (int)lround(c->blue * 255));
}

static void on_ask_ok(ask *a)
{
    char *value = NULL;
    if (a->kind == TW_RUN_EDIT_RENAME)
        value = g_strdup(gtk_editable_get_text(GTK_EDITABLE(a->input)));
    else if (a->kind == TW_RUN_EDIT_NOTES) {
        GtkTextBuffer *buffer = gtk_text_view_get_buffer(GTK_TEXT_VIEW(a->input));
        GtkTextIter start, end;
        gtk_text_buffer_get_bounds(buffer, &start, &end);
        value = gtk_text_buffer_get_text(buffer, &start, &end, FALSE);
    } else {
        GdkRGBA c;
        gtk_color_chooser_get_rgba(GTK_COLOR_CHOOSER(a->input), &c);
        value = rgba_hex(&c);
    }
    if (a->kind != TW_RUN_EDIT_RENAME || g_strcmp0(value, a->name))
        edit_run(a->list, a->kind, a->name, value);
    g_free(value);
    gtk_window_destroy(GTK_WINDOW(a->window));
}

static void on_ask_palette(ask *a)
{
    edit_run(a->list, TW_RUN_EDIT_COLOR, a->name, NULL);
    gtk_window_destroy(GTK_WINDOW(a->window));
}

static GtkWidget *ask_button(const char *label, GCallback callback, ask *a)
{
    GtkWidget *button = gtk_button_new_with_mnemonic(label);
    g_signal_connect_swapped(button, "clicked", callback, a);
    return button;
}

/* A small modal window: the run's name, an input, Cancel and OK. */
static void ask_for(TwRunList *list, TwRunItem *item, tw_run_edit_kind kind)
{
    static const char *const titles[] = {[TW_RUN_EDIT_RENAME] = "Rename Run", [TW_RUN_EDIT_NOTES] = "Run Notes",
                                         [TW_RUN_EDIT_COLOR] = "Run Colour"};
    ask *a = g_new0(ask, 1);
    *a = (ask){g_object_ref(list), kind, g_strdup(item->name)};
    a->window = gtk_window_new();
    gtk_widget_set_name(a->window, "run-edit-window");
    gtk_window_set_title(GTK_WINDOW(a->window), titles[kind]);
    gtk_window_set_modal(GTK_WINDOW(a->window), TRUE);
    gtk_window_set_default_size(GTK_WINDOW(a->window), 380, -1);
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(list));
    if (GTK_IS_WINDOW(root))
        gtk_window_set_transient_for(GTK_WINDOW(a->window), GTK_WINDOW(root));
    /* It asks about the window's run list: it goes when that window goes. */
    gtk_window_set_destroy_with_parent(GTK_WINDOW(a->window), TRUE);
    g_object_set_data_full(G_OBJECT(a->window), "ask", a, ask_free);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
    gtk_widget_set_margin_start(box, 12);
    gtk_widget_set_margin_end(box, 12);
    gtk_widget_set_margin_top(box, 12);
    gtk_widget_set_margin_bottom(box, 12);
    char *what = g_strdup_printf("Run “%s”", item->name);
    GtkWidget *label = gtk_label_new(what);
    g_free(what);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_MIDDLE);
    gtk_box_append(GTK_BOX(box), label);
    if (kind == TW_RUN_EDIT_RENAME) {
        a->input = gtk_entry_new();
        gtk_editable_set_text(GTK_EDITABLE(a->input), item->name);
        g_signal_connect_swapped(a->input, "activate", G_CALLBACK(on_ask_ok), a);
        gtk_box_append(GTK_BOX(box), a->input);
    } else if (kind == TW_RUN_EDIT_NOTES) {
        a->input = gtk_text_view_new();
        gtk_text_view_set_wrap_mode(GTK_TEXT_VIEW(a->input), GTK_WRAP_WORD_CHAR);
        gtk_text_buffer_set_text(gtk_text_view_get_buffer(GTK_TEXT_VIEW(a->input)), item->notes ? item->notes : "",
                                 -1);
        GtkWidget *scrolled = gtk_scrolled_window_new();
        gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), a->input);
        gtk_widget_set_size_request(scrolled, 360, 160);
        gtk_box_append(GTK_BOX(box), scrolled);
    } else {
        a->input = gtk_color_chooser_widget_new();
        gtk_color_chooser_set_use_alpha(GTK_COLOR_CHOOSER(a->input), FALSE);
        tw_rgb c = item->has_color ? item->color : tw_run_color(item->color_index);
        gtk_color_chooser_set_rgba(GTK_COLOR_CHOOSER(a->input), &(GdkRGBA){c.r, c.g, c.b, 1});
        gtk_box_append(GTK_BOX(box), a->input);
    }
    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_halign(buttons, GTK_ALIGN_END);
    if (kind == TW_RUN_EDIT_COLOR)
        gtk_box_append(GTK_BOX(buttons), ask_button("_Palette Colour", G_CALLBACK(on_ask_palette), a));
    GtkWidget *cancel = gtk_button_new_with_mnemonic("_Cancel");
    g_signal_connect_swapped(cancel, "clicked", G_CALLBACK(gtk_window_destroy), a->window);
    gtk_box_append(GTK_BOX(buttons), cancel);
    GtkWidget *ok = ask_button(kind == TW_RUN_EDIT_RENAME ? "_Rename" : "_Save", G_CALLBACK(on_ask_ok), a);
    gtk_widget_add_css_class(ok, "suggested-action");
    gtk_box_append(GTK_BOX(buttons), ok);
    gtk_box_append(GTK_BOX(box), buttons);
    gtk_window_set_child(GTK_WINDOW(a->window), box);
    gtk_window_present(GTK_WINDOW(a->window));
}

/* ---- the actions, the rows' menu and the bar ---- */
static TwRunItem *action_item(TwRunList *list, GVariant *parameter)
{
    gint64 id = g_variant_get_int64(parameter);
    return g_hash_table_lookup(list->items, &id);
}

static void on_run_action(GtkWidget *widget, const char *action, GVariant *parameter)
{
    TwRunList *list = TW_RUN_LIST(widget);
    TwRunItem *item = action_item(list, parameter);
    if (!item)
        return;
    if (!strcmp(action, "runs.rename"))
        ask_for(list, item, TW_RUN_EDIT_RENAME);
    else if (!strcmp(action, "runs.notes"))
        ask_for(list, item, TW_RUN_EDIT_NOTES);
    else if (!strcmp(action, "runs.color"))
        ask_for(list, item, TW_RUN_EDIT_COLOR);
    else if (!strcmp(action, "runs.pin"))
        edit_run(list, TW_RUN_EDIT_PIN, item->name, item->pinned ? "0" : "1");
    else if (!strcmp(action, "runs.delete"))
        edit_run(list, TW_RUN_EDIT_TRASH, item->name, NULL);
    else if (!strcmp(action, "runs.open-model") && item->model_json) /* the window's (ui/window.c) */
        gtk_widget_activate_action(widget, "win.open-run-model", "(ss)", item->name, item->model_json);
}

static void on_undo(GtkWidget *widget, const char *action, GVariant *parameter)
{
    TwRunList *list = TW_RUN_LIST(widget);
    if (!list->trashed->len)
        return;
    char *name = g_ptr_array_steal_index(list->trashed, list->trashed->len - 1);
    edit_run(list, TW_RUN_EDIT_UNTRASH, name, NULL);
    g_free(name);
}

static void install_run_actions(GtkWidgetClass *klass)
{
    static const char *const actions[] = {"runs.rename", "runs.notes", "runs.color", "runs.pin", "runs.delete",
                                          "runs.open-model"};
    for (size_t i = 0; i < G_N_ELEMENTS(actions); i++)
        gtk_widget_class_install_action(klass, actions[i], "x", on_run_action);
    gtk_widget_class_install_action(klass, "runs.undo", NULL, on_undo);
    gtk_widget_class_add_binding_action(klass, GDK_KEY_z, GDK_CONTROL_MASK, "runs.undo", NULL);
}

static void menu_add(GMenu *menu, const char *label, const char *action, gint64 id)
{
    GMenuItem *entry = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(entry, action, g_variant_new_int64(id));
    g_menu_append_item(menu, entry);
    g_object_unref(entry);
}

static TwRunList *list_of(GtkWidget *row)
{
    return TW_RUN_LIST(gtk_widget_get_ancestor(row, TW_TYPE_RUN_LIST));
}

/* The run's menu at (x, y) in the row. */
static void popup_row_menu(GtkWidget *row, double x, double y)
{
    GtkListItem *list_item = g_object_get_data(G_OBJECT(row), "list-item");
    TwRunItem *item = list_item ? gtk_list_item_get_item(list_item) : NULL;
    if (!item)
        return;
    GMenu *menu = g_menu_new();
    menu_add(menu, "_Rename…", "runs.rename", item->id);
    menu_add(menu, "_Notes…", "runs.notes", item->id);
    menu_add(menu, "_Colour…", "runs.color", item->id);
    menu_add(menu, item->pinned ? "_Unpin" : "_Pin to Top", "runs.pin", item->id);
    menu_add(menu, "_Delete", "runs.delete", item->id);
    /* The model twb trained, or the Keras callback's model config of an
     * imported log: greyed out when the run has none. */
    menu_add(menu, "Open _Model in Designer", "runs.open-model", item->id);
    gtk_widget_action_set_enabled(GTK_WIDGET(list_of(row)), "runs.open-model", item->model_json != NULL);
    if (list_of(row)->path) { /* the application's (app/evaluate_action.c): off where there is none */
        GMenuItem *evaluate = g_menu_item_new("_Evaluate on Test Data", NULL);
        g_menu_item_set_action_and_target_value(evaluate, "app.evaluate-run",
                                                g_variant_new("(ss)", list_of(row)->path, item->name));
        g_menu_append_item(menu, evaluate);
        g_object_unref(evaluate);
    }
    GtkWidget *popover = g_object_get_data(G_OBJECT(row), "menu");
    gtk_popover_menu_set_menu_model(GTK_POPOVER_MENU(popover), G_MENU_MODEL(menu));
    g_object_unref(menu);
    gtk_popover_set_pointing_to(GTK_POPOVER(popover), &(GdkRectangle){(int)x, (int)y, 1, 1});
    gtk_popover_popup(GTK_POPOVER(popover));
}

/* Right-click on a row. */
static void on_row_pressed(GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
    popup_row_menu(gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(gesture)), x, y);
}

/* Shift+F10 or the Menu key with the focus in a row (its check box). */
static gboolean on_row_menu_key(GtkWidget *row, GVariant *args, gpointer data)
{
    popup_row_menu(row, 24, gtk_widget_get_height(row) / 2.0);
    return TRUE;
}

static void add_row_menu(GtkWidget *row)
{
    GtkWidget *popover = gtk_popover_menu_new_from_model(NULL);
    gtk_popover_set_has_arrow(GTK_POPOVER(popover), FALSE);
    gtk_widget_set_halign(popover, GTK_ALIGN_START);
    gtk_widget_set_parent(popover, row);
    g_object_set_data(G_OBJECT(row), "menu", popover);
    GtkGesture *click = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), GDK_BUTTON_SECONDARY);
    g_signal_connect(click, "pressed", G_CALLBACK(on_row_pressed), NULL);
    gtk_widget_add_controller(row, GTK_EVENT_CONTROLLER(click));
    GtkEventController *keys = gtk_shortcut_controller_new();
    gtk_shortcut_controller_add_shortcut(
        GTK_SHORTCUT_CONTROLLER(keys),
        gtk_shortcut_new(gtk_shortcut_trigger_parse_string("<Shift>F10|Menu"),
                         gtk_callback_action_new(on_row_menu_key, NULL, NULL)));
    gtk_widget_add_controller(row, keys);
}

static GtkWidget *edit_bar(TwRunList *list)
{
    list->bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_add_css_class(list->bar, "run-edit-bar");
    list->bar_label = gtk_label_new(NULL);
    gtk_widget_add_css_class(list->bar_label, "run-edit-message");
    gtk_label_set_wrap(GTK_LABEL(list->bar_label), TRUE);
    gtk_label_set_xalign(GTK_LABEL(list->bar_label), 0);
    gtk_widget_set_hexpand(list->bar_label, TRUE);
    list->undo = gtk_button_new_with_mnemonic("_Undo");
    gtk_actionable_set_action_name(GTK_ACTIONABLE(list->undo), "runs.undo");
    gtk_widget_set_tooltip_text(list->undo, "Bring the last deleted run back (Ctrl+Z)");
    GtkWidget *close = gtk_button_new_from_icon_name("window-close-symbolic");
    gtk_widget_set_tooltip_text(close, "Hide this message");
    gtk_widget_add_css_class(close, "flat");
    g_signal_connect_swapped(close, "clicked", G_CALLBACK(gtk_widget_hide), list->bar);
    gtk_box_append(GTK_BOX(list->bar), list->bar_label);
    gtk_box_append(GTK_BOX(list->bar), list->undo);
    gtk_box_append(GTK_BOX(list->bar), close);
    gtk_widget_set_visible(list->bar, FALSE);
    return list->bar;
}

/* ---- rows ------------------------------------------------------------------------- */
static void draw_swatch(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwRunItem *item = g_object_get_data(G_OBJECT(area), "item");
    if (!item)
        return;
    tw_rgb c = item->has_color ? item->color : tw_run_color(item->color_index);
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
    gtk_box_append(GTK_BOX(state), row_label("run-pinned", FALSE));
    gtk_box_append(GTK_BOX(text), row_label("run-name", TRUE));
    gtk_box_append(GTK_BOX(text), state);
    gtk_box_append(GTK_BOX(text), row_label("run-reason", TRUE));
    gtk_box_append(GTK_BOX(row), swatch);
    gtk_box_append(GTK_BOX(row), check);
    gtk_box_append(GTK_BOX(row), text);
    g_object_set_data(G_OBJECT(row), "list-item", list_item);
    add_row_menu(row);
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
    GtkWidget *pinned = gtk_widget_get_next_sibling(duration);
    GtkWidget *reason = gtk_widget_get_next_sibling(gtk_widget_get_parent(dot));
    g_object_set_data_full(G_OBJECT(swatch), "item", g_object_ref(item), g_object_unref);
    gtk_widget_queue_draw(swatch);
    GPtrArray *bindings = g_ptr_array_new_with_free_func(g_object_unref);
    bind(bindings, item, "checked", check, "active", G_BINDING_BIDIRECTIONAL);
    bind(bindings, item, "name", name, "label", 0);
    bind(bindings, item, "running", dot, "visible", 0);
    bind(bindings, item, "status", status, "label", 0);
    bind(bindings, item, "duration", duration, "label", 0);
    gtk_label_set_label(GTK_LABEL(pinned), "· pinned");
    bind(bindings, item, "pinned", pinned, "visible", 0);
    bind(bindings, item, "reason", reason, "label", 0);
    gtk_widget_set_visible(reason, item->reason && *item->reason);
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
    /* Pinned runs on top, each part still newest first. */
    GPtrArray *pinned_first = g_ptr_array_new_full(items->len, g_object_unref);
    for (int pass = 0; pass < 2; pass++)
        for (guint i = 0; i < items->len; i++)
            if (TW_RUN_ITEM(items->pdata[i])->pinned == (pass == 0))
                g_ptr_array_add(pinned_first, g_object_ref(items->pdata[i]));
    g_ptr_array_unref(items);
    return pinned_first;
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
    if (g_strcmp0(list->path, tw_dashboard_data_path(data))) {
        g_free(list->path);
        list->path = g_strdup(tw_dashboard_data_path(data));
    }
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
    empty_trash(list); /* its runs are the old file's */
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
    if (item && item->has_color)
        return item->color;
    return tw_run_color(item ? item->color_index : 0);
}

void tw_run_list_set_checked(TwRunList *list, gint64 run_id, gboolean checked)
{
    TwRunItem *item = g_hash_table_lookup(list->items, &run_id);
    if (item)
        g_object_set(item, "checked", checked, NULL);
}

void tw_run_list_set_checked_many(TwRunList *list, const gint64 *run_ids, const gboolean *checked, int n)
{
    list->batch = TRUE;
    list->batched = FALSE;
    for (int i = 0; i < n; i++)
        tw_run_list_set_checked(list, run_ids[i], checked[i]);
    list->batch = FALSE;
    if (list->batched)
        g_signal_emit(list, signals[SIGNAL_CHANGED], 0);
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
    if (list->trashed)
        empty_trash(list);
    g_clear_pointer(&list->trashed, g_ptr_array_unref);
    g_clear_pointer(&list->path, g_free);
    list->bar = NULL; /* edits finishing later find the list gone */
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
    install_run_actions(GTK_WIDGET_CLASS(klass));
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
    list->trashed = g_ptr_array_new_with_free_func(g_free);
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
    gtk_box_append(GTK_BOX(list->box), edit_bar(list));
    gtk_box_append(GTK_BOX(list->box), list_view(list));
}

GtkWidget *tw_run_list_new(void)
{
    return g_object_new(TW_TYPE_RUN_LIST, NULL);
}
