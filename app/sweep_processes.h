/* A sweep's trials several at once, each in a process of its own: `twb
 * sweep MODEL … --sweep NAME --run NAME-K` with the trial's values, which
 * trains that one trial as the sequential sweep trains each (sweep_cmd.c:
 * tagged, the median rule when asked, the result of train_session.h) and
 * records it in the run database. At most `at_once` run together, in the
 * order added; each gets OMP_NUM_THREADS of its share of the cores. Used
 * by `twb sweep --parallel N` and the window's sweep dialog ("At once");
 * both read a trial's outcome from its run when its process has ended.
 * Runs on the GLib main context it was created on.
 *
 *     twb_sweep_processes *p = twb_sweep_processes_new(model, logdb, "grid", false, 2, &callbacks);
 *     for (...) twb_sweep_processes_add(p, &trials[i]);   // index i, started as room frees
 *     ... main loop until twb_sweep_processes_idle(p) ...
 *     twb_sweep_processes_free(p);
 */
#ifndef TWB_SWEEP_PROCESSES_H
#define TWB_SWEEP_PROCESSES_H

#include <stdbool.h>

#include <glib.h>

#include <tw/train_settings.h>

typedef struct {
    void (*started)(int trial, gpointer user_data);
    /* The process ended: error NULL when it exited with 0 (the run says how
     * the trial went), else why it could not train (its last message, or
     * how it died). Not called for a trial cancelled before it started. */
    void (*ended)(int trial, const char *error, gpointer user_data);
    gpointer user_data;
} twb_sweep_processes_callbacks;

typedef struct twb_sweep_processes twb_sweep_processes;

/* model_path: a Keras model file the processes read; logdb: the trials'
 * run database, created here when it does not exist (processes starting
 * together would each find a file another is creating). NULL with a
 * message when it cannot be. */
twb_sweep_processes *twb_sweep_processes_new(const char *model_path, const char *logdb, const char *sweep,
                                             bool median_stop, int at_once,
                                             const twb_sweep_processes_callbacks *callbacks);
/* Queues a trial (settings copied: data, logdb, run_name and the values);
 * it starts when fewer than at_once run. Returns its index. */
int twb_sweep_processes_add(twb_sweep_processes *p, const tw_train_settings *trial);
/* A pending trial never starts; a running one stops after its step (its
 * run "stopped", as Ctrl+C stops `twb sweep`). */
void twb_sweep_processes_cancel(twb_sweep_processes *p, int trial);
/* Whether nothing runs or waits. */
bool twb_sweep_processes_idle(const twb_sweep_processes *p);
/* Cancels what runs (the processes end on their own) and frees. NULL is accepted. */
void twb_sweep_processes_free(twb_sweep_processes *p);

/* The twb program the processes run: this process's own executable unless
 * set (a test binary names the twb it was built with). */
void twb_sweep_processes_set_program(const char *path);

#endif
