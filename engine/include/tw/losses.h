/* Tensor Workbench — losses (tf.keras.losses).
 *
 * A loss is a small value type: its kind and options. tw_loss_compute
 * returns the batch mean of the per-example losses (Keras' default
 * reduction, sum over batch size) as a 0-d tensor, recorded on active tapes.
 *
 *     tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
 *     loss.from_logits = true;
 *     tw_tensor *value = tw_loss_compute(&loss, labels, logits);
 */
#ifndef TW_LOSSES_H
#define TW_LOSSES_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum {
    TW_LOSS_MEAN_SQUARED_ERROR,
    TW_LOSS_MEAN_ABSOLUTE_ERROR,
    TW_LOSS_HUBER,
    TW_LOSS_BINARY_CROSSENTROPY,
    TW_LOSS_CATEGORICAL_CROSSENTROPY,
    TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY,
    TW_LOSS_KIND_COUNT
} tw_loss_kind;

typedef struct {
    tw_loss_kind kind;
    bool from_logits; /* cross-entropies: y_pred are logits, not probabilities */
    double delta;     /* Huber: where quadratic turns linear (Keras: 1.0) */
} tw_loss;

tw_loss tw_loss_default(tw_loss_kind kind);
/* Keras' names and aliases: "mse", "mean_squared_error", "mae", "huber",
 * "binary_crossentropy", "categorical_crossentropy",
 * "sparse_categorical_crossentropy". -1 with a message listing them. */
int tw_loss_from_name(const char *name, tw_loss *loss);
const char *tw_loss_name(const tw_loss *loss); /* the canonical snake_case name */

/* Per-example losses (shape y_pred.shape[:-1]; the mean over the last axis
 * for the regression losses, as Keras). Shapes that cannot pair fail with a
 * message naming the loss and both shapes. */
tw_tensor *tw_loss_per_example(const tw_loss *loss, tw_tensor *y_true, tw_tensor *y_pred);
/* Their mean over the batch, a 0-d tensor. */
tw_tensor *tw_loss_compute(const tw_loss *loss, tw_tensor *y_true, tw_tensor *y_pred);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
