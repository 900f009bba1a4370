/* The graph view's pure renderer: a laid-out visible graph (graph_model.h,
 * graph_layout.h) drawn into any cairo_t through a viewport (zoom, pan).
 * Boxes are coloured by op kind, or, when the graph has a profile
 * (graph_profile.h), by measured time on a heat scale; edges are as wide as their tensors are
 * large and carry their shapes where there is room for them; the selected node and the inputs it depends
 * on are highlighted. Only what falls in the viewport is drawn, so a frame
 * costs what is visible, not the graph's size. */
#ifndef TW_UI_GRAPH_RENDER_H
#define TW_UI_GRAPH_RENDER_H

#include <cairo.h>
#include <stdbool.h>

#include "chart_render.h"
#include "graph_layout.h"
#include "graph_model.h"

/* An open scope's frame around its nodes (world units); its title and
 * expander along the top. */
typedef struct {
    int scope;
    double x, y, width, height;
} tw_graph_frame;

#define TW_GRAPH_FRAME_PAD 8.0      /* around the boxes inside */
#define TW_GRAPH_FRAME_HEADER 18.0  /* above them: the title */
#define TW_GRAPH_EXPANDER_WIDTH 24.0 /* a collapsed scope's box: its left part opens it */

/* What a box's colour says: its op's kind, or its measured time (the
 * model's profile; boxes without a time are grey). */
typedef enum { TW_GRAPH_COLOR_KIND, TW_GRAPH_COLOR_TIME } tw_graph_color_mode;

typedef struct {
    const tw_graph_model *model;
    const tw_visible_graph *graph;
    const tw_graph_layout *layout; /* of graph's nodes and edges, in order */
    int selected;                  /* a visible node, or -1 */
    const bool *highlighted;       /* per visible node (the selection and its inputs), or NULL */
    int nframes;
    const tw_graph_frame *frames;  /* drawn behind the boxes, in order; may be NULL */
    tw_graph_color_mode color_by;  /* TIME without a profile in the model draws kinds */
    const tw_layout_rect *labels;  /* per edge, where its shape goes (width 0: left out); NULL: no shapes */
} tw_graph_scene;

/* Screen = (world - origin) * scale: origin is the world point at the
 * drawing's top-left corner. */
typedef struct {
    double scale, origin_x, origin_y;
} tw_graph_viewport;

/* A box's size for its labels (an estimate any thread can make). */
void tw_graph_node_size(const tw_graph_model *model, const tw_visible_node *node, double *width, double *height);
/* Where each edge's shape label goes (g_free): beside the edge near its
 * producer, clear of every box, of the other labels and of the frames'
 * title bars (tw_graph_layout_place_labels), sized for the renderer's
 * label font; width 0 where there was no room. Any thread. */
tw_layout_rect *tw_graph_place_edge_labels(const tw_graph_model *model, const tw_visible_graph *graph,
                                           const tw_graph_layout *layout, int nframes, const tw_graph_frame *frames);
/* The fill colour of a kind of box. */
tw_rgb tw_graph_kind_color(tw_op_kind kind, bool dark);
/* The heat scale at t in [0, 1]: light yellow, orange, dark red. */
tw_rgb tw_graph_heat_color(double t);
/* Where us falls on the heat scale between min_us and max_us, by log. */
double tw_graph_heat_position(double us, double min_us, double max_us);
/* A box without a measured time. */
tw_rgb tw_graph_untimed_color(bool dark);
/* The selected node and every visible node it depends on (g_free it). */
bool *tw_graph_dependencies(const tw_visible_graph *graph, int selected);
/* The visible node at world point (x, y), or -1. */
int tw_graph_node_at(const tw_graph_layout *layout, double x, double y);
/* The viewport showing the whole layout centred in width x height (at most
 * life size). */
tw_graph_viewport tw_graph_viewport_fit(const tw_graph_layout *layout, int width, int height);

/* Draw the scene; returns how many nodes and edges were drawn (those
 * reaching into the viewport). */
int tw_graph_render(cairo_t *cr, const tw_graph_scene *scene, const tw_graph_viewport *viewport, int width, int height,
                    bool dark);

#endif
