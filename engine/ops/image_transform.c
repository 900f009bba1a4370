/* The projective image transform (tw_image_transform) as two primitive ops:
 *
 *   image_transform(images, transforms)        backward (images only):
 *                                              image_transform_adjoint(g, transforms)
 *   image_transform_adjoint(g, transforms)     linear in g; backward:
 *                                              image_transform(u, transforms), fill 0
 *
 * The transforms get no gradient: Keras' augmentation layers draw them at
 * random, so nothing upstream learns through them.
 *
 * attrs.i: [0] height, [1] width (the output's for image_transform, the
 * images' for the adjoint), [2] interpolation, [3] fill mode; attrs.f: [0]
 * fill value. */
#include <string.h>

#include "ops/geometry.h"

enum { A_HEIGHT = TW_IMAGE_ATTR_HEIGHT, A_WIDTH = TW_IMAGE_ATTR_WIDTH, A_INTERP = TW_IMAGE_ATTR_INTERP, A_FILL = TW_IMAGE_ATTR_FILL, A_COUNT = TW_IMAGE_ATTR_COUNT };

extern const tw_op_def tw_op_image_transform, tw_op_image_transform_adjoint;

_Static_assert((int)TW_IMAGE_NEAREST == TWK_INTERP_NEAREST && (int)TW_IMAGE_BILINEAR == TWK_INTERP_BILINEAR,
               "interpolation numbers");
_Static_assert((int)TW_FILL_REFLECT == TWK_FILL_REFLECT && (int)TW_FILL_WRAP == TWK_FILL_WRAP &&
                   (int)TW_FILL_CONSTANT == TWK_FILL_CONSTANT && (int)TW_FILL_NEAREST == TWK_FILL_NEAREST,
               "fill mode numbers");

static int check(const char *op, const tw_op_call *call)
{
    const tw_tensor *x = call->inputs[0], *t = call->inputs[1];
    const tw_attrs *a = call->attrs;
    char sx[160], st[160];
    tw_shape_str(x->ndim, x->shape, sx, sizeof sx);
    tw_shape_str(t->ndim, t->shape, st, sizeof st);
    if (x->ndim != 4)
        return tw_error_set("%s: images must have rank 4 (batch, height, width, channels), got %s", op, sx);
    if (!tw_dtype_is_float(x->dtype))
        return tw_error_set("%s: images must be float32 or float64, got %s", op, tw_dtype_name(x->dtype));
    if (t->ndim != 2 || t->shape[0] != x->shape[0] || t->shape[1] != 8)
        return tw_error_set("%s: transforms must have shape (%lld, 8) for images %s, got %s", op,
                            (long long)x->shape[0], sx, st);
    if (t->dtype != x->dtype)
        return tw_error_set("%s: transforms are %s, images %s", op, tw_dtype_name(t->dtype), tw_dtype_name(x->dtype));
    if (a->ni < A_COUNT || a->nf < 1)
        return tw_error_set("%s: missing attributes", op);
    if (a->i[A_HEIGHT] < 1 || a->i[A_WIDTH] < 1)
        return tw_error_set("%s: size must be positive, got %lldx%lld", op, (long long)a->i[A_HEIGHT],
                            (long long)a->i[A_WIDTH]);
    if (a->i[A_INTERP] < TW_IMAGE_NEAREST || a->i[A_INTERP] > TW_IMAGE_BILINEAR)
        return tw_error_set("%s: unknown interpolation %lld", op, (long long)a->i[A_INTERP]);
    if (a->i[A_FILL] < TW_FILL_REFLECT || a->i[A_FILL] > TW_FILL_NEAREST)
        return tw_error_set("%s: unknown fill mode %lld", op, (long long)a->i[A_FILL]);
    return 0;
}

static int infer(const tw_op_call *call, tw_desc *out)
{
    const char *op = call->op->name;
    if (check(op, call) < 0)
        return -1;
    const tw_tensor *x = call->inputs[0];
    *out = (tw_desc){x->dtype, 4, {x->shape[0], call->attrs->i[A_HEIGHT], call->attrs->i[A_WIDTH], x->shape[3]}};
    return 0;
}

/* The other op of the pair over g, sized to this op's first input. */
static tw_tensor *other(const tw_op_def *op, const tw_op_call *call, tw_tensor *g, double fill_value)
{
    const tw_tensor *x = call->inputs[0];
    tw_attrs a = *call->attrs;
    a.i[A_HEIGHT] = x->shape[1];
    a.i[A_WIDTH] = x->shape[2];
    a.f[0] = fill_value;
    return tw_dispatch1(op, 2, (tw_tensor *const[]){g, call->inputs[1]}, &a);
}

static int forward_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    (void)outs;
    if (needs[0])
        gin[0] = other(&tw_op_image_transform_adjoint, call, g[0], 0);
    return needs[0] && !gin[0] ? -1 : 0;
}

static int adjoint_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    (void)outs;
    /* the adjoint is the linear part of the forward map: no fill term */
    if (needs[0])
        gin[0] = other(&tw_op_image_transform, call, g[0], 0);
    return needs[0] && !gin[0] ? -1 : 0;
}

const tw_op_def tw_op_image_transform = {
    .id = TW_OP_ID_image_transform,
    .name = "image_transform", .noutputs = 1, .ninputs = 2, .infer = infer,
    .backward = forward_backward,
};

const tw_op_def tw_op_image_transform_adjoint = {
    .id = TW_OP_ID_image_transform_adjoint,
    .name = "image_transform_adjoint", .noutputs = 1, .ninputs = 2, .infer = infer,
    .backward = adjoint_backward,
};

tw_tensor *tw_image_transform(tw_tensor *images, tw_tensor *transforms, int64_t out_h, int64_t out_w,
                              tw_image_interpolation interpolation, tw_fill_mode fill_mode, double fill_value)
{
    tw_attrs a = {.i = {out_h, out_w, interpolation, fill_mode}, .ni = A_COUNT, .f = {fill_value}, .nf = 1};
    return tw_dispatch1(&tw_op_image_transform, 2, (tw_tensor *const[]){images, transforms}, &a);
}
