/* The designer canvas's drawing kept between frames (designer_canvas.c):
 * the document in tiles of 256 x 256 widget pixels at the current zoom,
 * so that a frame that only pans copies the tiles in view instead of
 * drawing every box and edge.
 *
 * A frame draws the tiles of the view that are missing, and one of the
 * ring around it (so that a pan finds the next ones drawn), each tile
 * drawing only the edges and boxes that meet it; tiles more than one
 * outside the view are dropped. All are dropped when what is drawn changes
 * (the canvas counts its changes in `content`).
 *
 * While the canvas says the zoom is moving, the tiles of another zoom
 * (within a factor of two) are shown scaled; beyond that the view is drawn
 * directly, and that drawing is kept and shown scaled while the zoom goes
 * on inward (up to a factor of two). Once the zoom settles, the tiles of
 * the new zoom are drawn a few a frame (TW_DESIGNER_IMAGE_TILES_PER_FRAME),
 * those of places nothing shows first, then the nearest the view's centre,
 * while the old tiles (or the kept drawing) stand in, scaled: no frame
 * draws the whole view's tiles. The document is read on the main loop, as
 * the canvas does. Tiles are never drawn on after they are made, and
 * frames paint them as kept images (widget_image.h), so no frame's Cairo
 * node makes a copy of one. */
#ifndef TW_UI_DESIGNER_CANVAS_IMAGE_H
#define TW_UI_DESIGNER_CANVAS_IMAGE_H

#include <gtk/gtk.h>

#include "designer_canvas_draw.h"

typedef struct tw_designer_image tw_designer_image;

/* Tiles drawn a frame at most while something stands in for them. */
#define TW_DESIGNER_IMAGE_TILES_PER_FRAME 4

/* What an image has drawn since it was made: tiles, and views drawn
 * directly during a zoom. */
typedef struct {
    guint64 tiles, views;
} tw_designer_image_counts;

tw_designer_image *tw_designer_image_new(void);
void tw_designer_image_free(tw_designer_image *image);

/* Paints the document as `view` shows it into the width x height widget
 * area of cr (the frame's Cairo node of widget), from the kept image,
 * drawing only what the image lacks. TRUE when tiles of the view are still
 * to be drawn: the next frame goes on with them. */
gboolean tw_designer_image_paint(tw_designer_image *image, GtkWidget *widget, cairo_t *cr, TwModelDoc *doc,
                                 const tw_designer_viewport *view, int width, int height, guint content,
                                 gboolean zoom_moving, const tw_designer_overlay *overlay);
tw_designer_image_counts tw_designer_image_get_counts(const tw_designer_image *image);

#endif
