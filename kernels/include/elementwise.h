/* Every elementwise op, once: its name, which dtypes it takes, how many
 * float attributes it has and its scalar formula. Everything else is made
 * from these tables: the kernels' op numbers and loops (kernels/cpu), the
 * engine's op definitions, public functions and registry entries
 * (engine/ops/unary.c, binary.c, op_registry.c, tw/ops.h) and the fused
 * graph evaluator (engine/graph/graph_fuse.c). A new elementwise op is one row
 * here and its gradient rule in engine/ops/unary.c or binary.c.
 *
 * Formulas are C expressions over the element v (unary) or x and y
 * (binary), of type TWK_T, and a unary op's attributes p0, p1 (double).
 * TWK_F(fn) is the libm function of TWK_T's precision (expf for float),
 * TWK_C(c) a constant in it. Each row becomes one static inline function
 * per dtype, twk_NAME_f32, _f64, _i32, _i64, _u8 (bool is stored as u8):
 * float formulas for f32/f64, integer formulas for the rest. Under nvcc
 * TW_HOST_DEVICE is __host__ __device__, so the CUDA kernels (kernels/cuda)
 * call the same formulas.
 *
 * This header is installed next to tw/ops.h, which declares the public
 * functions from it; it includes nothing of the engine. */
#ifndef TWK_ELEMENTWISE_H
#define TWK_ELEMENTWISE_H

#include <math.h>
#include <stdint.h>

#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif

#ifndef TW_HOST_DEVICE
#ifdef __CUDACC__
#define TW_HOST_DEVICE __host__ __device__
#else
#define TW_HOST_DEVICE
#endif
#endif
#ifndef TWK_INLINE
#define TWK_INLINE static inline __attribute__((always_inline)) TW_HOST_DEVICE
#endif

/* ---- unary ops -------------------------------------------------------------
 * X(name, takes, nattrs, float formula, integer formula)
 * takes: NUMBER (every dtype but bool), FLOAT (float32, float64: the integer
 * formula is empty) or BOOL (bool only: the float formula is empty).
 * nattrs: float attributes (p0, p1); ops without any get a public
 * tw_NAME(x) made from the row, the others' functions are written by hand
 * in engine/ops/unary.c because they check their attributes.
 * NaN goes through relu, relu6, clip and the comparisons below as itself,
 * so NaN losses never hide. */
#define TWK_UNARY_OPS(X)                                                                                       \
    X(neg, NUMBER, 0, -v, -v)                                                                                  \
    X(abs, NUMBER, 0, TWK_F(fabs)(v), v < 0 ? -v : v)                                                          \
    X(sign, NUMBER, 0, v > 0 ? 1 : (v < 0 ? -1 : v), (v > 0) - (v < 0))                                       \
    X(exp, FLOAT, 0, TWK_F(exp)(v), )                                                                          \
    X(log, FLOAT, 0, TWK_F(log)(v), )                                                                          \
    X(log1p, FLOAT, 0, TWK_F(log1p)(v), )                                                                      \
    X(expm1, FLOAT, 0, TWK_F(expm1)(v), )                                                                      \
    X(sqrt, FLOAT, 0, TWK_F(sqrt)(v), )                                                                        \
    X(rsqrt, FLOAT, 0, 1 / TWK_F(sqrt)(v), )                                                                   \
    X(square, NUMBER, 0, v * v, v * v)                                                                         \
    X(sin, FLOAT, 0, TWK_F(sin)(v), )                                                                          \
    X(cos, FLOAT, 0, TWK_F(cos)(v), )                                                                          \
    X(tan, FLOAT, 0, TWK_F(tan)(v), )                                                                          \
    X(atan, FLOAT, 0, TWK_F(atan)(v), )                                                                        \
    X(tanh, FLOAT, 0, TWK_F(tanh)(v), )                                                                        \
    X(erf, FLOAT, 0, TWK_F(erf)(v), )                                                                          \
    /* Integers are their own floor, ceiling and rounding. */                                                 \
    X(floor, NUMBER, 0, TWK_F(floor)(v), v)                                                                    \
    X(ceil, NUMBER, 0, TWK_F(ceil)(v), v)                                                                      \
    /* Half to even, as TensorFlow's and PyTorch's round (rint in the default rounding mode). */             \
    X(round, NUMBER, 0, TWK_F(rint)(v), v)                                                                     \
    X(sigmoid, FLOAT, 0, v >= 0 ? 1 / (1 + TWK_F(exp)(-v)) : TWK_F(exp)(v) / (1 + TWK_F(exp)(v)), )           \
    /* log(sigmoid(v)) = -softplus(-v), without overflow either side. */                                      \
    X(log_sigmoid, FLOAT, 0, (v < 0 ? v : 0) - TWK_F(log1p)(TWK_F(exp)(-TWK_F(fabs)(v))), )                   \
    X(softsign, FLOAT, 0, v / (1 + TWK_F(fabs)(v)), )                                                          \
    X(relu, NUMBER, 0, v < 0 ? 0 : v, v < 0 ? 0 : v)                                                           \
    X(relu6, NUMBER, 0, v < 0 ? 0 : (v > 6 ? 6 : v), v < 0 ? 0 : (v > 6 ? 6 : v))                             \
    /* v * relu6(v + 3) / 6, as Keras' and PyTorch's hard_swish. */                                           \
    X(hard_swish, FLOAT, 0, v * (v + 3 < 0 ? 0 : (v + 3 > 6 ? 6 : v + 3)) / 6, )                              \
    X(leaky_relu, FLOAT, 1, v < 0 ? TWK_C(p0) * v : v, )                                                       \
    X(elu, FLOAT, 1, v < 0 ? TWK_C(p0) * TWK_F(expm1)(v) : v, )                                                \
    X(gelu, FLOAT, 0, TWK_C(0.5) * v * (1 + TWK_F(erf)(v * TWK_C(M_SQRT1_2))), )                               \
    X(softplus, FLOAT, 0, (v > 0 ? v : 0) + TWK_F(log1p)(TWK_F(exp)(-TWK_F(fabs)(v))), )                      \
    /* v * tanh(softplus(v)) */                                                                                \
    X(mish, FLOAT, 0, v * TWK_F(tanh)((v > 0 ? v : 0) + TWK_F(log1p)(TWK_F(exp)(-TWK_F(fabs)(v)))), )         \
    /* Integers compare with the bounds as written (a bound need not be an integer). */                       \
    X(clip, NUMBER, 2, v < TWK_C(p0) ? TWK_C(p0) : (v > TWK_C(p1) ? TWK_C(p1) : v),                            \
      v < p0 ? (TWK_T)p0 : (v > p1 ? (TWK_T)p1 : v))                                                          \
    X(logical_not, BOOL, 0, , !v)

/* ---- binary ops ------------------------------------------------------------
 * X(name, takes, float formula, integer formula); inputs broadcast.
 * takes: ARITH (every dtype but bool, the result in it), FLOAT (float32,
 * float64), COMPARE (any dtype, a bool result; one formula for all) or
 * LOGICAL (bool, a bool result).
 * Integer div and floormod floor, as Python's // and % and TensorFlow's
 * floordiv and floormod (C truncates); the engine refuses a zero divisor. */
#define TWK_BINARY_OPS(X)                                                                                      \
    X(add, ARITH, x + y, x + y)                                                                                \
    X(sub, ARITH, x - y, x - y)                                                                                \
    X(mul, ARITH, x * y, x * y)                                                                                \
    X(div, ARITH, x / y, twk_floor_div(x, y))                                                                  \
    /* The remainder with the divisor's sign: x - floor(x / y) * y. */                                         \
    X(floormod, ARITH, TWK_F(twk_floor_fmod)(x, y), twk_floor_mod(x, y))                                      \
    X(pow, FLOAT, TWK_F(pow)(x, y), )                                                                          \
    X(maximum, ARITH, (x > y || x != x) ? x : y, x > y ? x : y)                                                \
    X(minimum, ARITH, (x < y || x != x) ? x : y, x < y ? x : y)                                                \
    /* relu's backward in one pass: y where x > 0, else 0. */                                                  \
    X(relu_grad, ARITH, x > 0 ? y : 0, x > 0 ? y : 0)                                                          \
    X(equal, COMPARE, x == y, )                                                                                \
    X(not_equal, COMPARE, x != y, )                                                                            \
    X(less, COMPARE, x < y, )                                                                                  \
    X(less_equal, COMPARE, x <= y, )                                                                           \
    X(greater, COMPARE, x > y, )                                                                               \
    X(greater_equal, COMPARE, x >= y, )                                                                        \
    X(logical_and, LOGICAL, , (x != 0) && (y != 0))                                                            \
    X(logical_or, LOGICAL, , (x != 0) || (y != 0))

/* The kernels' op numbers: TWK_UNARY_neg, ..., TWK_BINARY_add, ... */
#define TWK__UNARY_ENUM(name, ...) TWK_UNARY_##name,
#define TWK__BINARY_ENUM(name, ...) TWK_BINARY_##name,
typedef enum { TWK_UNARY_OPS(TWK__UNARY_ENUM) TWK_UNARY_COUNT } twk_unary_op;
typedef enum { TWK_BINARY_OPS(TWK__BINARY_ENUM) TWK_BINARY_COUNT } twk_binary_op;

/* ---- helpers the formulas call ------------------------------------------------ */
/* Floored integer division; x / 0 is 0 here (the engine refuses it before)
 * and x / -1 negates without trapping on the smallest integer. */
TWK_INLINE int64_t twk_floor_div(int64_t x, int64_t y)
{
    if (y == 0)
        return 0;
    if (y == -1)
        return (int64_t)(0 - (uint64_t)x);
    return x / y - (x % y != 0 && ((x < 0) != (y < 0)));
}
TWK_INLINE int64_t twk_floor_mod(int64_t x, int64_t y)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
/* fmod's remainder moved to the divisor's sign (NaN for y = 0, as fmod). */
TWK_INLINE double twk_floor_fmod(double x, double y)
{
    double r = fmod(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
TWK_INLINE float twk_floor_fmodf(float x, float y)
{
    float r = fmodf(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

/* ---- one function per row and dtype ------------------------------------------- */
#define TWK__CAT3_(a, b, c) a##b##c
#define TWK__CAT3(a, b, c) TWK__CAT3_(a, b, c)
/* twk_NAME_SFX for the dtype being made (TWK__SFX). */
#define TWK_FN_NAME(name) TWK__CAT3(twk_, name, TWK__SFX)
#define TWK_C(c) ((TWK_T)(c))

/* Which rows a float or an integer dtype gets. */
#define TWK__FLOAT_NUMBER(...) __VA_ARGS__
#define TWK__FLOAT_FLOAT(...) __VA_ARGS__
#define TWK__FLOAT_BOOL(...)
#define TWK__FLOAT_ARITH(...) __VA_ARGS__
#define TWK__FLOAT_COMPARE(...) __VA_ARGS__
#define TWK__FLOAT_LOGICAL(...)
#define TWK__INT_NUMBER(...) __VA_ARGS__
#define TWK__INT_FLOAT(...)
#define TWK__INT_BOOL(...) __VA_ARGS__
#define TWK__INT_ARITH(...) __VA_ARGS__
#define TWK__INT_COMPARE(...) __VA_ARGS__
#define TWK__INT_LOGICAL(...) __VA_ARGS__
/* Whether a binary op's result is bool (stored as uint8_t), and its C type. */
#define TWK_BOOL_RESULT_ARITH 0
#define TWK_BOOL_RESULT_FLOAT 0
#define TWK_BOOL_RESULT_COMPARE 1
#define TWK_BOOL_RESULT_LOGICAL 1
#define TWK__OUT_ARITH TWK_T
#define TWK__OUT_FLOAT TWK_T
#define TWK__OUT_COMPARE uint8_t
#define TWK__OUT_LOGICAL uint8_t

#define TWK__UNARY_FLOAT(name, takes, nattrs, f, i)                                                            \
    TWK__FLOAT_##takes(TWK_INLINE TWK_T TWK_FN_NAME(name)(TWK_T v, double p0, double p1) {       \
        (void)p0, (void)p1;                                                                                    \
        return (TWK_T)(f);                                                                                     \
    })
#define TWK__UNARY_INT(name, takes, nattrs, f, i)                                                              \
    TWK__INT_##takes(TWK_INLINE TWK_T TWK_FN_NAME(name)(TWK_T v, double p0, double p1) {         \
        (void)p0, (void)p1;                                                                                    \
        return (TWK_T)(i);                                                                                     \
    })
#define TWK__BINARY_FLOAT(name, takes, f, i)                                                                   \
    TWK__FLOAT_##takes(TWK_INLINE TWK__OUT_##takes TWK_FN_NAME(name)(TWK_T x, TWK_T y) {                       \
        return (TWK__OUT_##takes)(f);                                                                          \
    })
/* A COMPARE row's one formula serves integers too. */
#define TWK__BINARY_INT(name, takes, f, i)                                                                     \
    TWK__INT_##takes(TWK_INLINE TWK__OUT_##takes TWK_FN_NAME(name)(TWK_T x, TWK_T y) {                         \
        return (TWK__OUT_##takes)(TWK__INT_FORMULA_##takes(f, i));                                             \
    })
#define TWK__INT_FORMULA_ARITH(f, i) i
#define TWK__INT_FORMULA_COMPARE(f, i) f
#define TWK__INT_FORMULA_LOGICAL(f, i) i

#define TWK_T float
#define TWK__SFX _f32
#define TWK_F(fn) fn##f
TWK_UNARY_OPS(TWK__UNARY_FLOAT)
TWK_BINARY_OPS(TWK__BINARY_FLOAT)
#undef TWK_T
#undef TWK__SFX
#undef TWK_F

#define TWK_T double
#define TWK__SFX _f64
#define TWK_F(fn) fn
TWK_UNARY_OPS(TWK__UNARY_FLOAT)
TWK_BINARY_OPS(TWK__BINARY_FLOAT)
#undef TWK_T
#undef TWK__SFX
#undef TWK_F

#define TWK_T int32_t
#define TWK__SFX _i32
TWK_UNARY_OPS(TWK__UNARY_INT)
TWK_BINARY_OPS(TWK__BINARY_INT)
#undef TWK_T
#undef TWK__SFX

#define TWK_T int64_t
#define TWK__SFX _i64
TWK_UNARY_OPS(TWK__UNARY_INT)
TWK_BINARY_OPS(TWK__BINARY_INT)
#undef TWK_T
#undef TWK__SFX

#define TWK_T uint8_t
#define TWK__SFX _u8
TWK_UNARY_OPS(TWK__UNARY_INT)
TWK_BINARY_OPS(TWK__BINARY_INT)
#undef TWK_T
#undef TWK__SFX

#endif
