/* What SeparableConv2D and SeparableConv1D share: their parameters after the
 * window ones, and infer, configure and call for either rank (a depthwise
 * convolution, then a 1x1 "pointwise" one mixing the channels). Not
 * installed. */
#ifndef TW_SEPARABLE_CONV_H
#define TW_SEPARABLE_CONV_H

#include "sliding_window.h"

enum {
    SEP_FILTERS, SEP_KERNEL_SIZE, SEP_STRIDES, SEP_PADDING, SEP_DATA_FORMAT, SEP_DILATION_RATE, SEP_DEPTH_MULTIPLIER,
    SEP_GROUPS, SEP_ACTIVATION, SEP_USE_BIAS, SEP_DEPTHWISE_INIT, SEP_POINTWISE_INIT, SEP_BIAS_INIT,
    SEP_DEPTHWISE_REG, SEP_POINTWISE_REG, SEP_BIAS_REG
};

#define TW_SEPARABLE_TAIL_PARAMS                                                                                   \
    [SEP_DEPTH_MULTIPLIER] = {"depth_multiplier", TW_PARAM_INT, "1", 1, 1e9,                                       \
                              .help = "Depthwise output channels per input channel"},                              \
    [SEP_GROUPS] = {"groups", TW_PARAM_INT, "1", 1, 1e9, .help = "Channel groups; only 1 is supported"},          \
    [SEP_ACTIVATION] = {"activation", TW_PARAM_CHOICE, "linear", .choices = tw_activation_names,                   \
                        .help = "Applied to the output"},                                                          \
    [SEP_USE_BIAS] = {"use_bias", TW_PARAM_BOOL, "true", .help = "Add a learned bias per filter"},                 \
    [SEP_DEPTHWISE_INIT] = {"depthwise_initializer", TW_PARAM_CHOICE, "glorot_uniform",                            \
                            .choices = tw_initializer_names, .help = "How the depthwise kernel starts"},           \
    [SEP_POINTWISE_INIT] = {"pointwise_initializer", TW_PARAM_CHOICE, "glorot_uniform",                            \
                            .choices = tw_initializer_names, .help = "How the pointwise kernel starts"},           \
    [SEP_BIAS_INIT] = {"bias_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,              \
                       .help = "How the bias starts"},                                                             \
    [SEP_DEPTHWISE_REG] = {"depthwise_regularizer", TW_PARAM_REGULARIZER, "",                                      \
                           .help = "L1/L2 penalty on the depthwise kernel"},                                       \
    [SEP_POINTWISE_REG] = {"pointwise_regularizer", TW_PARAM_REGULARIZER, "",                                      \
                           .help = "L1/L2 penalty on the pointwise kernel"},                                       \
    [SEP_BIAS_REG] = {"bias_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the bias"}

int tw__separable_configure(tw_layer *self);
/* rank: spatial axes, 1 or 2. */
int tw__separable_infer(const tw_layer *self, int rank, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                        int *nw);
tw_tensor *tw__separable_call(tw_layer *self, int rank, tw_tensor *x);

#endif
