/* Thin lines rasterized by hand into an A8 mask, for plots that draw
 * thousands of 1-pixel, unantialiased lines each frame they change (the
 * HParams parallel plot's grey rows). cairo 1.16 strokes such lines
 * through its scan converter, whose cost grows with the edges crossing
 * each scanline: 3,000 segments between 30 axes took it 5-8 ms, a third
 * of a frame; stepping along each line here takes well under one.
 *
 * A line covers one pixel per step along its longer direction (x or y),
 * both ends included; a pixel that several lines cross is covered once,
 * so the source painted through the mask is as translucent as for one
 * line. Pixels outside the mask are dropped. */
#ifndef TW_UI_LINE_MASK_H
#define TW_UI_LINE_MASK_H

#include <cairo.h>

typedef struct {
    cairo_surface_t *surface; /* CAIRO_FORMAT_A8, width x height */
    unsigned char *data;
    int width, height, stride;
} tw_line_mask;

/* An empty mask of width x height pixels (at least 1 x 1). */
void tw_line_mask_init(tw_line_mask *mask, int width, int height);
void tw_line_mask_clear(tw_line_mask *mask);
/* The line from pixel (x0, y0) to pixel (x1, y1). */
void tw_line_mask_line(tw_line_mask *mask, int x0, int y0, int x1, int y1);
/* cr's source painted through the lines, the mask's pixel (0, 0) at the
 * user-space origin, a pixel a unit, scaled without smoothing. */
void tw_line_mask_paint(tw_line_mask *mask, cairo_t *cr);

#endif
