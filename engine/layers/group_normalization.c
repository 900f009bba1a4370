/* GroupNormalization: split the channels (the `axis` entries) of each
 * example into `groups` groups, normalise each group by its own mean and
 * variance over the group's channels and every other non-batch axis, then
 * scale by gamma and shift by beta (per channel, shape (C,)). groups 1 is
 * LayerNormalization over all features; groups C is instance normalisation.
 * Same in training and inference. */
#include "layer_common.h"

enum { GROUPS, AXIS, EPSILON, CENTER, SCALE, BETA_INIT, GAMMA_INIT, BETA_REG, GAMMA_REG };

static const tw_param_def params[] = {
    [GROUPS] = {"groups", TW_PARAM_INT, "32", 1, 1e9, .help = "How many groups the channels split into"},
    [AXIS] = {"axis", TW_PARAM_INT, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1, .help = "The channel axis; -1 is the last"},
    [EPSILON] = {"epsilon", TW_PARAM_FLOAT, "0.001", 0, 1e9, .help = "Added to the variance to avoid dividing by zero"},
    [CENTER] = {"center", TW_PARAM_BOOL, "true", .help = "Learn an offset beta"},
    [SCALE] = {"scale", TW_PARAM_BOOL, "true", .help = "Learn a scale gamma"},
    [BETA_INIT] = {"beta_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How beta starts"},
    [GAMMA_INIT] = {"gamma_initializer", TW_PARAM_CHOICE, "ones", .choices = tw_initializer_names,
                    .help = "How gamma starts"},
    [BETA_REG] = {"beta_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on beta"},
    [GAMMA_REG] = {"gamma_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on gamma"},
};

/* The channel axis of input, checked against groups; -1 with a message. */
static int channel_axis(const tw_layer *self, const tw_shape *input)
{
    char buf[96];
    int64_t a = tw__param_int(self, AXIS), groups = tw__param_int(self, GROUPS);
    int64_t axis = a < 0 ? a + input->ndim : a;
    if (axis < 1 || axis >= input->ndim)
        return TW_LAYER_ERROR(self, "axis %lld is out of range for input %s", (long long)a,
                              tw_shape_format(input, buf, sizeof buf));
    int64_t channels = input->dims[axis];
    if (channels < 0)
        return TW_LAYER_ERROR(self, "the size of axis %lld of input %s must be known", (long long)axis,
                              tw_shape_format(input, buf, sizeof buf));
    if (channels < groups || channels % groups)
        return TW_LAYER_ERROR(self, "%lld channels cannot be split into %lld groups (input %s)",
                              (long long)channels, (long long)groups, tw_shape_format(input, buf, sizeof buf));
    return (int)axis;
}

static int gn_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    int axis = channel_axis(self, input);
    if (axis < 0)
        return -1;
    tw_shape shape = {1, {input->dims[axis]}};
    *nw = 0;
    if (tw__param_bool(self, SCALE))
        w[(*nw)++] = (tw_weight_spec){"gamma", shape, tw__param_choice(self, GAMMA_INIT), true, "gamma_regularizer"};
    if (tw__param_bool(self, CENTER))
        w[(*nw)++] = (tw_weight_spec){"beta", shape, tw__param_choice(self, BETA_INIT), true, "beta_regularizer"};
    *output = *input;
    return 0;
}

static tw_tensor *gn_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x);
    int axis = channel_axis(self, &in);
    if (axis < 0 || in.ndim + 1 > TW_MAX_DIMS) {
        if (axis >= 0)
            TW_LAYER_ERROR(self, "input of rank %d leaves no room to split the channels (at most %d axes)", in.ndim,
                           TW_MAX_DIMS - 1);
        return NULL;
    }
    int64_t groups = tw__param_int(self, GROUPS);
    /* (..., C, ...) -> (..., groups, C / groups, ...) */
    tw_shape split = {in.ndim + 1};
    for (int d = 0, k = 0; d < in.ndim; d++) {
        if (d == axis) {
            split.dims[k++] = groups;
            split.dims[k++] = in.dims[d] / groups;
        } else {
            split.dims[k++] = in.dims[d];
        }
    }
    tw_tensor *xs = tw_reshape(tw_contiguous(x), split.ndim, split.dims);
    int axes[TW_MAX_DIMS], naxes = 0;
    for (int d = 1; d < split.ndim; d++)
        if (d != axis)
            axes[naxes++] = d;
    tw_tensor *mean, *variance;
    if (tw_moments(xs, naxes, axes, true, &mean, &variance))
        return NULL;
    tw_tensor *inv = tw_rsqrt(tw_add_scalar(variance, tw__param_float(self, EPSILON)));
    tw_tensor *y = tw_reshape(tw_mul(tw_sub(xs, mean), inv), in.ndim, in.dims);
    tw_shape broadcast = {in.ndim};
    for (int d = 0; d < in.ndim; d++)
        broadcast.dims[d] = d == axis ? in.dims[d] : 1;
    tw_tensor *gamma = tw__layer_weight_named(self, "gamma"), *beta = tw__layer_weight_named(self, "beta");
    if (gamma)
        y = tw_mul(y, tw_reshape(gamma, broadcast.ndim, broadcast.dims));
    if (beta)
        y = tw_add(y, tw_reshape(beta, broadcast.ndim, broadcast.dims));
    return y;
}

const tw_layer_class tw_layer_class_GroupNormalization = {
    .name = "GroupNormalization",
    .group = "Normalization",
    .summary = "Normalise groups of channels within each example, then scale and shift",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = gn_infer,
    .call = gn_call,
};
