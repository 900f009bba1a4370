/* The median stopping rule (Google Vizier's) for a sweep's trial, the one
 * implementation behind `twb sweep --median-stop` (sweep_cmd.c) and the
 * window's sweep dialog (sweep_queue.c through the training worker):
 * after each epoch a trial stops when its best monitored value so far
 * (val_loss with a validation split, else loss) is worse than the median
 * of the other trials' running means of it up to the same epoch — the
 * sweep's other runs in the run database that reached that epoch, read
 * from their "validation/loss" or "epoch/loss" logs (at least two, else
 * the trial goes on).
 *
 *     twb_median_stop *m = twb_median_stop_new(&trial_settings, "sweep-name");
 *     tw_callback cb = twb_median_stop_callback(m);   // fit's own callback
 *     ... fit ...
 *     if (twb_median_stop_reason(m)) ... the rule stopped it ...
 *     twb_median_stop_free(m);
 *
 * The callback runs on the training thread; read the reason after fit. */
#ifndef TWB_SWEEP_MEDIAN_H
#define TWB_SWEEP_MEDIAN_H

#include <tw/model.h>
#include <tw/train_settings.h>

typedef struct twb_median_stop twb_median_stop;

/* For the trial's run (settings->run_name in settings->logdb) of the sweep. */
twb_median_stop *twb_median_stop_new(const tw_train_settings *settings, const char *sweep);
/* on_epoch_end: 1 (stop) when the rule says so. */
tw_callback twb_median_stop_callback(twb_median_stop *m);
/* NULL, or why the rule stopped the trial ("stopped by the median stopping
 * rule after epoch 1: best loss 0.71 is worse than the median 0.52 of the
 * other trials' running means"), borrowed. */
const char *twb_median_stop_reason(const twb_median_stop *m);
/* The epochs the trial finished. */
int twb_median_stop_epochs(const twb_median_stop *m);
void twb_median_stop_free(twb_median_stop *m); /* NULL is accepted */

#endif
