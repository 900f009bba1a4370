/* Depthwise 2-D convolution (NHWC input, filter (kernel_h, kernel_w,
 * in_channels, multiplier), output channel c * multiplier + m; TensorFlow's
 * depthwise_conv2d with its SAME/VALID rules) and its two gradients as
 * primitive ops. As for conv2d (see conv.c), with y = depthwise(x, f):
 *     dx = depthwise_conv2d_backprop_input(f, dy)    (attr: the shape of x)
 *     df = depthwise_conv2d_backprop_filter(x, dy)   (attr: the shape of f)
 * and both are bilinear, so their backward rules are the same three ops:
 * <u, B_I(f, g)> = <depthwise(u, f), g> gives d/dg = depthwise(u, f),
 * d/df = B_F(u, g); <v, B_F(x, g)> = <depthwise(x, v), g> gives
 * d/dg = depthwise(x, v), d/dx = B_I(v, g).
 *
 * attrs.i: [0] stride_h, [1] stride_w, [2] dilation_h, [3] dilation_w,
 * [4] padding (tw_padding); the backprop ops add [5..8], the shape of the
 * tensor they produce. */
#include <string.h>

#include "geometry.h"

enum { A_STRIDE_H, A_STRIDE_W, A_DILATION_H, A_DILATION_W, A_PADDING, A_SHAPE, A_COUNT = A_SHAPE + 4 };
_Static_assert((int)A_SHAPE == (int)TW_CONV_ATTR_SHAPE, "geometry.h names the shape attribute");

extern const tw_op_def tw_op_depthwise_conv2d, tw_op_depthwise_conv2d_backprop_input,
    tw_op_depthwise_conv2d_backprop_filter;

#define SHAPE_STR(ndim, shape, buf) tw_shape_str((ndim), (shape), (buf), sizeof(buf))
#define NHWC "(batch, height, width, channels)"
#define HWCM "(kernel_h, kernel_w, in_channels, depth_multiplier)"

/* Output size and padding before along one axis, TensorFlow's rules; -1
 * when VALID padding leaves no room for the window. */
static int spatial_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padding, int64_t *out,
                        int64_t *pad_before)
{
    int64_t effective = (k - 1) * dilation + 1;
    *pad_before = 0;
    if (padding == TW_PADDING_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + effective - in;
        *pad_before = *out > 0 && total > 0 ? total / 2 : 0;
        return 0;
    }
    if (in < effective)
        return -1;
    *out = (in - effective) / stride + 1;
    return 0;
}

/* Check the attributes and the input and filter shapes; fill the kernel's
 * geometry. Messages name the op and both shapes. */
int tw__depthwise_geometry(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil,
                    twk_depthwise_shape *s)
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
    if (fil[0] < 1 || fil[1] < 1 || fil[3] < 1)
        return tw_error_set("%s: the filter's kernel size and depth multiplier must be at least 1: input %s, "
                            "filter %s",
                            op, si, sf);
    if (in[3] != fil[2])
        return tw_error_set("%s: input channels %lld do not match filter in_channels %lld: input %s, filter %s", op,
                            (long long)in[3], (long long)fil[2], si, sf);
    *s = (twk_depthwise_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3],
        .k_h = fil[0], .k_w = fil[1], .multiplier = fil[3],
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

/* Rank 4, float, one dtype for both; names the op and both tensors. */
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

static int check_shape_attr(const char *op, const tw_attrs *a, const char *what)
{
    if (a->ni < A_COUNT)
        return tw_error_set("%s: missing the %s shape attribute", op, what);
    for (int d = 0; d < 4; d++)
        if (a->i[A_SHAPE + d] < 0)
            return tw_error_set("%s: the %s shape has a negative dimension", op, what);
    return 0;
}

static void output_shape(const twk_depthwise_shape *s, int64_t *shape)
{
    shape[0] = s->batch;
    shape[1] = s->out_h;
    shape[2] = s->out_w;
    shape[3] = s->channels * s->multiplier;
}

/* The gradient's shape must be the convolution's output. */
static int check_grad_shape(const char *op, const twk_depthwise_shape *s, const tw_tensor *g, const int64_t *in,
                            const int64_t *fil)
{
    int64_t want[4];
    output_shape(s, want);
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

static tw_tensor *forward_with(const tw_attrs *conv, tw_tensor *input, tw_tensor *filter)
{
    tw_attrs a = {.ni = A_SHAPE};
    memcpy(a.i, conv->i, A_SHAPE * sizeof(int64_t));
    return tw_dispatch1(&tw_op_depthwise_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}

static tw_tensor *backprop_with(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *grad,
                                const int64_t *shape)
{
    tw_attrs attrs = {.ni = A_COUNT};
    memcpy(attrs.i, conv->i, A_SHAPE * sizeof(int64_t));
    memcpy(attrs.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    return tw_dispatch1(op, 2, (tw_tensor *const[]){a, grad}, &attrs);
}

/* ---- depthwise_conv2d(input, filter) -------------------------------------- */

static int forward_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    twk_depthwise_shape s;
    if (check_pair("depthwise_conv2d", "input", x, "filter", f, NHWC, HWCM) < 0 ||
        tw__depthwise_geometry("depthwise_conv2d", call->attrs, x->shape, f->shape, &s) < 0)
        return -1;
    int64_t shape[4];
    output_shape(&s, shape);
    set_desc(out, x->dtype, shape);
    return 0;
}

static int forward_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    if (needs[0])
        gin[0] = backprop_with(&tw_op_depthwise_conv2d_backprop_input, call->attrs, f, g[0], x->shape);
    if (needs[1])
        gin[1] = backprop_with(&tw_op_depthwise_conv2d_backprop_filter, call->attrs, x, g[0], f->shape);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d = {
    .id = TW_OP_ID_depthwise_conv2d,
    .name = "depthwise_conv2d", .noutputs = 1, .ninputs = 2, .infer = forward_infer,
    .backward = forward_backward,
};

/* ---- depthwise_conv2d_backprop_input(filter, grad_output) -> input's shape - */

static int input_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "depthwise_conv2d_backprop_input";
    const tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (check_pair(op, "filter", f, "grad_output", g, HWCM, NHWC) < 0 ||
        check_shape_attr(op, call->attrs, "input") < 0)
        return -1;
    const int64_t *in = call->attrs->i + A_SHAPE;
    if (tw__depthwise_geometry(op, call->attrs, in, f->shape, &s) < 0 || check_grad_shape(op, &s, g, in, f->shape) < 0)
        return -1;
    set_desc(out, f->dtype, in);
    return 0;
}

static int input_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                          tw_tensor **gin)
{
    tw_tensor *f = call->inputs[0], *grad = call->inputs[1], *u = g[0];
    if (needs[0])
        gin[0] = backprop_with(&tw_op_depthwise_conv2d_backprop_filter, call->attrs, u, grad, f->shape);
    if (needs[1])
        gin[1] = forward_with(call->attrs, u, f);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d_backprop_input = {
    .id = TW_OP_ID_depthwise_conv2d_backprop_input,
    .name = "depthwise_conv2d_backprop_input", .noutputs = 1, .ninputs = 2, .infer = input_infer,
    .backward = input_backward,
};

/* ---- depthwise_conv2d_backprop_filter(input, grad_output) -> filter's shape */

static int filter_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "depthwise_conv2d_backprop_filter";
    const tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    twk_depthwise_shape s;
    if (check_pair(op, "input", x, "grad_output", g, NHWC, NHWC) < 0 ||
        check_shape_attr(op, call->attrs, "filter") < 0)
        return -1;
    const int64_t *fil = call->attrs->i + A_SHAPE;
    if (tw__depthwise_geometry(op, call->attrs, x->shape, fil, &s) < 0 || check_grad_shape(op, &s, g, x->shape, fil) < 0)
        return -1;
    set_desc(out, x->dtype, fil);
    return 0;
}

static int filter_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *x = call->inputs[0], *grad = call->inputs[1], *v = g[0];
    if (needs[0])
        gin[0] = backprop_with(&tw_op_depthwise_conv2d_backprop_input, call->attrs, v, grad, x->shape);
    if (needs[1])
        gin[1] = forward_with(call->attrs, x, v);
    return 0;
}

const tw_op_def tw_op_depthwise_conv2d_backprop_filter = {
    .id = TW_OP_ID_depthwise_conv2d_backprop_filter,
    .name = "depthwise_conv2d_backprop_filter", .noutputs = 1, .ninputs = 2, .infer = filter_infer,
    .backward = filter_backward,
};

/* ---- public ---------------------------------------------------------------- */

tw_tensor *tw_depthwise_conv2d(tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_conv2d_params p = params ? *params : (tw_conv2d_params){0};
    tw_attrs a = {.i = {p.stride_h ? p.stride_h : 1, p.stride_w ? p.stride_w : 1, p.dilation_h ? p.dilation_h : 1,
                        p.dilation_w ? p.dilation_w : 1, (int64_t)p.padding},
                  .ni = A_SHAPE};
    return tw_dispatch1(&tw_op_depthwise_conv2d, 2, (tw_tensor *const[]){input, filter}, &a);
}
