/* 2-D convolution (NHWC input, HWIO filter, TensorFlow's SAME/VALID rules;
 * the attributes, geometry and checks it shares with depthwise.c are in
 * conv_common.c) and its two gradients as primitive ops, each with a backward rule written
 * with these same three ops, so gradients of any order work.
 *
 * With y = conv2d(x, f), the gradients are
 *     dx = conv2d_backprop_input(f, dy)    (attr: the shape of x)
 *     df = conv2d_backprop_filter(x, dy)   (attr: the shape of f)
 * Both are bilinear. Writing B_I(f, g) for the first, its definition is
 * <u, B_I(f, g)> = <conv2d(u, f), g> for any u shaped like x, so for an
 * incoming gradient u of B_I's output:
 *     d/dg = conv2d(u, f)          d/df = conv2d_backprop_filter(u, g)
 * and likewise <v, B_F(x, g)> = <conv2d(x, v), g> gives, for v shaped like f:
 *     d/dg = conv2d(x, v)          d/dx = conv2d_backprop_input(v, g).
 */
#include <string.h>

#include "cpu/conv_kernels.h"
#include "cpu/cpu_kernels.h"
#include "conv_common.h"

extern const tw_op_def tw_op_conv2d, tw_op_conv2d_backprop_input, tw_op_conv2d_backprop_filter;

#define HWIO "(kernel_h, kernel_w, in_channels, out_channels)"

/* Check the attributes and the two shapes; fill the kernel geometry. */
static int geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, twk_conv2d_shape *s)
{
    tw_conv_window w;
    memset(s, 0, sizeof *s);
    if (tw__conv_window(op, a, in, fil, fil[0] >= 1 && fil[1] >= 1, "kernel size must be at least 1x1", &w) < 0)
        return -1;
    *s = (twk_conv2d_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .in_c = in[3],
        .k_h = fil[0], .k_w = fil[1], .out_c = fil[3],
        .stride_h = w.stride_h, .stride_w = w.stride_w,
        .dilation_h = w.dilation_h, .dilation_w = w.dilation_w,
        .out_h = w.out_h, .out_w = w.out_w, .pad_top = w.pad_top, .pad_left = w.pad_left,
    };
    return 0;
}

static int check_grad_shape(const char *op, const twk_conv2d_shape *s, const tw_tensor *g, const int64_t *in,
                            const int64_t *fil)
{
    return tw__conv_check_grad_shape(op, (const int64_t[]){s->batch, s->out_h, s->out_w, s->out_c}, g, in, fil);
}

/* ---- kernels ------------------------------------------------------------- */

typedef enum { RUN_FORWARD, RUN_INPUT, RUN_FILTER } run_kind;

static int run(const char *op, run_kind kind, const twk_conv2d_shape *s, tw_tensor *a, tw_tensor *b, tw_tensor *out)
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

/* ---- dispatch helpers (the backward rules use them) ---------------------- */

static tw_tensor *conv_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *filter)
{
    return tw__conv_dispatch(&tw_op_conv2d, conv, input, filter, NULL);
}

static tw_tensor *backprop_input_with(const tw_attrs *conv, tw_tensor *filter, tw_tensor *grad,
                                      const int64_t *input_shape)
{
    return tw__conv_dispatch(&tw_op_conv2d_backprop_input, conv, filter, grad, input_shape);
}

static tw_tensor *backprop_filter_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *grad,
                                       const int64_t *filter_shape)
{
    return tw__conv_dispatch(&tw_op_conv2d_backprop_filter, conv, input, grad, filter_shape);
}

/* ---- conv2d(input, filter) ------------------------------------------------ */

static int conv2d_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv_check_pair("conv2d", "input", x, "filter", f, TW_CONV_NHWC, HWIO) < 0 ||
        geometry("conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    tw__conv_set_desc(out, x->dtype, (const int64_t[]){s.batch, s.out_h, s.out_w, s.out_c});
    return 0;
}

static int conv2d_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_conv2d_shape s;
    if (geometry("conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    return run("conv2d", RUN_FORWARD, &s, x, f, outs[0]);
}

static int conv2d_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    if (needs[0])
        gin[0] = backprop_input_with(call->attrs, f, g[0], x->shape);
    if (needs[1])
        gin[1] = backprop_filter_with(call->attrs, x, g[0], f->shape);
    return 0;
}

const tw_op_def tw_op_conv2d = {
    .name = "conv2d", .noutputs = 1, .ninputs = 2, .infer = conv2d_infer,
    .kernel = {[TW_DEVICE_CPU] = conv2d_kernel}, .backward = conv2d_backward,
};

/* ---- conv2d_backprop_input(filter, grad_output) -> input's shape ---------- */

static int backprop_input_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "conv2d_backprop_input";
    const tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv_check_pair(op, "filter", f, "grad_output", g, HWIO, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "input") < 0)
        return -1;
    const int64_t *in = call->attrs->i + TW_CONV_SHAPE;
    if (geometry(op, call->attrs, in, f->shape, &s) < 0 || check_grad_shape(op, &s, g, in, f->shape) < 0)
        return -1;
    tw__conv_set_desc(out, f->dtype, in);
    return 0;
}

static int backprop_input_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (geometry("conv2d_backprop_input", call->attrs, call->attrs->i + TW_CONV_SHAPE, f->shape, &s) < 0)
        return -1;
    return run("conv2d_backprop_input", RUN_INPUT, &s, f, g, outs[0]);
}

static int backprop_input_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g,
                                   const bool *needs, tw_tensor **gin)
{
    tw_tensor *f = call->inputs[0], *grad = call->inputs[1], *u = g[0];
    if (needs[0])
        gin[0] = backprop_filter_with(call->attrs, u, grad, f->shape);
    if (needs[1])
        gin[1] = conv_with(call->attrs, u, f);
    return 0;
}

const tw_op_def tw_op_conv2d_backprop_input = {
    .name = "conv2d_backprop_input", .noutputs = 1, .ninputs = 2, .infer = backprop_input_infer,
    .kernel = {[TW_DEVICE_CPU] = backprop_input_kernel}, .backward = backprop_input_backward,
};

/* ---- conv2d_backprop_filter(input, grad_output) -> filter's shape --------- */

static int backprop_filter_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "conv2d_backprop_filter";
    const tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (tw__conv_check_pair(op, "input", x, "grad_output", g, TW_CONV_NHWC, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "filter") < 0)
        return -1;
    const int64_t *fil = call->attrs->i + TW_CONV_SHAPE;
    if (geometry(op, call->attrs, x->shape, fil, &s) < 0 || check_grad_shape(op, &s, g, x->shape, fil) < 0)
        return -1;
    tw__conv_set_desc(out, x->dtype, fil);
    return 0;
}

static int backprop_filter_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (geometry("conv2d_backprop_filter", call->attrs, x->shape, call->attrs->i + TW_CONV_SHAPE, &s) < 0)
        return -1;
    return run("conv2d_backprop_filter", RUN_FILTER, &s, x, g, outs[0]);
}

static int backprop_filter_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g,
                                    const bool *needs, tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *grad = call->inputs[1], *v = g[0];
    if (needs[0])
        gin[0] = backprop_input_with(call->attrs, v, grad, x->shape);
    if (needs[1])
        gin[1] = conv_with(call->attrs, x, v);
    return 0;
}

const tw_op_def tw_op_conv2d_backprop_filter = {
    .name = "conv2d_backprop_filter", .noutputs = 1, .ninputs = 2, .infer = backprop_filter_infer,
    .kernel = {[TW_DEVICE_CPU] = backprop_filter_kernel}, .backward = backprop_filter_backward,
};

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_attrs a = tw__conv_attrs(params);
    return tw_dispatch1(&tw_op_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}

/* The transposed convolution is this file's input-gradient op run forwards
 * on the input, with the filter as Keras stores it. */
tw_tensor *tw_conv2d_transpose(tw_tensor *input, tw_tensor *filter, int64_t out_h, int64_t out_w,
                               const tw_conv2d_params *params)
{
    int64_t shape[4] = {input && input->ndim == 4 ? input->shape[0] : 0, out_h, out_w,
                        filter && filter->ndim == 4 ? filter->shape[2] : 0};
    tw_attrs conv = tw__conv_attrs(params);
    return backprop_input_with(&conv, filter, input, shape);
}
