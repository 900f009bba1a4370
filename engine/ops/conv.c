/* 2-D convolution (NHWC input, HWIO filter, TensorFlow's SAME/VALID rules)
 * and its two gradients as primitive ops: conv2d(input, filter),
 * conv2d_backprop_input(filter, grad_output) -> the input's shape and
 * conv2d_backprop_filter(input, grad_output) -> the filter's shape. Their
 * checks, infer functions and backward rules are conv_common.c's. */
#include "conv_common.h"

extern const tw_op_def tw_op_conv2d, tw_op_conv2d_backprop_input, tw_op_conv2d_backprop_filter;

const tw_conv_family tw__conv2d_family = {
    .forward = &tw_op_conv2d,
    .backprop_input = &tw_op_conv2d_backprop_input,
    .backprop_filter = &tw_op_conv2d_backprop_filter,
    .filter_layout = "(kernel_h, kernel_w, in_channels, out_channels)",
    .depthwise = false,
};

int tw__conv2d_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, twk_conv2d_shape *s)
{
    tw_conv_window w;
    *s = (twk_conv2d_shape){0};
    if (tw__conv_window(&tw__conv2d_family, op, a, in, fil, &w) < 0)
        return -1;
    *s = (twk_conv2d_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .in_c = in[3],
        .k_h = fil[0], .k_w = fil[1], .out_c = fil[3],
        TW_CONV_WINDOW_FIELDS(w),
    };
    return 0;
}

const tw_op_def tw_op_conv2d = TW_CONV_OP_DEF(conv2d);
const tw_op_def tw_op_conv2d_backprop_input = TW_CONV_OP_DEF(conv2d_backprop_input);
const tw_op_def tw_op_conv2d_backprop_filter = TW_CONV_OP_DEF(conv2d_backprop_filter);

tw_tensor *tw_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_attrs a = tw__conv_attrs(params);
    return tw_dispatch1(&tw_op_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}

/* The transposed convolution is the input-gradient op run forwards on the
 * input, with the filter as Keras stores it. */
tw_tensor *tw_conv2d_transpose(tw_tensor *input, tw_tensor *filter, int64_t out_h, int64_t out_w,
                               const tw_conv2d_params *params)
{
    int64_t shape[4] = {input && input->ndim == 4 ? input->shape[0] : 0, out_h, out_w,
                        filter && filter->ndim == 4 ? filter->shape[2] : 0};
    tw_attrs conv = tw__conv_attrs(params);
    return tw__conv_backprop(&tw_op_conv2d_backprop_input, &conv, filter, input, shape);
}
