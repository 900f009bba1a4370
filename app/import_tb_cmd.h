/* twb import-tensorboard DIR [--logdb FILE]: a TensorBoard log directory's
 * runs copied into the run database once. */
#ifndef TWB_IMPORT_TB_CMD_H
#define TWB_IMPORT_TB_CMD_H

/* argv holds what follows "import-tensorboard". Returns the exit status: 0
 * when every run was imported (damaged records are warned about and
 * skipped), 1 when the folder or the database failed or a run was
 * refused, 2 for bad usage. */
int twb_import_tb_command(int argc, char **argv);

#endif
