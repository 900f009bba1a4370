/* The attributes, geometry, checks, infer functions and backward rules of
 * the convolution families (conv_common.h).
 *
 * With y = forward(x, f), the gradients are
 *     dx = backprop_input(f, dy)    (attr: the shape of x)
 *     df = backprop_filter(x, dy)   (attr: the shape of f)
 * Both are bilinear. Writing B_I(f, g) for the first, its definition is
 * <u, B_I(f, g)> = <forward(u, f), g> for any u shaped like x, so for an
 * incoming gradient u of B_I's output:
 *     d/dg = forward(u, f)          d/df = backprop_filter(u, g)
 * and likewise <v, B_F(x, g)> = <forward(x, v), g> gives, for v shaped
 * like f:
 *     d/dg = forward(x, v)          d/dx = backprop_input(v, g).
 * So each op's backward rule is written with the same three ops, and
 * gradients of any order work. */
#include "conv_common.h"

#include <string.h>

enum { A_STRIDE_H, A_STRIDE_W, A_DILATION_H, A_DILATION_W, A_PADDING, A_SHAPE, A_COUNT = A_SHAPE + 4 };
_Static_assert((int)A_SHAPE == (int)TW_CONV_ATTR_SHAPE, "geometry.h names the shape attribute");

#define SHAPE_STR(ndim, shape, buf) tw_shape_str((ndim), (shape), (buf), sizeof(buf))
#define NHWC "(batch, height, width, channels)"

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

int tw__conv_window(const tw_conv_family *fam, const char *op, const tw_attrs *a, const int64_t *in,
                    const int64_t *fil, tw_conv_window *w)
{
    char si[160], sf[160];
    SHAPE_STR(4, in, si);
    SHAPE_STR(4, fil, sf);
    const int64_t *p = a->i;
    memset(w, 0, sizeof *w);
    if (p[A_STRIDE_H] < 1 || p[A_STRIDE_W] < 1)
        return tw_error_set("%s: strides must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[A_STRIDE_H], (long long)p[A_STRIDE_W], si, sf);
    if (p[A_DILATION_H] < 1 || p[A_DILATION_W] < 1)
        return tw_error_set("%s: dilations must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[A_DILATION_H], (long long)p[A_DILATION_W], si, sf);
    if (p[A_PADDING] != TW_PADDING_VALID && p[A_PADDING] != TW_PADDING_SAME)
        return tw_error_set("%s: padding must be TW_PADDING_VALID or TW_PADDING_SAME, got %lld", op,
                            (long long)p[A_PADDING]);
    if (!fam->depthwise && (fil[0] < 1 || fil[1] < 1))
        return tw_error_set("%s: the filter's kernel size must be at least 1x1: input %s, filter %s", op, si, sf);
    if (fam->depthwise && (fil[0] < 1 || fil[1] < 1 || fil[3] < 1))
        return tw_error_set("%s: the filter's kernel size and depth multiplier must be at least 1: input %s, "
                            "filter %s",
                            op, si, sf);
    if (in[3] != fil[2])
        return tw_error_set("%s: input channels %lld do not match filter in_channels %lld: input %s, filter %s", op,
                            (long long)in[3], (long long)fil[2], si, sf);
    *w = (tw_conv_window){
        .out = {in[0], 0, 0, fam->depthwise ? in[3] * fil[3] : fil[3]},
        .stride_h = p[A_STRIDE_H], .stride_w = p[A_STRIDE_W],
        .dilation_h = p[A_DILATION_H], .dilation_w = p[A_DILATION_W],
    };
    if (spatial_size(in[1], fil[0], w->stride_h, w->dilation_h, p[A_PADDING], &w->out[1], &w->pad_top) < 0 ||
        spatial_size(in[2], fil[1], w->stride_w, w->dilation_w, p[A_PADDING], &w->out[2], &w->pad_left) < 0)
        return tw_error_set("%s: the filter (%lldx%lld with dilation (%lld, %lld)) is larger than the input "
                            "(%lldx%lld) with VALID padding: input %s, filter %s",
                            op, (long long)((fil[0] - 1) * w->dilation_h + 1),
                            (long long)((fil[1] - 1) * w->dilation_w + 1), (long long)w->dilation_h,
                            (long long)w->dilation_w, (long long)in[1], (long long)in[2], si, sf);
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

static int check_shape_attr(const char *op, const tw_attrs *a, const char *what)
{
    if (a->ni < A_COUNT)
        return tw_error_set("%s: missing the %s shape attribute", op, what);
    for (int d = 0; d < 4; d++)
        if (a->i[A_SHAPE + d] < 0)
            return tw_error_set("%s: the %s shape has a negative dimension", op, what);
    return 0;
}

/* The gradient's shape must be the forward op's output. */
static int check_grad_shape(const char *op, const int64_t *want, const tw_tensor *g, const int64_t *in,
                            const int64_t *fil)
{
    if (memcmp(g->shape, want, 4 * sizeof(int64_t)) == 0)
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

/* ---- dispatch (the backward rules and the public functions) ------------- */

tw_attrs tw__conv_attrs(const tw_conv2d_params *params)
{
    tw_conv2d_params p = params ? *params : (tw_conv2d_params){0};
    return (tw_attrs){.i = {p.stride_h ? p.stride_h : 1, p.stride_w ? p.stride_w : 1, p.dilation_h ? p.dilation_h : 1,
                            p.dilation_w ? p.dilation_w : 1, (int64_t)p.padding},
                      .ni = A_SHAPE};
}

static tw_tensor *forward_with(const tw_conv_family *fam, const tw_attrs *conv, tw_tensor *input, tw_tensor *filter)
{
    tw_attrs a = {.ni = A_SHAPE};
    memcpy(a.i, conv->i, A_SHAPE * sizeof(int64_t));
    return tw_dispatch1(fam->forward, 2, (tw_tensor *const[]){input, filter}, &a);
}

tw_tensor *tw__conv_backprop(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *grad,
                             const int64_t *shape)
{
    tw_attrs attrs = {.ni = A_COUNT};
    memcpy(attrs.i, conv->i, A_SHAPE * sizeof(int64_t));
    memcpy(attrs.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    return tw_dispatch1(op, 2, (tw_tensor *const[]){a, grad}, &attrs);
}

/* ---- the six ops' infer and backward --------------------------------------- */

static const tw_conv_family *const FAMILIES[] = {&tw__conv2d_family, &tw__depthwise_family};

/* The family op belongs to. */
static const tw_conv_family *family_of(const tw_op_def *op)
{
    for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++)
        if (op == FAMILIES[i]->forward || op == FAMILIES[i]->backprop_input || op == FAMILIES[i]->backprop_filter)
            return FAMILIES[i];
    return NULL;
}

int tw__conv_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_conv_family *fam = family_of(call->op);
    const char *op = call->op->name;
    const tw_tensor *a = call->inputs[0], *b = call->inputs[1];
    tw_conv_window w;
    if (call->op == fam->forward) {
        if (check_pair(op, "input", a, "filter", b, NHWC, fam->filter_layout) < 0 ||
            tw__conv_window(fam, op, call->attrs, a->shape, b->shape, &w) < 0)
            return -1;
        set_desc(out, a->dtype, w.out);
        return 0;
    }
    /* A backprop op: a is the filter (input gradient) or the input (filter
     * gradient); the attribute holds the shape of the other. */
    bool input_grad = call->op == fam->backprop_input;
    if (check_pair(op, input_grad ? "filter" : "input", a, "grad_output", b, input_grad ? fam->filter_layout : NHWC,
                   NHWC) < 0 ||
        check_shape_attr(op, call->attrs, input_grad ? "input" : "filter") < 0)
        return -1;
    const int64_t *shape = call->attrs->i + A_SHAPE;
    const int64_t *in = input_grad ? shape : a->shape, *fil = input_grad ? a->shape : shape;
    if (tw__conv_window(fam, op, call->attrs, in, fil, &w) < 0 || check_grad_shape(op, w.out, b, in, fil) < 0)
        return -1;
    set_desc(out, a->dtype, shape);
    return 0;
}

int tw__conv_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                      tw_tensor **gin)
{
    const tw_conv_family *fam = family_of(call->op);
    const tw_attrs *conv = call->attrs;
    tw_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (call->op == fam->forward) { /* a = x, b = f */
        if (needs[0])
            gin[0] = tw__conv_backprop(fam->backprop_input, conv, b, g[0], a->shape);
        if (needs[1])
            gin[1] = tw__conv_backprop(fam->backprop_filter, conv, a, g[0], b->shape);
    } else if (call->op == fam->backprop_input) { /* a = f, b = grad; u = g[0] */
        if (needs[0])
            gin[0] = tw__conv_backprop(fam->backprop_filter, conv, g[0], b, a->shape);
        if (needs[1])
            gin[1] = forward_with(fam, conv, g[0], a);
    } else { /* a = x, b = grad; v = g[0] */
        if (needs[0])
            gin[0] = tw__conv_backprop(fam->backprop_input, conv, g[0], b, a->shape);
        if (needs[1])
            gin[1] = forward_with(fam, conv, a, g[0]);
    }
    return 0;
}
