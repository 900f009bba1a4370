/* Matrix products over the last two axes with broadcast batch axes and
 * optional transposes (the CPU's kernel: engine/backend_cpu/matmul.c). */
#include "internal.h"
#include "ops/geometry.h"

enum { ATTR_TRANSPOSE_A, ATTR_TRANSPOSE_B }; /* attrs.i */

static void matrix_dims(const tw_tensor *t, bool transposed, int64_t *rows, int64_t *cols)
{
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    *rows = transposed ? c : r;
    *cols = transposed ? r : c;
}

static int matmul_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *a = call->inputs[0], *b = call->inputs[1];
    bool ta = call->attrs->i[ATTR_TRANSPOSE_A], tb = call->attrs->i[ATTR_TRANSPOSE_B];
    char sa[160], sb[160];
    if (a->ndim < 2 || b->ndim < 2)
        return tw_error_set("matmul: operands need at least 2 dimensions: %s x %s",
                            tw_shape_str(a->ndim, a->shape, sa, sizeof sa), tw_shape_str(b->ndim, b->shape, sb, sizeof sb));
    if (a->dtype != b->dtype)
        return tw_error_set("matmul: dtypes differ: %s and %s", tw_dtype_name(a->dtype), tw_dtype_name(b->dtype));
    if (!tw_dtype_is_float(a->dtype))
        return tw_error_set("matmul: needs float32 or float64 operands, got %s", tw_dtype_name(a->dtype));
    int64_t m, k, k2, n;
    matrix_dims(a, ta, &m, &k);
    matrix_dims(b, tb, &k2, &n);
    if (k != k2)
        return tw_error_set("matmul: inner dimensions differ: %s%s x %s%s", tw_shape_str(a->ndim, a->shape, sa, sizeof sa),
                            ta ? "ᵀ" : "", tw_shape_str(b->ndim, b->shape, sb, sizeof sb), tb ? "ᵀ" : "");
    if (tw__broadcast_shapes("matmul", a->ndim - 2, a->shape, b->ndim - 2, b->shape, &out->ndim, out->shape) < 0)
        return tw_error_set("matmul: batch dimensions of %s and %s cannot be broadcast together",
                            tw_shape_str(a->ndim, a->shape, sa, sizeof sa), tw_shape_str(b->ndim, b->shape, sb, sizeof sb));
    out->shape[out->ndim++] = m;
    out->shape[out->ndim++] = n;
    out->dtype = a->dtype;
    return 0;
}

/* TensorFlow's MatMul gradients for the four transpose combinations. */
static int matmul_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *a = call->inputs[0], *b = call->inputs[1], *dc = g[0];
    bool ta = call->attrs->i[ATTR_TRANSPOSE_A], tb = call->attrs->i[ATTR_TRANSPOSE_B];
    tw_tensor *da = NULL, *db = NULL;
    if (needs[0])
        da = !ta ? tw_matmul_ex(dc, b, false, !tb) : (!tb ? tw_matmul_ex(b, dc, false, true) : tw_matmul_ex(b, dc, true, true));
    if (needs[1])
        db = !tb ? tw_matmul_ex(a, dc, !ta, false) : (!ta ? tw_matmul_ex(dc, a, true, false) : tw_matmul_ex(dc, a, true, true));
    if (da)
        gin[0] = tw__sum_to_shape(da, a->ndim, a->shape);
    if (db)
        gin[1] = tw__sum_to_shape(db, b->ndim, b->shape);
    return 0;
}

const tw_op_def tw_op_matmul = {
    .name = "matmul", .id = TW_OP_ID_matmul, .noutputs = 1, .ninputs = 2, .infer = matmul_infer,
    .backward = matmul_backward,
};

tw_tensor *tw_matmul_ex(tw_tensor *a, tw_tensor *b, bool transpose_a, bool transpose_b)
{
    tw_attrs attrs = {.i = {transpose_a, transpose_b}, .ni = 2};
    return tw_dispatch1(&tw_op_matmul, 2, (tw_tensor *const[]){a, b}, &attrs);
}

tw_tensor *tw_matmul(tw_tensor *a, tw_tensor *b)
{
    return tw_matmul_ex(a, b, false, false);
}

bool tw__blas_layout(const tw_tensor *t, bool *flip, int64_t *ld)
{
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    int64_t sr = t->strides[t->ndim - 2], sc = t->strides[t->ndim - 1];
    if ((sc == 1 || c == 1) && (sr >= c || r == 1)) {
        *flip = false;
        *ld = r == 1 ? (c > 0 ? c : 1) : sr;
        return *ld >= (c > 0 ? c : 1);
    }
    if ((sr == 1 || r == 1) && (sc >= r || c == 1)) {
        *flip = true;
        *ld = c == 1 ? (r > 0 ? r : 1) : sc;
        return *ld >= (r > 0 ? r : 1);
    }
    return false;
}
