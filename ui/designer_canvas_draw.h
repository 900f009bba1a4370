/* The designer canvas's geometry and drawing: pure functions of the
 * document, a viewport and what the pointer is doing, drawing with Cairo
 * (no widget), so the canvas and the tests share them. Document units are
 * pixels at zoom 1; a widget point is doc * zoom + offset. */
#ifndef TW_UI_DESIGNER_CANVAS_DRAW_H
#define TW_UI_DESIGNER_CANVAS_DRAW_H

#include <cairo.h>
#include <glib.h>

#include "model_doc.h"

typedef struct {
    double zoom, ox, oy;
} tw_designer_viewport;

/* What is drawn besides the document. */
typedef struct {
    const gboolean *selected;   /* per node, or NULL */
    int edge_node, edge_input;  /* the selected edge; edge_node -1 for none */
    double move_dx, move_dy;    /* selected boxes dragged this far (doc units) */
    gboolean connecting;        /* a new edge from (x0, y0) to the pointer */
    gboolean banding;           /* the rubber band (x0, y0)-(x1, y1) */
    double x0, y0, x1, y1;      /* doc units */
    int hover_target;           /* the box a new edge would go into, or -1 */
} tw_designer_overlay;

/* Input ports drawn on node: 0 for an InputLayer, 1 for a one-input layer,
 * connected + 1 (a free one) for a layer of several inputs. */
int tw_designer_input_ports(TwModelDoc *doc, int node);
/* A box's height: TW_DESIGNER_BOX_HEIGHT, or taller for an open nested
 * model (tw_model_doc_node_expanded), which lists its layers below its
 * own lines (at most 40, then how many more). */
double tw_designer_box_height(TwModelDoc *doc, int node);
/* Those rows: "class\tname\toutput shape\tparameters" per layer of the
 * nested model (shape and count empty where inference stops); NULL when
 * the node is not a nested model (g_strfreev). */
char **tw_designer_nested_rows(TwModelDoc *doc, int node);
/* A port's point in doc units (moved by dx, dy). */
void tw_designer_port_point(TwModelDoc *doc, int node, gboolean output, int port, double *x, double *y);
/* The edge into node's input `input` as its route around the boxes
 * (designer_route.h: points in `points`, a GArray of double, doc units),
 * with the boxes of moved nodes shifted; returns the number of points. */
int tw_designer_edge_route(TwModelDoc *doc, int node, int input, const tw_designer_overlay *overlay, GArray *points);
/* Hit tests in doc units: the box under the point (topmost), the output
 * port within reach (node and port), the edge within reach (node, input). */
int tw_designer_hit_box(TwModelDoc *doc, double x, double y);
gboolean tw_designer_hit_output(TwModelDoc *doc, double x, double y, double reach, int *node, int *port);
gboolean tw_designer_hit_edge(TwModelDoc *doc, double x, double y, double reach, int *node, int *input);

/* The minimap of a model larger than the view: an overview in the
 * bottom-right corner of the widget. FALSE when all of it is in view.
 * A widget point inside it maps to the document point doc_x, doc_y. */
typedef struct {
    double x, y, width, height; /* widget pixels */
    double scale, x0, y0;       /* widget = (doc - x0) * scale + corner */
} tw_designer_minimap;
gboolean tw_designer_minimap_place(TwModelDoc *doc, const tw_designer_viewport *view, double width, double height,
                                   tw_designer_minimap *map);
void tw_designer_minimap_to_doc(const tw_designer_minimap *map, double x, double y, double *doc_x, double *doc_y);

/* "54,410": Keras' summary separates thousands with commas. */
void tw_designer_format_count(int64_t n, char *buf, size_t size);

/* The output shapes a box shows, every output's in port order, the first
 * on a line of its own ("(None, 10, 64)\n(None, 64)  (None, 64)"; "—"
 * while unknown); g_free. */
char *tw_designer_box_shapes(TwModelDoc *doc, int node);

/* Draw the document into a width x height widget area, minimap included. */
void tw_designer_draw(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view, double width, double height,
                      const tw_designer_overlay *overlay);
/* Its parts: the document (background, edges, boxes, the overlay's new
 * edge and rubber band) inside cr's clip, only the edges and boxes that
 * meet it drawn; the minimap of a width x height widget area over it. */
void tw_designer_draw_document(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view,
                               const tw_designer_overlay *overlay);
void tw_designer_draw_minimap(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view, double width,
                              double height);

#endif
