/* The one path every op takes: check inputs, infer the result, allocate,
 * run the device's kernel, report to the tracer when a function is being
 * traced, record on the active tapes, hand results to the open scope. */
#include <string.h>

#include "backend.h"

static bool same_device(tw_device a, tw_device b) { return a.kind == b.kind && a.index == b.index; }

/* The device the op runs on: its inputs'. A 0-d input (a scalar constant)
 * on another device joins the others, as Python numbers do in TensorFlow
 * (*moved is set); any other mix is an error naming both devices. */
static int check_devices(const tw_op_def *op, int n, tw_tensor *const *inputs, tw_device *device, bool *moved)
{
    *moved = false;
    if (n == 0) {
        *device = tw_default_device();
        return 0;
    }
    int first = 0;
    while (first < n - 1 && inputs[first]->ndim == 0)
        first++;
    *device = inputs[first]->storage->device;
    for (int i = 0; i < n; i++) {
        tw_device d = inputs[i]->storage->device;
        if (same_device(d, *device))
            continue;
        if (inputs[i]->ndim == 0 && n <= TW_MAX_INPUTS) {
            *moved = true;
            continue;
        }
        char a[32], b[32];
        return tw_error_set("%s: inputs are on different devices (%s and %s); copy with tw_tensor_to()", op->name,
                            tw_device_name(*device, a, sizeof a), tw_device_name(d, b, sizeof b));
    }
    return 0;
}

/* Copies of the scalars check_devices let join from other devices. */
static int move_scalars(int n, tw_tensor *const *inputs, tw_device device, tw_tensor **local)
{
    for (int i = 0; i < n; i++) {
        tw_tensor *t = inputs[i];
        local[i] = NULL;
        if (same_device(t->storage->device, device))
            continue;
        local[i] = tw__tensor_new(t->dtype, 0, NULL, device);
        if (!local[i] || tw__copy_between(local[i], t) < 0)
            return -1;
        local[i]->weak = t->weak;
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

static int dispatch_on(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs,
                       void *ctx, tw_tensor **outs, tw_device device);

int tw_dispatch(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs, void *ctx,
                tw_tensor **outs)
{
    for (int k = 0; k < op->noutputs; k++)
        outs[k] = NULL;
    if (tw__check_arity(op, ninputs) < 0 || tw__check_inputs(op->name, ninputs, inputs) < 0)
        return -1;
    tw__threads_adapt();
    tw_device device;
    bool moved;
    if (check_devices(op, ninputs, inputs, &device, &moved) < 0)
        return -1;
    if (__builtin_expect(!moved, 1))
        return dispatch_on(op, ninputs, inputs, attrs, ctx, outs, device);
    tw_tensor *local[TW_MAX_INPUTS], *args[TW_MAX_INPUTS];
    int rc = move_scalars(ninputs, inputs, device, local);
    for (int i = 0; i < ninputs; i++)
        args[i] = local[i] ? local[i] : inputs[i];
    if (rc == 0)
        rc = dispatch_on(op, ninputs, args, attrs, ctx, outs, device);
    for (int i = 0; i < ninputs; i++)
        tw_tensor_unref(local[i]);
    return rc;
}

static int dispatch_on(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs,
                       void *ctx, tw_tensor **outs, tw_device device)
{
    static const tw_attrs none;
    tw_op_call call = {op, ninputs, inputs, attrs ? attrs : &none, ctx};
    tw_desc descs[TW_MAX_OUTPUTS];
    tw_kernel_fn kernel;
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
        kernel = tw__kernel_for(op, device);
        if (!kernel)
            return -1;
        if (device.kind != TW_DEVICE_CPU) {
            const tw_backend *b = tw__backend(device, op->name);
            if (!b || (b->supports_op && !b->supports_op(device.index, &call)))
                return -1;
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
        if (!deferred && kernel(&call, outs) < 0) {
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
