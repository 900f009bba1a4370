/* A classifier's evaluation (tw/evaluation.h): predictions against labels
 * into a confusion matrix, per-class figures and chosen examples, and those
 * written through the summary writer. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"
#include "tw/evaluation.h"

/* A tensor's values as doubles (malloc'd), from any device and dtype. */
static double *values_of(tw_tensor *t)
{
    int64_t n = tw_tensor_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    tw_scope_begin();
    tw_tensor *d = v ? tw_cast(t, TW_FLOAT64) : NULL;
    int rc = d ? tw_tensor_copy_to(d, v, (size_t)n * sizeof *v) : -1;
    tw_scope_end();
    if (rc) {
        free(v);
        return NULL;
    }
    return v;
}

/* Whether the predictions are probabilities: every value in [0, 1] and,
 * for several classes, every row summing to 1. Else they are logits. */
static bool are_probabilities(const double *pred, int64_t n, int64_t width)
{
    for (int64_t i = 0; i < n; i++) {
        double sum = 0;
        for (int64_t c = 0; c < width; c++) {
            double v = pred[i * width + c];
            if (!(v >= 0 && v <= 1))
                return false;
            sum += v;
        }
        if (width > 1 && fabs(sum - 1) > 1e-3)
            return false;
    }
    return true;
}

/* A row's predicted class and its probability. */
static void predict_row(const double *row, int64_t classes, bool binary, bool logits, int64_t *pred,
                        double *confidence)
{
    if (binary) {
        double p = logits ? 1 / (1 + exp(-row[0])) : row[0];
        *pred = p >= 0.5;
        *confidence = *pred ? p : 1 - p;
        return;
    }
    int64_t best = 0;
    for (int64_t c = 1; c < classes; c++)
        if (row[c] > row[best])
            best = c;
    *pred = best;
    if (!logits) {
        *confidence = row[best];
        return;
    }
    double z = 0; /* softmax, shifted by the largest */
    for (int64_t c = 0; c < classes; c++)
        z += exp(row[c] - row[best]);
    *confidence = 1 / z;
}

/* Misclassified before correct; among misclassified the most confident
 * first, among correct the least confident first; then by index. */
typedef struct {
    int64_t index, truth, pred;
    double confidence;
} candidate;

static int by_interest(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    bool wa = a->truth != a->pred, wb = b->truth != b->pred;
    if (wa != wb)
        return wa ? -1 : 1;
    if (a->confidence != b->confidence)
        return (a->confidence > b->confidence) == wa ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int check_shapes(tw_tensor *outputs, tw_tensor *labels, int64_t *n, int64_t *classes, bool *binary,
                        bool *one_hot)
{
    int nd = tw_tensor_ndim(outputs), ld = tw_tensor_ndim(labels);
    if (nd < 1 || nd > 2)
        return tw_error_set("evaluation: expected predictions [examples, classes], got rank %d", nd);
    *n = tw_tensor_dim(outputs, 0);
    int64_t width = nd == 2 ? tw_tensor_dim(outputs, 1) : 1;
    *binary = width == 1;
    *classes = *binary ? 2 : width;
    if (ld < 1 || ld > 2 || tw_tensor_dim(labels, 0) != *n)
        return tw_error_set("evaluation: %lld predictions but labels of shape %s", (long long)*n,
                            tw_shape_str(ld, tw_tensor_shape(labels), (char[64]){0}, 64));
    int64_t lw = ld == 2 ? tw_tensor_dim(labels, 1) : 1;
    *one_hot = lw > 1;
    if (*one_hot && lw != width)
        return tw_error_set("evaluation: one-hot labels of %lld classes for predictions of %lld", (long long)lw,
                            (long long)width);
    if (*n < 1)
        return tw_error_set("evaluation: no examples");
    return 0;
}

static int count(tw_evaluation *e, const double *pred, const double *lab, bool binary, bool one_hot,
                 candidate *cands)
{
    int64_t n = e->examples, classes = e->classes;
    int64_t lw = one_hot ? classes : 1, pw = binary ? 1 : classes;
    bool logits = !are_probabilities(pred, n, pw);
    for (int64_t i = 0; i < n; i++) {
        double label = lab[i * lw];
        if (one_hot) {
            int64_t best = 0;
            for (int64_t c = 1; c < classes; c++)
                if (lab[i * lw + c] > lab[i * lw + best])
                    best = c;
            label = (double)best;
        }
        if (!(label >= 0 && label < (double)classes && label == floor(label)))
            return tw_error_set("evaluation: example %lld has label %g, not one of the %lld classes 0..%lld",
                                (long long)i, label, (long long)classes, (long long)classes - 1);
        candidate *c = &cands[i];
        c->index = i;
        c->truth = (int64_t)label;
        predict_row(pred + i * pw, classes, binary, logits, &c->pred, &c->confidence);
        e->confusion[c->truth * classes + c->pred]++;
    }
    return 0;
}

static void figures(tw_evaluation *e)
{
    int64_t k = e->classes, right = 0;
    for (int64_t c = 0; c < k; c++) {
        int64_t tp = e->confusion[c * k + c], truths = 0, predicted = 0;
        for (int64_t j = 0; j < k; j++) {
            truths += e->confusion[c * k + j];
            predicted += e->confusion[j * k + c];
        }
        right += tp;
        e->support[c] = truths;
        e->precision[c] = predicted ? (double)tp / (double)predicted : 0;
        e->recall[c] = truths ? (double)tp / (double)truths : 0;
        double pr = e->precision[c] + e->recall[c];
        e->f1[c] = pr > 0 ? 2 * e->precision[c] * e->recall[c] / pr : 0;
    }
    e->accuracy = (double)right / (double)e->examples;
}

static void choose(tw_evaluation *e, candidate *cands, int per_cell)
{
    int64_t n = e->examples, k = e->classes;
    qsort(cands, (size_t)n, sizeof *cands, by_interest);
    int *taken = g_new0(int, k * k);
    for (int64_t i = 0; i < n; i++) {
        candidate *c = &cands[i];
        if (taken[c->truth * k + c->pred]++ >= per_cell)
            continue;
        int64_t s = e->nsamples++;
        e->sample_index[s] = c->index;
        e->sample_true[s] = c->truth;
        e->sample_pred[s] = c->pred;
        e->sample_confidence[s] = c->confidence;
    }
    g_free(taken);
}

int tw_evaluation_compute(tw_tensor *outputs, tw_tensor *labels, int per_cell, tw_evaluation *out)
{
    memset(out, 0, sizeof *out);
    if (!outputs || !labels)
        return tw_error_set("evaluation: %s is NULL", !outputs ? "the predictions" : "the labels");
    int64_t n = 0, k = 0;
    bool binary = false, one_hot = false;
    if (check_shapes(outputs, labels, &n, &k, &binary, &one_hot))
        return -1;
    if (k > 4096)
        return tw_error_set("evaluation: %lld classes, more than the 4096 a confusion matrix is drawn for",
                            (long long)k);
    double *pred = values_of(outputs), *lab = values_of(labels);
    candidate *cands = g_new0(candidate, n);
    out->classes = k;
    out->examples = n;
    out->confusion = g_new0(int64_t, k * k);
    out->precision = g_new0(double, k);
    out->recall = g_new0(double, k);
    out->f1 = g_new0(double, k);
    out->support = g_new0(int64_t, k);
    int64_t room = MIN(n, k * k * (int64_t)MAX(per_cell, 0));
    out->sample_index = g_new0(int64_t, room + 1);
    out->sample_true = g_new0(int64_t, room + 1);
    out->sample_pred = g_new0(int64_t, room + 1);
    out->sample_confidence = g_new0(double, room + 1);
    int rc = !pred || !lab ? -1 : count(out, pred, lab, binary, one_hot, cands);
    if (rc == 0) {
        figures(out);
        choose(out, cands, MAX(per_cell, 0));
    }
    free(pred);
    free(lab);
    g_free(cands);
    if (rc)
        tw_evaluation_clear(out);
    return rc;
}

void tw_evaluation_clear(tw_evaluation *e)
{
    if (!e)
        return;
    g_free(e->confusion);
    g_free(e->precision);
    g_free(e->recall);
    g_free(e->f1);
    g_free(e->support);
    g_free(e->sample_index);
    g_free(e->sample_true);
    g_free(e->sample_pred);
    g_free(e->sample_confidence);
    memset(e, 0, sizeof *e);
}

/* ---- logging -------------------------------------------------------------- */

static int log_doubles(tw_summary_writer *w, const char *tag, const double *v, int64_t rows, int64_t cols,
                       int64_t step)
{
    tw_tensor *t = tw_tensor_from_data(v, TW_FLOAT64, 2, (int64_t[]){rows, cols});
    int rc = t ? tw_summary_tensor(w, tag, t, step) : -1;
    tw_tensor_unref(t);
    return rc;
}

/* The chosen samples' rows of x as doubles, sample s at s * (row size). */
static double *sample_rows(const tw_evaluation *e, tw_tensor *x)
{
    int64_t each = tw_tensor_numel(x) / tw_tensor_dim(x, 0);
    double *v = malloc((size_t)(e->nsamples * each + 1) * sizeof *v);
    int rc = v ? 0 : tw_error_set("tw_evaluation_log: out of memory");
    for (int64_t s = 0; rc == 0 && s < e->nsamples; s++) {
        tw_scope_begin();
        int64_t i = e->sample_index[s];
        tw_tensor *row = tw_cast(tw_slice(x, 0, i, i + 1, 1), TW_FLOAT64);
        rc = row ? tw_tensor_copy_to(row, v + s * each, (size_t)each * sizeof *v) : -1;
        tw_scope_end();
    }
    if (rc) {
        free(v);
        return NULL;
    }
    return v;
}

/* Whether x holds images: [N, H, W] or [N, H, W, C] with C 1 to 4. */
static bool is_images(tw_tensor *x)
{
    int nd = tw_tensor_ndim(x);
    return nd == 3 || (nd == 4 && tw_tensor_dim(x, 3) >= 1 && tw_tensor_dim(x, 3) <= 4);
}

/* The chosen samples' images, each scaled to [0, 1] by its own range
 * unless its values already lie there (standardised inputs). */
static int log_images(tw_summary_writer *w, const tw_evaluation *e, const double *xv, tw_tensor *x, int64_t step)
{
    int nd = tw_tensor_ndim(x);
    int64_t h = tw_tensor_dim(x, 1), wd = tw_tensor_dim(x, 2), c = nd == 4 ? tw_tensor_dim(x, 3) : 1;
    int64_t each = h * wd * c;
    float *pixels = g_new(float, e->nsamples * each);
    for (int64_t s = 0; s < e->nsamples; s++) {
        const double *src = xv + s * each;
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < each; i++) {
            lo = fmin(lo, src[i]);
            hi = fmax(hi, src[i]);
        }
        bool unit = lo >= 0 && hi <= 1;
        for (int64_t i = 0; i < each; i++)
            pixels[s * each + i] = (float)(unit ? src[i] : hi > lo ? (src[i] - lo) / (hi - lo) : 0);
    }
    tw_tensor *t = tw_tensor_from_data(pixels, TW_FLOAT32, 4, (int64_t[]){e->nsamples, h, wd, c});
    g_free(pixels);
    int rc = t ? tw_summary_image(w, TW_EVAL_TAG_SAMPLE_IMAGES, t, step) : -1;
    tw_tensor_unref(t);
    return rc;
}

static int log_values(tw_summary_writer *w, const tw_evaluation *e, const double *xv, tw_tensor *x, int64_t step)
{
    int64_t each = tw_tensor_numel(x) / tw_tensor_dim(x, 0), f = MIN(each, TW_EVALUATION_MAX_VALUES);
    double *v = g_new(double, e->nsamples * f);
    for (int64_t s = 0; s < e->nsamples; s++)
        memcpy(v + s * f, xv + s * each, (size_t)f * sizeof *v);
    int rc = log_doubles(w, TW_EVAL_TAG_SAMPLE_VALUES, v, e->nsamples, f, step);
    g_free(v);
    return rc;
}

int tw_evaluation_log(tw_summary_writer *w, const tw_evaluation *e, tw_tensor *x, const char *const *class_names,
                      int64_t step)
{
    if (!w || !e || !e->confusion)
        return tw_error_set("tw_evaluation_log: %s", !w ? "the writer is NULL" : "no evaluation");
    int64_t k = e->classes, s = e->nsamples;
    tw_tensor *m = tw_tensor_from_data(e->confusion, TW_INT64, 2, (int64_t[]){k, k});
    int rc = m ? tw_summary_tensor(w, TW_EVAL_TAG_CONFUSION, m, step) : -1;
    tw_tensor_unref(m);
    double *rows = g_new(double, MAX(k, s) * 4);
    for (int64_t c = 0; rc == 0 && c < k; c++) {
        double *r = rows + c * 4;
        r[0] = e->precision[c], r[1] = e->recall[c], r[2] = e->f1[c], r[3] = (double)e->support[c];
    }
    rc = rc ? rc : log_doubles(w, TW_EVAL_TAG_PER_CLASS, rows, k, 4, step);
    for (int64_t i = 0; rc == 0 && i < s; i++) {
        double *r = rows + i * 4;
        r[0] = (double)e->sample_index[i], r[1] = (double)e->sample_true[i], r[2] = (double)e->sample_pred[i];
        r[3] = e->sample_confidence[i];
    }
    if (rc == 0 && s)
        rc = log_doubles(w, TW_EVAL_TAG_SAMPLES, rows, s, 4, step);
    g_free(rows);
    if (rc == 0 && class_names) {
        GString *text = g_string_new(NULL);
        for (int64_t c = 0; c < k; c++)
            g_string_append_printf(text, "%s\n", class_names[c] ? class_names[c] : "");
        rc = tw_summary_text(w, TW_EVAL_TAG_CLASS_NAMES, text->str, step);
        g_string_free(text, TRUE);
    }
    if (rc == 0 && s && x) {
        if (tw_tensor_dim(x, 0) != e->examples)
            return tw_error_set("tw_evaluation_log: %lld inputs for an evaluation of %lld examples",
                                (long long)tw_tensor_dim(x, 0), (long long)e->examples);
        double *xv = sample_rows(e, x);
        if (!xv)
            return -1;
        rc = is_images(x) ? log_images(w, e, xv, x, step) : log_values(w, e, xv, x, step);
        free(xv);
    }
    return rc;
}
