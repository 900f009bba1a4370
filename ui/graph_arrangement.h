/* One arrangement of a traced graph: the graph model (shared, immutable),
 * which scopes are open, the visible graph those give and its layout, and
 * a frame around each open scope. Made in any thread (the layout of 5,000
 * nodes takes a tenth of a second), immutable once made, and shared
 * between the graph view and its render jobs by an atomic reference count. */
#ifndef TW_UI_GRAPH_ARRANGEMENT_H
#define TW_UI_GRAPH_ARRANGEMENT_H

#include "graph_layout.h"
#include "graph_model.h"
#include "graph_render.h"

G_BEGIN_DECLS

typedef struct {
    const tw_graph_model *model;
    bool *expanded;         /* per scope */
    tw_visible_graph *graph;
    tw_graph_layout *layout;
    int nframes;
    tw_graph_frame *frames; /* open scopes other than the root, outer ones first */
    tw_layout_rect *labels; /* per edge: where its shape goes (tw_graph_place_edge_labels) */
} tw_graph_arrangement;

/* Arrange model (taken) with the scopes in expanded[] open (NULL: the
 * default expansion). */
tw_graph_arrangement *tw_graph_arrangement_new(tw_graph_model *model, const bool *expanded);
/* The same model with other scopes open. */
tw_graph_arrangement *tw_graph_arrangement_rearrange(const tw_graph_arrangement *from, const bool *expanded);
tw_graph_arrangement *tw_graph_arrangement_ref(tw_graph_arrangement *a);
void tw_graph_arrangement_unref(tw_graph_arrangement *a);

/* The visible node that shows graph node i: its own box, its collapsed
 * scope's box, or the op it is tucked into. */
int tw_graph_arrangement_visible_of(const tw_graph_arrangement *a, int node);
/* The scope whose expander is at world point (x, y) (a collapsed scope's
 * box or an open scope's frame title), or -1. */
int tw_graph_arrangement_expander_at(const tw_graph_arrangement *a, double x, double y);
/* A scene of this arrangement for the renderer. */
tw_graph_scene tw_graph_arrangement_scene(const tw_graph_arrangement *a, int selected, const bool *highlighted);

G_END_DECLS

#endif
