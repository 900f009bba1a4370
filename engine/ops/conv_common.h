/* What the 2-D convolutions (conv.c, depthwise.c) share: their attributes,
 * the window's geometry by TensorFlow's SAME/VALID rules, the checks of
 * their tensors (messages name the op and the shapes) and the dispatch of
 * the three ops of each (forward, backprop_input, backprop_filter), which
 * their backward rules use.
 *
 * attrs.i: [0] stride_h, [1] stride_w, [2] dilation_h, [3] dilation_w,
 * [4] padding (tw_padding); the backprop ops add [5..8], the shape of the
 * tensor they produce. */
#ifndef TW_OPS_CONV_COMMON_H
#define TW_OPS_CONV_COMMON_H

#include "internal.h"

enum {
    TW_CONV_STRIDE_H,
    TW_CONV_STRIDE_W,
    TW_CONV_DILATION_H,
    TW_CONV_DILATION_W,
    TW_CONV_PADDING,
    TW_CONV_SHAPE,
    TW_CONV_NATTRS = TW_CONV_SHAPE + 4
};

#define TW_CONV_NHWC "(batch, height, width, channels)"

/* The window over an NHWC input. */
typedef struct {
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    int64_t out_h, out_w, pad_top, pad_left;
} tw_conv_window;

/* Checks the attributes, the filter's kernel (filter_ok; else "the
 * filter's <filter_rule>") and that the input's channels (in[3]) are the
 * filter's in_channels (fil[2]); then the output size and padding of both
 * spatial axes. Messages name the op and both shapes. */
int tw__conv_window(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, bool filter_ok,
                    const char *filter_rule, tw_conv_window *w);
/* Rank 4, float, one dtype for both; names the op and both tensors. */
int tw__conv_check_pair(const char *op, const char *name_a, const tw_tensor *a, const char *name_b,
                        const tw_tensor *b, const char *layout_a, const char *layout_b);
/* A backprop op's shape attribute: present, no negative dimension. */
int tw__conv_check_shape_attr(const char *op, const tw_attrs *a, const char *what);
/* The gradient's shape must be the convolution's output, `want`. */
int tw__conv_check_grad_shape(const char *op, const int64_t *want, const tw_tensor *g, const int64_t *in,
                              const int64_t *fil);
void tw__conv_set_desc(tw_desc *out, tw_dtype dtype, const int64_t *shape);

/* The attributes of tw_conv2d_params (zeros: strides and dilations 1). */
tw_attrs tw__conv_attrs(const tw_conv2d_params *params);
/* One of the three ops on (a, b) with conv's geometry; shape: the backprop
 * ops' output shape, NULL for the forward op. */
tw_tensor *tw__conv_dispatch(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *b,
                             const int64_t *shape);

#endif
