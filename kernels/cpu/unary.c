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
    case TWK_RELU: UNARY_ROW(T, v > 0 ? v : 0); return;                                            \
    case TWK_LEAKY_RELU: UNARY_ROW(T, v > 0 ? v : (T)p0 * v); return;                              \
    case TWK_ELU: UNARY_ROW(T, v > 0 ? v : (T)p0 * expm1##F(v)); return;                           \
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
    int64_t sh[TW_MAX_DIMS + 1], so[TW_MAX_DIMS + 1], sx[TW_MAX_DIMS + 1];
    memcpy(sh, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(so, out_strides, sizeof(int64_t) * (size_t)ndim);
    memcpy(sx, x_strides, sizeof(int64_t) * (size_t)ndim);
    int64_t *st[2] = {so, sx};
    int nd = twk_coalesce(ndim, sh, 2, st);
    int64_t inner = sh[nd - 1], rows = 1;
    for (int d = 0; d < nd - 1; d++)
        rows *= sh[d];
    int64_t isz = (int64_t)tw_dtype_size(dtype);
    if (rows == 1 && inner < TWK_PARALLEL_MIN) {
        unary_row(op, dtype, inner, out, so[0], x, sx[0], p0, p1);
        return;
    }
    if (rows == 1) {
        int64_t chunk = 8192, nchunks = (inner + chunk - 1) / chunk;
#pragma omp parallel for
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t i0 = c * chunk, len = inner - i0 < chunk ? inner - i0 : chunk;
            unary_row(op, dtype, len, (char *)out + i0 * so[0] * isz, so[0], (const char *)x + i0 * sx[0] * isz, sx[0],
                      p0, p1);
        }
        return;
    }
#pragma omp parallel for if (rows * inner >= TWK_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int64_t off[2];
        twk_row_offsets(nd, sh, r, 2, st, off);
        unary_row(op, dtype, inner, (char *)out + off[0] * isz, so[nd - 1], (const char *)x + off[1] * isz,
                  sx[nd - 1], p0, p1);
    }
}
