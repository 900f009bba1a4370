/* twb trace MODEL.json: a model's forward pass traced into a graph file. */
#ifndef TWB_TRACE_CMD_H
#define TWB_TRACE_CMD_H

/* argv holds what follows "trace". Returns the exit status: 0, 1 when the
 * model cannot be loaded, traced or written, 2 for bad usage. */
int twb_trace_command(int argc, char **argv);

#endif
