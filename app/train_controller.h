/* Training from the window: connects a window's training panel to a
 * training worker (train_worker.c), one run at a time per window, and tells
 * the panel and the window what happens. Closing the window stops the run
 * (with a checkpoint) and waits for the worker. */
#ifndef TW_APP_TRAIN_CONTROLLER_H
#define TW_APP_TRAIN_CONTROLLER_H

#include "window.h"

void tw_train_controller_attach(TwWindow *win);

#endif
