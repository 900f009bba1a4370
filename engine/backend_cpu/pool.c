/* The CPU's 2-D max and average pooling and their gradients, over contiguous
 * copies of the inputs. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"
#include "ops/geometry.h"

/* Run fn over contiguous copies of the inputs. */
typedef void (*pool_fn)(tw_dtype, const twk_pool2d_shape *, tw_tensor *const *, tw_tensor *);

static int run(const twk_pool2d_shape *s, int n, tw_tensor *const *inputs, tw_tensor *out, pool_fn fn)
{
    tw_tensor *c[3] = {0};
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (!(c[i] = tw__contiguous_raw(inputs[i])))
            rc = -1;
    if (rc == 0)
        fn(out->dtype, s, c, out);
    for (int i = 0; i < n; i++)
        tw_tensor_unref(c[i]);
    return rc;
}

static void max_pool_fn(tw_dtype dt, const twk_pool2d_shape *s, tw_tensor *const *in, tw_tensor *out)
{
    twk_max_pool2d(dt, s, tw__data(in[0]), tw__data(out));
}

static void max_grad_fn(tw_dtype dt, const twk_pool2d_shape *s, tw_tensor *const *in, tw_tensor *out)
{
    twk_max_pool2d_grad(dt, s, tw__data(in[0]), tw__data(in[2]), tw__data(out));
}

static void max_grad_grad_fn(tw_dtype dt, const twk_pool2d_shape *s, tw_tensor *const *in, tw_tensor *out)
{
    twk_max_pool2d_grad_grad(dt, s, tw__data(in[0]), tw__data(in[2]), tw__data(out));
}

static void avg_pool_fn(tw_dtype dt, const twk_pool2d_shape *s, tw_tensor *const *in, tw_tensor *out)
{
    twk_avg_pool2d(dt, s, tw__data(in[0]), tw__data(out));
}

static void avg_grad_fn(tw_dtype dt, const twk_pool2d_shape *s, tw_tensor *const *in, tw_tensor *out)
{
    twk_avg_pool2d_grad(dt, s, tw__data(in[0]), tw__data(out));
}

int tw__cpu_max_pool2d(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_pool2d_shape s;
    if (tw__pool2d_geometry("max_pool2d", call->attrs, call->inputs[0]->shape, &s) < 0)
        return -1;
    return run(&s, 1, call->inputs, outs[0], max_pool_fn);
}

int tw__cpu_max_pool2d_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_pool2d_shape s;
    if (tw__pool2d_geometry("max_pool2d_grad", call->attrs, call->inputs[0]->shape, &s) < 0)
        return -1;
    return run(&s, 3, call->inputs, outs[0], max_grad_fn);
}

int tw__cpu_max_pool2d_grad_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_pool2d_shape s;
    if (tw__pool2d_geometry("max_pool2d_grad_grad", call->attrs, call->inputs[0]->shape, &s) < 0)
        return -1;
    return run(&s, 3, call->inputs, outs[0], max_grad_grad_fn);
}

int tw__cpu_avg_pool2d(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_pool2d_shape s;
    if (tw__pool2d_geometry("avg_pool2d", call->attrs, call->inputs[0]->shape, &s) < 0)
        return -1;
    return run(&s, 1, call->inputs, outs[0], avg_pool_fn);
}

int tw__cpu_avg_pool2d_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_pool2d_shape s;
    if (tw__pool2d_geometry("avg_pool2d_grad", call->attrs, call->attrs->i + TW_POOL_ATTR_SHAPE, &s) < 0)
        return -1;
    return run(&s, 1, call->inputs, outs[0], avg_grad_fn);
}
