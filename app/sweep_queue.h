/* Sweeps from the window: the window's "win.sweep" action (the training
 * panel's Sweep… button) opens the sweep dialog (ui/sweep_dialog.c); Start
 * reads its fields with the CLI's parsing and trial expansion
 * (sweep_spec.h) over the training panel's settings, and queues the
 * trials. They run one after another through the window's training
 * controller (train_controller.h: the panel shows each as it trains), each
 * a run in the run database tagged with the sweep; the HParams view shows
 * them as it reads the database. With the dialog's median rule on, the
 * CLI's rule (sweep_median.h) stops bad trials after an epoch, through
 * the worker's epoch-end callback. With "At once" above 1 the trials
 * train together instead, each a process of its own (sweep_processes.h,
 * as `twb sweep --parallel`: the designer's model written to a temporary
 * file, each trial's outcome read from its run as its process ends; the
 * panel stays free; Cancel interrupts the process; the panel's device is
 * not passed on: they train on the CPU). A trial that fails does not stop
 * the sweep. Cancel: a pending trial does not run; a running one stops after
 * its step (its run "stopped", with a checkpoint). A run the panel's Train
 * starts meanwhile goes first; the queue goes on when it ends. */
#ifndef TWB_SWEEP_QUEUE_H
#define TWB_SWEEP_QUEUE_H

#include "window.h"

/* After twb_train_controller_attach. */
void twb_sweep_queue_attach(TwWindow *win);
/* The dialog, created on first use (what win.sweep presents). */
GtkWidget *twb_sweep_queue_dialog(TwWindow *win);

#endif
