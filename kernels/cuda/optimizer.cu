/* Fused optimizer updates: one pass over w, g and the slots, the rules of
 * engine/optimizers/sgd.c and adam.c in T's precision. Slot values below
 * T's smallest normal flush to zero there too (TW_OPT_FLUSH), so that decays
 * never crawl through subnormals. */
#include <float.h>
#include <math.h>

#include "twc_internal.h"

template <typename T> static __device__ T flush(T x)
{
    const T tiny = sizeof(T) == sizeof(float) ? (T)FLT_MIN : (T)DBL_MIN;
    return x > -tiny && x < tiny ? (T)0 : x;
}

template <typename T> static __device__ T scaled_clipped(T g, T scale, T clip)
{
    g *= scale;
    return g < -clip ? -clip : (g > clip ? clip : g);
}

template <typename T>
__global__ void sgd_kernel(int64_t n, T *w, const T *g, T *m, T lr, T momentum, T keep, T scale, T clip, bool nesterov)
{
    TWC_FOR(i, n)
    {
        T step = -scaled_clipped(g[i], scale, clip) * lr;
        if (m) {
            m[i] = flush(step + m[i] * momentum);
            step = nesterov ? step + m[i] * momentum : m[i];
        }
        w[i] = w[i] * keep + step;
    }
}

template <typename T>
__global__ void adam_kernel(int64_t n, T *w, const T *g, T *m, T *v, T alpha, T one_minus_beta_1, T one_minus_beta_2,
                            T epsilon, T keep, T scale, T clip)
{
    TWC_FOR(i, n)
    {
        T gi = scaled_clipped(g[i], scale, clip);
        m[i] = flush(m[i] + (gi - m[i]) * one_minus_beta_1);
        v[i] = flush(v[i] + (gi * gi - v[i]) * one_minus_beta_2);
        w[i] = w[i] * keep - m[i] * alpha / (sqrt(v[i]) + epsilon);
    }
}

template <typename T> static void sgd_launch(twc_device *dev, int64_t n, void *w, const void *g, void *m, const twc_update *u)
{
    sgd_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(n, (T *)w, (const T *)g, (T *)m, (T)u->lr,
                                                              (T)u->momentum, (T)u->keep, (T)u->scale, (T)u->clip,
                                                              u->nesterov);
}

int twc_sgd_update(twc_device *dev, twk_dtype dtype, int64_t n, void *w, const void *g, void *m, const twc_update *u)
{
    if (n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    if (dtype == TWK_FLOAT32)
        sgd_launch<float>(dev, n, w, g, m, u);
    else if (dtype == TWK_FLOAT64)
        sgd_launch<double>(dev, n, w, g, m, u);
    else
        return twc__fail("sgd update: dtype %d is not a float type", dtype);
    return twc__launched("sgd update");
}

template <typename T>
static void adam_launch(twc_device *dev, int64_t n, void *w, const void *g, void *m, void *v, const twc_update *u)
{
    /* Keras' bias correction folded into the step size, in double as adam.c */
    double t = (double)u->t;
    T alpha = (T)(u->lr * sqrt(1 - pow(u->beta_2, t)) / (1 - pow(u->beta_1, t)));
    adam_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(n, (T *)w, (const T *)g, (T *)m, (T *)v, alpha,
                                                               (T)(1 - u->beta_1), (T)(1 - u->beta_2), (T)u->epsilon,
                                                               (T)u->keep, (T)u->scale, (T)u->clip);
}

int twc_adam_update(twc_device *dev, twk_dtype dtype, int64_t n, void *w, const void *g, void *m, void *v,
                    const twc_update *u)
{
    if (n == 0)
        return 0;
    if (twc__use(dev) < 0)
        return -1;
    if (dtype == TWK_FLOAT32)
        adam_launch<float>(dev, n, w, g, m, v, u);
    else if (dtype == TWK_FLOAT64)
        adam_launch<double>(dev, n, w, g, m, v, u);
    else
        return twc__fail("adam update: dtype %d is not a float type", dtype);
    return twc__launched("adam update");
}
