/* TwLayerPalette: every layer class the engine has, grouped (Core,
 * Convolution, Pooling, Normalization, Regularization, Recurrent,
 * Activation), each with its one-line summary, the designer's blocks
 * (designer_blocks.h, under "Blocks"), and a search entry that filters by
 * name and summary. A double-click or Enter on an entry emits
 * "layer-activated" (const char *name: a class's or a block's); dragging
 * one offers that name as a string. */
#ifndef TW_UI_LAYER_PALETTE_H
#define TW_UI_LAYER_PALETTE_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TW_TYPE_LAYER_PALETTE (tw_layer_palette_get_type())
G_DECLARE_FINAL_TYPE(TwLayerPalette, tw_layer_palette, TW, LAYER_PALETTE, GtkWidget)

GtkWidget *tw_layer_palette_new(void);
/* Put text in the search entry and filter at once. */
void tw_layer_palette_set_search(TwLayerPalette *palette, const char *text);
/* The class names shown now, top to bottom, blocks left out
 * (NULL-terminated; g_strfreev). */
char **tw_layer_palette_visible_classes(TwLayerPalette *palette);
/* The group heading shown above a class, or NULL when it shares the one
 * above it. */
const char *tw_layer_palette_heading_of(TwLayerPalette *palette, const char *class_name);
/* What a double-click or Enter on the row of a class or block does; FALSE
 * when it is not shown. */
gboolean tw_layer_palette_activate(TwLayerPalette *palette, const char *class_name);

G_END_DECLS

#endif
