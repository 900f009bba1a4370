/* twb convert IN OUT [--weights FILE]: a model file into another format
 * (Keras JSON, .keras, .h5, safetensors), weights included. */
#ifndef TWB_CONVERT_CMD_H
#define TWB_CONVERT_CMD_H

/* argv holds what follows "convert". Returns the exit status: 0, 1 when a
 * file cannot be read or written, 2 for bad usage. */
int twb_convert_command(int argc, char **argv);

#endif
