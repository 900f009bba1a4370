/* Depthwise 2-D convolution (NHWC input, filter (kernel_h, kernel_w,
 * in_channels, multiplier), output channel c * multiplier + m; TensorFlow's
 * depthwise_conv2d with its SAME/VALID rules) and its two gradients as
 * primitive ops: depthwise_conv2d(input, filter),
 * depthwise_conv2d_backprop_input(filter, grad_output) -> the input's shape
 * and depthwise_conv2d_backprop_filter(input, grad_output) -> the filter's
 * shape. Their checks, infer functions and backward rules are
 * conv_common.c's. */
#include "conv_common.h"

extern const tw_op_def tw_op_depthwise_conv2d, tw_op_depthwise_conv2d_backprop_input,
    tw_op_depthwise_conv2d_backprop_filter;

const tw_conv_family tw__depthwise_family = {
    .forward = &tw_op_depthwise_conv2d,
    .backprop_input = &tw_op_depthwise_conv2d_backprop_input,
    .backprop_filter = &tw_op_depthwise_conv2d_backprop_filter,
    .filter_layout = "(kernel_h, kernel_w, in_channels, depth_multiplier)",
    .depthwise = true,
};

int tw__depthwise_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil,
                           twk_depthwise_shape *s)
{
    tw_conv_window w;
    *s = (twk_depthwise_shape){0};
    if (tw__conv_window(&tw__depthwise_family, op, a, in, fil, &w) < 0)
        return -1;
    *s = (twk_depthwise_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3],
        .k_h = fil[0], .k_w = fil[1], .multiplier = fil[3],
        TW_CONV_WINDOW_FIELDS(w),
    };
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d = TW_CONV_OP_DEF(depthwise_conv2d);
const tw_op_def tw_op_depthwise_conv2d_backprop_input = TW_CONV_OP_DEF(depthwise_conv2d_backprop_input);
const tw_op_def tw_op_depthwise_conv2d_backprop_filter = TW_CONV_OP_DEF(depthwise_conv2d_backprop_filter);

tw_tensor *tw_depthwise_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_attrs a = tw__conv_attrs(params);
    return tw_dispatch1(&tw_op_depthwise_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}
