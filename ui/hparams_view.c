/* TwHparamsView (hparams_view.h): a GtkListView of TwHpCells rows under
 * a header of the same kind (hparams_rows.h) over a GListStore of row
 * items, the table's rows passing the filter sorted by the clicked
 * header's column, with a GtkMultiSelection mirrored to and from the run
 * list's check boxes; two GtkDrawingAreas drawing the plots.
 *
 * The store's items are places in the order, not rows: filtering or
 * sorting rewrites which row each item holds and redraws the rows' widgets,
 * and only adds or removes items at the end. GTK 4.8's list view keeps a
 * widget for each of up to 200 items it had; items it has not seen get new
 * widgets (and the old are destroyed): a filter through a
 * GtkFilterListModel of row items built and destroyed ~150 widgets, most
 * of its frame with 1,000 runs. */
#include "hparams_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tw/error.h>

#include "hparams_layer.h"
#include "hparams_render.h"
#include "hparams_rows.h"

#define PLOT_HEIGHT 260
#define EXPORT_MIN_WIDTH 480
#define EXPORT_MIN_HEIGHT 320

/* ---- TwHpRow: a table row in the list model ------------------------------------ */
#define TW_TYPE_HP_ROW (tw_hp_row_get_type())
G_DECLARE_FINAL_TYPE(TwHpRow, tw_hp_row, TW, HP_ROW, GObject)

struct _TwHpRow {
    GObject parent_instance;
    int row;
    gint64 id;
};

G_DEFINE_FINAL_TYPE(TwHpRow, tw_hp_row, G_TYPE_OBJECT)

static void tw_hp_row_class_init(TwHpRowClass *klass)
{
}

static void tw_hp_row_init(TwHpRow *row)
{
}

static TwHpRow *hp_row_new(int row, gint64 id)
{
    TwHpRow *item = g_object_new(TW_TYPE_HP_ROW, NULL);
    item->row = row;
    item->id = id;
    return item;
}

/* ---- the view ------------------------------------------------------------------ */
struct _TwHparamsView {
    GtkWidget parent_instance;
    GtkWidget *box, *entry, *columns_button, *columns_box, *empty, *header, *list_view;
    GtkWidget *export_error; /* why the last export failed, under the toolbar */
    GtkNativeDialog *export_dialog; /* while an export asks where: it goes with the view */
    tw_hp_layout layout;      /* the columns shown, read by every row (hparams_rows.h) */
    GtkCustomSorter *sorter;
    GtkWidget *parallel, *scatter, *scatter_x, *scatter_y;
    tw_hp_layer *parallel_base, *scatter_base; /* the plots' grey layers, kept (hparams_layer.h) */
    TwRunList *runs;
    tw_hp_table *table;
    char **column_keys;       /* "h:name" / "m:name" of the columns built, to tell when they change */
    GHashTable *hidden;       /* keys of hidden columns (kept across rebuilds) */
    char *query;              /* the last valid filter */
    GListStore *store;        /* TwHpRow: the rows shown, in order (update_rows) */
    GtkMultiSelection *selection;
    gboolean syncing;         /* setting the selection from the run list */
    gboolean pushing;         /* checking runs from the selection */
    int scatter_x_column, scatter_y_column;
    int *x_choices, *y_choices; /* the dropdowns' columns */
};

G_DEFINE_FINAL_TYPE(TwHparamsView, tw_hparams_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_RUN_LIST, N_PROPS };
static GParamSpec *props[N_PROPS];

static char *column_key(const tw_hp_column *col)
{
    return g_strconcat(col->role == TW_HP_METRIC ? "m:" : "h:", col->name, NULL);
}

/* ---- the selection <-> the run list's checks ------------------------------------- */
static void selection_from_runs(TwHparamsView *self)
{
    GListModel *model = G_LIST_MODEL(self->store);
    guint n = g_list_model_get_n_items(model);
    GtkBitset *selected = gtk_bitset_new_empty(), *mask = gtk_bitset_new_range(0, n);
    for (guint i = 0; i < n; i++) {
        TwHpRow *item = g_list_model_get_item(model, i);
        if (tw_run_list_checked(self->runs, item->id))
            gtk_bitset_add(selected, i);
        g_object_unref(item);
    }
    self->syncing = TRUE;
    gtk_selection_model_set_selection(GTK_SELECTION_MODEL(self->selection), selected, mask);
    self->syncing = FALSE;
    gtk_bitset_unref(selected);
    gtk_bitset_unref(mask);
    gtk_widget_queue_draw(self->parallel);
    gtk_widget_queue_draw(self->scatter);
}

static void on_runs_checked(TwHparamsView *self)
{
    if (!self->pushing)
        selection_from_runs(self);
}

/* Exactly the selected rows' runs checked: the rows filtered out and the
 * runs without a row (none: every run has one) are unchecked. */
static void runs_from_selection(TwHparamsView *self)
{
    if (!self->table)
        return;
    GHashTable *chosen = g_hash_table_new(g_int64_hash, g_int64_equal);
    GListModel *model = G_LIST_MODEL(self->store);
    guint n = g_list_model_get_n_items(model);
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (guint i = 0; i < n; i++)
        if (gtk_selection_model_is_selected(GTK_SELECTION_MODEL(self->selection), i)) {
            TwHpRow *item = g_list_model_get_item(model, i);
            g_array_append_val(ids, item->id);
            g_object_unref(item);
        }
    for (guint i = 0; i < ids->len; i++)
        g_hash_table_add(chosen, &g_array_index(ids, gint64, i));
    int n_rows = tw_hp_table_n_rows(self->table);
    gint64 *runs = g_new(gint64, MAX(n_rows, 1));
    gboolean *checked = g_new(gboolean, MAX(n_rows, 1));
    for (int r = 0; r < n_rows; r++) {
        runs[r] = tw_hp_table_run_id(self->table, r);
        checked[r] = g_hash_table_contains(chosen, &runs[r]);
    }
    self->pushing = TRUE;
    tw_run_list_set_checked_many(self->runs, runs, checked, n_rows); /* one "changed" for the charts */
    self->pushing = FALSE;
    g_free(runs);
    g_free(checked);
    g_hash_table_unref(chosen);
    g_array_unref(ids);
    gtk_widget_queue_draw(self->parallel);
    gtk_widget_queue_draw(self->scatter);
}

static void on_selection_changed(TwHparamsView *self)
{
    if (!self->syncing)
        runs_from_selection(self);
}

/* ---- the plots --------------------------------------------------------------------- */
typedef struct {
    tw_hp_plot plot;
    int *rows;
    bool *selected;
    tw_rgb *colors;
} plot_data;

/* The rows shown, in order, with the selection and the runs' colours. */
static void plot_data_init(TwHparamsView *self, plot_data *d, gboolean dark)
{
    int n = self->table ? tw_hp_table_n_rows(self->table) : 0;
    GListModel *model = G_LIST_MODEL(self->store);
    guint shown = g_list_model_get_n_items(model);
    d->rows = g_new(int, MAX(shown, 1));
    d->selected = g_new0(bool, MAX(n, 1));
    d->colors = g_new(tw_rgb, MAX(n, 1));
    for (guint i = 0; i < shown; i++) {
        TwHpRow *item = g_list_model_get_item(model, i);
        d->rows[i] = item->row;
        g_object_unref(item);
    }
    for (int r = 0; r < n; r++) {
        gint64 id = tw_hp_table_run_id(self->table, r);
        d->selected[r] = tw_run_list_checked(self->runs, id);
        d->colors[r] = tw_run_list_color(self->runs, id);
    }
    d->plot = (tw_hp_plot){self->table, d->rows, self->table ? (int)shown : 0, d->selected, d->colors, dark};
}

static void plot_data_clear(plot_data *d)
{
    g_free(d->rows);
    g_free(d->selected);
    g_free(d->colors);
}

/* Light text on a dark theme: the renderers' dark style (chart_view.c's test). */
static gboolean is_dark(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
}

/* The parallel plot's axes: the columns shown whose values differ (a
 * column every run shares says nothing there). */
static int axis_columns(TwHparamsView *self, int *columns)
{
    int n = 0;
    for (int c = 0; self->table && c < tw_hp_table_n_columns(self->table) && n < TW_HP_MAX_AXES; c++) {
        const tw_hp_column *col = tw_hp_table_column(self->table, c);
        bool constant = col->kind == TW_HP_NUMBER ? !(col->hi > col->lo) : col->ncategories < 2;
        if (!col->hidden && col->kind != TW_HP_MISSING && !constant)
            columns[n++] = c;
    }
    return n;
}

typedef struct {
    TwHparamsView *self;
    gboolean dark;
} draw_job;

static void draw_parallel_job(cairo_t *cr, int width, int height, void *user_data)
{
    draw_job *job = user_data;
    plot_data d;
    plot_data_init(job->self, &d, job->dark);
    int columns[TW_HP_MAX_AXES];
    int n = axis_columns(job->self, columns);
    tw_hp_render_parallel(cr, width, height, &d.plot, columns, n);
    plot_data_clear(&d);
}

static void draw_scatter_job(cairo_t *cr, int width, int height, void *user_data)
{
    draw_job *job = user_data;
    plot_data d;
    plot_data_init(job->self, &d, job->dark);
    tw_hp_render_scatter(cr, width, height, &d.plot, job->self->scatter_x_column, job->self->scatter_y_column);
    plot_data_clear(&d);
}

/* On screen a plot is its kept base layer with the selected rows drawn
 * over it: a selection change draws only those. */
typedef struct {
    const tw_hp_plot *plot;
    const int *columns; /* the parallel plot's axes; the scatter's x and y */
    int ncolumns;
} base_job;

static void draw_parallel_base(cairo_t *cr, int width, int height, void *user_data)
{
    base_job *job = user_data;
    tw_hp_render_parallel_base(cr, width, height, job->plot, job->columns, job->ncolumns);
}

static void draw_scatter_base(cairo_t *cr, int width, int height, void *user_data)
{
    base_job *job = user_data;
    tw_hp_render_scatter_base(cr, width, height, job->plot, job->columns[0], job->columns[1]);
}

static int compare_ints(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The plot's columns: the parallel plot's axes, the scatter's x and y. */
static int plot_columns(TwHparamsView *self, GtkWidget *area, int *columns)
{
    if (area == self->parallel)
        return axis_columns(self, columns);
    columns[0] = self->scatter_x_column;
    columns[1] = self->scatter_y_column;
    return 2;
}

/* The area's base layer brought up to date. It draws the rows shown in
 * the table's order, not the sort's: the grey is the same whichever way
 * the table is sorted, and a sort keeps the layer. Its key beyond its
 * size: the theme, those rows and the columns drawn (the table itself:
 * set_runs invalidates). */
static tw_hp_layer *update_base(TwHparamsView *self, GtkWidget *area, const tw_hp_plot *plot, int width, int height)
{
    int columns[TW_HP_MAX_AXES];
    int ncolumns = plot_columns(self, area, columns);
    tw_hp_plot unsorted = *plot;
    int *rows = g_memdup2(plot->rows, sizeof(int) * MAX(plot->nrows, 1));
    qsort(rows, plot->nrows, sizeof(int), compare_ints);
    unsorted.rows = rows;
    GArray *key = g_array_sized_new(FALSE, FALSE, sizeof(int), 3 + plot->nrows + ncolumns);
    int head[] = {plot->dark, plot->nrows, ncolumns};
    g_array_append_vals(key, head, G_N_ELEMENTS(head));
    g_array_append_vals(key, rows, plot->nrows);
    g_array_append_vals(key, columns, ncolumns);
    base_job job = {&unsorted, columns, ncolumns};
    tw_hp_layer *layer = area == self->parallel ? self->parallel_base : self->scatter_base;
    tw_hp_layer_update(layer, width, height, gtk_widget_get_scale_factor(area), key,
                       area == self->parallel ? draw_parallel_base : draw_scatter_base, &job);
    g_array_unref(key);
    g_free(rows);
    return layer;
}

/* The plots' base layers drawn as soon as the rows change, not at the
 * next frame: GTK starts a frame at most every 16.7 ms, and a change made
 * just after one (the next keystroke of a filter) waits for the next; the
 * layers are drawn in that wait rather than after it. The frame then
 * finds them up to date, unless the plots' size changed meanwhile. */
static void prepare_plots(TwHparamsView *self)
{
    GtkWidget *areas[] = {self->parallel, self->scatter};
    for (size_t i = 0; i < G_N_ELEMENTS(areas); i++) {
        int width = gtk_widget_get_width(areas[i]), height = gtk_widget_get_height(areas[i]);
        if (!gtk_widget_get_mapped(areas[i]) || width < 1 || height < 1)
            continue; /* drawn when shown */
        plot_data d;
        plot_data_init(self, &d, is_dark(areas[i]));
        update_base(self, areas[i], &d.plot, width, height);
        plot_data_clear(&d);
    }
}

static void draw_parallel(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwHparamsView *self = data;
    plot_data d;
    plot_data_init(self, &d, is_dark(GTK_WIDGET(area)));
    tw_hp_layer_paint(update_base(self, GTK_WIDGET(area), &d.plot, width, height), cr);
    int columns[TW_HP_MAX_AXES];
    int n = axis_columns(self, columns);
    tw_hp_render_parallel_selected(cr, width, height, &d.plot, columns, n);
    plot_data_clear(&d);
}

static void draw_scatter(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
    TwHparamsView *self = data;
    plot_data d;
    plot_data_init(self, &d, is_dark(GTK_WIDGET(area)));
    tw_hp_layer_paint(update_base(self, GTK_WIDGET(area), &d.plot, width, height), cr);
    tw_hp_render_scatter_selected(cr, width, height, &d.plot, self->scatter_x_column, self->scatter_y_column);
    plot_data_clear(&d);
}

/* A click on a point selects its run (Ctrl: adds or removes it). */
static void on_scatter_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TwHparamsView *self)
{
    if (!self->table)
        return;
    plot_data d;
    plot_data_init(self, &d, FALSE);
    int row = tw_hp_scatter_hit(gtk_widget_get_width(self->scatter), gtk_widget_get_height(self->scatter), &d.plot,
                                self->scatter_x_column, self->scatter_y_column, x, y);
    plot_data_clear(&d);
    if (row < 0)
        return;
    gint64 id = tw_hp_table_run_id(self->table, row);
    GdkModifierType mods = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture));
    if (!(mods & GDK_CONTROL_MASK)) {
        tw_hparams_view_select(self, &id, 1);
        return;
    }
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (int r = 0; r < tw_hp_table_n_rows(self->table); r++) {
        gint64 other = tw_hp_table_run_id(self->table, r);
        if (tw_run_list_checked(self->runs, other) != (other == id))
            g_array_append_val(ids, other);
    }
    tw_hparams_view_select(self, (const gint64 *)ids->data, (int)ids->len);
    g_array_unref(ids);
}

/* ---- the scatter's axes ---------------------------------------------------------------- */
static int *fill_dropdown(TwHparamsView *self, GtkWidget *dropdown, tw_hp_role role, int current,
                          const char *preferred, int *chosen)
{
    GtkStringList *names = gtk_string_list_new(NULL);
    int n = self->table ? tw_hp_table_n_columns(self->table) : 0, count = 0, pick = -1;
    int *columns = g_new(int, MAX(n, 1));
    for (int c = 0; c < n; c++) {
        const tw_hp_column *col = tw_hp_table_column(self->table, c);
        if (col->role != role || col->kind == TW_HP_MISSING)
            continue;
        if (c == current || (pick < 0 && preferred && !strcmp(col->name, preferred)))
            pick = count;
        columns[count++] = c;
        gtk_string_list_append(names, col->name);
    }
    if (pick < 0 && count > 0)
        pick = 0;
    *chosen = pick >= 0 ? columns[pick] : -1;
    gtk_drop_down_set_model(GTK_DROP_DOWN(dropdown), G_LIST_MODEL(names));
    g_object_unref(names);
    if (pick >= 0)
        gtk_drop_down_set_selected(GTK_DROP_DOWN(dropdown), (guint)pick);
    return columns;
}

static void on_scatter_axis(TwHparamsView *self)
{
    guint x = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->scatter_x));
    guint y = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->scatter_y));
    GListModel *xm = gtk_drop_down_get_model(GTK_DROP_DOWN(self->scatter_x));
    GListModel *ym = gtk_drop_down_get_model(GTK_DROP_DOWN(self->scatter_y));
    if (xm && x < g_list_model_get_n_items(xm))
        self->scatter_x_column = self->x_choices[x];
    if (ym && y < g_list_model_get_n_items(ym))
        self->scatter_y_column = self->y_choices[y];
    gtk_widget_queue_draw(self->scatter);
}

/* ---- the table's columns ---------------------------------------------------------------- */
static void setup_row(GtkSignalListItemFactory *factory, GtkListItem *list_item, TwHparamsView *self)
{
    GtkWidget *cells = tw_hp_cells_new(&self->layout, FALSE);
    g_object_set_data(G_OBJECT(cells), "list-item", list_item); /* for update_rows */
    gtk_list_item_set_child(list_item, cells);
}

static void bind_row(GtkSignalListItemFactory *factory, GtkListItem *list_item)
{
    TwHpRow *item = gtk_list_item_get_item(list_item);
    tw_hp_cells_set_row(TW_HP_CELLS(gtk_list_item_get_child(list_item)), item->row);
}

/* The sort: by the layout's column, missing values last either way. */
static int compare_rows(gconstpointer a, gconstpointer b, gpointer data)
{
    TwHparamsView *self = data;
    int x = *(const int *)a, y = *(const int *)b;
    if (!self->table || self->layout.sort_column < TW_HP_NAME_COLUMN)
        return 0;
    const tw_hp_value *vx = self->layout.sort_column >= 0 ? tw_hp_table_cell(self->table, x, self->layout.sort_column)
                                                           : NULL;
    const tw_hp_value *vy = self->layout.sort_column >= 0 ? tw_hp_table_cell(self->table, y, self->layout.sort_column)
                                                           : NULL;
    int c = tw_hp_table_compare(self->table, self->layout.sort_column, x, y);
    gboolean missing = vx && vy && (vx->kind == TW_HP_MISSING) != (vy->kind == TW_HP_MISSING);
    if (self->layout.descending && !missing)
        c = -c;
    return c;
}

/* The store holds the rows passing the filter, sorted (g_qsort_with_data
 * is stable: unsorted or equal, the table's order, newest first). Items
 * are rewritten in place and their widgets told; only the count's change
 * goes through the store, at its end. The selection, by place, is set
 * from the runs' checks after. */
static void update_rows(TwHparamsView *self)
{
    int n = self->table ? tw_hp_table_n_rows(self->table) : 0, shown = 0;
    int *order = g_new(int, MAX(n, 1));
    for (int r = 0; r < n; r++)
        if (tw_hp_table_row_passes(self->table, r))
            order[shown++] = r;
    g_qsort_with_data(order, shown, sizeof(int), compare_rows, self);
    GListModel *model = G_LIST_MODEL(self->store);
    guint had = g_list_model_get_n_items(model), kept = MIN(had, (guint)shown);
    for (guint i = 0; i < kept; i++) {
        TwHpRow *item = g_list_model_get_item(model, i);
        item->row = order[i];
        item->id = tw_hp_table_run_id(self->table, order[i]);
        g_object_unref(item);
    }
    GPtrArray *added = g_ptr_array_new_with_free_func(g_object_unref);
    for (int i = (int)kept; i < shown; i++)
        g_ptr_array_add(added, hp_row_new(order[i], tw_hp_table_run_id(self->table, order[i])));
    self->syncing = TRUE;
    g_list_store_splice(self->store, kept, had - kept, added->pdata, added->len);
    self->syncing = FALSE;
    g_ptr_array_unref(added);
    g_free(order);
    selection_from_runs(self);
    /* The widgets of items kept: bound before, shown their new rows. After
     * the selection: a row on screen draws its cells at once, in the
     * colours of its state (selected or not). */
    for (GtkWidget *w = gtk_widget_get_first_child(self->list_view); w; w = gtk_widget_get_next_sibling(w)) {
        GtkWidget *cells = gtk_widget_get_first_child(w);
        GtkListItem *list_item = cells ? g_object_get_data(G_OBJECT(cells), "list-item") : NULL;
        TwHpRow *item = list_item ? gtk_list_item_get_item(list_item) : NULL;
        if (item)
            tw_hp_cells_set_row(TW_HP_CELLS(cells), item->row);
    }
    prepare_plots(self);
}

/* The layout again (columns shown, widths), the rows drawn again. */
static void relayout(TwHparamsView *self)
{
    int sort = self->layout.sort_column;
    gboolean descending = self->layout.descending;
    tw_hp_layout_update(&self->layout, self->table);
    self->layout.sort_column = sort;
    self->layout.descending = descending;
    tw_hp_cells_invalidate(self->header);
    tw_hp_cells_invalidate(self->list_view);
    gtk_widget_queue_draw(self->parallel);
}

/* A click on a header sorts by its column; again, the other way. */
static void on_header_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TwHparamsView *self)
{
    int i = tw_hp_layout_column_at(&self->layout, x);
    if (i < 0)
        return;
    int column = self->layout.columns[i];
    gboolean descending = column == self->layout.sort_column ? !self->layout.descending : FALSE;
    const char *name = column >= 0 ? tw_hp_table_column(self->table, column)->name : NULL;
    tw_hparams_view_sort(self, name, descending);
}

static void on_column_toggled(GtkCheckButton *check, TwHparamsView *self)
{
    const char *key = g_object_get_data(G_OBJECT(check), "key");
    tw_hparams_view_set_column_visible(self, strchr(key, ':') + 1, gtk_check_button_get_active(check));
}

static gboolean same_keys(char **a, char **b)
{
    if (!a || !b)
        return a == b;
    return g_strv_equal((const char *const *)a, (const char *const *)b);
}

/* The Columns menu's check boxes: rebuilt only when the columns' names
 * changed. The hidden ones (by name) are hidden in the new table too. */
static void rebuild_columns(TwHparamsView *self)
{
    int n = tw_hp_table_n_columns(self->table);
    char **keys = g_new0(char *, n + 1);
    for (int c = 0; c < n; c++)
        keys[c] = column_key(tw_hp_table_column(self->table, c));
    for (int c = 0; c < n; c++)
        tw_hp_table_set_hidden(self->table, c, g_hash_table_contains(self->hidden, keys[c]));
    if (same_keys(keys, self->column_keys)) {
        g_strfreev(keys);
        return;
    }
    g_strfreev(self->column_keys);
    self->column_keys = keys;
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->columns_box)))
        gtk_box_remove(GTK_BOX(self->columns_box), child);
    for (int c = 0; c < n; c++) {
        const tw_hp_column *tc = tw_hp_table_column(self->table, c);
        GtkWidget *check = gtk_check_button_new_with_label(tc->name);
        gtk_check_button_set_active(GTK_CHECK_BUTTON(check), !tc->hidden);
        g_object_set_data_full(G_OBJECT(check), "key", g_strdup(keys[c]), g_free);
        g_signal_connect(check, "toggled", G_CALLBACK(on_column_toggled), self);
        gtk_box_append(GTK_BOX(self->columns_box), check);
    }
}

/* ---- the filter --------------------------------------------------------------------- */
static void on_filter_changed(TwHparamsView *self)
{
    const char *text = gtk_editable_get_text(GTK_EDITABLE(self->entry));
    char *error = NULL;
    if (self->table && tw_hp_table_set_filter(self->table, text, &error)) {
        gtk_widget_add_css_class(self->entry, "error");
        gtk_widget_set_tooltip_text(self->entry, error);
        g_free(error);
        return;
    }
    gtk_widget_remove_css_class(self->entry, "error");
    gtk_widget_set_tooltip_text(self->entry, "Terms all rows must pass: lr>=1e-3 batch_size=32..64 optimizer=adam "
                                             "(a word alone matches run names)");
    g_free(self->query);
    self->query = g_strdup(text);
    update_rows(self);
}

/* ---- public ------------------------------------------------------------------------------ */
void tw_hparams_view_sync(TwHparamsView *self, TwDashboardData *data)
{
    g_return_if_fail(TW_IS_HPARAMS_VIEW(self));
    int n = tw_dashboard_data_n_runs(data);
    tw_run_info *runs = g_new(tw_run_info, MAX(n, 1));
    for (int i = 0; i < n; i++)
        runs[i] = *tw_dashboard_data_run(data, n - 1 - i); /* newest first, as the run list; borrowed */
    tw_hparams_view_set_runs(self, runs, n);
    g_free(runs);
}

void tw_hparams_view_set_runs(TwHparamsView *self, const tw_run_info *runs, int n)
{
    tw_hp_table *table = tw_hp_table_new(runs, n);
    char *error = NULL;
    if (tw_hp_table_set_filter(table, self->query, &error)) { /* a column the query named is gone */
        g_free(error);
        tw_hp_table_set_filter(table, NULL, &error);
    }
    tw_hp_table *old = self->table;
    self->table = table;
    tw_hp_layer_invalidate(self->parallel_base); /* drawn from the old table's values */
    tw_hp_layer_invalidate(self->scatter_base);
    rebuild_columns(self);
    relayout(self);
    g_free(self->x_choices);
    g_free(self->y_choices);
    int x = self->scatter_x_column, y = self->scatter_y_column;
    g_signal_handlers_block_by_func(self->scatter_x, on_scatter_axis, self);
    g_signal_handlers_block_by_func(self->scatter_y, on_scatter_axis, self);
    self->x_choices = fill_dropdown(self, self->scatter_x, TW_HP_HPARAM, x, "learning_rate", &self->scatter_x_column);
    self->y_choices = fill_dropdown(self, self->scatter_y, TW_HP_METRIC, y, "test_loss", &self->scatter_y_column);
    g_signal_handlers_unblock_by_func(self->scatter_x, on_scatter_axis, self);
    g_signal_handlers_unblock_by_func(self->scatter_y, on_scatter_axis, self);
    update_rows(self); /* with the scatter's columns chosen: its layer is drawn for them */
    tw_hp_table_free(old);
    gtk_widget_set_visible(self->empty, n == 0);
}

const tw_hp_table *tw_hparams_view_table(TwHparamsView *self)
{
    return self->table;
}

guint tw_hparams_view_n_shown(TwHparamsView *self)
{
    return g_list_model_get_n_items(G_LIST_MODEL(self->store));
}

gint64 tw_hparams_view_shown_run(TwHparamsView *self, guint position)
{
    TwHpRow *item = g_list_model_get_item(G_LIST_MODEL(self->store), position);
    gint64 id = item ? item->id : -1;
    g_clear_object(&item);
    return id;
}

void tw_hparams_view_select(TwHparamsView *self, const gint64 *run_ids, int n)
{
    GListModel *model = G_LIST_MODEL(self->store);
    guint count = g_list_model_get_n_items(model);
    GtkBitset *selected = gtk_bitset_new_empty(), *mask = gtk_bitset_new_range(0, count);
    for (guint i = 0; i < count; i++) {
        TwHpRow *item = g_list_model_get_item(model, i);
        for (int k = 0; k < n; k++)
            if (run_ids[k] == item->id)
                gtk_bitset_add(selected, i);
        g_object_unref(item);
    }
    gtk_selection_model_set_selection(GTK_SELECTION_MODEL(self->selection), selected, mask); /* runs follow */
    gtk_bitset_unref(selected);
    gtk_bitset_unref(mask);
}

gboolean tw_hparams_view_selected(TwHparamsView *self, gint64 run_id)
{
    guint n = tw_hparams_view_n_shown(self);
    for (guint i = 0; i < n; i++)
        if (tw_hparams_view_shown_run(self, i) == run_id)
            return gtk_selection_model_is_selected(GTK_SELECTION_MODEL(self->selection), i);
    return FALSE;
}

GtkEditable *tw_hparams_view_filter_entry(TwHparamsView *self)
{
    return GTK_EDITABLE(self->entry);
}

void tw_hparams_view_sort(TwHparamsView *self, const char *column, gboolean descending)
{
    int c = column && self->table ? tw_hp_table_find_column(self->table, TW_HP_HPARAM, column) : TW_HP_NAME_COLUMN;
    if (c < 0 && column && self->table)
        c = tw_hp_table_find_column(self->table, TW_HP_METRIC, column);
    if (c < TW_HP_NAME_COLUMN || (column && c < 0))
        return;
    self->layout.sort_column = c;
    self->layout.descending = descending;
    update_rows(self);
    tw_hp_cells_invalidate(self->header);
}

void tw_hparams_view_set_column_visible(TwHparamsView *self, const char *column, gboolean visible)
{
    for (int c = 0; self->table && c < tw_hp_table_n_columns(self->table); c++) {
        char *key = column_key(tw_hp_table_column(self->table, c));
        if (!strcmp(tw_hp_table_column(self->table, c)->name, column)) {
            if (visible)
                g_hash_table_remove(self->hidden, key);
            else
                g_hash_table_add(self->hidden, g_strdup(key));
        }
        tw_hp_table_set_hidden(self->table, c, g_hash_table_contains(self->hidden, key));
        g_free(key);
    }
    for (GtkWidget *check = gtk_widget_get_first_child(self->columns_box); check;
         check = gtk_widget_get_next_sibling(check)) {
        const char *key = g_object_get_data(G_OBJECT(check), "key");
        g_signal_handlers_block_by_func(check, on_column_toggled, self);
        gtk_check_button_set_active(GTK_CHECK_BUTTON(check), !g_hash_table_contains(self->hidden, key));
        g_signal_handlers_unblock_by_func(check, on_column_toggled, self);
    }
    relayout(self);
}

void tw_hparams_view_set_scatter(TwHparamsView *self, const char *x, const char *y)
{
    if (!self->table)
        return;
    int xc = x ? tw_hp_table_find_column(self->table, TW_HP_HPARAM, x) : -1;
    int yc = y ? tw_hp_table_find_column(self->table, TW_HP_METRIC, y) : -1;
    GListModel *xm = gtk_drop_down_get_model(GTK_DROP_DOWN(self->scatter_x));
    GListModel *ym = gtk_drop_down_get_model(GTK_DROP_DOWN(self->scatter_y));
    for (guint i = 0; xc >= 0 && xm && i < g_list_model_get_n_items(xm); i++)
        if (self->x_choices[i] == xc)
            gtk_drop_down_set_selected(GTK_DROP_DOWN(self->scatter_x), i);
    for (guint i = 0; yc >= 0 && ym && i < g_list_model_get_n_items(ym); i++)
        if (self->y_choices[i] == yc)
            gtk_drop_down_set_selected(GTK_DROP_DOWN(self->scatter_y), i);
}

gboolean tw_hparams_view_export(TwHparamsView *self, const char *what, const char *path, GError **error)
{
    int rc = 0;
    if (!self->table)
        rc = tw_error_set("%s: no runs to export", path);
    else if (!strcmp(what, "csv")) {
        plot_data d;
        plot_data_init(self, &d, FALSE);
        char *csv = tw_hp_table_csv(self->table, d.rows, d.plot.nrows);
        GError *io = NULL;
        if (!g_file_set_contents(path, csv, -1, &io)) {
            rc = tw_error_set("%s", io->message);
            g_error_free(io);
        }
        g_free(csv);
        plot_data_clear(&d);
    } else {
        gboolean parallel = !strcmp(what, "parallel");
        GtkWidget *area = parallel ? self->parallel : self->scatter;
        int width = MAX(gtk_widget_get_width(area), EXPORT_MIN_WIDTH);
        int height = MAX(gtk_widget_get_height(area), EXPORT_MIN_HEIGHT);
        draw_job job = {self, FALSE};
        rc = tw_hp_render_export(path, width, height, parallel ? draw_parallel_job : draw_scatter_job, &job);
    }
    if (rc)
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, tw_last_error());
    return rc == 0;
}

/* ---- exporting from the menu -------------------------------------------------------------- */
static void on_export_chosen(GtkNativeDialog *dialog, int response, TwHparamsView *self)
{
    const char *what = g_object_get_data(G_OBJECT(dialog), "what");
    if (response == GTK_RESPONSE_ACCEPT) {
        GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        char *path = g_file_get_path(file);
        GError *error = NULL;
        gtk_widget_set_visible(self->export_error, FALSE);
        if (path && !tw_hparams_view_export(self, what, path, &error)) {
            gtk_label_set_text(GTK_LABEL(self->export_error), error->message);
            gtk_widget_set_visible(self->export_error, TRUE);
            g_error_free(error);
        }
        g_free(path);
        g_object_unref(file);
    }
    gtk_native_dialog_destroy(dialog);
    g_clear_object(&self->export_dialog);
}

static void drop_export_dialog(TwHparamsView *self)
{
    if (self->export_dialog)
        gtk_native_dialog_destroy(self->export_dialog);
    g_clear_object(&self->export_dialog);
}

static void on_export(GtkWidget *widget, const char *action, GVariant *parameter)
{
    TwHparamsView *self = TW_HPARAMS_VIEW(widget);
    const char *target = g_variant_get_string(parameter, NULL); /* "csv", "parallel.png", ... */
    drop_export_dialog(self);
    GtkRoot *root = gtk_widget_get_root(widget);
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new("Export", GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL,
                                                               GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
    char *what = g_strndup(target, strcspn(target, "."));
    char *name = g_strconcat(!strcmp(what, "csv") ? "hparams" : what, !strcmp(what, "csv") ? ".csv" : "",
                             strchr(target, '.') ? strchr(target, '.') : "", NULL);
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), name);
    g_free(name);
    g_object_set_data_full(G_OBJECT(dialog), "what", what, g_free);
    g_signal_connect(dialog, "response", G_CALLBACK(on_export_chosen), self);
    self->export_dialog = GTK_NATIVE_DIALOG(dialog);
    gtk_native_dialog_show(self->export_dialog);
}

static GtkWidget *export_button(void)
{
    GMenu *menu = g_menu_new();
    g_menu_append(menu, "Table as _CSV…", "hparams.export::csv");
    g_menu_append(menu, "_Parallel Coordinates as PNG…", "hparams.export::parallel.png");
    g_menu_append(menu, "Parallel Coordinates as _SVG…", "hparams.export::parallel.svg");
    g_menu_append(menu, "Sc_atter as PNG…", "hparams.export::scatter.png");
    g_menu_append(menu, "Scatter as S_VG…", "hparams.export::scatter.svg");
    GtkWidget *button = gtk_menu_button_new();
    gtk_menu_button_set_label(GTK_MENU_BUTTON(button), "Export");
    gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(button), G_MENU_MODEL(menu));
    g_object_unref(menu);
    return button;
}

/* ---- the widget ------------------------------------------------------------------------------- */
static void tw_hparams_view_dispose(GObject *object)
{
    TwHparamsView *self = TW_HPARAMS_VIEW(object);
    drop_export_dialog(self);
    if (self->runs)
        g_signal_handlers_disconnect_by_data(self->runs, self);
    g_clear_object(&self->runs);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    g_clear_object(&self->selection);
    tw_hp_layout_clear(&self->layout);
    g_clear_object(&self->store);
    g_clear_pointer(&self->table, tw_hp_table_free);
    g_clear_pointer(&self->parallel_base, tw_hp_layer_free);
    g_clear_pointer(&self->scatter_base, tw_hp_layer_free);
    g_clear_pointer(&self->column_keys, g_strfreev);
    g_clear_pointer(&self->hidden, g_hash_table_unref);
    g_clear_pointer(&self->query, g_free);
    g_clear_pointer(&self->x_choices, g_free);
    g_clear_pointer(&self->y_choices, g_free);
    G_OBJECT_CLASS(tw_hparams_view_parent_class)->dispose(object);
}

static void tw_hparams_view_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwHparamsView *self = TW_HPARAMS_VIEW(object);
    if (id == PROP_RUN_LIST) {
        self->runs = g_value_dup_object(value);
        if (self->runs)
            g_signal_connect_swapped(self->runs, "changed", G_CALLBACK(on_runs_checked), self);
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_hparams_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_RUN_LIST)
        g_value_set_object(value, TW_HPARAMS_VIEW(object)->runs);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_hparams_view_class_init(TwHparamsViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_hparams_view_dispose;
    G_OBJECT_CLASS(klass)->set_property = tw_hparams_view_set_property;
    G_OBJECT_CLASS(klass)->get_property = tw_hparams_view_get_property;
    /* "run-list": the run list whose checked runs are the selection. */
    props[PROP_RUN_LIST] = g_param_spec_object("run-list", NULL, NULL, TW_TYPE_RUN_LIST,
                                               G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(G_OBJECT_CLASS(klass), N_PROPS, props);
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "hparamsview");
    gtk_widget_class_install_action(GTK_WIDGET_CLASS(klass), "hparams.export", "s", on_export);
}

static GtkWidget *toolbar(TwHparamsView *self)
{
    GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_add_css_class(bar, "hparams-bar");
    self->entry = gtk_search_entry_new();
    g_object_set(self->entry, "placeholder-text", "Filter: learning_rate>=1e-3 batch_size=32..64 optimizer=adam",
                 NULL);
    gtk_widget_set_hexpand(self->entry, TRUE);
    g_signal_connect_swapped(self->entry, "search-changed", G_CALLBACK(on_filter_changed), self);
    self->columns_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), self->columns_box);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(scrolled), TRUE);
    gtk_scrolled_window_set_max_content_height(GTK_SCROLLED_WINDOW(scrolled), 400);
    GtkWidget *popover = gtk_popover_new();
    gtk_popover_set_child(GTK_POPOVER(popover), scrolled);
    self->columns_button = gtk_menu_button_new();
    gtk_menu_button_set_label(GTK_MENU_BUTTON(self->columns_button), "Columns");
    gtk_menu_button_set_popover(GTK_MENU_BUTTON(self->columns_button), popover);
    gtk_widget_set_tooltip_text(self->columns_button, "Show or hide columns (in the table and the plot)");
    gtk_box_append(GTK_BOX(bar), self->entry);
    gtk_box_append(GTK_BOX(bar), self->columns_button);
    gtk_box_append(GTK_BOX(bar), export_button());
    return bar;
}

static GtkWidget *plots(TwHparamsView *self)
{
    self->parallel = gtk_drawing_area_new();
    gtk_widget_set_name(self->parallel, "hparams-parallel");
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->parallel), draw_parallel, self, NULL);
    gtk_widget_set_hexpand(self->parallel, TRUE);
    gtk_widget_set_size_request(self->parallel, 360, PLOT_HEIGHT);
    self->scatter = gtk_drawing_area_new();
    gtk_widget_set_name(self->scatter, "hparams-scatter");
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->scatter), draw_scatter, self, NULL);
    gtk_widget_set_size_request(self->scatter, 360, PLOT_HEIGHT - 40);
    gtk_widget_set_vexpand(self->scatter, TRUE);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_scatter_pressed), self);
    gtk_widget_add_controller(self->scatter, GTK_EVENT_CONTROLLER(click));
    self->scatter_x = gtk_drop_down_new(NULL, NULL);
    self->scatter_y = gtk_drop_down_new(NULL, NULL);
    gtk_widget_set_tooltip_text(self->scatter_x, "The scatter's x: a hyperparameter");
    gtk_widget_set_tooltip_text(self->scatter_y, "The scatter's y: a metric");
    g_signal_connect_swapped(self->scatter_x, "notify::selected", G_CALLBACK(on_scatter_axis), self);
    g_signal_connect_swapped(self->scatter_y, "notify::selected", G_CALLBACK(on_scatter_axis), self);
    GtkWidget *axes = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_append(GTK_BOX(axes), gtk_label_new("y"));
    gtk_box_append(GTK_BOX(axes), self->scatter_y);
    gtk_box_append(GTK_BOX(axes), gtk_label_new("against x"));
    gtk_box_append(GTK_BOX(axes), self->scatter_x);
    GtkWidget *right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_append(GTK_BOX(right), axes);
    gtk_box_append(GTK_BOX(right), self->scatter);
    /* Side by side, or one above the other where the page is narrower
     * than both (an 800-pixel window): a flow box of two. */
    GtkWidget *row = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(row), GTK_SELECTION_NONE);
    gtk_flow_box_set_homogeneous(GTK_FLOW_BOX(row), TRUE);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(row), 2);
    gtk_flow_box_set_column_spacing(GTK_FLOW_BOX(row), 8);
    gtk_flow_box_set_row_spacing(GTK_FLOW_BOX(row), 8);
    gtk_flow_box_append(GTK_FLOW_BOX(row), self->parallel);
    gtk_flow_box_append(GTK_FLOW_BOX(row), right);
    for (GtkWidget *c = gtk_widget_get_first_child(row); c; c = gtk_widget_get_next_sibling(c))
        gtk_widget_set_focusable(c, FALSE);
    return row;
}

static void tw_hparams_view_init(TwHparamsView *self)
{
    self->hidden = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    self->scatter_x_column = self->scatter_y_column = -1;
    self->parallel_base = tw_hp_layer_new();
    self->scatter_base = tw_hp_layer_new();
    self->store = g_list_store_new(TW_TYPE_HP_ROW);
    self->layout.sort_column = -2; /* newest first, as the run list, until a header is clicked */
    self->selection = gtk_multi_selection_new(G_LIST_MODEL(g_object_ref(self->store)));
    g_signal_connect_swapped(self->selection, "selection-changed", G_CALLBACK(on_selection_changed), self);
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_row), self);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_row), NULL);
    self->list_view = gtk_list_view_new(GTK_SELECTION_MODEL(g_object_ref(self->selection)), factory);
    gtk_widget_add_css_class(self->list_view, "hparams-table");
    self->header = tw_hp_cells_new(&self->layout, TRUE);
    gtk_widget_add_css_class(self->header, "hparams-header");
    gtk_widget_set_tooltip_text(self->header, "Click a column to sort by it; again for the other way");
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_header_pressed), self);
    gtk_widget_add_controller(self->header, GTK_EVENT_CONTROLLER(click));
    /* the rows scroll up and down under the header; both scroll sideways */
    GtkWidget *rows = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(rows), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(rows), self->list_view);
    gtk_widget_set_vexpand(rows, TRUE);
    GtkWidget *columns = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_box_append(GTK_BOX(columns), self->header);
    gtk_box_append(GTK_BOX(columns), rows);
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scrolled), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), columns);
    gtk_widget_set_vexpand(scrolled, TRUE);
    self->empty = gtk_label_new("No runs yet: the table fills in as runs record their settings and final metrics.");
    gtk_widget_add_css_class(self->empty, "dim-label");
    GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    gtk_paned_set_start_child(GTK_PANED(paned), scrolled);
    /* Stacked in a narrow window, the plots scroll rather than make the
     * window taller. */
    GtkWidget *plots_scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(plots_scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(plots_scroll), TRUE);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(plots_scroll), PLOT_HEIGHT);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(plots_scroll), plots(self));
    gtk_paned_set_end_child(GTK_PANED(paned), plots_scroll);
    gtk_paned_set_resize_end_child(GTK_PANED(paned), FALSE);
    gtk_paned_set_shrink_end_child(GTK_PANED(paned), FALSE);
    gtk_widget_set_vexpand(paned, TRUE);
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    gtk_box_append(GTK_BOX(self->box), toolbar(self));
    self->export_error = gtk_label_new(NULL);
    gtk_widget_add_css_class(self->export_error, "hparams-error");
    gtk_label_set_wrap(GTK_LABEL(self->export_error), TRUE);
    gtk_widget_set_visible(self->export_error, FALSE);
    gtk_box_append(GTK_BOX(self->box), self->export_error);
    gtk_box_append(GTK_BOX(self->box), self->empty);
    gtk_box_append(GTK_BOX(self->box), paned);
}

GtkWidget *tw_hparams_view_new(TwRunList *runs)
{
    return g_object_new(TW_TYPE_HPARAMS_VIEW, "run-list", runs, NULL);
}
