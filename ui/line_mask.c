/* Thin lines into an A8 mask (line_mask.h). */
#include "line_mask.h"

#include <stdlib.h>

void tw_line_mask_init(tw_line_mask *mask, int width, int height)
{
    mask->width = width > 1 ? width : 1;
    mask->height = height > 1 ? height : 1;
    mask->surface = cairo_image_surface_create(CAIRO_FORMAT_A8, mask->width, mask->height); /* zeroed */
    cairo_surface_flush(mask->surface);
    mask->data = cairo_image_surface_get_data(mask->surface);
    mask->stride = cairo_image_surface_get_stride(mask->surface);
}

void tw_line_mask_clear(tw_line_mask *mask)
{
    cairo_surface_destroy(mask->surface);
    mask->surface = NULL;
    mask->data = NULL;
}

/* Bresenham's: one pixel per step along the longer direction, the other
 * coordinate the nearest to the true line (halves rounded up). */
void tw_line_mask_line(tw_line_mask *mask, int x0, int y0, int x1, int y1)
{
    if (!mask->data) /* the surface could not be made (out of memory): nothing drawn */
        return;
    int dx = abs(x1 - x0), dy = abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int major = dx > dy ? dx : dy, minor = dx > dy ? dy : dx;
    int x = x0, y = y0, error = 0;
    for (int k = 0; k <= major; k++) {
        if (x >= 0 && x < mask->width && y >= 0 && y < mask->height)
            mask->data[(size_t)y * mask->stride + x] = 0xff;
        error += 2 * minor;
        if (error >= major && major > 0) { /* past half a pixel off: step sideways */
            error -= 2 * major;
            if (dx > dy)
                y += sy;
            else
                x += sx;
        }
        if (dx > dy)
            x += sx;
        else
            y += sy;
    }
}

void tw_line_mask_paint(tw_line_mask *mask, cairo_t *cr)
{
    if (!mask->data)
        return;
    cairo_surface_mark_dirty(mask->surface);
    cairo_pattern_t *pattern = cairo_pattern_create_for_surface(mask->surface);
    cairo_pattern_set_filter(pattern, CAIRO_FILTER_NEAREST);
    cairo_mask(cr, pattern);
    cairo_pattern_destroy(pattern);
}
