/* GlobalAveragePooling2D, GlobalMaxPooling2D, GlobalAveragePooling1D and
 * GlobalMaxPooling1D: the mean or the largest value of each channel over all
 * spatial positions, (batch, [height, width | steps], channels) ->
 * (batch, channels), or with keepdims the spatial axes kept with size 1. */
#include "sliding_window.h"

enum { DATA_FORMAT, KEEPDIMS };

static const tw_param_def params[] = {
    [DATA_FORMAT] = {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__data_formats,
                     .nullable = true, .help = "Axis order; only channels_last (channels as the last axis)"},
    [KEEPDIMS] = {"keepdims", TW_PARAM_BOOL, "false", .help = "Keep the pooled axes with size 1"},
};

static int global_configure(tw_layer *self)
{
    return tw__check_channels_last(self, DATA_FORMAT);
}

/* rank: the spatial axes pooled, 1 or 2. */
static int global_infer(const tw_layer *self, int rank, const tw_shape *input, tw_shape *output)
{
    static const char *const layouts[] = {"", "(batch, steps, channels)", "(batch, height, width, channels)"};
    char in[128];
    if (input->ndim != rank + 2)
        return TW_LAYER_ERROR(self, "expected input of rank %d %s, got %s", rank + 2, layouts[rank],
                              tw_shape_format(input, in, sizeof in));
    if (tw__param_bool(self, KEEPDIMS)) {
        *output = *input;
        for (int i = 1; i <= rank; i++)
            output->dims[i] = 1;
    } else {
        *output = (tw_shape){2, {input->dims[0], input->dims[rank + 1]}};
    }
    return 0;
}

static int infer_1d(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    *nw = 0;
    return global_infer(self, 1, input, output);
}

static int infer_2d(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    *nw = 0;
    return global_infer(self, 2, input, output);
}

static tw_tensor *average_2d(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_mean(x, TW_AXES(1, 2), tw__param_bool(self, KEEPDIMS));
}

static tw_tensor *max_2d(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_max(x, TW_AXES(1, 2), tw__param_bool(self, KEEPDIMS));
}

static tw_tensor *average_1d(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_mean(x, TW_AXES(1), tw__param_bool(self, KEEPDIMS));
}

static tw_tensor *max_1d(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    return tw_max(x, TW_AXES(1), tw__param_bool(self, KEEPDIMS));
}

#define GLOBAL_CLASS(class_name, text, infer_fn, call_fn) \
    const tw_layer_class tw_layer_class_##class_name = { \
        .name = #class_name, \
        .group = "Pooling", \
        .summary = text, \
        .params = params, \
        .nparams = sizeof params / sizeof params[0], \
        .configure = global_configure, \
        .infer = infer_fn, \
        .call = call_fn, \
    };

GLOBAL_CLASS(GlobalAveragePooling2D, "Mean of each channel over height and width", infer_2d, average_2d)
GLOBAL_CLASS(GlobalMaxPooling2D, "Largest value of each channel over height and width", infer_2d, max_2d)
GLOBAL_CLASS(GlobalAveragePooling1D, "Mean of each channel over the steps of a sequence", infer_1d, average_1d)
GLOBAL_CLASS(GlobalMaxPooling1D, "Largest value of each channel over the steps of a sequence", infer_1d, max_1d)
