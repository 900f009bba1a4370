/* Data for `twb train`, `twb evaluate` and `twb predict`: a data argument
 * (fashion-mnist, a synthetic set, or files) loaded into whole tensors. */
#ifndef TWB_TRAIN_DATA_H
#define TWB_TRAIN_DATA_H

#include <tw/model.h>

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
} twb_data;

/* 0, or -1 with a message (tw_last_error) naming the file. */
int twb_data_load(const twb_data_spec *spec, twb_data *out);
void twb_data_clear(twb_data *data);

/* Reshape x's examples to the model's input shape when only the layout
 * differs ((N, 28, 28) for a (None, 28, 28, 1) or (None, 784) input); x
 * itself when it already fits or the model declares none. New reference. */
tw_tensor *twb_fit_input(tw_model *model, tw_tensor *x);

/* Keras' usual loss for a model's output and the labels: integer labels
 * with several outputs, sparse categorical cross-entropy; one output with
 * 0/1 labels, binary cross-entropy; float targets, mean squared error.
 * from_logits unless the last layer ends in softmax or sigmoid. */
int twb_default_loss(tw_model *model, tw_tensor *y, tw_loss *loss);

#endif
