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
 * breadcrumb bar ("model › base"). Each edit goes into the outer model's
 * layer as it is made, so the view's own document is always the whole
 * model with the edits on screen (what Train trains, Save saves and the
 * status line counts); one visit is one undoable edit of the outer
 * model. An edit that makes the nested model no longer fit there is kept
 * inside only, Train and the status line say why, and going back (a
 * crumb, Escape on the canvas) stays until it fits.
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
/* Back up to level depth (0: the top); stops, showing and returning the
 * engine's message, at a level whose model no longer fits where it is
 * called. */
gboolean tw_designer_view_leave_to(TwDesignerView *view, int depth, GError **error);
/* Writes again the levels whose last edit did not fit above, staying
 * where the view is: FALSE, with the reason, while one still does not. */
gboolean tw_designer_view_write_back(TwDesignerView *view, GError **error);
/* Whether a level below the top has an edit not in the top document (one
 * that does not fit the level above). */
gboolean tw_designer_view_pending(TwDesignerView *view);
/* Why the whole model cannot train beyond what its document says: an edit
 * inside a nested model that does not fit the model above ("Inside base:
 * the edit does not fit outer: <the engine's message>"), or one that left
 * it not a model; NULL otherwise. The window hands it to the training
 * panel (tw_train_panel_set_blocked) on "shown-changed". */
const char *tw_designer_view_cannot_train(TwDesignerView *view);
/* The selected layer's index, -1 for none. */
int tw_designer_view_selected(TwDesignerView *view);
void tw_designer_view_select(TwDesignerView *view, int index);
GtkWidget *tw_designer_view_palette(TwDesignerView *view);
GtkWidget *tw_designer_view_stack(TwDesignerView *view);
GtkWidget *tw_designer_view_canvas(TwDesignerView *view);
/* The status line's labels: the shown model's totals (inside a nested
 * model named so: "Inside base: 3 layers · ..."); inside, the whole
 * model's under them ("Whole model outer: ...", hidden at the top); and
 * why the whole model cannot train (hidden while it can). */
GtkWidget *tw_designer_view_status(TwDesignerView *view);
GtkWidget *tw_designer_view_whole_status(TwDesignerView *view);
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
