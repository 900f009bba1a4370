/* Loading a `--data` argument into whole tensors (the sets twb trains on fit
 * in memory: Fashion-MNIST is 188 MB as float32), shaping them for a model,
 * and choosing a loss the way Keras users usually would. */
#include "train_data.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <tw/data.h>

/* One element holding every example: the dataset batched by its size. */
static int materialize(tw_dataset *ds, tw_tensor **x, tw_tensor **y)
{
    if (!ds)
        return -1;
    int64_t n = tw_dataset_cardinality(ds);
    tw_dataset *all = tw_dataset_batch(ds, n > 0 ? n : 1, false);
    tw_iterator *it = all ? tw_dataset_iter(all) : NULL;
    tw_element e = {0};
    int rc = it ? tw_iterator_next(it, &e) : -1;
    if (rc > 0) {
        *x = e.t[0];
        *y = e.n > 1 ? e.t[1] : NULL;
        e.n = 0;
    }
    tw_iterator_free(it);
    tw_dataset_unref(all);
    if (rc == 0)
        tw_error_set("the data set is empty");
    return rc > 0 ? 0 : -1;
}

/* Labels as int32 class indices when they are integers of any width. */
static tw_tensor *labels_for_training(tw_tensor *y)
{
    if (!y || tw_dtype_is_float(tw_tensor_dtype(y)) || tw_tensor_dtype(y) == TW_INT32)
        return y;
    tw_tensor *cast = tw_cast(y, TW_INT32);
    tw_tensor_unref(y);
    return cast;
}

static tw_tensor *features_for_training(tw_tensor *x)
{
    if (!x || tw_tensor_dtype(x) == TW_FLOAT32)
        return x;
    tw_tensor *cast = tw_cast(x, TW_FLOAT32);
    tw_tensor_unref(x);
    return cast;
}

static int load_fashion_mnist(twb_data *out)
{
    out->class_names = tw_fashion_mnist_classes;
    out->class_count = 10;
    if (materialize(tw_dataset_scale(tw_dataset_fashion_mnist("train"), 0, 1.0 / 255), &out->x, &out->y) ||
        materialize(tw_dataset_scale(tw_dataset_fashion_mnist("test"), 0, 1.0 / 255), &out->test_x, &out->test_y))
        return -1;
    snprintf(out->description, sizeof out->description, "Fashion-MNIST (%lld train, %lld test)",
             (long long)tw_tensor_dim(out->x, 0), (long long)tw_tensor_dim(out->test_x, 0));
    return 0;
}

static tw_dataset *synthetic(const char *name, uint64_t seed)
{
    if (!strcmp(name, "spirals"))
        return tw_dataset_spirals(2000, 0.1, seed);
    if (!strcmp(name, "blobs"))
        return tw_dataset_blobs(2000, 3, 2, 1.0, seed);
    if (!strcmp(name, "linear"))
        return tw_dataset_linear(1000, 1.0, seed);
    return NULL;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

static tw_dataset *file_dataset(const twb_data_spec *spec)
{
    const char *path = spec->data;
    if (has_suffix(path, ".csv")) {
        tw_csv_options options = {.label_column = spec->label_column};
        return tw_dataset_csv(path, &options);
    }
    if (has_suffix(path, ".npy") || strstr(path, ".npz"))
        return tw_dataset_npy(path, spec->labels);
    return tw_dataset_idx(path, spec->labels);
}

/* Integer labels: the largest + 1, the number of classes a classifier needs
 * (labels are class indices from 0); float targets: 0. */
static int64_t count_classes(tw_tensor *y)
{
    if (!y || tw_dtype_is_float(tw_tensor_dtype(y)) || !tw_tensor_numel(y))
        return 0;
    tw_tensor *max = tw_max(y, 0, NULL, false);
    double v = max ? tw_tensor_item(max) : 0;
    tw_tensor_unref(max);
    return v >= 0 ? (int64_t)v + 1 : 1;
}

twb_data_spec twb_data_spec_of(const tw_train_settings *s)
{
    return (twb_data_spec){.data = s->data, .labels = s->labels, .label_column = s->label_column, .seed = s->seed};
}

int twb_data_load(const twb_data_spec *spec, twb_data *out)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (!strcmp(spec->data, "fashion-mnist")) {
        rc = load_fashion_mnist(out);
    } else {
        tw_dataset *ds = synthetic(spec->data, spec->seed);
        bool is_synthetic = ds != NULL;
        rc = materialize(is_synthetic ? ds : file_dataset(spec), &out->x, &out->y);
        if (!rc && !out->y)
            rc = tw_error_set("%s: no labels; name a labels file with --labels or a CSV column with --label-column",
                              spec->data);
        if (!rc)
            snprintf(out->description, sizeof out->description, "%s (%lld examples)", spec->data,
                     (long long)tw_tensor_dim(out->x, 0));
    }
    out->x = features_for_training(out->x);
    out->y = labels_for_training(out->y);
    out->test_x = features_for_training(out->test_x);
    out->test_y = labels_for_training(out->test_y);
    if (rc || !out->x || !out->y) {
        twb_data_clear(out);
        return -1;
    }
    out->classes = count_classes(out->y);
    return 0;
}

void twb_data_copy(const twb_data *src, twb_data *dst)
{
    *dst = *src;
    tw_tensor_ref(dst->x);
    tw_tensor_ref(dst->y);
    if (dst->test_x)
        tw_tensor_ref(dst->test_x);
    if (dst->test_y)
        tw_tensor_ref(dst->test_y);
}

void twb_data_clear(twb_data *data)
{
    tw_tensor_unref(data->x);
    tw_tensor_unref(data->y);
    tw_tensor_unref(data->test_x);
    tw_tensor_unref(data->test_y);
    memset(data, 0, sizeof *data);
}

/* The number of values in one example of a shape (its axes after the
 * batch's): 0 with *n set; 1 when an axis is unknown (None); -1 when the
 * product does not fit in an int64_t (a typed input shape can ask for that). */
static int values_per_example(const tw_shape *shape, int64_t *n)
{
    int64_t v = 1;
    for (int i = 1; i < shape->ndim; i++) {
        if (shape->dims[i] < 0)
            return 1;
        if (__builtin_mul_overflow(v, shape->dims[i], &v))
            return -1;
    }
    *n = v;
    return 0;
}

static int64_t examples_of(tw_tensor *x)
{
    return tw_tensor_ndim(x) ? tw_tensor_dim(x, 0) : 0;
}

/* The values in one of x's examples (x holds them all, so no overflow). */
static int64_t example_size(tw_tensor *x)
{
    return examples_of(x) ? tw_tensor_numel(x) / examples_of(x) : 0;
}

tw_tensor *twb_fit_input(tw_model *model, tw_tensor *x)
{
    const tw_shape *in = tw_model_input_shape(model);
    if (!x || !in)
        return x ? tw_tensor_ref(x) : NULL;
    int64_t want;
    if (values_per_example(in, &want) || want != example_size(x))
        return tw_tensor_ref(x); /* the model's own error will name the shapes */
    int64_t shape[TW_MAX_DIMS];
    shape[0] = tw_tensor_dim(x, 0);
    for (int i = 1; i < in->ndim; i++)
        shape[i] = in->dims[i];
    tw_tensor *r = tw_reshape(x, in->ndim, shape);
    return r;
}

/* The activation the model's output ends in: the last layer's, looking
 * into a nested model at the end. */
static const char *final_activation(const tw_model *model)
{
    int n = tw_model_nlayers(model);
    const tw_layer *last = n > 0 ? tw_model_layer_at(model, n - 1) : NULL;
    if (!last)
        return "linear";
    if (tw_layer_is_model(last))
        return final_activation(last);
    if (!strcmp(tw_layer_class_of(last)->name, "Softmax"))
        return "softmax";
    if (!tw_layer_class_param(tw_layer_class_of(last), "activation"))
        return "linear";
    return tw_layer_get(last, "activation")->choice;
}

int twb_default_loss(tw_model *model, tw_tensor *y, tw_loss *loss)
{
    tw_shape out;
    const tw_shape *in = tw_model_input_shape(model);
    if (!in)
        return tw_error_set("model '%s' has no input shape", tw_layer_name(model));
    if (tw_layer_infer(model, in, &out, NULL, NULL))
        return -1;
    int64_t units = out.dims[out.ndim - 1];
    const char *act = final_activation(model);
    bool integer_labels = !tw_dtype_is_float(tw_tensor_dtype(y));
    if (integer_labels && units > 1)
        *loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    else if (integer_labels)
        *loss = tw_loss_default(TW_LOSS_BINARY_CROSSENTROPY);
    else if (tw_tensor_ndim(y) == 2 && tw_tensor_dim(y, 1) == units && units > 1 && !strcmp(act, "softmax"))
        *loss = tw_loss_default(TW_LOSS_CATEGORICAL_CROSSENTROPY);
    else
        *loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    loss->from_logits = strcmp(act, "softmax") && strcmp(act, "sigmoid");
    return 0;
}

/* ---- does the model fit the data ------------------------------------------ */
/* "(None, 28, 28)" */
static const char *shape_text(const tw_shape *shape, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < shape->ndim && n < size; i++) {
        const char *sep = i ? ", " : "";
        n += shape->dims[i] < 0 ? (size_t)snprintf(buf + n, size - n, "%sNone", sep)
                                : (size_t)snprintf(buf + n, size - n, "%s%lld", sep, (long long)shape->dims[i]);
    }
    if (n < size)
        snprintf(buf + n, size - n, shape->ndim == 1 ? ",)" : ")");
    return buf;
}

/* One example's shape: x's shape without the batch axis, "(28, 28)". */
static const char *example_text(tw_tensor *x, char *buf, size_t size)
{
    tw_shape s = {.ndim = tw_tensor_ndim(x) - 1};
    for (int i = 0; i < s.ndim; i++)
        s.dims[i] = tw_tensor_dim(x, i + 1);
    return shape_text(&s, buf, size);
}

static int check_labels(tw_model *model, const tw_shape *out, const twb_data *data)
{
    const char *name = tw_layer_name(model);
    int64_t units = out->dims[out->ndim - 1];
    char out_text[160];
    shape_text(out, out_text, sizeof out_text);
    if (data->classes > 0) {
        long long classes = (long long)data->classes;
        if (out->ndim != 2)
            return tw_error_set("model '%s' outputs shape %s, but %s has one class label per example: end the "
                                "model with Flatten and a Dense layer of %lld units",
                                name, out_text, data->description, classes);
        if (units == 1 && classes > 2)
            return tw_error_set("model '%s' has 1 output unit (binary cross-entropy, labels 0 and 1), but %s has "
                                "%lld classes: give the last layer %lld units",
                                name, data->description, classes, classes);
        if (units > 1 && units != classes)
            return tw_error_set("model '%s' has %lld output units, but %s has %lld classes (labels 0 to %lld): "
                                "sparse categorical cross-entropy needs one unit per class",
                                name, (long long)units, data->description, classes, classes - 1);
        return 0;
    }
    int64_t outputs = 1;
    for (int i = 1; i < out->ndim; i++)
        outputs = out->dims[i] >= 0 && !__builtin_mul_overflow(outputs, out->dims[i], &outputs) ? outputs : -1;
    int64_t targets = example_size(data->y);
    if (outputs != targets)
        return tw_error_set("model '%s' outputs shape %s, but %s has %lld target value%s per example: mean squared "
                            "error needs a last layer of %lld unit%s",
                            name, out_text, data->description, (long long)targets, targets == 1 ? "" : "s",
                            (long long)targets, targets == 1 ? "" : "s");
    return 0;
}

int twb_data_check(tw_model *model, const twb_data *data)
{
    /* A layer that cannot run (a Lambda, whose output shape may be unknown
     * too): its reason, before any shape is read. */
    if (tw_layer_check_runnable(model))
        return -1;
    const char *name = tw_layer_name(model);
    int ninputs = tw_model_ninputs(model), noutputs = tw_model_noutputs(model);
    if (ninputs > 1 || noutputs > 1) /* a dataset here is one x and one y */
        return tw_error_set("model '%s' takes %d input%s and gives %d output%s, but the data is one set of examples "
                            "and one of targets: train it from C with tw_model_fit_n",
                            name, ninputs, ninputs == 1 ? "" : "s", noutputs, noutputs == 1 ? "" : "s");
    const tw_shape *in = tw_model_input_shape(model);
    if (!in)
        return tw_error_set("model '%s' has no input shape", name);
    char in_text[160], x_text[160];
    shape_text(in, in_text, sizeof in_text);
    example_text(data->x, x_text, sizeof x_text);
    int64_t want = 0, have = example_size(data->x);
    tw_shape fed = *in; /* what the model will see */
    int known = values_per_example(in, &want);
    if (known < 0)
        return tw_error_set("model '%s': the input shape %s holds more values per example than fit in 64 bits",
                            name, in_text);
    if (!known && want != have)
        return tw_error_set("model '%s' takes inputs of shape %s (%lld value%s per example), but %s has examples "
                            "of shape %s (%lld value%s)",
                            name, in_text, (long long)want, want == 1 ? "" : "s", data->description, x_text,
                            (long long)have, have == 1 ? "" : "s");
    if (known) { /* a None axis: the model sees the examples as they are */
        fed.ndim = tw_tensor_ndim(data->x);
        fed.dims[0] = -1;
        for (int i = 1; i < fed.ndim; i++)
            fed.dims[i] = tw_tensor_dim(data->x, i);
    }
    tw_shape out;
    int64_t trainable = 0, frozen = 0;
    if (tw_layer_infer(model, &fed, &out, &trainable, &frozen)) {
        char why[512]; /* the engine's message, copied: tw_error_set writes where it lies */
        snprintf(why, sizeof why, "%s", tw_last_error());
        return tw_error_set("%s (the data: %s, examples of shape %s)", why, data->description, x_text);
    }
    if (trainable == 0)
        return tw_error_set("model '%s' has no weights to train: add a layer with weights, such as Dense, after "
                            "its input",
                            name);
    return check_labels(model, &out, data);
}
