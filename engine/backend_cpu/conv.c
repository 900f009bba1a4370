/* The CPU's conv2d passes (kernels/cpu/conv.c picks the algorithm) and
 * depthwise convolutions, over contiguous copies of the inputs. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"
#include "ops/geometry.h"

typedef enum { RUN_FORWARD, RUN_INPUT, RUN_FILTER } run_kind;

static int conv_run(const char *op, run_kind kind, const twk_conv2d_shape *s, tw_tensor *a, tw_tensor *b, tw_tensor *out)
{
    const char *message;
    if (twk_blas_init(&message) < 0)
        return tw_error_set("%s: %s", op, message);
    static const twk_conv_pass passes[] = {TWK_CONV_FORWARD, TWK_CONV_BACKPROP_INPUT, TWK_CONV_BACKPROP_FILTER};
    tw_tensor *ca = tw__contiguous_raw(a), *cb = ca ? tw__contiguous_raw(b) : NULL;
    size_t bytes = cb ? twk_conv2d_workspace(out->dtype, s, passes[kind]) : 0;
    tw_storage *ws = bytes ? tw__storage_new(bytes, out->storage->device) : NULL;
    int rc = -1;
    if (cb && (!bytes || ws)) {
        void *w = ws ? ws->data : NULL;
        switch (kind) {
        case RUN_FORWARD: twk_conv2d_forward(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out), w); break;
        case RUN_INPUT: twk_conv2d_backprop_input(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out), w); break;
        case RUN_FILTER: twk_conv2d_backprop_filter(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out), w); break;
        }
        rc = 0;
    }
    tw__storage_unref(ws);
    tw_tensor_unref(ca);
    tw_tensor_unref(cb);
    return rc;
}

int tw__cpu_conv2d(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv2d_geometry("conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    return conv_run("conv2d", RUN_FORWARD, &s, x, f, outs[0]);
}

int tw__cpu_conv2d_backprop_input(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv2d_geometry("conv2d_backprop_input", call->attrs, call->attrs->i + TW_CONV_ATTR_SHAPE, f->shape, &s) < 0)
        return -1;
    return conv_run("conv2d_backprop_input", RUN_INPUT, &s, f, g, outs[0]);
}

int tw__cpu_conv2d_backprop_filter(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv2d_geometry("conv2d_backprop_filter", call->attrs, x->shape, call->attrs->i + TW_CONV_ATTR_SHAPE, &s) < 0)
        return -1;
    return conv_run("conv2d_backprop_filter", RUN_FILTER, &s, x, g, outs[0]);
}

static int depthwise_run(run_kind kind, const twk_depthwise_shape *s, tw_tensor *a, tw_tensor *b, tw_tensor *out)
{
    tw_tensor *ca = tw__contiguous_raw(a), *cb = ca ? tw__contiguous_raw(b) : NULL;
    size_t bytes = cb && kind == RUN_FILTER ? twk_depthwise_filter_workspace(out->dtype, s) : 0;
    tw_storage *ws = bytes ? tw__storage_new(bytes, out->storage->device) : NULL;
    int rc = -1;
    if (cb && (!bytes || ws)) {
        switch (kind) {
        case RUN_FORWARD: twk_depthwise_forward(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out)); break;
        case RUN_INPUT: twk_depthwise_backprop_input(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out)); break;
        case RUN_FILTER:
            twk_depthwise_backprop_filter(out->dtype, s, tw__data(ca), tw__data(cb), tw__data(out),
                                          ws ? ws->data : NULL);
            break;
        }
        rc = 0;
    }
    tw__storage_unref(ws);
    tw_tensor_unref(ca);
    tw_tensor_unref(cb);
    return rc;
}

int tw__cpu_depthwise_conv2d(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__depthwise_geometry("depthwise_conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    return depthwise_run(RUN_FORWARD, &s, x, f, outs[0]);
}

int tw__cpu_depthwise_conv2d_backprop_input(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__depthwise_geometry("depthwise_conv2d_backprop_input", call->attrs, call->attrs->i + TW_CONV_ATTR_SHAPE, f->shape, &s) < 0)
        return -1;
    return depthwise_run(RUN_INPUT, &s, f, g, outs[0]);
}

int tw__cpu_depthwise_conv2d_backprop_filter(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__depthwise_geometry("depthwise_conv2d_backprop_filter", call->attrs, x->shape, call->attrs->i + TW_CONV_ATTR_SHAPE, &s) < 0)
        return -1;
    return depthwise_run(RUN_FILTER, &s, x, g, outs[0]);
}
