/* What the pure renderers (chart_render.c, histogram_render.c) share: the
 * light and dark colours, colour mixing, pixel alignment and text labels.
 * Private to those renderers. */
#ifndef TW_UI_RENDER_STYLE_H
#define TW_UI_RENDER_STYLE_H

#include <cairo.h>
#include <pango/pangocairo.h>
#include <stdbool.h>

#include "chart_render.h"

typedef struct {
    tw_rgb background;
    tw_rgb text;  /* titles */
    tw_rgb muted; /* tick labels, units */
    tw_rgb grid;
    tw_rgb axis;
} tw_render_style;

tw_render_style tw_render_style_get(bool dark);

/* a + (b - a) * t: a colour between a (t = 0) and b (t = 1). */
tw_rgb tw_rgb_mix(tw_rgb a, tw_rgb b, double t);
void tw_render_set_color(cairo_t *cr, tw_rgb color, double alpha);

/* The centre of the pixel holding px: a 1-pixel line there covers exactly
 * one row or column instead of two half-covered ones. */
double tw_render_crisp(double px);

/* Clears to the style's background and sets antialiasing on. */
void tw_render_background(cairo_t *cr, int width, int height, const tw_render_style *style);

/* Text labels: one layout per frame (pixel size `size`, bold or not). */
PangoLayout *tw_render_label_layout(cairo_t *cr, double size, bool bold);
/* The size of text in layout's font. */
void tw_render_label_size(PangoLayout *layout, const char *text, double *width, double *height);
/* Draws text with its anchor point (ax, ay: 0 left/top, 0.5 centre, 1
 * right/bottom) at (x, y). */
void tw_render_label(cairo_t *cr, PangoLayout *layout, const char *text, double x, double y, double ax, double ay,
                     tw_rgb color);

/* Grid lines at the pixel positions xs (vertical lines) and ys
 * (horizontal ones) that fall inside plot, then the left and bottom axes. */
void tw_render_grid(cairo_t *cr, tw_rect plot, const double *xs, int nx, const double *ys, int ny,
                    const tw_render_style *style);
/* Tick labels centred under the positions px at y, leaving out those that
 * would overlap the previous one or reach outside [left, right]. */
void tw_render_x_tick_labels(cairo_t *cr, PangoLayout *layout, const tw_ticks *ticks, const double *px, double y,
                             double left, double right, const tw_render_style *style);
/* Tick labels vertically centred on the positions py, right-aligned at x
 * (ax = 1) or left-aligned (ax = 0), leaving out those that would overlap
 * the previous one or fall outside [top, bottom]. */
void tw_render_y_tick_labels(cairo_t *cr, PangoLayout *layout, const tw_ticks *ticks, const double *py, double x,
                             double ax, double top, double bottom, const tw_render_style *style);

/* The chart's title (a tag) at the top left, ellipsized in the middle past
 * max_width, and a centred note for an empty chart ("No data"). */
void tw_render_title(cairo_t *cr, const char *title, double x, double max_width, const tw_render_style *style);
void tw_render_note(cairo_t *cr, int width, int height, const char *note, const tw_render_style *style);

#endif
