/* UnitNormalization: scale each example to unit L2 norm over `axis`:
 * x / sqrt(max(sum(x^2), 1e-12)), TensorFlow's l2_normalize (what tf.keras'
 * layer calls). No weights; the same in training and inference. */
#include "layer_common.h"

enum { AXIS };

static const tw_param_def params[] = {
    [AXIS] = {"axis", TW_PARAM_INTS, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1, 0,
              .help = "The axis (or axes) whose vector gets norm 1; -1 is the last"},
};

static int un_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    bool is_axis[TW_MAX_DIMS];
    if (tw__layer_axes(self, tw_layer_param(self, AXIS), input, false, is_axis))
        return -1;
    return tw__same_shape_infer(self, input, output, w, nw);
}

static tw_tensor *un_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x);
    bool is_axis[TW_MAX_DIMS];
    if (tw__layer_axes(self, tw_layer_param(self, AXIS), &in, false, is_axis))
        return NULL;
    int axes[TW_MAX_DIMS], naxes = 0;
    for (int d = 0; d < in.ndim; d++)
        if (is_axis[d])
            axes[naxes++] = d;
    tw_tensor *sum = tw_sum(tw_square(x), naxes, axes, true);
    return tw_mul(x, tw_rsqrt(tw_maximum(sum, tw_scalar(1e-12))));
}

const tw_layer_class tw_layer_class_UnitNormalization = {
    .name = "UnitNormalization",
    .group = "Normalization",
    .summary = "Scale each example to unit L2 norm",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = un_infer,
    .call = un_call,
};
