/* The separable convolutions' shared infer and call (see separable_conv.h).
 * Weights in Keras' order and shapes: depthwise_kernel (kernel..., in,
 * depth_multiplier), pointwise_kernel (1..., in * depth_multiplier,
 * filters), bias (filters). */
#include <string.h>

#include "separable_conv.h"

static tw__window window(const tw_layer *self, int rank)
{
    return tw__window_from_params(self, "kernel", rank, SEP_KERNEL_SIZE, SEP_STRIDES, SEP_DILATION_RATE,
                                  SEP_PADDING);
}

int tw__separable_configure(tw_layer *self)
{
    return tw__check_conv_config(self, SEP_GROUPS, SEP_DATA_FORMAT);
}

int tw__separable_infer(const tw_layer *self, int rank, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                        int *nw)
{
    tw__window win = window(self, rank);
    if (tw__window_output(self, &win, input, output))
        return -1;
    int64_t in = input->dims[rank + 1], mult = tw__param_int(self, SEP_DEPTH_MULTIPLIER);
    int64_t filters = tw__param_int(self, SEP_FILTERS);
    output->dims[rank + 1] = filters;
    tw_shape depthwise = {rank + 2}, pointwise = {rank + 2};
    for (int i = 0; i < rank; i++) {
        depthwise.dims[i] = win.size[i];
        pointwise.dims[i] = 1;
    }
    depthwise.dims[rank] = in;
    depthwise.dims[rank + 1] = mult;
    pointwise.dims[rank] = in * mult;
    pointwise.dims[rank + 1] = filters;
    w[0] = (tw_weight_spec){"depthwise_kernel", depthwise, tw__param_choice(self, SEP_DEPTHWISE_INIT), true,
                            "depthwise_regularizer"};
    w[1] = (tw_weight_spec){"pointwise_kernel", pointwise, tw__param_choice(self, SEP_POINTWISE_INIT), true,
                            "pointwise_regularizer"};
    *nw = 2;
    if (tw__param_bool(self, SEP_USE_BIAS))
        w[(*nw)++] = (tw_weight_spec){"bias", {1, {filters}}, tw__param_choice(self, SEP_BIAS_INIT), true,
                                      "bias_regularizer"};
    return 0;
}

/* A 1-D layer runs the 2-D ops on (batch, 1, steps, channels) views, causal
 * padding as Conv1D's: the start padded by the dilated kernel's extent
 * minus one, then a VALID window. */
tw_tensor *tw__separable_call(tw_layer *self, int rank, tw_tensor *x)
{
    tw__window win = window(self, rank);
    tw_conv2d_params p = tw__window_conv_params(&win);
    tw_tensor *depthwise = self->weights[0], *pointwise = self->weights[1];
    if (rank == 1) {
        if (!strcmp(win.padding, "causal"))
            x = tw_pad(x, (const int64_t[]){0, 0, (win.size[0] - 1) * win.dilation[0], 0, 0, 0}, 0);
        x = tw_expand_dims(x, 1);
        depthwise = tw_expand_dims(depthwise, 0);
        pointwise = tw_expand_dims(pointwise, 0);
    }
    tw_tensor *y = tw_conv2d(tw_depthwise_conv2d(x, depthwise, &p), pointwise, NULL);
    if (rank == 1)
        y = tw_squeeze(y, TW_AXES(1));
    if (self->nweights > 2)
        y = tw_add(y, self->weights[2]);
    return tw_activation_apply(tw__param_choice(self, SEP_ACTIVATION), y);
}
