/* Batch normalization's training-mode passes over (rows, channels), the
 * channel last: the CPU kernel's (kernels/cpu/batch_norm.c) passes and
 * sums in double, its per-channel formulas (kernels/include/
 * batch_norm_formula.h) compiled for the device.
 *
 * forward:  sum x -> mean; sum (x - mean)^2 -> inv_std, scale, shift;
 *           y = scale * x + shift
 * backward: sum dy, sum dy * (x - mean) -> dgamma, dbeta, a, b, k;
 *           dx = a * dy + b * x + k
 *
 * The sums are column sums (twc_internal.h's COL_W x COL_H blocks over
 * chunks of rows, the chunks' partials added by a warp per channel in a
 * fixed order), so the results do not depend on scheduling. cuDNN's spatial
 * batch norm over the same (rows, 1, 1, channels) took 1.9 ms a call for
 * ResNet50's shapes on an H200: it is meant for NCHW images, not for
 * activations flattened to rows. */
#include <math.h>

#include "../include/batch_norm_formula.h"
#include "twc_internal.h"

enum { SUM_X, SUM_SQUARED_DEVIATION, SUM_DY_AND_DY_DEVIATION };

/* Chunk blockIdx.y's sums of columns [blockIdx.x * COL_W, +COL_W) into
 * part[(chunk * 2 + 0 or 1) * C + c]; M is the mean's type (double computed
 * here, or the saved T of the forward pass). */
template <int WHAT, typename T, typename M>
__global__ void bn_partials(int64_t rows, int64_t C, int64_t chunk, const T *x, const T *dy, const M *mean,
                            double *part)
{
    __shared__ double share[2][COL_H][COL_W + 1];
    int64_t c = (int64_t)blockIdx.x * COL_W + threadIdx.x;
    int64_t r0 = (int64_t)blockIdx.y * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
    double s1 = 0, s2 = 0;
    if (c < C) {
        double m = WHAT == SUM_X ? 0 : (double)mean[c];
        for (int64_t r = r0 + threadIdx.y; r < r1; r += COL_H) {
            double v = x[r * C + c];
            if (WHAT == SUM_X)
                s1 += v;
            else if (WHAT == SUM_SQUARED_DEVIATION)
                s1 += (v - m) * (v - m);
            else {
                double g = dy[r * C + c];
                s1 += g;
                s2 += g * (v - m);
            }
        }
    }
    share[0][threadIdx.y][threadIdx.x] = s1;
    share[1][threadIdx.y][threadIdx.x] = s2;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        double t1 = 0, t2 = 0;
        for (int k = 0; k < COL_H; k++)
            t1 += share[0][k][threadIdx.x], t2 += share[1][k][threadIdx.x];
        part[(blockIdx.y * 2) * C + c] = t1;
        part[(blockIdx.y * 2 + 1) * C + c] = t2;
    }
}

/* The chunks' partials of channel c, by the warp of TWC_FOR_WARP (lane 0
 * holds them). */
static __device__ __forceinline__ void bn_total(int64_t nparts, int64_t C, const double *part, int64_t c,
                                                int64_t lane, double *s1, double *s2)
{
    *s1 = twc__warp_total(nparts, 2 * C, part, c, lane);
    *s2 = twc__warp_total(nparts, 2 * C, part + C, c, lane);
}

__global__ void bn_mean(int64_t nparts, int64_t C, double rows, const double *part, double *mean)
{
    TWC_FOR_WARP(c, lane, C)
    {
        double s1, s2;
        bn_total(nparts, C, part, c, lane, &s1, &s2);
        if (lane == 0)
            mean[c] = s1 / rows;
    }
}

/* w: mean, scale, shift (C each) */
template <typename T>
__global__ void bn_forward_channels(int64_t nparts, int64_t C, double rows, double epsilon, const double *part,
                                    const T *gamma, const T *beta, double *w, T *mean_out, T *inv_out)
{
    TWC_FOR_WARP(c, lane, C)
    {
        double s1, s2, inv;
        bn_total(nparts, C, part, c, lane, &s1, &s2);
        if (lane != 0)
            continue;
        twk_bn_forward_channel(w[c], s1, rows, epsilon, gamma[c], beta[c], &inv, &w[C + c], &w[2 * C + c]);
        mean_out[c] = (T)w[c];
        inv_out[c] = (T)inv;
    }
}

/* w: a, b, k (C each) */
template <typename T>
__global__ void bn_backward_channels(int64_t nparts, int64_t C, double rows, const double *part, const T *gamma,
                                     const T *mean, const T *inv_std, double *w, T *dgamma, T *dbeta)
{
    TWC_FOR_WARP(c, lane, C)
    {
        double sdy, sdyx, dg;
        bn_total(nparts, C, part, c, lane, &sdy, &sdyx);
        if (lane != 0)
            continue;
        twk_bn_backward_channel(mean[c], inv_std[c], gamma[c], sdy, sdyx, rows, &dg, &w[c], &w[C + c],
                                &w[2 * C + c]);
        dgamma[c] = (T)dg;
        dbeta[c] = (T)sdy;
    }
}

/* out = a[c] * u + b[c] * v + k[c] (v and b optional), in double, as the CPU. */
template <typename T>
__global__ void bn_affine(int64_t n, int64_t C, const T *u, const T *v, const double *a, const double *b,
                          const double *k, T *out)
{
    TWC_FOR(i, n)
    {
        int64_t c = n <= UINT32_MAX ? (int64_t)((uint32_t)i % (uint32_t)C) : i % C; /* 32-bit: far cheaper */
        out[i] = v ? (T)(a[c] * (double)u[i] + b[c] * (double)v[i] + k[c]) : (T)(a[c] * (double)u[i] + k[c]);
    }
}

/* The partials and the per-channel block (3 * C doubles) of one call, from
 * the caching allocator; freed after the launches (reused only by later
 * work on the same stream). */
struct bn_work {
    twc_device *dev;
    double *part, *w;
    int64_t nparts, chunk;
    dim3 grid;
    ~bn_work()
    {
        twc_free(dev, part);
        twc_free(dev, w);
    }
};

static int bn_begin(bn_work *b, twc_device *dev, twk_dtype dtype, int64_t rows, int64_t C, const char *what)
{
    b->dev = dev;
    b->part = b->w = NULL;
    if (dtype != TWK_FLOAT32 && dtype != TWK_FLOAT64)
        return twc__fail("%s: dtype %d is not a float type", what, dtype);
    if (twc__use(dev) < 0)
        return -1;
    b->nparts = twc__column_parts(rows, C, &b->chunk);
    int64_t cblocks = (C + COL_W - 1) / COL_W;
    if (cblocks > INT32_MAX || b->nparts > 65535)
        return twc__fail("%s: %lld channels over %lld rows is beyond one launch", what, (long long)C,
                         (long long)rows);
    b->grid = dim3((unsigned)cblocks, (unsigned)b->nparts);
    b->part = (double *)twc_alloc(dev, (size_t)(b->nparts * 2 * C) * sizeof(double));
    b->w = (double *)twc_alloc(dev, (size_t)(3 * C) * sizeof(double));
    if (!b->part || !b->w)
        return twc__fail("%s: out of device memory for the sums of %lld channels", what, (long long)C);
    return 0;
}

int twc_batch_norm_forward(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t channels, const void *x,
                           const void *gamma, const void *beta, double epsilon, void *y, void *mean, void *inv_std)
{
    static const char what[] = "batch_norm";
    bn_work b;
    if (bn_begin(&b, dev, dtype, rows, channels, what) < 0)
        return -1;
    cudaStream_t s = dev->stream;
    dim3 block(COL_W, COL_H);
    double n = (double)rows;
    return twc__by_dtype(dtype, what, [&](auto *p) {
        using T = TWC_TYPE(p);
        if constexpr (std::is_floating_point_v<T>) {
            const T *xt = (const T *)x;
            bn_partials<SUM_X><<<b.grid, block, 0, s>>>(rows, channels, b.chunk, xt, (const T *)NULL,
                                                          (const double *)NULL, b.part);
            bn_mean<<<twc__grid(channels * 32), TWC_THREADS, 0, s>>>(b.nparts, channels, n, b.part, b.w);
            bn_partials<SUM_SQUARED_DEVIATION><<<b.grid, block, 0, s>>>(rows, channels, b.chunk, xt, (const T *)NULL,
                                                                          (const double *)b.w, b.part);
            bn_forward_channels<<<twc__grid(channels * 32), TWC_THREADS, 0, s>>>(
                b.nparts, channels, n, epsilon, b.part, (const T *)gamma, (const T *)beta, b.w, (T *)mean,
                (T *)inv_std);
            bn_affine<<<twc__grid(rows * channels), TWC_THREADS, 0, s>>>(rows * channels, channels, xt,
                                                                         (const T *)NULL, b.w + channels, NULL,
                                                                         b.w + 2 * channels, (T *)y);
        }
    });
}

int twc_batch_norm_backward(twc_device *dev, twk_dtype dtype, int64_t rows, int64_t channels, const void *x,
                            const void *dy, const void *gamma, const void *mean, const void *inv_std, void *dx,
                            void *dgamma, void *dbeta)
{
    static const char what[] = "batch_norm_grad";
    bn_work b;
    if (bn_begin(&b, dev, dtype, rows, channels, what) < 0)
        return -1;
    cudaStream_t s = dev->stream;
    dim3 block(COL_W, COL_H);
    return twc__by_dtype(dtype, what, [&](auto *p) {
        using T = TWC_TYPE(p);
        if constexpr (std::is_floating_point_v<T>) {
            bn_partials<SUM_DY_AND_DY_DEVIATION><<<b.grid, block, 0, s>>>(rows, channels, b.chunk, (const T *)x,
                                                                            (const T *)dy, (const T *)mean, b.part);
            bn_backward_channels<<<twc__grid(channels * 32), TWC_THREADS, 0, s>>>(
                b.nparts, channels, (double)rows, b.part, (const T *)gamma, (const T *)mean, (const T *)inv_std,
                b.w, (T *)dgamma, (T *)dbeta);
            bn_affine<<<twc__grid(rows * channels), TWC_THREADS, 0, s>>>(rows * channels, channels, (const T *)dy,
                                                                         (const T *)x, b.w, b.w + channels,
                                                                         b.w + 2 * channels, (T *)dx);
        }
    });
}
