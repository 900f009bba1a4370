/* Training from the window: connects a window's training panel to a
 * training worker (train_worker.c), one run at a time per window, and tells
 * the panel and the window what happens. Closing the window stops the run
 * (with a checkpoint) and waits for the worker. */
#ifndef TWB_TRAIN_CONTROLLER_H
#define TWB_TRAIN_CONTROLLER_H

#include "train_worker.h"
#include "window.h"

void twb_train_controller_attach(TwWindow *win);

/* A run that is not the panel's Train (a sweep's trial, sweep_queue.c):
 * started as Train starts one, the panel showing it under its own name;
 * done is called once as it ends, before the panel is told. epoch_end
 * (may be NULL): the worker's (train_worker.h), on its thread. FALSE when
 * a run is going or it cannot start (the window's banner says why). */
typedef void (*twb_train_controller_done)(const twb_train_result *result, gpointer user_data);
gboolean twb_train_controller_run(TwWindow *win, const tw_train_settings *settings, const tw_callback *epoch_end,
                                  twb_train_controller_done done, gpointer user_data);
/* Whether a run is going. */
gboolean twb_train_controller_busy(TwWindow *win);
/* Stop the run going (as Stop does); nothing when none is. */
void twb_train_controller_stop(TwWindow *win);

#endif
