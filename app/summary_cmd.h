/* twb summary MODEL.json: Keras' model.summary() for a model file. */
#ifndef TWB_SUMMARY_CMD_H
#define TWB_SUMMARY_CMD_H

/* argv holds what follows "summary". Returns the exit status: 0, 1 when
 * the file cannot be read or summarized, 2 for bad usage. */
int twb_summary_command(int argc, char **argv);

#endif
