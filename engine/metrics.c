/* Metrics (tf.keras.metrics): running ratios accumulated in double. Every
 * metric here is total / count:
 *   mean, accuracies   the sum of the values (matches) and how many there were;
 *   precision          true positives and predicted positives (TP + FP);
 *   recall             true positives and actual positives (TP + FN);
 * and 0 while count is 0, as Keras' divide_no_nan.
 *
 * Like Keras' MeanMetricWrapper, the accuracies compare labels and
 * predictions as float32 values (the metric's dtype), so int labels 2 match
 * a prediction 2.0 and a float64 2.0000000001 too.
 *
 * update_state runs every training step, so it reads the tensors' data in
 * plain C loops (no engine ops: nothing is allocated for contiguous inputs
 * and nothing can be recorded on a tape), with a float32 fast path for the
 * row argmax the classification accuracies spend their time in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "tw/metrics.h"

typedef enum {
    METRIC_MEAN,
    METRIC_ACCURACY,
    METRIC_SPARSE_CATEGORICAL_ACCURACY,
    METRIC_CATEGORICAL_ACCURACY,
    METRIC_BINARY_ACCURACY,
    METRIC_PRECISION,
    METRIC_RECALL,
    METRIC_KIND_COUNT
} metric_kind;

static const char *const kind_names[METRIC_KIND_COUNT] = {
    "mean", "accuracy", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy", "precision",
    "recall",
};

struct tw_metric {
    metric_kind kind;
    const char *name; /* as created: "acc" stays "acc", as Keras logs it */
    double threshold;
    double total, count;
};

tw_metric *tw_metric_new(const char *name)
{
    int kind = -1;
    for (int k = 0; name && k < METRIC_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            kind = k;
    if (name && strcmp(name, "acc") == 0)
        kind = METRIC_ACCURACY;
    if (kind < 0) {
        tw_error_set("metric: unknown metric '%s'; expected one of mean, accuracy (acc), "
                     "sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, precision, recall",
                     name ? name : "(null)");
        return NULL;
    }
    tw_metric *m = calloc(1, sizeof *m);
    if (!m) {
        tw_error_set("metric: out of memory");
        return NULL;
    }
    m->kind = (metric_kind)kind;
    m->name = kind == METRIC_ACCURACY && strcmp(name, "acc") == 0 ? "acc" : kind_names[kind];
    m->threshold = 0.5;
    return m;
}

static bool has_threshold(const tw_metric *m)
{
    return m->kind == METRIC_BINARY_ACCURACY || m->kind == METRIC_PRECISION || m->kind == METRIC_RECALL;
}

int tw_metric_set_threshold(tw_metric *metric, double threshold)
{
    if (!metric)
        return tw_error_set("metric: set_threshold on a NULL metric");
    if (!has_threshold(metric))
        return tw_error_set("%s: this metric has no threshold (binary_accuracy, precision and recall do)",
                            metric->name);
    bool confusion = metric->kind != METRIC_BINARY_ACCURACY;
    if (!isfinite(threshold) || (confusion && (threshold < 0 || threshold > 1)))
        return tw_error_set("%s: threshold %g must be %s", metric->name, threshold,
                            confusion ? "in [0, 1]" : "finite");
    metric->threshold = threshold;
    return 0;
}

void tw_metric_free(tw_metric *metric)
{
    free(metric);
}

const char *tw_metric_name(const tw_metric *metric)
{
    return metric ? metric->name : NULL;
}

double tw_metric_result(const tw_metric *metric)
{
    return metric && metric->count != 0 ? metric->total / metric->count : 0;
}

void tw_metric_reset_state(tw_metric *metric)
{
    if (metric)
        metric->total = metric->count = 0;
}

int tw_metric_update_value(tw_metric *metric, double value, double weight)
{
    if (!metric)
        return tw_error_set("metric: update_value on a NULL metric");
    if (metric->kind != METRIC_MEAN)
        return tw_error_set("%s: update_value is for the mean metric; give this one labels and predictions",
                            metric->name);
    metric->total += value * weight;
    metric->count += weight;
    return 0;
}

/* ---- reading elements ---------------------------------------------------- */
static inline double load(const void *data, tw_dtype dtype, int64_t i)
{
    switch (dtype) {
    case TW_FLOAT32: return ((const float *)data)[i];
    case TW_FLOAT64: return ((const double *)data)[i];
    case TW_INT32: return ((const int32_t *)data)[i];
    case TW_INT64: return (double)((const int64_t *)data)[i];
    case TW_UINT8: return ((const uint8_t *)data)[i];
    default: return ((const bool *)data)[i];
    }
}

/* Index of the first largest value of a row (tf.argmax's tie rule). */
static int64_t row_argmax(const void *data, tw_dtype dtype, int64_t row, int64_t n)
{
    int64_t best = 0;
    if (dtype == TW_FLOAT32) {
        const float *p = (const float *)data + row * n;
        for (int64_t j = 1; j < n; j++)
            best = p[j] > p[best] ? j : best;
        return best;
    }
    double top = load(data, dtype, row * n);
    for (int64_t j = 1; j < n; j++) {
        double v = load(data, dtype, row * n + j);
        if (v > top) {
            top = v;
            best = j;
        }
    }
    return best;
}

/* ---- shape pairing ---------------------------------------------------------- */
static bool same_shape(int n, const int64_t *a, const int64_t *b)
{
    return memcmp(a, b, sizeof(int64_t) * (size_t)n) == 0;
}

/* Same shape, or ranks one apart by a trailing axis of size 1 (Keras'
 * squeeze_or_expand_dimensions): the elements pair one to one. */
static bool elementwise_pair(const tw_tensor *a, const tw_tensor *b)
{
    if (a->ndim == b->ndim)
        return same_shape(a->ndim, a->shape, b->shape);
    const tw_tensor *longer = a->ndim > b->ndim ? a : b, *shorter = a->ndim > b->ndim ? b : a;
    return longer->ndim == shorter->ndim + 1 && longer->shape[longer->ndim - 1] == 1 &&
           same_shape(shorter->ndim, shorter->shape, longer->shape);
}

/* Class indices (n,) or (n, 1) for predictions (n, classes). */
static bool sparse_pair(const tw_tensor *labels, const tw_tensor *pred)
{
    int nl = labels->ndim;
    if (nl == pred->ndim && nl > 0 && labels->shape[nl - 1] == 1)
        nl--;
    return pred->ndim >= 1 && nl == pred->ndim - 1 && same_shape(nl, labels->shape, pred->shape);
}

static int mismatch(const tw_metric *m, const tw_tensor *y_true, const tw_tensor *y_pred)
{
    char a[160], b[160];
    return tw_error_set("%s: labels of shape %s do not match predictions of shape %s", m->name,
                        tw_shape_str(y_true->ndim, y_true->shape, a, sizeof a),
                        tw_shape_str(y_pred->ndim, y_pred->shape, b, sizeof b));
}

static int check_pair(const tw_metric *m, const tw_tensor *y_true, const tw_tensor *y_pred)
{
    switch (m->kind) {
    case METRIC_SPARSE_CATEGORICAL_ACCURACY:
        return sparse_pair(y_true, y_pred) ? 0 : mismatch(m, y_true, y_pred);
    case METRIC_CATEGORICAL_ACCURACY:
        if (y_pred->ndim >= 1 && y_true->ndim == y_pred->ndim && same_shape(y_pred->ndim, y_true->shape, y_pred->shape))
            return 0;
        return mismatch(m, y_true, y_pred);
    default:
        return elementwise_pair(y_true, y_pred) ? 0 : mismatch(m, y_true, y_pred);
    }
}

/* ---- accumulation, on contiguous data --------------------------------------- */
static void add_mean(tw_metric *m, const tw_tensor *values)
{
    const void *d = tw__data(values);
    double sum = 0;
    for (int64_t i = 0; i < values->numel; i++)
        sum += load(d, values->dtype, i);
    m->total += sum;
    m->count += (double)values->numel;
}

static void add_accuracy(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    const void *td = tw__data(t), *pd = tw__data(p);
    int64_t matches = 0;
    for (int64_t i = 0; i < t->numel; i++)
        matches += (float)load(td, t->dtype, i) == (float)load(pd, p->dtype, i);
    m->total += (double)matches;
    m->count += (double)t->numel;
}

static void add_sparse_accuracy(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    int64_t n = p->shape[p->ndim - 1], rows = t->numel, matches = 0;
    const void *td = tw__data(t), *pd = tw__data(p);
    for (int64_t r = 0; n > 0 && r < rows; r++)
        matches += (float)load(td, t->dtype, r) == (float)row_argmax(pd, p->dtype, r, n);
    m->total += (double)matches;
    m->count += (double)rows;
}

static void add_categorical_accuracy(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    int64_t n = p->shape[p->ndim - 1], rows = n > 0 ? p->numel / n : 0, matches = 0;
    const void *td = tw__data(t), *pd = tw__data(p);
    for (int64_t r = 0; r < rows; r++)
        matches += row_argmax(td, t->dtype, r, n) == row_argmax(pd, p->dtype, r, n);
    m->total += (double)matches;
    m->count += (double)rows;
}

/* binary_accuracy: y_true == (y_pred > threshold), so labels other than 0
 * and 1 never match. */
static void add_binary_accuracy(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    const void *td = tw__data(t), *pd = tw__data(p);
    float threshold = (float)m->threshold;
    int64_t matches = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        float predicted = (float)load(pd, p->dtype, i) > threshold;
        matches += (float)load(td, t->dtype, i) == predicted;
    }
    m->total += (double)matches;
    m->count += (double)t->numel;
}

/* Precision and recall: predicted positive when y_pred > threshold, actual
 * positive when y_true is nonzero. Predictions must be probabilities, as
 * Keras asserts. */
static int add_confusion(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    const void *td = tw__data(t), *pd = tw__data(p);
    int64_t true_positives = 0, positives = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = load(pd, p->dtype, i);
        if (!(v >= 0 && v <= 1))
            return tw_error_set("%s: predictions must be in [0, 1], got %g at element %lld", m->name, v,
                                (long long)i);
        bool predicted = v > m->threshold, actual = load(td, t->dtype, i) != 0;
        true_positives += predicted && actual;
        positives += m->kind == METRIC_PRECISION ? predicted : actual;
    }
    m->total += (double)true_positives;
    m->count += (double)positives;
    return 0;
}

static int accumulate(tw_metric *m, const tw_tensor *t, const tw_tensor *p)
{
    switch (m->kind) {
    case METRIC_ACCURACY: add_accuracy(m, t, p); return 0;
    case METRIC_SPARSE_CATEGORICAL_ACCURACY: add_sparse_accuracy(m, t, p); return 0;
    case METRIC_CATEGORICAL_ACCURACY: add_categorical_accuracy(m, t, p); return 0;
    case METRIC_BINARY_ACCURACY: add_binary_accuracy(m, t, p); return 0;
    default: return add_confusion(m, t, p);
    }
}

static int update_mean(tw_metric *m, tw_tensor *values, tw_tensor *y_pred)
{
    if (y_pred)
        return tw_error_set("mean: averages the elements of y_true; pass NULL as y_pred");
    tw_tensor *v = tw__to_host(values);
    if (!v)
        return -1;
    add_mean(m, v);
    tw_tensor_unref(v);
    return 0;
}

int tw_metric_update_state(tw_metric *metric, tw_tensor *y_true, tw_tensor *y_pred)
{
    if (!metric)
        return tw_error_set("metric: update_state on a NULL metric");
    if (tw__check_inputs(metric->name, 1, &y_true) < 0)
        return -1;
    if (metric->kind == METRIC_MEAN)
        return update_mean(metric, y_true, y_pred);
    if (tw__check_inputs(metric->name, 2, (tw_tensor *const[]){y_true, y_pred}) < 0 ||
        check_pair(metric, y_true, y_pred) < 0)
        return -1;
    tw_tensor *t = tw__to_host(y_true), *p = tw__to_host(y_pred);
    int rc = t && p ? accumulate(metric, t, p) : -1;
    tw_tensor_unref(t);
    tw_tensor_unref(p);
    return rc;
}
