/* Training from the window: connects a window's training panel to a
 * training worker (train_worker.c), one run at a time per window, and tells
 * the panel and the window what happens. Closing the window stops the run
 * (with a checkpoint) and waits for the worker. */
#ifndef TWB_TRAIN_CONTROLLER_H
#define TWB_TRAIN_CONTROLLER_H

#include "window.h"

void twb_train_controller_attach(TwWindow *win);

#endif
