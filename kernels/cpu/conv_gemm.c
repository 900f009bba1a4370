/* 2-D convolution by im2col + gemm (any float dtype, any CPU; see
 * conv_kernels.h): the fallback of the direct and Winograd paths.
 *
 * im2col of a chunk of output rows into the workspace, then one twk_gemm
 * per chunk:
 *   forward          out[M, O]  = col[M, K] x filter[K, O]
 *   backprop_filter  dfil[K, O] += col[M, K]^T x dout[M, O]
 *   backprop_input   dcol[M, K] = dout[M, O] x filter[K, O]^T, then col2im
 * with M the output pixels of the chunk and K = k_h * k_w * in_c (the HWIO
 * filter is already a row-major [K, O] matrix). col2im gathers: each thread
 * owns whole input rows, so there are no races and no atomics. 1x1
 * stride-1 unpadded convolutions are a single gemm.
 *
 * At stride 1 the input gradient is instead the forward pass of
 * twk_conv_input_grad_shape (dy convolved with the flipped filter): a gemm
 * whose inner dimension is k_h * k_w * out_c rather than out_c, and whose
 * output is dx itself rather than a column matrix k_h * k_w times its size
 * that OpenBLAS would first zero and col2im would then sum, so about half
 * the memory traffic and no scattered adds. */
#include <string.h>

#include "conv_internal.h"
#include "parallel.h"

/* im2col chunk: about a core's L2 (512 KiB on Zen), so OpenBLAS packs the
 * columns while they are still cached; 4 MiB chunks made a ResNet block's
 * 3x3 convolutions 20-40% slower on one thread. */
#define COLUMN_TARGET_BYTES ((int64_t)512 << 10)

/* 1x1, stride 1, no padding: the convolution is one matrix product. */
static bool plain_1x1(const twk_conv2d_shape *s)
{
    return s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
           s->pad_left == 0 && s->out_h == s->in_h && s->out_w == s->in_w;
}

/* Output rows (n, oh) per im2col chunk: whole images when they fit. */
int64_t twk_conv_chunk_rows(const twk_conv2d_shape *s, size_t itemsize)
{
    int64_t rows = s->batch * s->out_h;
    int64_t row_bytes = imax(1, s->out_w * k_size(s) * (int64_t)itemsize);
    int64_t c = imax(1, COLUMN_TARGET_BYTES / row_bytes);
    if (c >= s->out_h)
        c = c / s->out_h * s->out_h;
    return imax(1, imin(c, rows));
}

size_t twk_conv_gemm_workspace(twk_dtype dtype, const twk_conv2d_shape *s)
{
    if (plain_1x1(s) || out_pixels(s) == 0 || k_size(s) == 0)
        return 0;
    size_t es = twk_dtype_size(dtype);
    return (size_t)(twk_conv_chunk_rows(s, es) * s->out_w * k_size(s)) * es;
}

/* Whether the input gradient runs as the forward pass of
 * twk_conv_input_grad_shape: at stride 1, when that moves less memory. The
 * column-matrix way writes, zeroes and reads M x k_h k_w in_c; this one
 * writes and reads dy's columns, M x k_h k_w out_c (and a gemm with only
 * in_c outputs a row is slow when in_c is tiny, as out_c <= 1.5 in_c keeps). */
static bool input_grad_as_forward(const twk_conv2d_shape *s)
{
    return twk_conv_input_grad_as_forward(s) && 2 * s->out_c <= 3 * s->in_c;
}

size_t twk_conv_gemm_input_grad_workspace(twk_dtype dtype, const twk_conv2d_shape *s)
{
    if (plain_1x1(s) || !input_grad_as_forward(s))
        return twk_conv_gemm_workspace(dtype, s);
    twk_conv2d_shape t = twk_conv_input_grad_shape(s);
    size_t es = twk_dtype_size(dtype);
    return (size_t)k_size(s) * (size_t)s->out_c * es + twk_conv_gemm_workspace(dtype, &t);
}

/* The filter of twk_conv_input_grad_shape: ft[kh][kw][o][c] =
 * f[k_h - 1 - kh][k_w - 1 - kw][c][o]. */
static void flip_filter(size_t es, const twk_conv2d_shape *s, const char *f, char *ft)
{
    const int64_t C = s->in_c, O = s->out_c;
    for (int64_t kh = 0; kh < s->k_h; kh++)
        for (int64_t kw = 0; kw < s->k_w; kw++) {
            const char *src = f + ((s->k_h - 1 - kh) * s->k_w + (s->k_w - 1 - kw)) * C * O * (int64_t)es;
            char *dst = ft + (kh * s->k_w + kw) * O * C * (int64_t)es;
            for (int64_t o = 0; o < O; o++)
                for (int64_t c = 0; c < C; c++)
                    memcpy(dst + (o * C + c) * (int64_t)es, src + (c * O + o) * (int64_t)es, es);
        }
}

/* Columns of output rows [r0, r1) (flattened n * out_h + oh). */
static void im2col(size_t es, const twk_conv2d_shape *s, const char *x, int64_t r0, int64_t r1, char *col)
{
    const int64_t C = s->in_c, K = k_size(s), KW = s->k_w;
    const int64_t run = KW * C * (int64_t)es, cb = C * (int64_t)es;
    TWK_PARALLEL_FOR(twk_parallel((r1 - r0) * s->out_w * K) && r1 - r0 > 1, schedule(static),
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / s->out_h, oh = r % s->out_h;
        for (int64_t ow = 0; ow < s->out_w; ow++) {
            char *dst = col + ((r - r0) * s->out_w + ow) * K * (int64_t)es;
            int64_t iw0 = ow * s->stride_w - s->pad_left;
            for (int64_t kh = 0; kh < s->k_h; kh++) {
                char *d = dst + kh * run;
                int64_t ih = oh * s->stride_h - s->pad_top + kh * s->dilation_h;
                if (ih < 0 || ih >= s->in_h) {
                    memset(d, 0, (size_t)run);
                    continue;
                }
                const char *src = x + (n * s->in_h + ih) * s->in_w * cb;
                if (s->dilation_w == 1) {
                    int64_t lo = imin(imax(0, -iw0), KW), hi = imax(lo, imin(KW, s->in_w - iw0));
                    /* Most windows lie inside the image: no call for an
                     * empty border (the calls cost more than the bytes a
                     * small run copies, 12 for a 3x3 window of one channel). */
                    if (lo > 0)
                        memset(d, 0, (size_t)(lo * cb));
                    memcpy(d + lo * cb, src + (iw0 + lo) * cb, (size_t)((hi - lo) * cb));
                    if (hi < KW)
                        memset(d + hi * cb, 0, (size_t)((KW - hi) * cb));
                } else {
                    for (int64_t kw = 0; kw < KW; kw++) {
                        int64_t iw = iw0 + kw * s->dilation_w;
                        if (iw < 0 || iw >= s->in_w)
                            memset(d + kw * cb, 0, (size_t)cb);
                        else
                            memcpy(d + kw * cb, src + iw * cb, (size_t)cb);
                    }
                }
            }
        }
    });
}

/* dx += col2im(col) for output rows [r0, r1): every input row of the images
 * the chunk touches gathers what the chunk's columns hold for it. */
#define DEFINE_COL2IM(T, sfx)                                                                                    \
    void twk_conv_col2im_##sfx(const twk_conv2d_shape *s, const T *col, int64_t r0, int64_t r1, T *dx)         \
    {                                                                                                          \
        const int64_t C = s->in_c, K = k_size(s);                                                              \
        int64_t n0 = r0 / s->out_h, n1 = (r1 - 1) / s->out_h + 1;                                              \
        int64_t nrows = (n1 - n0) * s->in_h;                                                                   \
        TWK_PARALLEL_FOR(twk_parallel(nrows * s->in_w * C) && nrows > 1, schedule(static),                     \
        for (int64_t q = 0; q < nrows; q++) {                                                                  \
            int64_t n = n0 + q / s->in_h, ih = q % s->in_h;                                                    \
            T *drow = dx + (n * s->in_h + ih) * s->in_w * C;                                                   \
            for (int64_t kh = 0; kh < s->k_h; kh++) {                                                          \
                int64_t t = ih + s->pad_top - kh * s->dilation_h;                                              \
                if (t < 0 || t % s->stride_h)                                                                  \
                    continue;                                                                                  \
                int64_t r = n * s->out_h + t / s->stride_h;                                                    \
                if (t / s->stride_h >= s->out_h || r < r0 || r >= r1)                                          \
                    continue;                                                                                  \
                const T *crow = col + (r - r0) * s->out_w * K + kh * s->k_w * C;                               \
                for (int64_t iw = 0; iw < s->in_w; iw++) {                                                     \
                    T *d = drow + iw * C;                                                                      \
                    for (int64_t kw = 0; kw < s->k_w; kw++) {                                                  \
                        int64_t u = iw + s->pad_left - kw * s->dilation_w;                                     \
                        if (u < 0 || u % s->stride_w || u / s->stride_w >= s->out_w)                           \
                            continue;                                                                          \
                        const T *c = crow + (u / s->stride_w) * K + kw * C;                                    \
                        for (int64_t ch = 0; ch < C; ch++)                                                     \
                            d[ch] += c[ch];                                                                    \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
        });                                                                                                    \
    }
DEFINE_COL2IM(float, f32)
DEFINE_COL2IM(double, f64)

void twk_conv_gemm_forward(twk_dtype dtype, const twk_conv2d_shape *s, const char *x, const void *f, char *y,
                           char *ws)
{
    size_t es = twk_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    if (M == 0 || O == 0)
        return;
    if (K == 0) {
        twk_fill(dtype, M * O, y, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, false, false, M, O, K, x, K, f, O, 0.0f, y, O);
        return;
    }
    int64_t rows = s->batch * s->out_h, step = twk_conv_chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        im2col(es, s, x, r0, r1, ws);
        twk_gemm(dtype, false, false, (r1 - r0) * s->out_w, O, K, ws, K, f, O, 0.0f,
                 y + r0 * s->out_w * O * (int64_t)es, O);
    }
}

void twk_conv_gemm_backprop_input(twk_dtype dtype, const twk_conv2d_shape *s, const void *f, const char *dy,
                                  char *dx, char *ws)
{
    size_t es = twk_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    int64_t nx = s->batch * s->in_h * s->in_w * s->in_c;
    if (nx == 0)
        return;
    if (M == 0 || O == 0) {
        twk_fill(dtype, nx, dx, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, false, true, M, s->in_c, O, dy, O, f, O, 0.0f, dx, s->in_c);
        return;
    }
    if (input_grad_as_forward(s)) {
        twk_conv2d_shape t = twk_conv_input_grad_shape(s);
        char *ft = ws;
        flip_filter(es, s, f, ft);
        twk_conv_gemm_forward(dtype, &t, dy, ft, dx, ws + K * O * (int64_t)es);
        return;
    }
    twk_fill(dtype, nx, dx, 0);
    int64_t rows = s->batch * s->out_h, step = twk_conv_chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        twk_gemm(dtype, false, true, (r1 - r0) * s->out_w, K, O, dy + r0 * s->out_w * O * (int64_t)es, O, f, O, 0.0f,
                 ws, K);
        if (dtype == TWK_FLOAT32)
            twk_conv_col2im_f32(s, (const float *)ws, r0, r1, (float *)dx);
        else
            twk_conv_col2im_f64(s, (const double *)ws, r0, r1, (double *)dx);
    }
}

void twk_conv_gemm_backprop_filter(twk_dtype dtype, const twk_conv2d_shape *s, const char *x, const char *dy,
                                   char *df, char *ws)
{
    size_t es = twk_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    if (K == 0 || O == 0)
        return;
    if (M == 0) {
        twk_fill(dtype, K * O, df, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, true, false, K, O, M, x, K, dy, O, 0.0f, df, O);
        return;
    }
    int64_t rows = s->batch * s->out_h, step = twk_conv_chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        im2col(es, s, x, r0, r1, ws);
        twk_gemm(dtype, true, false, K, O, (r1 - r0) * s->out_w, ws, K, dy + r0 * s->out_w * O * (int64_t)es, O,
                 r0 == 0 ? 0.0f : 1.0f, df, O);
    }
}
