/* Tensor Workbench — a classifier's evaluation on a test set: the confusion
 * matrix, per-class precision, recall and F1, and chosen examples
 * (misclassified first), stored in a run through the summary writer as
 * tensor, image and text summaries under the EVAL_* tags below, which the
 * window's Evaluation tab reads.
 *
 *     tw_tensor *out = tw_model_predict(model, test_x, 256);
 *     tw_evaluation e;
 *     if (tw_evaluation_compute(out, test_y, TW_EVALUATION_PER_CELL, &e) == 0) {
 *         tw_evaluation_log(writer, &e, test_x, class_names, step);
 *         tw_evaluation_clear(&e);
 *     }
 */
#ifndef TW_EVALUATION_H
#define TW_EVALUATION_H

#include "tw/engine.h"
#include "tw/summary.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* int64 [classes, classes]: row the true class, column the predicted one. */
#define TW_EVAL_TAG_CONFUSION "evaluation/confusion_matrix"
/* float64 [classes, 4]: precision, recall, F1, support (true examples). */
#define TW_EVAL_TAG_PER_CLASS "evaluation/per_class"
/* float64 [samples, 4]: index in the test set, true class, predicted class,
 * confidence (the predicted class's probability). */
#define TW_EVAL_TAG_SAMPLES "evaluation/samples"
/* One image per row of TW_EVAL_TAG_SAMPLES, for image data ([N, H, W],
 * [N, H, W, C] with C 1 to 4), at the samples' step: the last S images of
 * that step are the newest evaluation's S rows, in order (an evaluation
 * stored again at the same step numbers its images after the earlier
 * ones). */
#define TW_EVAL_TAG_SAMPLE_IMAGES "evaluation/sample_images"
/* float64 [samples, F]: the first F (at most TW_EVALUATION_MAX_VALUES) input
 * values of each sample row, for data that is not images. */
#define TW_EVAL_TAG_SAMPLE_VALUES "evaluation/sample_values"
/* Text: the class names, one a line, when known. */
#define TW_EVAL_TAG_CLASS_NAMES "evaluation/class_names"

#define TW_EVALUATION_PER_CELL 8   /* examples kept per cell of the matrix */
#define TW_EVALUATION_MAX_VALUES 16

typedef struct {
    int64_t classes, examples;
    int64_t *confusion;               /* classes x classes */
    double *precision, *recall, *f1;  /* per class; 0 where undefined (no prediction / no example), as sklearn */
    int64_t *support;                 /* true examples per class */
    double accuracy;
    /* The chosen examples: at most per_cell of each cell, misclassified
     * first (most confident first), then correct ones (least confident
     * first). */
    int64_t nsamples;
    int64_t *sample_index;
    int64_t *sample_true, *sample_pred;
    double *sample_confidence;
} tw_evaluation;

/* outputs: the model's predictions [N, C] (C >= 2 classes) or [N] / [N, 1]
 * (binary, 0.5 the threshold): probabilities, or logits (softmaxed or
 * sigmoided) when any value lies outside [0, 1] or any row of several
 * classes does not sum to 1.
 * labels: class indices [N] / [N, 1] (any dtype, whole numbers), or one-hot
 * [N, C]. 0, or -1 with a message (shapes that disagree, a label outside
 * the classes, a model that does not classify). */
int tw_evaluation_compute(tw_tensor *outputs, tw_tensor *labels, int per_cell, tw_evaluation *out);

/* Writes e under the EVAL_* tags at step: the matrix, the per-class
 * figures, the samples and, from x (the inputs e was computed on), their
 * images or values; class_names (NULL, or e->classes strings) as text. */
int tw_evaluation_log(tw_summary_writer *w, const tw_evaluation *e, tw_tensor *x, const char *const *class_names,
                      int64_t step);

void tw_evaluation_clear(tw_evaluation *e);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
