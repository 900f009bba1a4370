/* What the 2-D convolutions share (conv_common.h). */
#include "conv_common.h"

#include <string.h>

#define SHAPE_STR(ndim, shape, buf) tw_shape_str((ndim), (shape), (buf), sizeof(buf))

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

int tw__conv_window(const char *op, const tw_attrs *a, const int64_t *in, const int64_t *fil, bool filter_ok,
                    const char *filter_rule, tw_conv_window *w)
{
    char si[160], sf[160];
    SHAPE_STR(4, in, si);
    SHAPE_STR(4, fil, sf);
    const int64_t *p = a->i;
    memset(w, 0, sizeof *w);
    if (p[TW_CONV_STRIDE_H] < 1 || p[TW_CONV_STRIDE_W] < 1)
        return tw_error_set("%s: strides must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[TW_CONV_STRIDE_H], (long long)p[TW_CONV_STRIDE_W], si, sf);
    if (p[TW_CONV_DILATION_H] < 1 || p[TW_CONV_DILATION_W] < 1)
        return tw_error_set("%s: dilations must be positive, got (%lld, %lld): input %s, filter %s", op,
                            (long long)p[TW_CONV_DILATION_H], (long long)p[TW_CONV_DILATION_W], si, sf);
    if (p[TW_CONV_PADDING] != TW_PADDING_VALID && p[TW_CONV_PADDING] != TW_PADDING_SAME)
        return tw_error_set("%s: padding must be TW_PADDING_VALID or TW_PADDING_SAME, got %lld", op,
                            (long long)p[TW_CONV_PADDING]);
    if (!filter_ok)
        return tw_error_set("%s: the filter's %s: input %s, filter %s", op, filter_rule, si, sf);
    if (in[3] != fil[2])
        return tw_error_set("%s: input channels %lld do not match filter in_channels %lld: input %s, filter %s", op,
                            (long long)in[3], (long long)fil[2], si, sf);
    w->stride_h = p[TW_CONV_STRIDE_H];
    w->stride_w = p[TW_CONV_STRIDE_W];
    w->dilation_h = p[TW_CONV_DILATION_H];
    w->dilation_w = p[TW_CONV_DILATION_W];
    if (spatial_size(in[1], fil[0], w->stride_h, w->dilation_h, p[TW_CONV_PADDING], &w->out_h, &w->pad_top) < 0 ||
        spatial_size(in[2], fil[1], w->stride_w, w->dilation_w, p[TW_CONV_PADDING], &w->out_w, &w->pad_left) < 0)
        return tw_error_set("%s: the filter (%lldx%lld with dilation (%lld, %lld)) is larger than the input "
                            "(%lldx%lld) with VALID padding: input %s, filter %s",
                            op, (long long)((fil[0] - 1) * w->dilation_h + 1),
                            (long long)((fil[1] - 1) * w->dilation_w + 1), (long long)w->dilation_h,
                            (long long)w->dilation_w, (long long)in[1], (long long)in[2], si, sf);
    return 0;
}

int tw__conv_check_pair(const char *op, const char *name_a, const tw_tensor *a, const char *name_b,
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

int tw__conv_check_shape_attr(const char *op, const tw_attrs *a, const char *what)
{
    if (a->ni < TW_CONV_NATTRS)
        return tw_error_set("%s: missing the %s shape attribute", op, what);
    for (int d = 0; d < 4; d++)
        if (a->i[TW_CONV_SHAPE + d] < 0)
            return tw_error_set("%s: the %s shape has a negative dimension", op, what);
    return 0;
}

int tw__conv_check_grad_shape(const char *op, const int64_t *want, const tw_tensor *g, const int64_t *in,
                              const int64_t *fil)
{
    if (memcmp(g->shape, want, 4 * sizeof(int64_t)) == 0)
        return 0;
    char sg[160], sw[160], si[160], sf[160];
    return tw_error_set("%s: grad_output %s does not match the convolution's output %s for input %s and filter %s",
                        op, SHAPE_STR(4, g->shape, sg), SHAPE_STR(4, want, sw), SHAPE_STR(4, in, si),
                        SHAPE_STR(4, fil, sf));
}

void tw__conv_set_desc(tw_desc *out, tw_dtype dtype, const int64_t *shape)
{
    out->dtype = dtype;
    out->ndim = 4;
    memcpy(out->shape, shape, 4 * sizeof(int64_t));
}

tw_attrs tw__conv_attrs(const tw_conv2d_params *params)
{
    tw_conv2d_params p = params ? *params : (tw_conv2d_params){0};
    return (tw_attrs){.i = {p.stride_h ? p.stride_h : 1, p.stride_w ? p.stride_w : 1, p.dilation_h ? p.dilation_h : 1,
                            p.dilation_w ? p.dilation_w : 1, (int64_t)p.padding},
                      .ni = TW_CONV_SHAPE};
}

tw_tensor *tw__conv_forward(const tw_op_def *op, tw_tensor *input, tw_tensor *filter, const tw_conv2d_params *params)
{
    tw_attrs a = tw__conv_attrs(params);
    return tw_dispatch1(op, 2, (tw_tensor *const[]){input, filter}, &a);
}

tw_tensor *tw__conv_dispatch(const tw_op_def *op, const tw_attrs *conv, tw_tensor *a, tw_tensor *b,
                             const int64_t *shape)
{
    tw_attrs attrs = {.ni = shape ? TW_CONV_NATTRS : TW_CONV_SHAPE};
    memcpy(attrs.i, conv->i, TW_CONV_SHAPE * sizeof(int64_t));
    if (shape)
        memcpy(attrs.i + TW_CONV_SHAPE, shape, 4 * sizeof(int64_t));
    return tw_dispatch1(op, 2, (tw_tensor *const[]){a, b}, &attrs);
}

/* ---- the three ops ------------------------------------------------------------ */

static const tw_conv_family *family_of(const tw_op_def *op)
{
    const tw_conv_family *families[] = {&tw__conv2d_family, &tw__depthwise_conv2d_family};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        for (int pass = 0; pass < 3; pass++)
            if (families[i]->ops[pass] == op)
                return families[i];
    return NULL; /* not reached: only the families' ops use these functions */
}

/* A pass of the family's kernel on a and b into out. */
static int run(const tw_conv_family *fam, const char *op, tw_conv_pass pass, const tw_conv_geometry *g, tw_tensor *a,
               tw_tensor *b, tw_tensor *out)
{
    tw_tensor *ca = tw__contiguous_raw(a), *cb = ca ? tw__contiguous_raw(b) : NULL;
    size_t bytes = cb ? fam->workspace(out->dtype, g, pass) : 0;
    tw_storage *ws = bytes ? tw__storage_new(bytes, out->storage->device) : NULL;
    int rc = -1;
    if (cb && (!bytes || ws))
        rc = fam->kernel(op, pass, out->dtype, g, tw__data(ca), tw__data(cb), tw__data(out), ws ? ws->data : NULL);
    tw__storage_unref(ws);
    tw_tensor_unref(ca);
    tw_tensor_unref(cb);
    return rc;
}

int tw__conv_forward_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_conv_family *fam = family_of(call->op);
    const char *op = call->op->name;
    const tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    tw_conv_geometry geo;
    int64_t shape[4];
    if (tw__conv_check_pair(op, "input", x, "filter", f, TW_CONV_NHWC, fam->filter_layout) < 0 ||
        fam->geometry(op, call->attrs, x->shape, f->shape, &geo, shape) < 0)
        return -1;
    tw__conv_set_desc(out, x->dtype, shape);
    return 0;
}

int tw__conv_forward_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    tw_conv_geometry geo;
    int64_t shape[4];
    if (fam->geometry(call->op->name, call->attrs, x->shape, f->shape, &geo, shape) < 0)
        return -1;
    return run(fam, call->op->name, TW_CONV_FORWARD, &geo, x, f, outs[0]);
}

int tw__conv_forward_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                              tw_tensor **gin)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *x = call->inputs[0], *f = call->inputs[1];
    if (needs[0])
        gin[0] = tw__conv_dispatch(fam->ops[TW_CONV_BACKPROP_INPUT], call->attrs, f, g[0], x->shape);
    if (needs[1])
        gin[1] = tw__conv_dispatch(fam->ops[TW_CONV_BACKPROP_FILTER], call->attrs, x, g[0], f->shape);
    return 0;
}

int tw__conv_input_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_conv_family *fam = family_of(call->op);
    const char *op = call->op->name;
    const tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    tw_conv_geometry geo;
    int64_t want[4];
    if (tw__conv_check_pair(op, "filter", f, "grad_output", g, fam->filter_layout, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "input") < 0)
        return -1;
    const int64_t *in = call->attrs->i + TW_CONV_SHAPE;
    if (fam->geometry(op, call->attrs, in, f->shape, &geo, want) < 0 ||
        tw__conv_check_grad_shape(op, want, g, in, f->shape) < 0)
        return -1;
    tw__conv_set_desc(out, f->dtype, in);
    return 0;
}

int tw__conv_input_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *f = call->inputs[0], *g = call->inputs[1];
    tw_conv_geometry geo;
    int64_t shape[4];
    if (fam->geometry(call->op->name, call->attrs, call->attrs->i + TW_CONV_SHAPE, f->shape, &geo, shape) < 0)
        return -1;
    return run(fam, call->op->name, TW_CONV_BACKPROP_INPUT, &geo, f, g, outs[0]);
}

int tw__conv_input_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *f = call->inputs[0], *grad = call->inputs[1], *u = g[0];
    if (needs[0])
        gin[0] = tw__conv_dispatch(fam->ops[TW_CONV_BACKPROP_FILTER], call->attrs, u, grad, f->shape);
    if (needs[1])
        gin[1] = tw__conv_dispatch(fam->ops[TW_CONV_FORWARD], call->attrs, u, f, NULL);
    return 0;
}

int tw__conv_filter_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_conv_family *fam = family_of(call->op);
    const char *op = call->op->name;
    const tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    tw_conv_geometry geo;
    int64_t want[4];
    if (tw__conv_check_pair(op, "input", x, "grad_output", g, TW_CONV_NHWC, TW_CONV_NHWC) < 0 ||
        tw__conv_check_shape_attr(op, call->attrs, "filter") < 0)
        return -1;
    const int64_t *fil = call->attrs->i + TW_CONV_SHAPE;
    if (fam->geometry(op, call->attrs, x->shape, fil, &geo, want) < 0 ||
        tw__conv_check_grad_shape(op, want, g, x->shape, fil) < 0)
        return -1;
    tw__conv_set_desc(out, x->dtype, fil);
    return 0;
}

int tw__conv_filter_kernel(const tw_op_call *call, tw_tensor *const *outs)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *x = call->inputs[0], *g = call->inputs[1];
    tw_conv_geometry geo;
    int64_t shape[4];
    if (fam->geometry(call->op->name, call->attrs, x->shape, call->attrs->i + TW_CONV_SHAPE, &geo, shape) < 0)
        return -1;
    return run(fam, call->op->name, TW_CONV_BACKPROP_FILTER, &geo, x, g, outs[0]);
}

int tw__conv_filter_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    const tw_conv_family *fam = family_of(call->op);
    tw_tensor *x = call->inputs[0], *grad = call->inputs[1], *v = g[0];
    if (needs[0])
        gin[0] = tw__conv_dispatch(fam->ops[TW_CONV_BACKPROP_INPUT], call->attrs, v, grad, x->shape);
    if (needs[1])
        gin[1] = tw__conv_dispatch(fam->ops[TW_CONV_FORWARD], call->attrs, x, v, NULL);
    return 0;
}
