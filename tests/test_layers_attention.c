/* The attention layers: MultiHeadAttention, Attention (dot and concat
 * scores) and AdditiveAttention against PyTorch (tests/layers_attention_ref.h,
 * written by tools/gen_attention_ref.py) on Keras' weight layout, MHA with a
 * separate key, value_dim and output_shape;
 * Keras' parameter counts and weight order, gradients by finite
 * differences, dropout only in training, and the messages of bad shapes and
 * unsupported attention_axes. The keras-functional corpus' transformer
 * (two MultiHeadAttention blocks, Keras 3 .h5 with its trained weights)
 * predicts as PyTorch computes it from the same weights. MultiHeadAttention's
 * attention_mask against PyTorch's masked attention. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "layers_attention_ref.h"
#include "tw/keras_file.h"
#include "tw/model.h"

static tw_tensor *from(const double *values, int ndim, const int64_t *shape)
{
    return tw_tensor_from_data(values, TW_FLOAT64, ndim, shape);
}

/* The shape and the values (row-major) of t, within tol. */
static void check(const char *what, tw_tensor *t, int ndim, const int64_t *shape, const double *expected, double tol)
{
    if (!t)
        g_error("%s: expected a tensor, got an error: %s", what, tw_last_error());
    g_assert_cmpint(tw_tensor_ndim(t), ==, ndim);
    g_assert_cmpint(memcmp(tw_tensor_shape(t), shape, sizeof(int64_t) * ndim), ==, 0);
    tw_tensor *c = tw_contiguous(t);
    const double *v = tw_tensor_data(c);
    for (int64_t i = 0; i < tw_tensor_numel(c); i++)
        if (!(fabs(v[i] - expected[i]) <= tol))
            g_error("%s: element %lld is %.12g, expected %.12g", what, (long long)i, v[i], expected[i]);
}

static tw_layer *layer_with(const char *class_name, const char *name, int n, const char *const (*kv)[2])
{
    tw_layer *layer = tw_layer_new(class_name, name);
    for (int i = 0; i < n; i++)
        if (tw_layer_set(layer, kv[i][0], kv[i][1]))
            g_error("%s = %s: %s", kv[i][0], kv[i][1], tw_last_error());
    return layer;
}
#define LAYER(class_name, name, ...)                                                                         \
    layer_with(class_name, name, sizeof((const char *const[][2]){__VA_ARGS__}) / sizeof(const char *const[2]), \
               (const char *const[][2]){__VA_ARGS__})
#define MHA(name, ...) LAYER("MultiHeadAttention", name, __VA_ARGS__)

/* Output shape and Keras' parameter count for the inputs. */
static void check_infer(const tw_layer *layer, const tw_shape *in, int n, tw_shape expected, int64_t params)
{
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    int64_t t = -1, nt = -1;
    if (tw_layer_infer_n(layer, in, n, out, &nout, &t, &nt))
        g_error("infer: %s", tw_last_error());
    g_assert_cmpint(nout, ==, 1);
    g_assert_cmpint(out[0].ndim, ==, expected.ndim);
    g_assert_cmpint(memcmp(out[0].dims, expected.dims, sizeof(int64_t) * expected.ndim), ==, 0);
    g_assert_cmpint(t, ==, params);
    g_assert_cmpint(nt, ==, 0);
}

static void check_infer_error(const tw_layer *layer, const tw_shape *in, int n, const char *message)
{
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    g_assert_cmpint(tw_layer_infer_n(layer, in, n, out, &nout, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    tw_error_clear();
}

static void build_n(tw_layer *layer, const tw_shape *in, int n)
{
    tw_layer_set_dtype(layer, TW_FLOAT64);
    tw_rng *rng = tw_rng_new(1);
    if (tw_layer_build_n(layer, in, n, rng))
        g_error("build: %s", tw_last_error());
    tw_rng_free(rng);
}

static void set_weights(tw_layer *layer, tw_tensor *const *values)
{
    for (int i = 0; i < tw_layer_nweights(layer); i++)
        if (tw_assign(tw_layer_weight(layer, i), values[i]))
            g_error("assign %d: %s", i, tw_last_error());
}

static tw_tensor *call(tw_layer *layer, int n, tw_tensor *const *in, bool training, uint64_t seed)
{
    tw_rng *rng = tw_rng_new(seed);
    tw_call_context ctx = {.training = training, .rng = rng};
    tw_tensor *out[TW_MAX_LAYER_IO];
    int nout = tw_layer_call_n(layer, in, n, out, &ctx);
    tw_rng_free(rng);
    if (nout != 1)
        g_error("%s: %s", tw_layer_name(layer), tw_last_error());
    return out[0];
}

/* For gc_check: inputs are query, value, then the layer's weights (which
 * the layer reads itself). */
static tw_tensor *call_qv(tw_tensor *const *inputs, void *layer)
{
    return call(layer, 2, inputs, true, 3);
}

static void test_mha_self_attention(void)
{
    tw_scope_begin();
    tw_layer *l = MHA("mha", {"num_heads", "2"}, {"key_dim", "3"});
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}};
    /* query, key, value: 4*2*3 + 2*3 each; output: 2*3*4 + 4 */
    check_infer(l, in, 2, (tw_shape){3, {-1, 3, 4}}, 3 * 30 + 28);
    build_n(l, in, 2);
    static const char *const names[] = {"query_kernel", "query_bias", "key_kernel", "key_bias",
                                        "value_kernel", "value_bias", "attention_output_kernel",
                                        "attention_output_bias"};
    g_assert_cmpint(tw_layer_nweights(l), ==, 8);
    for (int i = 0; i < 8; i++)
        g_assert_cmpstr(tw_layer_weight_spec(l, i)->name, ==, names[i]);
    g_assert_cmpint(tw_layer_weight_spec(l, 0)->shape.ndim, ==, 3);
    g_assert_cmpint(tw_layer_weight_spec(l, 6)->shape.dims[0], ==, 2);
    set_weights(l, (tw_tensor *[]){from(mha_wq, TW_SHAPE(4, 2, 3)), from(mha_bq, TW_SHAPE(2, 3)),
                                   from(mha_wk, TW_SHAPE(4, 2, 3)), from(mha_bk, TW_SHAPE(2, 3)),
                                   from(mha_wv, TW_SHAPE(4, 2, 3)), from(mha_bv, TW_SHAPE(2, 3)),
                                   from(mha_wo, TW_SHAPE(2, 3, 4)), from(mha_bo, TW_SHAPE(4))});
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    check("mha (PyTorch)", call(l, 2, (tw_tensor *[]){q, v}, false, 1), TW_SHAPE(2, 3, 4), mha_y, 1e-12);
    /* The key given explicitly as the value is the same call. */
    check("mha key = value", call(l, 3, (tw_tensor *[]){q, v, v}, false, 1), TW_SHAPE(2, 3, 4), mha_y, 1e-12);
    /* dropout 0: training changes nothing. */
    check("mha training", call(l, 2, (tw_tensor *[]){q, v}, true, 1), TW_SHAPE(2, 3, 4), mha_y, 1e-12);
    tw_tensor *gin[10] = {tw_copy(q), tw_copy(v)};
    for (int i = 0; i < 8; i++)
        gin[2 + i] = tw_layer_weight(l, i);
    gc_check("MultiHeadAttention", call_qv, 10, gin, l);
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_mha_key_value_dim_output_shape(void)
{
    tw_scope_begin();
    tw_layer *l = MHA("mha", {"num_heads", "2"}, {"key_dim", "3"}, {"value_dim", "2"}, {"output_shape", "3"});
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}, {3, {-1, 5, 5}}};
    /* query 4*6+6, key 5*6+6, value 4*4+4, output 4*3+3 */
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 3}}, 30 + 36 + 20 + 15);
    build_n(l, in, 3);
    set_weights(l, (tw_tensor *[]){from(mha_wq, TW_SHAPE(4, 2, 3)), from(mha_bq, TW_SHAPE(2, 3)),
                                   from(mha2_wk, TW_SHAPE(5, 2, 3)), from(mha_bk, TW_SHAPE(2, 3)),
                                   from(mha2_wv, TW_SHAPE(4, 2, 2)), from(mha2_bv, TW_SHAPE(2, 2)),
                                   from(mha2_wo, TW_SHAPE(2, 2, 3)), from(mha2_bo, TW_SHAPE(3))});
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    tw_tensor *k = from(mha2_k, TW_SHAPE(2, 5, 5));
    check("mha key, value_dim, output_shape (PyTorch)", call(l, 3, (tw_tensor *[]){q, v, k}, false, 1),
          TW_SHAPE(2, 3, 3), mha2_y, 1e-12);
    /* A batch that differs between query and value is refused at the call. */
    tw_tensor *out[TW_MAX_LAYER_IO];
    tw_call_context ctx = {.training = false};
    g_assert_cmpint(tw_layer_call_n(l, (tw_tensor *[]){q, tw_zeros(TW_FLOAT64, TW_SHAPE(1, 5, 4)), k}, 3, out, &ctx),
                    ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "MultiHeadAttention 'mha': query, value and key must have the same batch size, got 2, 1 and 2");
    tw_error_clear();
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_mha_dropout(void)
{
    tw_scope_begin();
    tw_layer *l = MHA("mha", {"num_heads", "2"}, {"key_dim", "3"}, {"dropout", "0.5"});
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}};
    build_n(l, in, 2);
    set_weights(l, (tw_tensor *[]){from(mha_wq, TW_SHAPE(4, 2, 3)), from(mha_bq, TW_SHAPE(2, 3)),
                                   from(mha_wk, TW_SHAPE(4, 2, 3)), from(mha_bk, TW_SHAPE(2, 3)),
                                   from(mha_wv, TW_SHAPE(4, 2, 3)), from(mha_bv, TW_SHAPE(2, 3)),
                                   from(mha_wo, TW_SHAPE(2, 3, 4)), from(mha_bo, TW_SHAPE(4))});
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    /* Inference: no dropout. */
    check("mha inference", call(l, 2, (tw_tensor *[]){q, v}, false, 1), TW_SHAPE(2, 3, 4), mha_y, 1e-12);
    /* Training: the probabilities are dropped, so the output moves; the same
     * generator seed gives the same masks. */
    tw_tensor *a = tw_contiguous(call(l, 2, (tw_tensor *[]){q, v}, true, 7));
    tw_tensor *b = tw_contiguous(call(l, 2, (tw_tensor *[]){q, v}, true, 7));
    const double *av = tw_tensor_data(a), *bv = tw_tensor_data(b);
    double moved = 0;
    for (int i = 0; i < 24; i++) {
        g_assert_cmpfloat(av[i], ==, bv[i]);
        moved = fmax(moved, fabs(av[i] - mha_y[i]));
    }
    g_assert_cmpfloat(moved, >, 1e-3);
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_mha_counts_and_errors(void)
{
    /* The corpus transformer's layer: 4 heads of 8 on (None, 30, 8), with
     * the attention_axes [1] Keras 3 writes for its default. */
    tw_layer *l = MHA("multi_head_attention_6", {"num_heads", "4"}, {"key_dim", "8"}, {"value_dim", "8"},
                      {"dropout", "0.2"}, {"attention_axes", "1"});
    const tw_shape x = {3, {-1, 30, 8}};
    check_infer(l, (tw_shape[]){x, x}, 2, x, 1128);
    tw_layer_unref(l);
    /* Without biases: the four kernels only; rank 4 attends over both middle axes. */
    l = MHA("mha", {"num_heads", "2"}, {"key_dim", "3"}, {"use_bias", "false"});
    check_infer(l, (tw_shape[]){{3, {-1, 3, 4}}, {3, {-1, 5, 4}}}, 2, (tw_shape){3, {-1, 3, 4}}, 4 * 24);
    check_infer(l, (tw_shape[]){{4, {-1, 2, 3, 4}}, {4, {-1, 5, 1, 4}}}, 2, (tw_shape){4, {-1, 2, 3, 4}}, 4 * 24);
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}}, 1,
                      "MultiHeadAttention 'mha': takes (query, value) or (query, value, key), got 1 inputs");
    check_infer_error(l, (tw_shape[]){{2, {-1, 4}}, {3, {-1, 5, 4}}}, 2,
                      "MultiHeadAttention 'mha': query: expected rank 3 or more (batch, ..., features) with known "
                      "features, got (None, 4)");
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}, {4, {-1, 5, 1, 4}}}, 2,
                      "MultiHeadAttention 'mha': query (None, 3, 4) and value (None, 5, 1, 4) must have the same "
                      "rank");
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}, {3, {-1, 5, 4}}, {3, {-1, 6, 4}}}, 3,
                      "MultiHeadAttention 'mha': value (None, 5, 4) and key (None, 6, 4) must have the same steps");
    tw_layer_unref(l);
    l = MHA("mha", {"attention_axes", "2"});
    check_infer_error(l, (tw_shape[]){{4, {-1, 2, 3, 4}}, {4, {-1, 2, 3, 4}}}, 2,
                      "MultiHeadAttention 'mha': attention_axes other than every axis between the batch and the "
                      "features (None, or 1..2 here) are not supported");
    tw_layer_unref(l);
    l = tw_layer_new("MultiHeadAttention", "mha");
    g_assert_cmpint(tw_layer_set(l, "dropout", "1"), ==, -1);
    tw_error_clear();
    g_assert_cmpint(tw_layer_set(l, "output_shape", "2,3"), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "MultiHeadAttention 'mha': output_shape: only one size (the output's last axis) is supported, "
                    "got 2");
    tw_error_clear();
    tw_layer_unref(l);
}

/* For gc_check: query, value, key, then the layer's weights. */
static tw_tensor *call_qvk(tw_tensor *const *inputs, void *layer)
{
    return call(layer, 3, inputs, true, 3);
}

static void test_attention(void)
{
    tw_scope_begin();
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}, {3, {-1, 5, 4}}};
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    tw_tensor *k = from(att_k, TW_SHAPE(2, 5, 4));
    /* Keras' default: dot scores, no weights. */
    tw_layer *l = tw_layer_new("Attention", "attention");
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 4}}, 0);
    tw_layer_unref(l);
    /* use_scale: one scalar, set to 0.7 as the reference's. */
    l = LAYER("Attention", "attention", {"use_scale", "true"});
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 4}}, 1);
    build_n(l, in, 3);
    g_assert_cmpstr(tw_layer_weight_spec(l, 0)->name, ==, "scale");
    set_weights(l, (tw_tensor *[]){tw_scalar_of(0.7, TW_FLOAT64)});
    check("attention dot (PyTorch)", call(l, 3, (tw_tensor *[]){q, v, k}, false, 1), TW_SHAPE(2, 3, 4), att_dot_y,
          1e-12);
    gc_check("Attention dot", call_qvk, 4, (tw_tensor *[]){tw_copy(q), tw_copy(v), tw_copy(k), tw_layer_weight(l, 0)},
             l);
    tw_layer_unref(l);
    /* score_mode concat: scale then concat_score_weight (1.3). */
    l = LAYER("Attention", "attention", {"use_scale", "true"}, {"score_mode", "concat"});
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 4}}, 2);
    build_n(l, in, 3);
    g_assert_cmpstr(tw_layer_weight_spec(l, 1)->name, ==, "concat_score_weight");
    set_weights(l, (tw_tensor *[]){tw_scalar_of(0.7, TW_FLOAT64), tw_scalar_of(1.3, TW_FLOAT64)});
    check("attention concat (PyTorch)", call(l, 3, (tw_tensor *[]){q, v, k}, false, 1), TW_SHAPE(2, 3, 4),
          att_concat_y, 1e-12);
    gc_check("Attention concat", call_qvk, 5,
             (tw_tensor *[]){tw_copy(q), tw_copy(v), tw_copy(k), tw_layer_weight(l, 0), tw_layer_weight(l, 1)}, l);
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_additive_attention(void)
{
    tw_scope_begin();
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}, {3, {-1, 5, 4}}};
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    tw_tensor *k = from(att_k, TW_SHAPE(2, 5, 4));
    /* Keras' default use_scale: a scale per feature. */
    tw_layer *l = tw_layer_new("AdditiveAttention", "additive_attention");
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 4}}, 4);
    build_n(l, in, 3);
    g_assert_cmpstr(tw_layer_weight_spec(l, 0)->name, ==, "scale");
    set_weights(l, (tw_tensor *[]){from(add_scale, TW_SHAPE(4))});
    check("additive attention (PyTorch)", call(l, 3, (tw_tensor *[]){q, v, k}, false, 1), TW_SHAPE(2, 3, 4), add_y,
          1e-12);
    gc_check("AdditiveAttention", call_qvk, 4,
             (tw_tensor *[]){tw_copy(q), tw_copy(v), tw_copy(k), tw_layer_weight(l, 0)}, l);
    tw_layer_unref(l);
    /* Without scale, on (query, value): the key is the value. */
    l = LAYER("AdditiveAttention", "additive_attention", {"use_scale", "false"});
    check_infer(l, in, 2, (tw_shape){3, {-1, 3, 4}}, 0);
    check("additive attention, no scale (PyTorch)", call(l, 2, (tw_tensor *[]){q, v}, false, 1), TW_SHAPE(2, 3, 4),
          add_noscale_y, 1e-12);
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_attention_dropout_and_errors(void)
{
    tw_scope_begin();
    tw_layer *l = LAYER("Attention", "attention", {"dropout", "0.5"});
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    /* Inference: softmax(q vᵀ) v untouched; training: the probabilities are
     * dropped, the same generator seed giving the same masks. */
    tw_tensor *ref = tw_contiguous(tw_matmul(tw_softmax(tw_matmul_ex(q, v, false, true), -1), v));
    check("attention inference", call(l, 2, (tw_tensor *[]){q, v}, false, 1), TW_SHAPE(2, 3, 4),
          tw_tensor_data(ref), 1e-12);
    tw_tensor *a = tw_contiguous(call(l, 2, (tw_tensor *[]){q, v}, true, 7));
    tw_tensor *b = tw_contiguous(call(l, 2, (tw_tensor *[]){q, v}, true, 7));
    const double *av = tw_tensor_data(a), *bv = tw_tensor_data(b), *rv = tw_tensor_data(ref);
    double moved = 0;
    for (int i = 0; i < 24; i++) {
        g_assert_cmpfloat(av[i], ==, bv[i]);
        moved = fmax(moved, fabs(av[i] - rv[i]));
    }
    g_assert_cmpfloat(moved, >, 1e-3);
    tw_layer_unref(l);
    l = tw_layer_new("AdditiveAttention", "add_att");
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}, {3, {-1, 5, 6}}}, 2,
                      "AdditiveAttention 'add_att': query (None, 3, 4) and value (None, 5, 6) must have the same "
                      "features");
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}, {3, {-1, 5, 6}}, {3, {-1, 4, 4}}}, 3,
                      "AdditiveAttention 'add_att': value (None, 5, 6) and key (None, 4, 4) must have the same steps");
    check_infer_error(l, (tw_shape[]){{4, {-1, 3, 2, 4}}, {3, {-1, 5, 4}}}, 2,
                      "AdditiveAttention 'add_att': query: expected rank 3 (batch, steps, features) with known "
                      "features, got (None, 3, 2, 4)");
    check_infer_error(l, (tw_shape[]){{3, {-1, 3, 4}}}, 1,
                      "AdditiveAttention 'add_att': takes (query, value) or (query, value, key), got 1 inputs");
    tw_layer_unref(l);
    l = tw_layer_new("Attention", "attention");
    g_assert_cmpint(tw_layer_set(l, "score_mode", "general"), ==, -1);
    tw_error_clear();
    tw_layer_unref(l);
    tw_scope_end();
}

/* Causal masking: query step i attends to key steps 0..i only, so its
 * output is the unmasked layer's (same weights) on the first i + 1 value
 * steps alone. Both layers are built alike; weights copied. */
static void check_causal(const char *what, tw_layer *causal, tw_layer *plain, tw_tensor *q, tw_tensor *v)
{
    int64_t t = tw_tensor_dim(q, 1);
    tw_tensor *y = call(causal, 2, (tw_tensor *[]){q, v}, false, 1);
    g_assert_nonnull(y);
    for (int64_t i = 0; i < t; i++) {
        tw_tensor *qi = tw_slice(q, 1, i, i + 1, 1), *vi = tw_slice(v, 1, 0, i + 1, 1);
        tw_tensor *want = tw_contiguous(call(plain, 2, (tw_tensor *[]){qi, vi}, false, 1));
        tw_tensor *got = tw_contiguous(tw_slice(y, 1, i, i + 1, 1));
        check(what, got, tw_tensor_ndim(want), tw_tensor_shape(want), tw_tensor_data(want), 1e-12);
    }
}

static void test_causal_masks(void)
{
    tw_scope_begin();
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}};
    tw_layer *causal = MHA("mha_c", {"num_heads", "2"}, {"key_dim", "3"}, {"use_causal_mask", "true"});
    tw_layer *plain = MHA("mha_p", {"num_heads", "2"}, {"key_dim", "3"});
    build_n(causal, in, 2);
    build_n(plain, in, 2);
    tw_tensor *w[8] = {from(mha_wq, TW_SHAPE(4, 2, 3)), from(mha_bq, TW_SHAPE(2, 3)),
                       from(mha_wk, TW_SHAPE(4, 2, 3)), from(mha_bk, TW_SHAPE(2, 3)),
                       from(mha_wv, TW_SHAPE(4, 2, 3)), from(mha_bv, TW_SHAPE(2, 3)),
                       from(mha_wo, TW_SHAPE(2, 3, 4)), from(mha_bo, TW_SHAPE(4))};
    set_weights(causal, w);
    set_weights(plain, w);
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    check_causal("mha use_causal_mask", causal, plain, q, v);
    /* It changes the output (the last query step sees 3 of the 5 steps). */
    tw_tensor *diff = tw_sub(call(causal, 2, (tw_tensor *[]){q, v}, false, 1), from(mha_y, TW_SHAPE(2, 3, 4)));
    g_assert_cmpfloat(tw_tensor_item(tw_max(tw_abs(diff), 0, NULL, false)), >, 1e-3);
    tw_tensor *gin[10] = {tw_copy(q), tw_copy(v)};
    for (int i = 0; i < 8; i++)
        gin[2 + i] = tw_layer_weight(causal, i);
    gc_check("MultiHeadAttention use_causal_mask", call_qv, 10, gin, causal);
    check_infer_error(causal, (tw_shape[]){{4, {-1, 2, 3, 4}}, {4, {-1, 2, 3, 4}}}, 2,
                      "MultiHeadAttention 'mha_c': use_causal_mask needs (batch, steps, features) inputs, got query "
                      "(None, 2, 3, 4)");
    tw_layer_unref(causal);
    tw_layer_unref(plain);

    const char *classes[] = {"Attention", "AdditiveAttention"};
    for (int c = 0; c < 2; c++) {
        causal = LAYER(classes[c], "att_c", {"causal", "true"}, {"use_scale", "false"});
        plain = LAYER(classes[c], "att_p", {"use_scale", "false"});
        build_n(causal, in, 2);
        build_n(plain, in, 2);
        check_causal(classes[c], causal, plain, q, v);
        gc_check("Attention causal", call_qv, 2, (tw_tensor *[]){tw_copy(q), tw_copy(v)}, causal);
        tw_layer_unref(causal);
        tw_layer_unref(plain);
    }
    tw_scope_end();
}

/* For gc_check: query and value (then the weights), with a fixed mask. */
typedef struct {
    tw_layer *layer;
    tw_tensor *mask;
} masked_call;

static tw_tensor *call_qv_mask(tw_tensor *const *inputs, void *data)
{
    masked_call *m = data;
    return call(m->layer, 3, (tw_tensor *[]){inputs[0], inputs[1], m->mask}, true, 3);
}

/* attention_mask: the call's last input, (batch, query steps, key steps),
 * 0 hiding a key step from a query step, against PyTorch's attention with
 * its boolean attn_mask; with use_causal_mask as well (Keras ANDs them). */
static void test_attention_mask(void)
{
    tw_scope_begin();
    tw_layer *l = MHA("mha_m", {"num_heads", "2"}, {"key_dim", "3"}, {"attention_mask", "true"});
    const tw_shape in[] = {{3, {-1, 3, 4}}, {3, {-1, 5, 4}}, {3, {-1, 3, 5}}};
    /* The mask holds no weights: Keras' count. */
    check_infer(l, in, 3, (tw_shape){3, {-1, 3, 4}}, 3 * 30 + 28);
    check_infer(l, (tw_shape[]){in[0], in[1], in[1], in[2]}, 4, (tw_shape){3, {-1, 3, 4}}, 3 * 30 + 28);
    check_infer_error(l, in, 2,
                      "MultiHeadAttention 'mha_m': takes (query, value, attention_mask) or (query, value, key, "
                      "attention_mask), got 2 inputs");
    check_infer_error(l, (tw_shape[]){in[0], in[1], {3, {-1, 5, 3}}}, 3,
                      "MultiHeadAttention 'mha_m': attention_mask (None, 5, 3) does not fit query (None, 3, 4) and "
                      "key (None, 5, 4): expected (batch, query steps, key steps)");
    check_infer_error(l, (tw_shape[]){in[0], in[1], {2, {-1, 3}}}, 3,
                      "MultiHeadAttention 'mha_m': attention_mask (None, 3) does not fit query (None, 3, 4) and key "
                      "(None, 5, 4): expected (batch, query steps, key steps)");
    build_n(l, in, 3);
    tw_tensor *w[8] = {from(mha_wq, TW_SHAPE(4, 2, 3)), from(mha_bq, TW_SHAPE(2, 3)),
                       from(mha_wk, TW_SHAPE(4, 2, 3)), from(mha_bk, TW_SHAPE(2, 3)),
                       from(mha_wv, TW_SHAPE(4, 2, 3)), from(mha_bv, TW_SHAPE(2, 3)),
                       from(mha_wo, TW_SHAPE(2, 3, 4)), from(mha_bo, TW_SHAPE(4))};
    set_weights(l, w);
    tw_tensor *q = from(mha_q, TW_SHAPE(2, 3, 4)), *v = from(mha_v, TW_SHAPE(2, 5, 4));
    tw_tensor *mask = from(mha_mask, TW_SHAPE(2, 3, 5));
    check("mha attention_mask (PyTorch)", call(l, 3, (tw_tensor *[]){q, v, mask}, false, 1), TW_SHAPE(2, 3, 4),
          mha_mask_y, 1e-12);
    check("mha attention_mask, key given", call(l, 4, (tw_tensor *[]){q, v, v, mask}, false, 1),
          TW_SHAPE(2, 3, 4), mha_mask_y, 1e-12);
    /* A boolean mask (what Keras users pass) is the same mask. */
    check("mha attention_mask as bool", call(l, 3, (tw_tensor *[]){q, v, tw_cast(mask, TW_BOOL)}, false, 1),
          TW_SHAPE(2, 3, 4), mha_mask_y, 1e-12);
    /* A mask of ones hides nothing. */
    check("mha attention_mask of ones", call(l, 3, (tw_tensor *[]){q, v, tw_ones(TW_FLOAT64, TW_SHAPE(2, 3, 5))},
                                             false, 1),
          TW_SHAPE(2, 3, 4), mha_y, 1e-12);
    masked_call mc = {l, mask};
    tw_tensor *gin[10] = {tw_copy(q), tw_copy(v)};
    for (int i = 0; i < 8; i++)
        gin[2 + i] = tw_layer_weight(l, i);
    gc_check("MultiHeadAttention attention_mask", call_qv_mask, 10, gin, &mc);
    /* A mask for another batch, refused by name. */
    tw_call_context ctx = {0};
    tw_tensor *out[1];
    g_assert_cmpint(tw_layer_call_n(l, (tw_tensor *[]){q, v, tw_ones(TW_FLOAT64, TW_SHAPE(1, 3, 5))}, 3, out, &ctx),
                    ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "MultiHeadAttention 'mha_m': attention_mask: expected (batch, query steps, key steps) for a "
                    "batch of 2, got 15 values in a batch of 1");
    tw_error_clear();
    tw_layer_unref(l);
    l = MHA("mha_mc", {"num_heads", "2"}, {"key_dim", "3"}, {"attention_mask", "true"}, {"use_causal_mask", "true"});
    build_n(l, in, 3);
    set_weights(l, w);
    check("mha attention_mask and use_causal_mask", call(l, 3, (tw_tensor *[]){q, v, mask}, false, 1),
          TW_SHAPE(2, 3, 4), mha_mask_causal_y, 1e-12);
    mc.layer = l;
    for (int i = 0; i < 8; i++)
        gin[2 + i] = tw_layer_weight(l, i);
    gc_check("MultiHeadAttention attention_mask and use_causal_mask", call_qv_mask, 10, gin, &mc);
    tw_layer_unref(l);
    tw_scope_end();
}

static void test_corpus_transformer(void)
{
    char *path = g_test_build_filename(G_TEST_DIST, "..", "..", "shared", "corpus", "keras-functional",
                                       "11-k3-transformer-mha-h5.h5", NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("the shared corpus (keras-functional) is not here");
        g_free(path);
        return;
    }
    tw_model *m = tw_model_open(path);
    if (!m)
        g_error("%s", tw_last_error());
    g_assert_true(tw_model_open_had_weights());
    tw_scope_begin();
    tw_tensor *x = tw_cast(from(transformer_x, TW_SHAPE(2, 30, 8)), TW_FLOAT32);
    /* float32 through two attention blocks: within 1e-4 (a missing
     * 1/sqrt(key_dim) moves the outputs by 1e-2). */
    check("transformer predict (PyTorch on the h5 weights)", tw_cast(tw_model_predict(m, x, 2), TW_FLOAT64),
          TW_SHAPE(2, 1), transformer_y, 1e-4);
    tw_scope_end();
    tw_layer_unref(m);
    g_free(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/attention/mha/self_attention", test_mha_self_attention);
    g_test_add_func("/attention/mha/key_value_dim_output_shape", test_mha_key_value_dim_output_shape);
    g_test_add_func("/attention/mha/dropout", test_mha_dropout);
    g_test_add_func("/attention/mha/counts_and_errors", test_mha_counts_and_errors);
    g_test_add_func("/attention/attention", test_attention);
    g_test_add_func("/attention/additive_attention", test_additive_attention);
    g_test_add_func("/attention/dropout_and_errors", test_attention_dropout_and_errors);
    g_test_add_func("/attention/corpus_transformer", test_corpus_transformer);
    g_test_add_func("/attention/causal_masks", test_causal_masks);
    g_test_add_func("/attention/mha/attention_mask", test_attention_mask);
    return g_test_run();
}
