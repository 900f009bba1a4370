/* The normalization, regularization, reshaping, activation and
 * preprocessing layers added beside the core ones: LayerNormalization,
 * GroupNormalization, UnitNormalization, PReLU and the image transform
 * against PyTorch (tests/layers_norm_reg_ref.h, written by
 * tools/gen_layers_norm_reg_ref.py); the others against hand values. Keras'
 * parameter counts from tw_layer_infer, gradients by finite differences,
 * the random layers' training and inference behaviour and their seeded
 * reproducibility, activity penalties in the training step, and the
 * messages of bad values and shapes. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "internal.h"
#include "layers_norm_reg_ref.h"
#include "tw/model.h"

/* ---- helpers ------------------------------------------------------------------ */

static tw_tensor *from(const double *values, tw_dtype dtype, int ndim, const int64_t *shape)
{
    return tw_cast(tw_tensor_from_data(values, TW_FLOAT64, ndim, shape), dtype);
}
#define MAKE(dtype, shape, ...) from((const double[]){__VA_ARGS__}, dtype, shape)

/* The shape and the values (row-major) of t, within tol. */
static void check(const char *what, tw_tensor *t, int ndim, const int64_t *shape, const double *expected, double tol)
{
    if (!t)
        g_error("%s: expected a tensor, got an error: %s", what, tw_last_error());
    char a[96], b[96];
    if (tw_tensor_ndim(t) != ndim || memcmp(tw_tensor_shape(t), shape, sizeof(int64_t) * ndim))
        g_error("%s: shape %s, expected %s", what, tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), a, sizeof a),
                tw_shape_str(ndim, shape, b, sizeof b));
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *v = tw_tensor_data(c);
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        if (!(fabs(v[i] - expected[i]) <= tol))
            g_error("%s: element %lld is %.12g, expected %.12g", what, (long long)i, v[i], expected[i]);
}
#define CHECK(what, t, shape, tol, ...) check(what, t, shape, (const double[]){__VA_ARGS__}, tol)

/* Two tensors hold the same values exactly. */
static bool same(tw_tensor *a, tw_tensor *b)
{
    tw_tensor *ca = tw_contiguous(tw_cast(a, TW_FLOAT64)), *cb = tw_contiguous(tw_cast(b, TW_FLOAT64));
    return tw_tensor_numel(ca) == tw_tensor_numel(cb) &&
           !memcmp(tw_tensor_data(ca), tw_tensor_data(cb), sizeof(double) * (size_t)tw_tensor_numel(ca));
}

static void check_error(const char *expected)
{
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_error_clear();
}

static tw_layer *layer_with(const char *class_name, const char *name, int n, const char *const (*kv)[2])
{
    tw_layer *layer = tw_layer_new(class_name, name);
    if (!layer)
        g_error("%s: %s", class_name, tw_last_error());
    for (int i = 0; i < n; i++)
        if (tw_layer_set(layer, kv[i][0], kv[i][1]))
            g_error("%s.%s = %s: %s", class_name, kv[i][0], kv[i][1], tw_last_error());
    return layer;
}
#define LAYER(class_name, name, ...)                                                                              \
    layer_with(class_name, name, sizeof((const char *const[][2]){__VA_ARGS__}) / sizeof(const char *const[2]), \
               (const char *const[][2]){__VA_ARGS__})
#define PLAIN(class_name, name) layer_with(class_name, name, 0, NULL)

static void build(tw_layer *layer, tw_shape input)
{
    tw_rng *rng = tw_rng_new(1);
    if (tw_layer_build(layer, &input, rng))
        g_error("build: %s", tw_last_error());
    tw_rng_free(rng);
}

static void set_weight(tw_layer *layer, int index, tw_tensor *value)
{
    if (tw_assign(tw_layer_weight(layer, index), value))
        g_error("assign: %s", tw_last_error());
}

/* Output shape and Keras' parameter counts for an input shape. */
static void check_infer(const tw_layer *layer, tw_shape input, tw_shape expected, int64_t trainable,
                        int64_t non_trainable)
{
    tw_shape out;
    int64_t t = -1, nt = -1;
    char a[96], b[96];
    if (tw_layer_infer(layer, &input, &out, &t, &nt))
        g_error("infer: %s", tw_last_error());
    if (out.ndim != expected.ndim || memcmp(out.dims, expected.dims, sizeof(int64_t) * out.ndim))
        g_error("%s: output %s, expected %s", tw_layer_name(layer), tw_shape_format(&out, a, sizeof a),
                tw_shape_format(&expected, b, sizeof b));
    g_assert_cmpint(t, ==, trainable);
    g_assert_cmpint(nt, ==, non_trainable);
}

static void check_infer_error(const tw_layer *layer, tw_shape input, const char *message)
{
    tw_shape out;
    g_assert_cmpint(tw_layer_infer(layer, &input, &out, NULL, NULL), ==, -1);
    check_error(message);
}

static tw_tensor *call_training(tw_tensor *const *inputs, void *layer)
{
    return tw_layer_call(layer, inputs[0], true);
}

/* A call with the given generator, training or not. */
static tw_tensor *call_with(tw_layer *layer, tw_tensor *x, bool training, uint64_t seed)
{
    tw_rng *rng = tw_rng_new(seed);
    tw_call_context ctx = {.training = training, .rng = rng};
    tw_tensor *y = tw_layer_call_ex(layer, x, &ctx);
    tw_rng_free(rng);
    if (!y)
        g_error("%s: %s", tw_layer_name(layer), tw_last_error());
    return y;
}

/* Training with the same draws on every call, for finite differences. */
static tw_tensor *call_seeded(tw_tensor *const *inputs, void *layer)
{
    return call_with(layer, inputs[0], true, 5);
}

/* The layer in float64, its gradient to the input checked against finite
 * differences in training with the same draws on every call. The layer
 * is taken. */
static void check_seeded_gradient(const char *what, tw_layer *layer, unsigned seed, int ndim, const int64_t *shape)
{
    tw_layer_set_dtype(layer, TW_FLOAT64);
    gc_check(what, call_seeded, 1, (tw_tensor *[]){gc_tensor(seed, -1, 1, ndim, shape)}, layer);
    tw_layer_unref(layer);
}

/* ---- LayerNormalization ------------------------------------------------------------ */

static void test_layer_normalization(void)
{
    tw_scope_begin();
    tw_layer *ln = PLAIN("LayerNormalization", "ln");
    check_infer(ln, (tw_shape){3, {-1, 3, 4}}, (tw_shape){3, {-1, 3, 4}}, 8, 0);
    tw_layer_set_dtype(ln, TW_FLOAT64);
    build(ln, (tw_shape){3, {-1, 3, 4}});
    g_assert_cmpstr(tw_layer_weight_spec(ln, 0)->name, ==, "gamma");
    set_weight(ln, 0, from(ln_gamma, TW_FLOAT64, TW_SHAPE(4)));
    set_weight(ln, 1, from(ln_beta, TW_FLOAT64, TW_SHAPE(4)));
    tw_tensor *x = from(ln_x, TW_FLOAT64, TW_SHAPE(2, 3, 4));
    check("layer_norm (PyTorch)", tw_layer_call(ln, x, true), TW_SHAPE(2, 3, 4), ln_y, 1e-12);
    check("layer_norm inference", tw_layer_call(ln, x, false), TW_SHAPE(2, 3, 4), ln_y, 1e-12);
    gc_check("layer_norm", call_training, 3, (tw_tensor *[]){tw_copy(x), tw_layer_weight(ln, 0), tw_layer_weight(ln, 1)},
             ln);

    /* Over axes 1 and 2: weights of shape (3, 4) as Keras makes them. */
    tw_layer *ln2 = LAYER("LayerNormalization", "ln2", {"axis", "[1, 2]"});
    check_infer(ln2, (tw_shape){3, {-1, 3, 4}}, (tw_shape){3, {-1, 3, 4}}, 24, 0);
    tw_layer_set_dtype(ln2, TW_FLOAT64);
    build(ln2, (tw_shape){3, {-1, 3, 4}});
    g_assert_cmpint(tw_layer_weight_spec(ln2, 0)->shape.ndim, ==, 2);
    set_weight(ln2, 0, from(ln2_gamma, TW_FLOAT64, TW_SHAPE(3, 4)));
    set_weight(ln2, 1, from(ln2_beta, TW_FLOAT64, TW_SHAPE(3, 4)));
    check("layer_norm axes 1, 2 (PyTorch)", tw_layer_call(ln2, x, true), TW_SHAPE(2, 3, 4), ln2_y, 1e-12);

    /* float32 agrees within float32's precision */
    tw_layer *ln32 = PLAIN("LayerNormalization", "ln32");
    build(ln32, (tw_shape){3, {-1, 3, 4}});
    set_weight(ln32, 0, from(ln_gamma, TW_FLOAT32, TW_SHAPE(4)));
    set_weight(ln32, 1, from(ln_beta, TW_FLOAT32, TW_SHAPE(4)));
    check("layer_norm float32", tw_layer_call(ln32, tw_cast(x, TW_FLOAT32), false), TW_SHAPE(2, 3, 4), ln_y, 2e-5);

    tw_layer *plain = LAYER("LayerNormalization", "p", {"center", "false"}, {"scale", "false"});
    check_infer(plain, (tw_shape){2, {-1, 5}}, (tw_shape){2, {-1, 5}}, 0, 0);
    CHECK("layer_norm without weights", tw_layer_call(plain, MAKE(TW_FLOAT64, TW_SHAPE(1, 2), 1, 3), false),
          TW_SHAPE(1, 2), 1e-12, -1 / sqrt(1 + 1e-3), 1 / sqrt(1 + 1e-3));
    check_infer_error(ln2, (tw_shape){2, {-1, 5}}, "LayerNormalization 'ln2': axis 2 is out of range for input (None, 5)");
    tw_layer *rms = PLAIN("LayerNormalization", "rms");
    g_assert_cmpint(tw_layer_set(rms, "rms_scaling", "true"), ==, -1);
    tw_layer_unref(rms);
    check_error("rms_scaling: true is not supported (its meaning differs between Keras 3 releases)");
    tw_layer_unref(ln);
    tw_layer_unref(ln2);
    tw_layer_unref(ln32);
    tw_layer_unref(plain);
    tw_scope_end();
}

/* ---- GroupNormalization --------------------------------------------------------------- */

static void test_group_normalization(void)
{
    tw_scope_begin();
    tw_layer *gn = LAYER("GroupNormalization", "gn", {"groups", "2"});
    check_infer(gn, (tw_shape){4, {-1, 3, 3, 4}}, (tw_shape){4, {-1, 3, 3, 4}}, 8, 0);
    tw_layer_set_dtype(gn, TW_FLOAT64);
    build(gn, (tw_shape){4, {-1, 3, 3, 4}});
    set_weight(gn, 0, from(ln_gamma, TW_FLOAT64, TW_SHAPE(4)));
    set_weight(gn, 1, from(ln_beta, TW_FLOAT64, TW_SHAPE(4)));
    tw_tensor *x = from(gn_x, TW_FLOAT64, TW_SHAPE(2, 3, 3, 4));
    check("group_norm (PyTorch)", tw_layer_call(gn, x, true), TW_SHAPE(2, 3, 3, 4), gn_y, 1e-12);
    gc_check("group_norm", call_training, 3, (tw_tensor *[]){tw_copy(x), tw_layer_weight(gn, 0), tw_layer_weight(gn, 1)},
             gn);

    tw_layer *bad = LAYER("GroupNormalization", "bad", {"groups", "3"});
    check_infer_error(bad, (tw_shape){4, {-1, 3, 3, 4}},
                      "GroupNormalization 'bad': 4 channels cannot be split into 3 groups (input (None, 3, 3, 4))");
    /* Keras' default of 32 groups needs 32 channels at least */
    tw_layer *dflt = PLAIN("GroupNormalization", "dflt");
    check_infer(dflt, (tw_shape){3, {-1, 10, 64}}, (tw_shape){3, {-1, 10, 64}}, 128, 0);
    check_infer_error(dflt, (tw_shape){2, {-1, 16}},
                      "GroupNormalization 'dflt': 16 channels cannot be split into 32 groups (input (None, 16))");
    tw_layer_unref(gn);
    tw_layer_unref(bad);
    tw_layer_unref(dflt);
    tw_scope_end();
}

/* ---- UnitNormalization ----------------------------------------------------------------- */

static void test_unit_normalization(void)
{
    tw_scope_begin();
    tw_layer *un = PLAIN("UnitNormalization", "un");
    tw_layer_set_dtype(un, TW_FLOAT64);
    check_infer(un, (tw_shape){3, {-1, 3, 4}}, (tw_shape){3, {-1, 3, 4}}, 0, 0);
    tw_tensor *x = from(ln_x, TW_FLOAT64, TW_SHAPE(2, 3, 4));
    check("normalize (PyTorch)", tw_layer_call(un, x, false), TW_SHAPE(2, 3, 4), un_y, 1e-12);
    gc_check("unit_norm", call_training, 1, (tw_tensor *[]){tw_copy(x)}, un);
    /* a zero vector stays zero instead of dividing by zero */
    CHECK("zero vector", tw_layer_call(un, MAKE(TW_FLOAT64, TW_SHAPE(1, 2), 0, 0), false), TW_SHAPE(1, 2), 0, 0, 0);
    tw_layer *both = LAYER("UnitNormalization", "both", {"axis", "1,2"});
    CHECK("over two axes", tw_layer_call(both, MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 2), 1, 1, 1, 1), false),
          TW_SHAPE(1, 2, 2), 1e-7, 0.5, 0.5, 0.5, 0.5);
    tw_layer_unref(un);
    tw_layer_unref(both);
    tw_scope_end();
}

/* ---- PReLU and ThresholdedReLU ---------------------------------------------------------- */

static void test_prelu(void)
{
    tw_scope_begin();
    tw_layer *p = LAYER("PReLU", "p", {"shared_axes", "1,2"});
    check_infer(p, (tw_shape){4, {-1, 3, 3, 4}}, (tw_shape){4, {-1, 3, 3, 4}}, 4, 0);
    tw_layer *each = PLAIN("PReLU", "each");
    check_infer(each, (tw_shape){4, {-1, 3, 3, 4}}, (tw_shape){4, {-1, 3, 3, 4}}, 36, 0);
    check_infer_error(each, (tw_shape){3, {-1, -1, 4}},
                      "PReLU 'each': axis 1 of input (None, None, 4) must have a known size or be shared");
    tw_layer_set_dtype(p, TW_FLOAT64);
    build(p, (tw_shape){4, {-1, 3, 3, 4}});
    g_assert_cmpstr(tw_layer_weight_spec(p, 0)->name, ==, "alpha");
    set_weight(p, 0, from(prelu_alpha, TW_FLOAT64, TW_SHAPE(1, 1, 4)));
    tw_tensor *x = from(gn_x, TW_FLOAT64, TW_SHAPE(2, 3, 3, 4));
    check("prelu (PyTorch)", tw_layer_call(p, x, false), TW_SHAPE(2, 3, 3, 4), prelu_y, 1e-12);
    gc_check("prelu", call_training, 2, (tw_tensor *[]){tw_copy(x), tw_layer_weight(p, 0)}, p);
    /* alpha starts at zero: a plain ReLU */
    CHECK("prelu at its start", tw_layer_call(each, MAKE(TW_FLOAT32, TW_SHAPE(1, 2), -2, 3), false), TW_SHAPE(1, 2), 0,
          0, 3);

    tw_layer *t = PLAIN("ThresholdedReLU", "t");
    CHECK("thresholded relu, theta 1", tw_layer_call(t, MAKE(TW_FLOAT32, TW_SHAPE(5), -1, 0.5, 1, 1.5, 2), false),
          TW_SHAPE(5), 0, 0, 0, 0, 1.5, 2);
    tw_layer_set_dtype(t, TW_FLOAT64);
    /* away from theta, where the gradient is 0 or 1 */
    gc_check("thresholded_relu", call_training, 1,
             (tw_tensor *[]){MAKE(TW_FLOAT64, TW_SHAPE(2, 3), -1, 0.2, 0.8, 1.2, 2, 3)}, t);
    tw_layer_unref(p);
    tw_layer_unref(each);
    tw_layer_unref(t);
    tw_scope_end();
}

/* ---- Permute and RepeatVector ---------------------------------------------------------- */

static void test_permute_repeat(void)
{
    tw_scope_begin();
    tw_layer *p = LAYER("Permute", "p", {"dims", "(2, 1)"});
    check_infer(p, (tw_shape){3, {-1, 2, 3}}, (tw_shape){3, {-1, 3, 2}}, 0, 0);
    CHECK("permute", tw_layer_call(p, MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 3), 1, 2, 3, 4, 5, 6), false), TW_SHAPE(1, 3, 2),
          0, 1, 4, 2, 5, 3, 6);
    tw_layer_set_dtype(p, TW_FLOAT64);
    gc_check("permute", call_training, 1, (tw_tensor *[]){gc_tensor(1, -1, 1, TW_SHAPE(2, 2, 3))}, p);
    check_infer_error(p, (tw_shape){4, {-1, 2, 3, 4}}, "Permute 'p': dims (2, 1) needs input of rank 3, got (None, 2, 3, 4)");
    tw_layer *fresh = tw_layer_clone(p, "fresh");
    g_assert_cmpint(tw_layer_set(fresh, "dims", "1,1"), ==, -1);
    check_error("dims: expected a permutation of 1 to 2, got (1, 1)");
    tw_layer_unref(fresh);

    tw_layer *r = LAYER("RepeatVector", "r", {"n", "3"});
    check_infer(r, (tw_shape){2, {-1, 2}}, (tw_shape){3, {-1, 3, 2}}, 0, 0);
    CHECK("repeat_vector", tw_layer_call(r, MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 1, 2, 3, 4), false), TW_SHAPE(2, 3, 2), 0,
          1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4);
    tw_layer_set_dtype(r, TW_FLOAT64);
    gc_check("repeat_vector", call_training, 1, (tw_tensor *[]){gc_tensor(2, -1, 1, TW_SHAPE(2, 2))}, r);
    check_infer_error(r, (tw_shape){3, {-1, 2, 2}},
                      "RepeatVector 'r': expected input of rank 2 (batch, features), got (None, 2, 2)");
    tw_layer_unref(p);
    tw_layer_unref(r);
    tw_scope_end();
}

/* ---- noise layers ------------------------------------------------------------------------ */

/* Mean and standard deviation of t's values. */
static void moments_of(tw_tensor *t, double *mean, double *std)
{
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *v = tw_tensor_data(c);
    int64_t n = tw_tensor_numel(c);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i], s2 += v[i] * v[i];
    *mean = s / (double)n;
    *std = sqrt(s2 / (double)n - *mean * *mean);
}

/* Identity in inference; in training the same generator seed gives the
 * same draws and another seed others. */
static void check_random_layer(tw_layer *layer, tw_tensor *x)
{
    g_assert_true(same(call_with(layer, x, false, 1), x));
    g_assert_true(same(tw_layer_call(layer, x, false), x));
    tw_tensor *a = call_with(layer, x, true, 7), *b = call_with(layer, x, true, 7), *c = call_with(layer, x, true, 8);
    g_assert_true(same(a, b));
    g_assert_false(same(a, c));
    g_assert_false(same(a, x));
    /* called alone, a layer draws from a generator seeded from its name */
    tw_layer *twin = tw_layer_clone(layer, tw_layer_name(layer));
    g_assert_true(same(tw_layer_call(layer, x, true), tw_layer_call(twin, x, true)));
    tw_layer_unref(twin);
}

static void test_gaussian_noise(void)
{
    tw_scope_begin();
    tw_layer *g = LAYER("GaussianNoise", "noise", {"stddev", "0.5"});
    check_infer(g, (tw_shape){2, {-1, 10}}, (tw_shape){2, {-1, 10}}, 0, 0);
    tw_tensor *x = tw_full(3, TW_FLOAT32, TW_SHAPE(200, 100));
    check_random_layer(g, x);
    double mean, std;
    moments_of(tw_sub(call_with(g, x, true, 3), x), &mean, &std);
    g_assert_cmpfloat(fabs(mean), <, 0.02);
    g_assert_cmpfloat(fabs(std - 0.5), <, 0.02);

    tw_layer *d = LAYER("GaussianDropout", "gdrop", {"rate", "0.2"});
    check_random_layer(d, x);
    moments_of(tw_div_scalar(call_with(d, x, true, 3), 3), &mean, &std);
    g_assert_cmpfloat(fabs(mean - 1), <, 0.02);
    g_assert_cmpfloat(fabs(std - sqrt(0.2 / 0.8)), <, 0.02);
    tw_layer *fresh = PLAIN("GaussianDropout", "fresh");
    g_assert_cmpint(tw_layer_set(fresh, "rate", "1"), ==, -1);
    tw_layer_unref(fresh);
    check_error("rate: expected a number from 0 up to (not including) 1, got 1");
    g_assert_null(tw_layer_call(g, tw_zeros(TW_INT32, TW_SHAPE(2, 2)), true));
    check_error("GaussianNoise 'noise': expected a float input, got int32");
    check_seeded_gradient("gaussian_noise", LAYER("GaussianNoise", "noise64", {"stddev", "0.5"}), 11,
                          TW_SHAPE(3, 4));
    check_seeded_gradient("gaussian_dropout", LAYER("GaussianDropout", "gdrop64", {"rate", "0.2"}), 12,
                          TW_SHAPE(3, 4));
    tw_layer_unref(g);
    tw_layer_unref(d);
    tw_scope_end();
}

static void test_alpha_dropout(void)
{
    tw_scope_begin();
    const double rate = 0.3, alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
    const double a = pow((1 - rate) * (1 + rate * alpha_p * alpha_p), -0.5), b = -a * alpha_p * rate;
    tw_layer *ad = LAYER("AlphaDropout", "ad", {"rate", "0.3"});
    tw_layer_set_dtype(ad, TW_FLOAT64);
    tw_tensor *x = gc_tensor(4, -2, 2, TW_SHAPE(100, 50));
    check_random_layer(ad, x);
    /* every value is a * x + b (kept) or a * alpha' + b (dropped) */
    tw_tensor *y = tw_contiguous(call_with(ad, x, true, 5));
    const double *xv = tw_tensor_data(x), *yv = tw_tensor_data(y);
    int64_t dropped = 0, n = tw_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        bool kept = fabs(yv[i] - (a * xv[i] + b)) < 1e-12, drop = fabs(yv[i] - (a * alpha_p + b)) < 1e-12;
        if (!kept && !drop)
            g_error("alpha dropout: element %lld is %g, neither kept (%g) nor dropped (%g)", (long long)i, yv[i],
                    a * xv[i] + b, a * alpha_p + b);
        dropped += !kept;
    }
    g_assert_cmpfloat(fabs((double)dropped / (double)n - rate), <, 0.03);
    /* on SELU's fixed point (mean 0, variance 1) the output keeps them */
    double mean, std;
    tw_rng *rng = tw_rng_new(9);
    moments_of(call_with(ad, tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(400, 100), 0, 1), true, 6), &mean, &std);
    tw_rng_free(rng);
    g_assert_cmpfloat(fabs(mean), <, 0.03);
    g_assert_cmpfloat(fabs(std - 1), <, 0.03);
    /* the dropped values are constants: their gradient is zero */
    gc_check("alpha_dropout", call_seeded, 1, (tw_tensor *[]){gc_tensor(13, -1, 1, TW_SHAPE(4, 5))}, ad);
    tw_layer_unref(ad);
    tw_scope_end();
}

/* Each (example, channel) of y is all zero or all x / (1 - rate). */
static void check_channels(tw_tensor *x, tw_tensor *y, int64_t examples, int64_t per_example, int64_t channels,
                           double rate, int64_t *dropped)
{
    tw_tensor *cx = tw_contiguous(tw_cast(x, TW_FLOAT64)), *cy = tw_contiguous(tw_cast(y, TW_FLOAT64));
    const double *xv = tw_tensor_data(cx), *yv = tw_tensor_data(cy);
    for (int64_t n = 0; n < examples; n++)
        for (int64_t c = 0; c < channels; c++) {
            int64_t first = n * per_example * channels + c;
            bool zero = yv[first] == 0;
            *dropped += zero;
            for (int64_t k = 0; k < per_example; k++) {
                int64_t i = first + k * channels;
                double want = zero ? 0 : xv[i] / (1 - rate);
                if (fabs(yv[i] - want) > 1e-5)
                    g_error("spatial dropout: example %lld channel %lld: %g, expected %g", (long long)n, (long long)c,
                            yv[i], want);
            }
        }
}

static void test_spatial_dropout(void)
{
    tw_scope_begin();
    tw_layer *s2 = LAYER("SpatialDropout2D", "s2", {"rate", "0.4"});
    check_infer(s2, (tw_shape){4, {-1, 4, 4, 8}}, (tw_shape){4, {-1, 4, 4, 8}}, 0, 0);
    check_infer_error(s2, (tw_shape){3, {-1, 4, 8}},
                      "SpatialDropout2D 's2': expected input of rank 4 (batch, height, width, channels), got (None, 4, 8)");
    tw_tensor *x = tw_add_scalar(gc_tensor(5, 0.5, 1.5, TW_SHAPE(20, 3, 3, 10)), 0);
    x = tw_cast(x, TW_FLOAT32);
    check_random_layer(s2, x);
    int64_t dropped = 0;
    check_channels(x, call_with(s2, x, true, 2), 20, 9, 10, 0.4, &dropped);
    g_assert_cmpint(dropped, >, 40);
    g_assert_cmpint(dropped, <, 120);

    tw_layer *s1 = LAYER("SpatialDropout1D", "s1", {"rate", "0.5"});
    tw_tensor *seq = tw_cast(gc_tensor(6, 0.5, 1.5, TW_SHAPE(20, 5, 6)), TW_FLOAT32);
    check_random_layer(s1, seq);
    dropped = 0;
    check_channels(seq, call_with(s1, seq, true, 2), 20, 5, 6, 0.5, &dropped);
    g_assert_cmpint(dropped, >, 30);
    g_assert_cmpint(dropped, <, 90);
    check_seeded_gradient("spatial_dropout1d", LAYER("SpatialDropout1D", "s1_64", {"rate", "0.5"}), 14,
                          TW_SHAPE(3, 4, 5));
    check_seeded_gradient("spatial_dropout2d", LAYER("SpatialDropout2D", "s2_64", {"rate", "0.4"}), 15,
                          TW_SHAPE(2, 3, 3, 4));
    tw_layer_unref(s1);
    tw_layer_unref(s2);
    tw_scope_end();
}

/* ---- ActivityRegularization ------------------------------------------------------------ */

/* The output plus the activity penalty it collects (a scalar, broadcast),
 * so the penalty's gradient reaches the input. */
static tw_tensor *call_collecting(tw_tensor *const *inputs, void *layer)
{
    tw_tensor *penalty = NULL;
    tw_call_context ctx = {.training = true, .activity_loss = &penalty};
    tw_tensor *y = tw_layer_call_ex(layer, inputs[0], &ctx);
    if (!y || !penalty)
        g_error("activity regularization: %s", y ? "no penalty collected" : tw_last_error());
    tw_tensor *out = tw_add(y, penalty);
    tw_tensor_unref(penalty);
    return out;
}

/* dense(1, no bias, kernel 0.5) then, when l2 > 0, ActivityRegularization(l2). */
static tw_model *activity_model(double l2)
{
    tw_model *m = tw_sequential_new("m");
    tw_layer *d = tw_dense(1, "linear");
    tw_layer_set(d, "use_bias", "false");
    tw_model_add(m, d);
    if (l2 > 0) {
        char text[32];
        snprintf(text, sizeof text, "%g", l2);
        tw_model_add(m, LAYER("ActivityRegularization", "act", {"l2", text}));
    }
    g_assert_cmpint(tw_model_build(m, &(tw_shape){2, {-1, 1}}, 1), ==, 0);
    set_weight(d, 0, MAKE(TW_FLOAT32, TW_SHAPE(1, 1), 0.5));
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("sgd", 0.1), &loss, 0, NULL), ==, 0);
    return m;
}

static double kernel_of(tw_model *m)
{
    return tw_tensor_item(tw_layer_weight(tw_model_layer_at(m, 0), 0));
}

static void test_activity_regularization(void)
{
    tw_scope_begin();
    tw_layer *act = LAYER("ActivityRegularization", "act", {"l1", "0.1"}, {"l2", "0.01"});
    check_infer(act, (tw_shape){2, {-1, 3}}, (tw_shape){2, {-1, 3}}, 0, 0);
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 1, -2, 3, 0);
    /* collected: (0.1 * 6 + 0.01 * 14) / batch 2 */
    tw_tensor *penalty = NULL;
    tw_call_context ctx = {.training = true, .activity_loss = &penalty};
    g_assert_true(same(tw_layer_call_ex(act, x, &ctx), x));
    g_assert_nonnull(penalty);
    g_assert_cmpfloat(fabs(tw_tensor_item(penalty) - 0.37), <, 1e-6);
    /* a second call adds to the same sum */
    tw_layer_call_ex(act, x, &ctx);
    g_assert_cmpfloat(fabs(tw_tensor_item(penalty) - 0.74), <, 1e-6);
    tw_tensor_unref(penalty);
    /* nothing collects it: the identity */
    g_assert_true(same(tw_layer_call(act, x, true), x));
    tw_layer_unref(act);
    /* the penalty's gradient, L1's sign and L2's 2x, over the batch */
    tw_layer *act64 = LAYER("ActivityRegularization", "act64", {"l1", "0.1"}, {"l2", "0.3"});
    tw_layer_set_dtype(act64, TW_FLOAT64);
    gc_check("activity_regularization", call_collecting, 1, (tw_tensor *[]){gc_tensor(16, -1, 1, TW_SHAPE(3, 4))},
             act64);
    tw_layer_unref(act64);

    /* The training step adds it to the loss: x = [1, 2], y = 0, kernel 0.5,
     * SGD 0.1. The mean squared error's gradient is mean(2 * pred * x) =
     * 2.5; l2 = 0.1 adds 0.1 * sum(2 * pred * x) / 2 = 0.25. */
    tw_tensor *xs = MAKE(TW_FLOAT32, TW_SHAPE(2, 1), 1, 2), *ys = tw_zeros(TW_FLOAT32, TW_SHAPE(2, 1));
    tw_model *plain = activity_model(0), *reg = activity_model(0.1);
    g_assert_cmpint(tw_model_train_on_batch(plain, xs, ys, NULL), ==, 0);
    g_assert_cmpint(tw_model_train_on_batch(reg, xs, ys, NULL), ==, 0);
    g_assert_cmpfloat(fabs(kernel_of(plain) - (0.5 - 0.1 * 2.5)), <, 1e-6);
    g_assert_cmpfloat(fabs(kernel_of(reg) - (0.5 - 0.1 * 2.75)), <, 1e-6);
    /* and so does fit's traced step */
    tw_model *traced = activity_model(0.1);
    tw_fit_options o = tw_fit_options_default();
    o.batch_size = 2;
    o.shuffle = false;
    o.traced = TW_TRACE_ON;
    tw_history *h = tw_model_fit(traced, xs, ys, &o);
    if (!h)
        g_error("fit: %s", tw_last_error());
    tw_history_free(h);
    g_assert_cmpfloat(fabs(kernel_of(traced) - (0.5 - 0.1 * 2.75)), <, 1e-6);
    tw_layer_unref(plain);
    tw_layer_unref(reg);
    tw_layer_unref(traced);
    tw_scope_end();
}

/* ---- Normalization (preprocessing) and CenterCrop ------------------------------------------ */

static void test_normalization(void)
{
    tw_scope_begin();
    /* adapted statistics as weights: mean (3), variance (3), count () */
    tw_layer *n = LAYER("Normalization", "n", {"axis", "[3]"});
    check_infer(n, (tw_shape){4, {-1, 224, 224, 3}}, (tw_shape){4, {-1, 224, 224, 3}}, 0, 7);
    build(n, (tw_shape){4, {-1, 2, 1, 3}});
    static const char *const names[] = {"mean", "variance", "count"};
    for (int i = 0; i < 3; i++)
        g_assert_cmpstr(tw_layer_weight_spec(n, i)->name, ==, names[i]);
    g_assert_cmpint(tw_tensor_ndim(tw_layer_weight(n, 2)), ==, 0);
    set_weight(n, 0, MAKE(TW_FLOAT32, TW_SHAPE(3), 1, 2, 3));
    set_weight(n, 1, MAKE(TW_FLOAT32, TW_SHAPE(3), 4, 0.25, 0));
    /* (x - mean) / max(sqrt(variance), 1e-7); bytes are cast first */
    tw_tensor *x = tw_cast(MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 1, 3), 3, 2, 3, 5, 3, 3), TW_UINT8);
    CHECK("normalization by weights", tw_layer_call(n, x, false), TW_SHAPE(1, 2, 1, 3), 1e-6, 1, 0, 0, 2, 2, 0);
    /* one mean for everything */
    tw_layer *all = LAYER("Normalization", "all", {"axis", "none"});
    check_infer(all, (tw_shape){2, {-1, 5}}, (tw_shape){2, {-1, 5}}, 0, 3);

    /* from the config: one number, or one per index */
    tw_layer *c = LAYER("Normalization", "c", {"mean", "[0.5]"}, {"variance", "[0.25]"});
    check_infer(c, (tw_shape){2, {-1, 2}}, (tw_shape){2, {-1, 2}}, 0, 0);
    CHECK("normalization by config", tw_layer_call(c, MAKE(TW_FLOAT32, TW_SHAPE(1, 2), 1.5, 0), false), TW_SHAPE(1, 2),
          1e-6, 2, -1);
    tw_layer *c64 = LAYER("Normalization", "c64", {"mean", "0.485, 0.456, 0.406"}, {"variance", "1,4,0.25"});
    tw_layer_set_dtype(c64, TW_FLOAT64);
    gc_check("normalization", call_training, 1, (tw_tensor *[]){gc_tensor(17, -1, 1, TW_SHAPE(2, 3))}, c64);
    tw_layer_unref(c64);
    tw_layer *per = LAYER("Normalization", "per", {"mean", "0.485, 0.456, 0.406"}, {"variance", "1,4,0.25"},
                          {"invert", "true"});
    char *text = tw_layer_get_text(per, "mean");
    g_assert_cmpstr(text, ==, "0.485,0.456,0.406");
    free(text);
    CHECK("invert", tw_layer_call(per, MAKE(TW_FLOAT32, TW_SHAPE(1, 3), 1, 1, 2), false), TW_SHAPE(1, 3), 1e-6,
          1.485, 2.456, 1.406);
    check_infer_error(per, (tw_shape){2, {-1, 4}},
                      "Normalization 'per': mean has 3 values; input (None, 4) needs 1 or 4");
    /* a clone (unbuilt) owns its own copy of the numbers */
    tw_layer *copy = tw_layer_clone(per, "copy");
    tw_layer_unref(per);
    text = tw_layer_get_text(copy, "variance");
    g_assert_cmpstr(text, ==, "1,4,0.25");
    free(text);
    g_assert_cmpint(tw_layer_set(copy, "variance", "none"), ==, 0);
    check_infer_error(copy, (tw_shape){2, {-1, 3}},
                      "Normalization 'copy': mean and variance must be given together or both left none");
    g_assert_cmpint(tw_layer_set(copy, "variance", "1,-1,2"), ==, -1);
    check_error("variance: expected a non-negative number, got -1");
    g_assert_cmpint(tw_layer_set(copy, "mean", "0.5,abc"), ==, -1);
    check_error("mean: expected a number or a list of numbers such as \"0.5,0.25\", got \"0.5,abc\"");
    tw_layer_unref(copy);
    tw_layer_unref(n);
    tw_layer_unref(all);
    tw_layer_unref(c);
    tw_scope_end();
}

/* Rescaling with a scale per channel, as Keras 3's EfficientNet writes it. */
static void test_rescaling_per_channel(void)
{
    tw_scope_begin();
    tw_layer *r = LAYER("Rescaling", "r", {"scale", "[2.0, 0.5, -1]"}, {"offset", "1"});
    check_infer(r, (tw_shape){4, {-1, 2, 2, 3}}, (tw_shape){4, {-1, 2, 2, 3}}, 0, 0);
    CHECK("per channel", tw_layer_call(r, MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 1, 2, 3, 4, 6, 8), false), TW_SHAPE(2, 3),
          0, 3, 2, -2, 9, 4, -7);
    check_infer_error(r, (tw_shape){2, {-1, 4}},
                      "Rescaling 'r': scale has 3 values; input (None, 4) needs 1 or 4 (its last axis)");
    tw_layer *r64 = LAYER("Rescaling", "r64", {"scale", "0.5,2"}, {"offset", "[1, -1]"});
    tw_layer_set_dtype(r64, TW_FLOAT64);
    gc_check("rescaling per channel", call_training, 1, (tw_tensor *[]){gc_tensor(3, -1, 1, TW_SHAPE(3, 2))}, r64);
    tw_layer_unref(r);
    tw_layer_unref(r64);
    tw_scope_end();
}

static void test_center_crop(void)
{
    tw_scope_begin();
    tw_layer *cc = LAYER("CenterCrop", "cc", {"height", "2"}, {"width", "3"});
    check_infer(cc, (tw_shape){4, {-1, 5, 6, 1}}, (tw_shape){4, {-1, 2, 3, 1}}, 0, 0);
    double v[30];
    for (int i = 0; i < 30; i++)
        v[i] = i;
    /* rows from floor(3 / 2) = 1, columns from floor(3 / 2) = 1 */
    tw_tensor *img = tw_cast(from(v, TW_FLOAT32, TW_SHAPE(1, 5, 6, 1)), TW_UINT8);
    tw_tensor *y = tw_layer_call(cc, img, false);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
    CHECK("center crop", y, TW_SHAPE(1, 2, 3, 1), 0, 7, 8, 9, 13, 14, 15);
    CHECK("one image", tw_layer_call(cc, from(v, TW_FLOAT32, TW_SHAPE(5, 6, 1)), false), TW_SHAPE(2, 3, 1), 0, 7, 8, 9,
          13, 14, 15);
    check_infer_error(cc, (tw_shape){4, {-1, 5, 2, 1}},
                      "CenterCrop 'cc': images (None, 5, 2, 1) are smaller than the 2x3 crop (Keras would resize them "
                      "up; not supported)");
    tw_layer *cc64 = tw_layer_clone(cc, "cc64");
    tw_layer_set_dtype(cc64, TW_FLOAT64);
    gc_check("center_crop", call_training, 1, (tw_tensor *[]){gc_tensor(7, -1, 1, TW_SHAPE(2, 4, 4, 2))}, cc64);
    tw_layer_unref(cc64);
    tw_layer_unref(cc);
    tw_scope_end();
}

/* ---- the image transform against PyTorch, and hand values -------------------------------- */

static void test_image_transform(void)
{
    tw_scope_begin();
    tw_tensor *img = from(it_img, TW_FLOAT64, TW_SHAPE(2, 5, 6, 2));
    static const struct {
        const char *what;
        const double *transforms, *want;
        tw_image_interpolation interpolation;
        tw_fill_mode fill;
    } cases[] = {
        {"rotation, bilinear, reflect", it_rot, it_rot_bilinear_reflect, TW_IMAGE_BILINEAR, TW_FILL_REFLECT},
        {"rotation, bilinear, nearest", it_rot, it_rot_bilinear_nearest, TW_IMAGE_BILINEAR, TW_FILL_NEAREST},
        {"rotation, bilinear, constant", it_rot, it_rot_bilinear_constant, TW_IMAGE_BILINEAR, TW_FILL_CONSTANT},
        {"rotation, nearest, reflect", it_rot, it_rot_nearest_reflect, TW_IMAGE_NEAREST, TW_FILL_REFLECT},
        {"zoom, bilinear, reflect", it_zoom, it_zoom_bilinear_reflect, TW_IMAGE_BILINEAR, TW_FILL_REFLECT},
        {"projective, bilinear, constant", it_proj, it_proj_bilinear_constant, TW_IMAGE_BILINEAR, TW_FILL_CONSTANT},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_tensor *t = from(cases[i].transforms, TW_FLOAT64, TW_SHAPE(2, 8));
        tw_tensor *y = tw_image_transform(img, t, 5, 6, cases[i].interpolation, cases[i].fill, 0);
        check(cases[i].what, y, TW_SHAPE(2, 5, 6, 2), cases[i].want, 1e-12);
        tw_tensor *y32 = tw_image_transform(tw_cast(img, TW_FLOAT32), tw_cast(t, TW_FLOAT32), 5, 6,
                                            cases[i].interpolation, cases[i].fill, 0);
        check(cases[i].what, y32, TW_SHAPE(2, 5, 6, 2), cases[i].want, 2e-5);
    }

    /* A shift right by 2 of a 1x4 row [1 2 3 4]: output x reads x - 2. */
    tw_tensor *row = MAKE(TW_FLOAT64, TW_SHAPE(1, 1, 4, 1), 1, 2, 3, 4);
    tw_tensor *shift = MAKE(TW_FLOAT64, TW_SHAPE(1, 8), 1, 0, -2, 0, 1, 0, 0, 0);
    CHECK("wrap", tw_image_transform(row, shift, 1, 4, TW_IMAGE_BILINEAR, TW_FILL_WRAP, 0), TW_SHAPE(1, 1, 4, 1), 1e-12,
          3, 4, 1, 2);
    CHECK("reflect", tw_image_transform(row, shift, 1, 4, TW_IMAGE_NEAREST, TW_FILL_REFLECT, 0), TW_SHAPE(1, 1, 4, 1),
          1e-12, 2, 1, 1, 2);
    CHECK("nearest", tw_image_transform(row, shift, 1, 4, TW_IMAGE_BILINEAR, TW_FILL_NEAREST, 0), TW_SHAPE(1, 1, 4, 1),
          1e-12, 1, 1, 1, 2);
    CHECK("constant 0.5", tw_image_transform(row, shift, 1, 4, TW_IMAGE_BILINEAR, TW_FILL_CONSTANT, 0.5),
          TW_SHAPE(1, 1, 4, 1), 1e-12, 0.5, 0.5, 1, 2);
    /* half a pixel: the mean of neighbours; at the edge, half the fill value */
    tw_tensor *half = MAKE(TW_FLOAT64, TW_SHAPE(1, 8), 1, 0, -0.5, 0, 1, 0, 0, 0);
    CHECK("half pixel, constant", tw_image_transform(row, half, 1, 4, TW_IMAGE_BILINEAR, TW_FILL_CONSTANT, 2),
          TW_SHAPE(1, 1, 4, 1), 1e-12, 1.5, 1.5, 2.5, 3.5);
    /* a larger output than the input */
    tw_tensor *id = MAKE(TW_FLOAT64, TW_SHAPE(1, 8), 1, 0, 0, 0, 1, 0, 0, 0);
    CHECK("bigger output", tw_image_transform(row, id, 1, 6, TW_IMAGE_BILINEAR, TW_FILL_WRAP, 0), TW_SHAPE(1, 1, 6, 1),
          1e-12, 1, 2, 3, 4, 1, 2);

    g_assert_null(tw_image_transform(row, tw_zeros(TW_FLOAT64, TW_SHAPE(2, 8)), 1, 4, TW_IMAGE_BILINEAR, TW_FILL_WRAP, 0));
    check_error("image_transform: transforms must have shape (1, 8) for images (1, 1, 4, 1), got (2, 8)");
    g_assert_null(tw_image_transform(tw_zeros(TW_FLOAT64, TW_SHAPE(1, 4, 1)), shift, 1, 4, TW_IMAGE_BILINEAR,
                                     TW_FILL_WRAP, 0));
    check_error("image_transform: images must have rank 4 (batch, height, width, channels), got (1, 4, 1)");
    tw_scope_end();
}

/* ---- augmentation layers ------------------------------------------------------------------ */

static tw_tensor *test_images(void)
{
    double v[2 * 5 * 5 * 2];
    for (int i = 0; i < 100; i++)
        v[i] = (i * 37 % 101) + 0.25 * (i % 7);
    return from(v, TW_FLOAT32, TW_SHAPE(2, 5, 5, 2));
}

static void test_random_flip(void)
{
    tw_scope_begin();
    tw_layer *f = LAYER("RandomFlip", "flip", {"mode", "horizontal"});
    check_infer(f, (tw_shape){4, {-1, 8, 8, 3}}, (tw_shape){4, {-1, 8, 8, 3}}, 0, 0);
    check_infer_error(f, (tw_shape){2, {-1, 8}},
                      "RandomFlip 'flip': expected images of rank 4 (batch, height, width, channels), got (None, 8)");
    /* 64 one-row images [k, k + 1]: each comes back as it was or reversed */
    double v[128];
    for (int k = 0; k < 64; k++)
        v[2 * k] = k, v[2 * k + 1] = k + 0.5;
    tw_tensor *x = from(v, TW_FLOAT32, TW_SHAPE(64, 1, 2, 1));
    check_random_layer(f, x);
    tw_tensor *y = tw_contiguous(call_with(f, x, true, 4));
    const float *yv = tw_tensor_data(y);
    int flipped = 0;
    for (int k = 0; k < 64; k++) {
        bool as_was = yv[2 * k] == k && yv[2 * k + 1] == k + 0.5f, rev = yv[2 * k] == k + 0.5f && yv[2 * k + 1] == k;
        g_assert_true(as_was || rev);
        flipped += rev;
    }
    g_assert_cmpint(flipped, >, 16);
    g_assert_cmpint(flipped, <, 48);
    /* vertical flips rows; both modes draw both */
    tw_layer *v2 = LAYER("RandomFlip", "v", {"mode", "vertical"});
    tw_tensor *col = tw_reshape(x, TW_SHAPE(64, 2, 1, 1));
    check_random_layer(v2, col);
    tw_layer *both = PLAIN("RandomFlip", "both");
    check_random_layer(both, test_images());
    tw_layer_unref(both);
    both = PLAIN("RandomFlip", "both64");
    tw_layer_set_dtype(both, TW_FLOAT64);
    gc_check("random_flip", call_seeded, 1, (tw_tensor *[]){gc_tensor(8, -1, 1, TW_SHAPE(3, 2, 3, 1))}, both);
    tw_layer_unref(f);
    tw_layer_unref(v2);
    tw_layer_unref(both);
    tw_scope_end();
}

static void test_random_geometry(void)
{
    tw_scope_begin();
    tw_tensor *x = test_images();
    tw_layer *layers[] = {
        LAYER("RandomRotation", "rot", {"factor", "0.2"}),
        LAYER("RandomZoom", "zoom", {"height_factor", "[-0.3, 0.2]"}, {"width_factor", "0.1"}),
        LAYER("RandomTranslation", "shift", {"height_factor", "0.2"}, {"width_factor", "[-0.1, 0.3]"},
              {"fill_mode", "constant"}),
        LAYER("RandomContrast", "contrast", {"factor", "0.5"}),
    };
    for (size_t i = 0; i < G_N_ELEMENTS(layers); i++) {
        check_infer(layers[i], (tw_shape){4, {-1, 5, 5, 2}}, (tw_shape){4, {-1, 5, 5, 2}}, 0, 0);
        check_random_layer(layers[i], x);
        tw_layer_unref(layers[i]);
    }

    /* A half turn about the centre reverses rows and columns. */
    tw_layer *half = LAYER("RandomRotation", "half", {"factor", "0.5,0.5"});
    tw_layer_set_dtype(half, TW_FLOAT64);
    tw_tensor *x64 = tw_cast(x, TW_FLOAT64);
    tw_tensor *want = tw_slice(tw_slice(x64, 1, TW_END, TW_END, -1), 2, TW_END, TW_END, -1);
    tw_tensor *got = call_with(half, x64, true, 1);
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(tw_sub(got, want)), 0, NULL, false)), <, 1e-9);
    gc_check("random_rotation", call_seeded, 1, (tw_tensor *[]){gc_tensor(9, -1, 1, TW_SHAPE(2, 3, 4, 1))}, half);

    /* Zooming in 2x on a 1x5 row: output x reads 0.5 x + 1. */
    tw_layer *zoom = LAYER("RandomZoom", "zoom2", {"height_factor", "-0.5,-0.5"});
    tw_tensor *row = MAKE(TW_FLOAT32, TW_SHAPE(1, 1, 5, 1), 0, 10, 20, 30, 40);
    CHECK("zoom in", call_with(zoom, row, true, 1), TW_SHAPE(1, 1, 5, 1), 1e-5, 10, 15, 20, 25, 30);
    /* Shifting a 5x1 column down by 0.2 x 5 = one row: the first row reflects. */
    tw_layer *down = LAYER("RandomTranslation", "down", {"height_factor", "0.2,0.2"}, {"width_factor", "0"});
    tw_tensor *column = MAKE(TW_FLOAT32, TW_SHAPE(1, 5, 1, 1), 0, 10, 20, 30, 40);
    CHECK("shift down", call_with(down, column, true, 1), TW_SHAPE(1, 5, 1, 1), 1e-5, 0, 0, 10, 20, 30);

    /* Contrast: (x - mean) * f + mean per image and channel, clipped to [0, 255]. */
    tw_layer *contrast = LAYER("RandomContrast", "c2", {"factor", "0.5,2"}, {"value_range", "0,100"});
    tw_tensor *pix = MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 2, 1), 10, 20, 30, 60);
    /* mean 30, a factor from 0.5 to 3, the same for the four pixels */
    tw_tensor *c = tw_contiguous(call_with(contrast, pix, true, 3));
    const float *cv = tw_tensor_data(c);
    double f = (cv[1] - 30) / (20 - 30.0); /* 20 is never clipped */
    g_assert_cmpfloat(f, >=, 0.5);
    g_assert_cmpfloat(f, <=, 3);
    double expect[4] = {10, 20, 30, 60};
    for (int i = 0; i < 4; i++) {
        double e = fmin(fmax((expect[i] - 30) * f + 30, 0), 100);
        g_assert_cmpfloat(fabs(cv[i] - e), <, 1e-3);
    }

    /* The geometric ones sample the images bilinearly, a linear map of them
     * for fixed draws; contrast's range is wide enough not to clip. */
    check_seeded_gradient("random_zoom", LAYER("RandomZoom", "zoom64", {"height_factor", "[-0.3, 0.2]"},
                                               {"width_factor", "0.1"}), 18, TW_SHAPE(2, 3, 4, 1));
    check_seeded_gradient("random_translation", LAYER("RandomTranslation", "shift64", {"height_factor", "0.2"},
                                                      {"width_factor", "[-0.1, 0.3]"}, {"fill_mode", "constant"}),
                          19, TW_SHAPE(2, 3, 4, 1));
    check_seeded_gradient("random_contrast", LAYER("RandomContrast", "contrast64", {"factor", "0.5"},
                                                   {"value_range", "-100,100"}),
                          20, TW_SHAPE(2, 3, 3, 2));

    tw_layer_unref(half);
    tw_layer_unref(zoom);
    tw_layer_unref(down);
    tw_layer_unref(contrast);
    tw_scope_end();
}

static void test_augment_bad_values(void)
{
    tw_layer *r = PLAIN("RandomRotation", "r");
    g_assert_cmpint(tw_layer_set(r, "factor", "0.3,0.1"), ==, -1);
    check_error("factor: lower 0.3 is above upper 0.1");
    g_assert_cmpint(tw_layer_set(r, "factor", "0.1,0.2,0.3"), ==, -1);
    check_error("factor: expected a number or a (lower, upper) pair, got 3 numbers");
    g_assert_cmpint(tw_layer_set(r, "fill_mode", "mirror"), ==, -1);
    check_error("fill_mode: expected one of reflect, wrap, constant, nearest; got \"mirror\"");
    g_assert_cmpint(tw_layer_set(r, "data_format", "channels_first"), ==, -1);
    check_error("data_format: expected one of channels_last; got \"channels_first\"");
    tw_layer *z = PLAIN("RandomZoom", "z");
    g_assert_cmpint(tw_layer_set(z, "height_factor", "-1.5,0"), ==, -1);
    check_error("height_factor: expected a number of at least -1, got -1.5");
    tw_layer *c = PLAIN("RandomContrast", "c");
    g_assert_cmpint(tw_layer_set(c, "value_range", "0"), ==, -1);
    check_error("value_range: expected 2 numbers such as \"0,255\", got \"0\"");
    tw_layer_unref(r);
    tw_layer_unref(z);
    tw_layer_unref(c);
}

/* A fit through augmentation draws from the model's seed: the same seed
 * gives the same weights, another seed others. */
static double fit_once(uint64_t seed)
{
    tw_scope_begin();
    tw_model *m = tw_sequential_new("aug");
    tw_model_add(m, LAYER("RandomFlip", "flip", {"mode", "horizontal"}));
    tw_model_add(m, LAYER("RandomRotation", "rot", {"factor", "0.1"}));
    tw_model_add(m, tw_flatten_layer());
    tw_model_add(m, tw_dense(1, "linear"));
    g_assert_cmpint(tw_model_build(m, &(tw_shape){4, {-1, 5, 5, 2}}, 1), ==, 0);
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("sgd", 0.001), &loss, 0, NULL), ==, 0);
    tw_fit_options o = tw_fit_options_default();
    o.epochs = 2;
    o.batch_size = 1;
    o.seed = seed;
    tw_history *h = tw_model_fit(m, tw_mul_scalar(test_images(), 0.01), MAKE(TW_FLOAT32, TW_SHAPE(2, 1), 1, -1), &o);
    if (!h)
        g_error("fit: %s", tw_last_error());
    tw_history_free(h);
    double w = tw_tensor_item(tw_sum_all(tw_layer_weight(tw_model_layer_at(m, 3), 0)));
    tw_layer_unref(m);
    tw_scope_end();
    return w;
}

static void test_augment_fit_reproducible(void)
{
    double a = fit_once(11), b = fit_once(11), c = fit_once(12);
    g_assert_cmpfloat(a, ==, b);
    g_assert_cmpfloat(a, !=, c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layers/layer-normalization", test_layer_normalization);
    g_test_add_func("/layers/group-normalization", test_group_normalization);
    g_test_add_func("/layers/unit-normalization", test_unit_normalization);
    g_test_add_func("/layers/prelu-thresholded-relu", test_prelu);
    g_test_add_func("/layers/permute-repeat-vector", test_permute_repeat);
    g_test_add_func("/layers/gaussian-noise-dropout", test_gaussian_noise);
    g_test_add_func("/layers/alpha-dropout", test_alpha_dropout);
    g_test_add_func("/layers/spatial-dropout", test_spatial_dropout);
    g_test_add_func("/layers/activity-regularization", test_activity_regularization);
    g_test_add_func("/layers/normalization", test_normalization);
    g_test_add_func("/layers/rescaling-per-channel", test_rescaling_per_channel);
    g_test_add_func("/layers/center-crop", test_center_crop);
    g_test_add_func("/layers/image-transform", test_image_transform);
    g_test_add_func("/layers/random-flip", test_random_flip);
    g_test_add_func("/layers/random-geometry-contrast", test_random_geometry);
    g_test_add_func("/layers/augment-bad-values", test_augment_bad_values);
    g_test_add_func("/layers/augment-fit-reproducible", test_augment_fit_reproducible);
    return g_test_run();
}
