/* Copies and dtype conversion. */
#include "backend.h"

static int same_shape_infer(const tw_op_call *call, tw_desc *out, tw_dtype dtype)
{
    tw_tensor *x = call->inputs[0];
    out->dtype = dtype;
    out->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        out->shape[d] = x->shape[d];
    return 0;
}

static int copy_infer(const tw_op_call *call, tw_desc *out)
{
    return same_shape_infer(call, out, call->inputs[0]->dtype);
}

static int copy_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                         tw_tensor **gin)
{
    gin[0] = g[0];
    return 0;
}

const tw_op_def tw_op_copy = {
    .name = "copy", .id = TW_OP_ID_copy, .noutputs = 1, .ninputs = 1, .infer = copy_infer,
    .backward = copy_backward,
};

tw_tensor *tw_copy(tw_tensor *t)
{
    return tw_dispatch1(&tw_op_copy, 1, &t, NULL);
}

tw_tensor *tw_contiguous(tw_tensor *t)
{
    if (tw__check_inputs("contiguous", 1, &t) < 0)
        return NULL;
    if (tw_tensor_is_contiguous(t))
        return tw__track(tw_tensor_ref(t));
    return tw_copy(t);
}

tw_tensor *tw_tensor_to(tw_tensor *t, tw_device device)
{
    if (tw__check_inputs("to", 1, &t) < 0)
        return NULL;
    tw_device from = t->storage->device;
    if (from.kind == device.kind && from.index == device.index)
        return tw_copy(t);
    if (!tw__backend(device, "to"))
        return NULL;
    if (tw__tracer && tw__trace_read(t, "tw_tensor_to") < 0)
        return NULL;
    tw_tensor *c = tw__tensor_new(t->dtype, t->ndim, t->shape, device);
    if (c && tw__copy_between(c, t) < 0) {
        tw_tensor_unref(c);
        return NULL;
    }
    return tw__track(c);
}

/* ---- cast ------------------------------------------------------------------- */
static int cast_infer(const tw_op_call *call, tw_desc *out)
{
    return same_shape_infer(call, out, (tw_dtype)call->attrs->i[0]);
}

static int cast_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                         tw_tensor **gin)
{
    if (tw_dtype_is_float(outs[0]->dtype))
        gin[0] = tw_cast(g[0], call->inputs[0]->dtype);
    return 0;
}

const tw_op_def tw_op_cast = {
    .name = "cast", .id = TW_OP_ID_cast, .noutputs = 1, .ninputs = 1, .infer = cast_infer,
    .backward = cast_backward,
};

tw_tensor *tw_cast(tw_tensor *t, tw_dtype dtype)
{
    if (tw__check_inputs("cast", 1, &t) < 0)
        return NULL;
    if ((unsigned)dtype >= TW_DTYPE_COUNT) {
        tw_error_set("cast: invalid dtype %d", (int)dtype);
        return NULL;
    }
    tw_attrs a = {.i = {dtype}, .ni = 1};
    return tw_dispatch1(&tw_op_cast, 1, &t, &a);
}
