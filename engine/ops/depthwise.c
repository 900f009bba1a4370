/* Depthwise 2-D convolution (NHWC input, filter (kernel_h, kernel_w,
 * in_channels, multiplier), output channel c * multiplier + m; TensorFlow's
 * depthwise_conv2d with its SAME/VALID rules; attributes, geometry and
 * checks in conv_common.c, shared with conv.c) and its two gradients as
 * primitive ops. As for conv2d (see conv.c), with y = depthwise(x, f):
 *     dx = depthwise_conv2d_backprop_input(f, dy)    (attr: the shape of x)
 *     df = depthwise_conv2d_backprop_filter(x, dy)   (attr: the shape of f)
 * and both are bilinear, so their backward rules are the same three ops:
 * <u, B_I(f, g)> = <depthwise(u, f), g> gives d/dg = depthwise(u, f),
 * d/df = B_F(u, g); <v, B_F(x, g)> = <depthwise(x, v), g> gives
 * d/dg = depthwise(x, v), d/dx = B_I(v, g).
 */
#include <string.h>

#include "cpu/depthwise_kernels.h"
#include "conv_common.h"

extern const tw_op_def tw_op_depthwise_conv2d, tw_op_depthwise_conv2d_backprop_input,
    tw_op_depthwise_conv2d_backprop_filter;

/* Check the attributes and the input and filter shapes; fill the kernel's
 * geometry. */
static int geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, tw_conv_geometry *g,
                    int64_t *out_shape)
{
    tw_conv_window w;
    twk_depthwise_shape *s = &g->depthwise;
    memset(s, 0, sizeof *s);
    if (tw__conv_window(op, a, in, fil, fil[0] >= 1 && fil[1] >= 1 && fil[3] >= 1,
                        "kernel size and depth multiplier must be at least 1", &w) < 0)
        return -1;
    *s = (twk_depthwise_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3],
        .k_h = fil[0], .k_w = fil[1], .multiplier = fil[3],
        .stride_h = w.stride_h, .stride_w = w.stride_w,
        .dilation_h = w.dilation_h, .dilation_w = w.dilation_w,
        .out_h = w.out_h, .out_w = w.out_w, .pad_top = w.pad_top, .pad_left = w.pad_left,
    };
    memcpy(out_shape, (const int64_t[]){s->batch, s->out_h, s->out_w, s->channels * s->multiplier},
           4 * sizeof(int64_t));
    return 0;
}

/* Only the filter's gradient needs scratch memory. */
static size_t workspace(tw_dtype dtype, const tw_conv_geometry *g, tw_conv_pass pass)
{
    return pass == TW_CONV_BACKPROP_FILTER ? twk_depthwise_filter_workspace(dtype, &g->depthwise) : 0;
}

static int kernel(const char *op, tw_conv_pass pass, tw_dtype dtype, const tw_conv_geometry *g, const void *a,
                  const void *b, void *out, void *workspace)
{
    switch (pass) {
    case TW_CONV_FORWARD: twk_depthwise_forward(dtype, &g->depthwise, a, b, out); break;
    case TW_CONV_BACKPROP_INPUT: twk_depthwise_backprop_input(dtype, &g->depthwise, a, b, out); break;
    case TW_CONV_BACKPROP_FILTER: twk_depthwise_backprop_filter(dtype, &g->depthwise, a, b, out, workspace); break;
    }
    return 0;
}

const tw_conv_family tw__depthwise_conv2d_family = {
    .ops = {&tw_op_depthwise_conv2d, &tw_op_depthwise_conv2d_backprop_input, &tw_op_depthwise_conv2d_backprop_filter},
    .filter_layout = "(kernel_h, kernel_w, in_channels, depth_multiplier)",
    .geometry = geometry,
    .workspace = workspace,
    .kernel = kernel,
};

/* ---- the ops (their infer, kernel and backward in conv_common.c) ---------- */

TW_CONV_OP_DEFS(depthwise_conv2d);

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_depthwise_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    return tw__conv_forward(&tw_op_depthwise_conv2d, input, filter, params);
}
