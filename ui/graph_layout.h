/* A layered (Sugiyama) layout of a directed graph: layers by longest path,
 * dummy nodes along edges spanning layers, crossings reduced by barycenter
 * sweeps, x positions without overlap (least squares towards the
 * neighbours' barycenters), edges as polylines through their dummies that
 * pass through no box, data flowing down; and spots for edge labels that
 * overlap nothing. Pure C; deterministic. */
#ifndef TW_UI_GRAPH_LAYOUT_H
#define TW_UI_GRAPH_LAYOUT_H

#include <stdbool.h>

typedef struct {
    double x, y, width, height; /* top-left corner and size */
    int layer;
} tw_layout_box;

typedef struct {
    int from, to;
    int npoints;
    double *points;             /* x0, y0, x1, y1, ...: from's bottom to to's top */
    bool reversed;              /* drawn upwards: it closed a cycle */
} tw_layout_edge;

typedef struct {
    int nnodes;
    tw_layout_box *nodes;
    int nedges;
    tw_layout_edge *edges;
    int nlayers;
    double width, height;       /* the drawing's extent, margins included */
} tw_graph_layout;

typedef struct {
    double x, y, width, height;
} tw_layout_rect;

/* Lay out nnodes boxes of the given sizes and nedges edges (from, to pairs;
 * no self loops). Cycles are broken by reversing the edges that close them.
 * The edges into a node, in list order, are its inputs left to right: the
 * boxes feeding a node are ordered as the inputs they feed. */
tw_graph_layout *tw_graph_layout_new(int nnodes, const double *widths, const double *heights, int nedges,
                                     const int *edges);
/* Boxes nested in frames (the graph view's open scopes): group 0 is the
 * top level, which has no frame; parent[g] < g for the others. Each
 * group's frame reaches pad beyond its boxes and nested frames on the
 * left, right and bottom, and pad + header above them. */
typedef struct {
    int ngroups;
    const int *parent;       /* per group; -1 for group 0 */
    const int *node_group;   /* per node: the innermost group holding it */
    double pad, header;
} tw_layout_nesting;
/* The layout with room for every group's frame: after the layers are
 * ordered and placed, each group's boxes, its edges' bends (those of edges
 * whose both ends lie in it) and its nested groups are packed side by side
 * where their layers meet, nested groups first, so frames nest and no frame
 * covers a box or a frame of another group; the gaps between layers grow
 * by the frame edges that fall in them. nesting NULL: tw_graph_layout_new. */
tw_graph_layout *tw_graph_layout_new_nested(int nnodes, const double *widths, const double *heights, int nedges,
                                            const int *edges, const tw_layout_nesting *nesting);
void tw_graph_layout_free(tw_graph_layout *layout);

/* A spot for each edge's label (widths[e] x heights[e]; 0 for none) beside
 * the edge near its producer — halfway along its first segment, else
 * further along it or its next ones, on either side — that overlaps no
 * box, no other label and none of the obstacles (say, frames' title bars),
 * and if there is such a spot, no other edge's line either.
 * out[e] is the label's rectangle, of width 0 where no spot was free (the
 * label is left out rather than drawn over something). Near-linear: a
 * grid finds what a spot might overlap. */
void tw_graph_layout_place_labels(const tw_graph_layout *layout, const double *widths, const double *heights,
                                  int nobstacles, const tw_layout_rect *obstacles, tw_layout_rect *out);

#endif
