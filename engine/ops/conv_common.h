/* What conv2d and depthwise_conv2d share: each is a family of three
 * primitive ops (the forward op, its input gradient and its filter
 * gradient) with the same attributes, the same SAME/VALID geometry and the
 * same checks, infer functions and backward rules, written once here and
 * told apart by a tw_conv_family.
 *
 * attrs.i: [0] stride_h, [1] stride_w, [2] dilation_h, [3] dilation_w,
 * [4] padding (tw_padding); the backprop ops add [5..8]
 * (TW_CONV_ATTR_SHAPE), the shape of the tensor they produce. */
#ifndef TW_OPS_CONV_COMMON_H
#define TW_OPS_CONV_COMMON_H

#include <stdbool.h>

#include "geometry.h"

typedef struct {
    /* The forward op (input, filter), the input gradient (filter,
     * grad_output) and the filter gradient (input, grad_output). */
    const tw_op_def *forward, *backprop_input, *backprop_filter;
    /* The filter's layout, as messages name it. */
    const char *filter_layout;
    /* false: filter (k_h, k_w, in_c, out_c), out_c output channels;
     * true: filter (k_h, k_w, in_c, multiplier), in_c * multiplier output
     * channels, and the multiplier must be at least 1. */
    bool depthwise;
} tw_conv_family;

extern const tw_conv_family tw__conv2d_family, tw__depthwise_family;

/* The checked geometry both families' kernel shapes are filled from. */
typedef struct {
    int64_t out[4]; /* the forward op's output (batch, out_h, out_w, channels) */
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    int64_t pad_top, pad_left;
} tw_conv_window;

/* The designated initializers of a kernel shape struct's window fields
 * (twk_conv2d_shape and twk_depthwise_shape name them alike) from w. */
#define TW_CONV_WINDOW_FIELDS(w)                                                                  \
    .out_h = (w).out[1], .out_w = (w).out[2], .stride_h = (w).stride_h, .stride_w = (w).stride_w, \
    .dilation_h = (w).dilation_h, .dilation_w = (w).dilation_w, .pad_top = (w).pad_top, .pad_left = (w).pad_left

/* Checks the attributes against input shape in and filter shape fil and
 * fills w, or sets an error naming op and both shapes. */
int tw__conv_window(const tw_conv_family *fam, const char *op, const tw_attrs *a, const int64_t *in,
                    const int64_t *fil, tw_conv_window *w);

/* tw_op_def.infer and .backward of all six ops (the family and the op's
 * role in it come from call->op). */
int tw__conv_infer(const tw_op_call *call, tw_desc *out);
int tw__conv_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                      tw_tensor **gin);
/* The definition of the family op named id_name (an op_ids.h name). */
#define TW_CONV_OP_DEF(id_name)                                                                        \
    {.id = TW_OP_ID_##id_name, .name = #id_name, .noutputs = 1, .ninputs = 2, .infer = tw__conv_infer, \
     .backward = tw__conv_backward}

/* The forward attributes from params (NULL or 0 fields: stride and
 * dilation 1, VALID). */
tw_attrs tw__conv_attrs(const tw_conv2d_params *params);
/* Runs op (a backprop op) with conv's forward attributes and the shape of
 * what it produces. */
tw_tensor *tw__conv_backprop(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *grad,
                             const int64_t *shape);

#endif
