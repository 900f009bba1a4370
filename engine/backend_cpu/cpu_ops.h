/* The CPU backend's kernels, one per op of the table (op_ids.h) that
 * computes: tw__cpu_NAME for op NAME. They unpack a tw_op_call into the raw
 * loops of kernels/cpu; backend_cpu.c indexes them by op number. The view
 * ops (reshape, permute, strided_slice, broadcast_to, stop_gradient,
 * custom) have none on any device. */
#ifndef TW_CPU_OPS_H
#define TW_CPU_OPS_H

#include "backend.h"

#define TW_CPU_OPS(X)                                                                                   \
    X(where)                                                                                            \
    X(sum) X(prod) X(max) X(min) X(argmax) X(argmin)                                                    \
    X(matmul) X(strided_slice_grad) X(copy) X(cast)                                                     \
    X(concat) X(gather) X(scatter_add) X(pad) X(tile) X(one_hot)                                        \
    X(softmax_cross_entropy) X(sparse_softmax_cross_entropy)                                            \
    X(conv2d) X(conv2d_backprop_input) X(conv2d_backprop_filter) X(max_pool2d) X(max_pool2d_grad)      \
    X(max_pool2d_grad_grad) X(avg_pool2d) X(avg_pool2d_grad)                                            \
    X(depthwise_conv2d) X(depthwise_conv2d_backprop_input) X(depthwise_conv2d_backprop_filter)          \
    X(resize) X(resize_grad)                                                                            \
    X(image_transform) X(image_transform_adjoint)                                                       \
    X(assign) X(assign_add) X(assign_sub) X(optimizer_update)

#define TW__CPU_DECLARE(name, ...) int tw__cpu_##name(const tw_op_call *call, tw_tensor *const *outs);
TWK_BINARY_OPS(TW__CPU_DECLARE)
TWK_UNARY_OPS(TW__CPU_DECLARE)
TW_CPU_OPS(TW__CPU_DECLARE)
#undef TW__CPU_DECLARE

#endif
