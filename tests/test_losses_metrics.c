/* Losses and metrics. Each loss against values worked out here from its
 * Keras formula (from probabilities and from logits, Huber on both sides of
 * delta, class indices as (batch,) and (batch, 1), int and float labels),
 * names and messages, and gradients against finite differences in float64.
 * Each metric's update, result and reset against counts worked out here,
 * with precision and recall where they are undefined. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "internal.h"
#include "tw/losses.h"
#include "tw/metrics.h"

#define EPS 1e-7 /* Keras' backend epsilon */

/* ---- helpers ------------------------------------------------------------------ */

static tw_tensor *make(tw_dtype dtype, int ndim, const int64_t *shape, const double *values)
{
    tw_tensor *t = tw_zeros(dtype, ndim, shape);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++) {
        void *d = tw_tensor_data(t);
        switch (dtype) {
        case TW_FLOAT32: ((float *)d)[i] = (float)values[i]; break;
        case TW_FLOAT64: ((double *)d)[i] = values[i]; break;
        case TW_INT32: ((int32_t *)d)[i] = (int32_t)values[i]; break;
        case TW_INT64: ((int64_t *)d)[i] = (int64_t)values[i]; break;
        default: g_assert_not_reached();
        }
    }
    return t;
}
#define MAKE(dtype, shape, ...) make(dtype, shape, (const double[]){__VA_ARGS__})

static double at(const tw_tensor *t, int64_t i)
{
    return tw_tensor_dtype(t) == TW_FLOAT32 ? ((const float *)tw_tensor_data(t))[i]
                                            : ((const double *)tw_tensor_data(t))[i];
}

static void assert_values(const char *what, tw_tensor *t, int64_t n, const double *expected, double tol)
{
    if (!t)
        g_error("%s: %s", what, tw_last_error());
    g_assert_cmpint(tw_tensor_numel(t), ==, n);
    for (int64_t i = 0; i < n; i++)
        if (fabs(at(t, i) - expected[i]) > tol * fmax(1, fabs(expected[i])))
            g_error("%s: element %lld is %.12g, expected %.12g", what, (long long)i, at(t, i), expected[i]);
}
#define ASSERT_VALUES(what, t, tol, ...)                                                                    \
    assert_values(what, t, sizeof((double[]){__VA_ARGS__}) / sizeof(double), (const double[]){__VA_ARGS__}, \
                  tol)

static void assert_error_contains(const char *needle)
{
    const char *message = tw_last_error();
    if (!strstr(message, needle))
        g_error("error \"%s\" does not contain \"%s\"", message, needle);
    tw_error_clear();
}

static tw_loss loss_of(tw_loss_kind kind, bool from_logits)
{
    tw_loss loss = tw_loss_default(kind);
    loss.from_logits = from_logits;
    return loss;
}

/* Per-example losses and their batch mean, checked together. */
static void check_loss(const char *what, const tw_loss *loss, tw_tensor *y_true, tw_tensor *y_pred, int64_t n,
                       const double *expected, double tol)
{
    assert_values(what, tw_loss_per_example(loss, y_true, y_pred), n, expected, tol);
    double mean = 0;
    for (int64_t i = 0; i < n; i++)
        mean += expected[i] / (double)n;
    tw_tensor *value = tw_loss_compute(loss, y_true, y_pred);
    g_assert_nonnull(value);
    g_assert_cmpint(tw_tensor_ndim(value), ==, 0);
    g_assert_cmpint(tw_tensor_dtype(value), ==, tw_tensor_dtype(y_pred));
    assert_values(what, value, 1, &mean, tol);
}
#define CHECK_LOSS(what, loss, y_true, y_pred, tol, ...)                                                       \
    check_loss(what, loss, y_true, y_pred, sizeof((double[]){__VA_ARGS__}) / sizeof(double),                   \
               (const double[]){__VA_ARGS__}, tol)

/* ---- losses: values ------------------------------------------------------------ */

static void test_regression(void)
{
    tw_scope_begin();
    tw_tensor *t = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 0, 1, 2, 3);
    tw_tensor *p = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 1, 1, 2, 5); /* errors 1, 0 | 0, 2 */
    tw_loss mse = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR), mae = tw_loss_default(TW_LOSS_MEAN_ABSOLUTE_ERROR);
    CHECK_LOSS("mse", &mse, t, p, 1e-15, 0.5, 2);
    CHECK_LOSS("mae", &mae, t, p, 1e-15, 0.5, 1);

    /* Huber: 0.5 e^2 where |e| <= delta, delta |e| - 0.5 delta^2 beyond. */
    tw_loss huber = tw_loss_default(TW_LOSS_HUBER);
    g_assert_cmpfloat(huber.delta, ==, 1.0);
    CHECK_LOSS("huber delta 1 (|e| = 1 is quadratic, 2 linear)", &huber, t, p, 1e-15, 0.25, (0 + 1.5) / 2);
    huber.delta = 0.5;
    CHECK_LOSS("huber delta 0.5 (all linear)", &huber, t, p, 1e-15, 0.375 / 2, 0.875 / 2);
    huber.delta = 2.5;
    CHECK_LOSS("huber delta 2.5 (all quadratic)", &huber, t, p, 1e-15, 0.25, 1);

    /* Labels of another dtype are cast to the predictions'. */
    CHECK_LOSS("mse, int labels", &mse, MAKE(TW_INT32, TW_SHAPE(2, 2), 0, 1, 2, 3), p, 1e-15, 0.5, 2);
    CHECK_LOSS("mse, float32", &mse, MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 0, 1, 2, 3),
               MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 1, 1, 2, 5), 1e-7, 0.5, 2);

    /* Ranks one apart by a trailing 1 pair up, as Keras squeezes them. */
    tw_tensor *flat = MAKE(TW_FLOAT64, TW_SHAPE(2), 1, 2), *column = MAKE(TW_FLOAT64, TW_SHAPE(2, 1), 1.5, 2);
    CHECK_LOSS("mse (2,) labels, (2, 1) predictions", &mse, flat, column, 1e-15, 0.25, 0);
    tw_tensor *per = tw_loss_per_example(&mse, column, flat);
    g_assert_cmpint(tw_tensor_ndim(per), ==, 0); /* y_pred.shape[:-1] */
    ASSERT_VALUES("mse (2, 1) labels, (2,) predictions", per, 1e-15, 0.125);
    tw_scope_end();
}

static double bce_probability(double y, double p)
{
    p = fmin(fmax(p, EPS), 1 - EPS);
    return -(y * log(p + EPS) + (1 - y) * log(1 - p + EPS));
}

/* The plain formula (log-sigmoid), fine for moderate logits. */
static double bce_logit(double z, double x)
{
    return z * log1p(exp(-x)) + (1 - z) * log1p(exp(x));
}

static void test_binary_crossentropy(void)
{
    tw_scope_begin();
    tw_loss probs = loss_of(TW_LOSS_BINARY_CROSSENTROPY, false), logits = loss_of(TW_LOSS_BINARY_CROSSENTROPY, true);
    tw_tensor *y = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 1, 0, 0, 1);
    tw_tensor *p = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 0.9, 0.2, 0.3, 0.6);
    CHECK_LOSS("bce", &probs, y, p, 1e-14, (bce_probability(1, 0.9) + bce_probability(0, 0.2)) / 2,
               (bce_probability(0, 0.3) + bce_probability(1, 0.6)) / 2);
    ASSERT_VALUES("bce near -log p", tw_loss_per_example(&probs, y, p), 1e-5, (-log(0.9) - log(0.8)) / 2,
                  (-log(0.7) - log(0.6)) / 2);
    /* Certain and wrong: clipped to eps, so -log(2 eps), not infinity. */
    CHECK_LOSS("bce clipped", &probs, MAKE(TW_FLOAT64, TW_SHAPE(1, 2), 0, 1), MAKE(TW_FLOAT64, TW_SHAPE(1, 2), 1, 0),
               1e-9, -log(2 * EPS));

    tw_tensor *x = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 2, -1, 0, 3);
    CHECK_LOSS("bce from logits", &logits, y, x, 1e-14, (bce_logit(1, 2) + bce_logit(0, -1)) / 2,
               (bce_logit(0, 0) + bce_logit(1, 3)) / 2);
    tw_tensor *soft = MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 0.3, 0.3, 0.7, 0.7);
    CHECK_LOSS("bce from logits, soft labels", &logits, soft, x, 1e-14, (bce_logit(0.3, 2) + bce_logit(0.3, -1)) / 2,
               (bce_logit(0.7, 0) + bce_logit(0.7, 3)) / 2);
    /* Stable for large logits: exactly |x| when wrong, 0 when right. */
    CHECK_LOSS("bce from large logits", &logits, MAKE(TW_FLOAT32, TW_SHAPE(1, 4), 0, 1, 1, 0),
               MAKE(TW_FLOAT32, TW_SHAPE(1, 4), 100, -100, 100, -100), 1e-6, 50);

    /* Both ways agree: probabilities sigmoid(x) against logits x. */
    tw_tensor *probabilities = tw_sigmoid(x);
    tw_tensor *a = tw_loss_per_example(&probs, soft, probabilities), *b = tw_loss_per_example(&logits, soft, x);
    assert_values("bce both ways", a, 2, (const double[]){at(b, 0), at(b, 1)}, 1e-6);

    /* At x = 0 the slope is sigmoid(0) - z, not one side's. */
    tw_tensor *zero = tw_variable(tw_zeros(TW_FLOAT64, TW_SHAPE(1, 1)), "x", true);
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *value = tw_loss_compute(&logits, MAKE(TW_FLOAT64, TW_SHAPE(1, 1), 1), zero);
    tw_tape_end(tape);
    tw_tensor *grad;
    g_assert_cmpint(tw_tape_gradient(tape, value, 1, &zero, &grad), ==, 0);
    ASSERT_VALUES("bce from logits, slope at 0", grad, 1e-15, -0.5);
    tw_tape_free(tape);
    tw_scope_end();
}

static void test_categorical_crossentropy(void)
{
    tw_scope_begin();
    tw_loss probs = loss_of(TW_LOSS_CATEGORICAL_CROSSENTROPY, false);
    tw_loss logits = loss_of(TW_LOSS_CATEGORICAL_CROSSENTROPY, true);
    tw_tensor *y = MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 0, 0, 1, 1, 0, 0);
    double lse = log(exp(1) + exp(2) + exp(3));
    CHECK_LOSS("cce from logits", &logits, y, MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 1, 2, 3, 1, 1, 1), 1e-14, lse - 3,
               log(3));
    CHECK_LOSS("cce from logits, float64 labels for float32 logits", &logits, y,
               MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 1, 2, 3, 1, 1, 1), 1e-6, lse - 3, log(3));
    CHECK_LOSS("cce", &probs, y, MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 0.2, 0.3, 0.5, 0.5, 0.25, 0.25), 1e-14, -log(0.5),
               -log(0.5));
    /* Keras normalises each row first. */
    CHECK_LOSS("cce, unnormalised rows", &probs, y, MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 2, 3, 5, 2, 1, 1), 1e-14,
               -log(0.5), -log(0.5));
    CHECK_LOSS("cce clipped", &probs, MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 1, 0, 0),
               MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0, 0, 1), 1e-9, -log(EPS));
    CHECK_LOSS("cce soft labels", &probs, MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0.25, 0, 0.75),
               MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0.2, 0.3, 0.5), 1e-14, -(0.25 * log(0.2) + 0.75 * log(0.5)));
    tw_scope_end();
}

static void test_sparse_categorical_crossentropy(void)
{
    tw_scope_begin();
    tw_loss probs = loss_of(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, false);
    tw_loss logits = loss_of(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, true);
    tw_tensor *x = MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 1, 2, 3, 1, 1, 1);
    double lse = log(exp(1) + exp(2) + exp(3));
    CHECK_LOSS("scce, int32 (2,)", &logits, MAKE(TW_INT32, TW_SHAPE(2), 2, 0), x, 1e-14, lse - 3, log(3));
    CHECK_LOSS("scce, int32 (2, 1)", &logits, MAKE(TW_INT32, TW_SHAPE(2, 1), 2, 0), x, 1e-14, lse - 3, log(3));
    CHECK_LOSS("scce, int64", &logits, MAKE(TW_INT64, TW_SHAPE(2), 2, 0), x, 1e-14, lse - 3, log(3));
    CHECK_LOSS("scce, float32 (2,)", &logits, MAKE(TW_FLOAT32, TW_SHAPE(2), 2, 0), x, 1e-14, lse - 3, log(3));
    CHECK_LOSS("scce, float64 (2, 1)", &logits, MAKE(TW_FLOAT64, TW_SHAPE(2, 1), 2, 0), x, 1e-14, lse - 3, log(3));

    tw_tensor *p = MAKE(TW_FLOAT64, TW_SHAPE(2, 3), 0.2, 0.3, 0.5, 0.5, 0.25, 0.25);
    CHECK_LOSS("scce from probabilities", &probs, MAKE(TW_INT32, TW_SHAPE(2), 2, 0), p, 1e-14, -log(0.5), -log(0.5));
    CHECK_LOSS("scce from probabilities, (2, 1) float labels", &probs, MAKE(TW_FLOAT32, TW_SHAPE(2, 1), 1, 2), p, 1e-14,
               -log(0.3), -log(0.25));
    /* Keras feeds log(clip(p)) to the softmax cross-entropy, so a row that
     * does not sum to one is renormalised: -log(0.3 / 0.5). */
    CHECK_LOSS("scce, unnormalised row", &probs, MAKE(TW_INT32, TW_SHAPE(1), 2),
               MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0.1, 0.1, 0.3), 1e-14, -log(0.6));
    CHECK_LOSS("scce clipped", &probs, MAKE(TW_INT32, TW_SHAPE(1), 0), MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0, 0, 1), 1e-9,
               -log(EPS / (EPS + EPS + (1 - EPS))));

    /* Any leading shape: per-example losses keep it. */
    tw_tensor *seq =
        tw_loss_per_example(&logits, tw_zeros(TW_INT32, TW_SHAPE(2, 4)), tw_zeros(TW_FLOAT64, TW_SHAPE(2, 4, 5)));
    g_assert_cmpint(tw_tensor_ndim(seq), ==, 2);
    g_assert_cmpint(tw_tensor_dim(seq, 1), ==, 4);
    g_assert_cmpfloat_with_epsilon(at(seq, 7), log(5), 1e-14);

    g_assert_null(tw_loss_compute(&logits, MAKE(TW_INT32, TW_SHAPE(2), 3, 0), x));
    assert_error_contains("label 3 at position 0 is outside [0, 3)");
    tw_scope_end();
}

static void test_empty_batch(void)
{
    tw_scope_begin();
    tw_loss mse = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    tw_tensor *none = tw_zeros(TW_FLOAT32, TW_SHAPE(0, 3));
    g_assert_cmpint(tw_tensor_numel(tw_loss_per_example(&mse, none, none)), ==, 0);
    ASSERT_VALUES("mean of no examples (Keras' divide_no_nan)", tw_loss_compute(&mse, none, none), 0, 0);
    tw_scope_end();
}

static void test_loss_names(void)
{
    static const struct {
        const char *name;
        tw_loss_kind kind;
    } names[] = {
        {"mse", TW_LOSS_MEAN_SQUARED_ERROR},
        {"MSE", TW_LOSS_MEAN_SQUARED_ERROR},
        {"mean_squared_error", TW_LOSS_MEAN_SQUARED_ERROR},
        {"mae", TW_LOSS_MEAN_ABSOLUTE_ERROR},
        {"mean_absolute_error", TW_LOSS_MEAN_ABSOLUTE_ERROR},
        {"huber", TW_LOSS_HUBER},
        {"huber_loss", TW_LOSS_HUBER},
        {"binary_crossentropy", TW_LOSS_BINARY_CROSSENTROPY},
        {"categorical_crossentropy", TW_LOSS_CATEGORICAL_CROSSENTROPY},
        {"sparse_categorical_crossentropy", TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        tw_loss loss = {.kind = TW_LOSS_KIND_COUNT, .from_logits = true, .delta = 0};
        g_assert_cmpint(tw_loss_from_name(names[i].name, &loss), ==, 0);
        g_assert_cmpint(loss.kind, ==, names[i].kind);
        g_assert_false(loss.from_logits);
        g_assert_cmpfloat(loss.delta, ==, 1.0);
    }
    static const char *const canonical[TW_LOSS_KIND_COUNT] = {
        "mean_squared_error",       "mean_absolute_error",
        "huber",                    "binary_crossentropy",
        "categorical_crossentropy", "sparse_categorical_crossentropy",
    };
    for (int k = 0; k < TW_LOSS_KIND_COUNT; k++) {
        tw_loss loss = tw_loss_default((tw_loss_kind)k), back;
        g_assert_cmpstr(tw_loss_name(&loss), ==, canonical[k]);
        g_assert_cmpint(tw_loss_from_name(tw_loss_name(&loss), &back), ==, 0);
        g_assert_cmpint(back.kind, ==, k);
    }
    tw_loss loss;
    g_assert_cmpint(tw_loss_from_name("kl_divergence", &loss), ==, -1);
    assert_error_contains("loss: unknown loss 'kl_divergence'; expected one of mse, mean_squared_error, mae");
    g_assert_cmpint(tw_loss_from_name(NULL, &loss), ==, -1);
    assert_error_contains("sparse_categorical_crossentropy");
    loss.kind = TW_LOSS_KIND_COUNT;
    g_assert_null(tw_loss_name(&loss));
}

static void test_loss_errors(void)
{
    tw_scope_begin();
    tw_loss mse = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    tw_tensor *p23 = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3));
    g_assert_null(tw_loss_compute(&mse, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 2)), p23));
    assert_error_contains("mean_squared_error: labels of shape (2, 2) do not match predictions of shape (2, 3)");
    tw_loss bce = loss_of(TW_LOSS_BINARY_CROSSENTROPY, true);
    g_assert_null(tw_loss_per_example(&bce, tw_zeros(TW_FLOAT32, TW_SHAPE(3)), p23));
    assert_error_contains("binary_crossentropy: labels of shape (3,) do not match predictions of shape (2, 3)");

    tw_loss scce = loss_of(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, true);
    g_assert_null(tw_loss_compute(&scce, tw_zeros(TW_INT32, TW_SHAPE(3)), p23));
    assert_error_contains("sparse_categorical_crossentropy: class indices of shape (3,) do not match predictions "
                          "of shape (2, 3)");
    g_assert_null(tw_loss_compute(&scce, tw_zeros(TW_INT32, TW_SHAPE(2, 2)), p23));
    assert_error_contains("class indices of shape (2, 2) do not match predictions of shape (2, 3)");

    tw_loss cce = tw_loss_default(TW_LOSS_CATEGORICAL_CROSSENTROPY);
    g_assert_null(tw_loss_compute(&cce, p23, tw_zeros(TW_INT32, TW_SHAPE(2, 3))));
    assert_error_contains("categorical_crossentropy: predictions must be float, got int32");
    g_assert_null(tw_loss_compute(&mse, tw_scalar(1), tw_scalar(2)));
    assert_error_contains("mean_squared_error: predictions need at least one axis, got shape ()");
    tw_loss huber = tw_loss_default(TW_LOSS_HUBER);
    huber.delta = 0;
    g_assert_null(tw_loss_compute(&huber, p23, p23));
    assert_error_contains("huber: delta must be positive and finite, got 0");
    g_assert_null(tw_loss_compute(&mse, NULL, p23));
    assert_error_contains("mean_squared_error: input 0 is NULL");
    tw_loss unknown = {.kind = (tw_loss_kind)42};
    g_assert_null(tw_loss_compute(&unknown, p23, p23));
    assert_error_contains("loss: unknown loss kind 42");
    tw_scope_end();
}

/* ---- losses: gradients ------------------------------------------------------------ */

typedef struct {
    tw_loss loss;
    tw_tensor *labels; /* sparse: fixed class indices */
    bool mean;         /* tw_loss_compute instead of the per-example losses */
} loss_case;

/* inputs: y_true, y_pred (dense) or y_pred alone (sparse). */
static tw_tensor *loss_fn(tw_tensor *const *inputs, void *data)
{
    loss_case *c = data;
    tw_tensor *y_true = c->labels ? c->labels : inputs[0], *y_pred = c->labels ? inputs[0] : inputs[1];
    return c->mean ? tw_loss_compute(&c->loss, y_true, y_pred) : tw_loss_per_example(&c->loss, y_true, y_pred);
}

static void check_dense_gradients(const char *name, loss_case *c, double true_lo, double true_hi, double pred_lo,
                                  double pred_hi)
{
    tw_scope_begin();
    tw_tensor *y_true = gc_tensor(11, true_lo, true_hi, TW_SHAPE(3, 4));
    tw_tensor *y_pred = gc_tensor(12, pred_lo, pred_hi, TW_SHAPE(3, 4));
    gc_check(name, loss_fn, 2, (tw_tensor *const[]){y_true, y_pred}, c);
    c->mean = true;
    gc_check(name, loss_fn, 2, (tw_tensor *const[]){y_true, y_pred}, c);
    c->mean = false;
    tw_scope_end();
}

static void test_loss_gradients(void)
{
    loss_case c = {.loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR)};
    check_dense_gradients("mse", &c, -2, 2, -2, 2);
    c.loss = tw_loss_default(TW_LOSS_MEAN_ABSOLUTE_ERROR);
    check_dense_gradients("mae", &c, -2, 2, -2, 2);
    c.loss = tw_loss_default(TW_LOSS_HUBER);
    c.loss.delta = 0.7; /* errors in [-4, 4]: both sides */
    check_dense_gradients("huber", &c, -2, 2, -2, 2);
    c.loss = loss_of(TW_LOSS_BINARY_CROSSENTROPY, false);
    check_dense_gradients("bce", &c, 0, 1, 0.05, 0.95);
    c.loss = loss_of(TW_LOSS_BINARY_CROSSENTROPY, true);
    check_dense_gradients("bce from logits", &c, 0, 1, -3, 3);
    c.loss = loss_of(TW_LOSS_CATEGORICAL_CROSSENTROPY, false);
    check_dense_gradients("cce", &c, 0, 1, 0.1, 1);
    c.loss = loss_of(TW_LOSS_CATEGORICAL_CROSSENTROPY, true);
    check_dense_gradients("cce from logits", &c, 0, 1, -2, 2);

    tw_scope_begin();
    loss_case s = {.loss = loss_of(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, true),
                   .labels = MAKE(TW_FLOAT64, TW_SHAPE(3, 1), 0, 3, 1)};
    tw_tensor *logits = gc_tensor(13, -2, 2, TW_SHAPE(3, 4));
    gc_check("scce from logits", loss_fn, 1, &logits, &s);
    s.loss.from_logits = false;
    tw_tensor *p = gc_tensor(14, 0.05, 0.6, TW_SHAPE(3, 4));
    gc_check("scce", loss_fn, 1, &p, &s);
    s.mean = true;
    gc_check("scce mean", loss_fn, 1, &p, &s);
    tw_scope_end();
}

/* The losses are engine ops all the way down: second derivatives too. */
static void test_loss_second_order(void)
{
    tw_scope_begin();
    tw_tensor *y_true = gc_tensor(21, 0, 1, TW_SHAPE(2, 3)), *y_pred = gc_tensor(22, -2, 2, TW_SHAPE(2, 3));
    loss_case c = {.loss = loss_of(TW_LOSS_BINARY_CROSSENTROPY, true)};
    gc_check_second("bce from logits", loss_fn, 2, (tw_tensor *const[]){y_true, y_pred}, &c);
    c.loss = tw_loss_default(TW_LOSS_HUBER);
    gc_check_second("huber", loss_fn, 2, (tw_tensor *const[]){y_true, y_pred}, &c);
    c.loss = loss_of(TW_LOSS_CATEGORICAL_CROSSENTROPY, true);
    gc_check_second("cce from logits", loss_fn, 2, (tw_tensor *const[]){y_true, y_pred}, &c);
    tw_scope_end();
}

/* ---- metrics ---------------------------------------------------------------------- */

static tw_metric *metric(const char *name)
{
    tw_metric *m = tw_metric_new(name);
    if (!m)
        g_error("%s: %s", name, tw_last_error());
    g_assert_cmpfloat(tw_metric_result(m), ==, 0); /* before any update, as Keras */
    return m;
}

static void update(tw_metric *m, tw_tensor *y_true, tw_tensor *y_pred)
{
    if (tw_metric_update_state(m, y_true, y_pred) < 0)
        g_error("%s: %s", tw_metric_name(m), tw_last_error());
}

static void test_mean(void)
{
    tw_scope_begin();
    tw_metric *m = metric("mean");
    g_assert_cmpstr(tw_metric_name(m), ==, "mean");
    g_assert_cmpint(tw_metric_update_value(m, 2, 1), ==, 0);
    g_assert_cmpint(tw_metric_update_value(m, 4, 3), ==, 0);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 14.0 / 4, 1e-15);
    update(m, MAKE(TW_FLOAT32, TW_SHAPE(3), 1, 2, 3), NULL);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 20.0 / 7, 1e-15);
    update(m, MAKE(TW_INT32, TW_SHAPE(2, 1), 10, 20), NULL);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 50.0 / 9, 1e-15);
    tw_metric_reset_state(m);
    g_assert_cmpfloat(tw_metric_result(m), ==, 0);
    update(m, tw_transpose(MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 1, 2, 3, 4)), NULL);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 2.5, 1e-15);
    g_assert_cmpint(tw_metric_update_state(m, tw_scalar(1), tw_scalar(1)), ==, -1);
    assert_error_contains("mean: averages the elements of y_true; pass NULL as y_pred");
    tw_metric_free(m);
    tw_scope_end();
}

static void test_accuracy(void)
{
    tw_scope_begin();
    tw_metric *m = metric("accuracy");
    /* Compared as float32, as Keras' MeanMetricWrapper casts both. */
    update(m, MAKE(TW_INT32, TW_SHAPE(4), 1, 2, 3, 4), MAKE(TW_FLOAT32, TW_SHAPE(4), 1, 2.5, 3, 0));
    g_assert_cmpfloat(tw_metric_result(m), ==, 0.5);
    update(m, MAKE(TW_FLOAT64, TW_SHAPE(2, 1), 1, 0), MAKE(TW_FLOAT32, TW_SHAPE(2), 1, 0));
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 4.0 / 6, 1e-15);
    tw_metric_reset_state(m);
    g_assert_cmpfloat(tw_metric_result(m), ==, 0);
    update(m, MAKE(TW_INT64, TW_SHAPE(2), 7, 8), MAKE(TW_INT64, TW_SHAPE(2), 7, 9));
    g_assert_cmpfloat(tw_metric_result(m), ==, 0.5);
    tw_metric_free(m);

    m = metric("acc"); /* the alias keeps its name, as Keras logs it */
    g_assert_cmpstr(tw_metric_name(m), ==, "acc");
    update(m, MAKE(TW_FLOAT32, TW_SHAPE(2), 1, 2), MAKE(TW_FLOAT32, TW_SHAPE(2), 1, 2));
    g_assert_cmpfloat(tw_metric_result(m), ==, 1);
    tw_metric_free(m);
    tw_scope_end();
}

static void test_sparse_categorical_accuracy(void)
{
    tw_scope_begin();
    tw_metric *m = metric("sparse_categorical_accuracy");
    tw_tensor *logits = MAKE(TW_FLOAT32, TW_SHAPE(3, 3), 0.1, 0.8, 0.1, 0.3, 0.3, 0.4, 0.5, 0.2, 0.3);
    update(m, MAKE(TW_INT32, TW_SHAPE(3), 1, 2, 1), logits); /* argmax 1, 2, 0 */
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 2.0 / 3, 1e-15);
    update(m, MAKE(TW_FLOAT32, TW_SHAPE(3, 1), 1, 2, 0), logits);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 5.0 / 6, 1e-15);
    /* Ties go to the first index, as tf.argmax. */
    update(m, MAKE(TW_INT64, TW_SHAPE(1), 0), MAKE(TW_FLOAT32, TW_SHAPE(1, 3), 0.5, 0.5, 0));
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 6.0 / 7, 1e-15);
    /* float64 predictions; a label 1.5 matches nothing. */
    update(m, MAKE(TW_FLOAT64, TW_SHAPE(2), 1, 1.5), MAKE(TW_FLOAT64, TW_SHAPE(2, 2), 0, 1, 3, 2));
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 7.0 / 9, 1e-15);
    tw_metric_reset_state(m);
    /* A strided view: rows of the transpose [[1, 5, 0], [0, 2, 9]]. */
    tw_tensor *view = tw_transpose(MAKE(TW_FLOAT32, TW_SHAPE(3, 2), 1, 0, 5, 2, 0, 9));
    update(m, MAKE(TW_INT32, TW_SHAPE(2), 1, 2), view);
    g_assert_cmpfloat(tw_metric_result(m), ==, 1);
    g_assert_cmpint(tw_metric_update_state(m, MAKE(TW_INT32, TW_SHAPE(2), 1, 2), logits), ==, -1);
    assert_error_contains("sparse_categorical_accuracy: labels of shape (2,) do not match predictions of shape (3, 3)");
    g_assert_cmpfloat(tw_metric_result(m), ==, 1);
    tw_metric_free(m);
    tw_scope_end();
}

static void test_categorical_accuracy(void)
{
    tw_scope_begin();
    tw_metric *m = metric("categorical_accuracy");
    update(m, MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 0, 1, 0, 1, 0, 0),
           MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 0.2, 0.7, 0.1, 0.1, 0.8, 0.1));
    g_assert_cmpfloat(tw_metric_result(m), ==, 0.5);
    update(m, MAKE(TW_FLOAT64, TW_SHAPE(1, 3), 0, 0, 1), MAKE(TW_FLOAT32, TW_SHAPE(1, 3), -1, -2, 0));
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 2.0 / 3, 1e-15);
    g_assert_cmpint(tw_metric_update_state(m, MAKE(TW_INT32, TW_SHAPE(2), 1, 0),
                                           MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 0, 0, 0, 0, 0, 0)),
                    ==, -1);
    assert_error_contains("categorical_accuracy: labels of shape (2,) do not match predictions of shape (2, 3)");
    tw_metric_free(m);
    tw_scope_end();
}

static void test_binary_accuracy(void)
{
    tw_scope_begin();
    tw_metric *m = metric("binary_accuracy");
    tw_tensor *y = MAKE(TW_FLOAT32, TW_SHAPE(4), 1, 0, 1, 0);
    tw_tensor *p = MAKE(TW_FLOAT32, TW_SHAPE(4), 0.7, 0.5, 0.4, 0.2);
    update(m, y, p); /* 0.5 is not above 0.5: predicted 1, 0, 0, 0 */
    g_assert_cmpfloat(tw_metric_result(m), ==, 0.75);
    tw_metric_reset_state(m);
    g_assert_cmpint(tw_metric_set_threshold(m, 0.45), ==, 0); /* predicted 1, 1, 0, 0 */
    update(m, MAKE(TW_INT32, TW_SHAPE(4, 1), 1, 0, 1, 0), p);
    g_assert_cmpfloat(tw_metric_result(m), ==, 0.5);
    /* Labels other than 0 and 1 never match. */
    update(m, MAKE(TW_FLOAT32, TW_SHAPE(2), 0.9, 0.1), MAKE(TW_FLOAT32, TW_SHAPE(2), 0.9, 0.1));
    g_assert_cmpfloat_with_epsilon(tw_metric_result(m), 2.0 / 6, 1e-15);
    g_assert_cmpint(tw_metric_set_threshold(m, NAN), ==, -1);
    assert_error_contains("binary_accuracy: threshold nan must be finite");
    tw_metric_free(m);
    tw_scope_end();
}

static void test_precision_recall(void)
{
    tw_scope_begin();
    tw_metric *precision = metric("precision"), *recall = metric("recall");
    /* predicted positive (> 0.5): 1, 1, 0, 1, 1; TP 2, FP 2, FN 1. */
    tw_tensor *y = MAKE(TW_INT32, TW_SHAPE(5), 1, 0, 1, 1, 0);
    tw_tensor *p = MAKE(TW_FLOAT32, TW_SHAPE(5), 0.9, 0.8, 0.3, 0.6, 0.7);
    update(precision, y, p);
    update(recall, y, p);
    g_assert_cmpfloat(tw_metric_result(precision), ==, 0.5);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(recall), 2.0 / 3, 1e-15);
    /* A batch with no positives at all changes neither. */
    tw_tensor *y0 = MAKE(TW_INT32, TW_SHAPE(2), 0, 0), *p0 = MAKE(TW_FLOAT32, TW_SHAPE(2), 0.1, 0.5);
    update(precision, y0, p0);
    update(recall, y0, p0);
    g_assert_cmpfloat(tw_metric_result(precision), ==, 0.5);
    g_assert_cmpfloat_with_epsilon(tw_metric_result(recall), 2.0 / 3, 1e-15);

    /* Undefined ratios are 0: no predicted positives, no actual positives. */
    tw_metric_reset_state(precision);
    tw_metric_reset_state(recall);
    update(precision, MAKE(TW_INT32, TW_SHAPE(2), 1, 1), p0);
    update(recall, y0, MAKE(TW_FLOAT32, TW_SHAPE(2), 0.9, 0.9));
    g_assert_cmpfloat(tw_metric_result(precision), ==, 0);
    g_assert_cmpfloat(tw_metric_result(recall), ==, 0);

    /* A lower threshold: everything above 0.2 is positive, recall 3/3. */
    tw_metric_reset_state(recall);
    g_assert_cmpint(tw_metric_set_threshold(recall, 0.2), ==, 0);
    update(recall, y, p);
    g_assert_cmpfloat(tw_metric_result(recall), ==, 1);

    g_assert_cmpint(tw_metric_set_threshold(precision, 1.5), ==, -1);
    assert_error_contains("precision: threshold 1.5 must be in [0, 1]");
    tw_metric_reset_state(precision);
    update(precision, y, p);
    g_assert_cmpint(tw_metric_update_state(precision, MAKE(TW_INT32, TW_SHAPE(2), 1, 1),
                                           MAKE(TW_FLOAT64, TW_SHAPE(2), 1, 1.25)),
                    ==, -1);
    assert_error_contains("precision: predictions must be in [0, 1], got 1.25 at element 1");
    g_assert_cmpfloat(tw_metric_result(precision), ==, 0.5); /* the failed batch left no trace */
    tw_metric_free(precision);
    tw_metric_free(recall);
    tw_scope_end();
}

static void test_metric_errors(void)
{
    tw_scope_begin();
    g_assert_null(tw_metric_new("auc"));
    assert_error_contains("metric: unknown metric 'auc'; expected one of mean, accuracy (acc), "
                          "sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, precision, recall");
    g_assert_null(tw_metric_new(NULL));
    assert_error_contains("unknown metric '(null)'");
    tw_metric *m = metric("accuracy");
    g_assert_cmpint(tw_metric_update_state(m, tw_zeros(TW_FLOAT32, TW_SHAPE(3)), tw_zeros(TW_FLOAT32, TW_SHAPE(2))),
                    ==, -1);
    assert_error_contains("accuracy: labels of shape (3,) do not match predictions of shape (2,)");
    g_assert_cmpint(tw_metric_update_state(m, tw_zeros(TW_FLOAT32, TW_SHAPE(3)), NULL), ==, -1);
    assert_error_contains("accuracy: input 1 is NULL");
    g_assert_cmpint(tw_metric_set_threshold(m, 0.3), ==, -1);
    assert_error_contains("accuracy: this metric has no threshold");
    g_assert_cmpint(tw_metric_update_value(m, 1, 1), ==, -1);
    assert_error_contains("accuracy: update_value is for the mean metric");
    g_assert_cmpfloat(tw_metric_result(m), ==, 0);
    tw_metric_free(m);
    tw_metric_free(NULL);
    g_assert_null(tw_metric_name(NULL));
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/losses/regression", test_regression);
    g_test_add_func("/losses/binary-crossentropy", test_binary_crossentropy);
    g_test_add_func("/losses/categorical-crossentropy", test_categorical_crossentropy);
    g_test_add_func("/losses/sparse-categorical-crossentropy", test_sparse_categorical_crossentropy);
    g_test_add_func("/losses/empty-batch", test_empty_batch);
    g_test_add_func("/losses/names", test_loss_names);
    g_test_add_func("/losses/errors", test_loss_errors);
    g_test_add_func("/losses/gradients", test_loss_gradients);
    g_test_add_func("/losses/second-order", test_loss_second_order);
    g_test_add_func("/metrics/mean", test_mean);
    g_test_add_func("/metrics/accuracy", test_accuracy);
    g_test_add_func("/metrics/sparse-categorical-accuracy", test_sparse_categorical_accuracy);
    g_test_add_func("/metrics/categorical-accuracy", test_categorical_accuracy);
    g_test_add_func("/metrics/binary-accuracy", test_binary_accuracy);
    g_test_add_func("/metrics/precision-recall", test_precision_recall);
    g_test_add_func("/metrics/errors", test_metric_errors);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
