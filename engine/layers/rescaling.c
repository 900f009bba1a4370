/* Rescaling: x * scale + offset, Keras' preprocessing layer that maps pixel
 * bytes to [0, 1] (scale 1/255) or [-1, 1] (scale 1/127.5, offset -1).
 * scale and offset are each a number or, as Keras 3 allows, a list that
 * broadcasts against the last axis (EfficientNet divides each channel by
 * its own standard deviation). Inputs that are not in the layer's dtype
 * (uint8 images) are cast first, as Keras does. */
#include "layer_common.h"

enum { SCALE, OFFSET };

static const tw_param_def params[] = {
    [SCALE] = {"scale", TW_PARAM_FLOATS, "0.00392156862745098", -1e9, 1e9, 0,
               .help = "Multiplies the input (1/255 maps bytes to [0, 1]); one number or one per channel"},
    [OFFSET] = {"offset", TW_PARAM_FLOATS, "0", -1e9, 1e9, 0, .help = "Added after scaling; one number or one per channel"},
};

static int rescaling_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                           int *nw)
{
    char buf[96];
    int64_t last = input->ndim ? input->dims[input->ndim - 1] : 1;
    for (int k = SCALE; k <= OFFSET; k++) {
        int n = tw_layer_param(self, k)->n;
        if (n > 1 && last >= 0 && n != last)
            return TW_LAYER_ERROR(self, "%s has %d values; input %s needs 1 or %lld (its last axis)",
                                  params[k].key, n, tw_shape_format(input, buf, sizeof buf), (long long)last);
    }
    return tw__same_shape_infer(self, input, output, w, nw);
}

/* scale or offset as a tensor of the layer's dtype: 0-d, or (n,). */
static tw_tensor *factor(const tw_layer *self, int index)
{
    const tw_param_value *v = tw_layer_param(self, index);
    if (v->n == 1)
        return tw_scalar(v->floats[0]);
    int64_t n = v->n;
    return tw_cast(tw_tensor_from_data(v->floats, TW_FLOAT64, 1, &n), self->dtype);
}

static tw_tensor *rescaling_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x), out;
    tw_weight_spec none[1];
    int nw;
    if (rescaling_infer(self, &in, &out, none, &nw))
        return NULL;
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    return tw_add(tw_mul(x, factor(self, SCALE)), factor(self, OFFSET));
}

const tw_layer_class tw_layer_class_Rescaling = {
    .name = "Rescaling",
    .group = "Core",
    .summary = "Rescale values: x · scale + offset (e.g. pixels to [0, 1])",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = rescaling_infer,
    .call = rescaling_call,
};
