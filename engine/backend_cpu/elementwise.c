/* The CPU's elementwise kernels: every row of kernels/include/elementwise.h
 * (with NumPy broadcasting for the binary ones) and where. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"

static int run_unary(twk_unary_op kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twk_unary(kop, x->dtype, x->ndim, x->shape, tw__data(out), out->strides, tw__data(x), x->strides,
              call->attrs->f[0], call->attrs->f[1]);
    return 0;
}

/* Integer div and floormod refuse a zero divisor: C would trap or, as the
 * kernels do, give a made-up 0. */
static int check_divisor(twk_binary_op kop, const tw_op_call *call)
{
    tw_tensor *b = call->inputs[1];
    if ((kop != TWK_BINARY_div && kop != TWK_BINARY_floormod) || tw_dtype_is_float(b->dtype))
        return 0;
    if (twk_any_zero(b->dtype, b->ndim, b->shape, b->strides, tw__data(b)))
        return tw_error_set("%s: integer division by zero", call->op->name);
    return 0;
}

static int run_binary(twk_binary_op kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0], *a = call->inputs[0], *b = call->inputs[1];
    if (check_divisor(kop, call) < 0)
        return -1;
    int64_t sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    tw__broadcast_strides(a, out->ndim, out->shape, sa);
    tw__broadcast_strides(b, out->ndim, out->shape, sb);
    twk_binary(kop, a->dtype, out->ndim, out->shape, tw__data(out), out->strides, tw__data(a), sa, tw__data(b), sb);
    return 0;
}

#define UNARY_KERNEL(NAME, ...)                                                                             \
    int tw__cpu_##NAME(const tw_op_call *call, tw_tensor *const *outs) { return run_unary(TWK_UNARY_##NAME, call, outs); }
TWK_UNARY_OPS(UNARY_KERNEL)

#define BINARY_KERNEL(NAME, ...)                                                                            \
    int tw__cpu_##NAME(const tw_op_call *call, tw_tensor *const *outs) { return run_binary(TWK_BINARY_##NAME, call, outs); }
TWK_BINARY_OPS(BINARY_KERNEL)

#define IN(i) call->inputs[i]

int tw__cpu_where(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *out = outs[0];
    int64_t sc[TW_MAX_DIMS], sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    tw__broadcast_strides(IN(0), out->ndim, out->shape, sc);
    tw__broadcast_strides(IN(1), out->ndim, out->shape, sa);
    tw__broadcast_strides(IN(2), out->ndim, out->shape, sb);
    twk_where(out->dtype, out->ndim, out->shape, tw__data(out), out->strides, tw__data(IN(0)), sc, tw__data(IN(1)), sa,
              tw__data(IN(2)), sb);
    return 0;
}
