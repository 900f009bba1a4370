/* Strided copies, dtype conversion, fills and the N-d iteration shared by
 * the elementwise kernels. */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"

int twk_coalesce(int ndim, int64_t *shape, int nops, int64_t **strides)
{
    if (ndim == 0) {
        shape[0] = 1;
        for (int k = 0; k < nops; k++)
            strides[k][0] = 0;
        return 1;
    }
    int out = 0;
    for (int d = 1; d < ndim; d++) {
        bool mergeable = true;
        for (int k = 0; k < nops && mergeable; k++)
            mergeable = strides[k][out] == strides[k][d] * shape[d];
        if (shape[d] == 1)
            continue; /* size-1 axes never move the pointer */
        if (shape[out] == 1) {
            shape[out] = shape[d];
            for (int k = 0; k < nops; k++)
                strides[k][out] = strides[k][d];
        } else if (mergeable) {
            shape[out] *= shape[d];
            for (int k = 0; k < nops; k++)
                strides[k][out] = strides[k][d];
        } else {
            out++;
            shape[out] = shape[d];
            for (int k = 0; k < nops; k++)
                strides[k][out] = strides[k][d];
        }
    }
    return out + 1;
}

double twk_load(twk_dtype dtype, const void *p)
{
    switch (dtype) {
    case TWK_FLOAT32: return *(const float *)p;
    case TWK_FLOAT64: return *(const double *)p;
    case TWK_INT32: return *(const int32_t *)p;
    case TWK_INT64: return (double)*(const int64_t *)p;
    case TWK_UINT8: return *(const uint8_t *)p;
    case TWK_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
    default: return NAN;
    }
}

/* Float to integer: truncate toward zero, saturate out of range (a plain C
 * conversion of an out-of-range value is undefined), NaN gives 0. */
static int64_t to_int64(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
    return (int64_t)v;
}

void twk_store(twk_dtype dtype, void *p, double v)
{
    switch (dtype) {
    case TWK_FLOAT32: *(float *)p = (float)v; break;
    case TWK_FLOAT64: *(double *)p = v; break;
    case TWK_INT32: *(int32_t *)p = (int32_t)to_int64(v, -2147483648.0, 2147483647.0); break;
    case TWK_INT64: *(int64_t *)p = to_int64(v, -9223372036854775808.0, 9223372036854775807.0); break;
    /* uint8 wraps modulo 256 like the integer casts (-1 -> 255) */
    case TWK_UINT8: *(uint8_t *)p = (uint8_t)to_int64(v, -9223372036854775808.0, 9223372036854775807.0); break;
    case TWK_BOOL: *(uint8_t *)p = v != 0.0; break;
    default: break;
    }
}

void twk_fill(twk_dtype dtype, int64_t n, void *dst, double value)
{
    switch (dtype) {
    case TWK_FLOAT32: { float v = (float)value; float *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; break; }
    case TWK_FLOAT64: { double *d = dst; for (int64_t i = 0; i < n; i++) d[i] = value; break; }
    case TWK_INT32: { int32_t v = (int32_t)value; int32_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; break; }
    case TWK_INT64: { int64_t v = (int64_t)value; int64_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; break; }
    case TWK_UINT8: memset(dst, (uint8_t)(int64_t)value, (size_t)n); break;
    case TWK_BOOL: memset(dst, value != 0.0, (size_t)n); break;
    default: break;
    }
}

void twk_copy(size_t itemsize, int ndim, const int64_t *shape, void *dst, const int64_t *dst_strides,
              const void *src, const int64_t *src_strides)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 2, (const int64_t *const[]){dst_strides, src_strides});
    int64_t ds = TWK_INNER_STRIDE(&p, 0) * (int64_t)itemsize, ss = TWK_INNER_STRIDE(&p, 1) * (int64_t)itemsize;
    TWK_PARALLEL_FOR(twk_parallel(p.rows * p.inner) && p.rows > 1, ,
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[2];
        twk_plan_row(&p, 2, r, off);
        char *d = (char *)dst + off[0] * (int64_t)itemsize;
        const char *s = (const char *)src + off[1] * (int64_t)itemsize;
        if (ds == (int64_t)itemsize && ss == (int64_t)itemsize) {
            memcpy(d, s, (size_t)p.inner * itemsize);
            continue;
        }
        for (int64_t i = 0; i < p.inner; i++)
            memcpy(d + i * ds, s + i * ss, itemsize);
    });
}

void twk_cast(twk_dtype dst_dtype, twk_dtype src_dtype, int ndim, const int64_t *shape, void *dst,
              const int64_t *dst_strides, const void *src, const int64_t *src_strides)
{
    twk_plan p;
    twk_plan_init(&p, ndim, shape, 2, (const int64_t *const[]){dst_strides, src_strides});
    int64_t dsz = (int64_t)twk_dtype_size(dst_dtype), ssz = (int64_t)twk_dtype_size(src_dtype);
    int64_t ds = TWK_INNER_STRIDE(&p, 0) * dsz, ss = TWK_INNER_STRIDE(&p, 1) * ssz;
    if (dst_dtype == TWK_FLOAT32 && src_dtype == TWK_FLOAT64 && p.rows == 1 && ds == dsz && ss == ssz) {
        float *d = dst; /* the one conversion on a hot path: float64 results to float32 */
        const double *s = src;
        for (int64_t i = 0; i < p.inner; i++)
            d[i] = (float)s[i];
        return;
    }
    TWK_PARALLEL_FOR(twk_parallel(p.rows * p.inner) && p.rows > 1, ,
    for (int64_t r = 0; r < p.rows; r++) {
        int64_t off[2];
        twk_plan_row(&p, 2, r, off);
        char *d = (char *)dst + off[0] * dsz;
        const char *s = (const char *)src + off[1] * ssz;
        for (int64_t i = 0; i < p.inner; i++)
            twk_store(dst_dtype, d + i * ds, twk_load(src_dtype, s + i * ss));
    });
}
