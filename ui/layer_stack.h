/* TwLayerStack: the model's layers top to bottom as cards — name, class,
 * output shape, parameter count — with the failing layer marked by the
 * engine's message and the layers after it dimmed, and the totals below.
 * One layer is selected ("selected", -1 for none). Cards reorder by
 * dragging; class names dropped from the palette insert a layer where they
 * land. Edits go through the TwModelDoc.
 *
 * Actions (also on each card's buttons and context menu), each taking the
 * layer's index: stack.delete(i), stack.duplicate(i), stack.move-up(i),
 * stack.move-down(i). */
#ifndef TW_UI_LAYER_STACK_H
#define TW_UI_LAYER_STACK_H

#include <gtk/gtk.h>

#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_LAYER_STACK (tw_layer_stack_get_type())
G_DECLARE_FINAL_TYPE(TwLayerStack, tw_layer_stack, TW, LAYER_STACK, GtkWidget)

GtkWidget *tw_layer_stack_new(TwModelDoc *doc);
int tw_layer_stack_get_selected(TwLayerStack *stack);
void tw_layer_stack_select(TwLayerStack *stack, int index);

/* What a drop does: a palette class name inserted at position (0..n), or
 * the layer at from moved to position (the gap between cards it was
 * dropped on, 0..n). The new or moved layer becomes the selection; a moved
 * one (and a layer dropped with the mouse) takes the keyboard focus too,
 * out of any text field. Clicking the stack's empty space takes it too. */
gboolean tw_layer_stack_drop_class(TwLayerStack *stack, const char *class_name, int position);
gboolean tw_layer_stack_drop_layer(TwLayerStack *stack, int from, int position);

/* The texts a card shows now (for tests): "name", "class", "shape",
 * "params", "message" (NULL when hidden); and whether it is marked as the
 * failing layer or dimmed. */
const char *tw_layer_stack_card_text(TwLayerStack *stack, int index, const char *what);
gboolean tw_layer_stack_card_has_class(TwLayerStack *stack, int index, const char *css_class);
/* The totals line: "Total params: 54,410". */
const char *tw_layer_stack_totals_text(TwLayerStack *stack);

G_END_DECLS

#endif
