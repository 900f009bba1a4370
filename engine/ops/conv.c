/* 2-D convolution (NHWC input, HWIO filter, TensorFlow's SAME/VALID rules;
 * the attributes, geometry and checks it shares with depthwise.c are in
 * conv_common.c) and its two gradients as primitive ops, each with a backward rule written
 * with these same three ops, so gradients of any order work.
 *
 * With y = conv2d(x, f), the gradients are
 *     dx = conv2d_backprop_input(f, dy)    (attr: the shape of x)
 *     df = conv2d_backprop_filter(x, dy)   (attr: the shape of f)
 * Both are bilinear. Writing B_I(f, g) for the first, its definition is
 * <u, B_I(f, g)> = <conv2d(u, f), g> for any u shaped like x, so for an
 * incoming gradient u of B_I's output:
 *     d/dg = conv2d(u, f)          d/df = conv2d_backprop_filter(u, g)
 * and likewise <v, B_F(x, g)> = <conv2d(x, v), g> gives, for v shaped like f:
 *     d/dg = conv2d(x, v)          d/dx = conv2d_backprop_input(v, g).
 */
#include <string.h>

#include "cpu/conv_kernels.h"
#include "cpu/cpu_kernels.h"
#include "conv_common.h"

extern const tw_op_def tw_op_conv2d, tw_op_conv2d_backprop_input, tw_op_conv2d_backprop_filter;

/* Check the attributes and the two shapes; fill the kernel geometry. */
static int geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, tw_conv_geometry *g,
                    int64_t *out_shape)
{
    tw_conv_window w;
    twk_conv2d_shape *s = &g->conv;
    memset(s, 0, sizeof *s);
    if (tw__conv_window(op, a, in, fil, fil[0] >= 1 && fil[1] >= 1, "kernel size must be at least 1x1", &w) < 0)
        return -1;
    *s = (twk_conv2d_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .in_c = in[3],
        .k_h = fil[0], .k_w = fil[1], .out_c = fil[3],
        .stride_h = w.stride_h, .stride_w = w.stride_w,
        .dilation_h = w.dilation_h, .dilation_w = w.dilation_w,
        .out_h = w.out_h, .out_w = w.out_w, .pad_top = w.pad_top, .pad_left = w.pad_left,
    };
    memcpy(out_shape, (const int64_t[]){s->batch, s->out_h, s->out_w, s->out_c}, 4 * sizeof(int64_t));
    return 0;
}

static size_t workspace(tw_dtype dtype, const tw_conv_geometry *g, tw_conv_pass pass)
{
    static const twk_conv_pass passes[] = {TWK_CONV_FORWARD, TWK_CONV_BACKPROP_INPUT, TWK_CONV_BACKPROP_FILTER};
    return twk_conv2d_workspace(dtype, &g->conv, passes[pass]);
}

static int kernel(const char *op, tw_conv_pass pass, tw_dtype dtype, const tw_conv_geometry *g, const void *a,
                  const void *b, void *out, void *workspace)
{
    const char *message;
    if (twk_blas_init(&message) < 0)
        return tw_error_set("%s: %s", op, message);
    switch (pass) {
    case TW_CONV_FORWARD: twk_conv2d_forward(dtype, &g->conv, a, b, out, workspace); break;
    case TW_CONV_BACKPROP_INPUT: twk_conv2d_backprop_input(dtype, &g->conv, a, b, out, workspace); break;
    case TW_CONV_BACKPROP_FILTER: twk_conv2d_backprop_filter(dtype, &g->conv, a, b, out, workspace); break;
    }
    return 0;
}

const tw_conv_family tw__conv2d_family = {
    .ops = {&tw_op_conv2d, &tw_op_conv2d_backprop_input, &tw_op_conv2d_backprop_filter},
    .filter_layout = "(kernel_h, kernel_w, in_channels, out_channels)",
    .geometry = geometry,
    .workspace = workspace,
    .kernel = kernel,
};

/* ---- the ops (their infer, kernel and backward in conv_common.c) ---------- */

TW_CONV_OP_DEFS(conv2d);

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    return tw__conv_forward(&tw_op_conv2d, input, filter, params);
}

/* The transposed convolution is this file's input-gradient op run forwards
 * on the input, with the filter as Keras stores it. */
tw_tensor *tw_conv2d_transpose(tw_tensor *input, tw_tensor *filter, int64_t out_h, int64_t out_w,
                               const tw_conv2d_params *params)
{
    int64_t shape[4] = {input && input->ndim == 4 ? input->shape[0] : 0, out_h, out_w,
                        filter && filter->ndim == 4 ? filter->shape[2] : 0};
    tw_attrs conv = tw__conv_attrs(params);
    return tw__conv_dispatch(&tw_op_conv2d_backprop_input, &conv, filter, input, shape);
}
