/* Every primitive op, by name: graphs and tests look ops up here. The
 * elementwise ops come from their table (kernels/include/elementwise.h); add one
 * name to OPS for any other op_def. */
#include <string.h>

#include "elementwise.h"
#include "internal.h"

#define OPS(X)                                                                                          \
    X(where)                                                                                            \
    X(sum) X(prod) X(max) X(min) X(argmax) X(argmin)                                                    \
    X(matmul)                                                                                           \
    X(reshape) X(permute) X(strided_slice) X(strided_slice_grad) X(broadcast_to) X(stop_gradient)      \
    X(copy) X(cast)                                                                                     \
    X(concat) X(gather) X(scatter_add) X(pad) X(tile) X(one_hot)                                        \
    X(softmax_cross_entropy) X(sparse_softmax_cross_entropy)                                            \
    X(conv2d) X(conv2d_backprop_input) X(conv2d_backprop_filter) X(max_pool2d) X(max_pool2d_grad)      \
    X(max_pool2d_grad_grad) X(avg_pool2d) X(avg_pool2d_grad)                                            \
    X(depthwise_conv2d) X(depthwise_conv2d_backprop_input) X(depthwise_conv2d_backprop_filter)          \
    X(resize) X(resize_grad)                                                                            \
    X(image_transform) X(image_transform_adjoint)                                                       \
    X(custom) X(assign) X(assign_add) X(assign_sub) X(optimizer_update)

#define DECLARE(name, ...) extern const tw_op_def tw_op_##name;
TWK_UNARY_OPS(DECLARE)
TWK_BINARY_OPS(DECLARE)
OPS(DECLARE)

#define ENTRY(name, ...) &tw_op_##name,
static const tw_op_def *const registry[] = {TWK_BINARY_OPS(ENTRY) TWK_UNARY_OPS(ENTRY) OPS(ENTRY) NULL};

const tw_op_def *const *tw_op_registry(void)
{
    return registry;
}

const tw_op_def *tw_op_lookup(const char *name)
{
    for (const tw_op_def *const *op = registry; *op; op++)
        if (strcmp((*op)->name, name) == 0)
            return *op;
    return NULL;
}
