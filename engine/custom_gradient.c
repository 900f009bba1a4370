/* Custom gradients (tf.custom_gradient): the forward function runs with
 * recording paused; its result is handed out as a view recorded as one
 * "custom" op whose backward rule is the user's function. */
#include <stdlib.h>

#include "internal.h"

struct tw_custom_ctx {
    atomic_int refcount;
    tw_custom_backward_fn backward;
    void *user_data;
    int ninputs, nsaved, saved_capacity;
    tw_tensor **inputs;
    tw_tensor **saved;
    tw_tensor *result; /* only while the custom op is dispatched */
};

static void ctx_ref(void *p)
{
    tw_custom_ctx *ctx = p;
    atomic_fetch_add(&ctx->refcount, 1);
}

static void ctx_unref(void *p)
{
    tw_custom_ctx *ctx = p;
    if (!ctx || atomic_fetch_sub(&ctx->refcount, 1) != 1)
        return;
    for (int i = 0; i < ctx->ninputs; i++)
        tw_tensor_unref(ctx->inputs[i]);
    for (int i = 0; i < ctx->nsaved; i++)
        tw_tensor_unref(ctx->saved[i]);
    tw_tensor_unref(ctx->result);
    free(ctx->inputs);
    free(ctx->saved);
    free(ctx);
}

void tw_custom_save(tw_custom_ctx *ctx, tw_tensor *t)
{
    if (!t)
        return;
    if (ctx->nsaved == ctx->saved_capacity) {
        int cap = ctx->saved_capacity ? ctx->saved_capacity * 2 : 4;
        tw_tensor **saved = realloc(ctx->saved, sizeof(tw_tensor *) * (size_t)cap);
        if (!saved)
            return;
        ctx->saved = saved;
        ctx->saved_capacity = cap;
    }
    ctx->saved[ctx->nsaved++] = tw_tensor_ref(t);
}

tw_tensor *tw_custom_saved(tw_custom_ctx *ctx, int i)
{
    return i >= 0 && i < ctx->nsaved ? ctx->saved[i] : NULL;
}

int tw_custom_ninputs(tw_custom_ctx *ctx)
{
    return ctx->ninputs;
}

tw_tensor *tw_custom_input(tw_custom_ctx *ctx, int i)
{
    return i >= 0 && i < ctx->ninputs ? ctx->inputs[i] : NULL;
}

static int custom_infer(const tw_op_call *call, tw_desc *out)
{
    tw_custom_ctx *ctx = call->ctx;
    out->dtype = ctx->result->dtype;
    out->ndim = ctx->result->ndim;
    for (int d = 0; d < out->ndim; d++)
        out->shape[d] = ctx->result->shape[d];
    return 0;
}

static tw_tensor *custom_view(const tw_op_call *call, const tw_desc *out)
{
    tw_custom_ctx *ctx = call->ctx;
    tw_tensor *r = ctx->result;
    return tw__tensor_view(r, r->ndim, r->shape, r->strides, r->offset);
}

static int custom_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *grad_outs,
                           const bool *needs, tw_tensor **grad_ins)
{
    tw_custom_ctx *ctx = call->ctx;
    if (ctx->backward(ctx, grad_outs[0], grad_ins, ctx->user_data) < 0) {
        if (!tw_error_pending())
            tw_error_set("custom_gradient: the backward function failed without a message");
        return -1;
    }
    for (int i = 0; i < call->ninputs; i++) {
        if (!needs[i])
            grad_ins[i] = NULL; /* the user may fill more than asked */
        else if (grad_ins[i] && grad_ins[i]->dtype != call->inputs[i]->dtype)
            return tw_error_set("custom_gradient: gradient %d is %s but its input is %s", i,
                                tw_dtype_name(grad_ins[i]->dtype), tw_dtype_name(call->inputs[i]->dtype));
    }
    return 0;
}

const tw_op_def tw_op_custom = {
    .id = TW_OP_ID_custom,
    .name = "custom",
    .noutputs = 1, .ninputs = TW_OP_VARIADIC,
    .infer = custom_infer,
    .view = custom_view,
    .backward = custom_backward,
    .ctx_ref = ctx_ref,
    .ctx_unref = ctx_unref,
};

static tw_custom_ctx *ctx_new(int ninputs, tw_tensor *const *inputs, tw_custom_backward_fn backward, void *user_data)
{
    tw_custom_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx)
        ctx->inputs = calloc((size_t)(ninputs ? ninputs : 1), sizeof(tw_tensor *));
    if (!ctx || !ctx->inputs) {
        free(ctx);
        tw_error_set("custom_gradient: out of memory");
        return NULL;
    }
    atomic_init(&ctx->refcount, 1);
    ctx->backward = backward;
    ctx->user_data = user_data;
    ctx->ninputs = ninputs;
    for (int i = 0; i < ninputs; i++)
        ctx->inputs[i] = tw_tensor_ref(inputs[i]);
    return ctx;
}

tw_tensor *tw_custom_gradient(int ninputs, tw_tensor *const *inputs, tw_custom_forward_fn forward,
                              tw_custom_backward_fn backward, void *user_data)
{
    if (tw__check_inputs("custom_gradient", ninputs, inputs) < 0)
        return NULL;
    if (!forward || !backward) {
        tw_error_set("custom_gradient: forward and backward functions are required");
        return NULL;
    }
    tw_custom_ctx *ctx = ctx_new(ninputs, inputs, backward, user_data);
    if (!ctx)
        return NULL;
    tw_tape_pause();
    tw_scope_begin();
    ctx->result = tw_tensor_ref(forward(ctx, inputs, user_data));
    tw_scope_end();
    tw_tape_resume();
    tw_tensor *out = NULL;
    if (!ctx->result) {
        if (!tw_error_pending())
            tw_error_set("custom_gradient: the forward function returned NULL");
    } else {
        tw_dispatch(&tw_op_custom, ninputs, inputs, NULL, ctx, &out);
        tw_tensor_unref(ctx->result);
        ctx->result = NULL;
    }
    ctx_unref(ctx);
    return out;
}
