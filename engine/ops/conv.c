/* 2-D convolution (NHWC input, HWIO filter, TensorFlow's SAME/VALID rules)
 * and its two gradients as primitive ops, each with a backward rule written
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
 *
 * attrs.i: [0] stride_h, [1] stride_w, [2] dilation_h, [3] dilation_w,
 * [4] padding (tw_padding); the backprop ops add [5..8], the shape of the
 * tensor they produce. */
#include <string.h>

#include "geometry.h"

enum { A_STRIDE_H, A_STRIDE_W, A_DILATION_H, A_DILATION_W, A_PADDING, A_SHAPE, A_COUNT = A_SHAPE + 4 };
_Static_assert((int)A_SHAPE == (int)TW_CONV_ATTR_SHAPE, "geometry.h names the shape attribute");

extern const tw_op_def tw_op_conv2d, tw_op_conv2d_backprop_input, tw_op_conv2d_backprop_filter;

#define SHAPE_STR(ndim, shape, buf) tw_shape_str((ndim), (shape), (buf), sizeof(buf))

/* Output size and padding before, for one spatial axis (TensorFlow's rules).
 * Returns -1 (no message) when VALID padding leaves no room for the window. */
static int spatial_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padding, int64_t *out,
                        int64_t *pad_before)
{
    int64_t effective = (k - 1) * dilation + 1;
    if (padding == TW_PADDING_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + effective - in;
        *pad_before = *out > 0 && total > 0 ? total / 2 : 0;
        return 0;
    }
    if (in < effective)
        return -1;
    *out = (in - effective) / stride + 1;
    *pad_before = 0;
    return 0;
}

/* Check the attributes and the two shapes; fill the kernel geometry. The
 * message names op and both shapes. */
int tw__conv2d_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, twk_conv2d_shape *s)
{
    char si[160], sf[160];
    SHAPE_STR(4, in, si);
    SHAPE_STR(4, fil, sf);
    const int64_t *p = a->i;
    memset(s, 0, sizeof *s);
    if (p[A_STRIDE_H] < 1 || p[A_STRIDE_W] < 1)
        return tw_error_set("%s: strides must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[A_STRIDE_H], (long long)p[A_STRIDE_W], si, sf);
    if (p[A_DILATION_H] < 1 || p[A_DILATION_W] < 1)
        return tw_error_set("%s: dilations must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[A_DILATION_H], (long long)p[A_DILATION_W], si, sf);
    if (p[A_PADDING] != TW_PADDING_VALID && p[A_PADDING] != TW_PADDING_SAME)
        return tw_error_set("%s: padding must be TW_PADDING_VALID or TW_PADDING_SAME, got %lld", op,
                            (long long)p[A_PADDING]);
    if (fil[0] < 1 || fil[1] < 1)
        return tw_error_set("%s: the filter's kernel size must be at least 1x1: input %s, filter %s", op, si, sf);
    if (in[3] != fil[2])
        return tw_error_set("%s: input channels %lld do not match filter in_channels %lld: input %s, filter %s", op,
                            (long long)in[3], (long long)fil[2], si, sf);
    *s = (twk_conv2d_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .in_c = in[3],
        .k_h = fil[0], .k_w = fil[1], .out_c = fil[3],
        .stride_h = p[A_STRIDE_H], .stride_w = p[A_STRIDE_W],
        .dilation_h = p[A_DILATION_H], .dilation_w = p[A_DILATION_W],
    };
    if (spatial_size(s->in_h, s->k_h, s->stride_h, s->dilation_h, p[A_PADDING], &s->out_h, &s->pad_top) < 0 ||
        spatial_size(s->in_w, s->k_w, s->stride_w, s->dilation_w, p[A_PADDING], &s->out_w, &s->pad_left) < 0)
        return tw_error_set("%s: the filter (%lldx%lld with dilation (%lld, %lld)) is larger than the input "
                            "(%lldx%lld) with VALID padding: input %s, filter %s",
                            op, (long long)((s->k_h - 1) * s->dilation_h + 1),
                            (long long)((s->k_w - 1) * s->dilation_w + 1), (long long)s->dilation_h,
                            (long long)s->dilation_w, (long long)s->in_h, (long long)s->in_w, si, sf);
    return 0;
}

/* Rank 4 and float, one dtype for both; names the op and both tensors. */
static int check_pair(const char *op, const char *name_a, const tw_tensor *a, const char *name_b,
                      const tw_tensor *b, const char *layout_a, const char *layout_b)
{
    char sa[160], sb[160];
    SHAPE_STR(a->ndim, a->shape, sa);
    SHAPE_STR(b->ndim, b->shape, sb);
    if (a->ndim != 4)
        return tw_error_set("%s: %s must have rank 4 %s, got shape %s", op, name_a, layout_a, sa);
    if (b->ndim != 4)
        return tw_error_set("%s: %s must have rank 4 %s, got shape %s", op, name_b, layout_b, sb);
    if (!tw_dtype_is_float(a->dtype) || !tw_dtype_is_float(b->dtype))
        return tw_error_set("%s: needs float32 or float64 tensors, got %s %s %s and %s %s %s", op, name_a,
                            tw_dtype_name(a->dtype), sa, name_b, tw_dtype_name(b->dtype), sb);
    if (a->dtype != b->dtype)
        return tw_error_set("%s: dtypes differ: %s %s %s, %s %s %s", op, name_a, tw_dtype_name(a->dtype), sa, name_b,
                            tw_dtype_name(b->dtype), sb);
    return 0;
}

#define NHWC "(batch, height, width, channels)"
#define HWIO "(kernel_h, kernel_w, in_channels, out_channels)"

static int check_shape_attr(const char *op, const tw_attrs *a, const char *what)
{
    if (a->ni < A_COUNT)
        return tw_error_set("%s: missing the %s shape attribute", op, what);
    for (int d = 0; d < 4; d++)
        if (a->i[A_SHAPE + d] < 0)
            return tw_error_set("%s: the %s shape has a negative dimension", op, what);
    return 0;
}

/* The gradient's shape must be the convolution's output. */
static int check_grad_shape(const char *op, const twk_conv2d_shape *s, const tw_tensor *g, const int64_t *in,
                            const int64_t *fil)
{
    int64_t want[4] = {s->batch, s->out_h, s->out_w, s->out_c};
    if (memcmp(g->shape, want, sizeof want) == 0)
        return 0;
    char sg[160], sw[160], si[160], sf[160];
    return tw_error_set("%s: grad_output %s does not match the convolution's output %s for input %s and filter %s",
                        op, SHAPE_STR(4, g->shape, sg), SHAPE_STR(4, want, sw), SHAPE_STR(4, in, si),
                        SHAPE_STR(4, fil, sf));
}

static void set_desc(tw_desc *out, tw_dtype dtype, const int64_t *shape)
{
    out->dtype = dtype;
    out->ndim = 4;
    memcpy(out->shape, shape, 4 * sizeof(int64_t));
}

/* ---- dispatch helpers (the backward rules use them) ---------------------- */

static tw_attrs with_shape(const tw_attrs *conv, const int64_t *shape)
{
    tw_attrs a = {0};
    memcpy(a.i, conv->i, A_SHAPE * sizeof(int64_t));
    memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = A_COUNT;
    return a;
}

static tw_tensor *conv_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *filter)
{
    tw_attrs a = {0};
    memcpy(a.i, conv->i, A_SHAPE * sizeof(int64_t));
    a.ni = A_SHAPE;
    return tw_dispatch1(&tw_op_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}

static tw_tensor *backprop_input_with(const tw_attrs *conv, tw_tensor *filter, tw_tensor *grad,
                                      const int64_t *input_shape)
{
    tw_attrs a = with_shape(conv, input_shape);
    return tw_dispatch1(&tw_op_conv2d_backprop_input, 2, (tw_tensor *const[]){filter, grad}, &a);
}

static tw_tensor *backprop_filter_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *grad,
                                       const int64_t *filter_shape)
{
    tw_attrs a = with_shape(conv, filter_shape);
    return tw_dispatch1(&tw_op_conv2d_backprop_filter, 2, (tw_tensor *const[]){input, grad}, &a);
}

/* ---- conv2d(input, filter) ------------------------------------------------ */

static int conv2d_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_conv2d_shape s;
    if (check_pair("conv2d", "input", x, "filter", f, NHWC, HWIO) < 0 ||
        tw__conv2d_geometry("conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    set_desc(out, x->dtype, (const int64_t[]){s.batch, s.out_h, s.out_w, s.out_c});
    return 0;
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
    .id = TW_OP_ID_conv2d,
    .name = "conv2d", .noutputs = 1, .ninputs = 2, .infer = conv2d_infer,
    .backward = conv2d_backward,
};

/* ---- conv2d_backprop_input(filter, grad_output) -> input's shape ---------- */

static int backprop_input_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "conv2d_backprop_input";
    const tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (check_pair(op, "filter", f, "grad_output", g, HWIO, NHWC) < 0 ||
        check_shape_attr(op, call->attrs, "input") < 0)
        return -1;
    const int64_t *in = call->attrs->i + A_SHAPE;
    if (tw__conv2d_geometry(op, call->attrs, in, f->shape, &s) < 0 || check_grad_shape(op, &s, g, in, f->shape) < 0)
        return -1;
    set_desc(out, f->dtype, in);
    return 0;
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
    .id = TW_OP_ID_conv2d_backprop_input,
    .name = "conv2d_backprop_input", .noutputs = 1, .ninputs = 2, .infer = backprop_input_infer,
    .backward = backprop_input_backward,
};

/* ---- conv2d_backprop_filter(input, grad_output) -> filter's shape --------- */

static int backprop_filter_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "conv2d_backprop_filter";
    const tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_conv2d_shape s;
    if (check_pair(op, "input", x, "grad_output", g, NHWC, NHWC) < 0 ||
        check_shape_attr(op, call->attrs, "filter") < 0)
        return -1;
    const int64_t *fil = call->attrs->i + A_SHAPE;
    if (tw__conv2d_geometry(op, call->attrs, x->shape, fil, &s) < 0 || check_grad_shape(op, &s, g, x->shape, fil) < 0)
        return -1;
    set_desc(out, x->dtype, fil);
    return 0;
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
    .id = TW_OP_ID_conv2d_backprop_filter,
    .name = "conv2d_backprop_filter", .noutputs = 1, .ninputs = 2, .infer = backprop_filter_infer,
    .backward = backprop_filter_backward,
};

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_conv2d_params p = params ? *params : (tw_conv2d_params){0};
    tw_attrs a = {.i = {p.stride_h ? p.stride_h : 1, p.stride_w ? p.stride_w : 1, p.dilation_h ? p.dilation_h : 1,
                        p.dilation_w ? p.dilation_w : 1, (int64_t)p.padding},
                  .ni = A_SHAPE};
    return tw_dispatch1(&tw_op_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}

/* The transposed convolution is this file's input-gradient op run forwards
 * on the input, with the filter as Keras stores it. */
tw_tensor *tw_conv2d_transpose(tw_tensor *input, tw_tensor *filter, int64_t out_h, int64_t out_w,
                               const tw_conv2d_params *params)
{
    tw_conv2d_params p = params ? *params : (tw_conv2d_params){0};
    int64_t shape[4] = {input && input->ndim == 4 ? input->shape[0] : 0, out_h, out_w,
                        filter && filter->ndim == 4 ? filter->shape[2] : 0};
    tw_attrs conv = {.i = {p.stride_h ? p.stride_h : 1, p.stride_w ? p.stride_w : 1, p.dilation_h ? p.dilation_h : 1,
                           p.dilation_w ? p.dilation_w : 1, (int64_t)p.padding}};
    return backprop_input_with(&conv, filter, input, shape);
}
