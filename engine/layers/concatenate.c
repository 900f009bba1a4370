/* Concatenate: joins its inputs along `axis` (Keras' default -1, the
 * features). Every other size must agree (an unknown size agrees with any);
 * the joined axis is the sum of the inputs', unknown when one is. */
#include "layer_internal.h"

enum { AXIS };

static const tw_param_def params[] = {
    [AXIS] = {"axis", TW_PARAM_INT, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1,
              .help = "The axis to join along; negative counts from the last"},
};

/* The axis as an index into shapes of rank ndim, or -1. */
static int resolve_axis(const tw_layer *self, int ndim)
{
    int axis = (int)tw__param_int(self, AXIS);
    axis = axis < 0 ? axis + ndim : axis;
    return axis >= 1 && axis < ndim ? axis : -1;
}

static int concatenate_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs,
                               int *noutputs, tw_weight_spec *w, int *nw)
{
    (void)w;
    *nw = 0;
    *noutputs = 1;
    if (n < 2)
        return TW_LAYER_ERROR(self, "takes at least 2 inputs, got %d", n);
    char a[96], b[96];
    int axis = resolve_axis(self, inputs[0].ndim);
    if (axis < 0)
        return TW_LAYER_ERROR(self, "axis %lld does not fit inputs of shape %s (the batch axis cannot be joined)",
                              (long long)tw__param_int(self, AXIS), tw_shape_format(&inputs[0], a, sizeof a));
    tw_shape out = inputs[0];
    for (int i = 1; i < n; i++) {
        const tw_shape *s = &inputs[i];
        bool ok = s->ndim == out.ndim;
        for (int d = 1; ok && d < s->ndim; d++)
            if (d != axis && s->dims[d] >= 0 && out.dims[d] >= 0 && s->dims[d] != out.dims[d])
                ok = false;
        if (!ok)
            return TW_LAYER_ERROR(self, "inputs %s and %s cannot be joined on axis %d: every other size must match",
                                  tw_shape_format(&inputs[0], a, sizeof a), tw_shape_format(s, b, sizeof b), axis);
        for (int d = 1; d < s->ndim; d++)
            if (d != axis && out.dims[d] < 0)
                out.dims[d] = s->dims[d];
        out.dims[axis] = out.dims[axis] < 0 || s->dims[axis] < 0 ? -1 : out.dims[axis] + s->dims[axis];
        if (out.dims[0] != s->dims[0])
            out.dims[0] = -1;
    }
    outputs[0] = out;
    return 0;
}

static int concatenate_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                              const tw_call_context *ctx)
{
    (void)ctx;
    outputs[0] = tw_concat(n, inputs, resolve_axis(self, tw_tensor_ndim(inputs[0])));
    return outputs[0] ? 1 : -1;
}

const tw_layer_class tw_layer_class_Concatenate = {
    .name = "Concatenate",
    .group = "Merging",
    .summary = "Join its inputs along one axis",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer_n = concatenate_infer_n,
    .call_n = concatenate_call_n,
};
