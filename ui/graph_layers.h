/* The graph view's drawing of a model that cannot be traced into ops
 * because a layer of it cannot run here (a Lambda's Python code, a
 * StringLookup): its layer graph, one node per layer call, as graph JSON
 * (docs/graph_json.md, "Layer graphs"), each layer's class as its op and
 * the reason on the layers that cannot run. Pure C, any thread. */
#ifndef TW_UI_GRAPH_LAYERS_H
#define TW_UI_GRAPH_LAYERS_H

#include <glib.h>
#include <tw/model.h>

G_BEGIN_DECLS

/* The layer graph's JSON (g_free it); note is the line the view shows
 * above it. NULL with *error set when a layer's shapes cannot be inferred. */
char *tw_graph_layers_json(const tw_model *model, const char *note, GError **error);

G_END_DECLS

#endif
