/* A tensor's values as a histogram record: exact count, NaN count, min,
 * max, sum and sum of squares, and TW_HISTOGRAM_BUCKETS equal-width
 * buckets over [min, max]. Two passes over the values (the buckets need
 * the extremes first); both stay in cache for a layer's weights (an MLP's
 * 235k-value kernel takes a fraction of a millisecond).
 *
 * Infinities: when min or max is infinite, equal-width buckets over them
 * mean nothing, so -Inf counts in the first bucket, +Inf in the last, and
 * the finite values spread over the finite values' range. */
#include <math.h>
#include <string.h>

#include "summary_internal.h"

/* Four independent accumulators so the loop is not one long dependency
 * chain; NaN compares false and so never becomes an extreme. */
#define STATS_LOOP(T)                                                                                                \
    do {                                                                                                             \
        const T *v = data;                                                                                           \
        double s[4] = {0}, q[4] = {0};                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            double x = (double)v[i];                                                                                 \
            if (x != x) {                                                                                            \
                h->nan_count++;                                                                                      \
                continue;                                                                                            \
            }                                                                                                        \
            s[i & 3] += x;                                                                                           \
            q[i & 3] += x * x;                                                                                       \
            lo = x < lo ? x : lo;                                                                                    \
            hi = x > hi ? x : hi;                                                                                    \
            if (isinf(x))                                                                                            \
                continue;                                                                                            \
            flo = x < flo ? x : flo;                                                                                 \
            fhi = x > fhi ? x : fhi;                                                                                 \
        }                                                                                                            \
        h->sum = (s[0] + s[1]) + (s[2] + s[3]);                                                                      \
        h->sum_squares = (q[0] + q[1]) + (q[2] + q[3]);                                                              \
    } while (0)

/* Bucket k holds [lo + k w, lo + (k + 1) w), the last one [.., hi]; four
 * sets of counters avoid stalling on repeated increments of one bucket. */
#define BUCKET_LOOP(T)                                                                                               \
    do {                                                                                                             \
        const T *v = data;                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            double x = (double)v[i];                                                                                 \
            if (x != x)                                                                                              \
                continue;                                                                                            \
            int k = x < flo ? 0 : x > fhi ? TW_HISTOGRAM_BUCKETS - 1 : (int)((x - flo) * scale);                     \
            counts[i & 3][k < TW_HISTOGRAM_BUCKETS ? k : TW_HISTOGRAM_BUCKETS - 1]++;                                \
        }                                                                                                            \
    } while (0)

#define FOR_DTYPE(dtype, LOOP)                                                                                       \
    switch (dtype) {                                                                                                 \
    case TW_FLOAT32: LOOP(float); break;                                                                             \
    case TW_FLOAT64: LOOP(double); break;                                                                            \
    case TW_INT32: LOOP(int32_t); break;                                                                             \
    case TW_INT64: LOOP(int64_t); break;                                                                             \
    case TW_UINT8: LOOP(uint8_t); break;                                                                             \
    case TW_BOOL: LOOP(bool); break;                                                                                 \
    default: break;                                                                                                  \
    }

static void summarize(const void *data, tw_dtype dtype, int64_t n, tw_histogram_stats *h)
{
    double lo = INFINITY, hi = -INFINITY, flo = INFINITY, fhi = -INFINITY;
    FOR_DTYPE(dtype, STATS_LOOP)
    h->count = n - h->nan_count;
    h->min = h->count ? lo : NAN;
    h->max = h->count ? hi : NAN;
    if (!h->count)
        return;
    double scale = fhi > flo ? TW_HISTOGRAM_BUCKETS / (fhi - flo) : 0;
    int64_t counts[4][TW_HISTOGRAM_BUCKETS] = {{0}};
    FOR_DTYPE(dtype, BUCKET_LOOP)
    for (int k = 0; k < TW_HISTOGRAM_BUCKETS; k++)
        h->buckets[k] = (double)(counts[0][k] + counts[1][k] + counts[2][k] + counts[3][k]);
}

int tw__histogram_compute(tw_tensor *values, tw_histogram_stats *h)
{
    memset(h, 0, sizeof *h);
    if (!values)
        return tw_error_set("summary histogram: the tensor is NULL");
    if (tw_tensor_device(values).kind != TW_DEVICE_CPU)
        return tw_error_set("summary histogram: the tensor is not on the CPU");
    tw_scope_begin(); /* owns the packed copy, if one is made */
    tw_tensor *c = tw_contiguous(values);
    if (c)
        summarize(tw_tensor_data(c), tw_tensor_dtype(c), tw_tensor_numel(c), h);
    tw_scope_end();
    return c ? 0 : -1;
}
