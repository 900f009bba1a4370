/* Attention (Luong-style) and AdditiveAttention (Bahdanau-style), Keras'
 * dense attention layers, called on (query, value) or (query, value, key);
 * the key defaults to the value. Inputs are (batch, steps, features):
 *
 *   Attention, score_mode dot:     scores = scale · q kᵀ
 *   Attention, score_mode concat:  scores = w · sum(tanh(scale · (q_i + k_j)))
 *   AdditiveAttention:             scores = sum(scale ⊙ tanh(q_i + k_j))
 *   p = softmax(scores) over the key axis, dropped out in training
 *   y = p v                        (batch, query steps, value features)
 *
 * Attention's `scale` (with use_scale) and `concat_score_weight` (score mode
 * concat) are scalars starting at 1; AdditiveAttention's `scale` is a vector
 * over the features drawn glorot_uniform, as in Keras. No mask tensors: the Keras
 * reader refuses tensors passed as mask. Keras 3's `seed` is no parameter
 * (the reader skips it; the model's seed decides the dropout masks). Keras
 * 2's `causal` config key (Keras 3's use_causal_mask call argument, which
 * the reader maps onto it) lets query step i attend to key steps up to i;
 * files written here carry it in the config, which Keras 2 reads and Keras
 * 3's Attention does not take. */
#include <stdio.h>
#include <string.h>

#include "layer_common.h"

/* Both classes' parameters start the same; Attention adds score_mode. */
enum { USE_SCALE, DROPOUT, CAUSAL, SCORE_MODE };

static const char *const score_modes[] = {"dot", "concat", NULL};

#define COMMON_PARAMS(scale_default)                                                                            \
    [USE_SCALE] = {"use_scale", TW_PARAM_BOOL, scale_default, .help = "Learn a scale for the scores"},          \
    [DROPOUT] = {"dropout", TW_PARAM_FLOAT, "0", 0, 1, .help = "Dropout rate on the attention probabilities"}, \
    [CAUSAL] = {"causal", TW_PARAM_BOOL, "false",                                                               \
                .help = "Each query step attends only to value steps up to its own (a decoder's mask)"}

static const tw_param_def attention_params[] = {
    COMMON_PARAMS("false"),
    [SCORE_MODE] = {"score_mode", TW_PARAM_CHOICE, "dot", .choices = score_modes,
                    .help = "dot: q·k; concat: sum of tanh(q + k)"},
};

static const tw_param_def additive_params[] = {COMMON_PARAMS("true")};

typedef struct {
    tw_rng *rng; /* the layer's own generator for dropout, made on first need */
} attention_state;

static int attention_configure(tw_layer *self)
{
    if (tw__param_float(self, DROPOUT) >= 1)
        return TW_LAYER_ERROR(self, "dropout: expected a number from 0 up to (not including) 1, got %g",
                              tw__param_float(self, DROPOUT));
    return 0;
}

extern const tw_layer_class tw_layer_class_AdditiveAttention;

static bool is_additive(const tw_layer *self)
{
    return self->klass == &tw_layer_class_AdditiveAttention;
}

static bool is_concat(const tw_layer *self)
{
    return !is_additive(self) && !strcmp(tw__param_choice(self, SCORE_MODE), "concat");
}

static int attention_infer_n(const tw_layer *self, const tw_shape *in, int n, tw_shape *outputs, int *noutputs,
                             tw_weight_spec *w, int *nw)
{
    *nw = 0;
    *noutputs = 1;
    if (n != 2 && n != 3)
        return TW_LAYER_ERROR(self, "takes (query, value) or (query, value, key), got %d inputs", n);
    static const char *const role[] = {"query", "value", "key"};
    char a[96], b[96];
    for (int i = 0; i < n; i++)
        if (in[i].ndim != 3 || in[i].dims[2] < 1)
            return TW_LAYER_ERROR(self, "%s: expected rank 3 (batch, steps, features) with known features, got %s",
                                  role[i], tw_shape_format(&in[i], a, sizeof a));
    const tw_shape *q = &in[0], *v = &in[1], *k = n == 3 ? &in[2] : &in[1];
    if (q->dims[2] != k->dims[2])
        return TW_LAYER_ERROR(self, "query %s and %s %s must have the same features", tw_shape_format(q, a, sizeof a),
                              n == 3 ? "key" : "value", tw_shape_format(k, b, sizeof b));
    if (v->dims[1] >= 0 && k->dims[1] >= 0 && v->dims[1] != k->dims[1])
        return TW_LAYER_ERROR(self, "value %s and key %s must have the same steps", tw_shape_format(v, a, sizeof a),
                              tw_shape_format(k, b, sizeof b));
    if (tw__param_bool(self, USE_SCALE))
        w[(*nw)++] = is_additive(self) ? (tw_weight_spec){"scale", {1, {q->dims[2]}}, "glorot_uniform", true, NULL}
                                       : (tw_weight_spec){"scale", {0, {0}}, "ones", true, NULL};
    if (is_concat(self))
        w[(*nw)++] = (tw_weight_spec){"concat_score_weight", {0, {0}}, "ones", true, NULL};
    outputs[0] = (tw_shape){3, {q->dims[0], q->dims[1], v->dims[2]}};
    return 0;
}

static tw_tensor *scores_of(tw_layer *self, tw_tensor *q, tw_tensor *k)
{
    tw_tensor *scale = tw__param_bool(self, USE_SCALE) ? self->weights[0] : NULL;
    if (!is_additive(self) && !is_concat(self)) {
        tw_tensor *s = tw_matmul_ex(tw_contiguous(q), tw_contiguous(k), false, true);
        return scale ? tw_mul(s, scale) : s;
    }
    /* q_i + k_j for every pair: (batch, Tq, 1, dim) + (batch, 1, Tv, dim) */
    tw_tensor *sum = tw_add(tw_expand_dims(q, 2), tw_expand_dims(k, 1));
    int last = -1;
    if (is_additive(self))
        return tw_sum(scale ? tw_mul(scale, tw_tanh(sum)) : tw_tanh(sum), 1, &last, false);
    tw_tensor *t = tw_sum(tw_tanh(scale ? tw_mul(scale, sum) : sum), 1, &last, false);
    return tw_mul(self->weights[self->nweights - 1], t);
}

static int attention_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                            const tw_call_context *ctx)
{
    tw_tensor *query = inputs[0], *value = inputs[1], *key = n == 3 ? inputs[2] : inputs[1];
    if (tw_tensor_dim(value, 0) != tw_tensor_dim(query, 0) || tw_tensor_dim(key, 0) != tw_tensor_dim(query, 0))
        return TW_LAYER_ERROR(self, "query, value and key must have the same batch size, got %lld, %lld and %lld",
                              (long long)tw_tensor_dim(query, 0), (long long)tw_tensor_dim(value, 0),
                              (long long)tw_tensor_dim(key, 0));
    tw_tensor *scores = scores_of(self, query, key);
    if (tw__param_bool(self, CAUSAL))
        scores = tw__causal_mask_scores(scores);
    tw_tensor *p = tw_softmax(scores, -1);
    double rate = tw__param_float(self, DROPOUT);
    if (ctx->training && rate > 0) {
        attention_state *st = self->state;
        p = tw_dropout(p, rate, tw__layer_rng(self, ctx, &st->rng));
    }
    outputs[0] = tw_matmul(p, tw_contiguous(value));
    if (!outputs[0]) {
        char why[512];
        snprintf(why, sizeof why, "%s", tw_last_error());
        TW_LAYER_ERROR(self, "%s", why);
        return -1;
    }
    return 1;
}

static void attention_finalize(tw_layer *self)
{
    attention_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_Attention = {
    .name = "Attention",
    .group = "Attention",
    .summary = "Dot-product (Luong) attention: softmax(q·kᵀ) v over (query, value[, key])",
    .params = attention_params,
    .nparams = sizeof attention_params / sizeof attention_params[0],
    .state_size = sizeof(attention_state),
    .configure = attention_configure,
    .infer_n = attention_infer_n,
    .call_n = attention_call_n,
    .finalize = attention_finalize,
};

const tw_layer_class tw_layer_class_AdditiveAttention = {
    .name = "AdditiveAttention",
    .group = "Attention",
    .summary = "Additive (Bahdanau) attention: softmax(sum tanh(q + k)) v over (query, value[, key])",
    .params = additive_params,
    .nparams = sizeof additive_params / sizeof additive_params[0],
    .state_size = sizeof(attention_state),
    .configure = attention_configure,
    .infer_n = attention_infer_n,
    .call_n = attention_call_n,
    .finalize = attention_finalize,
};
