/* A traced graph's measured times: the profile `twb train --trace --logdb`
 * stores beside a graph ("profile/X" next to "graph/X", a text series whose
 * JSON is {"format": "twb-graph-profile", "version": 1, "function": NAME,
 * "runs": N, "nodes": [{"name", "op", "total_us", "mean_us"}, ...]}, one
 * entry per op node, by the graph's node names), attached to the graph
 * model: a mean per node, summed per scope. Pure C (GLib, json-glib). */
#ifndef TW_UI_GRAPH_PROFILE_H
#define TW_UI_GRAPH_PROFILE_H

#include <stddef.h>

#include "graph_model.h"

G_BEGIN_DECLS

/* Read the profile into model (node_us, scope_us, step_us, profile_runs);
 * FALSE with *error saying what is wrong, the model then left without one. */
gboolean tw_graph_profile_apply(tw_graph_model *model, const char *json, GError **error);
/* A box's time per run in µs (a closed scope's: the sum of its nodes'), or
 * -1 when nothing in it was measured or the model has no profile. */
double tw_graph_visible_us(const tw_graph_model *model, const tw_visible_node *node);
/* The smallest and largest time of the graph's boxes; FALSE when none has
 * one. */
gboolean tw_graph_time_range(const tw_graph_model *model, const tw_visible_graph *graph, double *min_us,
                             double *max_us);
/* "12.3 µs", "1.20 ms", "2.50 s" into buf. */
const char *tw_graph_format_us(double us, char *buf, size_t size);

G_END_DECLS

#endif
