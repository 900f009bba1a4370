/* Box geometry of the designer's canvas and its auto-arrange: the graph
 * view's layered layout (graph_layout.h) run on the document's boxes, of
 * one width, data flowing down. Pure C on plain arrays, so it can run in a
 * worker thread. */
#ifndef TW_UI_DESIGNER_ARRANGE_H
#define TW_UI_DESIGNER_ARRANGE_H

/* A box on the canvas, in document units (pixels at zoom 1). */
#define TW_DESIGNER_BOX_WIDTH 190.0
#define TW_DESIGNER_BOX_HEIGHT 66.0

/* Top-left corners for n boxes (xy: 2n doubles) joined by nedges edges
 * (from, to pairs); heights: each box's (an open nested model is taller),
 * or NULL for all TW_DESIGNER_BOX_HEIGHT. */
void tw_designer_arrange(int n, int nedges, const int *edges, const double *heights, double *xy);

#endif
