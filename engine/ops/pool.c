/* 2-D max and average pooling over NHWC tensors with TensorFlow's SAME and
 * VALID padding, and their gradients as primitive ops:
 *
 *   max_pool2d(x) = y              backward: max_pool2d_grad(x, y, dy)
 *   max_pool2d_grad(x, y, dy)      backward (dy only; it is piecewise
 *                                  constant in x and y):
 *                                  max_pool2d_grad_grad(x, y, u)
 *   max_pool2d_grad_grad(x, y, u)  gathers u at each window's argmax; linear
 *                                  in u, its backward is max_pool2d_grad
 *   avg_pool2d(x)                  backward: avg_pool2d_grad(dy)
 *   avg_pool2d_grad(dy)            linear; backward: avg_pool2d(u)
 *
 * Max pooling ignores padded positions; SAME average pooling divides by the
 * number of valid elements of each window, as TensorFlow does.
 *
 * attrs.i: [0] pool_h, [1] pool_w, [2] stride_h, [3] stride_w, [4] padding;
 * avg_pool2d_grad adds [5..8], the input's shape. */
#include <string.h>

#include "geometry.h"

enum { A_POOL_H, A_POOL_W, A_STRIDE_H, A_STRIDE_W, A_PADDING, A_SHAPE, A_COUNT = A_SHAPE + 4 };
_Static_assert((int)A_SHAPE == (int)TW_POOL_ATTR_SHAPE, "geometry.h names the shape attribute");

extern const tw_op_def tw_op_max_pool2d, tw_op_max_pool2d_grad, tw_op_max_pool2d_grad_grad, tw_op_avg_pool2d,
    tw_op_avg_pool2d_grad;

#define SHAPE_STR(ndim, shape, buf) tw_shape_str((ndim), (shape), (buf), sizeof(buf))

int tw__pool2d_geometry(const char *op, const tw_attrs *a, const int64_t *in, twk_pool2d_shape *s)
{
    char si[160];
    SHAPE_STR(4, in, si);
    const int64_t *p = a->i;
    memset(s, 0, sizeof *s);
    if (p[A_POOL_H] < 1 || p[A_POOL_W] < 1)
        return tw_error_set("%s: pool size must be positive, got (%lld, %lld): input %s", op, (long long)p[A_POOL_H],
                            (long long)p[A_POOL_W], si);
    if (p[A_STRIDE_H] < 1 || p[A_STRIDE_W] < 1)
        return tw_error_set("%s: strides must be positive, got (%lld, %lld): input %s", op, (long long)p[A_STRIDE_H],
                            (long long)p[A_STRIDE_W], si);
    if (p[A_PADDING] != TW_PADDING_VALID && p[A_PADDING] != TW_PADDING_SAME)
        return tw_error_set("%s: padding must be TW_PADDING_VALID or TW_PADDING_SAME, got %lld", op,
                            (long long)p[A_PADDING]);
    *s = (twk_pool2d_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3],
        .pool_h = p[A_POOL_H], .pool_w = p[A_POOL_W], .stride_h = p[A_STRIDE_H], .stride_w = p[A_STRIDE_W],
    };
    if (p[A_PADDING] == TW_PADDING_SAME) {
        s->out_h = (s->in_h + s->stride_h - 1) / s->stride_h;
        s->out_w = (s->in_w + s->stride_w - 1) / s->stride_w;
        int64_t th = (s->out_h - 1) * s->stride_h + s->pool_h - s->in_h;
        int64_t tw = (s->out_w - 1) * s->stride_w + s->pool_w - s->in_w;
        s->pad_top = s->out_h > 0 && th > 0 ? th / 2 : 0;
        s->pad_left = s->out_w > 0 && tw > 0 ? tw / 2 : 0;
        return 0;
    }
    if (s->in_h < s->pool_h || s->in_w < s->pool_w)
        return tw_error_set("%s: the pool (%lldx%lld) is larger than the input (%lldx%lld) with VALID padding: "
                            "input %s",
                            op, (long long)s->pool_h, (long long)s->pool_w, (long long)s->in_h, (long long)s->in_w, si);
    s->out_h = (s->in_h - s->pool_h) / s->stride_h + 1;
    s->out_w = (s->in_w - s->pool_w) / s->stride_w + 1;
    s->pad_top = s->pad_left = 0;
    return 0;
}

static int check_tensor(const char *op, const char *name, const tw_tensor *t)
{
    char st[160];
    if (t->ndim != 4)
        return tw_error_set("%s: %s must have rank 4 (batch, height, width, channels), got shape %s", op, name,
                            SHAPE_STR(t->ndim, t->shape, st));
    if (!tw_dtype_is_float(t->dtype))
        return tw_error_set("%s: needs float32 or float64 tensors, got %s %s %s", op, name, tw_dtype_name(t->dtype),
                            SHAPE_STR(t->ndim, t->shape, st));
    return 0;
}

/* t must have the given dtype and shape. */
static int check_like(const char *op, const char *name, const tw_tensor *t, tw_dtype dtype, const int64_t *shape,
                      const char *what)
{
    char st[160], sw[160];
    if (check_tensor(op, name, t) < 0)
        return -1;
    if (t->dtype != dtype)
        return tw_error_set("%s: dtypes differ: %s is %s, %s is %s", op, name, tw_dtype_name(t->dtype), what,
                            tw_dtype_name(dtype));
    if (memcmp(t->shape, shape, 4 * sizeof(int64_t)) != 0)
        return tw_error_set("%s: %s %s does not match %s %s", op, name, SHAPE_STR(4, t->shape, st), what,
                            SHAPE_STR(4, shape, sw));
    return 0;
}

static void set_desc(tw_desc *out, tw_dtype dtype, const int64_t *shape)
{
    out->dtype = dtype;
    out->ndim = 4;
    memcpy(out->shape, shape, 4 * sizeof(int64_t));
}

static void out_shape(const twk_pool2d_shape *s, int64_t *shape)
{
    shape[0] = s->batch;
    shape[1] = s->out_h;
    shape[2] = s->out_w;
    shape[3] = s->channels;
}

static tw_attrs pool_attrs(const tw_attrs *a)
{
    tw_attrs b = {0};
    memcpy(b.i, a->i, A_SHAPE * sizeof(int64_t));
    b.ni = A_SHAPE;
    return b;
}


/* ---- max_pool2d(x) --------------------------------------------------------- */

static int max_pool_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0];
    twk_pool2d_shape s;
    if (check_tensor("max_pool2d", "input", x) < 0 || tw__pool2d_geometry("max_pool2d", call->attrs, x->shape, &s) < 0)
        return -1;
    int64_t shape[4];
    out_shape(&s, shape);
    set_desc(out, x->dtype, shape);
    return 0;
}

static int max_pool_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    if (!needs[0])
        return 0;
    tw_attrs a = pool_attrs(call->attrs);
    gin[0] = tw_dispatch1(&tw_op_max_pool2d_grad, 3, (tw_tensor *const[]){call->inputs[0], outs[0], g[0]}, &a);
    return 0;
}

const tw_op_def tw_op_max_pool2d = {
    .id = TW_OP_ID_max_pool2d,
    .name = "max_pool2d", .noutputs = 1, .ninputs = 1, .infer = max_pool_infer,
    .backward = max_pool_backward,
};

/* ---- max_pool2d_grad(x, y, dy) -> x's shape -------------------------------- */

/* x valid for the pool, y and the third input shaped like the output. */
static int check_max_grad(const char *op, const tw_op_call *call, const char *third, const int64_t *third_shape,
                          twk_pool2d_shape *s)
{
    const tw_tensor *x = call->inputs[0];
    if (check_tensor(op, "input", x) < 0 || tw__pool2d_geometry(op, call->attrs, x->shape, s) < 0)
        return -1;
    int64_t shape[4];
    out_shape(s, shape);
    if (check_like(op, "output", call->inputs[1], x->dtype, shape, "the pooled input's output") < 0)
        return -1;
    return check_like(op, third, call->inputs[2], x->dtype, third_shape ? third_shape : shape,
                      third_shape ? "input" : "the pooled input's output");
}

static int max_grad_infer(const tw_op_call *call, tw_desc *out)
{
    twk_pool2d_shape s;
    if (check_max_grad("max_pool2d_grad", call, "grad_output", NULL, &s) < 0)
        return -1;
    set_desc(out, call->inputs[0]->dtype, call->inputs[0]->shape);
    return 0;
}

static int max_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    /* x and y only choose where the gradient goes: zero almost everywhere. */
    if (!needs[2])
        return 0;
    tw_attrs a = pool_attrs(call->attrs);
    gin[2] = tw_dispatch1(&tw_op_max_pool2d_grad_grad, 3,
                          (tw_tensor *const[]){call->inputs[0], call->inputs[1], g[0]}, &a);
    return 0;
}

const tw_op_def tw_op_max_pool2d_grad = {
    .id = TW_OP_ID_max_pool2d_grad,
    .name = "max_pool2d_grad", .noutputs = 1, .ninputs = 3, .infer = max_grad_infer,
    .backward = max_grad_backward,
};

/* ---- max_pool2d_grad_grad(x, y, u) -> y's shape ---------------------------- */

static int max_grad_grad_infer(const tw_op_call *call, tw_desc *out)
{
    twk_pool2d_shape s;
    const tw_tensor *x = call->inputs[0];
    if (check_max_grad("max_pool2d_grad_grad", call, "grad_input", x->ndim == 4 ? x->shape : NULL, &s) < 0)
        return -1;
    int64_t shape[4];
    out_shape(&s, shape);
    set_desc(out, x->dtype, shape);
    return 0;
}

static int max_grad_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g,
                                  const bool *needs, tw_tensor **gin)
{
    if (!needs[2])
        return 0;
    tw_attrs a = pool_attrs(call->attrs);
    gin[2] = tw_dispatch1(&tw_op_max_pool2d_grad, 3, (tw_tensor *const[]){call->inputs[0], call->inputs[1], g[0]},
                          &a);
    return 0;
}

const tw_op_def tw_op_max_pool2d_grad_grad = {
    .id = TW_OP_ID_max_pool2d_grad_grad,
    .name = "max_pool2d_grad_grad", .noutputs = 1, .ninputs = 3, .infer = max_grad_grad_infer,
    .backward = max_grad_grad_backward,
};

/* ---- avg_pool2d(x) ----------------------------------------------------------- */

static int avg_pool_infer(const tw_op_call *call, tw_desc *out)
{
    const tw_tensor *x = call->inputs[0];
    twk_pool2d_shape s;
    if (check_tensor("avg_pool2d", "input", x) < 0 || tw__pool2d_geometry("avg_pool2d", call->attrs, x->shape, &s) < 0)
        return -1;
    int64_t shape[4];
    out_shape(&s, shape);
    set_desc(out, x->dtype, shape);
    return 0;
}

static int avg_pool_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    if (!needs[0])
        return 0;
    tw_attrs a = pool_attrs(call->attrs);
    memcpy(a.i + A_SHAPE, call->inputs[0]->shape, 4 * sizeof(int64_t));
    a.ni = A_COUNT;
    gin[0] = tw_dispatch1(&tw_op_avg_pool2d_grad, 1, (tw_tensor *const[]){g[0]}, &a);
    return 0;
}

const tw_op_def tw_op_avg_pool2d = {
    .id = TW_OP_ID_avg_pool2d,
    .name = "avg_pool2d", .noutputs = 1, .ninputs = 1, .infer = avg_pool_infer,
    .backward = avg_pool_backward,
};

/* ---- avg_pool2d_grad(dy) -> the input's shape (attr) ------------------------ */

static int avg_grad_infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = "avg_pool2d_grad";
    const tw_tensor *g = call->inputs[0];
    twk_pool2d_shape s;
    if (call->attrs->ni < A_COUNT)
        return tw_error_set("%s: missing the input shape attribute", op);
    const int64_t *in = call->attrs->i + A_SHAPE;
    for (int d = 0; d < 4; d++)
        if (in[d] < 0)
            return tw_error_set("%s: the input shape has a negative dimension", op);
    if (check_tensor(op, "grad_output", g) < 0 || tw__pool2d_geometry(op, call->attrs, in, &s) < 0)
        return -1;
    int64_t shape[4];
    out_shape(&s, shape);
    if (check_like(op, "grad_output", g, g->dtype, shape, "the pooled output") < 0)
        return -1;
    set_desc(out, g->dtype, in);
    return 0;
}

static int avg_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    if (!needs[0])
        return 0;
    tw_attrs a = pool_attrs(call->attrs);
    gin[0] = tw_dispatch1(&tw_op_avg_pool2d, 1, (tw_tensor *const[]){g[0]}, &a);
    return 0;
}

const tw_op_def tw_op_avg_pool2d_grad = {
    .id = TW_OP_ID_avg_pool2d_grad,
    .name = "avg_pool2d_grad", .noutputs = 1, .ninputs = 1, .infer = avg_grad_infer,
    .backward = avg_grad_backward,
};

/* ---- public ------------------------------------------------------------------ */

static tw_tensor *pool(const tw_op_def *op, tw_tensor *input, const tw_pool2d_params *params)
{
    if (!params) {
        if (input || !tw_error_pending()) /* keep the message of the op that gave a NULL input */
            tw_error_set("%s: params is NULL (pool size, strides and padding are needed)", op->name);
        return NULL;
    }
    tw_attrs a = {.i = {params->pool_h, params->pool_w, params->stride_h ? params->stride_h : params->pool_h,
                        params->stride_w ? params->stride_w : params->pool_w, (int64_t)params->padding},
                  .ni = A_SHAPE};
    return tw_dispatch1(op, 1, (tw_tensor *const[]){input}, &a);
}

tw_tensor *tw_max_pool2d(tw_tensor *input, const tw_pool2d_params *params)
{
    return pool(&tw_op_max_pool2d, input, params);
}

tw_tensor *tw_avg_pool2d(tw_tensor *input, const tw_pool2d_params *params)
{
    return pool(&tw_op_avg_pool2d, input, params);
}
