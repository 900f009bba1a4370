/* Convolution and resampling layers beyond Conv1D/Conv2D: Conv2DTranspose,
 * Conv1DTranspose, DepthwiseConv2D, SeparableConv2D, SeparableConv1D,
 * UpSampling1D/2D, ZeroPadding1D/2D, Cropping1D/2D and Resizing. Forward
 * values against PyTorch (layers_resample_reference.h, written by
 * tools/resample_reference.py) and hand-computed numbers, output shapes and
 * parameter counts as Keras prints them (MobileNetV2's among them), Keras'
 * config keys and defaults, the messages of inputs and settings that cannot
 * work, gradients against finite differences, the float32 depthwise kernels
 * against float64, and a model of them trained traced and eagerly. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/depthwise_kernels.h"
#include "gradcheck.h"
#include "tw/layers.h"
#include "tw/model.h"

#define NONE (-1)
#define SHAPE(...) ((tw_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})

typedef struct {
    int ndim;
    int64_t dims[4];
    const double *values;
} ref_array;

typedef struct {
    const char *name;
    const char *class_name;
    const char *config[16]; /* key, value pairs, NULL-terminated */
    ref_array input;
    int nweights;
    ref_array weights[3]; /* in the layer's order, Keras' layouts */
    ref_array output;
} ref_case;

#include "layers_resample_reference.h"

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

static tw_tensor *from_ref(const ref_array *a, tw_dtype dtype)
{
    return tw_cast(tw_tensor_from_data(a->values, TW_FLOAT64, a->ndim, a->dims), dtype);
}

static tw_shape shape_of(const tw_tensor *t, bool unknown_batch)
{
    tw_shape s = {tw_tensor_ndim(t)};
    memcpy(s.dims, tw_tensor_shape(t), sizeof(int64_t) * s.ndim);
    if (unknown_batch)
        s.dims[0] = NONE;
    return s;
}

static void build(tw_layer *layer, const tw_tensor *x)
{
    tw_shape in = shape_of(x, true);
    tw_rng *rng = tw_rng_new(1);
    if (tw_layer_build(layer, &in, rng))
        g_error("%s: build: %s", tw_layer_name(layer), tw_last_error());
    tw_rng_free(rng);
}

/* got (any float dtype) against want, element by element. */
static void assert_values(const char *what, tw_tensor *got, int ndim, const int64_t *dims, const double *want,
                          double tol)
{
    if (!got)
        g_error("%s: call failed: %s", what, tw_last_error());
    char sg[128], sw[128];
    tw_shape_str(tw_tensor_ndim(got), tw_tensor_shape(got), sg, sizeof sg);
    tw_shape_str(ndim, dims, sw, sizeof sw);
    if (strcmp(sg, sw))
        g_error("%s: shape %s, expected %s", what, sg, sw);
    tw_tensor *c = tw_cast(got, TW_FLOAT64);
    const double *v = tw_tensor_data(tw_contiguous(c));
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        if (!(fabs(v[i] - want[i]) <= tol * fmax(1, fabs(want[i]))))
            g_error("%s: element %lld is %.10g, expected %.10g", what, (long long)i, v[i], want[i]);
}
#define ASSERT_VALUES(what, t, shape, ...)                                                         \
    do {                                                                                           \
        tw_shape s_ = shape;                                                                       \
        assert_values((what), (t), s_.ndim, s_.dims, (const double[]){__VA_ARGS__}, 1e-6);         \
    } while (0)

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

static void assert_set_fails(tw_layer *layer, const char *key, const char *value, const char *message)
{
    g_assert_cmpint(tw_layer_set(layer, key, value), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
}

/* ---- against PyTorch ---------------------------------------------------------- */

/* Each reference case in float64 (to 1e-9) and float32 (to 1e-5), which
 * run different kernels. Resizes compute their source coordinates in
 * float32 as TensorFlow does, where PyTorch's float64 uses double: their
 * interpolation weights differ in the 8th digit. */
static void test_reference(void)
{
    static const tw_dtype dtypes[] = {TW_FLOAT64, TW_FLOAT32};
    for (size_t c = 0; c < G_N_ELEMENTS(ref_cases); c++) {
        const ref_case *rc = &ref_cases[c];
        bool resize = !strcmp(rc->class_name, "UpSampling2D") || !strcmp(rc->class_name, "Resizing");
        const double tols[] = {resize ? 1e-6 : 1e-9, 1e-5};
        for (int d = 0; d < 2; d++) {
            tw_scope_begin();
            tw_layer *layer = tw_layer_new(rc->class_name, "layer");
            for (int k = 0; rc->config[k]; k += 2)
                if (tw_layer_set(layer, rc->config[k], rc->config[k + 1]))
                    g_error("%s: %s", rc->name, tw_last_error());
            g_assert_cmpint(tw_layer_set_dtype(layer, dtypes[d]), ==, 0);
            tw_tensor *x = from_ref(&rc->input, dtypes[d]);
            build(layer, x);
            g_assert_cmpint(tw_layer_nweights(layer), ==, rc->nweights);
            for (int w = 0; w < rc->nweights; w++)
                if (tw_assign(tw_layer_weight(layer, w), from_ref(&rc->weights[w], dtypes[d])))
                    g_error("%s: weight %d: %s", rc->name, w, tw_last_error());
            char what[160];
            snprintf(what, sizeof what, "%s %s", rc->name, tw_dtype_name(dtypes[d]));
            assert_values(what, tw_layer_call(layer, x, false), rc->output.ndim, rc->output.dims, rc->output.values,
                          tols[d]);
            tw_layer_unref(layer);
            tw_scope_end();
        }
    }
}

/* ---- hand values ------------------------------------------------------------------ */

static tw_tensor *counting(tw_dtype dtype, tw_shape shape)
{
    tw_tensor *t = tw_arange(1, (double)tw_shape_numel(&shape) + 1, 1, dtype);
    return tw_reshape(t, shape.ndim, shape.dims);
}

static tw_tensor *call(tw_layer *layer, tw_tensor *x)
{
    tw_tensor *y = tw_layer_call(layer, x, false);
    tw_layer_unref(layer);
    return y;
}

static void test_hand_values(void)
{
    tw_scope_begin();
    tw_tensor *img = counting(TW_FLOAT32, SHAPE(1, 2, 2, 1)), *seq = counting(TW_FLOAT32, SHAPE(1, 3, 1));

    /* Conv2DTranspose, kernel (kh, kw, out, in): each input pixel stamps
     * its value times the kernel; stride 2 places the stamps side by side. */
    tw_layer *ct = layer_with("Conv2DTranspose", "ct", "filters", "1", "kernel_size", "2", "strides", "2",
                              "use_bias", "false", NULL);
    tw_tensor *row = counting(TW_FLOAT32, SHAPE(1, 1, 2, 1));
    build(ct, row);
    tw_assign(tw_layer_weight(ct, 0), counting(TW_FLOAT32, SHAPE(2, 2, 1, 1)));
    ASSERT_VALUES("Conv2DTranspose stamps", call(ct, row), SHAPE(1, 2, 4, 1), 1, 2, 2, 4, 3, 4, 6, 8);

    /* Two filters from one channel: kernel[..., o, 0]. */
    ct = layer_with("Conv2DTranspose", "ct", "filters", "2", "kernel_size", "1", "use_bias", "false", NULL);
    build(ct, row);
    tw_assign(tw_layer_weight(ct, 0), counting(TW_FLOAT32, SHAPE(1, 1, 2, 1)));
    ASSERT_VALUES("Conv2DTranspose filters", call(ct, row), SHAPE(1, 1, 2, 2), 1, 2, 2, 4);

    /* DepthwiseConv2D with multiplier 2: output channel c * 2 + m. */
    tw_layer *dw = layer_with("DepthwiseConv2D", "dw", "kernel_size", "1", "depth_multiplier", "2", NULL);
    tw_tensor *two = counting(TW_FLOAT32, SHAPE(1, 1, 1, 2));
    build(dw, two);
    tw_assign(tw_layer_weight(dw, 0), counting(TW_FLOAT32, SHAPE(1, 1, 2, 2)));
    tw_assign(tw_layer_weight(dw, 1), tw_full(0.5, TW_FLOAT32, TW_SHAPE(4)));
    ASSERT_VALUES("DepthwiseConv2D multiplier", call(dw, two), SHAPE(1, 1, 1, 4), 1.5, 2.5, 6.5, 8.5);

    ASSERT_VALUES("UpSampling2D nearest", call(layer_with("UpSampling2D", "u", "size", "2,3", NULL), img),
                  SHAPE(1, 4, 6, 1), 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4);
    /* Bilinear doubling: source coordinates -0.25, 0.25, 0.75, 1.25, clamped. */
    ASSERT_VALUES("UpSampling2D bilinear", call(layer_with("UpSampling2D", "u", "interpolation", "bilinear", NULL),
                                                 counting(TW_FLOAT32, SHAPE(1, 1, 2, 1))),
                  SHAPE(1, 2, 4, 1), 1, 1.25, 1.75, 2, 1, 1.25, 1.75, 2);
    ASSERT_VALUES("UpSampling1D", call(tw_layer_new("UpSampling1D", "u"), seq), SHAPE(1, 6, 1), 1, 1, 2, 2, 3, 3);
    ASSERT_VALUES("ZeroPadding2D ((0, 1), (0, 1))",
                  call(layer_with("ZeroPadding2D", "z", "padding", "0,1,0,1", NULL), img), SHAPE(1, 3, 3, 1), 1, 2,
                  0, 3, 4, 0, 0, 0, 0);
    ASSERT_VALUES("ZeroPadding2D (1, 0)", call(layer_with("ZeroPadding2D", "z", "padding", "1,0", NULL), img),
                  SHAPE(1, 4, 2, 1), 0, 0, 1, 2, 3, 4, 0, 0);
    ASSERT_VALUES("ZeroPadding1D (2, 1)", call(layer_with("ZeroPadding1D", "z", "padding", "2,1", NULL), seq),
                  SHAPE(1, 6, 1), 0, 0, 1, 2, 3, 0);
    tw_tensor *big = counting(TW_FLOAT32, SHAPE(1, 3, 4, 1));
    ASSERT_VALUES("Cropping2D ((1, 0), (1, 2))",
                  call(layer_with("Cropping2D", "c", "cropping", "1,0,1,2", NULL), big), SHAPE(1, 2, 1, 1), 6, 10);
    ASSERT_VALUES("Cropping2D 1", call(layer_with("Cropping2D", "c", "cropping", "1", NULL), big), SHAPE(1, 1, 2, 1),
                  6, 7);
    ASSERT_VALUES("Cropping1D", call(tw_layer_new("Cropping1D", "c"), seq), SHAPE(1, 1, 1), 2);
    /* Integer images come out as float32; nearest halving picks pixels 1 and 3 of 0..3. */
    tw_tensor *ints = tw_reshape(tw_arange(0, 4, 1, TW_INT32), 4, (const int64_t[]){1, 1, 4, 1});
    tw_tensor *resized = call(layer_with("Resizing", "r", "height", "1", "width", "2", "interpolation", "nearest",
                                         NULL),
                              ints);
    g_assert_cmpint(tw_tensor_dtype(resized), ==, TW_FLOAT32);
    ASSERT_VALUES("Resizing nearest of int32", resized, SHAPE(1, 1, 2, 1), 1, 3);
    tw_scope_end();
}

/* ---- shapes and parameter counts ------------------------------------------------------- */

static void test_shapes(void)
{
    /* MobileNetV2 (Keras applications, 224x224) as Keras' summary prints it. */
    tw_layer *layer = layer_with("ZeroPadding2D", "Conv1_pad", "padding", "0,1,0,1", NULL);
    assert_infer(layer, SHAPE(NONE, 224, 224, 3), "(None, 225, 225, 3)", 0);
    assert_infer(layer, SHAPE(NONE, 112, 112, 144), "(None, 113, 113, 144)", 0);
    tw_layer_unref(layer);
    layer = layer_with("DepthwiseConv2D", "block_1_depthwise", "strides", "2", "use_bias", "false", NULL);
    assert_infer(layer, SHAPE(NONE, 113, 113, 144), "(None, 56, 56, 144)", 1296);
    tw_layer_unref(layer);
    layer = layer_with("DepthwiseConv2D", "block_14_depthwise", "padding", "same", "use_bias", "false", NULL);
    assert_infer(layer, SHAPE(NONE, 7, 7, 1344), "(None, 7, 7, 1344)", 12096);
    tw_layer_unref(layer);

    static const struct {
        const char *class_name, *config[12];
        tw_shape in;
        const char *out;
        int64_t params;
    } cases[] = {
        {"Conv2DTranspose", {"filters", "64", "strides", "2", "padding", "same"}, SHAPE(NONE, 7, 7, 128),
         "(None, 14, 14, 64)", 73792},
        {"Conv2DTranspose", {"filters", "64", "strides", "2"}, SHAPE(NONE, 7, 7, 128), "(None, 15, 15, 64)", 73792},
        {"Conv2DTranspose", {"filters", "8", "strides", "2", "padding", "same", "output_padding", "1"},
         SHAPE(NONE, 7, 5, 3), "(None, 14, 10, 8)", 224},
        {"Conv2DTranspose", {"filters", "8", "kernel_size", "2", "strides", "3"}, SHAPE(NONE, NONE, 4, 3),
         "(None, None, 12, 8)", 104},
        {"Conv2DTranspose", {"filters", "1", "dilation_rate", "2"}, SHAPE(NONE, 4, 4, 1), "(None, 8, 8, 1)", 10},
        {"Conv1DTranspose", {"filters", "16", "kernel_size", "5", "strides", "2"}, SHAPE(NONE, 10, 4),
         "(None, 23, 16)", 336},
        {"Conv1DTranspose", {"filters", "4", "strides", "4", "padding", "same", "use_bias", "false"},
         SHAPE(NONE, 10, 4), "(None, 40, 4)", 48},
        {"DepthwiseConv2D", {"depth_multiplier", "2"}, SHAPE(NONE, 8, 8, 3), "(None, 6, 6, 6)", 60},
        {"DepthwiseConv2D", {"kernel_size", "5", "dilation_rate", "2", "padding", "same"}, SHAPE(NONE, 8, 8, 3),
         "(None, 8, 8, 3)", 78},
        {"SeparableConv2D", {"filters", "64"}, SHAPE(NONE, 32, 32, 32), "(None, 30, 30, 64)", 2400},
        {"SeparableConv2D", {"filters", "8", "depth_multiplier", "3", "strides", "2", "padding", "same", "use_bias",
                             "false"},
         SHAPE(NONE, 9, 9, 4), "(None, 5, 5, 8)", 204},
        {"SeparableConv1D", {"filters", "16", "kernel_size", "5"}, SHAPE(NONE, 100, 8), "(None, 96, 16)", 184},
        {"SeparableConv1D", {"filters", "16", "padding", "causal"}, SHAPE(NONE, NONE, 8), "(None, None, 16)", 168},
        {"UpSampling2D", {"size", "2"}, SHAPE(NONE, 7, 7, 16), "(None, 14, 14, 16)", 0},
        {"UpSampling2D", {"size", "2,3"}, SHAPE(NONE, NONE, 7, 16), "(None, None, 21, 16)", 0},
        {"UpSampling1D", {"size", "3"}, SHAPE(NONE, 5, 2), "(None, 15, 2)", 0},
        {"ZeroPadding2D", {NULL}, SHAPE(NONE, 28, 28, 1), "(None, 30, 30, 1)", 0},
        {"ZeroPadding2D", {"padding", "2,3"}, SHAPE(NONE, 28, NONE, 1), "(None, 32, None, 1)", 0},
        {"ZeroPadding1D", {NULL}, SHAPE(NONE, 10, 2), "(None, 12, 2)", 0},
        {"Cropping2D", {"cropping", "2,1,0,3"}, SHAPE(NONE, 28, 28, 1), "(None, 25, 25, 1)", 0},
        {"Cropping1D", {"cropping", "0,4"}, SHAPE(NONE, 10, 2), "(None, 6, 2)", 0},
        {"Resizing", {"height", "64", "width", "32"}, SHAPE(NONE, NONE, NONE, 3), "(None, 64, 32, 3)", 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        layer = tw_layer_new(cases[i].class_name, "layer");
        for (int k = 0; cases[i].config[k]; k += 2)
            if (tw_layer_set(layer, cases[i].config[k], cases[i].config[k + 1]))
                g_error("case %zu: %s", i, tw_last_error());
        assert_infer(layer, cases[i].in, cases[i].out, cases[i].params);
        tw_layer_unref(layer);
    }
}

/* ---- messages ------------------------------------------------------------------------ */

static void test_errors(void)
{
    tw_layer *ct = layer_with("Conv2DTranspose", "ct", "strides", "2", NULL);
    assert_set_fails(ct, "output_padding", "2,1",
                     "Conv2DTranspose 'ct': output_padding 2 must be less than the stride 2 (axis 1)");
    g_assert_true(tw_layer_get(ct, "output_padding")->is_null);
    g_assert_cmpint(tw_layer_set(ct, "kernel_size", "4"), ==, 0);
    g_assert_cmpint(tw_layer_set(ct, "padding", "same"), ==, 0);
    g_assert_cmpint(tw_layer_set(ct, "output_padding", "0"), ==, 0);
    assert_infer_fails(ct, SHAPE(NONE, 4, 4, 1),
                       "Conv2DTranspose 'ct': input (None, 4, 4, 1) gives an output height of 6 (kernel 4, stride 2, "
                       "padding same, output_padding 0), which a convolution does not map back to 4");
    assert_infer_fails(ct, SHAPE(NONE, 4, 4),
                       "Conv2DTranspose 'ct': expected input of rank 4 (batch, height, width, channels), got "
                       "(None, 4, 4)");
    assert_infer_fails(ct, SHAPE(NONE, 4, 4, NONE),
                       "Conv2DTranspose 'ct': the channels (last) dimension of input (None, 4, 4, None) must be known");
    tw_layer_unref(ct);
    ct = tw_layer_new("Conv1DTranspose", "ct");
    assert_infer_fails(ct, SHAPE(NONE, 4, 4, 1), "Conv1DTranspose 'ct': expected input of rank 3 (batch, steps, "
                                                 "channels), got (None, 4, 4, 1)");
    tw_layer_unref(ct);

    static const char *const classes[] = {"Conv2DTranspose", "Conv1DTranspose", "DepthwiseConv2D", "SeparableConv2D",
                                          "SeparableConv1D", "UpSampling2D",    "ZeroPadding2D",   "ZeroPadding1D",
                                          "Cropping2D",      "Cropping1D",      "Resizing"};
    for (size_t i = 0; i < G_N_ELEMENTS(classes); i++) {
        tw_layer *layer = tw_layer_new(classes[i], "l");
        char want[256];
        snprintf(want, sizeof want,
                 "%s 'l': data_format channels_first is not supported; only channels_last (channels as the last "
                 "axis) is",
                 classes[i]);
        assert_set_fails(layer, "data_format", "channels_first", want);
        tw_layer_unref(layer);
    }

    tw_layer *dw = tw_layer_new("DepthwiseConv2D", "dw");
    assert_infer_fails(dw, SHAPE(NONE, 2, 2, 3),
                       "DepthwiseConv2D 'dw': kernel 3x3 does not fit input (None, 2, 2, 3) with padding valid");
    tw_layer_unref(dw);
    tw_layer *sep = tw_layer_new("SeparableConv2D", "sep");
    assert_set_fails(sep, "groups", "2",
                     "SeparableConv2D 'sep': groups=2 is not supported; only groups=1 (every filter sees every input "
                     "channel) is");
    tw_layer_unref(sep);

    tw_layer *up = tw_layer_new("UpSampling2D", "up");
    assert_set_fails(up, "interpolation", "bicubic",
                     "UpSampling2D 'up': interpolation bicubic is not supported; nearest and bilinear are");
    assert_infer_fails(up, SHAPE(NONE, 4, 4), "UpSampling2D 'up': expected input of rank 4 (batch, height, width, "
                                              "channels), got (None, 4, 4)");
    tw_layer_unref(up);
    tw_layer *resizing = tw_layer_new("Resizing", "r");
    assert_set_fails(resizing, "interpolation", "lanczos3",
                     "Resizing 'r': interpolation lanczos3 is not supported; bilinear and nearest are");
    assert_set_fails(resizing, "pad_to_aspect_ratio", "true",
                     "Resizing 'r': pad_to_aspect_ratio is not supported (crop_to_aspect_ratio is)");
    assert_set_fails(resizing, "antialias", "true", "Resizing 'r': antialias is not supported");
    assert_infer_fails(resizing, SHAPE(NONE, 0, 4, 3), "Resizing 'r': cannot resize images with no pixels: input "
                                                       "(None, 0, 4, 3)");
    tw_layer_unref(resizing);

    tw_layer *pad = tw_layer_new("ZeroPadding2D", "pad");
    assert_set_fails(pad, "padding", "1,2,3",
                     "ZeroPadding2D 'pad': padding: expected 1, 2 or 4 integers (all sides; height and width; or top, "
                     "bottom, left, right), got 3");
    assert_set_fails(pad, "padding", "-1", "padding: expected a non-negative integer, got -1");
    tw_layer_unref(pad);
    pad = tw_layer_new("ZeroPadding1D", "pad");
    assert_set_fails(pad, "padding", "1,2,3",
                     "ZeroPadding1D 'pad': padding: expected 1 or 2 integers (both ends, or start and end), got 3");
    tw_layer_unref(pad);
    tw_layer *crop = layer_with("Cropping2D", "crop", "cropping", "1,0,2,2", NULL);
    assert_infer_fails(crop, SHAPE(NONE, 5, 4, 1),
                       "Cropping2D 'crop': cropping 2 + 2 leaves nothing of the width of input (None, 5, 4, 1)");
    /* A length unknown when inferred is checked when called. */
    assert_infer(crop, SHAPE(NONE, 5, NONE, 1), "(None, 4, None, 1)", 0);
    tw_rng *rng = tw_rng_new(1);
    g_assert_cmpint(tw_layer_build(crop, &SHAPE(NONE, 5, NONE, 1), rng), ==, 0);
    tw_rng_free(rng);
    tw_scope_begin();
    g_assert_null(tw_layer_call(crop, tw_zeros(TW_FLOAT32, TW_SHAPE(1, 5, 3, 1)), false));
    g_assert_cmpstr(tw_last_error(), ==,
                    "Cropping2D 'crop': cropping 2 + 2 leaves nothing of the width of input (1, 5, 3, 1)");
    tw_scope_end();
    tw_layer_unref(crop);

    /* The engine ops name themselves and the shapes. */
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(1, 4, 4, 3));
    g_assert_null(tw_depthwise_conv2d(x, tw_zeros(TW_FLOAT32, TW_SHAPE(3, 3, 2, 1)), NULL));
    g_assert_cmpstr(tw_last_error(), ==,
                    "depthwise_conv2d: input channels 3 do not match filter in_channels 2: input (1, 4, 4, 3), filter "
                    "(3, 3, 2, 1)");
    g_assert_null(tw_resize(x, 0, 2, TW_RESIZE_BILINEAR));
    g_assert_cmpstr(tw_last_error(), ==, "resize: the size must be at least 1x1, got 0x2: images (1, 4, 4, 3)");
    g_assert_null(tw_resize(tw_zeros(TW_INT32, TW_SHAPE(1, 4, 4, 3)), 2, 2, TW_RESIZE_NEAREST));
    g_assert_cmpstr(tw_last_error(), ==, "resize: needs a float32 or float64 tensor, got int32 images (1, 4, 4, 3)");
    g_assert_null(tw_conv2d_transpose(x, tw_zeros(TW_FLOAT32, TW_SHAPE(3, 3, 2, 3)), 11, 11,
                                      &(tw_conv2d_params){.stride_h = 2, .stride_w = 2}));
    g_assert_cmpstr(tw_last_error(), ==,
                    "conv2d_backprop_input: grad_output (1, 4, 4, 3) does not match the convolution's output "
                    "(1, 5, 5, 3) for input (1, 11, 11, 2) and filter (3, 3, 2, 3)");
    tw_scope_end();
}

/* ---- Keras' config keys and defaults ------------------------------------------------------ */

static void assert_keys(const char *class_name, const char *const *keys, size_t n)
{
    const tw_layer_class *klass = tw_layer_class_find(class_name);
    g_assert_nonnull(klass);
    g_assert_cmpint(klass->nparams, ==, (int)n);
    for (size_t i = 0; i < n; i++)
        g_assert_cmpstr(klass->params[i].key, ==, keys[i]);
}
#define ASSERT_KEYS(class_name, ...)                                                                          \
    do {                                                                                                      \
        static const char *const k_[] = {__VA_ARGS__};                                                        \
        assert_keys((class_name), k_, G_N_ELEMENTS(k_));                                                      \
    } while (0)

static void assert_default(const char *class_name, const char *key, const char *expected)
{
    tw_layer *layer = tw_layer_new(class_name, NULL);
    char *text = tw_layer_get_text(layer, key);
    g_assert_cmpstr(text, ==, expected);
    free(text);
    tw_layer_unref(layer);
}

static void test_classes(void)
{
    ASSERT_KEYS("Conv2DTranspose", "filters", "kernel_size", "strides", "padding", "output_padding", "data_format",
                "dilation_rate", "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                "kernel_regularizer", "bias_regularizer");
    ASSERT_KEYS("Conv1DTranspose", "filters", "kernel_size", "strides", "padding", "output_padding", "data_format",
                "dilation_rate", "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                "kernel_regularizer", "bias_regularizer");
    ASSERT_KEYS("DepthwiseConv2D", "kernel_size", "strides", "padding", "depth_multiplier", "data_format",
                "dilation_rate", "activation", "use_bias", "depthwise_initializer", "bias_initializer",
                "depthwise_regularizer", "bias_regularizer");
    static const char *const separable[] = {
        "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "depth_multiplier", "groups",
        "activation", "use_bias", "depthwise_initializer", "pointwise_initializer", "bias_initializer",
        "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer"};
    assert_keys("SeparableConv2D", separable, G_N_ELEMENTS(separable));
    assert_keys("SeparableConv1D", separable, G_N_ELEMENTS(separable));
    ASSERT_KEYS("UpSampling2D", "size", "data_format", "interpolation");
    ASSERT_KEYS("UpSampling1D", "size");
    ASSERT_KEYS("ZeroPadding2D", "padding", "data_format");
    ASSERT_KEYS("ZeroPadding1D", "padding", "data_format");
    ASSERT_KEYS("Cropping2D", "cropping", "data_format");
    ASSERT_KEYS("Cropping1D", "cropping", "data_format");
    ASSERT_KEYS("Resizing", "height", "width", "interpolation", "crop_to_aspect_ratio", "pad_to_aspect_ratio",
                "fill_mode", "fill_value", "antialias", "data_format");

    assert_default("Conv2DTranspose", "output_padding", "none");
    assert_default("Conv2DTranspose", "padding", "valid");
    assert_default("DepthwiseConv2D", "depth_multiplier", "1");
    assert_default("DepthwiseConv2D", "depthwise_initializer", "glorot_uniform");
    assert_default("SeparableConv2D", "pointwise_initializer", "glorot_uniform");
    assert_default("UpSampling2D", "size", "2,2");
    assert_default("UpSampling2D", "interpolation", "nearest");
    assert_default("UpSampling1D", "size", "2");
    assert_default("ZeroPadding2D", "padding", "1,1");
    assert_default("ZeroPadding1D", "padding", "1");
    assert_default("Cropping2D", "cropping", "0,0,0,0");
    assert_default("Cropping1D", "cropping", "1,1");
    assert_default("Resizing", "interpolation", "bilinear");
    assert_default("Resizing", "crop_to_aspect_ratio", "false");

    /* Keras' nested tuples in the text form read as the flat list. */
    tw_layer *pad = layer_with("ZeroPadding2D", "pad", "padding", "((0, 1), (2, 3))", NULL);
    char *text = tw_layer_get_text(pad, "padding");
    g_assert_cmpstr(text, ==, "0,1,2,3");
    free(text);
    assert_infer(pad, SHAPE(NONE, 4, 4, 1), "(None, 5, 9, 1)", 0);
    tw_layer_unref(pad);

    /* Weights under Keras' names and shapes, in Keras' order. */
    tw_layer *sep = layer_with("SeparableConv2D", "sep", "filters", "4", "depth_multiplier", "2", NULL);
    tw_scope_begin();
    build(sep, tw_zeros(TW_FLOAT32, TW_SHAPE(1, 5, 5, 3)));
    static const char *const names[] = {"depthwise_kernel", "pointwise_kernel", "bias"};
    static const char *const shapes[] = {"(3, 3, 3, 2)", "(1, 1, 6, 4)", "(4,)"};
    g_assert_cmpint(tw_layer_nweights(sep), ==, 3);
    for (int i = 0; i < 3; i++) {
        char buf[64];
        g_assert_cmpstr(tw_layer_weight_spec(sep, i)->name, ==, names[i]);
        tw_shape_str(tw_tensor_ndim(tw_layer_weight(sep, i)), tw_tensor_shape(tw_layer_weight(sep, i)), buf,
                     sizeof buf);
        g_assert_cmpstr(buf, ==, shapes[i]);
    }
    tw_scope_end();
    tw_layer_unref(sep);
}

/* ---- gradients ------------------------------------------------------------------------- */

static tw_tensor *layer_fn(tw_tensor *const *in, void *layer)
{
    return tw_layer_call(layer, in[0], true);
}

/* Gradients of the input and every weight of a float64 layer built for x. */
static void check_gradients(const char *what, tw_layer *layer, tw_tensor *x)
{
    g_assert_cmpint(tw_layer_set_dtype(layer, TW_FLOAT64), ==, 0);
    build(layer, x);
    tw_tensor *inputs[4] = {x};
    int n = 1;
    for (int i = 0; i < tw_layer_nweights(layer); i++)
        inputs[n++] = tw_layer_weight(layer, i);
    gc_check(what, layer_fn, n, inputs, layer);
    tw_layer_unref(layer);
}

static void test_gradients(void)
{
    tw_scope_begin();
    tw_tensor *img = gc_tensor(1, -1, 1, TW_SHAPE(2, 4, 5, 3)), *seq = gc_tensor(2, -1, 1, TW_SHAPE(2, 6, 3));
    check_gradients("Conv2DTranspose same strided",
                    layer_with("Conv2DTranspose", "l", "filters", "2", "strides", "2", "padding", "same",
                               "activation", "tanh", "bias_initializer", "random_normal", NULL),
                    img);
    check_gradients("Conv2DTranspose valid output_padding",
                    layer_with("Conv2DTranspose", "l", "filters", "2", "kernel_size", "2,3", "strides", "3,2",
                               "output_padding", "2,1", NULL),
                    img);
    check_gradients("Conv1DTranspose", layer_with("Conv1DTranspose", "l", "filters", "2", "strides", "2", NULL), seq);
    check_gradients("DepthwiseConv2D multiplier 3 strided same",
                    layer_with("DepthwiseConv2D", "l", "depth_multiplier", "3", "strides", "2", "padding", "same",
                               "bias_initializer", "random_normal", NULL),
                    img);
    check_gradients("DepthwiseConv2D dilated",
                    layer_with("DepthwiseConv2D", "l", "kernel_size", "2", "dilation_rate", "2", NULL), img);
    check_gradients("SeparableConv2D", layer_with("SeparableConv2D", "l", "filters", "2", "padding", "same",
                                                  "depth_multiplier", "2", NULL),
                    img);
    check_gradients("SeparableConv1D causal",
                    layer_with("SeparableConv1D", "l", "filters", "2", "padding", "causal", NULL), seq);
    check_gradients("UpSampling2D nearest", layer_with("UpSampling2D", "l", "size", "2,3", NULL), img);
    check_gradients("UpSampling2D bilinear", layer_with("UpSampling2D", "l", "interpolation", "bilinear", NULL), img);
    check_gradients("UpSampling1D", tw_layer_new("UpSampling1D", "l"), seq);
    check_gradients("ZeroPadding2D", layer_with("ZeroPadding2D", "l", "padding", "0,1,2,0", NULL), img);
    check_gradients("ZeroPadding1D", tw_layer_new("ZeroPadding1D", "l"), seq);
    check_gradients("Cropping2D", layer_with("Cropping2D", "l", "cropping", "1,0,1,2", NULL), img);
    check_gradients("Cropping1D", tw_layer_new("Cropping1D", "l"), seq);
    check_gradients("Resizing bilinear down", layer_with("Resizing", "l", "height", "3", "width", "3", NULL), img);
    check_gradients("Resizing bilinear up crop",
                    layer_with("Resizing", "l", "height", "7", "width", "6", "crop_to_aspect_ratio", "true", NULL),
                    img);
    check_gradients("Resizing nearest", layer_with("Resizing", "l", "height", "6", "width", "3", "interpolation",
                                                   "nearest", NULL),
                    img);
    tw_scope_end();
}

/* The float32 kernels of every instruction set the CPU has against float64
 * on shapes with a full block of 64 channels and a tail, for all three
 * passes of the depthwise convolution. */
static void depthwise_with_grads(tw_tensor *x, tw_tensor *w, const tw_conv2d_params *p, tw_tensor *out[3])
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tape_watch(tape, w);
    tw_tensor *y = tw_depthwise_conv2d(x, w, p);
    tw_tensor *loss = tw_sum_all(tw_mul(y, tw_cos(y)));
    tw_tape_end(tape);
    tw_tensor *grads[2] = {NULL, NULL};
    g_assert_cmpint(tw_tape_gradient(tape, loss, 2, (tw_tensor *const[]){x, w}, grads), ==, 0);
    tw_tape_free(tape);
    out[0] = y, out[1] = grads[0], out[2] = grads[1];
}

static void test_depthwise_float32(void)
{
    static const struct {
        int64_t x[4], w[4];
        tw_conv2d_params p;
    } cases[] = {
        {{2, 7, 9, 70}, {3, 3, 70, 1}, {.stride_h = 2, .stride_w = 2, .padding = TW_PADDING_SAME}},
        {{1, 6, 8, 70}, {3, 2, 70, 1}, {.dilation_h = 2, .dilation_w = 3, .padding = TW_PADDING_VALID}},
        {{2, 5, 6, 24}, {3, 3, 24, 3}, {.stride_w = 2, .padding = TW_PADDING_SAME}},
    };
    for (int isa = 0; isa < TWK_DEPTHWISE_ISA_COUNT; isa++) {
        if (!twk_depthwise_isa_available(isa)) {
            g_test_message("%s: this CPU lacks it, not run", twk_depthwise_isa_names[isa]);
            continue;
        }
        twk_depthwise_isa was = twk_depthwise_set_isa(isa);
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
            tw_scope_begin();
            tw_tensor *x = gc_tensor(40 + (unsigned)i, -1, 1, 4, cases[i].x);
            tw_tensor *w = gc_tensor(50 + (unsigned)i, -0.5, 0.5, 4, cases[i].w);
            tw_tensor *want[3], *got[3];
            depthwise_with_grads(x, w, &cases[i].p, want);
            depthwise_with_grads(tw_cast(x, TW_FLOAT32), tw_cast(w, TW_FLOAT32), &cases[i].p, got);
            static const char *const part[] = {"forward", "input gradient", "filter gradient"};
            for (int k = 0; k < 3; k++) {
                char what[128];
                snprintf(what, sizeof what, "depthwise %s case %zu %s float32", twk_depthwise_isa_names[isa], i,
                         part[k]);
                tw_tensor *c = tw_contiguous(want[k]);
                assert_values(what, got[k], tw_tensor_ndim(c), tw_tensor_shape(c), tw_tensor_data(c), 1e-4);
            }
            tw_scope_end();
        }
        twk_depthwise_set_isa(was);
    }
}

/* ---- training, traced and eager ------------------------------------------------------- */

/* An autoencoder-shaped stack of every 2-D layer here, compiled with MSE. */
static tw_model *resampler(void)
{
    tw_model *m = tw_sequential_new("resampler");
    tw_model_add(m, tw_input_layer(&SHAPE(NONE, 8, 8, 2)));
    tw_model_add(m, layer_with("SeparableConv2D", NULL, "filters", "4", "padding", "same", "activation", "relu",
                               NULL));
    tw_model_add(m, layer_with("DepthwiseConv2D", NULL, "strides", "2", "padding", "same", "depth_multiplier", "2",
                               NULL));
    tw_model_add(m, layer_with("Conv2DTranspose", NULL, "filters", "3", "strides", "2", "padding", "same", NULL));
    tw_model_add(m, layer_with("ZeroPadding2D", NULL, "padding", "0,1,2,0", NULL));
    tw_model_add(m, layer_with("Cropping2D", NULL, "cropping", "1,0,0,2", NULL));
    tw_model_add(m, layer_with("UpSampling2D", NULL, "interpolation", "bilinear", NULL));
    tw_model_add(m, layer_with("Resizing", NULL, "height", "8", "width", "8", NULL));
    tw_model_add(m, layer_with("Conv2D", NULL, "filters", "2", "kernel_size", "1", NULL));
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("adam", 0.01), &loss, 0, NULL), ==, 0);
    return m;
}

static tw_history *fit_resampler(tw_model *m, tw_tensor *x, tw_trace_mode mode)
{
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 20;
    opt.seed = 3;
    opt.batch_size = 8;
    opt.traced = mode;
    tw_history *h = tw_model_fit(m, x, x, &opt);
    if (!h)
        g_error("fit: %s", tw_last_error());
    return h;
}

/* The same losses whether fit traces its step into a graph or not, and
 * they fall: the layers learn to reproduce their input. */
static void test_training(void)
{
    tw_tensor *x = gc_tensor(60, -1, 1, 4, (const int64_t[]){24, 8, 8, 2});
    tw_tensor *x32 = tw_cast(x, TW_FLOAT32);
    tw_model *traced = resampler(), *eager = resampler();
    tw_history *ht = fit_resampler(traced, x32, TW_TRACE_ON), *he = fit_resampler(eager, x32, TW_TRACE_OFF);
    g_assert_cmpint(ht->epochs, ==, 20);
    for (int e = 0; e < ht->epochs; e++) {
        double lt = ht->epoch_logs[e].values[0], le = he->epoch_logs[e].values[0];
        g_assert_cmpstr(ht->epoch_logs[e].names[0], ==, "loss");
        if (!(fabs(lt - le) <= 1e-5 * (1 + fabs(le))))
            g_error("epoch %d: traced loss %.9g, eager %.9g", e, lt, le);
    }
    g_assert_cmpfloat(ht->epoch_logs[19].values[0], <, 0.8 * ht->epoch_logs[0].values[0]);
    tw_history_free(ht);
    tw_history_free(he);
    tw_layer_unref(traced);
    tw_layer_unref(eager);
    tw_tensor_unref(x);
    tw_tensor_unref(x32);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layers-resample/reference", test_reference);
    g_test_add_func("/layers-resample/hand-values", test_hand_values);
    g_test_add_func("/layers-resample/shapes", test_shapes);
    g_test_add_func("/layers-resample/errors", test_errors);
    g_test_add_func("/layers-resample/classes", test_classes);
    g_test_add_func("/layers-resample/gradients", test_gradients);
    g_test_add_func("/layers-resample/depthwise-float32", test_depthwise_float32);
    g_test_add_func("/layers-resample/training", test_training);
    return g_test_run();
}
