/* A sweep's trials several at once, each in a process of its own: `twb
 * sweep MODEL … --sweep NAME --run NAME-K` with the trial's settings as
 * options (twb_sweep_trial_argv: its values, its device, its layer values,
 * the checkpoint folder), which trains that one trial as the sequential
 * sweep trains each (sweep_cmd.c: tagged, the median rule when asked, the
 * result of train_session.h) and records it in the run database. At most
 * `at_once` run together, in the order added; each gets OMP_NUM_THREADS of
 * its share of the cores. Used by `twb sweep --parallel N` and the window's
 * sweep dialog ("At once"); both read a trial's outcome from its run when
 * its process has ended. Runs on the GLib main context it was created on.
 *
 *     twb_sweep_processes_options o = {.model_path = model, .logdb = logdb, .sweep = "grid", .at_once = 2};
 *     twb_sweep_processes *p = twb_sweep_processes_new(&o, &callbacks);
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

typedef struct {
    const char *model_path;     /* a Keras model file the processes read */
    const char *logdb;          /* the trials' run database */
    const char *sweep;          /* the sweep's name */
    const char *checkpoint_dir; /* each trial's checkpoint there (twb_train_checkpoint_in), or NULL: none */
    bool median_stop;
    int at_once;
} twb_sweep_processes_options;

/* The run database is created here when it does not exist (processes
 * starting together would each find a file another is creating). NULL
 * with a message when it cannot be. The options' strings are copied. */
twb_sweep_processes *twb_sweep_processes_new(const twb_sweep_processes_options *options,
                                             const twb_sweep_processes_callbacks *callbacks);
/* The one trial's command line (g_strfreev): the program, "sweep", the
 * model, then the trial's settings as `twb sweep` takes them — data,
 * labels, loss, run database, optimizer and learning rate, validation
 * split, batch size, epochs, seed, --device when set, a --set for each
 * layer value — and the sweep's name, the run's, the checkpoint folder
 * and --median-stop as the options ask. */
char **twb_sweep_trial_argv(const twb_sweep_processes_options *options, const tw_train_settings *trial);
/* Queues a trial (its command line made now, twb_sweep_trial_argv);
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
