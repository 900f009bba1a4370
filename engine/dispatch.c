/* The one path every op takes: check inputs, infer the result, allocate,
 * run the device's kernel (unless a shape-only trace skips it), report to the tracer when a function is being
 * traced, record on the active tapes, hand results to the open scope. */
#include <string.h>

#include "backend.h"

static bool same_device(tw_device a, tw_device b) { return a.kind == b.kind && a.index == b.index; }

/* The inputs are not all on one device (the rare path): the op runs on the
 * device of its first input of rank 1 or more, and a 0-d input (a scalar
 * constant) on another device joins it, as Python numbers do in TensorFlow:
 * copies go into local[] (NULL where the input stays). Any other mix is an
 * error naming both devices. */
static int join_devices(const tw_op_def *op, int n, tw_tensor *const *inputs, tw_device *device, tw_tensor **local)
{
    int first = 0;
    while (first < n - 1 && inputs[first]->ndim == 0)
        first++;
    *device = inputs[first]->storage->device;
    for (int i = 0; i < n; i++) {
        tw_device d = inputs[i]->storage->device;
        if (same_device(d, *device) || (inputs[i]->ndim == 0 && n <= TW_MAX_INPUTS))
            continue;
        char a[32], b[32];
        return tw_error_set("%s: inputs are on different devices (%s and %s); copy with tw_tensor_to()", op->name,
                            tw_device_name(*device, a, sizeof a), tw_device_name(d, b, sizeof b));
    }
    for (int i = 0; i < n; i++) {
        tw_tensor *t = inputs[i];
        local[i] = NULL;
        if (same_device(t->storage->device, *device))
            continue;
        local[i] = tw__tensor_new(t->dtype, 0, NULL, *device);
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

/* Infer, allocate on device, run the kernel (or build the view), report
 * to the tracer and tapes, hand to the scope. Inlined: the eager path. */
static inline __attribute__((always_inline)) int run(const tw_op_def *op, int ninputs, tw_tensor *const *inputs,
                                                     const tw_attrs *attrs, void *ctx, tw_tensor **outs,
                                                     tw_device device)
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
            outs[k] = tw__tensor_new_checked(descs[k].dtype, descs[k].ndim, descs[k].shape, device);
            if (!outs[k]) {
                release_all(outs, k);
                return -1;
            }
        }
        /* A trace records a variable assignment for the graph to perform
         * (tw/function.h); running it now too would apply it twice. A
         * shape-only trace needs no values computed from its inputs. */
        bool deferred = tw__tracer && ((op->flags & TW_OP_STATEFUL) || tw__trace_skips(&call));
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

/* Inputs on several devices: join the scalars, then run (not inlined: rare). */
static __attribute__((noinline)) int run_joined(const tw_op_def *op, int ninputs, tw_tensor *const *inputs,
                                                const tw_attrs *attrs, void *ctx, tw_tensor **outs)
{
    tw_device device;
    tw_tensor *local[TW_MAX_INPUTS] = {0}, *args[TW_MAX_INPUTS];
    int rc = join_devices(op, ninputs, inputs, &device, local);
    for (int i = 0; rc == 0 && i < ninputs; i++)
        args[i] = local[i] ? local[i] : inputs[i];
    if (rc == 0)
        rc = run(op, ninputs, args, attrs, ctx, outs, device);
    for (int i = 0; i < ninputs && i < TW_MAX_INPUTS; i++)
        tw_tensor_unref(local[i]);
    return rc;
}

int tw_dispatch(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs, void *ctx,
                tw_tensor **outs)
{
    int rc;
    if (tw__check_arity(op, ninputs) < 0 || tw__check_inputs(op->name, ninputs, inputs) < 0) {
        rc = -1;
    } else {
        tw__threads_adapt_op();
        tw_device device = ninputs > 0 ? inputs[0]->storage->device : tw_default_device();
        bool one_device = true;
        for (int i = 1; i < ninputs; i++)
            one_device &= same_device(inputs[i]->storage->device, device);
        rc = __builtin_expect(one_device, 1) ? run(op, ninputs, inputs, attrs, ctx, outs, device)
                                             : run_joined(op, ninputs, inputs, attrs, ctx, outs);
    }
    /* On success run() set every output. A failure leaves no reference in
     * outs (release_all), so clearing them here, not before each op, spares
     * the eager path a memset call. */
    if (rc < 0)
        for (int k = 0; k < op->noutputs; k++)
            outs[k] = NULL;
    return rc;
}

tw_tensor *tw_dispatch1(const tw_op_def *op, int ninputs, tw_tensor *const *inputs, const tw_attrs *attrs)
{
    tw_tensor *out;
    return tw_dispatch(op, ninputs, inputs, attrs, NULL, &out) < 0 ? NULL : out;
}
