/* TwGraphInspector: the graph view's side panel for the selected box: an
 * op's name, op, scope, attributes, and each input (the node feeding it, a
 * button that selects that node) and output with shape and dtype; a
 * scope's path and size. "Trace inputs" (the "trace-inputs" property)
 * asks the view to highlight everything the box depends on. */
#ifndef TW_UI_GRAPH_INSPECTOR_H
#define TW_UI_GRAPH_INSPECTOR_H

#include <gtk/gtk.h>

#include "graph_arrangement.h"

G_BEGIN_DECLS

#define TW_TYPE_GRAPH_INSPECTOR (tw_graph_inspector_get_type())
G_DECLARE_FINAL_TYPE(TwGraphInspector, tw_graph_inspector, TW, GRAPH_INSPECTOR, GtkWidget)

GtkWidget *tw_graph_inspector_new(void);
/* Show visible node `visible` of the arrangement (-1 or NULL: nothing
 * selected). "node-activated" (int: a graph node) follows a click on an
 * input. */
void tw_graph_inspector_show(TwGraphInspector *inspector, const tw_graph_arrangement *a, int visible);
gboolean tw_graph_inspector_trace_inputs(TwGraphInspector *inspector);

G_END_DECLS

#endif
