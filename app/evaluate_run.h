/* A trained classifier's evaluation stored in its run (tw/evaluation.h):
 * after `twb train` and the window's training, by `twb evaluate --logdb F
 * --run NAME`, and from the run list's menu (Evaluate). */
#ifndef TWB_EVALUATE_RUN_H
#define TWB_EVALUATE_RUN_H

#include <tw/summary.h>

#include "train_data.h"

/* The model's predictions for x (the model's input layout, twb_fit_input)
 * against labels y, with the data's class names, written through w at
 * step. Data it does not apply to (twb_evaluation_applies) has none: 1
 * and nothing written. 0, or -1 with a message. */
int twb_evaluation_write(tw_summary_writer *w, tw_model *model, tw_tensor *x, tw_tensor *y, const twb_data *data,
                         int64_t step);

/* Whether the evaluation (a confusion matrix, per-class figures and
 * example images) applies: one input of examples, each with one class
 * label. Not for float targets (a regression, a siamese network's "same"
 * score), several inputs or a label per position (a sequence's tokens). */
bool twb_evaluation_applies(const twb_data *data);

/* Opens run `run` of logdb without reopening it (tw_summary_run_options.
 * annotate), writes the evaluation of model on data's test split at the
 * run's last step (where its logs end: the step the trained model reached)
 * and closes. 0, 1 (it does not apply: nothing written), or -1 with a
 * message. */
int twb_evaluation_store(const char *logdb, const char *run, tw_model *model, const twb_data *data);

#endif
