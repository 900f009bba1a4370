/* 2-D max and average pooling on NHWC tensors (see conv_kernels.h).
 *
 * Forward passes and the max-pool gradient's gradient write each output
 * once, so they split over output rows. The two gradients scatter into
 * overlapping windows; they split over (image, block of channels) instead,
 * which never share an element, so no atomics are needed. */
#include <stdbool.h>
#include <string.h>

#include "conv_kernels.h"
#include "cpu_kernels.h"
#include "parallel.h"

#define CHANNEL_BLOCK 64
#define ALWAYS_INLINE inline __attribute__((always_inline))

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* The valid part [h0, h1) x [w0, w1) of window (oh, ow). */
static inline void window(const twk_pool2d_shape *s, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                          int64_t *w1)
{
    int64_t hs = oh * s->stride_h - s->pad_top, ws = ow * s->stride_w - s->pad_left;
    *h0 = imax(hs, 0);
    *h1 = imin(hs + s->pool_h, s->in_h);
    *w0 = imax(ws, 0);
    *w1 = imin(ws + s->pool_w, s->in_w);
}

#define PIXEL(n, h, w) ((((n) * s->in_h + (h)) * s->in_w + (w)) * C)
#define WORTH_TEAM(work, jobs) (twk_parallel(work) && (jobs) > 1)

#define DEFINE_POOL(T, IT, sfx)                                                                                 \
    /* Index, among the valid positions of window (h0..h1, w0..w1) in row-major order, of the first             \
     * maximum of each channel in [c0, c0 + cl). Masks of T's width instead of branches: the loops              \
     * vectorize, and random data does not mispredict. */                                                       \
    static inline bool argmax_##sfx(const twk_pool2d_shape *s, const T *x, int64_t n, int64_t h0, int64_t h1,   \
                                    int64_t w0, int64_t w1, int64_t c0, int64_t cl, IT *arg)                    \
    {                                                                                                           \
        const int64_t C = s->channels;                                                                          \
        T best[CHANNEL_BLOCK];                                                                                  \
        if (h0 >= h1 || w0 >= w1)                                                                               \
            return false;                                                                                       \
        const T *first = x + PIXEL(n, h0, w0) + c0;                                                             \
        for (int64_t c = 0; c < cl; c++) {                                                                      \
            best[c] = first[c];                                                                                 \
            arg[c] = 0;                                                                                         \
        }                                                                                                       \
        IT k = 0;                                                                                               \
        for (int64_t ih = h0; ih < h1; ih++)                                                                    \
            for (int64_t iw = w0; iw < w1; iw++, k++) {                                                         \
                const T *restrict p = x + PIXEL(n, ih, iw) + c0;                                                \
                for (int64_t c = 0; c < cl; c++) {                                                              \
                    IT m = -(IT)(p[c] > best[c]);                                                               \
                    best[c] = p[c] > best[c] ? p[c] : best[c];                                                  \
                    arg[c] = (arg[c] & ~m) | (k & m);                                                           \
                }                                                                                               \
            }                                                                                                   \
        return true;                                                                                            \
    }                                                                                                           \
                                                                                                                \
    /* v where mask m is all ones, else 0 (bitwise, so it vectorizes). */                                       \
    static inline T masked_##sfx(IT m, T v)                                                                     \
    {                                                                                                           \
        union {                                                                                                 \
            T f;                                                                                                \
            IT i;                                                                                               \
        } u = {v};                                                                                              \
        u.i &= m;                                                                                               \
        return u.f;                                                                                             \
    }                                                                                                           \
                                                                                                                \
    /* Output row q (n * out_h + oh): each window's maximum, or (average) its                                   \
     * sum over the valid elements divided by their number. */                                                  \
    static ALWAYS_INLINE void pool_row_##sfx(const twk_pool2d_shape *s, const T *x, T *y, int64_t q,            \
                                             const bool average)                                                \
    {                                                                                                           \
        const int64_t C = s->channels, n = q / s->out_h, oh = q % s->out_h;                                     \
        for (int64_t ow = 0; ow < s->out_w; ow++) {                                                             \
            int64_t h0, h1, w0, w1;                                                                             \
            window(s, oh, ow, &h0, &h1, &w0, &w1);                                                              \
            T *o = y + (q * s->out_w + ow) * C;                                                                 \
            if (h0 >= h1 || w0 >= w1) {                                                                         \
                memset(o, 0, sizeof(T) * (size_t)C);                                                            \
                continue;                                                                                       \
            }                                                                                                   \
            if (average)                                                                                        \
                memset(o, 0, sizeof(T) * (size_t)C);                                                            \
            else                                                                                                \
                memcpy(o, x + PIXEL(n, h0, w0), sizeof(T) * (size_t)C);                                         \
            for (int64_t ih = h0; ih < h1; ih++)                                                                \
                for (int64_t iw = w0; iw < w1; iw++) {                                                          \
                    const T *p = x + PIXEL(n, ih, iw);                                                          \
                    for (int64_t c = 0; c < C; c++)                                                             \
                        o[c] = average ? o[c] + p[c] : p[c] > o[c] ? p[c] : o[c];                               \
                }                                                                                               \
            if (average) {                                                                                      \
                T scale = (T)1 / (T)((h1 - h0) * (w1 - w0));                                                    \
                for (int64_t c = 0; c < C; c++)                                                                 \
                    o[c] *= scale;                                                                              \
            }                                                                                                   \
        }                                                                                                       \
    }                                                                                                           \
                                                                                                                \
    static void pool_##sfx(const twk_pool2d_shape *s, const T *x, T *y, bool average)                           \
    {                                                                                                           \
        const int64_t rows = s->batch * s->out_h;                                                               \
        TWK_PARALLEL_FOR(WORTH_TEAM(rows * s->out_w * s->channels * s->pool_h * s->pool_w, rows), schedule(static), \
        for (int64_t q = 0; q < rows; q++) {                                                                    \
            /* A constant flag each: max and average get loops of their own. */                                 \
            if (average)                                                                                        \
                pool_row_##sfx(s, x, y, q, true);                                                               \
            else                                                                                                \
                pool_row_##sfx(s, x, y, q, false);                                                              \
        });                                                                                                     \
    }                                                                                                           \
                                                                                                                \
    /* Channels [c0, c0 + cl) of image n's gradient: each window's dy goes to its first maximum. Where          \
     * windows do not overlap (stride >= pool), every element gets at most one value: it is written, not        \
     * added, and only the elements outside every window are zeroed (no pass clearing dx first). The sum        \
     * 0 + g keeps what the added form gives for a -0 gradient. */                                              \
    static ALWAYS_INLINE void max_pool_grad_image_##sfx(const twk_pool2d_shape *s, const T *x, const T *dy,     \
                                                         T *dx, int64_t n, int64_t c0, int64_t cl,              \
                                                         bool disjoint)                                         \
    {                                                                                                           \
        const int64_t C = s->channels;                                                                          \
        IT arg[CHANNEL_BLOCK];                                                                                  \
        if (disjoint) {                                                                                         \
            for (int64_t ih = 0; ih < s->in_h; ih++) {                                                          \
                int64_t th = ih + s->pad_top, oh = th / s->stride_h;                                            \
                bool row_in = oh < s->out_h && th - oh * s->stride_h < s->pool_h;                               \
                for (int64_t iw = 0; iw < s->in_w; iw++) {                                                      \
                    int64_t tw = iw + s->pad_left, ow = tw / s->stride_w;                                       \
                    if (!row_in || ow >= s->out_w || tw - ow * s->stride_w >= s->pool_w)                        \
                        memset(dx + PIXEL(n, ih, iw) + c0, 0, sizeof(T) * (size_t)cl);                          \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
        for (int64_t oh = 0; oh < s->out_h; oh++)                                                               \
            for (int64_t ow = 0; ow < s->out_w; ow++) {                                                         \
                int64_t h0, h1, w0, w1;                                                                         \
                window(s, oh, ow, &h0, &h1, &w0, &w1);                                                          \
                if (!argmax_##sfx(s, x, n, h0, h1, w0, w1, c0, cl, arg))                                        \
                    continue;                                                                                   \
                const T *restrict g = dy + ((n * s->out_h + oh) * s->out_w + ow) * C + c0;                      \
                IT k = 0;                                                                                       \
                for (int64_t ih = h0; ih < h1; ih++)                                                            \
                    for (int64_t iw = w0; iw < w1; iw++, k++) {                                                 \
                        T *restrict d = dx + PIXEL(n, ih, iw) + c0;                                             \
                        if (disjoint)                                                                           \
                            for (int64_t c = 0; c < cl; c++)                                                    \
                                d[c] = (T)0 + masked_##sfx(-(IT)(arg[c] == k), g[c]);                           \
                        else                                                                                    \
                            for (int64_t c = 0; c < cl; c++)                                                    \
                                d[c] += masked_##sfx(-(IT)(arg[c] == k), g[c]);                                 \
                    }                                                                                           \
            }                                                                                                   \
    }                                                                                                           \
                                                                                                                \
    static void max_pool_grad_##sfx(const twk_pool2d_shape *s, const T *x, const T *dy, T *dx)                  \
    {                                                                                                           \
        const int64_t C = s->channels, ncb = (C + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK, jobs = s->batch * ncb;    \
        const bool disjoint = s->stride_h >= s->pool_h && s->stride_w >= s->pool_w;                             \
        if (!disjoint)                                                                                          \
            memset(dx, 0, sizeof(T) * (size_t)(s->batch * s->in_h * s->in_w * C));                              \
        TWK_PARALLEL_FOR(WORTH_TEAM(s->batch * s->out_h * s->out_w * C * s->pool_h * s->pool_w, jobs),          \
                         schedule(static),                                                                      \
        for (int64_t job = 0; job < jobs; job++) {                                                              \
            int64_t n = job / ncb, c0 = job % ncb * CHANNEL_BLOCK;                                              \
            /* A constant flag each: the two forms get loops of their own. */                                   \
            if (disjoint)                                                                                       \
                max_pool_grad_image_##sfx(s, x, dy, dx, n, c0, imin(CHANNEL_BLOCK, C - c0), true);              \
            else                                                                                                \
                max_pool_grad_image_##sfx(s, x, dy, dx, n, c0, imin(CHANNEL_BLOCK, C - c0), false);             \
        });                                                                                                     \
    }                                                                                                           \
                                                                                                                \
    static void max_pool_grad_grad_##sfx(const twk_pool2d_shape *s, const T *x, const T *u, T *out)             \
    {                                                                                                           \
        const int64_t C = s->channels, rows = s->batch * s->out_h;                                              \
        TWK_PARALLEL_FOR(WORTH_TEAM(rows * s->out_w * C * s->pool_h * s->pool_w, rows), schedule(static),       \
        for (int64_t q = 0; q < rows; q++) {                                                                    \
            int64_t n = q / s->out_h, oh = q % s->out_h;                                                        \
            IT arg[CHANNEL_BLOCK];                                                                              \
            for (int64_t ow = 0; ow < s->out_w; ow++) {                                                         \
                int64_t h0, h1, w0, w1;                                                                         \
                window(s, oh, ow, &h0, &h1, &w0, &w1);                                                          \
                for (int64_t c0 = 0; c0 < C; c0 += CHANNEL_BLOCK) {                                             \
                    int64_t cl = imin(CHANNEL_BLOCK, C - c0);                                                   \
                    T *restrict o = out + (q * s->out_w + ow) * C + c0;                                         \
                    memset(o, 0, sizeof(T) * (size_t)cl);                                                       \
                    if (!argmax_##sfx(s, x, n, h0, h1, w0, w1, c0, cl, arg))                                    \
                        continue;                                                                               \
                    IT k = 0;                                                                                   \
                    for (int64_t ih = h0; ih < h1; ih++)                                                        \
                        for (int64_t iw = w0; iw < w1; iw++, k++) {                                             \
                            const T *restrict p = u + PIXEL(n, ih, iw) + c0;                                    \
                            for (int64_t c = 0; c < cl; c++)                                                    \
                                o[c] += masked_##sfx(-(IT)(arg[c] == k), p[c]);                                 \
                        }                                                                                       \
                }                                                                                               \
            }                                                                                                   \
        });                                                                                                     \
    }                                                                                                           \
                                                                                                                \
    static void avg_pool_grad_##sfx(const twk_pool2d_shape *s, const T *dy, T *dx)                              \
    {                                                                                                           \
        const int64_t C = s->channels, ncb = (C + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK, jobs = s->batch * ncb;    \
        memset(dx, 0, sizeof(T) * (size_t)(s->batch * s->in_h * s->in_w * C));                                  \
        TWK_PARALLEL_FOR(WORTH_TEAM(s->batch * s->out_h * s->out_w * C * s->pool_h * s->pool_w, jobs),          \
                         schedule(static),                                                                      \
        for (int64_t job = 0; job < jobs; job++) {                                                              \
            int64_t n = job / ncb, c0 = job % ncb * CHANNEL_BLOCK, cl = imin(CHANNEL_BLOCK, C - c0);            \
            for (int64_t oh = 0; oh < s->out_h; oh++)                                                           \
                for (int64_t ow = 0; ow < s->out_w; ow++) {                                                     \
                    int64_t h0, h1, w0, w1;                                                                     \
                    window(s, oh, ow, &h0, &h1, &w0, &w1);                                                      \
                    int64_t count = imax(0, h1 - h0) * imax(0, w1 - w0);                                        \
                    if (count == 0)                                                                             \
                        continue;                                                                               \
                    T scale = (T)1 / (T)count;                                                                  \
                    const T *g = dy + ((n * s->out_h + oh) * s->out_w + ow) * C + c0;                           \
                    for (int64_t ih = h0; ih < h1; ih++)                                                        \
                        for (int64_t iw = w0; iw < w1; iw++) {                                                  \
                            T *d = dx + PIXEL(n, ih, iw) + c0;                                                  \
                            for (int64_t c = 0; c < cl; c++)                                                    \
                                d[c] += g[c] * scale;                                                           \
                        }                                                                                       \
                }                                                                                               \
        });                                                                                                     \
    }

DEFINE_POOL(float, int32_t, f32)
DEFINE_POOL(double, int64_t, f64)

void twk_max_pool2d(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, void *output)
{
    if (dtype == TWK_FLOAT32)
        pool_f32(s, input, output, false);
    else
        pool_f64(s, input, output, false);
}

void twk_max_pool2d_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, const void *grad_output,
                         void *grad_input)
{
    if (dtype == TWK_FLOAT32)
        max_pool_grad_f32(s, input, grad_output, grad_input);
    else
        max_pool_grad_f64(s, input, grad_output, grad_input);
}

void twk_max_pool2d_grad_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *input,
                              const void *grad_grad_input, void *output)
{
    if (dtype == TWK_FLOAT32)
        max_pool_grad_grad_f32(s, input, grad_grad_input, output);
    else
        max_pool_grad_grad_f64(s, input, grad_grad_input, output);
}

void twk_avg_pool2d(twk_dtype dtype, const twk_pool2d_shape *s, const void *input, void *output)
{
    if (dtype == TWK_FLOAT32)
        pool_f32(s, input, output, true);
    else
        pool_f64(s, input, output, true);
}

void twk_avg_pool2d_grad(twk_dtype dtype, const twk_pool2d_shape *s, const void *grad_output, void *grad_input)
{
    if (dtype == TWK_FLOAT32)
        avg_pool_grad_f32(s, grad_output, grad_input);
    else
        avg_pool_grad_f64(s, grad_output, grad_input);
}
