/* Pure renderers for the HParams view's plots, as chart_render.h's charts
 * are: functions of (table, rows, selection, colours, size, style) drawing
 * onto a cairo_t, so tests draw them into image surfaces and check pixels,
 * and the same calls write the PNG and SVG exports.
 *
 * The parallel-coordinates plot has an axis per column given (numbers on
 * their column's linear or log scale, categories evenly spaced) and a line
 * per row through its values; a missing value breaks the row's line. The
 * scatter plots one column against another (an x hyperparameter, a y
 * metric). Every row is drawn grey, and the selected rows in their run's
 * colour over that.
 *
 * Each plot is two layers, so a view may keep the first as an image and
 * draw only the second when the selection changes: _base (the
 * background, axes, labels and every row in grey; it does not read the
 * selection or the colours) and _selected (the selected rows in colour).
 * tw_hp_render_parallel and tw_hp_render_scatter draw both. */
#ifndef TW_UI_HPARAMS_RENDER_H
#define TW_UI_HPARAMS_RENDER_H

#include <cairo.h>
#include <stdbool.h>

#include "chart_render.h"
#include "hparams_table.h"

typedef struct {
    const tw_hp_table *table;
    const int *rows; /* the rows to draw (those passing the filter), in table indices */
    int nrows;
    const bool *selected; /* per table row */
    const tw_rgb *colors; /* per table row: the run's colour */
    bool dark;
} tw_hp_plot;

/* Axes: the columns given (at most TW_HP_MAX_AXES are drawn). */
#define TW_HP_MAX_AXES 64
void tw_hp_render_parallel(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                           int ncolumns);
void tw_hp_render_parallel_base(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                                int ncolumns);
void tw_hp_render_parallel_selected(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                                    int ncolumns);
void tw_hp_render_scatter(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column, int y_column);
void tw_hp_render_scatter_base(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column,
                               int y_column);
void tw_hp_render_scatter_selected(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column,
                                   int y_column);
/* The row's point in the scatter at (x, y) in pixels, or -1: for clicks. */
int tw_hp_scatter_hit(int width, int height, const tw_hp_plot *plot, int x_column, int y_column, double x, double y);

/* A plot to a file: PNG or SVG by what the path ends in. 0, or -1 with a
 * message (tw_last_error) naming the file. draw is one of the renderers
 * above wrapped by the caller. */
typedef void (*tw_hp_draw)(cairo_t *cr, int width, int height, void *user_data);
int tw_hp_render_export(const char *path, int width, int height, tw_hp_draw draw, void *user_data);

#endif
