/* The CPU's resampling of images: resize and its gradient, the projective
 * transform and its adjoint, over contiguous copies of the inputs. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"
#include "ops/geometry.h"

typedef void (*resize_fn)(twk_dtype, const twk_resize_shape *, const void *, void *);

static int resize_run(const twk_resize_shape *s, tw_tensor *x, tw_tensor *out, resize_fn fn)
{
    tw_tensor *c = tw__contiguous_raw(x);
    if (!c)
        return -1;
    fn(out->dtype, s, tw__data(c), tw__data(out));
    tw_tensor_unref(c);
    return 0;
}

int tw__cpu_resize(const tw_op_call *call, tw_tensor *const *outs)
{
    const int64_t *p = call->attrs->i;
    twk_resize_shape s;
    if (tw__resize_geometry("resize", call->attrs, call->inputs[0]->shape, p[TW_RESIZE_ATTR_HEIGHT], p[TW_RESIZE_ATTR_WIDTH], &s) < 0)
        return -1;
    return resize_run(&s, call->inputs[0], outs[0], twk_resize);
}

int tw__cpu_resize_grad(const tw_op_call *call, tw_tensor *const *outs)
{
    twk_resize_shape s;
    if (tw__resize_grad_geometry(call, &s) < 0)
        return -1;
    return resize_run(&s, call->inputs[0], outs[0], twk_resize_grad);
}

/* The kernel's geometry: in is the images' side, out the sampled side. */
static twk_image_transform_shape transform_geometry(const tw_op_call *call, const int64_t *in, const int64_t *out)
{
    const tw_attrs *a = call->attrs;
    return (twk_image_transform_shape){
        .batch = in[0], .in_h = in[1], .in_w = in[2], .channels = in[3], .out_h = out[1], .out_w = out[2],
        .interpolation = (int)a->i[TW_IMAGE_ATTR_INTERP], .fill_mode = (int)a->i[TW_IMAGE_ATTR_FILL], .fill_value = a->f[0],
    };
}

static int transform_run(const tw_op_call *call, tw_tensor *out, bool adjoint)
{
    tw_tensor *x = tw__contiguous_raw(call->inputs[0]), *t = x ? tw__contiguous_raw(call->inputs[1]) : NULL;
    int rc = x && t ? 0 : -1;
    if (rc == 0) {
        twk_image_transform_shape s = adjoint ? transform_geometry(call, out->shape, x->shape) : transform_geometry(call, x->shape, out->shape);
        if (adjoint)
            twk_image_transform_adjoint(x->dtype, &s, tw__data(x), tw__data(t), tw__data(out));
        else
            twk_image_transform(x->dtype, &s, tw__data(x), tw__data(t), tw__data(out));
    }
    tw_tensor_unref(x);
    tw_tensor_unref(t);
    return rc;
}

int tw__cpu_image_transform(const tw_op_call *call, tw_tensor *const *outs)
{
    return transform_run(call, outs[0], false);
}

int tw__cpu_image_transform_adjoint(const tw_op_call *call, tw_tensor *const *outs)
{
    return transform_run(call, outs[0], true);
}
