/* TwDesignerCanvas: the designer's graph editor. Each node of the
 * TwModelDoc is a box (class, name, output shape, parameter count; a red
 * frame and the message when it fails) with input ports on top and output
 * ports below; edges run from output ports to input ports. Drawing is Cairo
 * only (designer_canvas_draw.c); this widget turns the pointer and the keys
 * into the document's edits:
 *
 * - drag a palette entry onto the canvas (a new box) or onto an edge (the
 *   layer inserted there); a palette block after the box it lands on;
 * - drag from an output port onto a box: an edge into its next free input
 *   (a merge takes as many as its class allows);
 * - click selects a box or an edge (Ctrl/Shift adds), dragging a box moves
 *   the selection, dragging the background selects with a rubber band;
 * - scroll pans, Ctrl+scroll zooms around the pointer, a middle-button drag
 *   pans; +, - and 0 zoom and fit; a model larger than the view gets a
 *   minimap in the corner, where a click or a drag moves the view;
 * - a right-click on a nested model's box offers Edit Nested Model;
 * - keys: Delete, Ctrl+C/V/D (copy, paste, duplicate a selection with its
 *   inner edges), Ctrl+A, Tab / Shift+Tab along edges, arrows move the
 *   selection, Alt+Up/Down reorder within a chain, Ctrl+L auto-arrange,
 *   Enter (or a double-click) opens or closes a nested model's box in
 *   place, listing its layers; Shift+Enter edits it ("edit-nested",
 *   which the designer view answers by drilling down) and Escape asks to
 *   go back out ("leave-nested").
 *
 * The functions below are those actions; the tests call them as the
 * gestures do. Points are in widget pixels unless said otherwise. */
#ifndef TW_UI_DESIGNER_CANVAS_H
#define TW_UI_DESIGNER_CANVAS_H

#include <gtk/gtk.h>

#include "designer_canvas_draw.h"
#include "designer_canvas_image.h"
#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_DESIGNER_CANVAS (tw_designer_canvas_get_type())
G_DECLARE_FINAL_TYPE(TwDesignerCanvas, tw_designer_canvas, TW, DESIGNER_CANVAS, GtkWidget)

GtkWidget *tw_designer_canvas_new(TwModelDoc *doc);

/* ---- selection ("selection-changed" after every change) ------------------- */
/* The box the property editor shows (the last one selected), or -1. */
int tw_designer_canvas_primary(TwDesignerCanvas *canvas);
/* Select one box (-1: none) and scroll it into view. */
void tw_designer_canvas_select(TwDesignerCanvas *canvas, int node);
void tw_designer_canvas_select_many(TwDesignerCanvas *canvas, const int *nodes, int n);
/* The selected boxes in index order (g_free); returns their count. */
int tw_designer_canvas_selection(TwDesignerCanvas *canvas, int **nodes);
/* The edge into node's input `input`; FALSE when there is none. */
gboolean tw_designer_canvas_select_edge(TwDesignerCanvas *canvas, int node, int input);
/* The selected edge, FALSE when none. */
gboolean tw_designer_canvas_selected_edge(TwDesignerCanvas *canvas, int *node, int *input);

/* ---- actions -------------------------------------------------------------- */
/* Delete the selected edge, else the selected boxes. */
gboolean tw_designer_canvas_delete_selection(TwDesignerCanvas *canvas);
gboolean tw_designer_canvas_copy(TwDesignerCanvas *canvas);
gboolean tw_designer_canvas_paste(TwDesignerCanvas *canvas);
gboolean tw_designer_canvas_duplicate(TwDesignerCanvas *canvas);
/* Tab (forward TRUE) / Shift+Tab: to the next box along an edge. */
void tw_designer_canvas_follow_edge(TwDesignerCanvas *canvas, gboolean forward);
/* Arrow keys: the selection by (dx, dy) document units, one undo step. */
gboolean tw_designer_canvas_nudge(TwDesignerCanvas *canvas, double dx, double dy);
/* Alt+Up/Down: the selected box one place up or down its chain. */
gboolean tw_designer_canvas_reorder(TwDesignerCanvas *canvas, int delta);
/* A palette class dropped at (x, y): on an edge, inserted there; else a
 * new box. Selects the new box. */
gboolean tw_designer_canvas_drop_class(TwDesignerCanvas *canvas, const char *class_name, double x, double y);
/* Open or close the nested model at node (a double-click on its box,
 * Enter on the selected one): the boxes below it move down to make room,
 * or back up (one undo step of positions; being open is view state).
 * FALSE when node is not a nested model. */
gboolean tw_designer_canvas_toggle_nested(TwDesignerCanvas *canvas, int node);
/* Edit Nested Model (the context menu, Shift+Enter): emits "edit-nested"
 * with node; FALSE when node is not a nested model. */
gboolean tw_designer_canvas_edit_nested(TwDesignerCanvas *canvas, int node);
/* A palette entry activated (double-click, Enter): after the selected
 * box, fed by it, or appended to a chain. */
gboolean tw_designer_canvas_append_class(TwDesignerCanvas *canvas, const char *class_name);
/* A primary-button drag from (x0, y0) to (x1, y1) with the modifier
 * state: what the drag gesture does (connect, move, rubber band). */
void tw_designer_canvas_drag(TwDesignerCanvas *canvas, double x0, double y0, double x1, double y1,
                             GdkModifierType state);
/* A click at (x, y): selects the box or edge there, or clears. */
void tw_designer_canvas_click(TwDesignerCanvas *canvas, double x, double y, GdkModifierType state);
/* Auto-arrange in a worker thread; the positions land as one undo step
 * ("arranged" is emitted then). */
void tw_designer_canvas_arrange(TwDesignerCanvas *canvas);
gboolean tw_designer_canvas_arranging(TwDesignerCanvas *canvas);
void tw_designer_canvas_fit(TwDesignerCanvas *canvas);
void tw_designer_canvas_zoom(TwDesignerCanvas *canvas, double factor, double x, double y);
/* The view moved by (dx, dy) widget pixels (a middle-button drag, scrolling). */
void tw_designer_canvas_pan(TwDesignerCanvas *canvas, double dx, double dy);
double tw_designer_canvas_scale(TwDesignerCanvas *canvas);
/* What the canvas's kept image (designer_canvas_image.h) has drawn; FALSE
 * when it keeps none. */
gboolean tw_designer_canvas_image_counts(TwDesignerCanvas *canvas, tw_designer_image_counts *counts);
/* TRUE while the zoom is moving, or the image still draws tiles of the
 * view it settled on, a few a frame. */
gboolean tw_designer_canvas_settling(TwDesignerCanvas *canvas);
/* Where the minimap is now (widget pixels); FALSE when none is shown. */
gboolean tw_designer_canvas_minimap(TwDesignerCanvas *canvas, tw_designer_minimap *map);

/* ---- geometry (widget pixels) --------------------------------------------- */
void tw_designer_canvas_box_center(TwDesignerCanvas *canvas, int node, double *x, double *y);
/* Output port `port` of node (output TRUE) or its input port `port`. */
void tw_designer_canvas_port(TwDesignerCanvas *canvas, int node, gboolean output, int port, double *x, double *y);
/* The middle of the edge into node's input `input`. */
void tw_designer_canvas_edge_middle(TwDesignerCanvas *canvas, int node, int input, double *x, double *y);

G_END_DECLS

#endif
