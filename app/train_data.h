/* Data for `twb train`, `twb evaluate` and `twb predict`: a data argument
 * (fashion-mnist, a synthetic set, or files) loaded into whole tensors,
 * one array of examples per model input (Keras' fit([x1, x2], y)). */
#ifndef TWB_TRAIN_DATA_H
#define TWB_TRAIN_DATA_H

#include <stdbool.h>

#include <tw/error.h>
#include <tw/model.h>
#include <tw/train_settings.h>

/* The most inputs data can feed. */
#define TWB_MAX_INPUTS 8

typedef struct {
    const char *data;         /* a built-in set (twb_data_is_builtin), or input 0's file */
    const char *const *more_data; /* the files of inputs 1, 2, ... (NULL-terminated), or NULL */
    const char *labels;       /* labels file beside IDX/NPY features files */
    const char *label_column; /* CSV */
    uint64_t seed;            /* the sets drawn from it */
} twb_data_spec;

typedef struct {
    int ninputs;                /* arrays of examples: one per model input */
    tw_tensor *x[TWB_MAX_INPUTS], *y;           /* training examples (float32) and labels */
    tw_tensor *test_x[TWB_MAX_INPUTS], *test_y; /* held-out test set when the source has one (test_x[0]) */
    char description[160];      /* "Fashion-MNIST (60,000 train, 10,000 test)" */
    int64_t classes;            /* integer labels: the largest label + 1 (a set of sequences: its vocabulary); float targets: 0 */
    bool classes_exact;         /* classes is the set's own count (a built-in set); from a file's labels it is
                                 * only a lower bound: a model may have a unit for a class the file lacks */
    const char *const *class_names; /* the source's names of its classes (static), or NULL */
    int64_t class_count;            /* how many names */
} twb_data;

/* Whether name is a built-in set (fashion-mnist, fashion-mnist-pairs,
 * reverse-sequences, spirals, blobs, linear) rather than a file; *seeded
 * (may be NULL): whether it is drawn from the seed. */
bool twb_data_is_builtin(const char *name, bool *seeded);

/* The data the settings name (borrowing their strings). */
twb_data_spec twb_data_spec_of(const tw_train_settings *settings);
/* 0, or -1 with a message (tw_last_error) naming the file. */
int twb_data_load(const twb_data_spec *spec, twb_data *out);
/* dst shares src's tensors (new references). */
void twb_data_copy(const twb_data *src, twb_data *dst);
void twb_data_clear(twb_data *data);

/* Whether the model can train on the data as `twb train` would train it:
 * one array of examples per input, each fitting its input (twb_fit_input;
 * a model of more inputs than the data gives is told the built-in set that
 * fits it), the model has one output and weights to train, and its output
 * suits the labels under twb_default_loss (one unit per class for integer
 * labels, after the labels' own axes for a class per position; the
 * targets' shape for regression).
 * 0, or -1 with a message (tw_last_error) saying what does not fit and how
 * to fix it. Shape inference only: the model is not built. */
int twb_data_check(tw_model *model, const twb_data *data);

/* Reshape x's examples to the shape of the model's input k when only the
 * layout differs ((N, 28, 28) for a (None, 28, 28, 1) or (None, 784)
 * input); x itself when it already fits, the model declares none, or the
 * input shape's size does not fit in 64 bits (twb_data_check says so). New
 * reference. */
tw_tensor *twb_fit_input(tw_model *model, int k, tw_tensor *x);
/* Every input's examples fitted (twb_fit_input): data's training arrays,
 * or its test arrays when test (the training ones without a test split)
 * into x (new references, twb_inputs_clear); *y (borrowed) gets their
 * labels. Returns the count, data->ninputs. */
int twb_fit_inputs(tw_model *model, const twb_data *data, bool test, tw_tensor **x, tw_tensor **y);
void twb_inputs_clear(int n, tw_tensor **x);

/* Keras' usual loss for a model's output and the labels: integer labels
 * with several outputs, sparse categorical cross-entropy; one output with
 * 0/1 labels (integers, or floats when the output ends in sigmoid: a
 * siamese network's "same or not"), binary cross-entropy; other float
 * targets, mean squared error.
 * from_logits unless the last layer ends in softmax or sigmoid. */
int twb_default_loss(tw_model *model, tw_tensor *y, tw_loss *loss);

#endif
