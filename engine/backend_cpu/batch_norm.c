/* The CPU's fused batch normalization and its gradient (ops/batch_norm.c),
 * over contiguous copies of the inputs: x seen as (rows, channels). */
#include "backend_cpu/cpu_ops.h"
#include "cpu/batch_norm_kernels.h"

/* Contiguous copies of the n inputs and a workspace, then fn; -1 on failure. */
typedef void (*bn_fn)(const tw_op_call *call, tw_tensor *const *in, tw_tensor *const *outs, int64_t rows,
                      int64_t channels, void *workspace);

static int run(const tw_op_call *call, tw_tensor *const *outs, bn_fn fn)
{
    const tw_tensor *x = call->inputs[0];
    int64_t channels = x->shape[x->ndim - 1], rows = 1;
    for (int d = 0; d < x->ndim - 1; d++)
        rows *= x->shape[d];
    tw_tensor *c[5] = {0};
    int rc = 0;
    for (int i = 0; i < call->ninputs && rc == 0; i++)
        if (!(c[i] = tw__contiguous_raw(call->inputs[i])))
            rc = -1;
    size_t bytes = twk_batch_norm_workspace(rows, channels);
    tw_storage *ws = rc == 0 && bytes ? tw__storage_new(bytes, outs[0]->storage->device) : NULL;
    if (rc == 0 && (!bytes || ws))
        fn(call, c, outs, rows, channels, ws ? ws->data : NULL);
    else
        rc = -1;
    tw__storage_unref(ws);
    for (int i = 0; i < call->ninputs; i++)
        tw_tensor_unref(c[i]);
    return rc;
}

static void forward(const tw_op_call *call, tw_tensor *const *in, tw_tensor *const *outs, int64_t rows,
                    int64_t channels, void *w)
{
    twk_batch_norm_forward(outs[0]->dtype, rows, channels, tw__data(in[0]), tw__data(in[1]), tw__data(in[2]),
                           call->attrs->f[0], tw__data(outs[0]), tw__data(outs[1]), tw__data(outs[2]), w);
}

static void backward(const tw_op_call *call, tw_tensor *const *in, tw_tensor *const *outs, int64_t rows,
                     int64_t channels, void *w)
{
    twk_batch_norm_backward(outs[0]->dtype, rows, channels, tw__data(in[0]), tw__data(in[1]), tw__data(in[2]),
                            tw__data(in[3]), tw__data(in[4]), tw__data(outs[0]), tw__data(outs[1]),
                            tw__data(outs[2]), w);
}

int tw__cpu_batch_norm(const tw_op_call *call, tw_tensor *const *outs) { return run(call, outs, forward); }

int tw__cpu_batch_norm_grad(const tw_op_call *call, tw_tensor *const *outs) { return run(call, outs, backward); }
