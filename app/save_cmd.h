/* twb save IN.json OUT.json [--format keras2|keras3]: a model file written
 * again in Keras 2's or Keras 3's JSON form. */
#ifndef TWB_SAVE_CMD_H
#define TWB_SAVE_CMD_H

/* argv holds what follows "save". Returns the exit status: 0, 1 when a
 * file cannot be read or written, 2 for bad usage. */
int twb_save_command(int argc, char **argv);

#endif
