/* twb runs list|show|export|delete|rename|notes: the run database from the
 * command line. */
#ifndef TWB_RUNS_CMD_H
#define TWB_RUNS_CMD_H

/* argv holds what follows "runs". Returns the exit status: 0, 1 when the
 * file or the run cannot be read or changed, 2 for bad usage. */
int twb_runs_command(int argc, char **argv);

#endif
