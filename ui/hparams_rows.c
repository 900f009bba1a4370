/* TwHpCells and the columns' layout (hparams_rows.h). */
#include "hparams_rows.h"

#include <string.h>

#define CELL_PADDING 6
#define CELL_CHAR_WIDTH 7.5 /* about a character of the list's font, for the columns' widths */
#define MIN_CHARS 9
#define MAX_WIDTH 220.0
#define NAME_WIDTH 170.0

void tw_hp_layout_clear(tw_hp_layout *layout)
{
    g_clear_pointer(&layout->columns, g_free);
    g_clear_pointer(&layout->x, g_free);
    g_clear_pointer(&layout->width, g_free);
    layout->ncolumns = 0;
    layout->total_width = 0;
}

/* Widths from the titles (at least MIN_CHARS characters): values are
 * short numbers and names, ellipsized past the width. */
void tw_hp_layout_update(tw_hp_layout *layout, const tw_hp_table *table)
{
    tw_hp_layout_clear(layout);
    layout->table = table;
    int n = table ? tw_hp_table_n_columns(table) : 0;
    layout->columns = g_new(int, n + 1);
    layout->x = g_new(double, n + 1);
    layout->width = g_new(double, n + 1);
    double x = 0;
    for (int c = -1; c < n; c++) {
        if (c >= 0 && tw_hp_table_column(table, c)->hidden)
            continue;
        double w = NAME_WIDTH;
        if (c >= 0) {
            long chars = MAX(g_utf8_strlen(tw_hp_table_column(table, c)->name, -1) + 2, MIN_CHARS);
            w = MIN(chars * CELL_CHAR_WIDTH + 2 * CELL_PADDING, MAX_WIDTH);
        }
        layout->columns[layout->ncolumns] = c;
        layout->x[layout->ncolumns] = x;
        layout->width[layout->ncolumns] = w;
        layout->ncolumns++;
        x += w;
    }
    layout->total_width = x;
}

int tw_hp_layout_column_at(const tw_hp_layout *layout, double x)
{
    for (int i = 0; i < layout->ncolumns; i++)
        if (x >= layout->x[i] && x < layout->x[i] + layout->width[i])
            return i;
    return -1;
}

/* ---- TwHpCells ------------------------------------------------------------------ */
struct _TwHpCells {
    GtkWidget parent_instance;
    const tw_hp_layout *layout;
    gboolean header;
    int row; /* -1 until bound */
    /* The cells drawn (NULL: nothing to draw), kept while the row, the
     * layout, the style, the colour and the height stay: see cells_draw. */
    GskRenderNode *node;
    gboolean drawn;
    int drawn_height;
    GdkRGBA drawn_color;
};

G_DEFINE_FINAL_TYPE(TwHpCells, tw_hp_cells, GTK_TYPE_WIDGET)

static void measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                    int *minimum_baseline, int *natural_baseline)
{
    TwHpCells *cells = TW_HP_CELLS(widget);
    int size = orientation == GTK_ORIENTATION_HORIZONTAL ? (int)cells->layout->total_width : TW_HP_ROW_HEIGHT;
    *minimum = *natural = size;
}

/* What a cell says, and whether it is dimmed (missing) or marked (failed). */
static const char *cell_text(const TwHpCells *cells, int column, gboolean *dim, gboolean *alert)
{
    const tw_hp_table *t = cells->layout->table;
    *dim = *alert = FALSE;
    if (cells->header) {
        return column == TW_HP_NAME_COLUMN ? "Run" : tw_hp_table_column(t, column)->name;
    }
    if (column == TW_HP_NAME_COLUMN) {
        *alert = tw_hp_table_run_status(t, cells->row) == TW_RUN_FAILED;
        return tw_hp_table_run_name(t, cells->row);
    }
    const tw_hp_value *v = tw_hp_table_cell(t, cells->row, column);
    *dim = v->kind == TW_HP_MISSING;
    return *dim ? "–" : v->text;
}

static GdkRGBA text_color(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return fg;
}

/* The cells as a render node. Kept, so a row is laid out with Pango when
 * it changes, not at every frame; and drawn at once when the view gives a
 * row on screen another (tw_hp_cells_set_row): GTK starts a frame at most
 * every 16.7 ms, and a filter or sort typed just after one waits for the
 * next, which then only has to show the rows. Drawn that early, a row may
 * not have its style for the frame yet (it was selected, and is not):
 * the snapshot draws it again when the colour differs. */
static void cells_draw(TwHpCells *cells)
{
    GtkWidget *widget = GTK_WIDGET(cells);
    const tw_hp_layout *layout = cells->layout;
    int height = gtk_widget_get_height(widget);
    GdkRGBA fg = text_color(widget);
    g_clear_pointer(&cells->node, gsk_render_node_unref);
    cells->drawn = TRUE;
    cells->drawn_height = height;
    cells->drawn_color = fg;
    if (!layout->table || (!cells->header && (cells->row < 0 || cells->row >= tw_hp_table_n_rows(layout->table))))
        return;
    GtkSnapshot *snapshot = gtk_snapshot_new();
    GdkRGBA dimmed = {fg.red, fg.green, fg.blue, fg.alpha * 0.45}, line = {fg.red, fg.green, fg.blue, 0.12};
    GdkRGBA red = {0.88, 0.11, 0.14, 1};
    PangoLayout *pl = gtk_widget_create_pango_layout(widget, NULL);
    pango_layout_set_ellipsize(pl, PANGO_ELLIPSIZE_END);
    if (cells->header) {
        PangoAttrList *attrs = pango_attr_list_new();
        pango_attr_list_insert(attrs, pango_attr_weight_new(PANGO_WEIGHT_BOLD));
        pango_layout_set_attributes(pl, attrs);
        pango_attr_list_unref(attrs);
    }
    for (int i = 0; i < layout->ncolumns; i++) {
        gboolean dim, alert;
        const char *text = cell_text(cells, layout->columns[i], &dim, &alert);
        char *shown = NULL;
        if (cells->header && layout->columns[i] == layout->sort_column)
            text = shown = g_strconcat(text, layout->descending ? " ▼" : " ▲", NULL);
        pango_layout_set_text(pl, text, -1);
        pango_layout_set_width(pl, (int)((layout->width[i] - 2 * CELL_PADDING) * PANGO_SCALE));
        int w, h;
        pango_layout_get_pixel_size(pl, &w, &h);
        gtk_snapshot_save(snapshot);
        gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT(layout->x[i] + CELL_PADDING, (height - h) / 2.0f));
        gtk_snapshot_append_layout(snapshot, pl, alert ? &red : dim ? &dimmed : &fg);
        gtk_snapshot_restore(snapshot);
        g_free(shown);
        if (i > 0)
            gtk_snapshot_append_color(snapshot, &line, &GRAPHENE_RECT_INIT(layout->x[i], 0, 1, height));
    }
    g_object_unref(pl);
    cells->node = gtk_snapshot_free_to_node(snapshot);
}

static void cells_forget(TwHpCells *cells)
{
    g_clear_pointer(&cells->node, gsk_render_node_unref);
    cells->drawn = FALSE;
}

static void snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TwHpCells *cells = TW_HP_CELLS(widget);
    GdkRGBA fg = text_color(widget);
    if (!cells->drawn || cells->drawn_height != gtk_widget_get_height(widget) || !gdk_rgba_equal(&fg, &cells->drawn_color))
        cells_draw(cells);
    if (cells->node)
        gtk_snapshot_append_node(snapshot, cells->node);
}

/* The colours and the font are the style's. */
static void css_changed(GtkWidget *widget, GtkCssStyleChange *change)
{
    cells_forget(TW_HP_CELLS(widget));
    GTK_WIDGET_CLASS(tw_hp_cells_parent_class)->css_changed(widget, change);
}

static void dispose(GObject *object)
{
    cells_forget(TW_HP_CELLS(object));
    G_OBJECT_CLASS(tw_hp_cells_parent_class)->dispose(object);
}

static void tw_hp_cells_class_init(TwHpCellsClass *klass)
{
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    widget_class->measure = measure;
    widget_class->snapshot = snapshot;
    widget_class->css_changed = css_changed;
    G_OBJECT_CLASS(klass)->dispose = dispose;
    gtk_widget_class_set_css_name(widget_class, "hpcells");
}

static void tw_hp_cells_init(TwHpCells *cells)
{
}

GtkWidget *tw_hp_cells_new(const tw_hp_layout *layout, gboolean header)
{
    TwHpCells *cells = g_object_new(TW_TYPE_HP_CELLS, NULL);
    cells->layout = layout;
    cells->header = header;
    cells->row = -1;
    return GTK_WIDGET(cells);
}

void tw_hp_cells_set_row(TwHpCells *cells, int row)
{
    if (cells->row == row)
        return;
    cells->row = row;
    cells_forget(cells);
    if (gtk_widget_get_mapped(GTK_WIDGET(cells)))
        cells_draw(cells);
    gtk_widget_queue_draw(GTK_WIDGET(cells));
}

void tw_hp_cells_invalidate(GtkWidget *root)
{
    if (TW_IS_HP_CELLS(root)) {
        cells_forget(TW_HP_CELLS(root));
        gtk_widget_queue_resize(root); /* and drawn again */
    }
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        tw_hp_cells_invalidate(c);
}
