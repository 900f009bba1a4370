/* What the 2-D convolutions (conv.c, depthwise.c) share: their attributes,
 * the window's geometry by TensorFlow's SAME/VALID rules, the checks of
 * their tensors (messages name the op and the shapes), and the three ops
 * of each (forward, backprop_input, backprop_filter: infer, kernel and
 * the backward rules written with the same three ops), written once over
 * a family that gives the kernel's geometry and kernels.
 *
 * attrs.i: [0] stride_h, [1] stride_w, [2] dilation_h, [3] dilation_w,
 * [4] padding (tw_padding); the backprop ops add [5..8], the shape of the
 * tensor they produce. */
#ifndef TW_OPS_CONV_COMMON_H
#define TW_OPS_CONV_COMMON_H

#include "cpu/conv_kernels.h"
#include "cpu/depthwise_kernels.h"
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

/* ---- the three ops of a convolution, written once ----------------------------
 * A family (conv2d, depthwise_conv2d) gives its ops and what differs: the
 * filter's layout, the kernel's geometry and the kernels. Its ops' infer,
 * kernel and backward are the functions below, which find the family by
 * the call's op. */
typedef enum { TW_CONV_FORWARD, TW_CONV_BACKPROP_INPUT, TW_CONV_BACKPROP_FILTER } tw_conv_pass;
typedef union {
    twk_conv2d_shape conv;
    twk_depthwise_shape depthwise;
} tw_conv_geometry;
typedef struct {
    const tw_op_def *ops[3]; /* by tw_conv_pass */
    const char *filter_layout;
    /* Checks the attributes and the input and filter shapes (messages name
     * op); fills the kernel's geometry and the output's shape. */
    int (*geometry)(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, tw_conv_geometry *g,
                    int64_t *out_shape);
    /* Bytes of scratch memory the pass needs (0: none). */
    size_t (*workspace)(tw_dtype dtype, const tw_conv_geometry *g, tw_conv_pass pass);
    /* The pass on contiguous data; -1 with the error set (naming op). */
    int (*kernel)(const char *op, tw_conv_pass pass, tw_dtype dtype, const tw_conv_geometry *g, const void *a,
                  const void *b, void *out, void *workspace);
} tw_conv_family;
/* The families (conv.c, depthwise.c). */
extern const tw_conv_family tw__conv2d_family, tw__depthwise_conv2d_family;

/* forward(input, filter); backprop_input(filter, grad_output) -> the
 * input's shape; backprop_filter(input, grad_output) -> the filter's. */
int tw__conv_forward_infer(const tw_op_call *call, tw_desc *out);
int tw__conv_forward_kernel(const tw_op_call *call, tw_tensor *const *outs);
int tw__conv_forward_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                              tw_tensor **gin);
int tw__conv_input_infer(const tw_op_call *call, tw_desc *out);
int tw__conv_input_kernel(const tw_op_call *call, tw_tensor *const *outs);
int tw__conv_input_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin);
int tw__conv_filter_infer(const tw_op_call *call, tw_desc *out);
int tw__conv_filter_kernel(const tw_op_call *call, tw_tensor *const *outs);
int tw__conv_filter_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin);

/* The three op definitions of the family NAME: tw_op_NAME,
 * tw_op_NAME_backprop_input and tw_op_NAME_backprop_filter. */
#define TW_CONV_OP_DEFS(NAME)                                                                                      \
    const tw_op_def tw_op_##NAME = {                                                                               \
        .name = #NAME, .noutputs = 1, .ninputs = 2, .infer = tw__conv_forward_infer,                              \
        .kernel = {[TW_DEVICE_CPU] = tw__conv_forward_kernel}, .backward = tw__conv_forward_backward,             \
    };                                                                                                             \
    const tw_op_def tw_op_##NAME##_backprop_input = {                                                              \
        .name = #NAME "_backprop_input", .noutputs = 1, .ninputs = 2, .infer = tw__conv_input_infer,              \
        .kernel = {[TW_DEVICE_CPU] = tw__conv_input_kernel}, .backward = tw__conv_input_backward,                 \
    };                                                                                                             \
    const tw_op_def tw_op_##NAME##_backprop_filter = {                                                             \
        .name = #NAME "_backprop_filter", .noutputs = 1, .ninputs = 2, .infer = tw__conv_filter_infer,            \
        .kernel = {[TW_DEVICE_CPU] = tw__conv_filter_kernel}, .backward = tw__conv_filter_backward,               \
    }

/* The attributes of tw_conv2d_params (zeros: strides and dilations 1). */
tw_attrs tw__conv_attrs(const tw_conv2d_params *params);
/* The forward op on (input, filter) with params' geometry. */
tw_tensor *tw__conv_forward(const tw_op_def *op, tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params);
/* One of the three ops on (a, b) with conv's geometry; shape: the backprop
 * ops' output shape, NULL for the forward op. */
tw_tensor *tw__conv_dispatch(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *b,
                             const int64_t *shape);

#endif
