/* app.evaluate-run (logdb, run name): the run list's "Evaluate on Test
 * Data". Off the main loop, the run's stored model with the checkpoint the
 * window keeps for it (twb_train_checkpoint_path) is evaluated on the test
 * split of the data its settings name and the evaluation stored in the run
 * (evaluate_run.c); the window's banner says how it went. */
#ifndef TWB_EVALUATE_ACTION_H
#define TWB_EVALUATE_ACTION_H

#include <gtk/gtk.h>

void twb_evaluate_run_activate(GSimpleAction *action, GVariant *parameter, gpointer app);

/* The same, synchronously: 0, or -1 with a message (tw_last_error) naming
 * what is missing. For the action's thread and tests. */
int twb_evaluate_stored_run(const char *logdb, const char *run);

#endif
