/* Joining and cutting along one axis: concat (a primitive with its own
 * kernel), stack (expand_dims + concat), split and split_sizes (slices:
 * views of their input, no copy). Every dtype; any number of inputs. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define IN(i) call->inputs[i]

/* ---- concat ------------------------------------------------------------------
 * attrs: i[0] = axis, already normalised to [0, ndim). */

/* Check that every input matches the first except along axis (skip_axis < 0:
 * everywhere). Messages name the op, both shapes and the inputs. */
static int check_same_shapes(const char *op, int n, tw_tensor *const *ts, int skip_axis)
{
    const tw_tensor *a = ts[0];
    for (int i = 1; i < n; i++) {
        const tw_tensor *b = ts[i];
        if (b->dtype != a->dtype)
            return tw_error_set("%s: dtypes differ: %s (input 0) and %s (input %d); cast with tw_cast()", op,
                                tw_dtype_name(a->dtype), tw_dtype_name(b->dtype), i);
        bool same = b->ndim == a->ndim;
        for (int d = 0; same && d < a->ndim; d++)
            same = d == skip_axis || a->shape[d] == b->shape[d];
        if (same)
            continue;
        char sa[160], sb[160];
        tw_shape_str(a->ndim, a->shape, sa, sizeof sa);
        tw_shape_str(b->ndim, b->shape, sb, sizeof sb);
        if (skip_axis < 0)
            return tw_error_set("%s: shapes %s and %s differ (inputs 0 and %d); all must be equal", op, sa, sb, i);
        if (b->ndim != a->ndim)
            return tw_error_set("%s: shapes %s and %s differ in rank, concatenating along axis %d (inputs 0 and %d)",
                                op, sa, sb, skip_axis, i);
        return tw_error_set("%s: shapes %s and %s differ outside axis %d (inputs 0 and %d)", op, sa, sb, skip_axis,
                            i);
    }
    return 0;
}

static int concat_infer(const tw_op_call *call, tw_desc *out)
{
    if (call->ninputs < 1)
        return tw_error_set("concat: needs at least one tensor");
    const tw_tensor *first = IN(0);
    int64_t axis = call->attrs->i[0];
    if (axis < 0 || axis >= first->ndim)
        return tw_error_set("concat: axis %lld is out of range for tensors of rank %d", (long long)axis, first->ndim);
    if (check_same_shapes("concat", call->ninputs, call->inputs, (int)axis) < 0)
        return -1;
    out->dtype = first->dtype;
    out->ndim = first->ndim;
    memcpy(out->shape, first->shape, sizeof(int64_t) * (size_t)first->ndim);
    int64_t total = 0;
    for (int i = 0; i < call->ninputs; i++)
        if (__builtin_add_overflow(total, IN(i)->shape[axis], &total))
            return tw_error_set("concat: the sizes along axis %lld add up past INT64_MAX", (long long)axis);
    out->shape[axis] = total;
    return 0;
}

/* The gradient of each input is its block of the output's gradient. */
static int concat_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    int axis = (int)call->attrs->i[0];
    int64_t at = 0;
    for (int i = 0; i < call->ninputs; i++) {
        int64_t len = IN(i)->shape[axis];
        if (needs[i] && !(gin[i] = tw_slice(g[0], axis, at, at + len, 1)))
            return -1;
        at += len;
    }
    return 0;
}

const tw_op_def tw_op_concat = {
    .id = TW_OP_ID_concat,
    .name = "concat", .noutputs = 1, .ninputs = TW_OP_VARIADIC, .infer = concat_infer,
    .backward = concat_backward,
};

static int check_list(const char *op, int n, tw_tensor *const *tensors)
{
    if (n < 1 || !tensors)
        return tw_error_set("%s: needs at least one tensor, got %d", op, tensors ? n : 0);
    return tw__check_inputs(op, n, tensors);
}

tw_tensor *tw_concat(int n, tw_tensor *const *tensors, int axis)
{
    if (check_list("concat", n, tensors) < 0)
        return NULL;
    int ndim = tensors[0]->ndim;
    if (ndim == 0) {
        tw_error_set("concat: cannot concatenate scalars (rank 0); use tw_stack");
        return NULL;
    }
    int a;
    if (tw__normalize_axis("concat", axis, ndim, &a) < 0)
        return NULL;
    tw_attrs attrs = {.i = {a}, .ni = 1};
    return tw_dispatch1(&tw_op_concat, n, tensors, &attrs);
}

/* ---- stack: a new axis on each input, then concat --------------------------- */
tw_tensor *tw_stack(int n, tw_tensor *const *tensors, int axis)
{
    if (check_list("stack", n, tensors) < 0)
        return NULL;
    int ndim = tensors[0]->ndim;
    if (ndim + 1 > TW_MAX_DIMS) {
        tw__shape_error("stack", "cannot add an axis to tensors of the largest rank, shape", tensors[0]);
        return NULL;
    }
    int a = axis < 0 ? axis + ndim + 1 : axis;
    if (a < 0 || a > ndim) {
        tw_error_set("stack: axis %d is out of range for stacking tensors of rank %d (allowed %d..%d)", axis, ndim,
                     -(ndim + 1), ndim);
        return NULL;
    }
    if (check_same_shapes("stack", n, tensors, -1) < 0)
        return NULL;
    tw_tensor **expanded = malloc(sizeof *expanded * (size_t)n);
    if (!expanded) {
        tw_error_set("stack: out of memory for %d tensors", n);
        return NULL;
    }
    tw_scope_begin();
    tw_tensor *result = NULL;
    int i = 0;
    for (; i < n; i++)
        if (!(expanded[i] = tw_expand_dims(tensors[i], a)))
            break;
    if (i == n)
        result = tw_concat(n, expanded, a);
    free(expanded);
    return tw__scope_return(result);
}

/* ---- split: slices, so the parts are views of x ------------------------------ */
static int split_views(tw_tensor *x, int n, const int64_t *sizes, int axis, tw_tensor **outs)
{
    tw_scope_begin();
    int64_t at = 0;
    int made = 0;
    for (; made < n; made++) {
        if (!(outs[made] = tw_slice(x, axis, at, at + sizes[made], 1)))
            break;
        at += sizes[made];
    }
    bool ok = made == n;
    for (int i = 0; ok && i < n; i++)
        tw_tensor_ref(outs[i]); /* outlive the scope closed below */
    tw_scope_end();
    for (int i = 0; i < n; i++) {
        if (!ok)
            outs[i] = NULL;
        else
            tw__track(outs[i]);
    }
    return ok ? 0 : -1;
}

static int split_prepare(const char *op, tw_tensor *x, int n, int axis, tw_tensor **outs, int *a)
{
    if (!outs)
        return tw_error_set("%s: outs is NULL", op);
    for (int i = 0; i < n; i++)
        outs[i] = NULL;
    if (tw__check_inputs(op, 1, &x) < 0)
        return -1;
    if (n < 1)
        return tw_error_set("%s: the number of parts must be positive, got %d", op, n);
    if (x->ndim == 0)
        return tw__shape_error(op, "cannot split a scalar, shape", x);
    return tw__normalize_axis(op, axis, x->ndim, a);
}

int tw_split(tw_tensor *x, int n, int axis, tw_tensor **outs)
{
    int a;
    if (split_prepare("split", x, n, axis, outs, &a) < 0)
        return -1;
    int64_t len = x->shape[a];
    if (len % n != 0) {
        char s[160];
        return tw_error_set("split: axis %d of size %lld does not divide into %d equal parts (shape %s)", a,
                            (long long)len, n, tw_shape_str(x->ndim, x->shape, s, sizeof s));
    }
    int64_t *sizes = malloc(sizeof *sizes * (size_t)n);
    if (!sizes)
        return tw_error_set("split: out of memory for %d parts", n);
    for (int i = 0; i < n; i++)
        sizes[i] = len / n;
    int rc = split_views(x, n, sizes, a, outs);
    free(sizes);
    return rc;
}

int tw_split_sizes(tw_tensor *x, int n, const int64_t *sizes, int axis, tw_tensor **outs)
{
    int a;
    if (split_prepare("split_sizes", x, n, axis, outs, &a) < 0)
        return -1;
    if (!sizes)
        return tw_error_set("split_sizes: sizes is NULL");
    char s[160];
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return tw_error_set("split_sizes: size %lld at position %d is negative (shape %s, axis %d)",
                                (long long)sizes[i], i, tw_shape_str(x->ndim, x->shape, s, sizeof s), a);
        total = sizes[i] > INT64_MAX - total ? INT64_MAX : total + sizes[i];
    }
    if (total != x->shape[a])
        return tw_error_set("split_sizes: sizes sum to %lld but axis %d of shape %s has length %lld",
                            (long long)total, a, tw_shape_str(x->ndim, x->shape, s, sizeof s),
                            (long long)x->shape[a]);
    return split_views(x, n, sizes, a, outs);
}
