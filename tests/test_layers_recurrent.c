/* Recurrent layers (SimpleRNN, LSTM, GRU in both reset_after forms):
 * forward values against the cells' formulas written out here with plain
 * loops, Keras' weight shapes and parameter counts, return_sequences and
 * go_backwards, LSTM's unit_forget_bias, dropout masks drawn once per
 * sequence, the messages of inputs and configs that cannot work, a stack of
 * recurrent layers in a Sequential model, fit's traced step against the
 * eager one, and gradients of the input and
 * every weight against finite differences through three timesteps. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "tw/layers.h"
#include "tw/losses.h"
#include "tw/model.h"
#include "tw/optimizers.h"

#define NONE (-1)
#define SHAPE(...) ((tw_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})

/* ---- helpers ------------------------------------------------------------------ */

/* A layer with params set from "key", "value" pairs (NULL-terminated). */
static tw_layer *layer_with(const char *class_name, ...)
{
    tw_layer *layer = tw_layer_new(class_name, NULL);
    if (!layer || tw_layer_set_name(layer, "rnn"))
        g_error("%s: %s", class_name, tw_last_error());
    va_list ap;
    va_start(ap, class_name);
    for (const char *key; (key = va_arg(ap, const char *));) {
        const char *value = va_arg(ap, const char *);
        if (tw_layer_set(layer, key, value))
            g_error("%s.%s = %s: %s", class_name, key, value, tw_last_error());
    }
    va_end(ap);
    return layer;
}

static void build(tw_layer *layer, tw_shape input)
{
    tw_rng *rng = tw_rng_new(3);
    if (tw_layer_build(layer, &input, rng))
        g_error("build: %s", tw_last_error());
    tw_rng_free(rng);
}

static void assert_shape(const tw_tensor *t, tw_shape want)
{
    if (!t)
        g_error("call failed: %s", tw_last_error());
    char got[96], expected[96];
    tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), got, sizeof got);
    tw_shape_str(want.ndim, want.dims, expected, sizeof expected);
    g_assert_cmpstr(got, ==, expected);
}

static void assert_error(const char *fragment)
{
    const char *msg = tw_last_error();
    if (!strstr(msg, fragment))
        g_error("message \"%s\" lacks \"%s\"", msg, fragment);
}

/* A contiguous float64 tensor's values. */
static const double *data_of(tw_tensor *t)
{
    g_assert_nonnull(t);
    g_assert_cmpint(tw_tensor_dtype(t), ==, TW_FLOAT64);
    g_assert_true(tw_tensor_is_contiguous(t));
    return tw_tensor_data(t);
}

static void assert_close(tw_tensor *t, const double *expected, double tol)
{
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *got = data_of(c);
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        if (fabs(got[i] - expected[i]) > tol)
            g_error("element %lld is %.12g, expected %.12g", (long long)i, got[i], expected[i]);
}

/* Random values for every weight (a layer built in float64), so the
 * references below read the same numbers the layer uses. */
static void randomize_weights(tw_layer *layer, unsigned seed)
{
    for (int i = 0; i < tw_layer_nweights(layer); i++) {
        tw_tensor *w = tw_layer_weight(layer, i);
        if (tw_assign(w, gc_tensor(seed + i, -0.9, 0.9, tw_tensor_ndim(w), tw_tensor_shape(w))))
            g_error("assign: %s", tw_last_error());
    }
}

/* ---- the cells, written out --------------------------------------------------- */

typedef enum { SIMPLE, LSTM, GRU_AFTER, GRU_BEFORE } cell_kind;

static double sigmoid(double v)
{
    return 1 / (1 + exp(-v));
}

typedef struct {
    cell_kind kind;
    int batch, steps, features, units;
    bool backwards, sequences;
    const double *x, *kernel, *recurrent, *bias; /* row-major, as the layer holds them */
    const double *h0, *c0;                       /* (batch, units) initial states, or NULL for zeros */
    double *h_end, *c_end;                       /* (batch, units) final states, or NULL */
} cell_case;

static int gates_of(cell_kind kind)
{
    return kind == SIMPLE ? 1 : kind == LSTM ? 4 : 3;
}

/* One step of one batch row: h (and c) updated in place. */
static void cell_step(const cell_case *k, const double *xt, double *h, double *c)
{
    int u = k->units, gu = gates_of(k->kind) * u;
    double xw[64], rw[64], next[16];
    for (int j = 0; j < gu; j++) {
        xw[j] = k->bias ? k->bias[j] : 0;
        rw[j] = k->bias && k->kind == GRU_AFTER ? k->bias[gu + j] : 0;
        for (int f = 0; f < k->features; f++)
            xw[j] += xt[f] * k->kernel[f * gu + j];
        for (int i = 0; i < u; i++)
            rw[j] += h[i] * k->recurrent[i * gu + j];
    }
    for (int j = 0; j < u; j++) {
        if (k->kind == SIMPLE) {
            next[j] = tanh(xw[j] + rw[j]);
        } else if (k->kind == LSTM) {
            double in = sigmoid(xw[j] + rw[j]), forget = sigmoid(xw[u + j] + rw[u + j]);
            double cand = tanh(xw[2 * u + j] + rw[2 * u + j]), out = sigmoid(xw[3 * u + j] + rw[3 * u + j]);
            c[j] = forget * c[j] + in * cand;
            next[j] = out * tanh(c[j]);
        } else {
            double z = sigmoid(xw[j] + rw[j]), r = sigmoid(xw[u + j] + rw[u + j]), rh = 0;
            if (k->kind == GRU_AFTER) {
                rh = r * rw[2 * u + j];
            } else { /* (r * h) @ recurrent[:, 2u:], with r per unit of h */
                for (int i = 0; i < u; i++)
                    rh += sigmoid(xw[u + i] + rw[u + i]) * h[i] * k->recurrent[i * gu + 2 * u + j];
            }
            next[j] = z * h[j] + (1 - z) * tanh(xw[2 * u + j] + rh);
        }
    }
    memcpy(h, next, sizeof(double) * u);
}

/* out: (batch, units), or (batch, steps, units) with sequences. */
static void cell_run(const cell_case *k, double *out)
{
    for (int b = 0; b < k->batch; b++) {
        double h[16] = {0}, c[16] = {0};
        if (k->h0)
            memcpy(h, k->h0 + b * k->units, sizeof(double) * k->units);
        if (k->c0)
            memcpy(c, k->c0 + b * k->units, sizeof(double) * k->units);
        for (int s = 0; s < k->steps; s++) {
            int t = k->backwards ? k->steps - 1 - s : s;
            cell_step(k, k->x + (b * k->steps + t) * k->features, h, c);
            if (k->sequences)
                memcpy(out + (b * k->steps + s) * k->units, h, sizeof(double) * k->units);
        }
        if (!k->sequences)
            memcpy(out + b * k->units, h, sizeof(double) * k->units);
        if (k->h_end)
            memcpy(k->h_end + b * k->units, h, sizeof(double) * k->units);
        if (k->c_end)
            memcpy(k->c_end + b * k->units, c, sizeof(double) * k->units);
    }
}

static const char *class_of(cell_kind kind)
{
    return kind == SIMPLE ? "SimpleRNN" : kind == LSTM ? "LSTM" : "GRU";
}

/* The layer against the written-out cell on random input and weights. */
static void check_values(cell_kind kind, bool backwards, bool sequences)
{
    enum { B = 2, T = 3, F = 3, U = 2 };
    tw_scope_begin();
    tw_layer *layer = layer_with(class_of(kind), "units", "2", "go_backwards", backwards ? "true" : "false",
                                 "return_sequences", sequences ? "true" : "false", NULL);
    if (kind == GRU_BEFORE)
        tw_layer_set(layer, "reset_after", "false");
    tw_layer_set_dtype(layer, TW_FLOAT64);
    build(layer, SHAPE(NONE, T, F));
    randomize_weights(layer, 40 + kind);
    tw_tensor *x = gc_tensor(7, -1, 1, TW_SHAPE(B, T, F));
    cell_case k = {kind, B, T, F, U, backwards, sequences, data_of(x), data_of(tw_layer_weight(layer, 0)),
                   data_of(tw_layer_weight(layer, 1)), data_of(tw_layer_weight(layer, 2))};
    double expected[B * T * U];
    cell_run(&k, expected);
    tw_tensor *y = tw_layer_call(layer, x, false);
    assert_shape(y, sequences ? SHAPE(B, T, U) : SHAPE(B, U));
    assert_close(y, expected, 1e-12);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* ---- forward values ------------------------------------------------------------- */

/* SimpleRNN(1) over two steps, by hand: h1 = tanh(0.5 x1 + 0.1),
 * h2 = tanh(0.5 x2 - h1 + 0.1). */
static void test_simple_rnn_by_hand(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("SimpleRNN", "units", "1", "return_sequences", "true", NULL);
    build(layer, SHAPE(NONE, 2, 1));
    tw_assign(tw_layer_weight(layer, 0), tw_scalar(0.5));
    tw_assign(tw_layer_weight(layer, 1), tw_scalar(-1));
    tw_assign(tw_layer_weight(layer, 2), tw_scalar(0.1));
    tw_tensor *x = tw_reshape(tw_tensor_from_data((float[]){1, 2}, TW_FLOAT32, TW_SHAPE(2)), TW_SHAPE(1, 2, 1));
    double h1 = tanh(0.6), h2 = tanh(1.1 - h1);
    tw_tensor *y = tw_layer_call(layer, x, false);
    assert_shape(y, SHAPE(1, 2, 1));
    assert_close(y, (double[]){h1, h2}, 1e-6);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* LSTM(1) over one step with x = 1, kernel (1, 2, 3, 4) for (i, f, c, o)
 * and bias 0: c = sigmoid(1) tanh(3), h = sigmoid(4) tanh(c). */
static void test_lstm_by_hand(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("LSTM", "units", "1", "bias_initializer", "zeros", "unit_forget_bias", "false", NULL);
    build(layer, SHAPE(NONE, 1, 1));
    tw_assign(tw_layer_weight(layer, 0), tw_tensor_from_data((float[]){1, 2, 3, 4}, TW_FLOAT32, TW_SHAPE(1, 4)));
    tw_tensor *y = tw_layer_call(layer, tw_ones(TW_FLOAT32, TW_SHAPE(1, 1, 1)), false);
    double c = sigmoid(1) * tanh(3);
    assert_close(y, (double[]){sigmoid(4) * tanh(c)}, 1e-6);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* GRU(1) over one step from h = 0 with x = 1, kernel (z 1, r 2, h 3):
 * h = (1 - sigmoid(1 + bz)) tanh(3 + bh + r (0 + rbh)) with reset_after,
 * where only the recurrent bias rbh reaches the candidate through r. */
static void test_gru_by_hand(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("GRU", "units", "1", NULL);
    build(layer, SHAPE(NONE, 1, 1));
    tw_assign(tw_layer_weight(layer, 0), tw_tensor_from_data((float[]){1, 2, 3}, TW_FLOAT32, TW_SHAPE(1, 3)));
    tw_assign(tw_layer_weight(layer, 2),
              tw_tensor_from_data((float[]){0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, TW_FLOAT32, TW_SHAPE(2, 3)));
    tw_tensor *y = tw_layer_call(layer, tw_ones(TW_FLOAT32, TW_SHAPE(1, 1, 1)), false);
    double z = sigmoid(1 + 0.1 + 0.4), r = sigmoid(2 + 0.2 + 0.5);
    assert_close(y, (double[]){(1 - z) * tanh(3 + 0.3 + r * 0.6)}, 1e-6);
    tw_layer_unref(layer);
    tw_scope_end();
}

static void test_values(void)
{
    for (cell_kind kind = SIMPLE; kind <= GRU_BEFORE; kind++) {
        check_values(kind, false, false);
        check_values(kind, false, true);
    }
}

/* Backwards: the steps run from the end and the sequence comes out in the
 * order they ran; the last output equals a forward run on reversed input. */
static void test_go_backwards(void)
{
    for (cell_kind kind = SIMPLE; kind <= GRU_BEFORE; kind++) {
        check_values(kind, true, false);
        check_values(kind, true, true);
    }
    tw_scope_begin();
    tw_layer *fwd = layer_with("LSTM", "units", "3", NULL), *back = layer_with("LSTM", "units", "3", NULL);
    tw_layer_set(back, "go_backwards", "true");
    tw_tensor *x = tw_cast(gc_tensor(5, -1, 1, TW_SHAPE(2, 4, 2)), TW_FLOAT32);
    int64_t order[] = {3, 2, 1, 0};
    tw_tensor *reversed = tw_gather(x, tw_tensor_from_data(order, TW_INT64, TW_SHAPE(4)), 1);
    tw_tensor *a = tw_layer_call(fwd, reversed, false), *b = tw_layer_call(back, x, false);
    g_assert_nonnull(a);
    tw_tensor *expected = tw_contiguous(tw_cast(a, TW_FLOAT64));
    assert_close(b, data_of(expected), 1e-6);
    tw_layer_unref(fwd);
    tw_layer_unref(back);
    tw_scope_end();
}

/* A float32 layer (the default) agrees with the float64 formulas. */
static void test_float32(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("GRU", "units", "2", "reset_after", "false", NULL);
    build(layer, SHAPE(NONE, 3, 3));
    tw_tensor *x = gc_tensor(8, -1, 1, TW_SHAPE(2, 3, 3));
    tw_tensor *w[3];
    for (int i = 0; i < 3; i++)
        w[i] = tw_contiguous(tw_cast(tw_layer_weight(layer, i), TW_FLOAT64));
    cell_case k = {GRU_BEFORE, 2, 3, 3, 2, false, false, data_of(x), data_of(w[0]), data_of(w[1]), data_of(w[2])};
    double expected[4];
    cell_run(&k, expected);
    tw_tensor *y = tw_layer_call(layer, tw_cast(x, TW_FLOAT32), false);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
    assert_close(y, expected, 1e-5);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* ---- shapes, weights, parameter counts ------------------------------------------ */

static int64_t params_of(const char *class_name, const char *units, tw_shape input, const char *key,
                         const char *value)
{
    tw_layer *layer = layer_with(class_name, "units", units, NULL);
    if (key && tw_layer_set(layer, key, value))
        g_error("%s: %s", key, tw_last_error());
    int64_t trainable = -1, frozen = -1;
    if (tw_layer_infer(layer, &input, NULL, &trainable, &frozen))
        g_error("infer: %s", tw_last_error());
    g_assert_cmpint(frozen, ==, 0);
    tw_layer_unref(layer);
    return trainable;
}

static void test_param_counts(void)
{
    g_assert_cmpint(params_of("LSTM", "32", SHAPE(NONE, 192, 4), NULL, NULL), ==, 4736);
    g_assert_cmpint(params_of("GRU", "64", SHAPE(NONE, 52, 1), "reset_after", "true"), ==, 12864);
    g_assert_cmpint(params_of("GRU", "64", SHAPE(NONE, 100, 8), "reset_after", "false"), ==,
                    3 * (8 * 64 + 64 * 64 + 64));
    g_assert_cmpint(params_of("SimpleRNN", "4", SHAPE(NONE, 24, 1), NULL, NULL), ==, 24);
    g_assert_cmpint(params_of("SimpleRNN", "4", SHAPE(NONE, 24, 1), "use_bias", "false"), ==, 20);
    g_assert_cmpint(params_of("LSTM", "8", SHAPE(NONE, NONE, 3), "use_bias", "false"), ==, 4 * (3 * 8 + 8 * 8));
}

static void expect_weights(const char *class_name, const char *reset_after, const tw_shape *shapes)
{
    tw_layer *layer = layer_with(class_name, "units", "5", NULL);
    if (reset_after)
        tw_layer_set(layer, "reset_after", reset_after);
    build(layer, SHAPE(NONE, 7, 3));
    static const char *const names[] = {"kernel", "recurrent_kernel", "bias"};
    g_assert_cmpint(tw_layer_nweights(layer), ==, 3);
    for (int i = 0; i < 3; i++) {
        const tw_weight_spec *spec = tw_layer_weight_spec(layer, i);
        g_assert_cmpstr(spec->name, ==, names[i]);
        assert_shape(tw_layer_weight(layer, i), shapes[i]);
        g_assert_true(spec->trainable);
    }
    g_assert_cmpstr(tw_layer_weight_spec(layer, 0)->initializer, ==, "glorot_uniform");
    g_assert_cmpstr(tw_layer_weight_spec(layer, 1)->initializer, ==, "orthogonal");
    tw_layer_unref(layer);
}

static void test_weights(void)
{
    expect_weights("SimpleRNN", NULL, (tw_shape[]){SHAPE(3, 5), SHAPE(5, 5), SHAPE(5)});
    expect_weights("LSTM", NULL, (tw_shape[]){SHAPE(3, 20), SHAPE(5, 20), SHAPE(20)});
    expect_weights("GRU", NULL, (tw_shape[]){SHAPE(3, 15), SHAPE(5, 15), SHAPE(2, 15)});
    expect_weights("GRU", "false", (tw_shape[]){SHAPE(3, 15), SHAPE(5, 15), SHAPE(15)});
}

static void expect_infer(const char *class_name, bool sequences, tw_shape in, tw_shape want)
{
    tw_layer *layer = layer_with(class_name, "units", "6", "return_sequences", sequences ? "true" : "false", NULL);
    tw_shape out;
    if (tw_layer_infer(layer, &in, &out, NULL, NULL))
        g_error("infer: %s", tw_last_error());
    char a[96], b[96];
    g_assert_cmpstr(tw_shape_format(&out, a, sizeof a), ==, tw_shape_format(&want, b, sizeof b));
    tw_layer_unref(layer);
}

static void test_shapes(void)
{
    static const char *const classes[] = {"SimpleRNN", "LSTM", "GRU"};
    for (int i = 0; i < 3; i++) {
        expect_infer(classes[i], false, SHAPE(NONE, 10, 3), SHAPE(NONE, 6));
        expect_infer(classes[i], true, SHAPE(NONE, 10, 3), SHAPE(NONE, 10, 6));
        expect_infer(classes[i], true, SHAPE(NONE, NONE, 3), SHAPE(NONE, NONE, 6));
        /* A layer built for one length takes another (the steps are a loop). */
        tw_scope_begin();
        tw_layer *layer = layer_with(classes[i], "units", "6", "return_sequences", "true", NULL);
        assert_shape(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(4, 10, 3)), false), SHAPE(4, 10, 6));
        assert_shape(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 5, 3)), false), SHAPE(2, 5, 6));
        tw_layer_unref(layer);
        tw_scope_end();
    }
}

/* ---- LSTM's forget-gate bias ------------------------------------------------------ */

static void test_unit_forget_bias(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("LSTM", "units", "2", NULL);
    build(layer, SHAPE(NONE, 4, 3));
    assert_close(tw_layer_weight(layer, 2), (double[]){0, 0, 1, 1, 0, 0, 0, 0}, 0);
    tw_layer_unref(layer);

    layer = layer_with("LSTM", "units", "2", "unit_forget_bias", "false", NULL);
    build(layer, SHAPE(NONE, 4, 3));
    assert_close(tw_layer_weight(layer, 2), (double[]){0, 0, 0, 0, 0, 0, 0, 0}, 0);
    tw_layer_unref(layer);

    /* The other slices keep bias_initializer's values. */
    layer = layer_with("LSTM", "units", "2", "bias_initializer", "ones", NULL);
    build(layer, SHAPE(NONE, 4, 3));
    assert_close(tw_layer_weight(layer, 2), (double[]){1, 1, 1, 1, 1, 1, 1, 1}, 0);
    tw_layer_unref(layer);

    /* A bias restored before the build is what the layer ends up with. */
    layer = layer_with("LSTM", "units", "2", NULL);
    tw_tensor *restored = tw_full(0.25, TW_FLOAT32, TW_SHAPE(8));
    if (tw_layer_restore_weight(layer, "rnn/bias", restored))
        g_error("restore: %s", tw_last_error());
    build(layer, SHAPE(NONE, 4, 3));
    g_assert_cmpint(tw_layer_pending_restores(layer), ==, 0);
    assert_close(tw_layer_weight(layer, 2), (double[]){0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, 0);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* ---- dropout ---------------------------------------------------------------------- */

/* A linear SimpleRNN(4) on 4 features with identity kernels and ones as
 * input, so what it outputs shows the masks. */
static tw_layer *mask_probe(const char *key)
{
    tw_layer *layer = layer_with("SimpleRNN", "units", "4", "activation", "linear", "use_bias", "false",
                                 "return_sequences", "true", key, "0.5", NULL);
    build(layer, SHAPE(NONE, 3, 4));
    tw_assign(tw_layer_weight(layer, 0), tw_eye(4, 4, TW_FLOAT32));
    tw_assign(tw_layer_weight(layer, 1), tw_eye(4, 4, TW_FLOAT32));
    return layer;
}

/* out[b, t, j] for a (batch, 3, 4) result. */
static double seq_at(tw_tensor *y, int64_t b, int64_t t, int64_t j)
{
    return tw_tensor_get(y, (int64_t[]){b, t, j});
}

static void test_dropout_masks(void)
{
    enum { B = 16 };
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(11);
    tw_call_context train = {.training = true, .rng = rng};
    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(B, 3, 4));

    /* Input mask m in {0, 2} per (row, feature): h_t = t m, the same m at every step. */
    tw_layer *layer = mask_probe("dropout");
    tw_tensor *y = tw_layer_call_ex(layer, x, &train);
    assert_shape(y, SHAPE(B, 3, 4));
    int dropped = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < 4; j++) {
            double m = seq_at(y, b, 0, j);
            g_assert_true(m == 0 || m == 2);
            g_assert_cmpfloat(seq_at(y, b, 1, j), ==, 2 * m);
            g_assert_cmpfloat(seq_at(y, b, 2, j), ==, 3 * m);
            dropped += m == 0;
        }
    g_assert_cmpint(dropped, >, 0);
    g_assert_cmpint(dropped, <, B * 4);
    /* Inference leaves the inputs alone: h_t = t. */
    assert_close(tw_slice(tw_layer_call(layer, x, false), 0, 0, 1, 1),
                 (double[]){1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, 0);
    tw_layer_unref(layer);

    /* Recurrent mask m on h before the recurrent kernel: h = 1, 1 + m,
     * 1 + m (1 + m), so (1, 1, 1) or (1, 3, 7) when m stays the same. */
    layer = mask_probe("recurrent_dropout");
    y = tw_layer_call_ex(layer, x, &train);
    dropped = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < 4; j++) {
            bool kept = seq_at(y, b, 1, j) == 3;
            g_assert_cmpfloat(seq_at(y, b, 0, j), ==, 1);
            g_assert_cmpfloat(seq_at(y, b, 1, j), ==, kept ? 3 : 1);
            g_assert_cmpfloat(seq_at(y, b, 2, j), ==, kept ? 7 : 1);
            dropped += !kept;
        }
    g_assert_cmpint(dropped, >, 0);
    g_assert_cmpint(dropped, <, B * 4);
    /* Without a generator from the caller the layer uses its own. */
    g_assert_nonnull(tw_layer_call(layer, x, true));
    tw_layer_unref(layer);
    tw_rng_free(rng);
    tw_scope_end();
}

/* Dropout through the gated cells: training differs from inference, and
 * the same generator state gives the same result. */
static void test_dropout_gated(void)
{
    static const char *const classes[] = {"LSTM", "GRU"};
    for (int i = 0; i < 2; i++) {
        tw_scope_begin();
        tw_layer *layer = layer_with(classes[i], "units", "3", "dropout", "0.3", "recurrent_dropout", "0.3", NULL);
        build(layer, SHAPE(NONE, 5, 2));
        tw_tensor *x = tw_cast(gc_tensor(2, -1, 1, TW_SHAPE(4, 5, 2)), TW_FLOAT32);
        tw_rng *r1 = tw_rng_new(9), *r2 = tw_rng_new(9);
        tw_tensor *a = tw_layer_call_ex(layer, x, &(tw_call_context){true, r1});
        tw_tensor *b = tw_layer_call_ex(layer, x, &(tw_call_context){true, r2});
        tw_tensor *c = tw_layer_call(layer, x, false);
        g_assert_nonnull(a);
        assert_close(b, data_of(tw_contiguous(tw_cast(a, TW_FLOAT64))), 0);
        g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(a, c)), 0, NULL, false)), >, 1e-3);
        tw_rng_free(r1);
        tw_rng_free(r2);
        tw_layer_unref(layer);
        tw_scope_end();
    }
}

/* ---- config and errors ------------------------------------------------------------ */

static void test_config(void)
{
    static const char *const classes[] = {"SimpleRNN", "LSTM", "GRU"};
    for (int i = 0; i < 3; i++) {
        const tw_layer_class *klass = tw_layer_class_find(classes[i]);
        g_assert_nonnull(klass);
        g_assert_cmpstr(klass->group, ==, "Recurrent");
        g_assert_nonnull(klass->summary);
        for (int p = 0; p < klass->nparams; p++)
            g_assert_true(klass->params[p].help && klass->params[p].help[0]);
        tw_layer *layer = tw_layer_new(classes[i], NULL);
        char *activation = tw_layer_get_text(layer, "activation");
        g_assert_cmpstr(activation, ==, "tanh");
        free(activation);
        static const char *const keys[] = {"units", "use_bias", "return_sequences", "return_state", "go_backwards",
                                           "stateful", "unroll", "time_major", "kernel_initializer",
                                           "recurrent_initializer", "bias_initializer", "kernel_regularizer",
                                           "recurrent_regularizer", "bias_regularizer", "dropout",
                                           "recurrent_dropout"};
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
            g_assert_nonnull(tw_layer_class_param(klass, keys[k]));
        g_assert_cmpint(tw_layer_set(layer, "unroll", "true"), ==, 0);
        g_assert_cmpint(tw_layer_set(layer, "dropout", "1.5"), ==, -1);
        assert_error("dropout");
        tw_layer_unref(layer);
    }
    g_assert_null(tw_layer_class_param(tw_layer_class_find("SimpleRNN"), "recurrent_activation"));
    g_assert_cmpstr(tw_layer_class_param(tw_layer_class_find("LSTM"), "recurrent_activation")->default_value, ==,
                    "sigmoid");
    g_assert_cmpstr(tw_layer_class_param(tw_layer_class_find("LSTM"), "unit_forget_bias")->default_value, ==, "true");
    g_assert_cmpstr(tw_layer_class_param(tw_layer_class_find("GRU"), "reset_after")->default_value, ==, "true");
}

static void test_errors(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("LSTM", "units", "4", NULL);
    tw_shape out;
    g_assert_cmpint(tw_layer_infer(layer, &SHAPE(NONE, 5), &out, NULL, NULL), ==, -1);
    assert_error("LSTM 'rnn': expected input of rank 3 (batch, timesteps, features)");
    assert_error("got (None, 5)");
    g_assert_null(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 5)), false));
    assert_error("got (None, 5)");
    g_assert_false(tw_layer_built(layer));

    g_assert_cmpint(tw_layer_set(layer, "stateful", "true"), ==, -1);
    assert_error("stateful=true");
    g_assert_cmpint(tw_layer_set(layer, "time_major", "true"), ==, -1);
    assert_error("time_major=true");

    /* Built for 3 features, called with 2. */
    g_assert_nonnull(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 5, 3)), false));
    g_assert_null(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 5, 2)), false));
    assert_error("was built for input (None, 5, 3) and cannot take (None, 5, 2)");
    g_assert_null(tw_layer_call(layer, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 0, 3)), false));
    assert_error("at least one timestep");
    tw_layer_unref(layer);
    tw_scope_end();
}

static void test_regularizers(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("GRU", "units", "2", "recurrent_regularizer", "l2=0.5", "kernel_regularizer",
                                 "l1=0.25", NULL);
    build(layer, SHAPE(NONE, 3, 1));
    tw_assign(tw_layer_weight(layer, 0), tw_full(-2, TW_FLOAT32, TW_SHAPE(1, 6)));
    tw_assign(tw_layer_weight(layer, 1), tw_full(3, TW_FLOAT32, TW_SHAPE(2, 6)));
    /* 0.25 * 6 * 2 + 0.5 * 12 * 9 */
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_layer_regularization_loss(layer)), 57, 1e-4);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* GRU(8, sequences) -> LSTM(4) -> Dense(1) in a Sequential model. */
static void test_in_sequential(void)
{
    tw_scope_begin();
    tw_model *model = tw_sequential_new("stack");
    tw_layer *gru = layer_with("GRU", "units", "8", "return_sequences", "true", NULL);
    tw_layer *lstm = layer_with("LSTM", "units", "4", NULL), *dense = tw_layer_new("Dense", "dense");
    tw_layer_set_name(gru, "gru");
    tw_layer_set_name(lstm, "lstm");
    tw_layer_set(dense, "units", "1");
    g_assert_cmpint(tw_model_add(model, gru), ==, 0);
    g_assert_cmpint(tw_model_add(model, lstm), ==, 0);
    g_assert_cmpint(tw_model_add(model, dense), ==, 0);
    tw_layer_info info[3];
    g_assert_cmpint(tw_model_infer(model, &SHAPE(NONE, 12, 2), info), ==, 3);
    g_assert_cmpint(info[0].trainable_params, ==, 3 * (2 * 8 + 8 * 8) + 2 * 24);
    g_assert_cmpint(info[1].trainable_params, ==, 4 * (8 * 4 + 4 * 4 + 4));
    tw_tensor *y = tw_model_call(model, tw_zeros(TW_FLOAT32, TW_SHAPE(5, 12, 2)), true);
    assert_shape(y, SHAPE(5, 1));
    g_assert_cmpint(tw_model_trainable_variables(model).n, ==, 3 + 3 + 2);
    tw_layer_unref(model);
    tw_scope_end();
}

/* fit's traced step (forward, backward and update as one fused graph)
 * gives the eager step's losses for each recurrent layer, returning the
 * last step or every step (traced LSTM and GRU steps once read a value the
 * graph had already released). */
static double traced_fit_loss(const char *class_name, bool sequences, tw_trace_mode mode)
{
    tw_model *model = tw_sequential_new("m");
    tw_layer *rnn = layer_with(class_name, "units", "4", "return_sequences", sequences ? "true" : "false", NULL);
    tw_layer_set_input_shape(rnn, &SHAPE(NONE, 5, 2));
    tw_model_add(model, rnn);
    tw_model_add(model, layer_with("Dense", "units", "1", NULL));
    g_assert_cmpint(tw_model_build(model, NULL, 5), ==, 0);
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("adam", 0.01), &loss, 0, NULL), ==, 0);
    tw_scope_begin();
    tw_tensor *x = tw_tensor_ref(tw_cast(gc_tensor(3, -1, 1, TW_SHAPE(16, 5, 2)), TW_FLOAT32));
    tw_tensor *y = tw_tensor_ref(sequences ? tw_cast(gc_tensor(4, -1, 1, TW_SHAPE(16, 5, 1)), TW_FLOAT32)
                                           : tw_cast(gc_tensor(4, -1, 1, TW_SHAPE(16, 1)), TW_FLOAT32));
    tw_scope_end();
    tw_fit_options options = tw_fit_options_default();
    options.epochs = 3;
    options.batch_size = 4;
    options.traced = mode;
    tw_history *history = tw_model_fit(model, x, y, &options);
    if (!history)
        g_error("%s fit: %s", class_name, tw_last_error());
    double last = tw_logs_get(&history->epoch_logs[2], "loss");
    tw_history_free(history);
    tw_layer_unref(model);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
    return last;
}

static void test_traced_fit(void)
{
    const char *classes[] = {"SimpleRNN", "LSTM", "GRU"};
    for (int c = 0; c < 3; c++)
        for (int sequences = 0; sequences < 2; sequences++) {
            double eager = traced_fit_loss(classes[c], sequences, TW_TRACE_OFF);
            double traced = traced_fit_loss(classes[c], sequences, TW_TRACE_ON);
            g_assert_cmpfloat(fabs(traced - eager), <=, 1e-5 * eager);
        }
}

/* ---- initial_state and return_state ------------------------------------------------ */

/* Keras' seq2seq wiring: the layer started from given states (initial_state)
 * and giving its final ones (return_state), against the written-out cell. */
static void check_states(cell_kind kind, bool backwards, bool sequences)
{
    enum { B = 2, T = 3, F = 3, U = 2 };
    tw_scope_begin();
    tw_layer *layer = layer_with(class_of(kind), "units", "2", "go_backwards", backwards ? "true" : "false",
                                 "return_sequences", sequences ? "true" : "false", "return_state", "true", NULL);
    if (kind == GRU_BEFORE)
        tw_layer_set(layer, "reset_after", "false");
    tw_layer_set_dtype(layer, TW_FLOAT64);
    int nstates = kind == LSTM ? 2 : 1;
    tw_shape in[3] = {SHAPE(NONE, T, F), SHAPE(NONE, U), SHAPE(NONE, U)}, out[3];
    int nout = 0;
    g_assert_cmpint(tw_layer_infer_n(layer, in, 1 + nstates, out, &nout, NULL, NULL), ==, 0);
    g_assert_cmpint(nout, ==, 1 + nstates);
    tw_rng *rng = tw_rng_new(3);
    g_assert_cmpint(tw_layer_build_n(layer, in, 1 + nstates, rng), ==, 0);
    tw_rng_free(rng);
    randomize_weights(layer, 80 + kind);
    tw_tensor *x = gc_tensor(9, -1, 1, TW_SHAPE(B, T, F));
    tw_tensor *h0 = gc_tensor(10, -1, 1, TW_SHAPE(B, U)), *c0 = gc_tensor(11, -1, 1, TW_SHAPE(B, U));
    double expected[B * T * U], h_end[B * U], c_end[B * U];
    cell_case k = {kind, B, T, F, U, backwards, sequences, data_of(x), data_of(tw_layer_weight(layer, 0)),
                   data_of(tw_layer_weight(layer, 1)), data_of(tw_layer_weight(layer, 2)), data_of(h0),
                   nstates == 2 ? data_of(c0) : NULL, h_end, c_end};
    cell_run(&k, expected);
    tw_tensor *y[TW_MAX_LAYER_IO];
    tw_call_context ctx = {0};
    g_assert_cmpint(tw_layer_call_n(layer, (tw_tensor *[]){x, h0, c0}, 1 + nstates, y, &ctx), ==, 1 + nstates);
    assert_shape(y[0], sequences ? SHAPE(B, T, U) : SHAPE(B, U));
    assert_close(y[0], expected, 1e-12);
    assert_shape(y[1], SHAPE(B, U));
    assert_close(y[1], h_end, 1e-12);
    if (nstates == 2)
        assert_close(y[2], c_end, 1e-12);
    /* Without initial_state the states start at zero, as before. */
    k.h0 = k.c0 = NULL;
    cell_run(&k, expected);
    g_assert_cmpint(tw_layer_call_n(layer, &x, 1, y, &ctx), ==, 1 + nstates);
    assert_close(y[0], expected, 1e-12);
    assert_close(y[1], h_end, 1e-12);
    tw_layer_unref(layer);
    tw_scope_end();
}

static void test_states(void)
{
    for (cell_kind kind = SIMPLE; kind <= GRU_BEFORE; kind++)
        for (int variant = 0; variant < 4; variant++)
            check_states(kind, variant & 1, variant & 2);
}

/* An encoder's final states carried into a decoder continue the sequence:
 * two halves equal the whole. */
static void test_states_split_sequence(void)
{
    tw_scope_begin();
    tw_layer *whole = layer_with("LSTM", "units", "3", "return_sequences", "true", NULL);
    tw_layer_set_dtype(whole, TW_FLOAT64);
    build(whole, SHAPE(NONE, 4, 2));
    randomize_weights(whole, 90);
    tw_layer *part = layer_with("LSTM", "units", "3", "return_sequences", "true", "return_state", "true", NULL);
    tw_layer_set_dtype(part, TW_FLOAT64);
    build(part, SHAPE(NONE, 2, 2));
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(tw_assign(tw_layer_weight(part, i), tw_layer_weight(whole, i)), ==, 0);
    tw_tensor *x = gc_tensor(12, -1, 1, TW_SHAPE(2, 4, 2)), *halves[2], *a[3], *b[3];
    g_assert_cmpint(tw_split(x, 2, 1, halves), ==, 0);
    tw_call_context ctx = {0};
    g_assert_cmpint(tw_layer_call_n(part, &halves[0], 1, a, &ctx), ==, 3);
    g_assert_cmpint(tw_layer_call_n(part, (tw_tensor *[]){halves[1], a[1], a[2]}, 3, b, &ctx), ==, 3);
    tw_tensor *joined = tw_contiguous(tw_concat(TW_TENSORS(a[0], b[0]), 1));
    assert_close(tw_layer_call(whole, x, false), data_of(joined), 1e-12);
    tw_layer_unref(whole);
    tw_layer_unref(part);
    tw_scope_end();
}

static void test_state_errors(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("LSTM", "units", "4", "return_state", "true", NULL);
    tw_shape out[3];
    int nout;
    g_assert_cmpint(tw_layer_infer_n(layer, (tw_shape[]){SHAPE(NONE, 5, 3), SHAPE(NONE, 4)}, 2, out, &nout, NULL,
                                     NULL),
                    ==, -1);
    assert_error("LSTM 'rnn': takes a sequence and 2 initial states (initial_state), got 1 input besides");
    g_assert_cmpint(tw_layer_infer_n(layer, (tw_shape[]){SHAPE(NONE, 5, 3), SHAPE(NONE, 4), SHAPE(NONE, 3)}, 3,
                                     out, &nout, NULL, NULL),
                    ==, -1);
    assert_error("initial_state[1] must be (batch, 4), got (None, 3)");
    /* A Sequential model passes one tensor on: the states have nowhere to go. */
    tw_shape y;
    g_assert_cmpint(tw_layer_infer(layer, &SHAPE(NONE, 5, 3), &y, NULL, NULL), ==, -1);
    assert_error("LSTM 'rnn': gives 3 outputs where one is expected");
    tw_layer_unref(layer);
    tw_scope_end();
}

static tw_tensor *states_fn(tw_tensor *const *inputs, void *layer)
{
    tw_tensor *y[TW_MAX_LAYER_IO];
    tw_call_context ctx = {0};
    int n = tw_layer_call_n(layer, inputs, 3, y, &ctx);
    if (n != 3)
        return NULL;
    int64_t batch = tw_tensor_dim(y[0], 0);
    tw_tensor *flat = tw_reshape(tw_contiguous(y[0]), TW_SHAPE(batch, -1));
    return tw_concat(TW_TENSORS(flat, y[1], y[2]), 1);
}

/* d(outputs and final states)/d(input, initial states, weights). */
static void test_state_gradients(void)
{
    tw_scope_begin();
    tw_layer *layer = layer_with("LSTM", "units", "2", "return_sequences", "true", "return_state", "true",
                                 "go_backwards", "true", NULL);
    tw_layer_set_dtype(layer, TW_FLOAT64);
    tw_shape in[3] = {SHAPE(NONE, 3, 2), SHAPE(NONE, 2), SHAPE(NONE, 2)};
    tw_rng *rng = tw_rng_new(3);
    g_assert_cmpint(tw_layer_build_n(layer, in, 3, rng), ==, 0);
    tw_rng_free(rng);
    randomize_weights(layer, 70);
    tw_tensor *inputs[6] = {gc_tensor(71, -1, 1, TW_SHAPE(2, 3, 2)), gc_tensor(72, -1, 1, TW_SHAPE(2, 2)),
                            gc_tensor(73, -1, 1, TW_SHAPE(2, 2))};
    for (int i = 0; i < 3; i++)
        inputs[3 + i] = tw_layer_weight(layer, i);
    gc_check("LSTM initial_state return_state", states_fn, 6, inputs, layer);
    tw_layer_unref(layer);
    tw_scope_end();
}

/* ---- gradients ---------------------------------------------------------------------- */

static tw_tensor *layer_fn(tw_tensor *const *inputs, void *layer)
{
    return tw_layer_call(layer, inputs[0], false);
}

/* d(output)/d(input and every weight), float64, three timesteps. */
static void check_gradients(const char *what, tw_layer *layer)
{
    tw_scope_begin();
    tw_layer_set_dtype(layer, TW_FLOAT64);
    build(layer, SHAPE(NONE, 3, 2));
    randomize_weights(layer, 60);
    tw_tensor *inputs[4] = {gc_tensor(61, -1, 1, TW_SHAPE(2, 3, 2))};
    int n = 1;
    for (int i = 0; i < tw_layer_nweights(layer); i++)
        inputs[n++] = tw_layer_weight(layer, i);
    gc_check(what, layer_fn, n, inputs, layer);
    tw_layer_unref(layer);
    tw_scope_end();
}

static void test_gradients(void)
{
    check_gradients("SimpleRNN", layer_with("SimpleRNN", "units", "3", NULL));
    check_gradients("SimpleRNN sequences backwards",
                    layer_with("SimpleRNN", "units", "2", "return_sequences", "true", "go_backwards", "true", NULL));
    check_gradients("LSTM", layer_with("LSTM", "units", "2", NULL));
    check_gradients("LSTM sequences", layer_with("LSTM", "units", "2", "return_sequences", "true", NULL));
    check_gradients("GRU reset_after", layer_with("GRU", "units", "2", NULL));
    check_gradients("GRU reset_after sequences", layer_with("GRU", "units", "2", "return_sequences", "true", NULL));
    check_gradients("GRU reset_before", layer_with("GRU", "units", "2", "reset_after", "false", NULL));
    check_gradients("GRU reset_before sequences backwards",
                    layer_with("GRU", "units", "2", "reset_after", "false", "return_sequences", "true",
                               "go_backwards", "true", NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/recurrent/simple-rnn-by-hand", test_simple_rnn_by_hand);
    g_test_add_func("/recurrent/lstm-by-hand", test_lstm_by_hand);
    g_test_add_func("/recurrent/gru-by-hand", test_gru_by_hand);
    g_test_add_func("/recurrent/values", test_values);
    g_test_add_func("/recurrent/states", test_states);
    g_test_add_func("/recurrent/states-split-sequence", test_states_split_sequence);
    g_test_add_func("/recurrent/state-errors", test_state_errors);
    g_test_add_func("/recurrent/state-gradients", test_state_gradients);
    g_test_add_func("/recurrent/go-backwards", test_go_backwards);
    g_test_add_func("/recurrent/float32", test_float32);
    g_test_add_func("/recurrent/param-counts", test_param_counts);
    g_test_add_func("/recurrent/weights", test_weights);
    g_test_add_func("/recurrent/shapes", test_shapes);
    g_test_add_func("/recurrent/unit-forget-bias", test_unit_forget_bias);
    g_test_add_func("/recurrent/dropout-masks", test_dropout_masks);
    g_test_add_func("/recurrent/dropout-gated", test_dropout_gated);
    g_test_add_func("/recurrent/config", test_config);
    g_test_add_func("/recurrent/errors", test_errors);
    g_test_add_func("/recurrent/regularizers", test_regularizers);
    g_test_add_func("/recurrent/in-sequential", test_in_sequential);
    g_test_add_func("/recurrent/traced-fit", test_traced_fit);
    g_test_add_func("/recurrent/gradients", test_gradients);
    return g_test_run();
}
