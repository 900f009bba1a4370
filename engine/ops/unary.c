/* Elementwise unary ops: their gradient rules, written with engine ops (so
 * second derivatives work), and their op definitions and public functions,
 * made from the table in kernels/include/elementwise.h. */
#include <math.h>

#include "internal.h"

enum { ANY_NUMBER, FLOAT_ONLY, BOOL_ONLY };

static int check_kind(const tw_op_call *call, int kind)
{
    tw_dtype dt = call->inputs[0]->dtype;
    if (kind == FLOAT_ONLY && !tw_dtype_is_float(dt))
        return tw_error_set("%s: needs a float tensor, got %s", call->op->name, tw_dtype_name(dt));
    if (kind == BOOL_ONLY && dt != TW_BOOL)
        return tw_error_set("%s: needs a bool tensor, got %s", call->op->name, tw_dtype_name(dt));
    if (kind == ANY_NUMBER && dt == TW_BOOL)
        return tw_error_set("%s: not defined for bool tensors", call->op->name);
    return 0;
}

static int same_as_input(const tw_op_call *call, tw_desc *out)
{
    tw_tensor *x = call->inputs[0];
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        out->shape[d] = x->shape[d];
    return 0;
}

#define X call->inputs[0]
#define Y outs[0]
#define G g[0]
#define ALPHA call->attrs->f[0]
#define RULE(NAME, EXPR)                                                                                   \
    static int NAME##_backward(const tw_op_call *call, tw_tensor *const *outs, tw_tensor *const *g,        \
                               const bool *needs, tw_tensor **gin)                                         \
    {                                                                                                      \
        gin[0] = (EXPR);                                                                                   \
        return gin[0] ? 0 : -1;                                                                            \
    }

static tw_tensor *positive(tw_tensor *x) { return tw_greater(x, tw_scalar(0)); }

static tw_tensor *mish_derivative(tw_tensor *x)
{
    tw_tensor *t = tw_tanh(tw_softplus(x));
    return tw_add(t, tw_mul(tw_mul(x, tw_sigmoid(x)), tw_rsub_scalar(1, tw_square(t))));
}

RULE(neg, tw_neg(G))
RULE(abs, tw_mul(G, tw_sign(X)))
RULE(sign, tw_zeros_like(X))
RULE(exp, tw_mul(G, Y))
RULE(log, tw_div(G, X))
RULE(log1p, tw_div(G, tw_add_scalar(X, 1)))
RULE(expm1, tw_mul(G, tw_add_scalar(Y, 1)))
RULE(sqrt, tw_div(G, tw_mul_scalar(Y, 2)))
RULE(rsqrt, tw_mul(G, tw_mul_scalar(tw_mul(Y, tw_square(Y)), -0.5)))
RULE(square, tw_mul(G, tw_mul_scalar(X, 2)))
RULE(sin, tw_mul(G, tw_cos(X)))
RULE(cos, tw_neg(tw_mul(G, tw_sin(X))))
RULE(tanh, tw_mul(G, tw_rsub_scalar(1, tw_square(Y))))
RULE(erf, tw_mul(G, tw_mul_scalar(tw_exp(tw_neg(tw_square(X))), M_2_SQRTPI)))
RULE(sigmoid, tw_mul(G, tw_mul(Y, tw_rsub_scalar(1, Y))))
RULE(relu, tw_relu_grad(X, G))
RULE(leaky_relu, tw_where(positive(X), G, tw_mul_scalar(G, ALPHA)))
RULE(elu, tw_where(positive(X), G, tw_mul(G, tw_add_scalar(Y, ALPHA))))
/* d/dx x Phi(x) = Phi(x) + x phi(x) */
RULE(gelu, tw_mul(G, tw_add(tw_mul_scalar(tw_add_scalar(tw_erf(tw_mul_scalar(X, M_SQRT1_2)), 1), 0.5),
                            tw_mul(X, tw_mul_scalar(tw_exp(tw_mul_scalar(tw_square(X), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2)))))
RULE(softplus, tw_mul(G, tw_sigmoid(X)))
RULE(clip, tw_where(tw_logical_and(tw_greater_equal(X, tw_scalar(call->attrs->f[0])),
                                   tw_less_equal(X, tw_scalar(call->attrs->f[1]))),
                    G, tw_scalar(0)))

RULE(tan, tw_mul(G, tw_add_scalar(tw_square(Y), 1)))
RULE(atan, tw_div(G, tw_add_scalar(tw_square(X), 1)))
RULE(floor, tw_zeros_like(X))
RULE(ceil, tw_zeros_like(X))
RULE(round, tw_zeros_like(X))
RULE(log_sigmoid, tw_mul(G, tw_sigmoid(tw_neg(X))))
/* d/dx x / (1 + |x|) = 1 / (1 + |x|)^2 */
RULE(softsign, tw_div(G, tw_square(tw_add_scalar(tw_abs(X), 1))))
RULE(relu6, tw_where(tw_logical_and(positive(X), tw_less(X, tw_scalar(6))), G, tw_scalar(0)))
/* x relu6(x + 3) / 6: 0 below -3, (2x + 3) / 6 up to 3, 1 above */
RULE(hard_swish, tw_where(tw_less(X, tw_scalar(-3)), tw_scalar(0),
                          tw_where(tw_greater(X, tw_scalar(3)), G, tw_mul(G, tw_mul_scalar(tw_add_scalar(tw_mul_scalar(X, 2), 3), 1.0 / 6)))))
/* d/dx x tanh(sp(x)) = tanh(sp(x)) + x sigmoid(x) (1 - tanh(sp(x))^2) */
RULE(mish, tw_mul(G, mish_derivative(X)))

/* ---- op definitions, one per row of kernels/include/elementwise.h -------------------- */
#define KIND_NUMBER ANY_NUMBER
#define KIND_FLOAT FLOAT_ONLY
#define KIND_BOOL BOOL_ONLY
/* Bool ops (logical_not) have no gradient. */
#define BACKWARD_NUMBER(name) name##_backward
#define BACKWARD_FLOAT(name) name##_backward
#define BACKWARD_BOOL(name) NULL
#define FLAGS_NUMBER 0
#define FLAGS_FLOAT 0
#define FLAGS_BOOL TW_OP_NOT_DIFFERENTIABLE
/* Ops without attributes get their public function here; the others below. */
#define PUBLIC_0(name)                                                                                      \
    tw_tensor *tw_##name(tw_tensor *x)                                                                      \
    {                                                                                                       \
        return tw_dispatch1(&tw_op_##name, 1, &x, NULL);                                                    \
    }
#define PUBLIC_1(name)
#define PUBLIC_2(name)

#define UNARY_OP(NAME, TAKES, NATTRS, f, i)                                                                 \
    static int NAME##_infer(const tw_op_call *call, tw_desc *out)                                           \
    {                                                                                                       \
        return check_kind(call, KIND_##TAKES) < 0 ? -1 : same_as_input(call, out);                          \
    }                                                                                                       \
    const tw_op_def tw_op_##NAME = {                                                                        \
        .name = #NAME, .id = TW_OP_ID_##NAME, .noutputs = 1, .ninputs = 1, .flags = FLAGS_##TAKES,          \
        .elementwise = 1, .elementwise_op = TWK_UNARY_##NAME, .infer = NAME##_infer,                        \
        .backward = BACKWARD_##TAKES(NAME),                                                                 \
    };                                                                                                      \
    PUBLIC_##NATTRS(NAME)

TWK_UNARY_OPS(UNARY_OP)

tw_tensor *tw_leaky_relu(tw_tensor *x, double alpha)
{
    tw_attrs a = {.f = {alpha}, .nf = 1};
    return tw_dispatch1(&tw_op_leaky_relu, 1, &x, &a);
}

tw_tensor *tw_elu(tw_tensor *x, double alpha)
{
    tw_attrs a = {.f = {alpha}, .nf = 1};
    return tw_dispatch1(&tw_op_elu, 1, &x, &a);
}

tw_tensor *tw_clip(tw_tensor *x, double min_value, double max_value)
{
    if (min_value > max_value) {
        tw_error_set("clip: min_value %g is greater than max_value %g", min_value, max_value);
        return NULL;
    }
    tw_attrs a = {.f = {min_value, max_value}, .nf = 2};
    return tw_dispatch1(&tw_op_clip, 1, &x, &a);
}
