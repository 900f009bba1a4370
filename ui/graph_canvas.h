/* TwGraphCanvas: the graph view's drawing area. It shows one arrangement
 * (graph_arrangement.h) through a viewport: scroll zooms around the
 * pointer, dragging pans, +, - and 0 zoom and fit; a click selects a box,
 * a click on a scope's expander or a double click on a scope opens or
 * closes it (the canvas asks, with "scope-toggled"; the view rearranges).
 *
 * The graph is drawn into an image kept between frames, of the view and
 * a margin of half its size on every side: when what is drawn or the zoom
 * changes and the last drawing was cheap (a few milliseconds) it is drawn
 * again on the main loop, else in a worker thread, the frames meanwhile
 * showing the last image moved and scaled to the current viewport; a pan
 * only moves the image, and a new one centred on the view is drawn in a
 * thread before the view reaches its edge. So a frame costs the same
 * whatever the graph's size. */
#ifndef TW_UI_GRAPH_CANVAS_H
#define TW_UI_GRAPH_CANVAS_H

#include <gtk/gtk.h>

#include "graph_arrangement.h"

G_BEGIN_DECLS

#define TW_TYPE_GRAPH_CANVAS (tw_graph_canvas_get_type())
G_DECLARE_FINAL_TYPE(TwGraphCanvas, tw_graph_canvas, TW, GRAPH_CANVAS, GtkWidget)

GtkWidget *tw_graph_canvas_new(void);
/* Show a (referenced) arrangement, or nothing (NULL). The selection is
 * cleared; the viewport stays (fit it, or centre it, after). */
void tw_graph_canvas_set_arrangement(TwGraphCanvas *canvas, tw_graph_arrangement *arrangement);
const tw_graph_arrangement *tw_graph_canvas_arrangement(TwGraphCanvas *canvas);

/* The selected visible node (-1: none); "selection-changed" follows a
 * change by either the pointer or this call. */
void tw_graph_canvas_select(TwGraphCanvas *canvas, int visible);
int tw_graph_canvas_selected(TwGraphCanvas *canvas);
/* Per visible node, taken (g_free'd by the canvas), or NULL for none. */
void tw_graph_canvas_set_highlighted(TwGraphCanvas *canvas, bool *highlighted);
const bool *tw_graph_canvas_highlighted(TwGraphCanvas *canvas);
/* What the boxes' colours say (graph_render.h); TIME draws kinds for a
 * graph without a profile. */
void tw_graph_canvas_set_color_mode(TwGraphCanvas *canvas, tw_graph_color_mode mode);
tw_graph_color_mode tw_graph_canvas_color_mode(TwGraphCanvas *canvas);

tw_graph_viewport tw_graph_canvas_viewport(TwGraphCanvas *canvas);
void tw_graph_canvas_set_viewport(TwGraphCanvas *canvas, tw_graph_viewport viewport);
/* The whole graph, and again whenever the size changes until the user
 * zooms or pans. */
void tw_graph_canvas_fit(TwGraphCanvas *canvas);
/* Zoom by factor keeping the widget point (x, y) where it is. */
void tw_graph_canvas_zoom(TwGraphCanvas *canvas, double factor, double x, double y);
/* Move the drawing by (dx, dy) pixels. */
void tw_graph_canvas_pan(TwGraphCanvas *canvas, double dx, double dy);
/* Keep the scale, put world point (x, y) in the middle. */
void tw_graph_canvas_center_on(TwGraphCanvas *canvas, double x, double y);
/* Whether the last frame showed an image drawn for the current graph,
 * selection and viewport ("drawn" is emitted when one lands). */
gboolean tw_graph_canvas_drawn(TwGraphCanvas *canvas);

G_END_DECLS

#endif
