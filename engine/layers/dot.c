/* Dot: the per-example dot product of two tensors over one axis of each
 * (Keras' batch_dot). axes is one axis for both or a pair; with normalize
 * the inputs are L2-normalized along those axes first, so the result is
 * their cosine similarity. The output is the first input's remaining axes
 * then the second's, and (batch, 1) when none remain, as Keras gives. */
#include <string.h>

#include "layer_internal.h"

enum { AXES, NORMALIZE };

static const tw_param_def params[] = {
    [AXES] = {"axes", TW_PARAM_INTS, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1,
              .help = "The axis to multiply along, or one per input"},
    [NORMALIZE] = {"normalize", TW_PARAM_BOOL, "false", .help = "L2-normalize first (cosine similarity)"},
};

static int dot_configure(tw_layer *self)
{
    if (tw_layer_param(self, AXES)->n > 2)
        return TW_LAYER_ERROR(self, "axes takes one axis or two, got %d", tw_layer_param(self, AXES)->n);
    return 0;
}

/* The contracted axis of input i (rank ndim), or -1 when it is the batch
 * axis or out of range. Keras reads a negative axis modulo each rank. */
static int axis_of(const tw_layer *self, int i, int ndim)
{
    const tw_param_value *axes = tw_layer_param(self, AXES);
    int axis = (int)axes->ints[axes->n == 2 ? i : 0];
    axis = axis < 0 ? axis + ndim : axis;
    return axis >= 1 && axis < ndim ? axis : -1;
}

static int dot_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs, int *noutputs,
                       tw_weight_spec *w, int *nw)
{
    (void)w;
    *nw = 0;
    *noutputs = 1;
    if (n != 2)
        return TW_LAYER_ERROR(self, "takes exactly 2 inputs, got %d", n);
    char a[96], b[96];
    int ax = axis_of(self, 0, inputs[0].ndim), bx = axis_of(self, 1, inputs[1].ndim);
    if (ax < 0 || bx < 0)
        return TW_LAYER_ERROR(self, "axes do not fit inputs %s and %s (the batch axis cannot be multiplied)",
                              tw_shape_format(&inputs[0], a, sizeof a), tw_shape_format(&inputs[1], b, sizeof b));
    int64_t da = inputs[0].dims[ax], db = inputs[1].dims[bx];
    if (da >= 0 && db >= 0 && da != db)
        return TW_LAYER_ERROR(self, "inputs %s and %s cannot be multiplied: axis %d has %lld and axis %d has %lld",
                              tw_shape_format(&inputs[0], a, sizeof a), tw_shape_format(&inputs[1], b, sizeof b), ax,
                              (long long)da, bx, (long long)db);
    if (inputs[0].ndim + inputs[1].ndim - 3 > TW_MAX_DIMS)
        return TW_LAYER_ERROR(self, "the product of %s and %s has more than %d axes",
                              tw_shape_format(&inputs[0], a, sizeof a), tw_shape_format(&inputs[1], b, sizeof b),
                              TW_MAX_DIMS);
    tw_shape out = {1, {inputs[0].dims[0]}};
    for (int d = 1; d < inputs[0].ndim; d++)
        if (d != ax)
            out.dims[out.ndim++] = inputs[0].dims[d];
    for (int d = 1; d < inputs[1].ndim; d++)
        if (d != bx)
            out.dims[out.ndim++] = inputs[1].dims[d];
    if (out.ndim == 1)
        out.dims[out.ndim++] = 1;
    outputs[0] = out;
    return 0;
}

/* x / sqrt(max(sum(x^2, axis), 1e-12)), Keras' l2_normalize. */
static tw_tensor *l2_normalize(tw_tensor *x, int axis)
{
    tw_tensor *sq = tw_sum(tw_square(x), 1, &axis, true);
    return tw_div(x, tw_sqrt(tw_maximum(sq, tw_scalar_of(1e-12, tw_tensor_dtype(x)))));
}

/* x with axis moved to position `to`, the others in order. */
static tw_tensor *move_axis(tw_tensor *x, int axis, int to)
{
    int nd = tw_tensor_ndim(x), perm[TW_MAX_DIMS], k = 0;
    for (int d = 0; d < nd; d++)
        if (d != axis)
            perm[k++] = d;
    memmove(perm + to + 1, perm + to, sizeof(int) * (size_t)(nd - 1 - to));
    perm[to] = axis;
    return tw_contiguous(tw_permute(x, nd, perm));
}

static int dot_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                      const tw_call_context *ctx)
{
    (void)n;
    (void)ctx;
    tw_tensor *x = inputs[0], *y = inputs[1];
    int nx = tw_tensor_ndim(x), ny = tw_tensor_ndim(y);
    int ax = axis_of(self, 0, nx), bx = axis_of(self, 1, ny);
    if (tw__param_bool(self, NORMALIZE)) {
        x = l2_normalize(x, ax);
        y = l2_normalize(y, bx);
    }
    int64_t batch = tw_tensor_dim(x, 0), k = tw_tensor_dim(x, ax), m = 1, p = 1;
    int64_t out_shape[TW_MAX_DIMS] = {batch};
    int nout = 1;
    for (int d = 1; d < nx; d++)
        if (d != ax) {
            m *= tw_tensor_dim(x, d);
            out_shape[nout++] = tw_tensor_dim(x, d);
        }
    for (int d = 1; d < ny; d++)
        if (d != bx) {
            p *= tw_tensor_dim(y, d);
            out_shape[nout++] = tw_tensor_dim(y, d);
        }
    if (nout == 1)
        out_shape[nout++] = 1;
    /* (batch, m, k) @ (batch, k, p) -> (batch, m, p) */
    tw_tensor *a = tw_reshape(move_axis(x, ax, nx - 1), 3, (int64_t[]){batch, m, k});
    tw_tensor *b = tw_reshape(move_axis(y, bx, 1), 3, (int64_t[]){batch, k, p});
    outputs[0] = tw_reshape(tw_matmul(a, b), nout, out_shape);
    return outputs[0] ? 1 : -1;
}

const tw_layer_class tw_layer_class_Dot = {
    .name = "Dot",
    .group = "Merging",
    .summary = "Dot product of two inputs along an axis of each (cosine with normalize)",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = dot_configure,
    .infer_n = dot_infer_n,
    .call_n = dot_call_n,
};
