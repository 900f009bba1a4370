/* twb run-graph FILE: a graph file run on NPY inputs, without the model. */
#ifndef TWB_RUN_GRAPH_CMD_H
#define TWB_RUN_GRAPH_CMD_H

/* argv holds what follows "run-graph". Returns the exit status: 0, 1 when
 * the graph or an input cannot be read or run, 2 for bad usage. */
int twb_run_graph_command(int argc, char **argv);

#endif
