/* The projective image transform and its adjoint (see image_transform.h),
 * following TensorFlow's ImageProjectiveTransformV3 point for point: the
 * fill modes map a coordinate back into [0, len - 1] as its MapCoordinate
 * does, nearest sampling rounds half away from zero, bilinear sampling
 * reads the four neighbours (each outside one reads fill_value in constant
 * mode).
 *
 * Both split over images: the forward pass writes each output once, the
 * adjoint scatters into its own image's gradient only, so no atomics. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"
#include "image_transform.h"

static double map_coordinate(double in, int64_t len, int mode)
{
    double n = (double)len;
    switch (mode) {
    case TWK_FILL_REFLECT:
        if (in < 0) {
            if (len <= 1) {
                in = 0;
            } else {
                double sz2 = 2 * n;
                if (in < sz2)
                    in = sz2 * (double)(int64_t)(-in / sz2) + in;
                in = in < -n ? in + sz2 : -in - 1;
            }
        } else if (in > n - 1) {
            if (len <= 1) {
                in = 0;
            } else {
                double sz2 = 2 * n;
                in -= sz2 * (double)(int64_t)(in / sz2);
                if (in >= n)
                    in = sz2 - in - 1;
            }
        }
        break;
    case TWK_FILL_WRAP:
        if (in < 0) {
            if (len <= 1)
                in = 0;
            else
                in += n * ((double)(int64_t)(-in / (n - 1)) + 1);
        } else if (in > n - 1) {
            if (len <= 1)
                in = 0;
            else
                in -= n * (double)(int64_t)(in / (n - 1));
        }
        break;
    case TWK_FILL_CONSTANT:
        return in; /* out of range reads fill_value */
    default:
        break;
    }
    return in < 0 ? 0 : in > n - 1 ? n - 1 : in; /* nearest, and the others' final clamp */
}

/* Up to four (pixel index or -1 for fill_value, weight) pairs for output
 * (x, y) of image n. Returns their count, or -1 when the projection is 0
 * (the output is fill_value). */
static int sample_points(const twk_image_transform_shape *s, const double *t, int64_t x, int64_t y, int64_t *pix,
                         double *w)
{
    double k = t[6] * (double)x + t[7] * (double)y + 1;
    if (k == 0)
        return -1;
    double in_x = map_coordinate((t[0] * (double)x + t[1] * (double)y + t[2]) / k, s->in_w, s->fill_mode);
    double in_y = map_coordinate((t[3] * (double)x + t[4] * (double)y + t[5]) / k, s->in_h, s->fill_mode);
#define INSIDE(yy, xx) ((yy) >= 0 && (yy) < s->in_h && (xx) >= 0 && (xx) < s->in_w)
    if (s->interpolation == TWK_INTERP_NEAREST) {
        int64_t yy = (int64_t)round(in_y), xx = (int64_t)round(in_x);
        pix[0] = INSIDE(yy, xx) ? yy * s->in_w + xx : -1;
        w[0] = 1;
        return 1;
    }
    double y0 = floor(in_y), x0 = floor(in_x);
    int64_t iy = (int64_t)y0, ix = (int64_t)x0;
    double fy = in_y - y0, fx = in_x - x0;
    const int64_t ys[4] = {iy, iy, iy + 1, iy + 1}, xs[4] = {ix, ix + 1, ix, ix + 1};
    const double ws[4] = {(1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx};
    for (int i = 0; i < 4; i++) {
        pix[i] = INSIDE(ys[i], xs[i]) ? ys[i] * s->in_w + xs[i] : -1;
        w[i] = ws[i];
    }
#undef INSIDE
    return 4;
}

#define DEFINE_TRANSFORM(T, sfx)                                                                               \
    static void load_##sfx(const T *src, double *t)                                                           \
    {                                                                                                          \
        for (int i = 0; i < 8; i++)                                                                            \
            t[i] = (double)src[i];                                                                             \
    }                                                                                                          \
                                                                                                               \
    static void forward_##sfx(const twk_image_transform_shape *s, const T *img, const T *tr, T *out)          \
    {                                                                                                          \
        const int64_t C = s->channels, plane = s->out_h * s->out_w;                                            \
        TWK_PARALLEL_FOR(twk_parallel(s->batch * plane * C), schedule(static),                                \
        for (int64_t n = 0; n < s->batch; n++) {                                                               \
            double t[8];                                                                                       \
            load_##sfx(tr + n * 8, t);                                                                         \
            const T *im = img + n * s->in_h * s->in_w * C;                                                     \
            for (int64_t y = 0; y < s->out_h; y++)                                                             \
                for (int64_t x = 0; x < s->out_w; x++) {                                                       \
                    T *o = out + ((n * s->out_h + y) * s->out_w + x) * C;                                      \
                    int64_t pix[4];                                                                            \
                    double w[4];                                                                               \
                    int np = sample_points(s, t, x, y, pix, w);                                                \
                    for (int64_t c = 0; c < C; c++) {                                                          \
                        double v = np < 0 ? s->fill_value : 0;                                                 \
                        for (int i = 0; i < np; i++)                                                           \
                            v += w[i] * (pix[i] < 0 ? s->fill_value : (double)im[pix[i] * C + c]);             \
                        o[c] = (T)v;                                                                           \
                    }                                                                                          \
                }                                                                                              \
        });                                                                                                    \
    }                                                                                                          \
                                                                                                               \
    static void adjoint_##sfx(const twk_image_transform_shape *s, const T *g, const T *tr, T *gi)             \
    {                                                                                                          \
        const int64_t C = s->channels, plane = s->out_h * s->out_w;                                            \
        memset(gi, 0, sizeof(T) * (size_t)(s->batch * s->in_h * s->in_w * C));                                 \
        TWK_PARALLEL_FOR(twk_parallel(s->batch * plane * C), schedule(static),                                \
        for (int64_t n = 0; n < s->batch; n++) {                                                               \
            double t[8];                                                                                       \
            load_##sfx(tr + n * 8, t);                                                                         \
            T *im = gi + n * s->in_h * s->in_w * C;                                                            \
            for (int64_t y = 0; y < s->out_h; y++)                                                             \
                for (int64_t x = 0; x < s->out_w; x++) {                                                       \
                    const T *go = g + ((n * s->out_h + y) * s->out_w + x) * C;                                 \
                    int64_t pix[4];                                                                            \
                    double w[4];                                                                               \
                    int np = sample_points(s, t, x, y, pix, w);                                                \
                    for (int i = 0; i < np; i++)                                                               \
                        if (pix[i] >= 0 && w[i] != 0)                                                          \
                            for (int64_t c = 0; c < C; c++)                                                    \
                                im[pix[i] * C + c] += (T)(w[i] * (double)go[c]);                               \
                }                                                                                              \
        });                                                                                                    \
    }

DEFINE_TRANSFORM(float, f32)
DEFINE_TRANSFORM(double, f64)

void twk_image_transform(twk_dtype dtype, const twk_image_transform_shape *s, const void *images,
                         const void *transforms, void *out)
{
    if (dtype == TWK_FLOAT32)
        forward_f32(s, images, transforms, out);
    else
        forward_f64(s, images, transforms, out);
}

void twk_image_transform_adjoint(twk_dtype dtype, const twk_image_transform_shape *s, const void *grad_out,
                                 const void *transforms, void *grad_images)
{
    if (dtype == TWK_FLOAT32)
        adjoint_f32(s, grad_out, transforms, grad_images);
    else
        adjoint_f64(s, grad_out, transforms, grad_images);
}
