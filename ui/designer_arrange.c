/* Auto-arrange (designer_arrange.h). */
#include "designer_arrange.h"

#include <glib.h>

#include "graph_layout.h"

void tw_designer_arrange(int n, int nedges, const int *edges, const double *heights, double *xy)
{
    if (n <= 0)
        return;
    double *w = g_new(double, n), *h = g_new(double, n);
    for (int i = 0; i < n; i++) {
        w[i] = TW_DESIGNER_BOX_WIDTH;
        h[i] = heights ? heights[i] : TW_DESIGNER_BOX_HEIGHT;
    }
    tw_graph_layout *layout = tw_graph_layout_new(n, w, h, nedges, edges);
    for (int i = 0; i < n; i++) {
        xy[2 * i] = layout ? layout->nodes[i].x : 40.0;
        xy[2 * i + 1] = layout ? layout->nodes[i].y : 40.0 + i * (TW_DESIGNER_BOX_HEIGHT + 40.0);
    }
    tw_graph_layout_free(layout);
    g_free(w);
    g_free(h);
}
