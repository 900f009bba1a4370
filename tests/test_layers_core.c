/* The core layer classes (Dense, Rescaling, Flatten, Reshape, Dropout, the
 * activation layers, Embedding, BatchNormalization) and what every layer
 * shares: forward values against hand-computed numbers, output shapes and
 * Keras' parameter counts from tw_layer_infer, the messages of bad shapes
 * and bad values, gradients against finite differences in float64,
 * BatchNormalization's moving statistics, freezing, regularization,
 * cloning, restoring weights by path and the convenience constructors. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "graph/graph_internal.h"
#include "internal.h"
#include "layers/layer_internal.h"
#include "tw/model.h"

/* ---- helpers ------------------------------------------------------------------ */

/* A tensor of dtype holding the given values (row-major). */
static tw_tensor *make(tw_dtype dtype, int ndim, const int64_t *shape, const double *values)
{
    tw_tensor *t = tw_tensor_empty(dtype, ndim, shape);
    g_assert_nonnull(t);
    for (int64_t i = 0; i < tw_tensor_numel(t); i++) {
        void *p = (char *)tw_tensor_data(t) + i * tw_dtype_size(dtype);
        switch (dtype) {
        case TW_FLOAT32: *(float *)p = (float)values[i]; break;
        case TW_FLOAT64: *(double *)p = values[i]; break;
        case TW_INT32: *(int32_t *)p = (int32_t)values[i]; break;
        case TW_UINT8: *(uint8_t *)p = (uint8_t)values[i]; break;
        default: g_assert_not_reached();
        }
    }
    return t;
}
#define MAKE(dtype, shape, ...) make(dtype, shape, (const double[]){__VA_ARGS__})

/* The shape and the values (row-major) of t, within tol. */
static void check(tw_tensor *t, int ndim, const int64_t *shape, const double *expected, double tol)
{
    if (!t)
        g_error("expected a tensor, got an error: %s", tw_last_error());
    char a[96], b[96];
    if (tw_tensor_ndim(t) != ndim || memcmp(tw_tensor_shape(t), shape, sizeof(int64_t) * ndim))
        g_error("shape %s, expected %s", tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), a, sizeof a),
                tw_shape_str(ndim, shape, b, sizeof b));
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *v = tw_tensor_data(c);
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        if (!(fabs(v[i] - expected[i]) <= tol))
            g_error("element %lld is %.10g, expected %.10g", (long long)i, v[i], expected[i]);
}
#define CHECK(t, shape, tol, ...) check(t, shape, (const double[]){__VA_ARGS__}, tol)

static void check_error(const char *expected)
{
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_error_clear();
}

static tw_layer *layer_with(const char *class_name, const char *name, int n, const char *const (*kv)[2])
{
    tw_layer *layer = tw_layer_new(class_name, name);
    g_assert_nonnull(layer);
    for (int i = 0; i < n; i++)
        if (tw_layer_set(layer, kv[i][0], kv[i][1]))
            g_error("%s.%s = %s: %s", class_name, kv[i][0], kv[i][1], tw_last_error());
    return layer;
}
#define LAYER(class_name, name, ...)                                                                              \
    layer_with(class_name, name, sizeof((const char *const[][2]){__VA_ARGS__}) / sizeof(const char *const[2]), \
               (const char *const[][2]){__VA_ARGS__})

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

/* ---- Dense -------------------------------------------------------------------- */

static tw_layer *hand_dense(tw_dtype dtype)
{
    tw_layer *d = LAYER("Dense", "d", {"units", "2"}, {"activation", "relu"});
    tw_layer_set_dtype(d, dtype);
    build(d, (tw_shape){2, {-1, 3}});
    set_weight(d, 0, MAKE(dtype, TW_SHAPE(3, 2), 1, -1, 0, 2, 0.5, 0.5));
    set_weight(d, 1, MAKE(dtype, TW_SHAPE(2), 0.1, -0.2));
    return d;
}

static void test_dense_forward(void)
{
    tw_scope_begin();
    tw_layer *d = hand_dense(TW_FLOAT32);
    /* [1 2 3] -> [2.5 4.5] + [0.1 -0.2]; [-1 0 1] -> [-0.5 1.5] + bias, relu. */
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 1, 2, 3, -1, 0, 1);
    CHECK(tw_layer_call(d, x, false), TW_SHAPE(2, 2), 1e-6, 2.6, 4.3, 0, 1.3);
    /* The same kernel at every step of a 3-D input. */
    tw_tensor *x3 = MAKE(TW_FLOAT32, TW_SHAPE(2, 2, 3), 1, 2, 3, -1, 0, 1, -1, 0, 1, 1, 2, 3);
    CHECK(tw_layer_call(d, x3, false), TW_SHAPE(2, 2, 2), 1e-6, 2.6, 4.3, 0, 1.3, 0, 1.3, 2.6, 4.3);
    check_infer(d, (tw_shape){3, {-1, 7, 3}}, (tw_shape){3, {-1, 7, 2}}, 8, 0);
    tw_layer_unref(d);
    tw_scope_end();
}

static tw_tensor *call_layer(tw_tensor *const *inputs, void *layer)
{
    return tw_layer_call(layer, inputs[0], true);
}

static void test_dense_gradients(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dense", "d", {"units", "3"}, {"activation", "tanh"});
    tw_layer_set_dtype(d, TW_FLOAT64);
    tw_tensor *x = gc_tensor(1, -1, 1, TW_SHAPE(4, 2, 5));
    build(d, (tw_shape){3, {-1, 2, 5}});
    gc_check("dense", call_layer, 3, (tw_tensor *[]){x, tw_layer_weight(d, 0), tw_layer_weight(d, 1)}, d);
    tw_layer_unref(d);
    tw_scope_end();
}

/* ---- Rescaling, Flatten, Reshape -------------------------------------------------- */

static void test_rescaling(void)
{
    tw_scope_begin();
    tw_layer *r = tw_layer_new("Rescaling", "r");
    /* The default maps bytes to [0, 1], casting them to float32 first. */
    tw_tensor *bytes = MAKE(TW_UINT8, TW_SHAPE(1, 3), 0, 51, 255);
    tw_tensor *y = tw_layer_call(r, bytes, false);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
    CHECK(y, TW_SHAPE(1, 3), 1e-7, 0, 0.2, 1);
    tw_layer *centered = LAYER("Rescaling", "c", {"scale", "0.5"}, {"offset", "-1"});
    CHECK(tw_layer_call(centered, MAKE(TW_FLOAT32, TW_SHAPE(2, 2), 0, 1, 2, 4), false), TW_SHAPE(2, 2), 0, -1, -0.5,
          0, 1);
    check_infer(centered, (tw_shape){4, {-1, 28, 28, 1}}, (tw_shape){4, {-1, 28, 28, 1}}, 0, 0);

    tw_layer *r64 = LAYER("Rescaling", "r64", {"scale", "-3"}, {"offset", "2"});
    tw_layer_set_dtype(r64, TW_FLOAT64);
    gc_check("rescaling", call_layer, 1, (tw_tensor *[]){gc_tensor(2, -1, 1, TW_SHAPE(3, 4))}, r64);
    tw_layer_unref(r64);
    tw_layer_unref(centered);
    tw_layer_unref(r);
    tw_scope_end();
}

static void test_flatten(void)
{
    tw_scope_begin();
    tw_layer *f = tw_layer_new("Flatten", "f");
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(2, 2, 1, 2), 0, 1, 2, 3, 4, 5, 6, 7);
    CHECK(tw_layer_call(f, x, false), TW_SHAPE(2, 4), 0, 0, 1, 2, 3, 4, 5, 6, 7);
    check_infer(f, (tw_shape){4, {-1, 28, 28, 3}}, (tw_shape){2, {-1, 2352}}, 0, 0);
    check_infer(f, (tw_shape){3, {-1, -1, 3}}, (tw_shape){2, {-1, -1}}, 0, 0);
    check_infer(f, (tw_shape){1, {-1}}, (tw_shape){2, {-1, 1}}, 0, 0);
    /* channels_first: (N, C, L) is read as (N, L, C) before flattening. */
    tw_layer *cf = LAYER("Flatten", "cf", {"data_format", "channels_first"});
    CHECK(tw_layer_call(cf, MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 3), 0, 1, 2, 3, 4, 5), false), TW_SHAPE(1, 6), 0, 0, 3,
          1, 4, 2, 5);
    g_assert_cmpint(tw_layer_set(f, "data_format", "nchw"), ==, -1);
    check_error("data_format: expected one of channels_last, channels_first; got \"nchw\"");
    tw_layer_unref(cf);
    tw_layer_unref(f);
    tw_scope_end();
}

static void test_reshape(void)
{
    tw_scope_begin();
    tw_layer *r = LAYER("Reshape", "reshape", {"target_shape", "(3, -1)"});
    tw_tensor *x = tw_reshape(tw_arange(0, 12, 1, TW_FLOAT32), TW_SHAPE(2, 6));
    CHECK(tw_layer_call(r, x, false), TW_SHAPE(2, 3, 2), 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    /* A batch of 0 keeps the resolved shape. */
    tw_tensor *empty = tw_layer_call(r, tw_zeros(TW_FLOAT32, TW_SHAPE(0, 6)), false);
    CHECK(empty, TW_SHAPE(0, 3, 2), 0, 0);

    tw_layer *fixed = LAYER("Reshape", "reshape", {"target_shape", "[5, 2]"});
    check_infer(fixed, (tw_shape){3, {-1, 2, 5}}, (tw_shape){3, {-1, 5, 2}}, 0, 0);
    check_infer_error(fixed, (tw_shape){3, {-1, 4, 3}},
                      "Reshape 'reshape': cannot reshape input (None, 4, 3) (12 values per example) to "
                      "target_shape (5, 2)");
    check_infer_error(r, (tw_shape){2, {-1, 7}},
                      "Reshape 'reshape': cannot reshape input (None, 7) (7 values per example) to "
                      "target_shape (3, -1)");
    check_infer(r, (tw_shape){3, {-1, -1, 6}}, (tw_shape){3, {-1, 3, -1}}, 0, 0);

    g_assert_cmpint(tw_layer_set(fixed, "target_shape", "-1,-1"), ==, -1);
    check_error("target_shape: only one size may be -1, got (-1, -1)");
    g_assert_cmpint(tw_layer_set(fixed, "target_shape", "4,0"), ==, -1);
    check_error("target_shape: sizes must be positive or -1, got (4, 0)");
    g_assert_cmpint(tw_layer_set(fixed, "target_shape", "4,x"), ==, -1);
    check_error("target_shape: expected a list of integers such as \"7,7,64\", got \"4,x\"");
    g_assert_cmpint(tw_layer_set(fixed, "target_shape", "1,1,1,1,1,1,1,1"), ==, -1);
    check_error("target_shape: at most 7 sizes (the batch takes one of 8 axes), got 8");
    g_autofree char *kept = tw_layer_get_text(fixed, "target_shape");
    g_assert_cmpstr(kept, ==, "5,2");
    tw_layer_unref(fixed);
    tw_layer_unref(r);
    tw_scope_end();
}

/* ---- Dropout ------------------------------------------------------------------ */

static int64_t count_equal(tw_tensor *t, double value)
{
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *v = tw_tensor_data(c);
    int64_t n = 0;
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        n += v[i] == value;
    return n;
}

static void test_dropout(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dropout", "drop", {"rate", "0.25"});
    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(100, 100));
    /* Inference: the identity. */
    tw_tensor *same = tw_layer_call(d, x, false);
    g_assert_cmpint(count_equal(same, 1), ==, 10000);
    /* Training: values are 0 or 1 / (1 - rate), about a quarter of them 0. */
    tw_tensor *y = tw_layer_call(d, x, true);
    int64_t zeros = count_equal(y, 0), kept = count_equal(y, (float)(1 / 0.75));
    g_assert_cmpint(zeros + kept, ==, 10000);
    g_assert_cmpint(zeros, >, 2300);
    g_assert_cmpint(zeros, <, 2700);
    /* Without a generator from the call, masks follow the layer's name. */
    tw_layer *twin = LAYER("Dropout", "drop", {"rate", "0.25"});
    tw_layer *other = LAYER("Dropout", "other", {"rate", "0.25"});
    tw_tensor *y_twin = tw_layer_call(twin, x, true), *y_other = tw_layer_call(other, x, true);
    g_assert_cmpint(count_equal(tw_equal(y, y_twin), 1), ==, 10000);
    g_assert_cmpint(count_equal(tw_equal(y, y_other), 1), <, 10000);
    /* With one, masks follow the generator. */
    tw_rng *a = tw_rng_new(7), *b = tw_rng_new(7);
    tw_tensor *ya = tw_layer_call_ex(d, x, &(tw_call_context){true, a});
    tw_tensor *yb = tw_layer_call_ex(other, x, &(tw_call_context){true, b});
    g_assert_cmpint(count_equal(tw_equal(ya, yb), 1), ==, 10000);
    tw_rng_free(a);
    tw_rng_free(b);

    g_assert_cmpint(tw_layer_set(d, "rate", "0.5"), ==, -1);
    check_error("Dropout 'drop': cannot change rate after the layer is built");
    /* Keras' other keys are accepted; a rate of 1 is not. */
    tw_layer *keras = LAYER("Dropout", NULL, {"noise_shape", "none"}, {"seed", "42"}, {"noise_shape", "[1, 5]"});
    g_assert_cmpint(tw_layer_set(keras, "rate", "1"), ==, -1);
    check_error("rate: expected a number from 0 up to (not including) 1, got 1");
    g_assert_cmpint(tw_layer_set(keras, "rate", "1.5"), ==, -1);
    check_error("rate: expected a number from 0 to 1, got 1.5");
    tw_layer_unref(keras);
    tw_layer_unref(other);
    tw_layer_unref(twin);
    tw_layer_unref(d);
    tw_scope_end();
}

/* ---- activation layers --------------------------------------------------------- */

static void test_activation_layers(void)
{
    tw_scope_begin();
    tw_tensor *x = MAKE(TW_FLOAT32, TW_SHAPE(1, 5), -2, -0.5, 0, 3, 7);
    struct {
        tw_layer *layer;
        double expected[5];
    } cases[] = {
        {LAYER("Activation", "a", {"activation", "relu"}), {0, 0, 0, 3, 7}},
        {LAYER("Activation", "a", {"activation", "tanh"}), {tanh(-2), tanh(-0.5), 0, tanh(3), tanh(7)}},
        {tw_layer_new("ReLU", "r"), {0, 0, 0, 3, 7}},
        {LAYER("ReLU", "r", {"max_value", "6"}), {0, 0, 0, 3, 6}},
        {LAYER("ReLU", "r", {"negative_slope", "0.1"}), {-0.2, -0.05, 0, 3, 7}},
        /* Keras: x above the threshold, else negative_slope * (x - threshold); capped at max_value. */
        {LAYER("ReLU", "r", {"negative_slope", "0.1"}, {"threshold", "1"}, {"max_value", "6"}),
         {-0.3, -0.15, -0.1, 3, 6}},
        {LAYER("ReLU", "r", {"threshold", "3"}), {0, 0, 0, 0, 7}},
        {tw_layer_new("LeakyReLU", "l"), {-0.6, -0.15, 0, 3, 7}},
        {LAYER("LeakyReLU", "l", {"alpha", "0.5"}), {-1, -0.25, 0, 3, 7}},
        {tw_layer_new("ELU", "e"), {expm1(-2), expm1(-0.5), 0, 3, 7}},
        {LAYER("ELU", "e", {"alpha", "2"}), {2 * expm1(-2), 2 * expm1(-0.5), 0, 3, 7}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        check(tw_layer_call(cases[i].layer, x, false), TW_SHAPE(1, 5), cases[i].expected, 1e-6);
        check_infer(cases[i].layer, (tw_shape){3, {-1, 4, 5}}, (tw_shape){3, {-1, 4, 5}}, 0, 0);
        tw_layer_unref(cases[i].layer);
    }

    /* Softmax over axis 1 of (1, 2, 2): each column sums to 1. */
    tw_tensor *logits = MAKE(TW_FLOAT32, TW_SHAPE(1, 2, 2), 0, 1, log(3), 1);
    tw_layer *s = LAYER("Softmax", "s", {"axis", "1"});
    CHECK(tw_layer_call(s, logits, false), TW_SHAPE(1, 2, 2), 1e-6, 0.25, 0.5, 0.75, 0.5);
    tw_layer *last = tw_layer_new("Softmax", "s");
    CHECK(tw_layer_call(last, logits, false), TW_SHAPE(1, 2, 2), 1e-6, 1 / (1 + M_E), M_E / (1 + M_E), 3 / (3 + M_E),
          M_E / (3 + M_E));
    tw_layer *far = LAYER("Softmax", "far", {"axis", "3"});
    check_infer_error(far, (tw_shape){3, {-1, 2, 2}}, "Softmax 'far': axis 3 is out of range for input (None, 2, 2)");

    g_assert_cmpint(tw_layer_set(s, "axis", "9"), ==, -1);
    check_error("axis: expected an integer from -8 to 7, got 9");
    tw_layer *relu = tw_layer_new("ReLU", "r");
    g_assert_cmpint(tw_layer_set(relu, "negative_slope", "-1"), ==, -1);
    check_error("negative_slope: expected a non-negative number, got -1");
    tw_layer *act = tw_layer_new("Activation", "a");
    g_assert_cmpint(tw_layer_set(act, "activation", "rleu"), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "activation: expected one of linear, relu,"));
    tw_error_clear();
    tw_layer_unref(act);
    tw_layer_unref(relu);
    tw_layer_unref(far);
    tw_layer_unref(last);
    tw_layer_unref(s);
    tw_scope_end();
}

/* ---- Embedding ---------------------------------------------------------------- */

static void test_embedding(void)
{
    tw_scope_begin();
    tw_layer *e = LAYER("Embedding", "emb", {"input_dim", "5"}, {"output_dim", "2"});
    build(e, (tw_shape){2, {-1, 3}});
    /* Row i of the table is (i, 10 i). */
    set_weight(e, 0, MAKE(TW_FLOAT32, TW_SHAPE(5, 2), 0, 0, 1, 10, 2, 20, 3, 30, 4, 40));
    tw_tensor *ids = MAKE(TW_FLOAT32, TW_SHAPE(2, 3), 0, 4, 2, 1, 1, 3); /* floats are cast */
    CHECK(tw_layer_call(e, ids, false), TW_SHAPE(2, 3, 2), 0, 0, 0, 4, 40, 2, 20, 1, 10, 1, 10, 3, 30);
    tw_tensor *ids32 = MAKE(TW_INT32, TW_SHAPE(1, 2), 3, 0);
    CHECK(tw_layer_call(e, ids32, false), TW_SHAPE(1, 2, 2), 0, 3, 30, 0, 0);

    g_assert_null(tw_layer_call(e, MAKE(TW_INT32, TW_SHAPE(1, 3), 0, 5, 1), false));
    check_error("Embedding 'emb': gather: index 5 at position 1 is out of range for axis 0 of size 5");

    tw_layer *fixed = LAYER("Embedding", "fixed", {"input_dim", "1000"}, {"output_dim", "64"}, {"input_length", "10"},
                            {"mask_zero", "true"});
    check_infer(fixed, (tw_shape){2, {-1, 10}}, (tw_shape){3, {-1, 10, 64}}, 64000, 0);
    check_infer(fixed, (tw_shape){2, {-1, -1}}, (tw_shape){3, {-1, 10, 64}}, 64000, 0);
    check_infer_error(fixed, (tw_shape){2, {-1, 12}}, "Embedding 'fixed': input_length is 10 but the input is (None, 12)");
    check_infer(e, (tw_shape){3, {-1, 4, 6}}, (tw_shape){4, {-1, 4, 6, 2}}, 10, 0);
    /* Keras' mask of padded steps is not made here: with mask_zero the
     * layer infers and counts (above) but cannot run, rather than give
     * what Keras would not on padded input. */
    static const char masked[] = "Embedding 'fixed': mask_zero=true masks padded steps, which this engine does not "
                                 "do yet; set mask_zero to false to run it without the mask";
    g_assert_cmpint(tw_layer_check_runnable(fixed), ==, -1);
    check_error(masked);
    g_assert_cmpint(tw_layer_check_runnable(e), ==, 0);
    build(fixed, (tw_shape){2, {-1, 10}});
    g_assert_null(tw_layer_call(fixed, tw_zeros(TW_INT32, TW_SHAPE(1, 10)), false));
    check_error(masked);
    tw_layer_unref(fixed);
    tw_layer_unref(e);
    tw_scope_end();
}

typedef struct {
    tw_layer *layer;
    tw_tensor *ids;
} embedding_closure;

/* The embedding's output as a function of its table (inputs[0] is the table
 * itself, perturbed in place by the check). */
static tw_tensor *call_embedding(tw_tensor *const *inputs, void *data)
{
    embedding_closure *c = data;
    return tw_activation_apply("tanh", tw_layer_call(c->layer, c->ids, true));
}

static void test_embedding_gradients(void)
{
    tw_scope_begin();
    tw_layer *e = LAYER("Embedding", "emb", {"input_dim", "6"}, {"output_dim", "3"});
    tw_layer_set_dtype(e, TW_FLOAT64);
    build(e, (tw_shape){2, {-1, 4}});
    /* Repeated indices: their gradients add up in the same row; row 5 gets none. */
    embedding_closure c = {e, MAKE(TW_INT32, TW_SHAPE(2, 4), 0, 2, 2, 4, 1, 0, 3, 2)};
    gc_check("embedding", call_embedding, 1, (tw_tensor *[]){tw_layer_weight(e, 0)}, &c);
    tw_layer_unref(e);
    tw_scope_end();
}

/* ---- BatchNormalization --------------------------------------------------------- */

static void test_batchnorm_shapes(void)
{
    tw_scope_begin();
    tw_layer *bn = tw_layer_new("BatchNormalization", "bn");
    check_infer(bn, (tw_shape){4, {-1, 4, 4, 3}}, (tw_shape){4, {-1, 4, 4, 3}}, 6, 6);
    check_infer(bn, (tw_shape){2, {-1, 10}}, (tw_shape){2, {-1, 10}}, 20, 20);
    tw_layer *first = LAYER("BatchNormalization", "first", {"axis", "[1]"});
    check_infer(first, (tw_shape){4, {-1, 3, 8, 8}}, (tw_shape){4, {-1, 3, 8, 8}}, 6, 6);
    tw_layer *two = LAYER("BatchNormalization", "two", {"axis", "[1, -1]"});
    check_infer(two, (tw_shape){4, {-1, 2, 8, 3}}, (tw_shape){4, {-1, 2, 8, 3}}, 12, 12);
    tw_layer *plain = LAYER("BatchNormalization", "plain", {"center", "false"}, {"scale", "false"});
    check_infer(plain, (tw_shape){2, {-1, 5}}, (tw_shape){2, {-1, 5}}, 0, 10);

    /* The weights, in Keras' order, shapes and trainability. */
    build(bn, (tw_shape){4, {-1, 4, 4, 3}});
    const char *names[] = {"gamma", "beta", "moving_mean", "moving_variance"};
    g_assert_cmpint(tw_layer_nweights(bn), ==, 4);
    for (int i = 0; i < 4; i++) {
        g_assert_cmpstr(tw_layer_weight_spec(bn, i)->name, ==, names[i]);
        g_assert_cmpint(tw_tensor_ndim(tw_layer_weight(bn, i)), ==, 1);
        g_assert_cmpint(tw_tensor_dim(tw_layer_weight(bn, i), 0), ==, 3);
        g_assert_cmpint(tw_variable_trainable(tw_layer_weight(bn, i)), ==, i < 2);
    }
    CHECK(tw_layer_weight(bn, 3), TW_SHAPE(3), 0, 1, 1, 1);

    check_infer_error(bn, (tw_shape){2, {-1, -1}},
                      "BatchNormalization 'bn': the size of axis 1 of input (None, None) must be known");
    tw_layer *bad = LAYER("BatchNormalization", "bad", {"axis", "5"});
    check_infer_error(bad, (tw_shape){4, {-1, 4, 4, 3}},
                      "BatchNormalization 'bad': axis 5 is out of range for input (None, 4, 4, 3)");
    tw_layer *twice = LAYER("BatchNormalization", "twice", {"axis", "3,-1"});
    check_infer_error(twice, (tw_shape){4, {-1, 4, 4, 3}}, "BatchNormalization 'twice': axis 3 is given twice");
    g_assert_cmpint(tw_layer_set(bad, "momentum", "1.5"), ==, -1);
    check_error("momentum: expected a number from 0 to 1, got 1.5");
    tw_layer_unref(twice);
    tw_layer_unref(bad);
    tw_layer_unref(plain);
    tw_layer_unref(two);
    tw_layer_unref(first);
    tw_layer_unref(bn);
    tw_scope_end();
}

/* Per-column mean and population variance of a (rows, cols) array. */
static void column_moments(const double *x, int rows, int cols, double *mean, double *var)
{
    for (int c = 0; c < cols; c++) {
        double s = 0, ss = 0;
        for (int r = 0; r < rows; r++)
            s += x[r * cols + c];
        mean[c] = s / rows;
        for (int r = 0; r < rows; r++)
            ss += (x[r * cols + c] - mean[c]) * (x[r * cols + c] - mean[c]);
        var[c] = ss / rows;
    }
}

static void test_batchnorm_statistics(void)
{
    tw_scope_begin();
    tw_layer *bn = LAYER("BatchNormalization", "bn", {"momentum", "0.9"}, {"epsilon", "0.01"});
    tw_layer_set_dtype(bn, TW_FLOAT64);
    build(bn, (tw_shape){2, {-1, 2}});
    const double gamma[2] = {2, 0.5}, beta[2] = {0.5, -1}, eps = 0.01, m = 0.9;
    set_weight(bn, 0, MAKE(TW_FLOAT64, TW_SHAPE(2), gamma[0], gamma[1]));
    set_weight(bn, 1, MAKE(TW_FLOAT64, TW_SHAPE(2), beta[0], beta[1]));
    const double x1[8] = {1, 10, 2, 20, 4, 10, 5, 0}, x2[6] = {-1, 3, 0, 5, 4, 4};

    /* Training normalises by the batch's own moments. */
    double mean1[2], var1[2], mean2[2], var2[2], expected[8];
    column_moments(x1, 4, 2, mean1, var1);
    column_moments(x2, 3, 2, mean2, var2);
    for (int i = 0; i < 8; i++)
        expected[i] = (x1[i] - mean1[i % 2]) / sqrt(var1[i % 2] + eps) * gamma[i % 2] + beta[i % 2];
    check(tw_layer_call(bn, make(TW_FLOAT64, TW_SHAPE(4, 2), x1), true), TW_SHAPE(4, 2), expected, 1e-12);
    g_assert_nonnull(tw_layer_call(bn, make(TW_FLOAT64, TW_SHAPE(3, 2), x2), true));

    /* Two updates of moving = moving * momentum + batch * (1 - momentum). */
    double mm[2], mv[2];
    for (int c = 0; c < 2; c++) {
        mm[c] = (0 * m + mean1[c] * (1 - m)) * m + mean2[c] * (1 - m);
        mv[c] = (1 * m + var1[c] * (1 - m)) * m + var2[c] * (1 - m);
    }
    CHECK(tw_layer_weight(bn, 2), TW_SHAPE(2), 1e-12, mm[0], mm[1]);
    CHECK(tw_layer_weight(bn, 3), TW_SHAPE(2), 1e-12, mv[0], mv[1]);

    /* Inference uses them and leaves them as they are. */
    for (int i = 0; i < 6; i++)
        expected[i] = (x2[i] - mm[i % 2]) / sqrt(mv[i % 2] + eps) * gamma[i % 2] + beta[i % 2];
    check(tw_layer_call(bn, make(TW_FLOAT64, TW_SHAPE(3, 2), x2), false), TW_SHAPE(3, 2), expected, 1e-12);
    CHECK(tw_layer_weight(bn, 2), TW_SHAPE(2), 1e-12, mm[0], mm[1]);

    /* Frozen, it runs in inference mode even when training (Keras 2). */
    tw_layer_set_trainable(bn, false);
    check(tw_layer_call(bn, make(TW_FLOAT64, TW_SHAPE(3, 2), x2), true), TW_SHAPE(3, 2), expected, 1e-12);
    CHECK(tw_layer_weight(bn, 3), TW_SHAPE(2), 1e-12, mv[0], mv[1]);
    tw_layer_unref(bn);
    tw_scope_end();
}

static void test_batchnorm_gradients(void)
{
    tw_scope_begin();
    /* Statistics over (batch, height) for each of 3 channels: axis 1 of 3. */
    tw_layer *bn = LAYER("BatchNormalization", "bn", {"axis", "[1]"});
    tw_layer_set_dtype(bn, TW_FLOAT64);
    build(bn, (tw_shape){3, {-1, 3, 4}});
    set_weight(bn, 0, MAKE(TW_FLOAT64, TW_SHAPE(3), 1.5, -0.5, 2));
    set_weight(bn, 1, MAKE(TW_FLOAT64, TW_SHAPE(3), 0.1, 0.2, -0.3));
    tw_tensor *x = gc_tensor(3, -2, 2, TW_SHAPE(2, 3, 4));
    gc_check("batchnorm training", call_layer, 3, (tw_tensor *[]){x, tw_layer_weight(bn, 0), tw_layer_weight(bn, 1)},
             bn);
    /* Nothing flows into the moving statistics. */
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, tw_layer_weight(bn, 2));
    tw_tensor *y = tw_sum_all(tw_layer_call(bn, x, true));
    tw_tape_end(tape);
    tw_tensor *grad = (tw_tensor *)1;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, (tw_tensor *[]){tw_layer_weight(bn, 2)}, &grad), ==, 0);
    g_assert_null(grad);
    tw_tape_free(tape);
    tw_layer_unref(bn);
    tw_scope_end();
}

/* |got - want| <= tol * (1 + |want|) elementwise, naming what. */
static void check_close(const char *what, tw_tensor *want, tw_tensor *got, double tol)
{
    if (!want || !got)
        g_error("%s: %s", what, tw_last_error());
    g_assert_cmpint(tw_tensor_numel(want), ==, tw_tensor_numel(got));
    tw_tensor *a = tw_contiguous(tw_cast(want, TW_FLOAT64)), *b = tw_contiguous(tw_cast(got, TW_FLOAT64));
    const double *va = tw_tensor_data(a), *vb = tw_tensor_data(b);
    for (int64_t i = 0; i < tw_tensor_numel(a); i++)
        if (!(fabs(va[i] - vb[i]) <= tol * (1 + fabs(va[i]))))
            g_error("%s: element %lld is %.17g, the composite path's %.17g", what, (long long)i, vb[i], va[i]);
}

/* One training step of a BatchNormalization: its output and the gradients
 * of sum(y * w) for x, gamma and beta (those it has). */
static void bn_step(tw_layer *bn, tw_tensor *x, tw_tensor *w, tw_tensor *out[4])
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tape_watch(tape, x);
    tw_tensor *y = tw_layer_call(bn, x, true);
    tw_tensor *loss = tw_sum_all(tw_mul(y, w));
    tw_tape_end(tape);
    int n = bn->nweights - 2; /* gamma and beta, without the moving statistics */
    tw_tensor *src[3] = {x, n > 0 ? tw_layer_weight(bn, 0) : NULL, n > 1 ? tw_layer_weight(bn, 1) : NULL};
    out[0] = y, out[1] = out[2] = out[3] = NULL;
    if (tw_tape_gradient(tape, loss, 1 + n, src, out + 1))
        g_error("gradient: %s", tw_last_error());
    tw_tape_free(tape);
}

static int fn_bn_call(tw_tensor *const *in, int n, tw_tensor **out, int max_out, void *bn)
{
    out[0] = tw_layer_call(bn, in[0], true);
    return out[0] ? 1 : -1;
}

/* Training with the features last runs the fused batch_norm op; the same
 * statistics over a channels-first copy (axis 1) take the composite path.
 * Both give the same outputs, gradients and moving statistics. */
static void test_batchnorm_fused(void)
{
    static const int to_last[] = {0, 2, 3, 1}, to_first[] = {0, 3, 1, 2};
    static const char *const plain[][2] = {{"center", "false"}, {"scale", "false"}};
    for (int dt = 0; dt < 2; dt++)
        for (int with_params = 0; with_params < 2; with_params++) {
            tw_scope_begin();
            tw_dtype dtype = dt ? TW_FLOAT64 : TW_FLOAT32;
            double tol = dt ? 1e-12 : 2e-5;
            tw_layer *fused = layer_with("BatchNormalization", "fused", with_params ? 0 : 2, plain);
            tw_layer *composite = layer_with("BatchNormalization", "composite", with_params ? 0 : 2, plain);
            g_assert_cmpint(tw_layer_set(composite, "axis", "[1]"), ==, 0);
            for (int k = 0; k < 2; k++) {
                tw_layer *l = k ? composite : fused;
                g_assert_cmpint(tw_layer_set(l, "momentum", "0.8"), ==, 0);
                tw_layer_set_dtype(l, dtype);
            }
            build(fused, (tw_shape){4, {-1, 3, 5, 6}});
            build(composite, (tw_shape){4, {-1, 6, 3, 5}});
            for (int i = 0; with_params && i < 2; i++) {
                tw_tensor *v = tw_cast(gc_tensor(20 + (unsigned)i, -1.5, 1.5, TW_SHAPE(6)), dtype);
                set_weight(fused, i, v);
                set_weight(composite, i, v);
            }
            for (int step = 0; step < 2; step++) {
                /* channels with their own offsets and scales, as activations have */
                tw_tensor *x = tw_add(tw_mul(gc_tensor(30 + (unsigned)step, -2, 2, TW_SHAPE(4, 3, 5, 6)),
                                             gc_tensor(40, 0.1, 3, TW_SHAPE(6))),
                                      gc_tensor(41, -5, 5, TW_SHAPE(6)));
                x = tw_cast(x, dtype);
                tw_tensor *w = tw_cast(gc_tensor(50 + (unsigned)step, -1, 1, TW_SHAPE(4, 3, 5, 6)), dtype);
                tw_tensor *xf = tw_contiguous(tw_permute(x, 4, to_first));
                tw_tensor *a[4], *b[4];
                bn_step(composite, xf, tw_contiguous(tw_permute(w, 4, to_first)), a);
                bn_step(fused, x, w, b);
                check_close("y", tw_permute(a[0], 4, to_last), b[0], tol);
                check_close("dx", tw_permute(a[1], 4, to_last), b[1], tol);
                for (int i = 2; with_params && i < 4; i++)
                    check_close(i == 2 ? "dgamma" : "dbeta", a[i], b[i], tol);
                int n = fused->nweights;
                check_close("moving_mean", tw_layer_weight(composite, n - 2), tw_layer_weight(fused, n - 2), tol);
                check_close("moving_variance", tw_layer_weight(composite, n - 1), tw_layer_weight(fused, n - 1), tol);
            }
            /* The fused layer's trace holds one batch_norm op, the composite's none. */
            for (int k = 0; k < 2; k++) {
                tw_function *f = tw_function_new("bn", fn_bn_call, k ? composite : fused);
                tw_tensor *x = k ? tw_zeros(dtype, TW_SHAPE(2, 6, 3, 5)) : tw_zeros(dtype, TW_SHAPE(2, 3, 5, 6));
                const tw_graph *g = tw_function_get_graph(f, 1, &x);
                g_assert_nonnull(g);
                int found = 0;
                for (int i = 0; i < g->nnodes; i++)
                    found += g->nodes[i].op == tw_op_lookup("batch_norm");
                g_assert_cmpint(found, ==, k ? 0 : 1);
                tw_function_free(f);
            }
            tw_layer_unref(fused);
            tw_layer_unref(composite);
            tw_scope_end();
        }
}

/* ---- what every layer shares ---------------------------------------------------- */

static void test_bad_values(void)
{
    tw_scope_begin();
    tw_layer *d = tw_layer_new("Dense", "dense");
    g_assert_cmpint(tw_layer_set(d, "units", "abc"), ==, -1);
    check_error("units: expected a positive integer, got \"abc\"");
    g_assert_cmpint(tw_layer_set(d, "units", "0"), ==, -1);
    check_error("units: expected a positive integer, got 0");
    g_assert_cmpint(tw_layer_set(d, "use_bias", "maybe"), ==, -1);
    check_error("use_bias: expected true or false, got \"maybe\"");
    g_assert_cmpint(tw_layer_set(d, "kernel_regularizer", "l3=1"), ==, -1);
    check_error("kernel_regularizer: expected a penalty such as \"l2=0.01\" or \"l1=0.001,l2=0.01\", got \"l3=1\"");
    g_assert_cmpint(tw_layer_set(d, "unit", "3"), ==, -1);
    check_error("Dense: no parameter \"unit\"");
    check_infer_error(d, (tw_shape){1, {-1}},
                      "Dense 'dense': expected input of rank 2 or more with a known last dimension, got (None,)");
    tw_layer *e = tw_layer_new("Embedding", "e");
    g_assert_cmpint(tw_layer_set(e, "input_dim", "-3"), ==, -1);
    check_error("input_dim: expected a positive integer, got -3");
    g_assert_null(tw_layer_new("Dens", NULL));
    check_error("unknown layer class \"Dens\"");
    /* A failed set leaves the value as it was. */
    g_autofree char *units = tw_layer_get_text(d, "units");
    g_assert_cmpstr(units, ==, "32");
    tw_layer_unref(e);
    tw_layer_unref(d);
    tw_scope_end();
}

static void test_infer_counts(void)
{
    tw_scope_begin();
    struct {
        tw_layer *layer;
        tw_shape in, out;
        int64_t trainable, non_trainable;
    } cases[] = {
        {LAYER("Dense", "a", {"units", "3"}), {2, {-1, 5}}, {2, {-1, 3}}, 18, 0},
        {LAYER("Dense", "b", {"units", "10"}, {"use_bias", "false"}), {2, {-1, 784}}, {2, {-1, 10}}, 7840, 0},
        {LAYER("Embedding", "c", {"input_dim", "10000"}, {"output_dim", "16"}), {2, {-1, 200}},
         {3, {-1, 200, 16}}, 160000, 0},
        {tw_layer_new("BatchNormalization", "d"), {4, {-1, 26, 26, 32}}, {4, {-1, 26, 26, 32}}, 64, 64},
        {tw_layer_new("Flatten", "e"), {4, {-1, 13, 13, 32}}, {2, {-1, 5408}}, 0, 0},
        {LAYER("Reshape", "f", {"target_shape", "28,28,1"}), {2, {-1, 784}}, {4, {-1, 28, 28, 1}}, 0, 0},
        {tw_layer_new("Dropout", "g"), {2, {-1, 128}}, {2, {-1, 128}}, 0, 0},
        {tw_layer_new("Rescaling", "h"), {4, {-1, 32, 32, 3}}, {4, {-1, 32, 32, 3}}, 0, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        check_infer(cases[i].layer, cases[i].in, cases[i].out, cases[i].trainable, cases[i].non_trainable);
        tw_layer_unref(cases[i].layer);
    }
    tw_scope_end();
}

static void test_frozen(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dense", "d", {"units", "3"});
    tw_layer_set_trainable(d, false);
    check_infer(d, (tw_shape){2, {-1, 4}}, (tw_shape){2, {-1, 3}}, 0, 15);
    build(d, (tw_shape){2, {-1, 4}});
    for (int i = 0; i < 2; i++)
        g_assert_false(tw_variable_trainable(tw_layer_weight(d, i)));
    /* A frozen layer's output does not reach its weights on a tape. */
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *y = tw_sum_all(tw_layer_call(d, tw_ones(TW_FLOAT32, TW_SHAPE(2, 4)), true));
    tw_tape_end(tape);
    tw_tensor *grad = (tw_tensor *)1;
    g_assert_cmpint(tw_tape_gradient(tape, y, 1, (tw_tensor *[]){tw_layer_weight(d, 0)}, &grad), ==, 0);
    g_assert_null(grad);
    tw_tape_free(tape);
    tw_layer_set_trainable(d, true);
    for (int i = 0; i < 2; i++)
        g_assert_true(tw_variable_trainable(tw_layer_weight(d, i)));

    /* Unfreezing a BatchNormalization leaves its statistics non-trainable. */
    tw_layer *bn = tw_layer_new("BatchNormalization", "bn");
    tw_layer_set_trainable(bn, false);
    build(bn, (tw_shape){2, {-1, 3}});
    for (int i = 0; i < 4; i++)
        g_assert_false(tw_variable_trainable(tw_layer_weight(bn, i)));
    tw_layer_set_trainable(bn, true);
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(tw_variable_trainable(tw_layer_weight(bn, i)), ==, i < 2);
    tw_layer_unref(bn);
    tw_layer_unref(d);
    tw_scope_end();
}

static double sum_of(tw_tensor *t, bool squares)
{
    tw_tensor *c = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *v = tw_tensor_data(c);
    double s = 0;
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        s += squares ? v[i] * v[i] : fabs(v[i]);
    return s;
}

static void test_regularization(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dense", "d", {"units", "4"}, {"kernel_regularizer", "l2=0.01"});
    build(d, (tw_shape){2, {-1, 5}});
    double k2 = sum_of(tw_layer_weight(d, 0), true);
    g_assert_cmpfloat(k2, >, 0);
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_layer_regularization_loss(d)), 0.01 * k2, 1e-6);
    /* Both penalties, and a bias penalty once the bias is not zero. */
    tw_layer *both = LAYER("Dense", "both", {"units", "2"}, {"kernel_regularizer", "l1=0.1,l2=0.5"},
                           {"bias_regularizer", "l1=2"});
    build(both, (tw_shape){2, {-1, 3}});
    set_weight(both, 1, MAKE(TW_FLOAT32, TW_SHAPE(2), 0.25, -1));
    tw_tensor *k = tw_layer_weight(both, 0);
    double expected = 0.1 * sum_of(k, false) + 0.5 * sum_of(k, true) + 2 * 1.25;
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_layer_regularization_loss(both)), expected, 1e-5);
    /* Embedding and BatchNormalization keys. */
    tw_layer *e = LAYER("Embedding", "e", {"input_dim", "7"}, {"output_dim", "3"}, {"embeddings_regularizer", "0.2"});
    build(e, (tw_shape){2, {-1, 2}});
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_layer_regularization_loss(e)),
                                   0.2 * sum_of(tw_layer_weight(e, 0), true), 1e-7);
    tw_layer *bn = LAYER("BatchNormalization", "bn", {"gamma_regularizer", "l2=0.5"}, {"beta_regularizer", "l1=1"});
    build(bn, (tw_shape){2, {-1, 3}});
    set_weight(bn, 1, MAKE(TW_FLOAT32, TW_SHAPE(3), 1, -2, 0));
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_layer_regularization_loss(bn)), 0.5 * 3 + 3, 1e-6);
    /* The penalty is differentiable: d(l2 sum w^2)/dw = 2 l2 w. */
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *loss = tw_layer_regularization_loss(d);
    tw_tape_end(tape);
    tw_tensor *grad = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, loss, 1, (tw_tensor *[]){tw_layer_weight(d, 0)}, &grad), ==, 0);
    g_assert_cmpfloat_with_epsilon(sum_of(tw_sub(grad, tw_mul_scalar(tw_layer_weight(d, 0), 0.02)), false), 0, 1e-6);
    tw_tape_free(tape);
    tw_layer_unref(bn);
    tw_layer_unref(e);
    tw_layer_unref(both);
    tw_layer_unref(d);
    tw_scope_end();
}

static void test_clone(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dense", "d", {"units", "7"}, {"activation", "tanh"}, {"kernel_initializer", "he_normal"});
    tw_layer_set_input_shape(d, &(tw_shape){2, {-1, 3}});
    tw_layer_set_trainable(d, false);
    build(d, (tw_shape){2, {-1, 3}});
    tw_layer *copy = tw_layer_clone(d, "copy");
    g_assert_cmpstr(tw_layer_name(copy), ==, "copy");
    g_assert_false(tw_layer_built(copy));
    g_assert_cmpint(tw_layer_nweights(copy), ==, 0);
    g_assert_false(tw_layer_trainable(copy));
    g_assert_cmpint(tw_layer_input_shape(copy)->dims[1], ==, 3);
    const char *keys[] = {"units", "activation", "kernel_initializer", "use_bias"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_autofree char *a = tw_layer_get_text(d, keys[i]), *b = tw_layer_get_text(copy, keys[i]);
        g_assert_cmpstr(a, ==, b);
    }
    /* The copy is configured on its own. */
    g_assert_cmpint(tw_layer_set(copy, "units", "2"), ==, 0);
    g_assert_cmpint(tw_layer_get(d, "units")->number, ==, 7);
    /* Clones of stateful layers start with their own state. */
    tw_layer *drop = LAYER("Dropout", "drop", {"rate", "0.5"});
    g_assert_nonnull(tw_layer_call(drop, tw_ones(TW_FLOAT32, TW_SHAPE(4)), true));
    tw_layer *drop2 = tw_layer_clone(drop, "drop");
    g_assert_nonnull(tw_layer_call(drop2, tw_ones(TW_FLOAT32, TW_SHAPE(4)), true));
    tw_layer_unref(drop2);
    tw_layer_unref(drop);
    tw_layer_unref(copy);
    tw_layer_unref(d);
    tw_scope_end();
}

static void test_restore(void)
{
    tw_scope_begin();
    tw_layer *d = LAYER("Dense", "d", {"units", "2"});
    tw_tensor *kernel = MAKE(TW_FLOAT32, TW_SHAPE(3, 2), 1, 2, 3, 4, 5, 6);
    /* Before the build, values wait for it (TF2's deferred restore). */
    g_assert_cmpint(tw_layer_restore_weight(d, "d/kernel", tw_full(9, TW_FLOAT32, TW_SHAPE(3, 2))), ==, 0);
    g_assert_cmpint(tw_layer_restore_weight(d, "d/kernel", kernel), ==, 0); /* the later value wins */
    g_assert_cmpint(tw_layer_pending_restores(d), ==, 1);
    build(d, (tw_shape){2, {-1, 3}});
    g_assert_cmpint(tw_layer_pending_restores(d), ==, 0);
    CHECK(tw_layer_weight(d, 0), TW_SHAPE(3, 2), 0, 1, 2, 3, 4, 5, 6);
    /* After, the value is assigned at once. */
    g_assert_cmpint(tw_layer_restore_weight(d, "d/bias", MAKE(TW_FLOAT32, TW_SHAPE(2), -1, 1)), ==, 0);
    CHECK(tw_layer_call(d, MAKE(TW_FLOAT32, TW_SHAPE(1, 3), 1, 0, 1), false), TW_SHAPE(1, 2), 1e-6, 5, 9);

    g_assert_cmpint(tw_layer_restore_weight(d, "d/bias", MAKE(TW_FLOAT32, TW_SHAPE(3), 1, 2, 3)), ==, -1);
    check_error("d/bias: shape (3,) does not match the layer's (2,)");
    g_assert_cmpint(tw_layer_restore_weight(d, "d/bias", MAKE(TW_FLOAT64, TW_SHAPE(2), 1, 2)), ==, -1);
    check_error("d/bias: dtype float64 does not match the layer's float32");
    g_assert_cmpint(tw_layer_restore_weight(d, "d/gamma", kernel), ==, -1);
    check_error("d/gamma: layer 'd' has no weight \"gamma\"");
    g_assert_cmpint(tw_layer_restore_weight(d, "e/kernel", kernel), ==, -1);
    check_error("e/kernel: not a weight of layer 'd'");

    /* A deferred value of the wrong shape fails the build, naming the weight. */
    tw_layer *e = LAYER("Embedding", "e", {"input_dim", "4"}, {"output_dim", "2"});
    g_assert_cmpint(tw_layer_restore_weight(e, "e/embeddings", tw_ones(TW_FLOAT32, TW_SHAPE(2))), ==, 0);
    tw_rng *rng = tw_rng_new(1);
    g_assert_cmpint(tw_layer_build(e, &(tw_shape){2, {-1, 5}}, rng), ==, -1);
    check_error("e/embeddings: shape (2,) does not match the layer's (4, 2)");
    g_assert_false(tw_layer_built(e));
    tw_rng_free(rng);

    /* A BatchNormalization's statistics restore like any weight. */
    tw_layer *bn = tw_layer_new("BatchNormalization", "bn");
    g_assert_cmpint(tw_layer_restore_weight(bn, "bn/moving_variance", MAKE(TW_FLOAT32, TW_SHAPE(2), 4, 9)), ==, 0);
    CHECK(tw_layer_call(bn, MAKE(TW_FLOAT32, TW_SHAPE(1, 2), 2, 3), false), TW_SHAPE(1, 2), 1e-3, 1, 1);
    tw_layer_unref(bn);
    tw_layer_unref(e);
    tw_layer_unref(d);
    tw_scope_end();
}

static void test_constructors(void)
{
    tw_scope_begin();
    tw_layer *d = tw_dense(64, "relu");
    g_assert_cmpstr(tw_layer_class_of(d)->name, ==, "Dense");
    g_assert_cmpint(tw_layer_get(d, "units")->number, ==, 64);
    g_assert_cmpstr(tw_layer_get(d, "activation")->choice, ==, "relu");
    tw_layer *linear = tw_dense(3, NULL);
    g_assert_cmpstr(tw_layer_get(linear, "activation")->choice, ==, "linear");
    g_assert_null(tw_dense(0, NULL));
    check_error("units: expected a positive integer, got 0");
    g_assert_null(tw_dense(3, "relu6"));
    tw_error_clear();

    tw_layer *conv = tw_conv2d_layer(32, 3, "relu");
    g_assert_nonnull(conv);
    g_autofree char *kernel_size = tw_layer_get_text(conv, "kernel_size");
    g_assert_cmpstr(kernel_size, ==, "3,3");
    g_assert_cmpint(tw_layer_get(conv, "filters")->number, ==, 32);
    tw_layer *pool = tw_max_pooling2d_layer(2);
    g_autofree char *pool_size = tw_layer_get_text(pool, "pool_size");
    g_assert_cmpstr(pool_size, ==, "2,2");

    tw_layer *flat = tw_flatten_layer();
    g_assert_cmpstr(tw_layer_class_of(flat)->name, ==, "Flatten");
    tw_layer *drop = tw_dropout_layer(0.2);
    g_assert_cmpfloat(tw_layer_get(drop, "rate")->number, ==, 0.2);
    g_assert_null(tw_dropout_layer(1));
    tw_error_clear();
    tw_layer *in = tw_input_layer(&(tw_shape){4, {-1, 28, 28, 1}});
    g_assert_cmpint(tw_layer_input_shape(in)->ndim, ==, 4);
    g_assert_cmpint(tw_layer_input_shape(in)->dims[2], ==, 28);
    g_assert_null(tw_input_layer(&(tw_shape){2, {-1, 0}}));
    tw_error_clear();

    tw_layer *layers[] = {d, linear, conv, pool, flat, drop, in};
    for (size_t i = 0; i < G_N_ELEMENTS(layers); i++)
        tw_layer_unref(layers[i]);
    tw_scope_end();
}

/* Every class here is registered with a palette group, a summary and help
 * for each parameter, and its defaults make a layer that infers. */
static void test_registered(void)
{
    const char *names[] = {"Dense", "Rescaling", "Flatten", "Reshape", "Dropout", "Activation", "ReLU",
                           "LeakyReLU", "ELU", "Softmax", "Embedding", "BatchNormalization"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const tw_layer_class *k = tw_layer_class_find(names[i]);
        g_assert_nonnull(k);
        g_assert_cmpstr(k->name, ==, names[i]);
        g_assert_true(k->group && k->group[0] && k->summary && k->summary[0]);
        for (int p = 0; p < k->nparams; p++)
            g_assert_true(k->params[p].help && k->params[p].help[0]);
        tw_layer *layer = tw_layer_new(names[i], "x");
        tw_shape out;
        if (tw_layer_infer(layer, &(tw_shape){2, {-1, 8}}, &out, NULL, NULL))
            g_error("%s: %s", names[i], tw_last_error());
        tw_layer_unref(layer);
    }
}

/* Sequential inside Sequential, 40 deep: inferring, counting and building
 * it asked every level's children twice (2^40 calls; depth 26 took 5 s).
 * Catastrophic bound only: the whole of it well under 2 s. */
static void test_deep_nesting(void)
{
    GTimer *timer = g_timer_new();
    tw_layer *inner = LAYER("Dense", "dense", {"units", "3"});
    for (int depth = 0; depth < 40; depth++) {
        tw_model *outer = tw_sequential_new(NULL);
        g_assert_cmpint(tw_model_add(outer, inner), ==, 0);
        inner = outer;
    }
    tw_shape in = {2, {-1, 5}}, out;
    int64_t trainable = 0, frozen = 0;
    g_assert_cmpint(tw_layer_infer(inner, &in, &out, &trainable, &frozen), ==, 0);
    g_assert_cmpint(out.ndim, ==, 2);
    g_assert_cmpint(out.dims[1], ==, 3);
    g_assert_cmpint(trainable, ==, 5 * 3 + 3);
    g_assert_cmpint(frozen, ==, 0);
    g_assert_cmpint(tw_model_build(inner, &in, 1), ==, 0);
    int64_t total;
    g_assert_cmpint(tw_model_count_params(inner, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(total, ==, 5 * 3 + 3);
    tw_scope_begin();
    tw_tensor *y = tw_model_call(inner, tw_ones(TW_FLOAT32, TW_SHAPE(4, 5)), false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, 3);
    tw_scope_end();
    double seconds = g_timer_elapsed(timer, NULL);
    g_test_message("40 nested models: %.3f s", seconds);
    g_assert_cmpfloat(seconds, <, 2);
    g_timer_destroy(timer);
    tw_layer_unref(inner);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layers/dense/forward", test_dense_forward);
    g_test_add_func("/layers/dense/gradients", test_dense_gradients);
    g_test_add_func("/layers/rescaling", test_rescaling);
    g_test_add_func("/layers/flatten", test_flatten);
    g_test_add_func("/layers/reshape", test_reshape);
    g_test_add_func("/layers/dropout", test_dropout);
    g_test_add_func("/layers/activation-layers", test_activation_layers);
    g_test_add_func("/layers/embedding/forward", test_embedding);
    g_test_add_func("/layers/embedding/gradients", test_embedding_gradients);
    g_test_add_func("/layers/batchnorm/shapes", test_batchnorm_shapes);
    g_test_add_func("/layers/batchnorm/statistics", test_batchnorm_statistics);
    g_test_add_func("/layers/batchnorm/gradients", test_batchnorm_gradients);
    g_test_add_func("/layers/batchnorm/fused", test_batchnorm_fused);
    g_test_add_func("/layers/bad-values", test_bad_values);
    g_test_add_func("/layers/infer-counts", test_infer_counts);
    g_test_add_func("/layers/frozen", test_frozen);
    g_test_add_func("/layers/regularization", test_regularization);
    g_test_add_func("/layers/clone", test_clone);
    g_test_add_func("/layers/restore", test_restore);
    g_test_add_func("/layers/constructors", test_constructors);
    g_test_add_func("/layers/registered", test_registered);
    g_test_add_func("/layers/deep-nesting", test_deep_nesting);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
