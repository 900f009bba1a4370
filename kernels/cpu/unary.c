/* Elementwise unary kernels (math functions and activations). */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"

#define UNARY_ROW(T, EXPR)                                                          \
    do {                                                                            \
        const T *px = x;                                                            \
        T *po = out;                                                                \
        if (sx == 1 && so == 1) {                                                   \
            for (int64_t i = 0; i < n; i++) { T v = px[i]; po[i] = (T)(EXPR); }    \
        } else {                                                                    \
            for (int64_t i = 0; i < n; i++) { T v = px[i * sx]; po[i * so] = (T)(EXPR); } \
        }                                                                           \
    } while (0)

/* Float ops, written once for float and double through F (the libm suffix). */
#define FLOAT_CASES(T, F)                                                                          \
    case TWK_NEG: UNARY_ROW(T, -v); return;                                                        \
    case TWK_ABS: UNARY_ROW(T, fabs##F(v)); return;                                                \
    case TWK_SIGN: UNARY_ROW(T, v > 0 ? 1 : (v < 0 ? -1 : v)); return;                             \
    case TWK_EXP: UNARY_ROW(T, exp##F(v)); return;                                                 \
    case TWK_LOG: UNARY_ROW(T, log##F(v)); return;                                                 \
    case TWK_LOG1P: UNARY_ROW(T, log1p##F(v)); return;                                             \
    case TWK_EXPM1: UNARY_ROW(T, expm1##F(v)); return;                                             \
    case TWK_SQRT: UNARY_ROW(T, sqrt##F(v)); return;                                               \
    case TWK_RSQRT: UNARY_ROW(T, 1 / sqrt##F(v)); return;                                          \
    case TWK_SQUARE: UNARY_ROW(T, v * v); return;                                                  \
    case TWK_SIN: UNARY_ROW(T, sin##F(v)); return;                                                 \
    case TWK_COS: UNARY_ROW(T, cos##F(v)); return;                                                 \
    case TWK_TANH: UNARY_ROW(T, tanh##F(v)); return;                                               \
    case TWK_ERF: UNARY_ROW(T, erf##F(v)); return;                                                 \
    case TWK_SIGMOID: UNARY_ROW(T, v >= 0 ? 1 / (1 + exp##F(-v)) : exp##F(v) / (1 + exp##F(v))); return; \
    /* Written so NaN falls through to v: a NaN must survive relu, or NaN losses hide. */          \
    case TWK_RELU: UNARY_ROW(T, v < 0 ? 0 : v); return;                                            \
    case TWK_LEAKY_RELU: UNARY_ROW(T, v < 0 ? (T)p0 * v : v); return;                              \
    case TWK_ELU: UNARY_ROW(T, v < 0 ? (T)p0 * expm1##F(v) : v); return;                           \
    case TWK_GELU: UNARY_ROW(T, (T)0.5 * v * (1 + erf##F(v * (T)M_SQRT1_2))); return;              \
    case TWK_SOFTPLUS: UNARY_ROW(T, (v > 0 ? v : 0) + log1p##F(exp##F(-fabs##F(v)))); return;     \
    case TWK_CLIP: UNARY_ROW(T, v < (T)p0 ? (T)p0 : (v > (T)p1 ? (T)p1 : v)); return;              \
    default: return;

#define INT_CASES(T)                                                                                \
    case TWK_NEG: UNARY_ROW(T, -v); return;                                                         \
    case TWK_ABS: UNARY_ROW(T, v < 0 ? -v : v); return;                                             \
    case TWK_SIGN: UNARY_ROW(T, (v > 0) - (v < 0)); return;                                         \
    case TWK_SQUARE: UNARY_ROW(T, v * v); return;                                                   \
    case TWK_RELU: UNARY_ROW(T, v > 0 ? v : 0); return;                                             \
    case TWK_CLIP: UNARY_ROW(T, v < p0 ? (T)p0 : (v > p1 ? (T)p1 : v)); return;                     \
    case TWK_NOT: UNARY_ROW(T, !v); return;                                                         \
    default: return;

static void unary_row(twk_unary_op op, tw_dtype dtype, int64_t n, void *out, int64_t so, const void *x, int64_t sx,
                      double p0, double p1)
{
    switch (dtype) {
    case TW_FLOAT32: switch (op) { FLOAT_CASES(float, f) }
    case TW_FLOAT64: switch (op) { FLOAT_CASES(double, ) }
    case TW_INT32: switch (op) { INT_CASES(int32_t) }
    case TW_INT64: switch (op) { INT_CASES(int64_t) }
    case TW_UINT8:
    case TW_BOOL: switch (op) { INT_CASES(uint8_t) }
    default: return;
    }
}

void twk_unary(twk_unary_op op, tw_dtype dtype, int ndim, const int64_t *shape, void *out,
               const int64_t *out_strides, const void *x, const int64_t *x_strides, double p0, double p1)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 2, (const int64_t *const[]){out_strides, x_strides});
    int64_t isz = (int64_t)tw_dtype_size(dtype), so = TWK_INNER_STRIDE(&p, 0), sx = TWK_INNER_STRIDE(&p, 1);
    if (p.rows == 1 && p.inner < TWK_PARALLEL_MIN) {
        unary_row(op, dtype, p.inner, out, so, x, sx, p0, p1);
        return;
    }
    if (p.rows == 1) {
        /* One long row: split it into chunks across threads. */
        int64_t chunk = 8192, nchunks = (p.inner + chunk - 1) / chunk;
#pragma omp parallel for
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t i0 = c * chunk, len = p.inner - i0 < chunk ? p.inner - i0 : chunk;
            unary_row(op, dtype, len, (char *)out + i0 * so * isz, so, (const char *)x + i0 * sx * isz, sx, p0, p1);
        }
        return;
    }
#pragma omp parallel for if (p.rows * p.inner >= TWK_PARALLEL_MIN)
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[2];
        twk_plan_row(&p, 2, r, off);
        unary_row(op, dtype, p.inner, (char *)out + off[0] * isz, so, (const char *)x + off[1] * isz, sx, p0, p1);
    }
}
