/* MultiHeadAttention: Keras' layer, called on (query, value) or (query,
 * value, key); the key defaults to the value. With `attention_mask` set the
 * call's last input is Keras' attention_mask (batch, query steps, key
 * steps): where it is 0, Keras' masked softmax adds -1e9 to the score, so
 * the query step does not attend to that key step (a query step masked
 * from every key step gets what that softmax gives, as in Keras: in
 * float32, equal weights).
 *
 *   q = query · Wq + bq         Wq (query_dim, heads, key_dim)
 *   k = key · Wk + bk           Wk (key_dim_in, heads, key_dim)
 *   v = value · Wv + bv         Wv (value_dim_in, heads, value_dim)
 *   p = softmax(q kᵀ / sqrt(key_dim) + adders) over the key axis, the adders
 *       -1e9 where the attention_mask is 0 and (with use_causal_mask) where
 *       the key step comes after the query step; dropped out in training
 *   y = (p v) · Wo + bo         Wo (heads, value_dim, out), out = output_shape or query_dim
 *
 * Weights are Keras' EinsumDense kernels and biases in Keras' order (query,
 * key, value, attention_output; kernel then bias), named "query_kernel",
 * "query_bias", ... (a '/' would read as a layer path in checkpoints).
 * Attention runs over every axis between the batch and the features taken
 * together, Keras' default attention_axes; other attention_axes are refused.
 * Keras 3's `seed` is no parameter (the reader skips it; the model's seed
 * decides the dropout masks), so files written here also load in Keras 2. */
#include <math.h>
#include <stdio.h>

#include "layer_common.h"

enum { NUM_HEADS, KEY_DIM, VALUE_DIM, DROPOUT, USE_BIAS, OUTPUT_SHAPE, ATTENTION_AXES, KERNEL_INIT, BIAS_INIT,
       KERNEL_REG, BIAS_REG, USE_CAUSAL_MASK, ATTENTION_MASK };

static const tw_param_def params[] = {
    [NUM_HEADS] = {"num_heads", TW_PARAM_INT, "2", 1, 1e6, .help = "Number of attention heads"},
    [KEY_DIM] = {"key_dim", TW_PARAM_INT, "16", 1, 1e9, .help = "Size of each head for query and key"},
    [VALUE_DIM] = {"value_dim", TW_PARAM_INT, "", 1, 1e9, .nullable = true,
                   .help = "Size of each head for value (None: key_dim)"},
    [DROPOUT] = {"dropout", TW_PARAM_FLOAT, "0", 0, 1, .help = "Dropout rate on the attention probabilities"},
    [USE_BIAS] = {"use_bias", TW_PARAM_BOOL, "true", .help = "Add learned biases to the projections"},
    [OUTPUT_SHAPE] = {"output_shape", TW_PARAM_INTS, "", 1, 1e9, 0, .nullable = true,
                      .help = "Size of the output's last axis (None: the query's)"},
    [ATTENTION_AXES] = {"attention_axes", TW_PARAM_INTS, "", -TW_MAX_DIMS, TW_MAX_DIMS - 1, 0, .nullable = true,
                        .help = "Axes attended over; only Keras' default (every axis between batch and features)"},
    [KERNEL_INIT] = {"kernel_initializer", TW_PARAM_CHOICE, "glorot_uniform", .choices = tw_initializer_names,
                     .help = "How the projection kernels start"},
    [BIAS_INIT] = {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How the biases start"},
    [KERNEL_REG] = {"kernel_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the kernels"},
    [BIAS_REG] = {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the biases"},
    /* Keras' call argument, not a config key: model files carry it in the
     * call (model_json_functional.c), one value for all of a layer's calls. */
    [USE_CAUSAL_MASK] = {"use_causal_mask", TW_PARAM_BOOL, "false",
                         .help = "Each query step attends only to key steps up to its own (a decoder's mask)"},
    /* Whether the calls pass Keras' attention_mask tensor: it comes in as
     * the last input, and model files carry it in the call. */
    [ATTENTION_MASK] = {"attention_mask", TW_PARAM_BOOL, "false",
                        .help = "The last input is an attention mask (batch, query steps, key steps); 0 hides a key "
                                "step from a query step"},
};

typedef struct {
    tw_rng *rng; /* the layer's own generator for dropout, made on first need */
} mha_state;

static int mha_configure(tw_layer *self)
{
    if (tw__param_float(self, DROPOUT) >= 1)
        return TW_LAYER_ERROR(self, "dropout: expected a number from 0 up to (not including) 1, got %g",
                              tw__param_float(self, DROPOUT));
    const tw_param_value *out = tw_layer_param(self, OUTPUT_SHAPE);
    if (!out->is_null && out->n != 1)
        return TW_LAYER_ERROR(self, "output_shape: only one size (the output's last axis) is supported, got %d",
                              out->n);
    return 0;
}

static int64_t value_dim(const tw_layer *self)
{
    return tw_layer_param(self, VALUE_DIM)->is_null ? tw__param_int(self, KEY_DIM) : tw__param_int(self, VALUE_DIM);
}

/* The attention_axes Keras writes for the default (1 .. rank-2) pass; others
 * are refused. */
static int check_attention_axes(const tw_layer *self, int rank)
{
    const tw_param_value *axes = tw_layer_param(self, ATTENTION_AXES);
    if (axes->is_null)
        return 0;
    bool ok = axes->n == rank - 2;
    for (int i = 0; ok && i < axes->n; i++) {
        int64_t a = axes->ints[i] < 0 ? axes->ints[i] + rank : axes->ints[i];
        ok = a == i + 1;
    }
    if (!ok)
        return TW_LAYER_ERROR(self, "attention_axes other than every axis between the batch and the features "
                                    "(None, or 1..%d here) are not supported",
                              rank - 2);
    return 0;
}

/* The attention_mask: (batch, query steps..., key steps...), Keras'
 * (B, T, S) for rank-3 inputs. */
static int check_mask_shape(const tw_layer *self, const tw_shape *mask, const tw_shape *q, const tw_shape *k)
{
    int steps = q->ndim - 2;
    bool ok = mask->ndim == 1 + 2 * steps;
    for (int d = 0; ok && d < steps; d++) {
        int64_t m = mask->dims[1 + d], mk = mask->dims[1 + steps + d];
        ok = (m < 0 || q->dims[1 + d] < 0 || m == q->dims[1 + d]) &&
             (mk < 0 || k->dims[1 + d] < 0 || mk == k->dims[1 + d]);
    }
    if (ok)
        return 0;
    char a[96], b[96], c[96];
    return TW_LAYER_ERROR(self, "attention_mask %s does not fit query %s and key %s: expected (batch, query steps, "
                                "key steps)",
                          tw_shape_format(mask, a, sizeof a), tw_shape_format(q, b, sizeof b),
                          tw_shape_format(k, c, sizeof c));
}

static int mha_infer_n(const tw_layer *self, const tw_shape *in, int n, tw_shape *outputs, int *noutputs,
                       tw_weight_spec *w, int *nw)
{
    *nw = 0;
    *noutputs = 1;
    bool masked = tw__param_bool(self, ATTENTION_MASK);
    if (masked && n != 3 && n != 4)
        return TW_LAYER_ERROR(self, "takes (query, value, attention_mask) or (query, value, key, attention_mask), "
                                    "got %d inputs",
                              n);
    if (!masked && n != 2 && n != 3)
        return TW_LAYER_ERROR(self, "takes (query, value) or (query, value, key), got %d inputs", n);
    const tw_shape *mask = masked ? &in[--n] : NULL;
    static const char *const role[] = {"query", "value", "key"};
    char a[96], b[96];
    for (int i = 0; i < n; i++)
        if (in[i].ndim < 3 || in[i].dims[in[i].ndim - 1] < 1)
            return TW_LAYER_ERROR(self, "%s: expected rank 3 or more (batch, ..., features) with known features, "
                                        "got %s",
                                  role[i], tw_shape_format(&in[i], a, sizeof a));
    const tw_shape *q = &in[0], *v = &in[1], *k = n == 3 ? &in[2] : &in[1];
    if (v->ndim != q->ndim || k->ndim != q->ndim)
        return TW_LAYER_ERROR(self, "query %s and value %s must have the same rank", tw_shape_format(q, a, sizeof a),
                              tw_shape_format(n == 3 && k->ndim != q->ndim ? k : v, b, sizeof b));
    for (int d = 1; d < v->ndim - 1; d++)
        if (v->dims[d] >= 0 && k->dims[d] >= 0 && v->dims[d] != k->dims[d])
            return TW_LAYER_ERROR(self, "value %s and key %s must have the same steps",
                                  tw_shape_format(v, a, sizeof a), tw_shape_format(k, b, sizeof b));
    if (check_attention_axes(self, q->ndim) < 0)
        return -1;
    if (tw__param_bool(self, USE_CAUSAL_MASK) && q->ndim != 3)
        return TW_LAYER_ERROR(self, "use_causal_mask needs (batch, steps, features) inputs, got query %s",
                              tw_shape_format(q, a, sizeof a));
    if (mask && check_mask_shape(self, mask, q, k) < 0)
        return -1;
    int64_t heads = tw__param_int(self, NUM_HEADS), kd = tw__param_int(self, KEY_DIM), vd = value_dim(self);
    int64_t qdim = q->dims[q->ndim - 1], kdim = k->dims[k->ndim - 1], vdim = v->dims[v->ndim - 1];
    const tw_param_value *os = tw_layer_param(self, OUTPUT_SHAPE);
    int64_t out = os->is_null ? qdim : os->ints[0];
    const char *ki = tw__param_choice(self, KERNEL_INIT), *bi = tw__param_choice(self, BIAS_INIT);
    bool bias = tw__param_bool(self, USE_BIAS);
    const struct {
        const char *kernel, *bias;
        tw_shape kshape, bshape;
    } proj[] = {
        {"query_kernel", "query_bias", {3, {qdim, heads, kd}}, {2, {heads, kd}}},
        {"key_kernel", "key_bias", {3, {kdim, heads, kd}}, {2, {heads, kd}}},
        {"value_kernel", "value_bias", {3, {vdim, heads, vd}}, {2, {heads, vd}}},
        {"attention_output_kernel", "attention_output_bias", {3, {heads, vd, out}}, {1, {out}}},
    };
    for (int i = 0; i < 4; i++) {
        w[(*nw)++] = (tw_weight_spec){proj[i].kernel, proj[i].kshape, ki, true, "kernel_regularizer"};
        if (bias)
            w[(*nw)++] = (tw_weight_spec){proj[i].bias, proj[i].bshape, bi, true, "bias_regularizer"};
    }
    outputs[0] = *q;
    outputs[0].dims[q->ndim - 1] = out;
    return 0;
}

/* x (batch, ..., d) · kernel (d, heads, size) + bias → (batch, heads, steps, size),
 * the steps being x's middle axes taken together. */
static tw_tensor *project_heads(tw_tensor *x, tw_tensor *kernel, tw_tensor *bias)
{
    int64_t batch = tw_tensor_dim(x, 0), d = tw_tensor_dim(x, -1);
    int64_t heads = tw_tensor_dim(kernel, 1), size = tw_tensor_dim(kernel, 2);
    tw_tensor *y = tw_matmul(tw_reshape(tw_contiguous(x), 2, (int64_t[]){-1, d}),
                             tw_reshape(kernel, 2, (int64_t[]){d, heads * size}));
    y = tw_reshape(y, 4, (int64_t[]){batch, -1, heads, size});
    if (bias)
        y = tw_add(y, bias);
    return tw_permute(y, 4, (int[]){0, 2, 1, 3});
}

/* scores (batch, heads, T, S) + (1 - keep) · -1e9, keep the mask as bool
 * (Keras casts it so), one mask for every head; no gradient reaches it. */
static tw_tensor *mask_scores(tw_tensor *scores, tw_tensor *mask)
{
    if (!scores)
        return NULL;
    int64_t batch = tw_tensor_dim(scores, 0), t = tw_tensor_dim(scores, 2), s = tw_tensor_dim(scores, 3);
    tw_tensor *keep = tw_cast(tw_cast(tw_stop_gradient(mask), TW_BOOL), tw_tensor_dtype(scores));
    keep = tw_reshape(tw_contiguous(keep), 4, (int64_t[]){batch, 1, t, s});
    return tw_add(scores, tw_mul_scalar(tw_rsub_scalar(1.0, keep), -1e9));
}

static int mha_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                      const tw_call_context *ctx)
{
    tw_tensor *mask = tw__param_bool(self, ATTENTION_MASK) ? inputs[--n] : NULL;
    tw_tensor *query = inputs[0], *value = inputs[1], *key = n == 3 ? inputs[2] : inputs[1];
    if (tw_tensor_dim(value, 0) != tw_tensor_dim(query, 0) || tw_tensor_dim(key, 0) != tw_tensor_dim(query, 0))
        return TW_LAYER_ERROR(self, "query, value and key must have the same batch size, got %lld, %lld and %lld",
                              (long long)tw_tensor_dim(query, 0), (long long)tw_tensor_dim(value, 0),
                              (long long)tw_tensor_dim(key, 0));
    if (mask) {
        int64_t want = tw_tensor_dim(query, 0);
        for (int d = 1; d < tw_tensor_ndim(query) - 1; d++)
            want *= tw_tensor_dim(query, d) * tw_tensor_dim(key, d);
        if (tw_tensor_dim(mask, 0) != tw_tensor_dim(query, 0) || tw_tensor_numel(mask) != want)
            return TW_LAYER_ERROR(self, "attention_mask: expected (batch, query steps, key steps) for a batch of "
                                        "%lld, got %lld values in a batch of %lld",
                                  (long long)tw_tensor_dim(query, 0), (long long)tw_tensor_numel(mask),
                                  (long long)tw_tensor_dim(mask, 0));
    }
    bool bias = tw__param_bool(self, USE_BIAS);
    tw_tensor *const *wt = self->weights;
#define W(i) wt[bias ? 2 * (i) : (i)]
#define B(i) (bias ? wt[2 * (i) + 1] : NULL)
    int64_t kd = tw__param_int(self, KEY_DIM);
    tw_tensor *q = tw_mul_scalar(project_heads(query, W(0), B(0)), 1.0 / sqrt((double)kd));
    tw_tensor *k = project_heads(key, W(1), B(1));
    tw_tensor *v = project_heads(value, W(2), B(2));
    tw_tensor *scores = tw_matmul_ex(tw_contiguous(q), tw_contiguous(k), false, true);
    if (mask)
        scores = mask_scores(scores, mask);
    if (tw__param_bool(self, USE_CAUSAL_MASK))
        scores = tw__causal_mask_scores(scores);
    tw_tensor *p = tw_softmax(scores, -1);
    double rate = tw__param_float(self, DROPOUT);
    if (ctx->training && rate > 0) {
        mha_state *st = self->state;
        p = tw_dropout(p, rate, tw__layer_rng(self, ctx, &st->rng));
    }
    tw_tensor *c = tw_matmul(p, tw_contiguous(v)); /* (batch, heads, steps, value_dim) */
    int64_t heads = tw_tensor_dim(W(3), 0), vd = tw_tensor_dim(W(3), 1), out = tw_tensor_dim(W(3), 2);
    c = tw_reshape(tw_contiguous(tw_permute(c, 4, (int[]){0, 2, 1, 3})), 2, (int64_t[]){-1, heads * vd});
    tw_tensor *y = tw_matmul(c, tw_reshape(W(3), 2, (int64_t[]){heads * vd, out}));
    if (bias)
        y = tw_add(y, B(3));
#undef W
#undef B
    int nd = tw_tensor_ndim(query);
    int64_t shape[TW_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = tw_tensor_dim(query, d);
    shape[nd - 1] = out;
    outputs[0] = tw_reshape(y, nd, shape);
    if (!outputs[0]) { /* name the layer: a batch mismatch between query and value surfaces here */
        char why[512];
        snprintf(why, sizeof why, "%s", tw_last_error());
        TW_LAYER_ERROR(self, "%s", why);
        return -1;
    }
    return 1;
}

static void mha_finalize(tw_layer *self)
{
    mha_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_MultiHeadAttention = {
    .name = "MultiHeadAttention",
    .group = "Attention",
    .summary = "Scaled dot-product attention over several heads: (query, value[, key])",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .state_size = sizeof(mha_state),
    .configure = mha_configure,
    .infer_n = mha_infer_n,
    .call_n = mha_call_n,
    .finalize = mha_finalize,
};
