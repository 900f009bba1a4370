/* Tensor Workbench — graph files: a traced function's graph and the tensors
 * it captured in one file, which another process loads and runs without
 * the code that traced it (TensorFlow's SavedModel; docs/graph_file.md).
 *
 *     const tw_graph *g = tw_function_get_graph(forward, 1, TW_TENSORS(x));
 *     tw_graph_save("model.twbgraph", g);
 *     ...                                          // elsewhere, later
 *     tw_graph *g = tw_graph_load("model.twbgraph");
 *     tw_graph_run(g, 1, TW_TENSORS(x), &y, 1);
 *     tw_graph_unref(g);
 *
 * The file is a safetensors file (tw/checkpoint.h): its metadata holds
 * "format" = "twb-graph-file", "version" = "1" and "graph" = the graph's
 * JSON (docs/graph_json.md); its tensors are the graph's constants and
 * variables under their node names (tw_graph_node_name). Saving writes the
 * variables' values at that moment, atomically. Loading checks the graph
 * node by node (tw_graph_from_json) and every tensor against its node; the
 * variables come back as new variables, so an assignment in the graph
 * changes the loaded graph's state as it did the traced one's.
 *
 * Errors follow tw/error.h: NULL or -1 and a message naming the file.
 */
#ifndef TW_GRAPH_FILE_H
#define TW_GRAPH_FILE_H

#include "tw/engine.h"
#include "tw/function.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define TW_GRAPH_FILE_FORMAT "twb-graph-file"

int tw_graph_save(const char *path, const tw_graph *g);
/* A new graph with one reference (tw_graph_unref). */
tw_graph *tw_graph_load(const char *path);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
