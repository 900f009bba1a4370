/* Depthwise 2-D convolution (NHWC input, filter (kernel_h, kernel_w,
 * in_channels, multiplier), output channel c * multiplier + m; TensorFlow's
 * depthwise_conv2d with its SAME/VALID rules; attributes, geometry and
 * checks in conv_common.c, shared with conv.c) and its two gradients as
 * primitive ops. As for conv2d (see conv.c), with y = depthwise(x, f):
 *     dx = depthwise_conv2d_backprop_input(f, dy)    (attr: the shape of x)
 *     df = depthwise_conv2d_backprop_filter(x, dy)   (attr: the shape of f)
 * and both are bilinear, so their backward rules are the same three ops:
 * <u, B_I(f, g)> = <depthwise(u, f), g> gives d/dg = depthwise(u, f),
 * d/df = B_F(u, g); <v, B_F(x, g)> = <depthwise(x, v), g> gives
 * d/dg = depthwise(x, v), d/dx = B_I(v, g).
 */
#include <string.h>

#include "cpu/depthwise_kernels.h"
#include "conv_common.h"

extern const tw_op_def tw_op_depthwise_conv2d, tw_op_depthwise_conv2d_backprop_input,
    tw_op_depthwise_conv2d_backprop_filter;

#define HWCM "(kernel_h, kernel_w, in_channels, depth_multiplier)"

/* Check the attributes and the input and filter shapes; fill the kernel's
 * geometry. */
static int geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil,
                    twk_depthwise_shape *s)
{
    tw_conv_window w;
    memset(s, 0, sizeof *s);
    if (tw__conv_window(op, a, in, fil, fil[0] >= 1 && fil[1] >= 1 && fil[3] >= 1,
                        "kernel size and depth multiplier must be at least 1", &w) < 0)
        return -1;
    *s = (twk_depthwise_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3],
        .k_h = fil[0], .k_w = fil[1], .multiplier = fil[3],
        .stride_h = w.stride_h, .stride_w = w.stride_w,
        .dilation_h = w.dilation_h, .dilation_w = w.dilation_w,
        .out_h = w.out_h, .out_w = w.out_w, .pad_top = w.pad_top, .pad_left = w.pad_left,
    };
    return 0;
}

static void output_shape(const twk_depthwise_shape *s, int64_t *shape)
{
    shape[0] = s->batch;
    shape[1] = s->out_h;
    shape[2] = s->out_w;
    shape[3] = s->channels * s->multiplier;
}

static int check_grad_shape(const char *op, const twk_depthwise_shape *s, const tw_tensor *g, const int64_t *in,
                            const int64_t *fil)
{
    int64_t want[4];
    output_shape(s, want);
    return tw__conv_check_grad_shape(op, want, g, in, fil);
}

/* ---- kernels ------------------------------------------------------------- */

typedef enum { RUN_FORWARD, RUN_INPUT, RUN_FILTER } run_kind;

static int run(run_kind kind, const twk_depthwise_shape *s, tw_tensor *a, tw_tensor *b, tw_tensor *out)
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

/* ---- dispatch helpers (the backward rules use them) ---------------------- */

static tw_tensor *forward_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *filter)
{
    return tw__conv_dispatch(&tw_op_depthwise_conv2d, conv, input, filter, NULL);
}

/* ---- depthwise_conv2d(input, filter) -------------------------------------- */

static int forward_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__conv_check_pair("depthwise_conv2d", "input", x, "filter", f, TW_CONV_NHWC, HWCM) < 0 ||
        geometry("depthwise_conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    int64_t shape[4];
    output_shape(&s, shape);
    tw__conv_set_desc(out, x->dtype, shape);
    return 0;
}

static int forward_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_depthwise_shape s;
    if (geometry("depthwise_conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    return run(RUN_FORWARD, &s, x, f, outs[0]);
}

static int forward_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    if (needs[0])
        gin[0] = tw__conv_dispatch(&tw_op_depthwise_conv2d_backprop_input, call->attrs, f, g[0], x->shape);
    if (needs[1])
        gin[1] = tw__conv_dispatch(&tw_op_depthwise_conv2d_backprop_filter, call->attrs, x, g[0], f->shape);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d = {
    .name = "depthwise_conv2d", .noutputs = 1, .ninputs = 2, .infer = forward_infer,
    .kernel = {[TW_DEVICE_CPU] = forward_kernel}, .backward = forward_backward,
};

/* ---- depthwise_conv2d_backprop_input(filter, grad_output) -> input's shape - */

static int input_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "depthwise_conv2d_backprop_input";
    const tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__conv_check_pair(op, "filter", f, "grad_output", g, HWCM, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "input") < 0)
        return -1;
    const int64_t *in = call->attrs->i + TW_CONV_SHAPE;
    if (geometry(op, call->attrs, in, f->shape, &s) < 0 || check_grad_shape(op, &s, g, in, f->shape) < 0)
        return -1;
    tw__conv_set_desc(out, f->dtype, in);
    return 0;
}

static int input_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (geometry("depthwise_conv2d_backprop_input", call->attrs, call->attrs->i + TW_CONV_SHAPE, f->shape, &s) < 0)
        return -1;
    return run(RUN_INPUT, &s, f, g, outs[0]);
}

static int input_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                          tw_tensor **gin)
{
    tw_tensor *f = call->inputs[0], *grad = call->inputs[1], *u = g[0];
    if (needs[0])
        gin[0] = tw__conv_dispatch(&tw_op_depthwise_conv2d_backprop_filter, call->attrs, u, grad, f->shape);
    if (needs[1])
        gin[1] = forward_with(call->attrs, u, f);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d_backprop_input = {
    .name = "depthwise_conv2d_backprop_input", .noutputs = 1, .ninputs = 2, .infer = input_infer,
    .kernel = {[TW_DEVICE_CPU] = input_kernel}, .backward = input_backward,
};

/* ---- depthwise_conv2d_backprop_filter(input, grad_output) -> filter's shape */

static int filter_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "depthwise_conv2d_backprop_filter";
    const tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (tw__conv_check_pair(op, "input", x, "grad_output", g, TW_CONV_NHWC, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "filter") < 0)
        return -1;
    const int64_t *fil = call->attrs->i + TW_CONV_SHAPE;
    if (geometry(op, call->attrs, x->shape, fil, &s) < 0 || check_grad_shape(op, &s, g, x->shape, fil) < 0)
        return -1;
    tw__conv_set_desc(out, x->dtype, fil);
    return 0;
}

static int filter_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (geometry("depthwise_conv2d_backprop_filter", call->attrs, x->shape, call->attrs->i + TW_CONV_SHAPE, &s) < 0)
        return -1;
    return run(RUN_FILTER, &s, x, g, outs[0]);
}

static int filter_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *grad = call->inputs[1], *v = g[0];
    if (needs[0])
        gin[0] = tw__conv_dispatch(&tw_op_depthwise_conv2d_backprop_input, call->attrs, v, grad, x->shape);
    if (needs[1])
        gin[1] = forward_with(call->attrs, x, v);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d_backprop_filter = {
    .name = "depthwise_conv2d_backprop_filter", .noutputs = 1, .ninputs = 2, .infer = filter_infer,
    .kernel = {[TW_DEVICE_CPU] = filter_kernel}, .backward = filter_backward,
};

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_depthwise_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_attrs a = tw__conv_attrs(params);
    return tw_dispatch1(&tw_op_depthwise_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}
