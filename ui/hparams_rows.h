/* The HParams table's rows, one light widget each: TwHpCells draws a row's
 * cells (or the header's titles) with Pango at the columns' positions, so
 * a row costs one widget, not one per cell. GTK 4.8's GtkColumnView builds
 * a widget per cell for up to about 200 rows at once: 1,000 runs of 30
 * columns took seven seconds to open that way; these open within a frame.
 *
 * Every row reads one tw_hp_layout that the view keeps (which columns are
 * shown, where, the sort): change it, then tw_hp_cells_invalidate. A row
 * keeps its cells drawn until its row, that layout, its style or colour
 * change. */
#ifndef TW_UI_HPARAMS_ROWS_H
#define TW_UI_HPARAMS_ROWS_H

#include <gtk/gtk.h>

#include "hparams_table.h"

#define TW_HP_ROW_HEIGHT 26
#define TW_HP_NAME_COLUMN (-1) /* the run's name, first */

typedef struct {
    const tw_hp_table *table;
    int ncolumns;
    int *columns;  /* table columns shown, TW_HP_NAME_COLUMN first */
    double *x, *width;
    double total_width;
    int sort_column; /* a table column, TW_HP_NAME_COLUMN, or -2: unsorted */
    gboolean descending;
} tw_hp_layout;

/* The layout for the table's columns not hidden (g_free'd by _clear). */
void tw_hp_layout_update(tw_hp_layout *layout, const tw_hp_table *table);
void tw_hp_layout_clear(tw_hp_layout *layout);
/* The layout's column (an index into layout->columns) at x, or -1. */
int tw_hp_layout_column_at(const tw_hp_layout *layout, double x);

#define TW_TYPE_HP_CELLS (tw_hp_cells_get_type())
G_DECLARE_FINAL_TYPE(TwHpCells, tw_hp_cells, TW, HP_CELLS, GtkWidget)

/* The header's titles, or a row's cells once tw_hp_cells_set_row gives it one. */
GtkWidget *tw_hp_cells_new(const tw_hp_layout *layout, gboolean header);
void tw_hp_cells_set_row(TwHpCells *cells, int row);
/* Every TwHpCells under root drawn and measured again (a new layout, or
 * the table under it). */
void tw_hp_cells_invalidate(GtkWidget *root);

#endif
