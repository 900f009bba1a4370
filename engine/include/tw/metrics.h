/* Tensor Workbench — metrics (tf.keras.metrics): stateful accumulators.
 *
 *     tw_metric *acc = tw_metric_new("sparse_categorical_accuracy");
 *     tw_metric_update_state(acc, labels, logits);    // every batch
 *     printf("%.4f\n", tw_metric_result(acc));       // running value
 *     tw_metric_reset_state(acc);                     // every epoch
 *
 * Metrics never record on tapes. The "mean" metric averages whatever it is
 * given (tw_metric_update_value for one number, or a tensor's elements as
 * y_true with y_pred NULL): the seeds' "average the loss, log every N steps".
 */
#ifndef TW_METRICS_H
#define TW_METRICS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_metric tw_metric;

/* "mean", "accuracy", "sparse_categorical_accuracy", "categorical_accuracy",
 * "binary_accuracy", "precision", "recall" (Keras' names; "acc" is accepted
 * for accuracy). */
tw_metric *tw_metric_new(const char *name);
/* binary_accuracy, precision and recall compare y_pred with a threshold (0.5). */
int tw_metric_set_threshold(tw_metric *metric, double threshold);
void tw_metric_free(tw_metric *metric);
const char *tw_metric_name(const tw_metric *metric);

/* Accumulate a batch; shapes that cannot pair fail naming the metric. */
int tw_metric_update_state(tw_metric *metric, tw_tensor *y_true, tw_tensor *y_pred);
int tw_metric_update_value(tw_metric *metric, double value, double weight);
double tw_metric_result(const tw_metric *metric); /* 0 before any update, as Keras */
void tw_metric_reset_state(tw_metric *metric);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
