/* Every primitive op's number (tw_op_def.id): the registry lists ops in this
 * order, and backends keep their kernels in tables indexed by it, so finding
 * an op's kernel on any device is one load. The elementwise ops come from
 * their table (kernels/include/elementwise.h); add one name to TW_OPS (or
 * TW_VIEW_OPS) for any other op_def, and set its .id = TW_OP_ID_name. 0 is no op: a definition
 * without an id has no kernel anywhere. */
#ifndef TW_OP_IDS_H
#define TW_OP_IDS_H

#include "elementwise.h"

/* The ops that compute (each backend's kernel table has them), then the
 * views (reshape, ...: no kernel on any device). */
#define TW_OPS(X)                                                                                       \
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
    X(assign) X(assign_add) X(assign_sub) X(optimizer_update)                                           \
    X(batch_norm) X(batch_norm_grad)
#define TW_VIEW_OPS(X) X(reshape) X(permute) X(strided_slice) X(broadcast_to) X(stop_gradient) X(custom)

#define TW__OP_ID(name, ...) TW_OP_ID_##name,
typedef enum {
    TW_OP_ID_NONE,
    TWK_BINARY_OPS(TW__OP_ID) TWK_UNARY_OPS(TW__OP_ID) TW_OPS(TW__OP_ID) TW_VIEW_OPS(TW__OP_ID) TW_OP_COUNT
} tw_op_id;
#undef TW__OP_ID

#endif
