/* Resizing images (NHWC) as TensorFlow 2's tf.image.resize, bilinear or
 * nearest with half-pixel centres (see cpu/resize_kernels.h), and its
 * gradient, as two primitive ops that are each other's adjoint:
 *
 *   resize(x)       -> (batch, out_h, out_w, channels); backward: resize_grad(dy)
 *   resize_grad(dy) -> (batch, in_h, in_w, channels);   linear; backward: resize(u)
 *
 * attrs.i: [0] method (tw_resize_method), [1] height, [2] width: the
 * spatial size of the op's own output. */
#include <string.h>

#include "ops/geometry.h"

enum { A_METHOD = TW_RESIZE_ATTR_METHOD, A_HEIGHT = TW_RESIZE_ATTR_HEIGHT, A_WIDTH = TW_RESIZE_ATTR_WIDTH, A_COUNT = TW_RESIZE_ATTR_COUNT };

extern const tw_op_def tw_op_resize, tw_op_resize_grad;

/* The kernel geometry from the image the resize reads (in) and the size it
 * writes; the message names the op and the shapes. */
int tw__resize_geometry(const char *op, const tw_attrs *a, const int64_t *in, int64_t out_h, int64_t out_w,
                        twk_resize_shape *s)
{
    char si[160];
    tw_shape_str(4, in, si, sizeof si);
    memset(s, 0, sizeof *s);
    if (a->ni < A_COUNT || (a->i[A_METHOD] != TW_RESIZE_BILINEAR && a->i[A_METHOD] != TW_RESIZE_NEAREST))
        return tw_error_set("%s: the method must be TW_RESIZE_BILINEAR or TW_RESIZE_NEAREST", op);
    if (out_h < 1 || out_w < 1)
        return tw_error_set("%s: the size must be at least 1x1, got %lldx%lld: images %s", op, (long long)out_h,
                            (long long)out_w, si);
    if (in[1] < 1 || in[2] < 1)
        return tw_error_set("%s: cannot resize images with no pixels: images %s", op, si);
    *s = (twk_resize_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3], .out_h = out_h, .out_w = out_w,
        .method = a->i[A_METHOD] == TW_RESIZE_NEAREST ? TWK_RESIZE_NEAREST : TWK_RESIZE_BILINEAR,
    };
    return 0;
}

static int check_images(const char *op, const char *name, const tw_tensor *t)
{
    char st[160];
    tw_shape_str(t->ndim, t->shape, st, sizeof st);
    if (t->ndim != 4)
        return tw_error_set("%s: %s must have rank 4 (batch, height, width, channels), got shape %s", op, name, st);
    if (!tw_dtype_is_float(t->dtype))
        return tw_error_set("%s: needs a float32 or float64 tensor, got %s %s %s", op, tw_dtype_name(t->dtype),
                            name, st);
    return 0;
}

static void set_desc(tw_desc *out, tw_dtype dtype, int64_t n, int64_t h, int64_t w, int64_t c)
{
    out->dtype = dtype;
    out->ndim = 4;
    out->shape[0] = n;
    out->shape[1] = h;
    out->shape[2] = w;
    out->shape[3] = c;
}

static tw_tensor *dispatch(const tw_op_def *op, tw_tensor *x, int64_t method, int64_t h, int64_t w)
{
    tw_attrs a = {.i = {method, h, w}, .ni = A_COUNT};
    return tw_dispatch1(op, 1, &x, &a);
}

/* ---- resize(x) --------------------------------------------------------------- */

static int resize_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0];
    const int64_t *p = call->attrs->i;
    twk_resize_shape s;
    if (check_images("resize", "images", x) < 0 || tw__resize_geometry("resize", call->attrs, x->shape, p[A_HEIGHT],
                                                            p[A_WIDTH], &s) < 0)
        return -1;
    set_desc(out, x->dtype, s.batch, s.out_h, s.out_w, s.channels);
    return 0;
}

static int resize_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    const tw_tensor *x = call->inputs[0];
    if (needs[0])
        gin[0] = dispatch(&tw_op_resize_grad, g[0], call->attrs->i[A_METHOD], x->shape[1], x->shape[2]);
    return 0;
}

const tw_op_def tw_op_resize = {
    .id = TW_OP_ID_resize,
    .name = "resize", .noutputs = 1, .ninputs = 1, .infer = resize_infer,
    .backward = resize_backward,
};

/* ---- resize_grad(dy) ------------------------------------------------------------ */

/* The resize this is the gradient of reads the op's output shape. */
int tw__resize_grad_geometry(const tw_op_call *call, twk_resize_shape *s)
{
    const tw_tensor *g = call->inputs[0];
    const int64_t *p = call->attrs->i;
    int64_t in[4] = {g->shape[0], p[A_HEIGHT], p[A_WIDTH], g->shape[3]};
    return tw__resize_geometry("resize_grad", call->attrs, in, g->shape[1], g->shape[2], s);
}

static int grad_infer(const tw_op_call *call, tw_desc *out)
{
    twk_resize_shape s;
    if (check_images("resize_grad", "grad_output", call->inputs[0]) < 0 || tw__resize_grad_geometry(call, &s) < 0)
        return -1;
    set_desc(out, call->inputs[0]->dtype, s.batch, s.in_h, s.in_w, s.channels);
    return 0;
}

static int grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                         tw_tensor **gin)
{
    const tw_tensor *dy = call->inputs[0];
    if (needs[0])
        gin[0] = dispatch(&tw_op_resize, g[0], call->attrs->i[A_METHOD], dy->shape[1], dy->shape[2]);
    return 0;
}

const tw_op_def tw_op_resize_grad = {
    .id = TW_OP_ID_resize_grad,
    .name = "resize_grad", .noutputs = 1, .ninputs = 1, .infer = grad_infer,
    .backward = grad_backward,
};

/* ---- public ------------------------------------------------------------------------ */

tw_tensor *tw_resize(tw_tensor *images, int64_t height, int64_t width, tw_resize_method method)
{
    return dispatch(&tw_op_resize, images, method, height, width);
}
