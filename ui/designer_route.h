/* Edge routing of the designer's canvas: an orthogonal path from an output
 * port (at the bottom of a box) to an input port (at the top of another)
 * that keeps a margin from every box. Edges leave downwards and arrive
 * from above; a plain vertical line or one step across the gap between
 * the two boxes when that is free, else the shortest path with few bends
 * on the sparse grid of the boxes' sides (orthogonal connector routing).
 * Pure C on plain arrays, shared by the renderer, the hit tests and the
 * tests. */
#ifndef TW_UI_DESIGNER_ROUTE_H
#define TW_UI_DESIGNER_ROUTE_H

#include <glib.h>

/* How far a route keeps from a box, and how far it runs straight out of a
 * port before it may turn. */
#define TW_DESIGNER_ROUTE_MARGIN 10.0
#define TW_DESIGNER_ROUTE_STUB 14.0

/* Boxes as top-left corners (xy: 2n doubles), all w wide and h high, or
 * heights[i] high where heights is not NULL. */
typedef struct {
    int n;
    const double *xy;
    double w, h;
    const double *heights;
} tw_designer_boxes;

/* The route from (x0, y0) to (x1, y1) as points (x, y pairs) in `points`
 * (a GArray of double, cleared first): the ends and the corners; returns
 * the number of points. When no free path exists (boxes overlap a port), the plain
 * step, which may cross boxes. */
int tw_designer_route(const tw_designer_boxes *boxes, double x0, double y0, double x1, double y1, GArray *points);

/* Routes of several edges, one after the other in points (doubles), edge
 * e's from point starts[e] to starts[e + 1] (starts: ints, one more than
 * the edges): the plain steps that cross one channel (the same gap between
 * their source's stub and their target's) get tracks of their own, spread
 * across it in the order that leaves only the crossings their ends force.
 * A channel where a track would meet a box, or would leave less than
 * 3 units between tracks, stays as it was. */
void tw_designer_routes_order_channels(const tw_designer_boxes *boxes, GArray *points, const GArray *starts);

/* Whether the segment (ax, ay)-(bx, by) passes through the inside of the
 * rectangle (x, y, w, h) (touching its border does not count). */
gboolean tw_designer_segment_crosses(double ax, double ay, double bx, double by, double x, double y, double w,
                                     double h);

#endif
