/* TwDesignerView: the Designer page — the layer palette (left), the model
 * in the centre as a graph on the canvas (TwDesignerCanvas) or, switched
 * to, as the list of layer cards (TwLayerStack), with a status line of
 * totals and the reason it cannot train, and the property editor of the
 * selected layer (right), all showing one TwModelDoc.
 * tw_designer_view_palette/canvas/stack/property_editor give its parts. */
#ifndef TW_UI_DESIGNER_VIEW_H
#define TW_UI_DESIGNER_VIEW_H

#include <gtk/gtk.h>

#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_DESIGNER_VIEW (tw_designer_view_get_type())
G_DECLARE_FINAL_TYPE(TwDesignerView, tw_designer_view, TW, DESIGNER_VIEW, GtkWidget)

GtkWidget *tw_designer_view_new(TwModelDoc *doc);
/* The selected layer's index, -1 for none. */
int tw_designer_view_selected(TwDesignerView *view);
void tw_designer_view_select(TwDesignerView *view, int index);
GtkWidget *tw_designer_view_palette(TwDesignerView *view);
GtkWidget *tw_designer_view_stack(TwDesignerView *view);
GtkWidget *tw_designer_view_canvas(TwDesignerView *view);
/* The status line's labels: the totals, and why the model cannot train
 * (hidden while it can). */
GtkWidget *tw_designer_view_status(TwDesignerView *view);
GtkWidget *tw_designer_view_problem(TwDesignerView *view);
GtkWidget *tw_designer_view_property_editor(TwDesignerView *view);

/* GtkPaned places its divider by the children's natural widths when first
 * allocated and then keeps a child that does not resize at that width; a
 * child's least width here is far below the width it should have in a
 * normal window (so that an 800-pixel window works). This gives the start
 * (or end) child `width` pixels once, when the paned is first allocated:
 * all of it when the paned is `full` pixels wide (its width in a 1280-pixel
 * window), a proportional share when it is narrower. */
void tw_designer_paned_initial_width(GtkPaned *paned, gboolean end, int width, int full);

G_END_DECLS

#endif
