/* Where the graph view's graphs come from, the slow parts run in a worker
 * thread: the graphs stored in a run database (series of kind
 * TW_SERIES_GRAPH, any tag), and the designer's model traced from its
 * Keras JSON; then parsed and arranged. Messages are in plain words and
 * name what failed. Pure C (GLib); no widget. */
#ifndef TW_UI_GRAPH_SOURCE_H
#define TW_UI_GRAPH_SOURCE_H

#include <glib.h>
#include <stdint.h>

#include "graph_arrangement.h"

G_BEGIN_DECLS

typedef struct {
    char *run, *tag;
    int64_t run_id, tag_id;
} tw_stored_graph;

/* Every graph series in the run database at logdb, by run then tag; an
 * empty array when the file does not exist. NULL with *error set when it
 * cannot be read. */
GArray *tw_stored_graphs_list(const char *logdb, GError **error);
/* "RUN · TAG" (g_free it). */
char *tw_stored_graph_label(const tw_stored_graph *g);

/* The last graph stored in the series, arranged; NULL with *error naming
 * the run and tag when it cannot be read or parsed. A graph "graph/X" comes
 * with the run's profile "profile/X" when there is one (graph_profile.h);
 * one that cannot be read leaves the graph without times and its model's
 * profile_error naming the run and tag. */
tw_graph_arrangement *tw_stored_graph_load(const char *logdb, const tw_stored_graph *g, GError **error);
/* The Keras model's traced forward pass, arranged; NULL with *error
 * ("The designer's model cannot be traced: ...") when it cannot be. */
tw_graph_arrangement *tw_designer_graph_load(const char *keras_json, GError **error);
/* Any graph JSON, arranged; NULL with *error (the parser's message). */
tw_graph_arrangement *tw_graph_json_arrange(const char *json, GError **error);

G_END_DECLS

#endif
