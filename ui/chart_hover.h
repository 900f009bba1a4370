/* The chart's hover box (TensorBoard's tooltip): for each series the point
 * nearest the pointer's x — the one the renderer marks with a dot — with
 * its value, smoothed value, step and time, the rows sorted by how near
 * their value is to the pointer. Pure functions of the chart, like the
 * renderer: the widget draws them over its cached tw_chart_render image. */
#ifndef TW_UI_CHART_HOVER_H
#define TW_UI_CHART_HOVER_H

#include <cairo.h>

#include "chart_render.h"

typedef struct {
    int series;
    tw_scalar_point point;
    double smoothed; /* the value when smoothing is off */
    double distance; /* from the pointer's y, in pixels */
} tw_hover_row;

/* The rows for a pointer at (px, py) over the plot (rows: chart->nseries),
 * nearest first; the number of series with a point. */
int tw_chart_hover_rows(const tw_chart *chart, tw_rect plot, double px, double py, tw_hover_row *rows);

/* A header line, then one line per row: run, smoothed, value, step, time,
 * tab-separated (g_free). */
char *tw_chart_hover_text(const tw_chart *chart, const tw_hover_row *rows, int n);

/* The hover layer over a chart drawn with hover_x NaN (so the chart itself
 * can be drawn once and kept while the pointer moves): the vertical guide
 * at px, and for the rows that fit in the box beside the pointer (inside
 * the width x height chart) a dot on the row's point as tw_chart_render
 * draws them; the box's last line says how to zoom, pan and reset. */
void tw_chart_hover_draw(cairo_t *cr, int width, int height, const tw_chart *chart, double px, double py,
                         const tw_hover_row *rows, int n);

#endif
