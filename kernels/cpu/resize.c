/* Image resizing, bilinear and nearest (see resize_kernels.h). The forward
 * pass splits over output rows; the gradient scatters into overlapping
 * pixels, so it splits over (image, block of channels), which never share
 * an element. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"
#include "resize_kernels.h"

#define CHANNEL_BLOCK 64

/* Where output index o of an axis reads from: pixels lo and hi, and the
 * weight of hi (0 for nearest, where lo == hi). */
typedef struct {
    int64_t lo, hi;
    float frac;
} source;

static source source_of(twk_resize_method method, int64_t o, int64_t in, int64_t out)
{
    float scale = (float)in / (float)out;
    if (method == TWK_RESIZE_NEAREST) {
        int64_t i = (int64_t)floorf(((float)o + 0.5f) * scale);
        i = i < in - 1 ? i : in - 1;
        return (source){i, i, 0};
    }
    float c = ((float)o + 0.5f) * scale - 0.5f, f = floorf(c);
    int64_t lo = (int64_t)f, hi = (int64_t)ceilf(c);
    return (source){lo > 0 ? lo : 0, hi < in - 1 ? hi : in - 1, c - f};
}

#define DEFINE_RESIZE(T, sfx)                                                                                    \
    static void resize_##sfx(const twk_resize_shape *s, const T *x, T *y)                                       \
    {                                                                                                            \
        const int64_t C = s->channels, rows = s->batch * s->out_h;                                               \
        TWK_PARALLEL_FOR(twk_parallel(rows * s->out_w * C) && rows > 1, schedule(static),                        \
        for (int64_t q = 0; q < rows; q++) {                                                                     \
            int64_t n = q / s->out_h;                                                                            \
            source sy = source_of(s->method, q % s->out_h, s->in_h, s->out_h);                                  \
            const T *top = x + (n * s->in_h + sy.lo) * s->in_w * C;                                              \
            const T *bottom = x + (n * s->in_h + sy.hi) * s->in_w * C;                                           \
            const T fy = sy.frac;                                                                                \
            for (int64_t ow = 0; ow < s->out_w; ow++) {                                                          \
                source sx = source_of(s->method, ow, s->in_w, s->out_w);                                         \
                const T fx = sx.frac;                                                                            \
                const T *restrict tl = top + sx.lo * C, *restrict tr = top + sx.hi * C;                          \
                const T *restrict bl = bottom + sx.lo * C, *restrict br = bottom + sx.hi * C;                    \
                T *restrict out = y + (q * s->out_w + ow) * C;                                                   \
                if (s->method == TWK_RESIZE_NEAREST) {                                                           \
                    memcpy(out, tl, (size_t)C * sizeof(T));                                                      \
                    continue;                                                                                    \
                }                                                                                                \
                for (int64_t c = 0; c < C; c++) {                                                                \
                    T t = tl[c] + (tr[c] - tl[c]) * fx, b = bl[c] + (br[c] - bl[c]) * fx;                        \
                    out[c] = t + (b - t) * fy;                                                                   \
                }                                                                                                \
            }                                                                                                    \
        });                                                                                                      \
    }                                                                                                            \
                                                                                                                 \
    static void resize_grad_##sfx(const twk_resize_shape *s, const T *dy, T *dx)                                 \
    {                                                                                                            \
        const int64_t C = s->channels, blocks = (C + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK;                         \
        const int64_t jobs = s->batch * blocks;                                                                  \
        if (s->batch * s->in_h * s->in_w * C == 0)                                                               \
            return;                                                                                              \
        memset(dx, 0, (size_t)(s->batch * s->in_h * s->in_w * C) * sizeof(T));                                  \
        TWK_PARALLEL_FOR(twk_parallel(s->batch * s->out_h * s->out_w * C) && jobs > 1, schedule(static),         \
        for (int64_t job = 0; job < jobs; job++) {                                                               \
            int64_t n = job / blocks, c0 = job % blocks * CHANNEL_BLOCK;                                         \
            int64_t cl = C - c0 < CHANNEL_BLOCK ? C - c0 : CHANNEL_BLOCK;                                        \
            T *image = dx + n * s->in_h * s->in_w * C + c0;                                                      \
            for (int64_t oh = 0; oh < s->out_h; oh++) {                                                          \
                source sy = source_of(s->method, oh, s->in_h, s->out_h);                                         \
                const T fy = sy.frac;                                                                            \
                T *top = image + sy.lo * s->in_w * C, *bottom = image + sy.hi * s->in_w * C;                     \
                for (int64_t ow = 0; ow < s->out_w; ow++) {                                                      \
                    source sx = source_of(s->method, ow, s->in_w, s->out_w);                                     \
                    const T fx = sx.frac;                                                                        \
                    const T *restrict g = dy + ((n * s->out_h + oh) * s->out_w + ow) * C + c0;                   \
                    T *tl = top + sx.lo * C, *tr = top + sx.hi * C;                                              \
                    T *bl = bottom + sx.lo * C, *br = bottom + sx.hi * C;                                        \
                    if (s->method == TWK_RESIZE_NEAREST) {                                                       \
                        for (int64_t c = 0; c < cl; c++)                                                         \
                            tl[c] += g[c];                                                                       \
                        continue;                                                                                \
                    }                                                                                            \
                    /* The forward pass's t = tl + (tr - tl) fx, b likewise, t + (b - t) fy, adjoint. */         \
                    for (int64_t c = 0; c < cl; c++) {                                                           \
                        T t = g[c] * (1 - fy), b = g[c] * fy;                                                    \
                        tl[c] += t * (1 - fx);                                                                   \
                        tr[c] += t * fx;                                                                         \
                        bl[c] += b * (1 - fx);                                                                   \
                        br[c] += b * fx;                                                                         \
                    }                                                                                            \
                }                                                                                                \
            }                                                                                                    \
        });                                                                                                      \
    }

DEFINE_RESIZE(float, f32)
DEFINE_RESIZE(double, f64)

void twk_resize(twk_dtype dtype, const twk_resize_shape *s, const void *input, void *output)
{
    if (dtype == TWK_FLOAT64)
        resize_f64(s, input, output);
    else
        resize_f32(s, input, output);
}

void twk_resize_grad(twk_dtype dtype, const twk_resize_shape *s, const void *grad_output, void *grad_input)
{
    if (dtype == TWK_FLOAT64)
        resize_grad_f64(s, grad_output, grad_input);
    else
        resize_grad_f32(s, grad_output, grad_input);
}
