/* LayerNormalization: normalise each example over the `axis` entries (the
 * last by default) by its own mean and variance, then scale by gamma and
 * shift by beta (weights of the normalised axes' shape). Unlike
 * BatchNormalization it keeps no statistics and behaves the same in
 * training and inference. Keras 3's rms_scaling is refused: its meaning
 * changed between Keras 3 releases (a variance, later a root mean square). */
#include "layer_common.h"

enum { AXIS, EPSILON, CENTER, SCALE, RMS_SCALING, BETA_INIT, GAMMA_INIT, BETA_REG, GAMMA_REG };

static const tw_param_def params[] = {
    [AXIS] = {"axis", TW_PARAM_INTS, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1, 0,
              .help = "The axis (or axes) each example is normalised over; -1 is the last"},
    [EPSILON] = {"epsilon", TW_PARAM_FLOAT, "0.001", 0, 1e9, .help = "Added to the variance to avoid dividing by zero"},
    [CENTER] = {"center", TW_PARAM_BOOL, "true", .help = "Learn an offset beta"},
    [SCALE] = {"scale", TW_PARAM_BOOL, "true", .help = "Learn a scale gamma"},
    [RMS_SCALING] = {"rms_scaling", TW_PARAM_BOOL, "false", .help = "Keras 3's RMS scaling (not supported: keep false)"},
    [BETA_INIT] = {"beta_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How beta starts"},
    [GAMMA_INIT] = {"gamma_initializer", TW_PARAM_CHOICE, "ones", .choices = tw_initializer_names,
                    .help = "How gamma starts"},
    [BETA_REG] = {"beta_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on beta"},
    [GAMMA_REG] = {"gamma_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on gamma"},
};

static int ln_configure(tw_layer *self)
{
    if (tw__param_bool(self, RMS_SCALING))
        return tw_error_set("rms_scaling: true is not supported (its meaning differs between Keras 3 releases)");
    return 0;
}

/* The normalised axes and the shape the weights broadcast in (size 1 off
 * those axes). */
static int norm_axes(const tw_layer *self, const tw_shape *input, bool *is_axis, tw_shape *broadcast)
{
    char buf[96];
    if (tw__layer_axes(self, tw_layer_param(self, AXIS), input, false, is_axis))
        return -1;
    *broadcast = (tw_shape){input->ndim};
    for (int d = 0; d < input->ndim; d++) {
        broadcast->dims[d] = is_axis[d] ? input->dims[d] : 1;
        if (is_axis[d] && input->dims[d] < 0)
            return TW_LAYER_ERROR(self, "the size of axis %d of input %s must be known", d,
                                  tw_shape_format(input, buf, sizeof buf));
    }
    return 0;
}

static int ln_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    bool is_axis[TW_MAX_DIMS];
    tw_shape broadcast, shape = {0};
    if (norm_axes(self, input, is_axis, &broadcast))
        return -1;
    /* Keras' weight shape: the normalised axes' sizes, (C,) for one axis. */
    for (int d = 0; d < input->ndim; d++)
        if (is_axis[d])
            shape.dims[shape.ndim++] = input->dims[d];
    *nw = 0;
    if (tw__param_bool(self, SCALE))
        w[(*nw)++] = (tw_weight_spec){"gamma", shape, tw__param_choice(self, GAMMA_INIT), true, "gamma_regularizer"};
    if (tw__param_bool(self, CENTER))
        w[(*nw)++] = (tw_weight_spec){"beta", shape, tw__param_choice(self, BETA_INIT), true, "beta_regularizer"};
    *output = *input;
    return 0;
}

static tw_tensor *ln_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x), broadcast;
    bool is_axis[TW_MAX_DIMS];
    if (norm_axes(self, &in, is_axis, &broadcast))
        return NULL;
    int axes[TW_MAX_DIMS], naxes = 0;
    for (int d = 0; d < in.ndim; d++)
        if (is_axis[d])
            axes[naxes++] = d;
    tw_tensor *mean, *variance;
    if (tw_moments(x, naxes, axes, true, &mean, &variance))
        return NULL;
    /* y = x * inv + (beta - mean * inv), inv = gamma / sqrt(variance + epsilon) */
    tw_tensor *inv = tw_rsqrt(tw_add_scalar(variance, tw__param_float(self, EPSILON)));
    tw_tensor *gamma = tw__layer_weight_named(self, "gamma"), *beta = tw__layer_weight_named(self, "beta");
    if (gamma)
        inv = tw_mul(inv, tw_reshape(gamma, broadcast.ndim, broadcast.dims));
    tw_tensor *shift = tw_neg(tw_mul(mean, inv));
    if (beta)
        shift = tw_add(shift, tw_reshape(beta, broadcast.ndim, broadcast.dims));
    return tw_add(tw_mul(x, inv), shift);
}

const tw_layer_class tw_layer_class_LayerNormalization = {
    .name = "LayerNormalization",
    .group = "Normalization",
    .summary = "Normalise each example over its features, then scale and shift",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = ln_configure,
    .infer = ln_infer,
    .call = ln_call,
};
