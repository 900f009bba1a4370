/* SpatialDropout1D and SpatialDropout2D: in training, drop whole channels
 * (feature maps) rather than single values: one draw per example and
 * channel, broadcast along the steps (1D) or the rows and columns (2D), the
 * kept ones scaled by 1 / (1 - rate) as Dropout does; in inference, the
 * identity. Neighbouring values of a feature map are strongly correlated,
 * so dropping them one by one regularizes little. */
#include "layer_common.h"

enum { RATE, DATA_FORMAT, SEED };

static const char *const formats[] = {"channels_last", "channels_first", NULL};

static const tw_param_def params_1d[] = {
    [RATE] = {"rate", TW_PARAM_FLOAT, "0.5", 0, 1, .help = "Fraction of the channels to drop, below 1"},
};

static const tw_param_def params_2d[] = {
    [RATE] = {"rate", TW_PARAM_FLOAT, "0.5", 0, 1, .help = "Fraction of the channels to drop, below 1"},
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = formats,
                     .help = "Where the input keeps its channels"},
    [SEED] = {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,
              .help = "Accepted from Keras files and ignored: the model's seed decides the masks"},
};

typedef struct {
    tw_rng *rng;
} noise_state;

static int spatial_configure(tw_layer *self)
{
    if (tw__param_float(self, RATE) >= 1)
        return tw_error_set("rate: expected a number from 0 up to (not including) 1, got %g",
                            tw__param_float(self, RATE));
    return 0;
}

static int expected_rank(const tw_layer *self)
{
    return self->klass->params == params_1d ? 3 : 4;
}

static int spatial_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    if (input->ndim != expected_rank(self))
        return TW_LAYER_ERROR(self, "expected input of rank %d (%s), got %s", expected_rank(self),
                              expected_rank(self) == 3 ? "batch, steps, channels" : "batch, height, width, channels",
                              tw_shape_format(input, buf, sizeof buf));
    return tw__same_shape_infer(self, input, output, w, nw);
}

static tw_tensor *spatial_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    double rate = tw__param_float(self, RATE);
    if (!ctx->training || rate == 0)
        return tw_activation_apply("linear", x);
    tw_shape in = tw__shape_of(x), mask;
    tw_weight_spec none[1];
    int nw;
    if (spatial_infer(self, &in, &mask, none, &nw))
        return NULL;
    if (!tw_dtype_is_float(tw_tensor_dtype(x))) {
        TW_LAYER_ERROR(self, "expected a float input, got %s", tw_dtype_name(tw_tensor_dtype(x)));
        return NULL;
    }
    /* one draw per example and channel: size 1 on every other axis */
    bool channels_first = self->klass->params == params_2d && tw__param_choice(self, DATA_FORMAT) == formats[1];
    int channel_axis = channels_first ? 1 : in.ndim - 1;
    for (int d = 1; d < in.ndim; d++)
        if (d != channel_axis)
            mask.dims[d] = 1;
    noise_state *st = self->state;
    tw_tensor *u = tw_random_uniform(tw__layer_rng(self, ctx, &st->rng), tw_tensor_dtype(x), mask.ndim, mask.dims, 0, 1);
    tw_tensor *keep = tw_cast(tw_greater_equal(u, tw_scalar(rate)), tw_tensor_dtype(x));
    return tw_div_scalar(tw_mul(x, keep), 1 - rate);
}

static void spatial_finalize(tw_layer *self)
{
    noise_state *st = self->state;
    tw_rng_free(st->rng);
}

const tw_layer_class tw_layer_class_SpatialDropout1D = {
    .name = "SpatialDropout1D",
    .group = "Regularization",
    .summary = "Drop whole channels of a sequence while training",
    .params = params_1d,
    .nparams = sizeof params_1d / sizeof params_1d[0],
    .state_size = sizeof(noise_state),
    .configure = spatial_configure,
    .infer = spatial_infer,
    .call = spatial_call,
    .finalize = spatial_finalize,
};

const tw_layer_class tw_layer_class_SpatialDropout2D = {
    .name = "SpatialDropout2D",
    .group = "Regularization",
    .summary = "Drop whole feature maps of an image while training",
    .params = params_2d,
    .nparams = sizeof params_2d / sizeof params_2d[0],
    .state_size = sizeof(noise_state),
    .configure = spatial_configure,
    .infer = spatial_infer,
    .call = spatial_call,
    .finalize = spatial_finalize,
};
