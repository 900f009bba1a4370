/* Normalization (Keras' preprocessing layer): (x - mean) / max(sqrt(variance),
 * 1e-7) per index of the kept `axis` entries (the last by default; none: one
 * mean for everything); invert computes mean + x * that instead. mean and
 * variance come either from the config (numbers, one or one per kept index)
 * or, when the config has none, from three non-trainable weights as Keras
 * keeps them after adapt(): mean and variance of the kept axes' shape and a
 * scalar count (the examples adapt() saw; 2C + 1 parameters, Keras' count).
 * adapt() itself is not offered: its statistics arrive with the weights. */
#include <math.h>

#include "layer_common.h"

enum { AXIS, MEAN, VARIANCE, INVERT };

static const tw_param_def params[] = {
    [AXIS] = {"axis", TW_PARAM_INTS, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1, 0, .nullable = true,
              .help = "The axis (or axes) with a mean and variance per index; none: one for all"},
    [MEAN] = {"mean", TW_PARAM_FLOATS, "", -1e300, 1e300, 0, .nullable = true,
              .help = "The mean: one number or one per index; none: kept as a weight"},
    [VARIANCE] = {"variance", TW_PARAM_FLOATS, "", 0, 1e300, 0, .nullable = true,
                  .help = "The variance, given with the mean"},
    [INVERT] = {"invert", TW_PARAM_BOOL, "false", .help = "Undo the normalization instead"},
};

#define EPSILON 1e-7 /* Keras' backend.epsilon() */

/* The kept axes, the weights' shape and the shape mean and variance
 * broadcast in. */
static int kept_axes(const tw_layer *self, const tw_shape *input, tw_shape *weight_shape, tw_shape *broadcast)
{
    char buf[96];
    bool keep[TW_MAX_DIMS] = {0};
    /* checked here, not on each change: a file sets mean before variance */
    if (tw_layer_param(self, MEAN)->is_null != tw_layer_param(self, VARIANCE)->is_null)
        return TW_LAYER_ERROR(self, "mean and variance must be given together or both left none");
    const tw_param_value *axis = tw_layer_param(self, AXIS);
    if (!axis->is_null && tw__layer_axes(self, axis, input, false, keep))
        return -1;
    *weight_shape = (tw_shape){0};
    *broadcast = (tw_shape){input->ndim};
    for (int d = 0; d < input->ndim; d++) {
        broadcast->dims[d] = keep[d] ? input->dims[d] : 1;
        if (!keep[d])
            continue;
        if (input->dims[d] < 0)
            return TW_LAYER_ERROR(self, "the size of axis %d of input %s must be known", d,
                                  tw_shape_format(input, buf, sizeof buf));
        weight_shape->dims[weight_shape->ndim++] = input->dims[d];
    }
    /* numbers from the config: one, or one per kept index */
    int64_t n = tw_shape_numel(weight_shape);
    for (int k = MEAN; k <= VARIANCE; k++) {
        const tw_param_value *v = tw_layer_param(self, k);
        if (!v->is_null && v->n != 1 && v->n != n)
            return TW_LAYER_ERROR(self, "%s has %d values; input %s needs 1 or %lld", params[k].key, v->n,
                                  tw_shape_format(input, buf, sizeof buf), (long long)n);
    }
    return 0;
}

static int normalization_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                               int *nw)
{
    tw_shape shape, broadcast;
    if (kept_axes(self, input, &shape, &broadcast))
        return -1;
    *nw = 0;
    if (tw_layer_param(self, MEAN)->is_null) {
        w[(*nw)++] = (tw_weight_spec){"mean", shape, "zeros", false, NULL};
        w[(*nw)++] = (tw_weight_spec){"variance", shape, "ones", false, NULL};
        w[(*nw)++] = (tw_weight_spec){"count", {0}, "zeros", false, NULL};
    }
    *output = *input;
    return 0;
}

/* mean or variance in the broadcast shape: the weight, or the config's numbers. */
static tw_tensor *statistic(tw_layer *self, int index, const char *weight, const tw_shape *broadcast)
{
    const tw_param_value *v = tw_layer_param(self, index);
    if (v->is_null)
        return tw_reshape(tw__layer_weight_named(self, weight), broadcast->ndim, broadcast->dims);
    int64_t n = v->n;
    tw_tensor *t = tw_cast(tw_tensor_from_data(v->floats, TW_FLOAT64, 1, &n), self->dtype);
    return n == 1 ? tw_reshape(t, 0, NULL) : tw_reshape(t, broadcast->ndim, broadcast->dims);
}

static tw_tensor *normalization_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    tw_shape in = tw__shape_of(x), shape, broadcast;
    if (kept_axes(self, &in, &shape, &broadcast))
        return NULL;
    tw_tensor *mean = statistic(self, MEAN, "mean", &broadcast);
    tw_tensor *scale = tw_maximum(tw_sqrt(statistic(self, VARIANCE, "variance", &broadcast)), tw_scalar(EPSILON));
    if (tw__param_bool(self, INVERT))
        return tw_add(mean, tw_mul(x, scale));
    return tw_div(tw_sub(x, mean), scale);
}

const tw_layer_class tw_layer_class_Normalization = {
    .name = "Normalization",
    .group = "Core",
    .summary = "Standardise features with a fixed mean and variance",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = normalization_infer,
    .call = normalization_call,
};
