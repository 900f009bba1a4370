/* Paths for the scalar chart (chart_render.c), in pixels: polylines clipped
 * to the plot, and a series' raw data as pixel columns. Private to the
 * chart renderer. */
#ifndef TW_UI_CHART_PATHS_H
#define TW_UI_CHART_PATHS_H

#include <cairo.h>
#include <stdbool.h>

#include "chart_render.h"

/* A polyline clipped (Liang-Barsky) to a box a little larger than the
 * plot: cairo's coordinates are 24.8 fixed point, so a point a million
 * pixels away must not reach it, yet the visible part keeps its true
 * slope. Points with a coordinate that is not finite are skipped. The
 * caller strokes. */
typedef struct {
    cairo_t *cr;
    double x0, y0, x1, y1; /* the box */
    bool has_prev, pen_at_prev;
    double px, py;
} tw_polyline;

tw_polyline tw_polyline_new(cairo_t *cr, tw_rect plot);
void tw_polyline_add(tw_polyline *line, double x, double y);
/* The next point starts a new piece. */
void tw_polyline_break(tw_polyline *line);

/* A line through many points drawn as one filled 1-pixel column per pixel
 * the points fall in, from the column's top to its bottom point, stretched
 * to reach the previous column's last point (the M4 rule: per pixel
 * column the first, last, lowest and highest points draw the same pixels
 * as the whole line). Where points skip pixel columns, the pass with gaps
 * set adds the line segments across them to the path (the caller strokes);
 * the other pass fills the columns. Cairo strokes a dense zigzag of a few
 * thousand segments in 15 ms; these columns fill in well under one. */
typedef struct {
    cairo_t *cr;
    tw_rect plot;
    bool gaps; /* this pass: the segments across gaps, else the columns */
    bool open; /* a column is being gathered */
    double column, top, bottom, last_x, last_y;
    tw_polyline segments;
} tw_raster;

tw_raster tw_raster_new(cairo_t *cr, tw_rect plot, bool gaps);
void tw_raster_add(tw_raster *raster, double x, double y);
void tw_raster_finish(tw_raster *raster);

#endif
