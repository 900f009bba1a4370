/* Data for `twb train`, `twb evaluate` and `twb predict`: a data argument
 * (fashion-mnist, a synthetic set, or files) loaded into whole tensors. */
#ifndef TWB_TRAIN_DATA_H
#define TWB_TRAIN_DATA_H

#include <tw/error.h>
#include <tw/model.h>
#include <tw/train_settings.h>

typedef struct {
    const char *data;         /* "fashion-mnist", "spirals", "blobs", "linear", or a file */
    const char *labels;       /* labels file beside an IDX/NPY features file */
    const char *label_column; /* CSV */
    uint64_t seed;            /* synthetic sets */
} twb_data_spec;

typedef struct {
    tw_tensor *x, *y;           /* training examples (float32) and labels */
    tw_tensor *test_x, *test_y; /* held-out test set when the source has one */
    char description[160];      /* "Fashion-MNIST (60,000 train, 10,000 test)" */
    int64_t classes;            /* integer labels: the largest label + 1; float targets: 0 */
    const char *const *class_names; /* the source's names of its classes (static), or NULL */
    int64_t class_count;            /* how many names */
} twb_data;

/* The data the settings name (borrowing their strings). */
twb_data_spec twb_data_spec_of(const tw_train_settings *settings);
/* 0, or -1 with a message (tw_last_error) naming the file. */
int twb_data_load(const twb_data_spec *spec, twb_data *out);
/* dst shares src's tensors (new references). */
void twb_data_copy(const twb_data *src, twb_data *dst);
void twb_data_clear(twb_data *data);

/* Whether the model can train on the data as `twb train` would train it:
 * the examples fit the model's input (twb_fit_input), the model has weights
 * to train, and its output suits the labels under twb_default_loss (one
 * unit per class for integer labels, the targets' shape for regression).
 * 0, or -1 with a message (tw_last_error) saying what does not fit and how
 * to fix it. Shape inference only: the model is not built. */
int twb_data_check(tw_model *model, const twb_data *data);

/* Reshape x's examples to the model's input shape when only the layout
 * differs ((N, 28, 28) for a (None, 28, 28, 1) or (None, 784) input); x
 * itself when it already fits, the model declares none, or the input
 * shape's size does not fit in 64 bits (twb_data_check says so). New
 * reference. */
tw_tensor *twb_fit_input(tw_model *model, tw_tensor *x);

/* Keras' usual loss for a model's output and the labels: integer labels
 * with several outputs, sparse categorical cross-entropy; one output with
 * 0/1 labels, binary cross-entropy; float targets, mean squared error.
 * from_logits unless the last layer ends in softmax or sigmoid. */
int twb_default_loss(tw_model *model, tw_tensor *y, tw_loss *loss);

#endif
