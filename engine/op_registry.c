/* Every primitive op, by name: graphs (a later issue) and tests look ops up
 * here. Add one extern and one entry per op_def. */
#include <string.h>

#include "internal.h"

#define OPS(X)                                                                                          \
    X(add) X(sub) X(mul) X(div) X(pow) X(maximum) X(minimum) X(relu_grad)                                           \
    X(equal) X(not_equal) X(less) X(less_equal) X(greater) X(greater_equal) X(logical_and) X(logical_or) \
    X(where)                                                                                            \
    X(neg) X(abs) X(sign) X(exp) X(log) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(square) X(sin) X(cos)      \
    X(tanh) X(erf) X(sigmoid) X(relu) X(leaky_relu) X(elu) X(gelu) X(softplus) X(clip) X(logical_not)  \
    X(sum) X(prod) X(max) X(min) X(argmax) X(argmin)                                                    \
    X(matmul)                                                                                           \
    X(reshape) X(permute) X(strided_slice) X(strided_slice_grad) X(broadcast_to) X(stop_gradient)      \
    X(copy) X(cast)                                                                                     \
    X(concat) X(gather) X(scatter_add) X(pad) X(tile) X(one_hot)                                        \
    X(softmax_cross_entropy) X(sparse_softmax_cross_entropy)                                            \
    X(conv2d) X(conv2d_backprop_input) X(conv2d_backprop_filter) X(max_pool2d) X(max_pool2d_grad)      \
    X(max_pool2d_grad_grad) X(avg_pool2d) X(avg_pool2d_grad)                                            \
    X(custom) X(assign) X(assign_add) X(assign_sub) X(optimizer_update)

#define DECLARE(name) extern const tw_op_def tw_op_##name;
OPS(DECLARE)

#define ENTRY(name) &tw_op_##name,
static const tw_op_def *const registry[] = {OPS(ENTRY) NULL};

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
