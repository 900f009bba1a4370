/* Clipped polylines and pixel-column rasters (chart_paths.h). */
#include <math.h>

#include "chart_paths.h"

tw_polyline tw_polyline_new(cairo_t *cr, tw_rect plot)
{
    return (tw_polyline){cr, plot.x - 4, plot.y - 4, plot.x + plot.width + 4, plot.y + plot.height + 4};
}

void tw_polyline_break(tw_polyline *line)
{
    line->has_prev = false;
}

/* One of Liang-Barsky's four edge tests, narrowing [t0, t1]. */
static bool clip_edge(double p, double q, double *t0, double *t1)
{
    if (p == 0)
        return q >= 0;
    double r = q / p;
    if (p < 0) {
        if (r > *t1)
            return false;
        if (r > *t0)
            *t0 = r;
    } else {
        if (r < *t0)
            return false;
        if (r < *t1)
            *t1 = r;
    }
    return true;
}

void tw_polyline_add(tw_polyline *l, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    if (!l->has_prev) {
        l->has_prev = true;
        l->pen_at_prev = x >= l->x0 && x <= l->x1 && y >= l->y0 && y <= l->y1;
        if (l->pen_at_prev)
            cairo_move_to(l->cr, x, y);
        l->px = x, l->py = y;
        return;
    }
    double dx = x - l->px, dy = y - l->py, t0 = 0, t1 = 1;
    bool visible = clip_edge(-dx, l->px - l->x0, &t0, &t1) && clip_edge(dx, l->x1 - l->px, &t0, &t1) &&
                   clip_edge(-dy, l->py - l->y0, &t0, &t1) && clip_edge(dy, l->y1 - l->py, &t0, &t1);
    if (visible) {
        if (!(l->pen_at_prev && t0 == 0))
            cairo_move_to(l->cr, l->px + t0 * dx, l->py + t0 * dy);
        cairo_line_to(l->cr, l->px + t1 * dx, l->py + t1 * dy);
    }
    l->pen_at_prev = visible && t1 == 1;
    l->px = x, l->py = y;
}

tw_raster tw_raster_new(cairo_t *cr, tw_rect plot, bool gaps)
{
    return (tw_raster){.cr = cr, .plot = plot, .gaps = gaps, .segments = tw_polyline_new(cr, plot)};
}

/* Adds the gathered column to the path, at least a pixel tall, within the
 * plot's height (cairo's coordinates stay small), its ends on whole pixel
 * rows: a path of pixel-aligned boxes fills through cairo's box compositor
 * in one pass, where unaligned boxes go through its general tessellator
 * (six times as long as filling each column on its own). */
static void add_column(tw_raster *r)
{
    double lo = r->plot.y - 2, hi = r->plot.y + r->plot.height + 2;
    if (r->gaps || r->bottom < lo || r->top > hi || r->column < r->plot.x - 1 ||
        r->column > r->plot.x + r->plot.width)
        return;
    double top = floor(fmax(r->top, lo) + 0.5), bottom = floor(fmin(r->bottom, hi) + 0.5);
    if (bottom - top < 1)
        bottom = top + 1;
    cairo_rectangle(r->cr, r->column, top, 1, bottom - top);
}

void tw_raster_add(tw_raster *r, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    double column = floor(x);
    /* A point on the plot's right edge (the view's last x) belongs to the
     * last pixel column, as in the store's reduction. */
    if (x == r->plot.x + r->plot.width)
        column -= 1;
    if (r->open && column == r->column) {
        r->top = fmin(r->top, y), r->bottom = fmax(r->bottom, y);
        r->last_x = x, r->last_y = y;
        return;
    }
    double top = y, bottom = y;
    if (r->open) {
        add_column(r);
        if (column == r->column + 1) { /* the line from the last point runs up or down this column */
            top = fmin(top, r->last_y), bottom = fmax(bottom, r->last_y);
        } else if (r->gaps) {
            tw_polyline_break(&r->segments);
            tw_polyline_add(&r->segments, r->last_x, r->last_y);
            tw_polyline_add(&r->segments, x, y);
        }
    }
    r->open = true;
    r->column = column, r->top = top, r->bottom = bottom;
    r->last_x = x, r->last_y = y;
}

void tw_raster_finish(tw_raster *r)
{
    if (r->open)
        add_column(r);
    r->open = false;
    if (!r->gaps)
        cairo_fill(r->cr);
}
