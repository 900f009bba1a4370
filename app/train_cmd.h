/* twb train / evaluate / predict. */
#ifndef TWB_TRAIN_CMD_H
#define TWB_TRAIN_CMD_H

/* command is "train", "evaluate" or "predict"; argv holds what follows it.
 * Returns the exit status: 0, 1 when the command fails, 2 for bad usage. */
int twb_train_command(const char *command, int argc, char **argv);

#endif
