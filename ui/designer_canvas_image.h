/* The designer canvas's drawing kept between frames (designer_canvas.c):
 * the document in tiles of 512 x 512 widget pixels at the current zoom,
 * so that a frame that only pans copies the tiles in view instead of
 * drawing every box and edge.
 *
 * A frame draws the tiles of the view that are missing, and one of the
 * ring around it (so that a pan finds the next ones drawn), each tile
 * drawing only the edges and boxes that meet it; tiles more than one
 * outside the view are dropped. All are dropped when what is drawn changes
 * (the canvas counts its changes in `content`). While the canvas says the
 * zoom is moving, tiles of another zoom (within a factor of two) are shown
 * scaled, and beyond that the view is drawn directly; once the zoom
 * settles the tiles are drawn anew at it. The
 * document is read on the main loop, as the canvas does. Tiles are never
 * drawn on after they are made, and frames paint them as kept images
 * (widget_image.h), so no frame's Cairo node makes a copy of one. */
#ifndef TW_UI_DESIGNER_CANVAS_IMAGE_H
#define TW_UI_DESIGNER_CANVAS_IMAGE_H

#include <gtk/gtk.h>

#include "designer_canvas_draw.h"

typedef struct tw_designer_image tw_designer_image;

tw_designer_image *tw_designer_image_new(void);
void tw_designer_image_free(tw_designer_image *image);

/* Paints the document as `view` shows it into the width x height widget
 * area of cr (the frame's Cairo node of widget), from the kept image,
 * drawing only what the image lacks. */
void tw_designer_image_paint(tw_designer_image *image, GtkWidget *widget, cairo_t *cr, TwModelDoc *doc,
                             const tw_designer_viewport *view, int width, int height, guint content,
                             gboolean zoom_moving, const tw_designer_overlay *overlay);

#endif
