/* A plot's base layer kept as an image (hparams_render.h's _base
 * renderers): drawn again only when what it depends on changes, so a
 * selection change draws just the coloured rows over it. With 1,000 runs
 * the grey lines took most of a frame to rasterize; painting the image
 * takes a fraction of a millisecond.
 *
 * What the layer depends on: its size and scale, and the caller's key, a
 * list of integers (the theme, the rows shown, the columns...); an update
 * where any differs from the last one draws the layer again. What a key
 * cannot hold (the table's contents) is told with tw_hp_layer_invalidate. */
#ifndef TW_UI_HPARAMS_LAYER_H
#define TW_UI_HPARAMS_LAYER_H

#include <cairo.h>
#include <glib.h>

#include "hparams_render.h"

typedef struct tw_hp_layer tw_hp_layer;

tw_hp_layer *tw_hp_layer_new(void);
void tw_hp_layer_free(tw_hp_layer *layer);
/* The next update draws the layer again, whatever its key. */
void tw_hp_layer_invalidate(tw_hp_layer *layer);
/* Draws the layer with draw(cr, width, height, user_data), width x height
 * in cairo units at scale device pixels a unit, unless the size, scale and
 * key (of int) are those it was last drawn for. */
void tw_hp_layer_update(tw_hp_layer *layer, int width, int height, int scale, const GArray *key, tw_hp_draw draw,
                        void *user_data);
/* Paints the layer as last drawn onto cr at (0, 0); nothing before the
 * first update. */
void tw_hp_layer_paint(tw_hp_layer *layer, cairo_t *cr);

#endif
