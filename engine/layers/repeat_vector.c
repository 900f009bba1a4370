/* RepeatVector: (batch, features) -> (batch, n, features), each example's
 * vector repeated n times (the bridge from an encoder's final state to a
 * decoder's sequence). Its gradient sums over the repeats. */
#include "layer_common.h"

enum { N };

static const tw_param_def params[] = {
    [N] = {"n", TW_PARAM_INT, "1", 1, 1e9, .help = "How many times to repeat each vector"},
};

static int repeat_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    if (input->ndim != 2)
        return TW_LAYER_ERROR(self, "expected input of rank 2 (batch, features), got %s",
                              tw_shape_format(input, buf, sizeof buf));
    *output = (tw_shape){3, {input->dims[0], tw__param_int(self, N), input->dims[1]}};
    *nw = 0;
    return 0;
}

static tw_tensor *repeat_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    tw_shape in = tw__shape_of(x), out;
    tw_weight_spec none[1];
    int nw;
    if (repeat_infer(self, &in, &out, none, &nw))
        return NULL;
    out.dims[0] = in.dims[0];
    return tw_contiguous(tw_broadcast_to(tw_expand_dims(x, 1), out.ndim, out.dims));
}

const tw_layer_class tw_layer_class_RepeatVector = {
    .name = "RepeatVector",
    .group = "Core",
    .summary = "Repeat each example's vector n times into a sequence",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = repeat_infer,
    .call = repeat_call,
};
