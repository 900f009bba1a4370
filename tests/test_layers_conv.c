/* Convolution and pooling layers (Conv2D, Conv1D, Max/AveragePooling 1D and
 * 2D, the global poolings): forward values against hand-computed numbers
 * with known kernels, output shapes and parameter counts as Keras reports
 * them, the messages of inputs and configs that cannot work, Keras' config
 * keys, and gradients of inputs and weights against finite differences. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "tw/layers.h"
#include "tw/model.h"

#define NONE (-1)
#define SHAPE(...) ((tw_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})

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

static tw_tensor *values(tw_dtype dtype, const tw_shape *shape, const double *v)
{
    tw_tensor *t = tw_tensor_empty(dtype, shape->ndim, shape->dims);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++) {
        if (dtype == TW_FLOAT32)
            ((float *)tw_tensor_data(t))[i] = (float)v[i];
        else
            ((double *)tw_tensor_data(t))[i] = v[i];
    }
    return t;
}
#define VALUES(shape, ...) values(TW_FLOAT32, &(shape), (const double[]){__VA_ARGS__})

/* 1, 2, ..., numel in the given shape. */
static tw_tensor *counting(tw_dtype dtype, tw_shape shape)
{
    tw_tensor *t = tw_arange(1, (double)tw_shape_numel(&shape) + 1, 1, dtype);
    return tw_reshape(t, shape.ndim, shape.dims);
}

/* Build for x's shape and restore "<name>/kernel" (and bias when given). */
static void set_weights(tw_layer *layer, const tw_tensor *x, tw_tensor *kernel, tw_tensor *bias)
{
    tw_shape in = {tw_tensor_ndim(x)};
    memcpy(in.dims, tw_tensor_shape(x), sizeof(int64_t) * in.ndim);
    in.dims[0] = NONE;
    tw_rng *rng = tw_rng_new(1);
    if (tw_layer_build(layer, &in, rng))
        g_error("build: %s", tw_last_error());
    tw_rng_free(rng);
    char path[128];
    snprintf(path, sizeof path, "%s/kernel", tw_layer_name(layer));
    if (tw_layer_restore_weight(layer, path, kernel))
        g_error("restore: %s", tw_last_error());
    snprintf(path, sizeof path, "%s/bias", tw_layer_name(layer));
    if (bias && tw_layer_restore_weight(layer, path, bias))
        g_error("restore: %s", tw_last_error());
}

static void assert_tensor(tw_tensor *t, const tw_shape *shape, const double *expected)
{
    if (!t)
        g_error("call failed: %s", tw_last_error());
    char got[128], want[128];
    tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), got, sizeof got);
    tw_shape_str(shape->ndim, shape->dims, want, sizeof want);
    g_assert_cmpstr(got, ==, want);
    tw_tensor *c = tw_contiguous(t);
    for (int64_t i = 0; i < tw_tensor_numel(c); i++) {
        double v = tw_tensor_dtype(c) == TW_FLOAT32 ? ((float *)tw_tensor_data(c))[i]
                                                    : ((double *)tw_tensor_data(c))[i];
        if (fabs(v - expected[i]) > 1e-4 * fmax(1, fabs(expected[i])))
            g_error("element %lld is %.8g, expected %.8g", (long long)i, v, expected[i]);
    }
}
#define ASSERT_TENSOR(t, shape, ...) assert_tensor((t), &(shape), (const double[]){__VA_ARGS__})

/* Infer and compare the printed output shape and the parameter count. */
static void assert_infer(const tw_layer *layer, tw_shape in, const char *expected, int64_t params)
{
    tw_shape out;
    int64_t trainable = -1, frozen = -1;
    if (tw_layer_infer(layer, &in, &out, &trainable, &frozen))
        g_error("%s: %s", tw_layer_name(layer), tw_last_error());
    char buf[128];
    g_assert_cmpstr(tw_shape_format(&out, buf, sizeof buf), ==, expected);
    g_assert_cmpint(trainable, ==, params);
    g_assert_cmpint(frozen, ==, 0);
}

static void assert_infer_fails(const tw_layer *layer, tw_shape in, const char *message)
{
    tw_shape out;
    tw_error_clear();
    g_assert_cmpint(tw_layer_infer(layer, &in, &out, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
}

/* ---- Conv2D --------------------------------------------------------------------- */

static void test_conv2d_values(void)
{
    tw_scope_begin();
    /* 2x2 kernel over 1..9: each output is 1 a + 2 b + 3 d + 4 e of its window, plus the bias. */
    tw_layer *conv = layer_with("Conv2D", "conv2d", "filters", "1", "kernel_size", "2", NULL);
    tw_tensor *x = counting(TW_FLOAT32, SHAPE(1, 3, 3, 1));
    set_weights(conv, x, VALUES(SHAPE(2, 2, 1, 1), 1, 2, 3, 4), VALUES(SHAPE(1), 0.5));
    ASSERT_TENSOR(tw_layer_call(conv, x, false), SHAPE(1, 2, 2, 1), 37.5, 47.5, 67.5, 77.5);
    tw_layer_unref(conv);

    /* The same kernel dilated by 2 spans the whole 3x3 input: 1*1 + 2*3 + 3*7 + 4*9. */
    conv = layer_with("Conv2D", "conv2d", "filters", "1", "kernel_size", "2", "dilation_rate", "2", "use_bias",
                      "false", NULL);
    set_weights(conv, x, VALUES(SHAPE(2, 2, 1, 1), 1, 2, 3, 4), NULL);
    ASSERT_TENSOR(tw_layer_call(conv, x, false), SHAPE(1, 1, 1, 1), 64);
    tw_layer_unref(conv);

    /* HWIO: kernel[0, 0, i, o] weighs input channel i into filter o. */
    conv = layer_with("Conv2D", "conv2d", "filters", "2", "kernel_size", "1", "use_bias", "false", NULL);
    x = counting(TW_FLOAT32, SHAPE(1, 2, 2, 2));
    set_weights(conv, x, VALUES(SHAPE(1, 1, 2, 2), 1, 10, 100, 1000), NULL);
    ASSERT_TENSOR(tw_layer_call(conv, x, false), SHAPE(1, 2, 2, 2), 201, 2010, 403, 4030, 605, 6050, 807, 8070);
    tw_layer_unref(conv);

    /* SAME with stride 2 on 4x4 pads one row and column at the end (TensorFlow's
     * rule); window sums 54, 45, 72, 54, minus 50, through relu. */
    conv = layer_with("Conv2D", "conv2d", "filters", "1", "kernel_size", "3", "strides", "2", "padding", "same",
                      "activation", "relu", NULL);
    x = counting(TW_FLOAT32, SHAPE(1, 4, 4, 1));
    set_weights(conv, x, tw_ones(TW_FLOAT32, TW_SHAPE(3, 3, 1, 1)), VALUES(SHAPE(1), -50));
    ASSERT_TENSOR(tw_layer_call(conv, x, false), SHAPE(1, 2, 2, 1), 4, 0, 22, 4);
    tw_layer_unref(conv);
    tw_scope_end();
}

static void test_conv2d_shapes(void)
{
    static const struct {
        const char *filters, *kernel, *strides, *padding, *dilation, *use_bias;
        tw_shape in;
        const char *out;
        int64_t params;
    } cases[] = {
        {"32", "3", "1", "valid", "1", "true", SHAPE(NONE, 28, 28, 1), "(None, 26, 26, 32)", 320},
        {"32", "3", "1", "same", "1", "true", SHAPE(NONE, 28, 28, 1), "(None, 28, 28, 32)", 320},
        {"32", "3", "1", "valid", "1", "false", SHAPE(NONE, 28, 28, 1), "(None, 26, 26, 32)", 288},
        {"64", "3", "1", "valid", "1", "true", SHAPE(NONE, 13, 13, 32), "(None, 11, 11, 64)", 18496},
        {"32", "3", "2", "valid", "1", "true", SHAPE(NONE, 28, 28, 1), "(None, 13, 13, 32)", 320},
        {"32", "3", "2", "same", "1", "true", SHAPE(NONE, 28, 28, 1), "(None, 14, 14, 32)", 320},
        {"32", "3", "3", "same", "1", "true", SHAPE(NONE, 28, 28, 1), "(None, 10, 10, 32)", 320},
        {"32", "3", "1", "valid", "2", "true", SHAPE(NONE, 28, 28, 1), "(None, 24, 24, 32)", 320},
        {"32", "3", "1", "same", "2", "true", SHAPE(NONE, 28, 28, 1), "(None, 28, 28, 32)", 320},
        {"8", "5,3", "2,1", "valid", "1", "true", SHAPE(NONE, 10, 7, 3), "(None, 3, 5, 8)", 368},
        {"8", "5", "1", "same", "1", "true", SHAPE(NONE, 3, 3, 1), "(None, 3, 3, 8)", 208},
        {"4", "3", "1", "valid", "1", "true", SHAPE(NONE, NONE, NONE, 3), "(None, None, None, 4)", 112},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_layer *conv = layer_with("Conv2D", "conv2d", "filters", cases[i].filters, "kernel_size", cases[i].kernel,
                                    "strides", cases[i].strides, "padding", cases[i].padding, "dilation_rate",
                                    cases[i].dilation, "use_bias", cases[i].use_bias, NULL);
        assert_infer(conv, cases[i].in, cases[i].out, cases[i].params);
        tw_layer_unref(conv);
    }
}

/* ---- Conv1D --------------------------------------------------------------------- */

/* Conv1D with kernel [1, 10] and no bias over 1, 2, 3, 4. */
static void check_conv1d(const char *padding, const char *strides, const char *dilation, tw_shape out,
                         const double *expected)
{
    tw_layer *conv = layer_with("Conv1D", "conv1d", "filters", "1", "kernel_size", "2", "padding", padding, "strides",
                                strides, "dilation_rate", dilation, "use_bias", "false", NULL);
    tw_tensor *x = counting(TW_FLOAT32, SHAPE(1, 4, 1));
    set_weights(conv, x, VALUES(SHAPE(2, 1, 1), 1, 10), NULL);
    assert_tensor(tw_layer_call(conv, x, false), &out, expected);
    tw_layer_unref(conv);
}

static void test_conv1d_values(void)
{
    tw_scope_begin();
    check_conv1d("valid", "1", "1", SHAPE(1, 3, 1), (const double[]){21, 32, 43});
    check_conv1d("valid", "2", "1", SHAPE(1, 2, 1), (const double[]){21, 43});
    check_conv1d("same", "1", "1", SHAPE(1, 4, 1), (const double[]){21, 32, 43, 4});
    /* Causal: zeros before the start, so step t sees steps t-1 and t only. */
    check_conv1d("causal", "1", "1", SHAPE(1, 4, 1), (const double[]){10, 21, 32, 43});
    check_conv1d("causal", "1", "2", SHAPE(1, 4, 1), (const double[]){10, 20, 31, 42});
    check_conv1d("causal", "2", "1", SHAPE(1, 2, 1), (const double[]){10, 32});

    /* Channels and filters, with the bias per filter. */
    tw_layer *conv = layer_with("Conv1D", "conv1d", "filters", "2", "kernel_size", "1", NULL);
    tw_tensor *x = counting(TW_FLOAT32, SHAPE(1, 3, 2));
    set_weights(conv, x, VALUES(SHAPE(1, 2, 2), 1, 10, 100, 1000), VALUES(SHAPE(2), 1, 2));
    ASSERT_TENSOR(tw_layer_call(conv, x, false), SHAPE(1, 3, 2), 202, 2012, 404, 4032, 606, 6052);
    tw_layer_unref(conv);
    tw_scope_end();
}

static void test_conv1d_shapes(void)
{
    static const struct {
        const char *kernel, *strides, *padding, *dilation;
        tw_shape in;
        const char *out;
    } cases[] = {
        {"3", "1", "valid", "1", SHAPE(NONE, 100, 8), "(None, 98, 16)"},
        {"3", "1", "same", "1", SHAPE(NONE, 100, 8), "(None, 100, 16)"},
        {"3", "1", "causal", "1", SHAPE(NONE, 100, 8), "(None, 100, 16)"},
        {"3", "2", "causal", "1", SHAPE(NONE, 100, 8), "(None, 50, 16)"},
        {"3", "3", "valid", "1", SHAPE(NONE, 100, 8), "(None, 33, 16)"},
        {"3", "1", "valid", "4", SHAPE(NONE, 100, 8), "(None, 92, 16)"},
        {"3", "1", "causal", "4", SHAPE(NONE, 100, 8), "(None, 100, 16)"},
        {"3", "1", "valid", "1", SHAPE(NONE, NONE, 8), "(None, None, 16)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_layer *conv = layer_with("Conv1D", "conv1d", "filters", "16", "kernel_size", cases[i].kernel, "strides",
                                    cases[i].strides, "padding", cases[i].padding, "dilation_rate", cases[i].dilation,
                                    NULL);
        assert_infer(conv, cases[i].in, cases[i].out, 3 * 8 * 16 + 16);
        tw_layer_unref(conv);
    }
}

/* ---- pooling ---------------------------------------------------------------------- */

static tw_tensor *call_new(const char *class_name, tw_tensor *x, ...)
{
    tw_layer *layer = tw_layer_new(class_name, "pool");
    va_list ap;
    va_start(ap, x);
    for (const char *key; (key = va_arg(ap, const char *));)
        if (tw_layer_set(layer, key, va_arg(ap, const char *)))
            g_error("%s.%s: %s", class_name, key, tw_last_error());
    va_end(ap);
    tw_tensor *y = tw_layer_call(layer, x, false);
    tw_layer_unref(layer);
    return y;
}

static void test_pooling2d_values(void)
{
    tw_scope_begin();
    tw_tensor *x = counting(TW_FLOAT32, SHAPE(1, 4, 4, 1));
    ASSERT_TENSOR(call_new("MaxPooling2D", x, NULL), SHAPE(1, 2, 2, 1), 6, 8, 14, 16);
    ASSERT_TENSOR(call_new("AveragePooling2D", x, NULL), SHAPE(1, 2, 2, 1), 3.5, 5.5, 11.5, 13.5);
    x = counting(TW_FLOAT32, SHAPE(1, 3, 3, 1));
    ASSERT_TENSOR(call_new("MaxPooling2D", x, "strides", "1", NULL), SHAPE(1, 2, 2, 1), 5, 6, 8, 9);
    /* SAME: the last row and column are windows of their own; the average
     * counts only the elements inside the input. */
    ASSERT_TENSOR(call_new("MaxPooling2D", x, "padding", "same", NULL), SHAPE(1, 2, 2, 1), 5, 6, 8, 9);
    ASSERT_TENSOR(call_new("AveragePooling2D", x, "padding", "same", NULL), SHAPE(1, 2, 2, 1), 3, 4.5, 7.5, 9);
    ASSERT_TENSOR(call_new("AveragePooling2D", x, "pool_size", "3,1", NULL), SHAPE(1, 1, 3, 1), 4, 5, 6);
    tw_scope_end();
}

static void test_pooling1d_values(void)
{
    tw_scope_begin();
    /* Channel 0: 1 5 2 8 3; channel 1 its negation. */
    tw_tensor *x = VALUES(SHAPE(1, 5, 2), 1, -1, 5, -5, 2, -2, 8, -8, 3, -3);
    ASSERT_TENSOR(call_new("MaxPooling1D", x, NULL), SHAPE(1, 2, 2), 5, -1, 8, -2);
    ASSERT_TENSOR(call_new("AveragePooling1D", x, NULL), SHAPE(1, 2, 2), 3, -3, 5, -5);
    ASSERT_TENSOR(call_new("MaxPooling1D", x, "padding", "same", NULL), SHAPE(1, 3, 2), 5, -1, 8, -2, 3, -3);
    ASSERT_TENSOR(call_new("AveragePooling1D", x, "padding", "same", NULL), SHAPE(1, 3, 2), 3, -3, 5, -5, 3, -3);
    ASSERT_TENSOR(call_new("MaxPooling1D", x, "strides", "1", NULL), SHAPE(1, 4, 2), 5, -1, 5, -2, 8, -2, 8, -3);
    ASSERT_TENSOR(call_new("AveragePooling1D", x, "pool_size", "3", "strides", "2", NULL), SHAPE(1, 2, 2), 8.0 / 3,
                  -8.0 / 3, 13.0 / 3, -13.0 / 3);
    tw_scope_end();
}

static void test_global_pooling_values(void)
{
    tw_scope_begin();
    /* Two examples of 2x2 pixels with two channels: 1..8 and 9..16. */
    tw_tensor *x = counting(TW_FLOAT32, SHAPE(2, 2, 2, 2));
    ASSERT_TENSOR(call_new("GlobalAveragePooling2D", x, NULL), SHAPE(2, 2), 4, 5, 12, 13);
    ASSERT_TENSOR(call_new("GlobalMaxPooling2D", x, NULL), SHAPE(2, 2), 7, 8, 15, 16);
    ASSERT_TENSOR(call_new("GlobalAveragePooling2D", x, "keepdims", "true", NULL), SHAPE(2, 1, 1, 2), 4, 5, 12, 13);
    ASSERT_TENSOR(call_new("GlobalMaxPooling2D", x, "keepdims", "true", NULL), SHAPE(2, 1, 1, 2), 7, 8, 15, 16);
    /* Sequences of three steps with one channel. */
    x = VALUES(SHAPE(2, 3, 1), 1, 5, 3, -4, -2, -9);
    ASSERT_TENSOR(call_new("GlobalAveragePooling1D", x, NULL), SHAPE(2, 1), 3, -5);
    ASSERT_TENSOR(call_new("GlobalMaxPooling1D", x, NULL), SHAPE(2, 1), 5, -2);
    ASSERT_TENSOR(call_new("GlobalMaxPooling1D", x, "keepdims", "true", NULL), SHAPE(2, 1, 1), 5, -2);
    tw_scope_end();
}

static void test_pooling_shapes(void)
{
    static const struct {
        const char *class_name, *key, *value, *key2, *value2;
        tw_shape in;
        const char *out;
    } cases[] = {
        {"MaxPooling2D", "padding", "valid", NULL, NULL, SHAPE(NONE, 26, 26, 32), "(None, 13, 13, 32)"},
        {"MaxPooling2D", "padding", "valid", NULL, NULL, SHAPE(NONE, 11, 11, 64), "(None, 5, 5, 64)"},
        {"MaxPooling2D", "padding", "same", NULL, NULL, SHAPE(NONE, 11, 11, 64), "(None, 6, 6, 64)"},
        {"AveragePooling2D", "pool_size", "3", "strides", "2", SHAPE(NONE, 7, 7, 3), "(None, 3, 3, 3)"},
        {"AveragePooling2D", "pool_size", "3,2", "strides", "1,2", SHAPE(NONE, 7, 7, 3), "(None, 5, 3, 3)"},
        {"MaxPooling2D", "pool_size", "4", "padding", "same", SHAPE(NONE, 2, 3, 1), "(None, 1, 1, 1)"},
        {"MaxPooling2D", "padding", "valid", NULL, NULL, SHAPE(NONE, NONE, 8, 2), "(None, None, 4, 2)"},
        {"MaxPooling1D", "padding", "valid", NULL, NULL, SHAPE(NONE, 9, 4), "(None, 4, 4)"},
        {"AveragePooling1D", "padding", "same", NULL, NULL, SHAPE(NONE, 9, 4), "(None, 5, 4)"},
        {"MaxPooling1D", "pool_size", "3", "strides", "1", SHAPE(NONE, 9, 4), "(None, 7, 4)"},
        {"GlobalAveragePooling2D", "keepdims", "false", NULL, NULL, SHAPE(NONE, 5, 5, 64), "(None, 64)"},
        {"GlobalMaxPooling2D", "keepdims", "true", NULL, NULL, SHAPE(NONE, 5, 5, 64), "(None, 1, 1, 64)"},
        {"GlobalAveragePooling1D", "keepdims", "true", NULL, NULL, SHAPE(NONE, NONE, 7), "(None, 1, 7)"},
        {"GlobalMaxPooling1D", "keepdims", "false", NULL, NULL, SHAPE(NONE, 12, 7), "(None, 7)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_layer *pool = layer_with(cases[i].class_name, "pool", cases[i].key, cases[i].value, cases[i].key2,
                                    cases[i].value2, NULL);
        assert_infer(pool, cases[i].in, cases[i].out, 0);
        tw_layer_unref(pool);
    }
}

/* The Fashion-MNIST CNN's convolutional trunk, as Keras' summary counts it. */
static void test_cnn_trunk(void)
{
    tw_model *model = tw_sequential_new("cnn");
    tw_model_add(model, layer_with("Conv2D", NULL, "filters", "32", "activation", "relu", NULL));
    tw_model_add(model, tw_layer_new("MaxPooling2D", NULL));
    tw_model_add(model, layer_with("Conv2D", NULL, "filters", "64", "activation", "relu", NULL));
    tw_model_add(model, tw_layer_new("MaxPooling2D", NULL));
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 2)), ==, "conv2d_1");
    g_assert_cmpstr(tw_layer_name(tw_model_layer_at(model, 3)), ==, "max_pooling2d_1");
    assert_infer(model, SHAPE(NONE, 28, 28, 1), "(None, 5, 5, 64)", 320 + 18496);

    /* Equal examples give equal rows (up to rounding: the kernels may block
     * the batch); relu then max pooling gives no negatives. */
    tw_scope_begin();
    tw_tensor *y = tw_layer_call(model, tw_ones(TW_FLOAT32, TW_SHAPE(3, 28, 28, 1)), true);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_ndim(y), ==, 4);
    g_assert_cmpint(tw_tensor_dim(y, 0), ==, 3);
    g_assert_cmpint(tw_tensor_dim(y, 3), ==, 64);
    const float *v = tw_tensor_data(tw_contiguous(y));
    int64_t row = 5 * 5 * 64;
    for (int64_t i = 0; i < row; i++) {
        g_assert_cmpfloat(v[i], >=, 0);
        g_assert_cmpfloat_with_epsilon(v[i], v[2 * row + i], 1e-5f * (1 + fabsf(v[i])));
    }
    tw_scope_end();
    tw_layer_unref(model);
}

/* ---- errors ------------------------------------------------------------------------ */

static void test_errors(void)
{
    tw_layer *conv = layer_with("Conv2D", "conv2d", "kernel_size", "5", NULL);
    assert_infer_fails(conv, SHAPE(NONE, 3, 3, 1),
                       "Conv2D 'conv2d': kernel 5x5 does not fit input (None, 3, 3, 1) with padding valid");
    assert_infer_fails(conv, SHAPE(NONE, 9, 4, 1),
                       "Conv2D 'conv2d': kernel 5x5 does not fit input (None, 9, 4, 1) with padding valid");
    assert_infer_fails(conv, SHAPE(NONE, 64),
                       "Conv2D 'conv2d': expected input of rank 4 (batch, height, width, channels), got (None, 64)");
    assert_infer_fails(conv, SHAPE(NONE, 8, 8, NONE),
                       "Conv2D 'conv2d': the channels (last) dimension of input (None, 8, 8, None) must be known");
    /* The call path builds and fails the same way, without weights left behind. */
    tw_scope_begin();
    g_assert_null(tw_layer_call(conv, tw_zeros(TW_FLOAT32, TW_SHAPE(2, 3, 3, 1)), false));
    g_assert_cmpstr(tw_last_error(), ==,
                    "Conv2D 'conv2d': kernel 5x5 does not fit input (None, 3, 3, 1) with padding valid");
    g_assert_false(tw_layer_built(conv));
    tw_scope_end();
    tw_layer_unref(conv);

    conv = layer_with("Conv2D", "conv2d", "dilation_rate", "2", NULL);
    assert_infer_fails(conv, SHAPE(NONE, 4, 4, 1), "Conv2D 'conv2d': kernel 3x3 with dilation_rate 2x2 does not fit "
                                                   "input (None, 4, 4, 1) with padding valid");
    /* Settings Keras has and this engine does not compute are refused when set. */
    g_assert_cmpint(tw_layer_set(conv, "data_format", "channels_first"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "Conv2D 'conv2d': data_format channels_first is not supported; only channels_last (channels as "
                    "the last axis) is");
    g_assert_cmpstr(tw_layer_get(conv, "data_format")->choice, ==, "channels_last");
    g_assert_cmpint(tw_layer_set(conv, "data_format", "none"), ==, 0);
    g_assert_cmpint(tw_layer_set(conv, "groups", "2"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "Conv2D 'conv2d': groups=2 is not supported; only groups=1 (every filter sees every input "
                    "channel) is");
    g_assert_cmpint(tw_layer_set(conv, "padding", "causal"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "padding: expected one of valid, same; got \"causal\"");
    g_assert_cmpint(tw_layer_set(conv, "kernel_size", "3,3,3"), ==, -1);
    g_assert_cmpint(tw_layer_set(conv, "strides", "0"), ==, -1);
    tw_layer_unref(conv);

    conv = layer_with("Conv1D", "conv1d", "kernel_size", "5", NULL);
    assert_infer_fails(conv, SHAPE(NONE, 3, 2),
                       "Conv1D 'conv1d': kernel 5 does not fit input (None, 3, 2) with padding valid");
    assert_infer_fails(conv, SHAPE(NONE, 28, 28, 1),
                       "Conv1D 'conv1d': expected input of rank 3 (batch, steps, channels), got (None, 28, 28, 1)");
    g_assert_cmpint(tw_layer_set(conv, "padding", "causal"), ==, 0);
    assert_infer(conv, SHAPE(NONE, 3, 2), "(None, 3, 32)", 5 * 2 * 32 + 32);
    tw_layer_unref(conv);

    tw_layer *pool = layer_with("MaxPooling2D", "max_pooling2d", "pool_size", "3", NULL);
    assert_infer_fails(pool, SHAPE(NONE, 2, 2, 1),
                       "MaxPooling2D 'max_pooling2d': pool 3x3 does not fit input (None, 2, 2, 1) with padding valid");
    g_assert_cmpint(tw_layer_set(pool, "data_format", "channels_first"), ==, -1);
    tw_layer_unref(pool);
    pool = layer_with("AveragePooling1D", "average_pooling1d", "pool_size", "4", NULL);
    assert_infer_fails(pool, SHAPE(NONE, 3, 1), "AveragePooling1D 'average_pooling1d': pool 4 does not fit input "
                                                "(None, 3, 1) with padding valid");
    tw_layer_unref(pool);
    pool = tw_layer_new("GlobalAveragePooling2D", "gap");
    assert_infer_fails(pool, SHAPE(NONE, 10, 3),
                       "GlobalAveragePooling2D 'gap': expected input of rank 4 (batch, height, width, channels), got "
                       "(None, 10, 3)");
    tw_layer_unref(pool);
}

/* ---- classes: Keras' keys, palette texts, defaults ------------------------------- */

static void assert_keys(const char *class_name, const char *group, const char *const *keys)
{
    const tw_layer_class *klass = tw_layer_class_find(class_name);
    g_assert_nonnull(klass);
    g_assert_cmpstr(klass->group, ==, group);
    g_assert_true(klass->summary && klass->summary[0]);
    int n = 0;
    for (; keys[n]; n++) {
        const tw_param_def *def = tw_layer_class_param(klass, keys[n]);
        if (!def)
            g_error("%s has no parameter %s", class_name, keys[n]);
        g_assert_true(def->help && def->help[0]);
    }
    g_assert_cmpint(klass->nparams, ==, n);
}

static void assert_text(const tw_layer *layer, const char *key, const char *expected)
{
    char *text = tw_layer_get_text(layer, key);
    g_assert_cmpstr(text, ==, expected);
    free(text);
}

static void test_classes(void)
{
    static const char *const conv[] = {"filters", "kernel_size", "strides", "padding", "data_format",
                                       "dilation_rate", "groups", "activation", "use_bias", "kernel_initializer",
                                       "bias_initializer", "kernel_regularizer", "bias_regularizer", NULL};
    static const char *const pool[] = {"pool_size", "strides", "padding", "data_format", NULL};
    static const char *const global[] = {"data_format", "keepdims", NULL};
    assert_keys("Conv2D", "Convolution", conv);
    assert_keys("Conv1D", "Convolution", conv);
    static const char *const pools[] = {"MaxPooling2D", "AveragePooling2D", "MaxPooling1D", "AveragePooling1D"};
    for (size_t i = 0; i < G_N_ELEMENTS(pools); i++)
        assert_keys(pools[i], "Pooling", pool);
    static const char *const globals[] = {"GlobalAveragePooling2D", "GlobalMaxPooling2D", "GlobalAveragePooling1D",
                                          "GlobalMaxPooling1D"};
    for (size_t i = 0; i < G_N_ELEMENTS(globals); i++)
        assert_keys(globals[i], "Pooling", global);

    /* Keras' defaults; a single integer stands for a square tuple. */
    tw_layer *layer = tw_layer_new("Conv2D", NULL);
    assert_text(layer, "kernel_size", "3,3");
    assert_text(layer, "strides", "1,1");
    assert_text(layer, "padding", "valid");
    assert_text(layer, "data_format", "channels_last");
    g_assert_cmpint(tw_layer_set(layer, "kernel_size", "(5, 5)"), ==, 0);
    assert_text(layer, "kernel_size", "5,5");
    tw_layer_unref(layer);
    layer = tw_layer_new("MaxPooling2D", NULL);
    assert_text(layer, "pool_size", "2,2");
    assert_text(layer, "strides", "none");
    tw_layer_unref(layer);
    layer = tw_layer_new("AveragePooling1D", NULL);
    assert_text(layer, "pool_size", "2");
    tw_layer_unref(layer);
    layer = tw_layer_new("GlobalAveragePooling2D", NULL);
    assert_text(layer, "keepdims", "false");
    tw_layer_unref(layer);
}

/* ---- gradients -------------------------------------------------------------------- */

static tw_tensor *layer_fn(tw_tensor *const *in, void *layer)
{
    return tw_layer_call(layer, in[0], true);
}

/* Gradients of the input and every weight of a float64 layer built for x. */
static void check_gradients(const char *what, tw_layer *layer, tw_tensor *x)
{
    g_assert_cmpint(tw_layer_set_dtype(layer, TW_FLOAT64), ==, 0);
    tw_shape in = {tw_tensor_ndim(x)};
    memcpy(in.dims, tw_tensor_shape(x), sizeof(int64_t) * in.ndim);
    tw_rng *rng = tw_rng_new(7);
    if (tw_layer_build(layer, &in, rng))
        g_error("%s: %s", what, tw_last_error());
    tw_rng_free(rng);
    tw_tensor *inputs[4] = {x};
    int n = 1;
    for (int i = 0; i < tw_layer_nweights(layer); i++)
        inputs[n++] = tw_layer_weight(layer, i);
    /* A non-zero bias, so the check covers where it is added. */
    if (n == 3)
        tw_assign(inputs[2], gc_tensor(11, -0.5, 0.5, 1, tw_tensor_shape(inputs[2])));
    gc_check(what, layer_fn, n, inputs, layer);
    tw_layer_unref(layer);
}

static void test_conv_gradients(void)
{
    tw_scope_begin();
    check_gradients("Conv2D valid", layer_with("Conv2D", "c", "filters", "3", "kernel_size", "2,3", NULL),
                    gc_tensor(1, -1, 1, TW_SHAPE(2, 4, 5, 2)));
    check_gradients("Conv2D same strided tanh",
                    layer_with("Conv2D", "c", "filters", "2", "strides", "2", "padding", "same", "activation", "tanh",
                               NULL),
                    gc_tensor(2, -1, 1, TW_SHAPE(2, 5, 4, 3)));
    check_gradients("Conv2D dilated", layer_with("Conv2D", "c", "filters", "2", "kernel_size", "2", "dilation_rate",
                                                 "2,1", "use_bias", "false", NULL),
                    gc_tensor(3, -1, 1, TW_SHAPE(1, 5, 4, 2)));
    check_gradients("Conv1D valid strided", layer_with("Conv1D", "c", "filters", "3", "strides", "2", NULL),
                    gc_tensor(4, -1, 1, TW_SHAPE(2, 7, 2)));
    check_gradients("Conv1D causal dilated",
                    layer_with("Conv1D", "c", "filters", "2", "padding", "causal", "dilation_rate", "2", NULL),
                    gc_tensor(5, -1, 1, TW_SHAPE(2, 6, 3)));
    check_gradients("Conv1D same", layer_with("Conv1D", "c", "filters", "2", "padding", "same", "kernel_size", "4",
                                              NULL),
                    gc_tensor(6, -1, 1, TW_SHAPE(1, 5, 2)));
    tw_scope_end();
}

static void test_pool_gradients(void)
{
    tw_scope_begin();
    tw_tensor *img = gc_tensor(21, -1, 1, TW_SHAPE(2, 5, 5, 2)), *seq = gc_tensor(22, -1, 1, TW_SHAPE(2, 7, 3));
    check_gradients("MaxPooling2D", tw_layer_new("MaxPooling2D", "p"), img);
    check_gradients("MaxPooling2D same overlapping", layer_with("MaxPooling2D", "p", "pool_size", "3", "strides", "2",
                                                                "padding", "same", NULL),
                    img);
    check_gradients("AveragePooling2D same", layer_with("AveragePooling2D", "p", "padding", "same", NULL), img);
    check_gradients("MaxPooling1D", layer_with("MaxPooling1D", "p", "pool_size", "3", "strides", "2", NULL), seq);
    check_gradients("AveragePooling1D same", layer_with("AveragePooling1D", "p", "padding", "same", NULL), seq);
    check_gradients("GlobalAveragePooling2D", tw_layer_new("GlobalAveragePooling2D", "p"), img);
    check_gradients("GlobalMaxPooling2D", tw_layer_new("GlobalMaxPooling2D", "p"), img);
    check_gradients("GlobalAveragePooling1D", layer_with("GlobalAveragePooling1D", "p", "keepdims", "true", NULL), seq);
    check_gradients("GlobalMaxPooling1D", tw_layer_new("GlobalMaxPooling1D", "p"), seq);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layers-conv/conv2d-values", test_conv2d_values);
    g_test_add_func("/layers-conv/conv2d-shapes", test_conv2d_shapes);
    g_test_add_func("/layers-conv/conv1d-values", test_conv1d_values);
    g_test_add_func("/layers-conv/conv1d-shapes", test_conv1d_shapes);
    g_test_add_func("/layers-conv/pooling2d-values", test_pooling2d_values);
    g_test_add_func("/layers-conv/pooling1d-values", test_pooling1d_values);
    g_test_add_func("/layers-conv/global-pooling-values", test_global_pooling_values);
    g_test_add_func("/layers-conv/pooling-shapes", test_pooling_shapes);
    g_test_add_func("/layers-conv/cnn-trunk", test_cnn_trunk);
    g_test_add_func("/layers-conv/errors", test_errors);
    g_test_add_func("/layers-conv/classes", test_classes);
    g_test_add_func("/layers-conv/conv-gradients", test_conv_gradients);
    g_test_add_func("/layers-conv/pool-gradients", test_pool_gradients);
    return g_test_run();
}
