/* The wrapper layers Bidirectional and TimeDistributed: forward values
 * against PyTorch (tests/wrapper_reference.h, from
 * tools/wrapper_reference.py), Keras' parameter counts and weight order,
 * gradients against finite differences, clones, freezing and weights by
 * path, Keras JSON read and written (nested "layer" and "backward_layer"
 * configs) and the messages of configs that cannot work; the corpus'
 * Bidirectional and TimeDistributed models (keras-functional 04, 05, 06:
 * their chains read as Sequential models) with Keras' per-layer counts,
 * and fit through both wrappers, traced and eager. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "gradcheck.h"
#include "tw/checkpoint.h"
#include "tw/losses.h"
#include "tw/optimizers.h"
#include "tw/layers.h"
#include "tw/model.h"
#include "tw/model_file.h"
#include "wrapper_reference.h"

#define NONE (-1)
#define SHAPE(...) ((tw_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------------ */

/* A layer with params set from "key", "value" pairs (NULL-terminated). */
static tw_layer *layer_with(const char *class_name, const char *name, ...)
{
    tw_layer *layer = tw_layer_new(class_name, name);
    if (!layer)
        g_error("%s: %s", class_name, tw_last_error());
    va_list ap;
    va_start(ap, name);
    for (const char *key; (key = va_arg(ap, const char *));) {
        const char *value = va_arg(ap, const char *);
        if (tw_layer_set(layer, key, value))
            g_error("%s.%s = %s: %s", class_name, key, value, tw_last_error());
    }
    va_end(ap);
    return layer;
}

static tw_layer *wrapped(const char *wrapper_class, tw_layer *inner)
{
    tw_layer *wrapper = tw_layer_new(wrapper_class, NULL);
    if (tw_layer_wrap(wrapper, inner))
        g_error("wrap: %s", tw_last_error());
    return wrapper;
}

static void assert_error(const char *fragment)
{
    const char *msg = tw_last_error();
    if (!strstr(msg, fragment))
        g_error("message \"%s\" lacks \"%s\"", msg, fragment);
}

static tw_tensor *tensor_of(const double *values, tw_shape shape)
{
    return tw_tensor_from_data(values, TW_FLOAT64, shape.ndim, shape.dims);
}

static void assert_close(tw_tensor *t, const double *expected, size_t n, double tol)
{
    if (!t)
        g_error("call failed: %s", tw_last_error());
    g_assert_cmpint(tw_tensor_numel(t), ==, (int64_t)n);
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *got = tw_tensor_data(c);
    for (size_t i = 0; i < n; i++)
        if (fabs(got[i] - expected[i]) > tol)
            g_error("element %zu is %.12g, expected %.12g", i, got[i], expected[i]);
}

static void build(tw_layer *layer, tw_shape input)
{
    tw_rng *rng = tw_rng_new(3);
    if (tw_layer_build(layer, &input, rng))
        g_error("build: %s", tw_last_error());
    tw_rng_free(rng);
}

static char *format_shape(const tw_shape *shape)
{
    char buf[96];
    return g_strdup(tw_shape_format(shape, buf, sizeof buf));
}

/* ---- values against PyTorch ----------------------------------------------------- */

typedef struct {
    const char *kind;
    int units, batch, steps, features;
    bool sequences;
    const char *merge;
    const double *x, *y, *weights[6]; /* forward kernel, recurrent, bias, then backward's */
    size_t nx, ny, nweights[6];
} bidi_case;

#define BIDI_CASE(prefix, kind, units, batch, steps, features, sequences, merge)                                    \
    {kind, units, batch, steps, features, sequences, merge, prefix##_x, prefix##_y,                               \
     {prefix##_forward_kernel, prefix##_forward_recurrent_kernel, prefix##_forward_bias,                          \
      prefix##_backward_kernel, prefix##_backward_recurrent_kernel, prefix##_backward_bias},                      \
     N(prefix##_x), N(prefix##_y),                                                                                \
     {N(prefix##_forward_kernel), N(prefix##_forward_recurrent_kernel), N(prefix##_forward_bias),                 \
      N(prefix##_backward_kernel), N(prefix##_backward_recurrent_kernel), N(prefix##_backward_bias)}}

static const bidi_case bidi_cases[] = {
    BIDI_CASE(lstm_seq, "LSTM", 3, 2, 4, 2, true, "concat"),
    BIDI_CASE(lstm_last, "LSTM", 3, 2, 4, 2, false, "concat"),
    BIDI_CASE(gru_sum, "GRU", 2, 2, 3, 3, false, "sum"),
    BIDI_CASE(gru_seq_ave, "GRU", 2, 2, 3, 3, true, "ave"),
    BIDI_CASE(rnn_seq_mul, "SimpleRNN", 3, 2, 5, 2, true, "mul"),
};

/* Keras' weight order: the forward layer's kernel, recurrent kernel and
 * bias, then the backward layer's, as the wrapper's variables list them. */
static void load_bidi_weights(tw_layer *bidi, const bidi_case *k)
{
    for (int d = 0; d < 2; d++) {
        tw_layer *inner = tw_layer_inner(bidi, d);
        g_assert_cmpint(tw_layer_nweights(inner), ==, 3);
        for (int i = 0; i < 3; i++) {
            tw_tensor *w = tw_layer_weight(inner, i);
            g_assert_cmpint(tw_tensor_numel(w), ==, (int64_t)k->nweights[3 * d + i]);
            tw_tensor *v = tw_tensor_from_data(k->weights[3 * d + i], TW_FLOAT64, tw_tensor_ndim(w), tw_tensor_shape(w));
            if (tw_assign(w, v))
                g_error("assign: %s", tw_last_error());
        }
    }
}

static tw_layer *bidi_for(const bidi_case *k)
{
    char units[16];
    g_snprintf(units, sizeof units, "%d", k->units);
    tw_layer *inner = layer_with(k->kind, NULL, "units", units, "return_sequences", k->sequences ? "true" : "false",
                                 NULL);
    tw_layer *bidi = wrapped("Bidirectional", inner);
    if (tw_layer_set(bidi, "merge_mode", k->merge))
        g_error("merge_mode: %s", tw_last_error());
    tw_layer_set_dtype(bidi, TW_FLOAT64);
    build(bidi, SHAPE(NONE, k->steps, k->features));
    load_bidi_weights(bidi, k);
    return bidi;
}

static void test_bidirectional_values(void)
{
    for (size_t c = 0; c < N(bidi_cases); c++) {
        const bidi_case *k = &bidi_cases[c];
        tw_scope_begin();
        tw_layer *bidi = bidi_for(k);
        tw_tensor *y = tw_layer_call(bidi, tensor_of(k->x, SHAPE(k->batch, k->steps, k->features)), false);
        int64_t last = !strcmp(k->merge, "concat") ? 2 * k->units : k->units;
        g_assert_nonnull(y);
        g_assert_cmpint(tw_tensor_ndim(y), ==, k->sequences ? 3 : 2);
        g_assert_cmpint(tw_tensor_dim(y, -1), ==, last);
        assert_close(y, k->y, k->ny, 1e-12);
        tw_layer_unref(bidi);
        tw_scope_end();
    }
}

static tw_tensor *merge_by_hand(const char *mode, tw_tensor *f, tw_tensor *b)
{
    if (!strcmp(mode, "concat"))
        return tw_concat(TW_TENSORS(f, b), tw_tensor_ndim(f) - 1);
    if (!strcmp(mode, "sum"))
        return tw_add(f, b);
    if (!strcmp(mode, "mul"))
        return tw_mul(f, b);
    return tw_mul_scalar(tw_add(f, b), 0.5);
}

static void assert_same(tw_tensor *a, tw_tensor *b)
{
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(a, b)), 0, NULL, false)), <, 1e-12);
}

/* merge_mode None gives the two directions' outputs, and return_state the
 * forward layer's final states, then the backward layer's: merged by hand
 * they are PyTorch's output, and the final h is the last step each
 * direction read. */
static void test_bidirectional_states(void)
{
    for (size_t c = 0; c < N(bidi_cases); c++) {
        const bidi_case *k = &bidi_cases[c];
        tw_scope_begin();
        char units[16];
        g_snprintf(units, sizeof units, "%d", k->units);
        tw_layer *bidi = wrapped("Bidirectional", layer_with(k->kind, NULL, "units", units, "return_sequences",
                                                             k->sequences ? "true" : "false", "return_state", "true",
                                                             NULL));
        g_assert_cmpint(tw_layer_set(bidi, "merge_mode", "none"), ==, 0);
        tw_layer_set_dtype(bidi, TW_FLOAT64);
        build(bidi, SHAPE(NONE, k->steps, k->features));
        load_bidi_weights(bidi, k);
        int ns = strcmp(k->kind, "LSTM") ? 1 : 2;
        tw_tensor *x = tensor_of(k->x, SHAPE(k->batch, k->steps, k->features)), *y[TW_MAX_LAYER_IO];
        tw_call_context ctx = {0};
        g_assert_cmpint(tw_layer_call_n(bidi, &x, 1, y, &ctx), ==, 2 + 2 * ns);
        assert_close(merge_by_hand(k->merge, y[0], y[1]), k->y, k->ny, 1e-12);
        tw_tensor *f_last = y[0], *b_last = y[1];
        if (k->sequences) {
            f_last = tw_squeeze(tw_slice(y[0], 1, k->steps - 1, k->steps, 1), TW_AXES(1));
            b_last = tw_squeeze(tw_slice(y[1], 1, 0, 1, 1), TW_AXES(1));
        }
        assert_same(y[2], f_last);
        assert_same(y[2 + ns], b_last);

        /* initial_state: the forward layer's states, then the backward's. */
        tw_tensor *in[5] = {x};
        for (int i = 0; i < 2 * ns; i++)
            in[1 + i] = gc_tensor(30 + i, -1, 1, TW_SHAPE(k->batch, k->units));
        tw_tensor *z[TW_MAX_LAYER_IO], *f[TW_MAX_LAYER_IO], *b[TW_MAX_LAYER_IO];
        g_assert_cmpint(tw_layer_call_n(bidi, in, 1 + 2 * ns, z, &ctx), ==, 2 + 2 * ns);
        g_assert_cmpint(tw_layer_call_n(tw_layer_inner(bidi, 0), in, 1 + ns, f, &ctx), ==, 1 + ns);
        tw_tensor *bin[3] = {x, in[1 + ns], in[2 + ns]};
        g_assert_cmpint(tw_layer_call_n(tw_layer_inner(bidi, 1), bin, 1 + ns, b, &ctx), ==, 1 + ns);
        assert_same(z[0], f[0]);
        if (k->sequences)
            b[0] = tw_gather(b[0], tw_arange((double)k->steps - 1, -1, -1, TW_INT64), 1);
        assert_same(z[1], b[0]);
        for (int i = 0; i < ns; i++) {
            assert_same(z[2 + i], f[1 + i]);
            assert_same(z[2 + ns + i], b[1 + i]);
        }
        /* The states changed the output. */
        g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(z[0], y[0])), 0, NULL, false)), >, 1e-6);
        tw_layer_unref(bidi);
        tw_scope_end();
    }
}

/* In float32 too (the default dtype), within float32's precision. */
static void test_bidirectional_float32(void)
{
    const bidi_case *k = &bidi_cases[0];
    tw_scope_begin();
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "3", "return_sequences", "true", NULL));
    build(bidi, SHAPE(NONE, k->steps, k->features));
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) {
            tw_tensor *w = tw_layer_weight(tw_layer_inner(bidi, d), i);
            tw_tensor *v = tw_tensor_from_data(k->weights[3 * d + i], TW_FLOAT64, tw_tensor_ndim(w), tw_tensor_shape(w));
            g_assert_cmpint(tw_assign(w, tw_cast(v, TW_FLOAT32)), ==, 0);
        }
    tw_tensor *x = tw_cast(tensor_of(k->x, SHAPE(k->batch, k->steps, k->features)), TW_FLOAT32);
    tw_tensor *y = tw_layer_call(bidi, x, false);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
    assert_close(y, k->y, k->ny, 1e-5);
    tw_layer_unref(bidi);
    tw_scope_end();
}

static void test_time_distributed_values(void)
{
    tw_scope_begin();
    tw_layer *td = wrapped("TimeDistributed", layer_with("Dense", "dense", "units", "3", "activation", "relu", NULL));
    tw_layer_set_dtype(td, TW_FLOAT64);
    build(td, SHAPE(NONE, 3, 4));
    tw_layer *dense = tw_layer_inner(td, 0);
    tw_tensor *kernel = tw_layer_weight(dense, 0), *bias = tw_layer_weight(dense, 1);
    g_assert_cmpint(tw_assign(kernel, tensor_of(td_dense_kernel, SHAPE(4, 3))), ==, 0);
    g_assert_cmpint(tw_assign(bias, tensor_of(td_dense_bias, SHAPE(3))), ==, 0);
    tw_tensor *y = tw_layer_call(td, tensor_of(td_dense_x, SHAPE(2, 3, 4)), false);
    g_assert_cmpint(tw_tensor_ndim(y), ==, 3);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, 3);
    assert_close(y, td_dense_y, N(td_dense_y), 1e-12);
    /* A batch of another size and a strided (transposed) input. */
    tw_tensor *x = tw_permute(tensor_of(td_dense_x, SHAPE(3, 2, 4)), TW_AXES(1, 0, 2));
    tw_tensor *y2 = tw_layer_call(td, x, false);
    g_assert_nonnull(y2);
    tw_tensor *y3 = tw_layer_call(dense, tw_contiguous(x), false);
    assert_close(y2, tw_tensor_data(tw_contiguous(y3)), 18, 0);
    tw_layer_unref(td);
    tw_scope_end();
}

/* ---- counts, shapes and weights --------------------------------------------------- */

static void expect_infer(tw_layer *layer, tw_shape in, tw_shape want, int64_t trainable)
{
    tw_shape out;
    int64_t t = -1, nt = -1;
    if (tw_layer_infer(layer, &in, &out, &t, &nt))
        g_error("infer: %s", tw_last_error());
    char *got = format_shape(&out), *expected = format_shape(&want);
    g_assert_cmpstr(got, ==, expected);
    g_free(got);
    g_free(expected);
    g_assert_cmpint(t, ==, trainable);
    g_assert_cmpint(nt, ==, 0);
    tw_layer_unref(layer);
}

/* Keras' counts, from keras-functional 05's and 06's summaries. */
static void test_counts(void)
{
    expect_infer(wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "128", "return_sequences", "true", NULL)),
                 SHAPE(NONE, 272, 196), SHAPE(NONE, 272, 256), 332800);
    expect_infer(wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "128", NULL)), SHAPE(NONE, 272, 256),
                 SHAPE(NONE, 256), 394240);
    expect_infer(wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "6", NULL)), SHAPE(NONE, 256, 32),
                 SHAPE(NONE, 256, 6), 198);
    /* sum keeps the size; GRU's reset_after bias has two rows. */
    tw_layer *sum = wrapped("Bidirectional", layer_with("GRU", NULL, "units", "4", NULL));
    tw_layer_set(sum, "merge_mode", "sum");
    expect_infer(sum, SHAPE(NONE, 7, 3), SHAPE(NONE, 4), 2 * (3 * 4 * (3 + 4) + 2 * 12));
    /* TimeDistributed over images: Conv2D per frame. */
    expect_infer(wrapped("TimeDistributed", layer_with("Conv2D", NULL, "filters", "5", "kernel_size", "3,3", NULL)),
                 SHAPE(NONE, 10, 8, 8, 2), SHAPE(NONE, 10, 6, 6, 5), 3 * 3 * 2 * 5 + 5);
    /* Nested: TimeDistributed(Bidirectional(SimpleRNN)) on (batch, docs, words, features). */
    tw_layer *inner = wrapped("Bidirectional", layer_with("SimpleRNN", NULL, "units", "2", NULL));
    expect_infer(wrapped("TimeDistributed", inner), SHAPE(NONE, 5, 6, 3), SHAPE(NONE, 5, 4), 2 * (3 * 2 + 2 * 2 + 2));
}

typedef struct {
    GPtrArray *paths;
} path_list;

static int collect_path(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    (void)weight;
    g_ptr_array_add(((path_list *)user_data)->paths, g_strdup_printf("%s%s", path, trainable ? "" : " (frozen)"));
    return 0;
}

static char *weight_paths(const tw_layer *layer)
{
    path_list list = {g_ptr_array_new_with_free_func(g_free)};
    g_assert_cmpint(tw_layer_foreach_weight(layer, collect_path, &list), ==, 0);
    g_ptr_array_add(list.paths, NULL);
    char *joined = g_strjoinv(" ", (char **)list.paths->pdata);
    g_ptr_array_free(list.paths, TRUE);
    return joined;
}

/* Names as Keras gives them, the forward layer's weights before the
 * backward layer's, and the paths checkpoints use. */
static void test_names_and_weight_order(void)
{
    tw_scope_begin();
    tw_model *model = tw_sequential_new("m");
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "2", "return_sequences", "true", NULL));
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 0)), ==, "forward_lstm");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 1)), ==, "backward_lstm");
    g_assert_false(tw_layer_get(tw_layer_inner(bidi, 0), "go_backwards")->number);
    g_assert_true(tw_layer_get(tw_layer_inner(bidi, 1), "go_backwards")->number);
    g_assert_null(tw_layer_inner(bidi, 2));
    g_assert_cmpint(tw_model_add(model, bidi), ==, 0);
    g_assert_cmpint(tw_model_add(model, wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "1", NULL))), ==,
                    0);
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 0)), ==, "bidirectional");
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 1)), ==, "time_distributed");
    g_assert_cmpint(tw_model_build(model, &SHAPE(NONE, 5, 3), 1), ==, 0);
    char *paths = weight_paths(model);
    g_assert_cmpstr(paths, ==,
                    "bidirectional/forward_lstm/kernel bidirectional/forward_lstm/recurrent_kernel "
                    "bidirectional/forward_lstm/bias bidirectional/backward_lstm/kernel "
                    "bidirectional/backward_lstm/recurrent_kernel bidirectional/backward_lstm/bias "
                    "time_distributed/dense/kernel time_distributed/dense/bias");
    g_free(paths);
    tw_variables vars = tw_model_trainable_variables(model);
    g_assert_cmpint(vars.n, ==, 8);
    g_assert_true(vars.items[0] == tw_layer_weight(tw_layer_inner(bidi, 0), 0));
    g_assert_true(vars.items[3] == tw_layer_weight(tw_layer_inner(bidi, 1), 0));
    /* The two directions start from different draws. */
    tw_tensor *diff = tw_sum_all(tw_abs(tw_sub(vars.items[0], vars.items[3])));
    g_assert_cmpfloat(tw_tensor_item(diff), >, 0);
    /* LSTM's unit_forget_bias reaches the layers inside. */
    tw_tensor *bias = tw_layer_weight(tw_layer_inner(bidi, 1), 2);
    float b[8];
    g_assert_cmpint(tw_tensor_copy_to(bias, b, sizeof b), ==, 0);
    g_assert_cmpfloat(b[2], ==, 1);
    g_assert_cmpfloat(b[0], ==, 0);
    int64_t total, trainable, non_trainable;
    g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &non_trainable), ==, 0);
    g_assert_cmpint(total, ==, 2 * 4 * 2 * (3 + 2 + 1) + (4 * 1 + 1));
    tw_tensor *y = tw_model_call(model, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 5, 3)), false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, 5);
    g_assert_cmpint(tw_tensor_dim(y, 2), ==, 1);
    tw_layer_unref(model);
    tw_scope_end();
}

/* Values restored by path before the build wait for it, as checkpoints
 * restore them. */
static void test_restore_by_path(void)
{
    tw_scope_begin();
    tw_model *model = tw_sequential_new("m");
    tw_model_add(model, wrapped("Bidirectional", layer_with("SimpleRNN", NULL, "units", "2", NULL)));
    tw_tensor *value = tw_full(0.25, TW_FLOAT32, TW_SHAPE(2, 2));
    g_assert_cmpint(tw_layer_restore_weight(model, "bidirectional/backward_simple_rnn/recurrent_kernel", value), ==, 0);
    g_assert_cmpint(tw_layer_pending_restores(model), ==, 1);
    g_assert_cmpint(tw_layer_restore_weight(model, "bidirectional/sideways_simple_rnn/kernel", value), ==, -1);
    assert_error("no layer \"sideways_simple_rnn\"");
    g_assert_cmpint(tw_model_build(model, &SHAPE(NONE, 4, 3), 1), ==, 0);
    g_assert_cmpint(tw_layer_pending_restores(model), ==, 0);
    tw_layer *backward = tw_layer_inner(tw_model_layer_at(model, 0), 1);
    tw_tensor *w = tw_layer_weight(backward, 1);
    g_assert_cmpfloat(tw_tensor_item(tw_sum_all(w)), ==, 1.0);
    tw_layer_unref(model);
    tw_scope_end();
}

/* Clones copy the layers inside; freezing and dtypes reach them. */
static void test_clone_freeze_dtype(void)
{
    tw_scope_begin();
    tw_layer *bidi = wrapped("Bidirectional", layer_with("GRU", "enc", "units", "3", "reset_after", "false", NULL));
    tw_layer_set(bidi, "merge_mode", "ave");
    tw_layer *copy = tw_layer_clone(bidi, "copy");
    g_assert_nonnull(copy);
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(copy, 0)), ==, "forward_enc");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(copy, 1)), ==, "backward_enc");
    g_assert_true(tw_layer_inner(copy, 0) != tw_layer_inner(bidi, 0));
    g_assert_false(tw_layer_get(tw_layer_inner(copy, 1), "reset_after")->number);
    g_assert_cmpstr(tw_layer_get(copy, "merge_mode")->choice, ==, "ave");

    tw_layer_set_trainable(copy, false);
    tw_shape in = SHAPE(NONE, 4, 2), out;
    int64_t t, nt;
    g_assert_cmpint(tw_layer_infer(copy, &in, &out, &t, &nt), ==, 0);
    g_assert_cmpint(t, ==, 0);
    g_assert_cmpint(nt, ==, 2 * (3 * 3 * (2 + 3) + 9));
    g_assert_cmpint(tw_layer_set_dtype(copy, TW_FLOAT64), ==, 0);
    build(copy, in);
    tw_tensor *k = tw_layer_weight(tw_layer_inner(copy, 1), 0);
    g_assert_cmpint(tw_tensor_dtype(k), ==, TW_FLOAT64);
    g_assert_false(tw_variable_trainable(k));
    char *paths = weight_paths(copy);
    g_assert_nonnull(strstr(paths, "backward_enc/bias (frozen)"));
    g_free(paths);

    /* A layer wrapped into a frozen float64 wrapper takes both. */
    tw_layer *td = tw_layer_new("TimeDistributed", NULL);
    tw_layer_set_trainable(td, false);
    tw_layer_set_dtype(td, TW_FLOAT64);
    g_assert_cmpint(tw_layer_wrap(td, layer_with("Dense", NULL, "units", "2", NULL)), ==, 0);
    g_assert_false(tw_layer_trainable(tw_layer_inner(td, 0)));
    g_assert_cmpint(tw_layer_dtype(tw_layer_inner(td, 0)), ==, TW_FLOAT64);
    tw_layer_unref(td);
    tw_layer_unref(copy);
    tw_layer_unref(bidi);
    tw_scope_end();
}

/* A new wrapper holds a layer at its defaults (what the designer's palette
 * adds), which tw_layer_wrap replaces. */
static void test_default_layers(void)
{
    tw_layer *bidi = tw_layer_new("Bidirectional", "b");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 0)), ==, "forward_lstm");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 1)), ==, "backward_lstm");
    expect_infer(tw_layer_ref(bidi), SHAPE(NONE, 4, 2), SHAPE(NONE, 64), 2 * 4 * 32 * (2 + 32 + 1));
    g_assert_cmpint(tw_layer_wrap(bidi, layer_with("GRU", NULL, "units", "2", NULL)), ==, 0);
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 1)), ==, "backward_gru");
    g_assert_null(tw_layer_inner(bidi, 2));
    tw_layer *td = tw_layer_new("TimeDistributed", "t");
    g_assert_cmpstr(tw_layer_class_of(tw_layer_inner(td, 0))->name, ==, "Dense");
    expect_infer(td, SHAPE(NONE, 4, 2), SHAPE(NONE, 4, 32), 2 * 32 + 32);
    tw_layer_unref(bidi);
}

/* An explicit backward layer (Keras' backward_layer). */
static void test_backward_layer(void)
{
    tw_scope_begin();
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "2", NULL));
    tw_layer *own = layer_with("LSTM", "mine", "units", "3", "go_backwards", "true", "activation", "relu", NULL);
    g_assert_cmpint(tw_bidirectional_set_backward(bidi, own), ==, 0);
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(bidi, 1)), ==, "backward_mine");
    expect_infer(tw_layer_ref(bidi), SHAPE(NONE, 4, 1), SHAPE(NONE, 5), 4 * 2 * (1 + 2 + 1) + 4 * 3 * (1 + 3 + 1));
    /* Sum needs outputs of one size. */
    tw_layer_set(bidi, "merge_mode", "sum");
    tw_shape in = SHAPE(NONE, 4, 1), out;
    g_assert_cmpint(tw_layer_infer(bidi, &in, &out, NULL, NULL), ==, -1);
    assert_error("merge_mode sum cannot merge the forward output (None, 2) with the backward output (None, 3)");
    /* Keras' rules: go_backwards must differ, return_sequences match. */
    g_assert_cmpint(tw_bidirectional_set_backward(bidi, layer_with("LSTM", NULL, "units", "2", NULL)), ==, -1);
    assert_error("both have go_backwards=false; they must differ");
    g_assert_cmpint(tw_bidirectional_set_backward(bidi, layer_with("LSTM", NULL, "units", "2", "go_backwards", "true",
                                                                   "return_sequences", "true", NULL)),
                    ==, -1);
    assert_error("has return_sequences=false and the backward layer 'backward_lstm' true; they must match");
    g_assert_cmpint(tw_bidirectional_set_backward(bidi, layer_with("Dense", NULL, NULL)), ==, -1);
    assert_error("its backward layer is a Dense; Bidirectional wraps a recurrent layer");
    tw_layer *td = tw_layer_new("TimeDistributed", "td");
    g_assert_cmpint(tw_bidirectional_set_backward(td, layer_with("LSTM", NULL, NULL)), ==, -1);
    assert_error("TimeDistributed 'td': only a Bidirectional layer has a backward layer");
    tw_layer_unref(td);
    tw_layer_unref(bidi);
    tw_scope_end();
}

static void test_errors(void)
{
    tw_scope_begin();
    tw_layer *bidi = tw_layer_new("Bidirectional", "b");
    tw_shape in = SHAPE(NONE, 4, 2), out;
    tw_shape states[3] = {SHAPE(NONE, 4, 2), SHAPE(NONE, 32), SHAPE(NONE, 32)}, outs[TW_MAX_LAYER_IO];
    int nouts;
    g_assert_cmpint(tw_layer_infer_n(bidi, states, 3, outs, &nouts, NULL, NULL), ==, -1);
    assert_error("Bidirectional 'b': takes a sequence and 4 initial states (the forward layer's 2, then the backward "
                 "layer's), got 2 inputs besides the sequence");
    g_assert_cmpint(tw_layer_set(bidi, "merge_mode", "max"), ==, -1);
    assert_error("merge_mode: expected one of");
    g_assert_cmpint(tw_layer_wrap(bidi, layer_with("Dense", NULL, NULL)), ==, -1);
    assert_error("Bidirectional 'b': its wrapped layer is a Dense; Bidirectional wraps a recurrent layer");
    g_assert_cmpint(tw_layer_wrap(bidi, tw_layer_new("Dence", NULL)), ==, -1);
    assert_error("unknown layer class \"Dence\"");
    tw_error_clear();
    g_assert_cmpint(tw_layer_wrap(bidi, NULL), ==, -1);
    assert_error("Bidirectional 'b': the layer to wrap is NULL");
    tw_layer *dense = tw_layer_new("Dense", "d");
    g_assert_cmpint(tw_layer_wrap(dense, layer_with("LSTM", NULL, NULL)), ==, -1);
    assert_error("Dense 'd': does not wrap layers");
    g_assert_null(tw_layer_inner(dense, 0));
    tw_layer_unref(dense);

    /* A sequence layer's needs reach the caller through the wrapper. */
    g_assert_cmpint(tw_layer_wrap(bidi, layer_with("LSTM", NULL, "units", "2", NULL)), ==, 0);
    tw_shape flat = SHAPE(NONE, 4);
    g_assert_cmpint(tw_layer_infer(bidi, &flat, &out, NULL, NULL), ==, -1);
    assert_error("LSTM 'forward_lstm': expected input of rank 3");
    build(bidi, in);
    g_assert_cmpint(tw_layer_wrap(bidi, layer_with("LSTM", NULL, NULL)), ==, -1);
    assert_error("cannot change the layer inside after it is built");

    tw_layer *td = wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "2", NULL));
    tw_layer_set_name(td, "td");
    g_assert_cmpint(tw_layer_infer(td, &flat, &out, NULL, NULL), ==, -1);
    assert_error("TimeDistributed 'td': expected input (batch, timesteps, ...) of rank 3 or more, got (None, 4)");
    tw_layer_unref(td);
    tw_layer_unref(bidi);
    tw_scope_end();
}

/* ---- gradients -------------------------------------------------------------------- */

static tw_tensor *layer_fn(tw_tensor *const *inputs, void *layer)
{
    return tw_layer_call(layer, inputs[0], false);
}

/* d(output)/d(input and every weight inside), float64. */
static void check_gradients(const char *what, tw_layer *layer, tw_shape in, tw_shape x_shape)
{
    tw_scope_begin();
    tw_layer_set_dtype(layer, TW_FLOAT64);
    build(layer, in);
    tw_tensor *inputs[16] = {gc_tensor(61, -1, 1, x_shape.ndim, x_shape.dims)};
    int n = 1;
    for (int d = 0; tw_layer_inner(layer, d); d++) {
        tw_layer *inner = tw_layer_inner(layer, d);
        for (int i = 0; i < tw_layer_nweights(inner); i++) {
            tw_tensor *w = tw_layer_weight(inner, i);
            g_assert_cmpint(tw_assign(w, gc_tensor(70 + n, -0.8, 0.8, tw_tensor_ndim(w), tw_tensor_shape(w))), ==, 0);
            inputs[n++] = w;
        }
    }
    gc_check(what, layer_fn, n, inputs, layer);
    tw_layer_unref(layer);
    tw_scope_end();
}

static tw_tensor *states_fn(tw_tensor *const *inputs, void *layer)
{
    tw_tensor *y[TW_MAX_LAYER_IO];
    tw_call_context ctx = {0};
    int n = tw_layer_call_n(layer, inputs, 5, y, &ctx);
    if (n != 6)
        return NULL;
    for (int i = 0; i < 2; i++)
        y[i] = tw_reshape(tw_contiguous(y[i]), TW_SHAPE(tw_tensor_dim(y[i], 0), -1));
    return tw_concat(6, y, 1);
}

/* Bidirectional LSTM, merge_mode None, given and giving states: d(every
 * output)/d(sequence, the four initial states, every weight). */
static void check_state_gradients(void)
{
    tw_scope_begin();
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "2", "return_sequences", "true",
                                                         "return_state", "true", NULL));
    g_assert_cmpint(tw_layer_set(bidi, "merge_mode", "none"), ==, 0);
    tw_layer_set_dtype(bidi, TW_FLOAT64);
    build(bidi, SHAPE(NONE, 3, 2));
    tw_tensor *inputs[16] = {gc_tensor(61, -1, 1, TW_SHAPE(2, 3, 2))};
    int n = 1;
    for (; n < 5; n++)
        inputs[n] = gc_tensor(62 + n, -1, 1, TW_SHAPE(2, 2));
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) {
            tw_tensor *w = tw_layer_weight(tw_layer_inner(bidi, d), i);
            g_assert_cmpint(tw_assign(w, gc_tensor(70 + n, -0.8, 0.8, tw_tensor_ndim(w), tw_tensor_shape(w))), ==, 0);
            inputs[n++] = w;
        }
    gc_check("Bidirectional LSTM initial_state return_state", states_fn, n, inputs, bidi);
    tw_layer_unref(bidi);
    tw_scope_end();
}

static void test_gradients(void)
{
    check_gradients("Bidirectional LSTM sequences concat",
                    wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "2", "return_sequences", "true", NULL)),
                    SHAPE(NONE, 3, 2), SHAPE(2, 3, 2));
    tw_layer *gru = wrapped("Bidirectional", layer_with("GRU", NULL, "units", "2", NULL));
    tw_layer_set(gru, "merge_mode", "mul");
    check_gradients("Bidirectional GRU mul", gru, SHAPE(NONE, 3, 2), SHAPE(2, 3, 2));
    check_state_gradients();
    check_gradients("TimeDistributed Dense",
                    wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "3", "activation", "tanh", NULL)),
                    SHAPE(NONE, 3, 2), SHAPE(2, 3, 2));
}

/* ---- Keras JSON ------------------------------------------------------------------- */

static tw_model *must_read(const char *json)
{
    tw_model *model = tw_model_from_json(json, strlen(json), "model.json");
    if (!model)
        g_error("read: %s", tw_last_error());
    return model;
}

static void expect_refused(const char *json, const char *fragment)
{
    g_assert_null(tw_model_from_json(json, strlen(json), "model.json"));
    assert_error(fragment);
}

#define SEQ(layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [" layers "]}}"
#define INPUT(shape) "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": " shape "}}"

/* Written, read back and written again: the same text. */
static void assert_fixpoint(const tw_model *model)
{
    char *json = tw_model_to_json(model);
    g_assert_nonnull(json);
    tw_model *again = must_read(json);
    char *json2 = tw_model_to_json(again);
    g_assert_cmpstr(json2, ==, json);
    free(json);
    free(json2);
    tw_layer_unref(again);
}

static void test_json_round_trip(void)
{
    tw_model *model = tw_sequential_new("seq");
    tw_model_add(model, tw_layer_new("InputLayer", NULL));
    tw_layer_set_input_shape(tw_model_layer_at(model, 0), &SHAPE(NONE, 6, 3));
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", "enc", "units", "4", "return_sequences", "true",
                                                         "recurrent_dropout", "0.25", NULL));
    tw_layer_set(bidi, "merge_mode", "sum");
    tw_model_add(model, bidi);
    tw_layer *own = wrapped("Bidirectional", layer_with("GRU", NULL, "units", "2", "return_sequences", "true", NULL));
    tw_bidirectional_set_backward(own, layer_with("GRU", NULL, "units", "3", "go_backwards", "true",
                                                  "return_sequences", "true", NULL));
    tw_model_add(model, own);
    tw_model_add(model, wrapped("TimeDistributed", layer_with("Dense", "tag", "units", "5", NULL)));
    tw_layer_set_trainable(tw_model_layer_at(model, 3), false);

    char *json = tw_model_to_json(model);
    g_assert_nonnull(json);
    /* Keras 2's form: the wrapped layer under its own name, no
     * backward_layer when it is the derived copy. */
    g_assert_nonnull(strstr(json, "\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bidirectional\""));
    g_assert_nonnull(strstr(json, "\"merge_mode\": \"sum\", \"layer\": {\"class_name\": \"LSTM\", \"config\": "
                                  "{\"name\": \"enc\""));
    g_assert_nonnull(strstr(json, "\"backward_layer\": {\"class_name\": \"GRU\", \"config\": {\"name\": \"gru\""));
    g_assert_cmpint(g_strstr_len(json, -1, "backward_layer") == g_strrstr(json, "backward_layer"), ==, 1);
    g_assert_nonnull(strstr(json, "\"layer\": {\"class_name\": \"Dense\", \"config\": {\"name\": \"tag\", "
                                  "\"trainable\": false"));

    tw_model *back = must_read(json);
    g_assert_cmpint(tw_model_nlayers(back), ==, 4);
    const tw_layer *b = tw_model_layer_at(back, 1);
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(b, 0)), ==, "forward_enc");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(b, 1)), ==, "backward_enc");
    g_assert_cmpfloat(tw_layer_get(tw_layer_inner(b, 1), "recurrent_dropout")->number, ==, 0.25);
    const tw_layer *o = tw_model_layer_at(back, 2);
    g_assert_cmpint(tw_layer_get(tw_layer_inner(o, 1), "units")->number, ==, 3);
    g_assert_false(tw_layer_trainable(tw_layer_inner(tw_model_layer_at(back, 3), 0)));
    int64_t t1, nt1, t2, nt2;
    g_assert_cmpint(tw_model_count_params(model, NULL, &t1, &nt1), ==, 0);
    g_assert_cmpint(tw_model_count_params(back, NULL, &t2, &nt2), ==, 0);
    g_assert_cmpint(t1, ==, t2);
    g_assert_cmpint(nt1, ==, nt2);
    g_assert_cmpint(nt2, ==, (2 + 3) * 5 + 5); /* the Dense after the concat of 2 and 3 units */
    assert_fixpoint(back);
    free(json);
    tw_layer_unref(back);
    tw_layer_unref(model);
}

/* Keras 3 writes the forward layer's own name ("forward_lstm") and always a
 * backward_layer; both read as Keras reads them. */
static void test_json_keras3_form(void)
{
    tw_model *model = must_read(SEQ(
        INPUT("[null, 5, 2]") ", {\"module\": \"keras.layers\", \"class_name\": \"Bidirectional\", \"config\": "
        "{\"name\": \"bidirectional\", \"trainable\": true, \"dtype\": {\"module\": \"keras\", \"class_name\": "
        "\"DTypePolicy\", \"config\": {\"name\": \"float32\"}, \"registered_name\": null}, \"merge_mode\": "
        "\"concat\", \"layer\": {\"module\": \"keras.layers\", \"class_name\": \"LSTM\", \"config\": {\"name\": "
        "\"forward_lstm\", \"units\": 3, \"go_backwards\": false}, \"registered_name\": null}, \"backward_layer\": "
        "{\"module\": \"keras.layers\", \"class_name\": \"LSTM\", \"config\": {\"name\": \"backward_lstm\", "
        "\"units\": 3, \"go_backwards\": true}, \"registered_name\": null}}, \"registered_name\": null}"));
    const tw_layer *b = tw_model_layer_at(model, 1);
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(b, 0)), ==, "forward_lstm");
    g_assert_cmpstr(tw_layer_name(tw_layer_inner(b, 1)), ==, "backward_lstm");
    int64_t total;
    g_assert_cmpint(tw_model_count_params(model, &total, NULL, NULL), ==, 0);
    g_assert_cmpint(total, ==, 2 * 4 * 3 * (2 + 3 + 1));
    char *json = tw_model_to_json(model);
    g_assert_null(strstr(json, "backward_layer")); /* the derived copy */
    g_assert_nonnull(strstr(json, "\"layer\": {\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\""));
    free(json);
    assert_fixpoint(model);
    tw_layer_unref(model);
}

/* What the designer's palette inserts, new wrappers with their default
 * layers, writes and reads back unchanged. */
static void test_json_default_layers(void)
{
    tw_model *model = tw_sequential_new("palette");
    tw_model_add(model, tw_layer_new("Bidirectional", NULL));
    tw_model_add(model, tw_layer_new("TimeDistributed", NULL));
    assert_fixpoint(model);
    char *json = tw_model_to_json(model);
    g_assert_nonnull(strstr(json, "\"layer\": {\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\""));
    g_assert_nonnull(strstr(json, "\"layer\": {\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\""));
    free(json);
    tw_layer_unref(model);
}

/* A model inside a wrapper: TimeDistributed(Sequential(Dense, Dense)). */
static void test_json_nested_model(void)
{
    tw_model *model = must_read(SEQ(
        INPUT("[null, 7, 3]") ", {\"class_name\": \"TimeDistributed\", \"config\": {\"name\": \"per_step\", "
        "\"layer\": " SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"a\", \"units\": 4}}, "
                          "{\"class_name\": \"Dense\", \"config\": {\"name\": \"b\", \"units\": 2}}") "}}"));
    tw_layer_info info[2];
    g_assert_cmpint(tw_model_infer(model, tw_model_input_shape(model), info), ==, 2);
    char *shape = format_shape(&info[1].output);
    g_assert_cmpstr(shape, ==, "(None, 7, 2)");
    g_free(shape);
    g_assert_cmpint(info[1].trainable_params, ==, 3 * 4 + 4 + 4 * 2 + 2);
    g_assert_cmpint(tw_model_build(model, NULL, 1), ==, 0);
    char *paths = weight_paths(model);
    g_assert_cmpstr(paths, ==, "per_step/s/a/kernel per_step/s/a/bias per_step/s/b/kernel per_step/s/b/bias");
    g_free(paths);
    tw_scope_begin();
    tw_tensor *y = tw_model_call(model, tw_ones(TW_FLOAT32, TW_SHAPE(2, 7, 3)), false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 2), ==, 2);
    tw_scope_end();
    assert_fixpoint(model);
    tw_layer_unref(model);
}

static void test_json_refused(void)
{
    expect_refused(SEQ(INPUT("[null, 5, 2]") ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"b\"}}"),
                   "model.json: layers[1].config: missing \"layer\": a Bidirectional holds the layer it wraps");
    expect_refused(SEQ(INPUT("[null, 5, 2]") ", {\"class_name\": \"TimeDistributed\", \"config\": {\"layer\": null}}"),
                   "model.json: layers[1].config: missing \"layer\": a TimeDistributed holds the layer it wraps");
    /* A class no layer has, wrapped: the model opens and cannot run, naming it. */
    const char *dence = SEQ("{\"class_name\": \"TimeDistributed\", \"config\": {\"layer\": {\"class_name\": "
                            "\"Dence\", \"config\": {}}}}");
    tw_model *wrapped = tw_model_from_json(dence, strlen(dence), "model.json");
    if (!wrapped)
        g_error("%s", tw_last_error());
    g_assert_cmpint(tw_layer_check_runnable(wrapped), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "its class \"Dence\" is not a Keras layer Tensor Workbench implements"));
    tw_error_clear();
    tw_layer_unref(wrapped);
    expect_refused(SEQ("{\"class_name\": \"TimeDistributed\", \"config\": {\"layer\": [1, 2]}}"),
                   "model.json: layers[0].config.layer: expected a layer {\"class_name\": ..., \"config\": ...}, "
                   "got an array");
    expect_refused(SEQ("{\"class_name\": \"TimeDistributed\", \"config\": {\"layer\": {\"class_name\": \"Dense\", "
                       "\"config\": {\"units\": -3}}}}"),
                   "model.json: layers[0].config.layer.config.units: expected");
    expect_refused(SEQ("{\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", \"layer\": {\"class_name\": "
                       "\"Dense\", \"config\": {}}}}"),
                   "model.json: layers[0].config.layer: Bidirectional 'bi': its wrapped layer is a Dense");
    /* merge_mode None reads (Functional models take its two outputs), and
     * a Sequential model refuses passing two tensors on. */
    const char *two = SEQ(INPUT("[null, 5, 2]") ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": "
                          "\"bi\", \"merge_mode\": null, \"layer\": {\"class_name\": \"LSTM\", \"config\": {}}}}");
    tw_model *m = must_read(two);
    g_assert_cmpint(tw_model_count_params(m, NULL, NULL, NULL), ==, -1);
    assert_error("Bidirectional 'bi': gives 2 outputs where one is expected");
    tw_layer_unref(m);
    expect_refused(SEQ("{\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", \"layer\": {\"class_name\": "
                       "\"LSTM\", \"config\": {}}, \"backward_layer\": {\"class_name\": \"LSTM\", \"config\": {}}}}"),
                   "model.json: layers[0].config.backward_layer: Bidirectional 'bi': the forward layer "
                   "'forward_lstm' and the backward layer 'backward_lstm' both have go_backwards=false");
    /* Nested wrappers carry the whole path. */
    expect_refused(SEQ("{\"class_name\": \"TimeDistributed\", \"config\": {\"layer\": {\"class_name\": "
                       "\"Bidirectional\", \"config\": {\"layer\": {\"class_name\": \"LSTM\", \"config\": "
                       "{\"units\": \"many\"}}}}}}"),
                   "model.json: layers[0].config.layer.config.layer.config.units: expected a positive integer, got "
                   "\"many\"");
}

/* Keras 2.0.x wrote implementation 0 and no GRU reset_after (its GRU
 * computed what reset_after=false does). */
static void test_json_keras20_keys(void)
{
    tw_model *model = must_read(SEQ(
        INPUT("[null, 4, 3]") ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"b\", \"layer\": "
        "{\"class_name\": \"GRU\", \"config\": {\"name\": \"gru_1\", \"units\": 2, \"implementation\": 0}}, "
        "\"merge_mode\": \"concat\"}}"));
    const tw_layer *gru = tw_layer_inner(tw_model_layer_at(model, 1), 1);
    g_assert_false(tw_layer_get(gru, "reset_after")->number);
    g_assert_cmpint(tw_layer_get(gru, "implementation")->number, ==, 0);
    int64_t total;
    g_assert_cmpint(tw_model_count_params(model, &total, NULL, NULL), ==, 0);
    g_assert_cmpint(total, ==, 2 * 3 * 2 * (3 + 2 + 1));
    tw_layer_unref(model);
}

/* A checkpoint of a model with both wrappers restores into the model read
 * back from its JSON, before its build (deferred) and after: same outputs. */
static void test_checkpoint(void)
{
    char *dir = g_dir_make_tmp("twb-wrappers-XXXXXX", NULL), *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    tw_model *model = tw_sequential_new("m");
    tw_layer *bidi = wrapped("Bidirectional", layer_with("LSTM", NULL, "units", "3", "return_sequences", "true", NULL));
    tw_layer_set_input_shape(bidi, &SHAPE(NONE, 4, 2));
    tw_model_add(model, bidi);
    tw_model_add(model, wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "2", NULL)));
    g_assert_cmpint(tw_model_build(model, NULL, 11), ==, 0);
    char *json = tw_model_to_json(model);
    if (tw_checkpoint_save(path, model, NULL, json, NULL))
        g_error("save: %s", tw_last_error());
    tw_scope_begin();
    tw_tensor *x = gc_tensor(5, -1, 1, TW_SHAPE(2, 4, 2));
    x = tw_cast(x, TW_FLOAT32);
    tw_tensor *want = tw_model_call(model, x, false);
    for (int deferred = 1; deferred >= 0; deferred--) {
        tw_model *back = must_read(json);
        if (!deferred)
            g_assert_cmpint(tw_model_build(back, NULL, 99), ==, 0);
        if (tw_checkpoint_restore(path, back, NULL))
            g_error("restore: %s", tw_last_error());
        if (deferred) {
            g_assert_cmpint(tw_layer_pending_restores(back), ==, 8);
            g_assert_cmpint(tw_model_build(back, NULL, 99), ==, 0);
        }
        g_assert_cmpint(tw_layer_pending_restores(back), ==, 0);
        tw_tensor *got = tw_model_call(back, x, false);
        g_assert_cmpfloat(tw_tensor_item(tw_sum_all(tw_abs(tw_sub(got, want)))), ==, 0);
        tw_layer_unref(back);
    }
    tw_scope_end();
    free(json);
    tw_layer_unref(model);
    g_remove(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

/* ---- the corpus ------------------------------------------------------------------- */

static char *corpus_path(const char *name)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "keras-functional", name, NULL);
}

/* The file's Functional model as a Sequential one, when its layers form a
 * chain (each fed by the one before): the Functional reader comes later,
 * and these layers read the same either way. */
static tw_model *chain_as_sequential(const char *file)
{
    char *path = corpus_path(file), *text = NULL;
    gsize length;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, &length, &error))
        g_error("%s", error->message);
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, text, (gssize)length, NULL));
    JsonObject *config = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "config");
    JsonArray *layers = json_object_get_array_member(config, "layers");
    for (guint i = 1; i < json_array_get_length(layers); i++) {
        JsonArray *nodes = json_object_get_array_member(json_array_get_object_element(layers, i), "inbound_nodes");
        const char *from = json_array_get_string_element(
            json_array_get_array_element(json_array_get_array_element(nodes, 0), 0), 0);
        const char *previous = json_object_get_string_member(json_array_get_object_element(layers, i - 1), "name");
        g_assert_cmpstr(from, ==, previous);
    }
    JsonObject *seq_config = json_object_new();
    json_object_set_string_member(seq_config, "name", json_object_get_string_member(config, "name"));
    json_object_set_array_member(seq_config, "layers", json_array_ref(layers));
    JsonObject *root = json_object_new();
    json_object_set_string_member(root, "class_name", "Sequential");
    json_object_set_object_member(root, "config", seq_config);
    JsonNode *node = json_node_init_object(json_node_alloc(), root);
    char *json = json_to_string(node, FALSE);
    tw_model *model = tw_model_from_json(json, strlen(json), file);
    if (!model)
        g_error("%s", tw_last_error());
    g_free(json);
    json_node_unref(node);
    json_object_unref(root);
    g_object_unref(parser);
    g_free(text);
    g_free(path);
    return model;
}

/* Keras' summary lines "name (Class)   (None, 272, 256)   332800": each
 * layer's output shape and count against the engine's. */
static void assert_summary_lines(const tw_model *model, const char *summary_file)
{
    char *path = corpus_path(summary_file), *text;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        g_error("cannot read %s", path);
    GRegex *line = g_regex_new("^ ?(\\S+) \\(\\w+\\)?\\s+(\\([^)]*\\))\\s+([0-9,]+)", G_REGEX_MULTILINE, 0, NULL);
    GMatchInfo *match;
    int n = tw_model_nlayers(model), seen = 0;
    tw_layer_info *info = g_new0(tw_layer_info, n);
    g_assert_cmpint(tw_model_infer(model, tw_model_input_shape(model), info), ==, n);
    g_regex_match(line, text, 0, &match);
    for (; g_match_info_matches(match); g_match_info_next(match, NULL), seen++) {
        char *name = g_match_info_fetch(match, 1), *shape = g_match_info_fetch(match, 2);
        char *count = g_match_info_fetch(match, 3);
        g_assert_cmpint(seen, <, n);
        g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, seen)), ==, name);
        char *ours = format_shape(&info[seen].output);
        g_assert_cmpstr(ours, ==, shape);
        int64_t keras = 0;
        for (const char *c = count; *c; c++)
            keras = *c == ',' ? keras : 10 * keras + (*c - '0');
        g_assert_cmpint(info[seen].trainable_params + info[seen].non_trainable_params, ==, keras);
        g_free(ours);
        g_free(name);
        g_free(shape);
        g_free(count);
    }
    g_assert_cmpint(seen, ==, n);
    g_match_info_free(match);
    g_regex_unref(line);
    g_free(info);
    g_free(text);
    g_free(path);
}

static bool corpus_present(void)
{
    char *path = corpus_path("expected.tsv");
    bool present = g_file_test(path, G_FILE_TEST_EXISTS);
    if (!present) {
        char *message = g_strdup_printf("the keras-functional corpus is not at %s (it lives in the shared checkout)",
                                        path);
        g_test_skip(message);
        g_free(message);
    }
    g_free(path);
    return present;
}

static void assert_totals(const tw_model *model, int64_t total, int64_t trainable, int64_t non_trainable)
{
    int64_t t, tr, nt;
    if (tw_model_count_params(model, &t, &tr, &nt))
        g_error("count: %s", tw_last_error());
    g_assert_cmpint(t, ==, total);
    g_assert_cmpint(tr, ==, trainable);
    g_assert_cmpint(nt, ==, non_trainable);
}

/* 05: Keras 2.0.8, two Bidirectional(LSTM), the first with sequences. */
static void test_corpus_05(void)
{
    if (!corpus_present())
        return;
    tw_model *model = chain_as_sequential("05-conv1d-bilstm-vad.json");
    assert_summary_lines(model, "summaries/05-conv1d-bilstm-vad.summary.txt");
    assert_totals(model, 1094081, 1092153, 1928);
    assert_fixpoint(model);
    tw_layer_unref(model);
}

/* 06: Embedding, LSTM with sequences, TimeDistributed(Dense), Activation. */
static void test_corpus_06(void)
{
    if (!corpus_present())
        return;
    tw_model *model = chain_as_sequential("06-ner-lstm-timedistributed.json");
    assert_summary_lines(model, "summaries/06-ner-lstm-timedistributed.summary.txt");
    assert_totals(model, 4141254, 4141254, 0);
    assert_fixpoint(model);
    /* Its Embedding has mask_zero, which this engine does not do: the
     * model cannot run as Keras would. Without the mask it runs. */
    g_assert_cmpint(tw_layer_check_runnable(model), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "Embedding 'embedding_1': mask_zero=true masks padded steps"));
    tw_error_clear();
    g_assert_cmpint(tw_layer_set(tw_model_find_layer(model, "embedding_1"), "mask_zero", "false"), ==, 0);
    g_assert_cmpint(tw_layer_check_runnable(model), ==, 0);
    tw_model_build(model, NULL, 1);
    tw_scope_begin();
    tw_tensor *y = tw_model_call(model, tw_zeros(TW_INT32, TW_SHAPE(2, 256)), false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 2), ==, 6);
    /* The softmax Activation over the tags: each step sums to one. */
    g_assert_cmpfloat(fabs(tw_tensor_item(tw_sum_all(y)) - 2 * 256), <, 1e-3);
    tw_scope_end();
    tw_layer_unref(model);
}

/* 04: the shared Bidirectional(LSTM(256)) of the siamese model, after
 * MaxPooling1D's (None, 25, 128): 788,480 in Keras' summary. */
static void test_corpus_04(void)
{
    if (!corpus_present())
        return;
    char *path = corpus_path("04-siamese-conv1d-bilstm-shared.json"), *text;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    JsonParser *parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, text, -1, NULL));
    JsonArray *layers = json_object_get_array_member(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "config"), "layers");
    JsonNode *bidi = NULL;
    for (guint i = 0; i < json_array_get_length(layers); i++)
        if (!strcmp(json_object_get_string_member(json_array_get_object_element(layers, i), "name"),
                    "bidirectional_1"))
            bidi = json_array_get_element(layers, i);
    g_assert_nonnull(bidi);
    char *layer_json = json_to_string(bidi, FALSE);
    char *json = g_strdup_printf(SEQ(INPUT("[null, 25, 128]") ", %s"), layer_json);
    tw_model *model = must_read(json);
    tw_layer_info info[2];
    g_assert_cmpint(tw_model_infer(model, tw_model_input_shape(model), info), ==, 2);
    g_assert_cmpint(info[1].trainable_params, ==, 788480);
    char *shape = format_shape(&info[1].output);
    g_assert_cmpstr(shape, ==, "(None, 512)");
    g_free(shape);
    tw_layer_unref(model);
    g_free(json);
    g_free(layer_json);
    g_object_unref(parser);
    g_free(text);
    g_free(path);
}

/* ---- training through the wrappers ------------------------------------------------ */

/* A Sequential holding both wrappers, to fit a target that needs the whole
 * sequence at every step (its mean). */
static tw_model *tagger(void)
{
    tw_model *model = tw_sequential_new("tagger");
    tw_layer *bidi = wrapped("Bidirectional", layer_with("GRU", NULL, "units", "4", "return_sequences", "true", NULL));
    tw_layer_set_input_shape(bidi, &SHAPE(NONE, 5, 2));
    tw_model_add(model, bidi);
    tw_model_add(model, wrapped("TimeDistributed", layer_with("Dense", NULL, "units", "1", NULL)));
    g_assert_cmpint(tw_model_build(model, NULL, 5), ==, 0);
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("adam", 0.03), &loss, 0, NULL), ==, 0);
    return model;
}

/* fit lowers the loss, and its traced step (forward, backward and update
 * as one graph) gives the eager step's losses. */
static void test_fit_traced_and_eager(void)
{
    float xs[32 * 5 * 2], ys[32 * 5];
    GRand *rand = g_rand_new_with_seed(9);
    for (int b = 0; b < 32; b++) {
        double mean = 0;
        for (int t = 0; t < 5; t++)
            for (int f = 0; f < 2; f++) {
                xs[(b * 5 + t) * 2 + f] = (float)g_rand_double_range(rand, -1, 1);
                mean += f == 0 ? xs[(b * 5 + t) * 2] / 5 : 0;
            }
        for (int t = 0; t < 5; t++)
            ys[b * 5 + t] = (float)mean;
    }
    g_rand_free(rand);
    tw_tensor *x = tw_tensor_from_data(xs, TW_FLOAT32, TW_SHAPE(32, 5, 2));
    tw_tensor *y = tw_tensor_from_data(ys, TW_FLOAT32, TW_SHAPE(32, 5, 1));
    double losses[2][12];
    for (int traced = 0; traced < 2; traced++) {
        tw_model *model = tagger();
        tw_fit_options options = tw_fit_options_default();
        options.epochs = 12;
        options.batch_size = 8;
        options.traced = traced ? TW_TRACE_ON : TW_TRACE_OFF;
        tw_history *history = tw_model_fit(model, x, y, &options);
        if (!history)
            g_error("fit: %s", tw_last_error());
        for (int e = 0; e < 12; e++)
            losses[traced][e] = tw_logs_get(&history->epoch_logs[e], "loss");
        tw_history_free(history);
        tw_layer_unref(model);
    }
    g_assert_cmpfloat(losses[0][11], <, 0.3 * losses[0][0]);
    for (int e = 0; e < 12; e++)
        g_assert_cmpfloat(fabs(losses[1][e] - losses[0][e]), <=, 1e-4 * losses[0][e]);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/wrappers/bidirectional-values", test_bidirectional_values);
    g_test_add_func("/wrappers/bidirectional-states", test_bidirectional_states);
    g_test_add_func("/wrappers/bidirectional-float32", test_bidirectional_float32);
    g_test_add_func("/wrappers/time-distributed-values", test_time_distributed_values);
    g_test_add_func("/wrappers/counts", test_counts);
    g_test_add_func("/wrappers/names-and-weight-order", test_names_and_weight_order);
    g_test_add_func("/wrappers/restore-by-path", test_restore_by_path);
    g_test_add_func("/wrappers/clone-freeze-dtype", test_clone_freeze_dtype);
    g_test_add_func("/wrappers/default-layers", test_default_layers);
    g_test_add_func("/wrappers/backward-layer", test_backward_layer);
    g_test_add_func("/wrappers/errors", test_errors);
    g_test_add_func("/wrappers/gradients", test_gradients);
    g_test_add_func("/wrappers/json-round-trip", test_json_round_trip);
    g_test_add_func("/wrappers/json-keras3-form", test_json_keras3_form);
    g_test_add_func("/wrappers/json-default-layers", test_json_default_layers);
    g_test_add_func("/wrappers/json-nested-model", test_json_nested_model);
    g_test_add_func("/wrappers/json-refused", test_json_refused);
    g_test_add_func("/wrappers/checkpoint", test_checkpoint);
    g_test_add_func("/wrappers/json-keras20-keys", test_json_keras20_keys);
    g_test_add_func("/wrappers/corpus-04", test_corpus_04);
    g_test_add_func("/wrappers/corpus-05", test_corpus_05);
    g_test_add_func("/wrappers/corpus-06", test_corpus_06);
    g_test_add_func("/wrappers/fit-traced-and-eager", test_fit_traced_and_eager);
    return g_test_run();
}
