/* twb sweep: a hyperparameter sweep from a terminal (sweep_cmd.c). */
#ifndef TWB_SWEEP_CMD_H
#define TWB_SWEEP_CMD_H

/* argv: the arguments after "sweep". The exit status: 0 when the sweep ran
 * (failed trials included: they are recorded), 1 when it could not (the
 * data, the model, the run database), 2 for a bad command line. */
int twb_sweep_command(int argc, char **argv);

#endif
