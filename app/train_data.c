/* Loading a `--data` argument into whole tensors (the sets twb trains on fit
 * in memory: Fashion-MNIST is 188 MB as float32), shaping them for a model,
 * and choosing a loss the way Keras users usually would. */
#include "train_data.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <glib.h>

#include <tw/data.h>

#include "multi_input_sets.h"

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

static int load_fashion_mnist(const twb_data_spec *spec, twb_data *out)
{
    (void)spec;
    out->ninputs = 1;
    out->class_names = tw_fashion_mnist_classes;
    out->class_count = 10;
    if (materialize(tw_dataset_scale(tw_dataset_fashion_mnist("train"), 0, 1.0 / 255), &out->x[0], &out->y) ||
        materialize(tw_dataset_scale(tw_dataset_fashion_mnist("test"), 0, 1.0 / 255), &out->test_x[0],
                    &out->test_y))
        return -1;
    out->x[0] = features_for_training(out->x[0]);
    out->y = labels_for_training(out->y);
    out->test_x[0] = features_for_training(out->test_x[0]);
    out->test_y = labels_for_training(out->test_y);
    snprintf(out->description, sizeof out->description, "Fashion-MNIST (%lld train, %lld test)",
             (long long)tw_tensor_dim(out->x[0], 0), (long long)tw_tensor_dim(out->test_x[0], 0));
    return 0;
}

/* Fashion-MNIST's images, each paired with another (multi_input_sets.h). */
static int load_fashion_mnist_pairs(const twb_data_spec *spec, twb_data *out)
{
    if (load_fashion_mnist(spec, out) || twb_pairs_of_classes(out, spec->seed))
        return -1;
    snprintf(out->description, sizeof out->description, "Fashion-MNIST pairs (%lld train, %lld test)",
             (long long)tw_tensor_dim(out->x[0], 0), (long long)tw_tensor_dim(out->test_x[0], 0));
    return 0;
}

static int load_reverse_sequences(const twb_data_spec *spec, twb_data *out)
{
    return twb_reverse_sequences(spec->seed, out);
}

/* One synthetic tw_dataset, loaded whole. */
static int load_synthetic(tw_dataset *ds, const char *name, twb_data *out)
{
    out->ninputs = 1;
    if (materialize(ds, &out->x[0], &out->y))
        return -1;
    snprintf(out->description, sizeof out->description, "%s (%lld examples)", name,
             (long long)tw_tensor_dim(out->x[0], 0));
    return 0;
}

static int load_spirals(const twb_data_spec *spec, twb_data *out)
{
    return load_synthetic(tw_dataset_spirals(2000, 0.1, spec->seed), spec->data, out);
}

static int load_blobs(const twb_data_spec *spec, twb_data *out)
{
    return load_synthetic(tw_dataset_blobs(2000, 3, 2, 1.0, spec->seed), spec->data, out);
}

static int load_linear(const twb_data_spec *spec, twb_data *out)
{
    return load_synthetic(tw_dataset_linear(1000, 1.0, spec->seed), spec->data, out);
}

/* The built-in sets: how each loads, whether the seed draws it, and the
 * values per example of each input it gives (for the check's advice when
 * a model takes more inputs than the chosen data gives). */
static const struct {
    const char *id, *label;
    int (*load)(const twb_data_spec *spec, twb_data *out);
    bool seeded;
    int ninputs;
    int64_t sizes[TWB_MAX_INPUTS];
} builtins[] = {
    {"fashion-mnist", "Fashion-MNIST", load_fashion_mnist, false, 1, {28 * 28}},
    {"fashion-mnist-pairs", "Fashion-MNIST pairs", load_fashion_mnist_pairs, true, 2, {28 * 28, 28 * 28}},
    {"reverse-sequences", "Reversed sequences", load_reverse_sequences, true, 2,
     {TWB_SEQ_SOURCE_LEN * TWB_SEQ_SOURCE_TOKENS, TWB_SEQ_TARGET_LEN * TWB_SEQ_TARGET_TOKENS}},
    {"spirals", "Spirals", load_spirals, true, 1, {2}},
    {"blobs", "Blobs", load_blobs, true, 1, {2}},
    {"linear", "Linear", load_linear, true, 1, {1}},
};

static int builtin_index(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(name, builtins[i].id))
            return (int)i;
    return -1;
}

bool twb_data_is_builtin(const char *name, bool *seeded)
{
    int i = builtin_index(name);
    if (seeded)
        *seeded = i >= 0 && builtins[i].seeded;
    return i >= 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

/* A features file, with the labels (a file, or a CSV's column) or without. */
static tw_dataset *file_dataset(const char *path, const char *labels, const char *label_column)
{
    if (has_suffix(path, ".csv")) {
        tw_csv_options options = {.label_column = label_column};
        return tw_dataset_csv(path, &options);
    }
    if (has_suffix(path, ".npy") || strstr(path, ".npz"))
        return tw_dataset_npy(path, labels);
    return tw_dataset_idx(path, labels);
}

/* --data FILE once per input: the labels come with the first; every file
 * and the labels hold the same number of examples. */
static int load_files(const twb_data_spec *spec, twb_data *out)
{
    const char *files[TWB_MAX_INPUTS] = {spec->data};
    int n = 1;
    for (; spec->more_data && spec->more_data[n - 1]; n++)
        if (n == TWB_MAX_INPUTS)
            return tw_error_set("%d --data files: data for at most %d inputs", n + 1, TWB_MAX_INPUTS);
        else
            files[n] = spec->more_data[n - 1];
    out->ninputs = n;
    if (materialize(file_dataset(files[0], spec->labels, spec->label_column), &out->x[0], &out->y))
        return -1;
    if (!out->y)
        return tw_error_set("%s: no labels; name a labels file with --labels or a CSV column with --label-column",
                            files[0]);
    for (int k = 1; k < n; k++) {
        tw_tensor *labels = NULL;
        int rc = materialize(file_dataset(files[k], NULL, NULL), &out->x[k], &labels);
        tw_tensor_unref(labels); /* a CSV's last column: these examples' labels are the first file's */
        if (rc)
            return -1;
    }
    GString *counts = g_string_new(NULL);
    bool differ = false;
    for (int k = 0; k < n; k++) {
        differ |= tw_tensor_dim(out->x[k], 0) != tw_tensor_dim(out->y, 0);
        g_string_append_printf(counts, "%s%s has %lld", k ? ", " : "", files[k],
                               (long long)tw_tensor_dim(out->x[k], 0));
    }
    if (differ)
        tw_error_set("the inputs' files and the labels differ in their number of examples: %s, the labels (%s) %lld; "
                     "every --data file needs one example for each label",
                     counts->str, spec->labels ? spec->labels : files[0], (long long)tw_tensor_dim(out->y, 0));
    g_string_free(counts, TRUE);
    if (differ)
        return -1;
    for (int k = 0; k < n; k++)
        out->x[k] = features_for_training(out->x[k]);
    out->y = labels_for_training(out->y);
    size_t used = (size_t)snprintf(out->description, sizeof out->description, "%s", files[0]);
    for (int k = 1; k < n && used < sizeof out->description; k++)
        used += (size_t)snprintf(out->description + used, sizeof out->description - used, " + %s", files[k]);
    if (used < sizeof out->description)
        snprintf(out->description + used, sizeof out->description - used, " (%lld examples)",
                 (long long)tw_tensor_dim(out->x[0], 0));
    return 0;
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
    return (twb_data_spec){.data = s->data, .more_data = (const char *const *)s->more_data, .labels = s->labels,
                           .label_column = s->label_column, .seed = s->seed};
}

int twb_data_load(const twb_data_spec *spec, twb_data *out)
{
    memset(out, 0, sizeof *out);
    int i = builtin_index(spec->data);
    int rc;
    if (i >= 0 && spec->more_data && spec->more_data[0])
        rc = tw_error_set("--data %s: a built-in set gives every input itself; name it alone, or a file for each "
                          "input",
                          spec->data);
    else
        rc = i >= 0 ? builtins[i].load(spec, out) : load_files(spec, out);
    out->x[0] = features_for_training(out->x[0]);
    out->y = labels_for_training(out->y);
    if (rc || !out->x[0] || !out->y) {
        twb_data_clear(out);
        return -1;
    }
    if (!out->classes) /* a set of sequences knows its vocabulary */
        out->classes = count_classes(out->y);
    out->classes_exact = i >= 0;
    return 0;
}

void twb_data_copy(const twb_data *src, twb_data *dst)
{
    *dst = *src;
    for (int k = 0; k < dst->ninputs; k++) {
        tw_tensor_ref(dst->x[k]);
        if (dst->test_x[k])
            tw_tensor_ref(dst->test_x[k]);
    }
    tw_tensor_ref(dst->y);
    if (dst->test_y)
        tw_tensor_ref(dst->test_y);
}

void twb_data_clear(twb_data *data)
{
    for (int k = 0; k < TWB_MAX_INPUTS; k++) {
        tw_tensor_unref(data->x[k]);
        tw_tensor_unref(data->test_x[k]);
    }
    tw_tensor_unref(data->y);
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

/* Input k's shape: the first input's as tw_model_input_shape finds it
 * (into a nested model at the start), a later one's from its InputLayer. */
static const tw_shape *input_shape(const tw_model *model, int k)
{
    return k == 0 ? tw_model_input_shape(model) : tw_model_input_shape_at(model, k);
}

tw_tensor *twb_fit_input(tw_model *model, int k, tw_tensor *x)
{
    const tw_shape *in = input_shape(model, k);
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

int twb_fit_inputs(tw_model *model, const twb_data *data, bool test, tw_tensor **x, tw_tensor **y)
{
    bool has_test = test && data->test_x[0];
    for (int k = 0; k < data->ninputs; k++)
        x[k] = twb_fit_input(model, k, has_test ? data->test_x[k] : data->x[k]);
    *y = has_test ? data->test_y : data->y;
    return data->ninputs;
}

void twb_inputs_clear(int n, tw_tensor **x)
{
    for (int k = 0; k < n; k++) {
        tw_tensor_unref(x[k]);
        x[k] = NULL;
    }
}

/* The model's output shape for its own input shapes; 0, or -1 with a message. */
static int model_output_shape(tw_model *model, tw_shape *out)
{
    int n = tw_model_ninputs(model), nout = 0;
    tw_shape in[TWB_MAX_INPUTS], outs[TW_MAX_LAYER_IO];
    if (n > TWB_MAX_INPUTS)
        return tw_error_set("model '%s' takes %d inputs; twb trains models of at most %d", tw_layer_name(model), n,
                            TWB_MAX_INPUTS);
    for (int k = 0; k < n; k++) {
        const tw_shape *shape = input_shape(model, k);
        if (!shape)
            return tw_error_set("model '%s' has no input shape", tw_layer_name(model));
        in[k] = *shape;
    }
    if (tw_layer_infer_n(model, in, n, outs, &nout, NULL, NULL))
        return -1;
    *out = outs[0];
    return 0;
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

/* Float targets that are all 0 or 1. */
static bool zeros_and_ones(tw_tensor *y)
{
    tw_scope_begin();
    tw_tensor *off = tw_max(tw_abs(tw_mul(y, tw_sub(tw_scalar(1), y))), 0, NULL, false);
    bool binary = off && tw_tensor_item(off) == 0;
    tw_scope_end();
    return binary;
}

int twb_default_loss(tw_model *model, tw_tensor *y, tw_loss *loss)
{
    tw_shape out;
    if (model_output_shape(model, &out))
        return -1;
    int64_t units = out.dims[out.ndim - 1];
    const char *act = final_activation(model);
    bool integer_labels = !tw_dtype_is_float(tw_tensor_dtype(y));
    if (integer_labels && units > 1)
        *loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    else if (integer_labels || (units == 1 && !strcmp(act, "sigmoid") && zeros_and_ones(y)))
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
        if (tw_tensor_ndim(data->y) == 1 && out->ndim != 2)
            return tw_error_set("model '%s' outputs shape %s, but %s has one class label per example: end the "
                                "model with Flatten and a Dense layer of %lld units",
                                name, out_text, data->description, classes);
        /* a label per position (a sequence's tokens): the output has one
         * more axis, the classes */
        bool positions_fit = out->ndim == tw_tensor_ndim(data->y) + 1;
        for (int i = 1; positions_fit && i < tw_tensor_ndim(data->y); i++)
            positions_fit = out->dims[i] == tw_tensor_dim(data->y, i);
        if (!positions_fit) {
            char y_text[160];
            return tw_error_set("model '%s' outputs shape %s, but %s has class labels of shape %s per example: the "
                                "output needs those axes and then one of %lld classes",
                                name, out_text, data->description, example_text(data->y, y_text, sizeof y_text),
                                classes);
        }
        if (units == 1 && classes > 2)
            return tw_error_set("model '%s' has 1 output unit (binary cross-entropy, labels 0 and 1), but %s has "
                                "%lld classes: give the last layer %lld units",
                                name, data->description, classes, classes);
        /* Fewer units than labels cannot train; more can (a file's labels
         * may lack a class), except against a built-in set's own count. */
        if (units > 1 && (units < classes || (units > classes && data->classes_exact)))
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

/* The built-in set whose inputs fit the model's (values per example), for
 * advice; NULL when none does. */
static int builtin_for(tw_model *model)
{
    int n = tw_model_ninputs(model);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        bool fits = builtins[i].ninputs == n;
        for (int k = 0; fits && k < n; k++) {
            const tw_shape *in = input_shape(model, k);
            int64_t want;
            fits = in && !values_per_example(in, &want) && want == builtins[i].sizes[k];
        }
        if (fits)
            return (int)i;
    }
    return -1;
}

/* The model's inputs against the data's arrays, in the model's order: the
 * shape each input sees (fed). 0, or -1 with a message. */
static int check_inputs(tw_model *model, const twb_data *data, tw_shape *fed)
{
    const char *name = tw_layer_name(model);
    int ninputs = tw_model_ninputs(model);
    if (ninputs != data->ninputs) {
        int fits = builtin_for(model);
        char advice[160] = "";
        if (fits >= 0)
            snprintf(advice, sizeof advice, ": choose %s (%s)", builtins[fits].label, builtins[fits].id);
        else if (ninputs > 1)
            snprintf(advice, sizeof advice, ": choose data of one array of examples per input (twb train: --data "
                                            "once per input)");
        return tw_error_set("model '%s' takes %d input%s; %s gives %d%s", name, ninputs, ninputs == 1 ? "" : "s",
                            data->description, data->ninputs, advice);
    }
    for (int k = 0; k < ninputs; k++) {
        const tw_shape *in = input_shape(model, k);
        char which[32] = "";
        if (ninputs > 1)
            snprintf(which, sizeof which, "'s input %d", k);
        if (!in)
            return tw_error_set("model '%s'%s has no input shape", name, which);
        char in_text[160], x_text[160];
        shape_text(in, in_text, sizeof in_text);
        example_text(data->x[k], x_text, sizeof x_text);
        int64_t want = 0, have = example_size(data->x[k]);
        fed[k] = *in;
        int known = values_per_example(in, &want);
        if (known < 0)
            return tw_error_set("model '%s'%s: the input shape %s holds more values per example than fit in 64 bits",
                                name, which, in_text);
        if (!known && want != have)
            return tw_error_set("model '%s'%s takes inputs of shape %s (%lld value%s per example), but %s has "
                                "examples of shape %s (%lld value%s)",
                                name, which, in_text, (long long)want, want == 1 ? "" : "s", data->description,
                                x_text, (long long)have, have == 1 ? "" : "s");
        if (known) { /* a None axis: the model sees the examples as they are */
            fed[k].ndim = tw_tensor_ndim(data->x[k]);
            fed[k].dims[0] = -1;
            for (int i = 1; i < fed[k].ndim; i++)
                fed[k].dims[i] = tw_tensor_dim(data->x[k], i);
        }
    }
    return 0;
}

int twb_data_check(tw_model *model, const twb_data *data)
{
    /* A layer that cannot run (a Lambda, whose output shape may be unknown
     * too): its reason, before any shape is read. */
    if (tw_layer_check_runnable(model))
        return -1;
    const char *name = tw_layer_name(model);
    int noutputs = tw_model_noutputs(model);
    if (noutputs > 1) /* a dataset here has one set of targets */
        return tw_error_set("model '%s' gives %d outputs, but the data has one set of targets: train it from C with "
                            "tw_model_fit_n",
                            name, noutputs);
    tw_shape fed[TWB_MAX_INPUTS]; /* what the model will see */
    if (check_inputs(model, data, fed))
        return -1;
    tw_shape out[TW_MAX_LAYER_IO];
    int nout = 0;
    int64_t trainable = 0, frozen = 0;
    if (tw_layer_infer_n(model, fed, data->ninputs, out, &nout, &trainable, &frozen)) {
        char why[512], x_text[160]; /* the engine's message, copied: tw_error_set writes where it lies */
        snprintf(why, sizeof why, "%s", tw_last_error());
        return tw_error_set("%s (the data: %s, examples of shape %s)", why, data->description,
                            example_text(data->x[0], x_text, sizeof x_text));
    }
    if (trainable == 0)
        return tw_error_set("model '%s' has no weights to train: add a layer with weights, such as Dense, after "
                            "its input",
                            name);
    return check_labels(model, &out[0], data);
}
