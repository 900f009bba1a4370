/* Flatten: (batch, d1, d2, ...) -> (batch, d1 * d2 * ...). With
 * data_format "channels_first" the channel axis is moved last first, so the
 * order of the flattened features matches a channels-last model (Keras'
 * rule, which keeps Dense weights portable between the two layouts). */
#include <string.h>

#include "layer_internal.h"

enum { DATA_FORMAT };

static const char *const formats[] = {"channels_last", "channels_first", NULL};

static const tw_param_def params[] = {
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = formats,
                     .help = "Where the input keeps its channels"},
};

static int flatten_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    if (input->ndim < 1)
        return TW_LAYER_ERROR(self, "expected input with a batch axis, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    tw_shape rest = {input->ndim - 1};
    memcpy(rest.dims, input->dims + 1, sizeof(int64_t) * rest.ndim);
    *output = (tw_shape){2, {input->dims[0], tw_shape_numel(&rest)}};
    *nw = 0;
    return 0;
}

static tw_tensor *flatten_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    int nd = tw_tensor_ndim(x);
    if (nd > 2 && !strcmp(tw__param_choice(self, DATA_FORMAT), "channels_first")) {
        int perm[TW_MAX_DIMS] = {0};
        for (int i = 1; i < nd - 1; i++)
            perm[i] = i + 1;
        perm[nd - 1] = 1;
        x = tw_permute(x, nd, perm);
    }
    /* The feature count from the shape, not -1: a batch of 0 leaves -1 undefined. */
    int64_t features = 1;
    for (int i = 1; i < nd; i++)
        features *= tw_tensor_dim(x, i);
    return tw_reshape(tw_contiguous(x), 2, (int64_t[]){tw_tensor_dim(x, 0), features});
}

const tw_layer_class tw_layer_class_Flatten = {
    .name = "Flatten",
    .group = "Core",
    .summary = "Flatten each example to one axis of features",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = flatten_infer,
    .call = flatten_call,
};
