/* Losses (tf.keras.losses), written with engine ops so they are recorded on
 * tapes and differentiate to any order. Each follows Keras 2.11+'s
 * formula, including where it clips and adds epsilon, so values match
 * TensorFlow's to rounding:
 *   mean_squared_error   mean((y_pred - y_true)^2, axis=-1)
 *   mean_absolute_error  mean(|y_pred - y_true|, axis=-1)
 *   huber                mean(|e| <= delta ? e^2/2 : delta*|e| - delta^2/2, axis=-1)
 *   binary_crossentropy  probabilities: p = clip(p, eps, 1-eps),
 *                        -mean(y log(p + eps) + (1-y) log(1 - p + eps), axis=-1);
 *                        logits: mean(max(x,0) - x y + log(1 + exp(-|x|)), axis=-1)
 *   categorical_crossentropy  logits: softmax cross-entropy; probabilities:
 *                        p / sum(p) clipped to [eps, 1-eps], -sum(y log p, axis=-1)
 *   sparse_categorical_crossentropy  logits: sparse softmax cross-entropy;
 *                        probabilities: the same of log(clip(p, eps, 1-eps)),
 *                        which is -log p[label] when the rows sum to one.
 * The reduction is Keras' "sum over batch size": the sum of the per-example
 * losses divided by their count, 0 for an empty batch. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "tw/losses.h"

#define KERAS_EPSILON 1e-7 /* keras.backend.epsilon() */

static const char *const canonical_names[TW_LOSS_KIND_COUNT] = {
    [TW_LOSS_MEAN_SQUARED_ERROR] = "mean_squared_error",
    [TW_LOSS_MEAN_ABSOLUTE_ERROR] = "mean_absolute_error",
    [TW_LOSS_HUBER] = "huber",
    [TW_LOSS_BINARY_CROSSENTROPY] = "binary_crossentropy",
    [TW_LOSS_CATEGORICAL_CROSSENTROPY] = "categorical_crossentropy",
    [TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY] = "sparse_categorical_crossentropy",
};

static const struct {
    const char *name;
    tw_loss_kind kind;
} aliases[] = {
    {"mse", TW_LOSS_MEAN_SQUARED_ERROR},
    {"mae", TW_LOSS_MEAN_ABSOLUTE_ERROR},
    {"huber_loss", TW_LOSS_HUBER},
};

tw_loss tw_loss_default(tw_loss_kind kind)
{
    return (tw_loss){.kind = kind, .from_logits = false, .delta = 1.0};
}

int tw_loss_from_name(const char *name, tw_loss *loss)
{
    for (int k = 0; name && k < TW_LOSS_KIND_COUNT; k++) {
        if (strcasecmp(name, canonical_names[k]) == 0) {
            *loss = tw_loss_default((tw_loss_kind)k);
            return 0;
        }
    }
    for (size_t i = 0; name && i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcasecmp(name, aliases[i].name) == 0) {
            *loss = tw_loss_default(aliases[i].kind);
            return 0;
        }
    }
    return tw_error_set("loss: unknown loss '%s'; expected one of mse, mean_squared_error, mae, "
                        "mean_absolute_error, huber, huber_loss, binary_crossentropy, categorical_crossentropy, "
                        "sparse_categorical_crossentropy",
                        name ? name : "(null)");
}

const char *tw_loss_name(const tw_loss *loss)
{
    if (!loss || loss->kind < 0 || loss->kind >= TW_LOSS_KIND_COUNT)
        return NULL;
    return canonical_names[loss->kind];
}

static int mismatch(const char *name, const char *what, const tw_tensor *y_true, const tw_tensor *y_pred)
{
    char a[160], b[160];
    return tw_error_set("%s: %s of shape %s do not match predictions of shape %s", name, what,
                        tw_shape_str(y_true->ndim, y_true->shape, a, sizeof a),
                        tw_shape_str(y_pred->ndim, y_pred->shape, b, sizeof b));
}

static bool same_shape(int n, const int64_t *a, const int64_t *b)
{
    return memcmp(a, b, sizeof(int64_t) * (size_t)n) == 0;
}

/* y_true in y_pred's shape and dtype. As Keras (squeeze_or_expand_dimensions),
 * ranks one apart pair when the extra trailing axis has size 1: labels (n,)
 * go with predictions (n, 1) and labels (n, 1) with predictions (n,). */
static tw_tensor *dense_targets(const char *name, tw_tensor *y_true, tw_tensor *y_pred)
{
    int nt = y_true->ndim, np = y_pred->ndim;
    tw_tensor *t = NULL;
    if (nt == np && same_shape(np, y_true->shape, y_pred->shape))
        t = y_true;
    else if (nt + 1 == np && y_pred->shape[np - 1] == 1 && same_shape(nt, y_true->shape, y_pred->shape))
        t = tw_expand_dims(y_true, -1);
    else if (nt == np + 1 && y_true->shape[nt - 1] == 1 && same_shape(np, y_true->shape, y_pred->shape))
        t = tw_squeeze(y_true, TW_AXES(-1));
    if (!t) {
        mismatch(name, "labels", y_true, y_pred);
        return NULL;
    }
    return t->dtype == y_pred->dtype ? t : tw_cast(t, y_pred->dtype);
}

static tw_tensor *mean_last(tw_tensor *x)
{
    return tw_mean(x, TW_AXES(-1), false);
}

static tw_tensor *huber(tw_tensor *t, tw_tensor *p, double delta)
{
    tw_tensor *error = tw_sub(p, t);
    tw_tensor *abs_error = tw_abs(error);
    tw_tensor *quadratic = tw_mul_scalar(tw_square(error), 0.5);
    tw_tensor *linear = tw_sub_scalar(tw_mul_scalar(abs_error, delta), 0.5 * delta * delta);
    return mean_last(tw_where(tw_less_equal(abs_error, tw_scalar(delta)), quadratic, linear));
}

static tw_tensor *binary_from_probabilities(tw_tensor *t, tw_tensor *p)
{
    p = tw_clip(p, KERAS_EPSILON, 1 - KERAS_EPSILON);
    tw_tensor *positive = tw_mul(t, tw_log(tw_add_scalar(p, KERAS_EPSILON)));
    tw_tensor *negative = tw_mul(tw_rsub_scalar(1, t), tw_log(tw_add_scalar(tw_rsub_scalar(1, p), KERAS_EPSILON)));
    return mean_last(tw_neg(tw_add(positive, negative)));
}

/* TensorFlow's sigmoid_cross_entropy_with_logits. The where() form of
 * max(x, 0) and -|x| gives the exact derivative sigmoid(x) - z at x = 0,
 * where relu and abs would each pick a one-sided slope. */
static tw_tensor *binary_from_logits(tw_tensor *z, tw_tensor *x)
{
    tw_tensor *nonnegative = tw_greater_equal(x, tw_scalar(0));
    tw_tensor *relu = tw_where(nonnegative, x, tw_scalar(0));
    tw_tensor *neg_abs = tw_where(nonnegative, tw_neg(x), x);
    return mean_last(tw_add(tw_sub(relu, tw_mul(x, z)), tw_log1p(tw_exp(neg_abs))));
}

static tw_tensor *categorical_from_probabilities(tw_tensor *t, tw_tensor *p)
{
    p = tw_div(p, tw_sum(p, TW_AXES(-1), true));
    p = tw_clip(p, KERAS_EPSILON, 1 - KERAS_EPSILON);
    return tw_neg(tw_sum(tw_mul(t, tw_log(p)), TW_AXES(-1), false));
}

static tw_tensor *dense_loss(const tw_loss *loss, const char *name, tw_tensor *y_true, tw_tensor *y_pred)
{
    tw_tensor *t = dense_targets(name, y_true, y_pred);
    if (!t)
        return NULL;
    switch (loss->kind) {
    case TW_LOSS_MEAN_SQUARED_ERROR:
        return mean_last(tw_square(tw_sub(y_pred, t)));
    case TW_LOSS_MEAN_ABSOLUTE_ERROR:
        return mean_last(tw_abs(tw_sub(y_pred, t)));
    case TW_LOSS_HUBER:
        return huber(t, y_pred, loss->delta);
    case TW_LOSS_BINARY_CROSSENTROPY:
        return loss->from_logits ? binary_from_logits(t, y_pred) : binary_from_probabilities(t, y_pred);
    default: /* TW_LOSS_CATEGORICAL_CROSSENTROPY */
        return loss->from_logits ? tw_softmax_cross_entropy(y_pred, t) : categorical_from_probabilities(t, y_pred);
    }
}

/* Class indices of shape y_pred.shape[:-1]: labels (n, 1) are squeezed and
 * float labels cast to int32, as Keras does. */
static tw_tensor *sparse_targets(const char *name, tw_tensor *y_true, tw_tensor *y_pred)
{
    tw_tensor *t = y_true;
    if (t->ndim == y_pred->ndim && t->shape[t->ndim - 1] == 1)
        t = tw_squeeze(t, TW_AXES(-1));
    if (t->ndim != y_pred->ndim - 1 || !same_shape(t->ndim, t->shape, y_pred->shape)) {
        mismatch(name, "class indices", y_true, y_pred);
        return NULL;
    }
    return t->dtype == TW_INT32 || t->dtype == TW_INT64 ? t : tw_cast(t, TW_INT32);
}

static tw_tensor *sparse_loss(const tw_loss *loss, const char *name, tw_tensor *y_true, tw_tensor *y_pred)
{
    tw_tensor *labels = sparse_targets(name, y_true, y_pred);
    if (!labels)
        return NULL;
    tw_tensor *logits = loss->from_logits ? y_pred : tw_log(tw_clip(y_pred, KERAS_EPSILON, 1 - KERAS_EPSILON));
    return tw_sparse_softmax_cross_entropy(logits, labels);
}

static int check_args(const tw_loss *loss, const char *name, tw_tensor *y_true, tw_tensor *y_pred)
{
    if (!name)
        return tw_error_set("loss: unknown loss kind %d", loss ? (int)loss->kind : -1);
    if (tw__check_inputs(name, 2, (tw_tensor *const[]){y_true, y_pred}) < 0)
        return -1;
    if (!tw_dtype_is_float(y_pred->dtype))
        return tw_error_set("%s: predictions must be float, got %s", name, tw_dtype_name(y_pred->dtype));
    if (y_pred->ndim < 1)
        return tw_error_set("%s: predictions need at least one axis, got shape ()", name);
    if (loss->kind == TW_LOSS_HUBER && !(loss->delta > 0 && isfinite(loss->delta)))
        return tw_error_set("%s: delta must be positive and finite, got %g", name, loss->delta);
    return 0;
}

tw_tensor *tw_loss_per_example(const tw_loss *loss, tw_tensor *y_true, tw_tensor *y_pred)
{
    const char *name = tw_loss_name(loss);
    if (check_args(loss, name, y_true, y_pred) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *per_example = loss->kind == TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY
                                 ? sparse_loss(loss, name, y_true, y_pred)
                                 : dense_loss(loss, name, y_true, y_pred);
    return tw__scope_return(per_example);
}

tw_tensor *tw_loss_compute(const tw_loss *loss, tw_tensor *y_true, tw_tensor *y_pred)
{
    tw_scope_begin();
    tw_tensor *per_example = tw_loss_per_example(loss, y_true, y_pred);
    tw_tensor *mean = NULL;
    if (per_example) {
        int64_t count = per_example->numel;
        mean = tw_div_scalar(tw_sum_all(per_example), (double)(count > 0 ? count : 1));
    }
    return tw__scope_return(mean);
}
