/* The CPU's reductions: sum, prod, max, min over the axes attrs.i[1 + d]
 * marks, argmax and argmin along attrs.i[0]. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"

static int reduce_run(twk_reduce_op kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0];
    bool mask[TW_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        mask[d] = call->attrs->i[1 + d];
    if (x->numel == 0) {
        twk_fill(outs[0]->dtype, outs[0]->numel, tw__data(outs[0]), kop == TWK_PROD ? 1 : 0);
        return 0;
    }
    twk_reduce(kop, x->dtype, x->ndim, x->shape, x->strides, tw__data(x), mask, tw__data(outs[0]));
    return 0;
}

static int arg_run(twk_reduce_op kop, const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0];
    bool mask[TW_MAX_DIMS] = {0};
    mask[call->attrs->i[0]] = true;
    twk_reduce(kop, x->dtype, x->ndim, x->shape, x->strides, tw__data(x), mask, tw__data(outs[0]));
    return 0;
}

int tw__cpu_sum(const tw_op_call *call, tw_tensor *const *outs) { return reduce_run(TWK_SUM, call, outs); }
int tw__cpu_prod(const tw_op_call *call, tw_tensor *const *outs) { return reduce_run(TWK_PROD, call, outs); }
int tw__cpu_max(const tw_op_call *call, tw_tensor *const *outs) { return reduce_run(TWK_RMAX, call, outs); }
int tw__cpu_min(const tw_op_call *call, tw_tensor *const *outs) { return reduce_run(TWK_RMIN, call, outs); }
int tw__cpu_argmax(const tw_op_call *call, tw_tensor *const *outs) { return arg_run(TWK_ARGMAX, call, outs); }
int tw__cpu_argmin(const tw_op_call *call, tw_tensor *const *outs) { return arg_run(TWK_ARGMIN, call, outs); }
