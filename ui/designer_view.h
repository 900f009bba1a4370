/* TwDesignerView: the Designer page — the layer palette (left), the model
 * in the centre as a graph on the canvas (TwDesignerCanvas) or, switched
 * to, as the list of layer cards (TwLayerStack), with a status line of
 * totals and the reason it cannot train, and the property editor of the
 * selected layer (right), all showing one TwModelDoc.
 * tw_designer_view_palette/canvas/stack/property_editor give its parts
 * (those of the level shown).
 *
 * Nested models are edited by drilling down: Edit Nested Model (the
 * canvas's "edit-nested") shows the nested model as a document of its own
 * (tw_designer_view_doc), every edit and undo applying to it, under a
 * breadcrumb bar ("model › base"); going back (a crumb, Escape on the
 * canvas) writes it into the outer model's layer as one undoable edit of
 * that model, or, when it no longer fits there, stays and shows why.
 * "shown-changed" is emitted when the shown document changes, is
 * switched, or its undo or redo becomes possible or not. */
#ifndef TW_UI_DESIGNER_VIEW_H
#define TW_UI_DESIGNER_VIEW_H

#include <gtk/gtk.h>

#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_DESIGNER_VIEW (tw_designer_view_get_type())
G_DECLARE_FINAL_TYPE(TwDesignerView, tw_designer_view, TW, DESIGNER_VIEW, GtkWidget)

GtkWidget *tw_designer_view_new(TwModelDoc *doc);
/* The document shown: the view's own, or the nested model drilled into. */
TwModelDoc *tw_designer_view_doc(TwDesignerView *view);
/* How many levels down the shown document is (0: the view's own). */
int tw_designer_view_depth(TwDesignerView *view);
/* Drill into the nested model at node of the shown document. */
gboolean tw_designer_view_enter_nested(TwDesignerView *view, int node, GError **error);
/* Back up to level depth (0: the top), each level written into the one
 * above; stops, showing and returning the engine's message, at a level
 * whose model no longer fits where it is called. */
gboolean tw_designer_view_leave_to(TwDesignerView *view, int depth, GError **error);
/* Whether a level below the top has edits not yet written back. */
gboolean tw_designer_view_pending(TwDesignerView *view);
/* Why Train is off while a nested model is shown ("Inside base: go back
 * to model to train it (Escape); ..."): Train trains the top model, which
 * has the edits made inside only once they are written back; NULL at the
 * top. The window hands it to the training panel
 * (tw_train_panel_set_blocked) on "shown-changed". */
const char *tw_designer_view_cannot_train(TwDesignerView *view);
/* The selected layer's index, -1 for none. */
int tw_designer_view_selected(TwDesignerView *view);
void tw_designer_view_select(TwDesignerView *view, int index);
GtkWidget *tw_designer_view_palette(TwDesignerView *view);
GtkWidget *tw_designer_view_stack(TwDesignerView *view);
GtkWidget *tw_designer_view_canvas(TwDesignerView *view);
/* The status line's labels: the totals, and why the model cannot train
 * (hidden while it can); inside a nested model, that model's own
 * ("Inside base: 3 layers · ..."). */
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
