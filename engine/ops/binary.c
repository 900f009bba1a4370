/* Elementwise binary ops with NumPy broadcasting: arithmetic, comparisons
 * and logical ops (their gradient rules here, the op definitions and public
 * functions made from the table in kernels/include/elementwise.h), and where. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* A C number meeting an integer or bool tensor must be a value of that
 * dtype: truncating 2.5 to 2 (or -0.5 to 0 in a comparison) would silently
 * compute something else than the user wrote. */
static int check_representable(const char *op, double v, tw_dtype dtype)
{
    double lo, hi;
    switch (dtype) {
    case TW_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case TW_INT64: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
    case TW_UINT8: lo = 0; hi = 255; break;
    case TW_BOOL: lo = 0; hi = 1; break;
    default: return 0; /* float dtypes take any value */
    }
    if (v == floor(v) && v >= lo && v <= hi)
        return 0;
    return tw_error_set("%s: the scalar %g cannot be represented as %s; cast the tensor to a float dtype first", op, v,
                        tw_dtype_name(dtype));
}

/* Inputs must share a dtype; a weak scalar (tw_scalar) takes the other
 * side's dtype through a recorded cast, so gradients still reach it. */
static int unify_dtypes(const char *op, tw_tensor **a, tw_tensor **b)
{
    if ((*a)->dtype == (*b)->dtype)
        return 0;
    if ((*b)->weak && !(*a)->weak) {
        if (check_representable(op, tw_tensor_item(*b), (*a)->dtype) < 0)
            return -1;
        return (*b = tw_cast(*b, (*a)->dtype)) ? 0 : -1;
    }
    if ((*a)->weak && !(*b)->weak) {
        if (check_representable(op, tw_tensor_item(*a), (*b)->dtype) < 0)
            return -1;
        return (*a = tw_cast(*a, (*b)->dtype)) ? 0 : -1;
    }
    char sa[160], sb[160];
    return tw_error_set("%s: dtypes differ: %s %s and %s %s; cast one with tw_cast()", op, tw_dtype_name((*a)->dtype),
                        tw_shape_str((*a)->ndim, (*a)->shape, sa, sizeof sa), tw_dtype_name((*b)->dtype),
                        tw_shape_str((*b)->ndim, (*b)->shape, sb, sizeof sb));
}

static int infer_broadcast(const tw_op_call *call, tw_desc *out, tw_dtype dtype)
{
    tw_tensor *a = call->inputs[call->ninputs - 2], *b = call->inputs[call->ninputs - 1];
    out->dtype = dtype;
    return tw__broadcast_shapes(call->op->name, a->ndim, a->shape, b->ndim, b->shape, &out->ndim, out->shape);
}

static int infer_arith(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *a = call->inputs[0];
    if (a->dtype == TW_BOOL)
        return tw_error_set("%s: arithmetic on bool tensors; cast them first", call->op->name);
    return infer_broadcast(call, out, a->dtype);
}

static int infer_float_arith(const tw_op_call *call, tw_desc *out)
{
    if (!tw_dtype_is_float(call->inputs[0]->dtype))
        return tw_error_set("%s: needs float tensors, got %s", call->op->name,
                            tw_dtype_name(call->inputs[0]->dtype));
    return infer_arith(call, out);
}

static int infer_compare(const tw_op_call *call, tw_desc *out)
{
    return infer_broadcast(call, out, TW_BOOL);
}

static int infer_logical(const tw_op_call *call, tw_desc *out)
{
    if (call->inputs[0]->dtype != TW_BOOL)
        return tw_error_set("%s: needs bool tensors, got %s", call->op->name, tw_dtype_name(call->inputs[0]->dtype));
    return infer_broadcast(call, out, TW_BOOL);
}

/* ---- backward rules ------------------------------------------------------ */
#define IN(i) call->inputs[i]
#define UNBROADCAST(g, i) tw__sum_to_shape((g), IN(i)->ndim, IN(i)->shape)

static int add_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    if (needs[0]) gin[0] = UNBROADCAST(g[0], 0);
    if (needs[1]) gin[1] = UNBROADCAST(g[0], 1);
    return 0;
}

static int sub_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    if (needs[0]) gin[0] = UNBROADCAST(g[0], 0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_neg(g[0]), 1);
    return 0;
}

static int mul_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    if (needs[0]) gin[0] = UNBROADCAST(tw_mul(g[0], IN(1)), 0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_mul(g[0], IN(0)), 1);
    return 0;
}

static int div_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    tw_tensor *ga = tw_div(g[0], IN(1));
    if (needs[0]) gin[0] = UNBROADCAST(ga, 0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_neg(tw_mul(ga, tw_div(IN(0), IN(1)))), 1);
    return 0;
}

/* floormod(a, b) = a - floor(a / b) b: slope 1 in a, -floor(a / b) in b. */
static int floormod_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                             tw_tensor **gin)
{
    if (needs[0]) gin[0] = UNBROADCAST(g[0], 0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_neg(tw_mul(g[0], tw_floor(tw_div(IN(0), IN(1))))), 1);
    return 0;
}

static int pow_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                        tw_tensor **gin)
{
    tw_tensor *a = IN(0), *b = IN(1);
    if (needs[0]) gin[0] = UNBROADCAST(tw_mul(g[0], tw_mul(b, tw_pow(a, tw_sub_scalar(b, 1)))), 0);
    if (needs[1]) {
        /* d/db a^b = a^b log a, taken as 0 where a <= 0 (TensorFlow's choice). */
        tw_tensor *positive = tw_greater(a, tw_scalar(0));
        tw_tensor *safe_a = tw_where(positive, a, tw_scalar(1));
        tw_tensor *log_a = tw_where(positive, tw_log(safe_a), tw_scalar(0));
        gin[1] = UNBROADCAST(tw_mul(g[0], tw_mul(outs[0], log_a)), 1);
    }
    return 0;
}

/* maximum/minimum: the gradient goes to the chosen side (a on ties). */
static int select_backward(const tw_op_call *call, tw_tensor *a_chosen, tw_tensor *const *g, const bool *needs,
                           tw_tensor **gin)
{
    tw_tensor *zero = tw_scalar(0);
    if (needs[0]) gin[0] = UNBROADCAST(tw_where(a_chosen, g[0], zero), 0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_where(a_chosen, zero, g[0]), 1);
    return 0;
}

static int maximum_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    return select_backward(call, tw_greater_equal(IN(0), IN(1)), g, needs, gin);
}

static int minimum_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                            tw_tensor **gin)
{
    return select_backward(call, tw_less_equal(IN(0), IN(1)), g, needs, gin);
}

/* relu_grad(x, g) = g where x > 0, else 0: piecewise constant in x, linear in g. */
static int relu_grad_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                              tw_tensor **gin)
{
    if (needs[0]) gin[0] = tw_zeros_like(IN(0));
    if (needs[1]) gin[1] = UNBROADCAST(tw_relu_grad(IN(0), g[0]), 1);
    return 0;
}

/* ---- op definitions and public functions, one per row of kernels/include/elementwise.h ---- */
#define INFER_ARITH infer_arith
#define INFER_FLOAT infer_float_arith
#define INFER_COMPARE infer_compare
#define INFER_LOGICAL infer_logical
/* Comparisons and logical ops have no gradient. */
#define BACKWARD_ARITH(name) name##_backward
#define BACKWARD_FLOAT(name) name##_backward
#define BACKWARD_COMPARE(name) NULL
#define BACKWARD_LOGICAL(name) NULL
#define FLAGS_ARITH 0
#define FLAGS_FLOAT 0
#define FLAGS_COMPARE TW_OP_NOT_DIFFERENTIABLE
#define FLAGS_LOGICAL TW_OP_NOT_DIFFERENTIABLE

/* Two weak scalars give a weak scalar, so C-number arithmetic stays flexible. */
static tw_tensor *weak_result(tw_tensor *r, const tw_tensor *a, const tw_tensor *b)
{
    if (r && a->weak && b->weak && r->ndim == 0 && tw_dtype_is_float(r->dtype))
        r->weak = true;
    return r;
}

#define BINARY_OP(NAME, TAKES, f, i)                                                                 \
    const tw_op_def tw_op_##NAME = {                                                                 \
        .name = #NAME, .id = TW_OP_ID_##NAME, .noutputs = 1, .ninputs = 2, .flags = FLAGS_##TAKES,   \
        .elementwise = 2, .elementwise_op = TWK_BINARY_##NAME, .infer = INFER_##TAKES,               \
        .backward = BACKWARD_##TAKES(NAME),                                                          \
    };                                                                                               \
    tw_tensor *tw_##NAME(tw_tensor *a, tw_tensor *b)                                                 \
    {                                                                                                \
        if (tw__check_inputs(#NAME, 2, (tw_tensor *const[]){a, b}) < 0)                              \
            return NULL;                                                                             \
        if (a->dtype == b->dtype)                                                                    \
            return weak_result(tw_dispatch1(&tw_op_##NAME, 2, (tw_tensor *const[]){a, b}, NULL), a, b); \
        tw_scope_begin();                                                                            \
        tw_tensor *r = unify_dtypes(#NAME, &a, &b) < 0                                               \
                           ? NULL                                                                    \
                           : tw_dispatch1(&tw_op_##NAME, 2, (tw_tensor *const[]){a, b}, NULL);       \
        return tw__scope_return(r);                                                                  \
    }

TWK_BINARY_OPS(BINARY_OP)

/* ---- with a C number ------------------------------------------------------ */
static tw_tensor *with_scalar(const char *name, tw_tensor *(*op)(tw_tensor *, tw_tensor *), tw_tensor *a, double s,
                              bool scalar_first)
{
    if (tw__check_inputs(name, 1, &a) < 0 || check_representable(name, s, a->dtype) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *k = tw_scalar_of(s, a->dtype);
    return tw__scope_return(scalar_first ? op(k, a) : op(a, k));
}

tw_tensor *tw_add_scalar(tw_tensor *a, double s) { return with_scalar("add_scalar", tw_add, a, s, false); }
tw_tensor *tw_sub_scalar(tw_tensor *a, double s) { return with_scalar("sub_scalar", tw_sub, a, s, false); }
tw_tensor *tw_mul_scalar(tw_tensor *a, double s) { return with_scalar("mul_scalar", tw_mul, a, s, false); }
tw_tensor *tw_div_scalar(tw_tensor *a, double s) { return with_scalar("div_scalar", tw_div, a, s, false); }
tw_tensor *tw_pow_scalar(tw_tensor *a, double s) { return with_scalar("pow_scalar", tw_pow, a, s, false); }
tw_tensor *tw_rsub_scalar(double s, tw_tensor *a) { return with_scalar("rsub_scalar", tw_sub, a, s, true); }
tw_tensor *tw_rdiv_scalar(double s, tw_tensor *a) { return with_scalar("rdiv_scalar", tw_div, a, s, true); }

/* ---- where ------------------------------------------------------------------ */
static int where_infer(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *c = IN(0), *a = IN(1), *b = IN(2);
    if (c->dtype != TW_BOOL)
        return tw_error_set("where: the condition must be bool, got %s", tw_dtype_name(c->dtype));
    int n;
    int64_t shape[TW_MAX_DIMS];
    if (tw__broadcast_shapes("where", c->ndim, c->shape, a->ndim, a->shape, &n, shape) < 0)
        return -1;
    if (tw__broadcast_shapes("where", n, shape, b->ndim, b->shape, &out->ndim, out->shape) < 0)
        return -1;
    out->dtype = a->dtype;
    return 0;
}

static int where_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g, const bool *needs,
                          tw_tensor **gin)
{
    tw_tensor *zero = tw_scalar(0);
    if (needs[1]) gin[1] = UNBROADCAST(tw_where(IN(0), g[0], zero), 1);
    if (needs[2]) gin[2] = UNBROADCAST(tw_where(IN(0), zero, g[0]), 2);
    return 0;
}

const tw_op_def tw_op_where = {
    .name = "where", .id = TW_OP_ID_where, .noutputs = 1, .ninputs = 3, .infer = where_infer,
    .backward = where_backward,
};

tw_tensor *tw_where(tw_tensor *cond, tw_tensor *a, tw_tensor *b)
{
    if (tw__check_inputs("where", 3, (tw_tensor *const[]){cond, a, b}) < 0)
        return NULL;
    tw_scope_begin();
    tw_tensor *r = unify_dtypes("where", &a, &b) < 0 ? NULL : tw_dispatch1(&tw_op_where, 3, (tw_tensor *const[]){cond, a, b}, NULL);
    return tw__scope_return(r);
}
