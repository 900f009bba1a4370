/* TwSweepTrial: one trial of a sweep as the queue view (sweep_dialog.c)
 * shows it: its run's name, the swept values ("learning_rate=0.001
 * batch_size=32"), where it is in the queue, and why it failed. The
 * application (app/sweep_queue.c) creates them and moves them along;
 * "notify::status" tells the view.
 *
 *     TwSweepTrial *t = tw_sweep_trial_new("sweep-1", "batch_size=32");
 *     tw_sweep_trial_set_status(t, TW_SWEEP_TRIAL_FAILED, "the loss is NaN");
 */
#ifndef TW_UI_SWEEP_TRIAL_H
#define TW_UI_SWEEP_TRIAL_H

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
    TW_SWEEP_TRIAL_PENDING,
    TW_SWEEP_TRIAL_RUNNING,
    TW_SWEEP_TRIAL_FINISHED,
    TW_SWEEP_TRIAL_STOPPED,   /* cancelled while it ran: the run is "stopped" with a checkpoint */
    TW_SWEEP_TRIAL_FAILED,
    TW_SWEEP_TRIAL_CANCELLED, /* cancelled before it started: no run */
} TwSweepTrialStatus;

#define TW_TYPE_SWEEP_TRIAL (tw_sweep_trial_get_type())
G_DECLARE_FINAL_TYPE(TwSweepTrial, tw_sweep_trial, TW, SWEEP_TRIAL, GObject)

TwSweepTrial *tw_sweep_trial_new(const char *run_name, const char *values);
const char *tw_sweep_trial_run_name(TwSweepTrial *trial);
const char *tw_sweep_trial_values(TwSweepTrial *trial);
TwSweepTrialStatus tw_sweep_trial_status(TwSweepTrial *trial);
/* Why it failed (or NULL). */
const char *tw_sweep_trial_reason(TwSweepTrial *trial);
void tw_sweep_trial_set_status(TwSweepTrial *trial, TwSweepTrialStatus status, const char *reason);
/* "pending", "running", "finished", "stopped", "failed", "cancelled" */
const char *tw_sweep_trial_status_name(TwSweepTrialStatus status);
/* Pending or running: Cancel applies. */
gboolean tw_sweep_trial_is_open(TwSweepTrial *trial);

G_END_DECLS

#endif
