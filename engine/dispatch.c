/* The one path every op takes: check inputs, infer the result, allocate,
 * run the device's kernel, report to the tracer when a function is being
 * traced, record on the active tapes, hand results to the open scope. */
#include <string.h>

#include "internal.h"

static int check_devices(const tw_op_def *op, int n, tw_tensor *const *inputs, tw_device *device)
{
    *device = n > 0 ? inputs[0]->storage->device : tw_default_device();
    for (int i = 1; i < n; i++) {
        tw_device d = inputs[i]->storage->device;
        if (d.kind != device->kind || d.index != device->index) {
            char a[32], b[32];
            return tw_error_set("%s: inputs are on different devices (%s and %s); copy with tw_tensor_to()",
                                op->name, tw_device_name(*device, a, sizeof a), tw_device_name(d, b, sizeof b));
        }
    }
    return 0;
}

static void release_all(tw_tensor **outs, int n)
{
    for (int k = 0; k < n; k++) {
        tw_tensor_unref(outs[k]);
        outs[k] = NULL;
    }
}

int tw__check_arity(const tw_op_def *op, int ninputs)
{
    if (op->ninputs == TW_OP_VARIADIC || ninputs == op->ninputs)
        return 0;
    return tw_error_set("%s: takes %d input%s, got %d", op->name, op->ninputs, op->ninputs == 1 ? "" : "s", ninputs);
}

int tw_dispatch(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs, void *ctx,
                tw_tensor **outs)
{
    for (int k = 0; k < op->noutputs; k++)
        outs[k] = NULL;
    if (tw__check_arity(op, ninputs) < 0 || tw__check_inputs(op->name, ninputs, inputs) < 0)
        return -1;
    tw__threads_adapt();
    tw_device device;
    if (check_devices(op, ninputs, inputs, &device) < 0)
        return -1;
    static const tw_attrs none;
    tw_op_call call = {op, ninputs, inputs, attrs ? attrs : &none, ctx};
    tw_desc descs[TW_MAX_OUTPUTS];
    if (op->infer(&call, descs) < 0)
        return -1;
    for (int k = 0; k < op->noutputs; k++)
        if (tw__check_shape(op->name, descs[k].ndim, descs[k].shape) < 0)
            return -1;
    if (op->view) {
        outs[0] = op->view(&call, &descs[0]);
        if (!outs[0])
            return -1;
    } else {
        if (!op->kernel[device.kind]) {
            char name[32];
            return tw_error_set("%s: no kernel for device %s", op->name, tw_device_name(device, name, sizeof name));
        }
        for (int k = 0; k < op->noutputs; k++) {
            outs[k] = tw__tensor_new(descs[k].dtype, descs[k].ndim, descs[k].shape, device);
            if (!outs[k]) {
                release_all(outs, k);
                return -1;
            }
        }
        /* A trace records a variable assignment for the graph to perform
         * (tw/function.h); running it now too would apply it twice. */
        bool deferred = tw__tracer && (op->flags & TW_OP_STATEFUL);
        if (!deferred && op->kernel[device.kind](&call, outs) < 0) {
            release_all(outs, op->noutputs);
            return -1;
        }
    }
    if (tw__tracer)
        tw__trace_op(&call, outs, op->noutputs);
    if (!(op->flags & TW_OP_NOT_DIFFERENTIABLE) && tw__recording())
        tw__record(&call, outs, op->noutputs);
    for (int k = 0; k < op->noutputs; k++)
        tw__track(outs[k]);
    return 0;
}

tw_tensor *tw_dispatch1(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs)
{
    tw_tensor *out;
    return tw_dispatch(op, ninputs, inputs, attrs, NULL, &out) < 0 ? NULL : out;
}
