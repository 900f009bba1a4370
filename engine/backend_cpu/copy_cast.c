/* The CPU's copies and dtype conversions. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"

int tw__cpu_copy(const tw_op_call *call, tw_tensor *const *outs)
{
    tw__copy_into(outs[0], call->inputs[0]);
    return 0;
}

int tw__cpu_cast(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *out = outs[0];
    twk_cast(out->dtype, x->dtype, x->ndim, x->shape, tw__data(out), out->strides, tw__data(x), x->strides);
    return 0;
}
