/* Seeded random numbers (tw/random.h): Philox4x32-10, counter based.
 *
 * A generator is (seed, counter). The key of every Philox block is the seed;
 * its 128-bit counter is (position, attempt, stream): position = the
 * generator's counter + the element's index in the draw, attempt counts the
 * redraws of a truncated normal (0 otherwise) and stream tells the kinds of
 * draw apart. So element i of a draw is a pure function of (seed, counter + i)
 * and can be computed by any thread in any order: OpenMP splits large draws
 * and the values do not depend on the number of threads.
 *
 * Each element takes one block of four 32-bit words:
 *   uniform float32: 24 bits of word 0, uniform float64: 53 bits of words 0-1;
 *   normal: Box-Muller on the pair of 53-bit uniforms (words 0-1, 2-3);
 *   truncated normal: Box-Muller's two values (cos, then sin) are the
 *     candidates of one attempt; the first within two standard deviations is
 *     kept, else the next attempt (next block) is tried.
 * A draw advances the counter by the number of positions it used (numel; n - 1
 * for a permutation of n, one position per Fisher-Yates swap). The counter is
 * reserved atomically, so two threads drawing from one generator get disjoint
 * positions (in an unspecified order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

struct tw_rng {
    uint64_t seed;
    _Atomic uint64_t counter;
};

/* The stream word (counter word 3) of each kind of draw. */
enum { STREAM_UNIFORM = 0, STREAM_NORMAL = 1, STREAM_TRUNCATED = 2, STREAM_PERMUTATION = 3 };

/* Below this many elements a draw stays on one thread. */
#define RANDOM_PARALLEL_MIN 16384
/* Truncated normal: attempts before giving up on an element (each attempt
 * rejects both candidates with probability about 0.002). */
#define TRUNCATED_MAX_ATTEMPTS 64

/* ---- Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011; constants from Random123) ------------------------------ */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* Not static: the test suite checks it against Random123's known answers. */

void tw__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

static inline void block(uint64_t seed, uint64_t position, uint32_t attempt, uint32_t stream, uint32_t out[4])
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)position, (uint32_t)(position >> 32), attempt, stream};
    tw__philox4x32_10(ctr, key, out);
}

/* [0, 1) with 24 and 53 random bits. */
static inline float unit_float(uint32_t a)
{
    return (float)(a >> 8) * 0x1.0p-24f;
}

static inline double unit_double(uint32_t a, uint32_t b)
{
    uint64_t bits = ((uint64_t)a << 32 | b) >> 11;
    return (double)bits * 0x1.0p-53;
}

/* Box-Muller on the block's pair of uniforms: two independent N(0, 1). */
static inline void box_muller(const uint32_t w[4], double *z0, double *z1)
{
    double u1 = 1.0 - unit_double(w[0], w[1]); /* (0, 1]: log is finite */
    double u2 = unit_double(w[2], w[3]);
    double r = sqrt(-2.0 * log(u1));
    double theta = 2.0 * M_PI * u2;
    *z0 = r * cos(theta);
    *z1 = r * sin(theta);
}

/* ---- the generator ---------------------------------------------------------- */
tw_rng *tw_rng_new(uint64_t seed)
{
    tw_rng *rng = malloc(sizeof *rng);
    if (!rng) {
        tw_error_set("rng_new: out of memory");
        return NULL;
    }
    rng->seed = seed;
    atomic_init(&rng->counter, 0);
    return rng;
}

uint64_t tw_rng_counter(const tw_rng *rng)
{
    return atomic_load(&rng->counter);
}

void tw_rng_set_state(tw_rng *rng, uint64_t seed, uint64_t counter)
{
    rng->seed = seed;
    atomic_store(&rng->counter, counter);
}

void tw_rng_free(tw_rng *rng)
{
    free(rng);
}

uint64_t tw_rng_seed(const tw_rng *rng)
{
    return rng ? rng->seed : 0;
}

/* Reserve n positions; returns the first. */
static uint64_t reserve(tw_rng *rng, uint64_t n)
{
    return atomic_fetch_add_explicit(&rng->counter, n, memory_order_relaxed);
}

/* ---- argument checks ---------------------------------------------------- */
static int check_shape(const char *op, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > TW_MAX_DIMS)
        return tw_error_set("%s: rank %d is outside 0..%d", op, ndim, TW_MAX_DIMS);
    if (ndim > 0 && !shape)
        return tw_error_set("%s: shape is NULL for rank %d", op, ndim);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            char buf[160];
            return tw_error_set("%s: negative dimension in shape %s", op, tw_shape_str(ndim, shape, buf, sizeof buf));
        }
    }
    return 0;
}

static int check_common(const char *op, const tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape)
{
    if (!rng)
        return tw_error_set("%s: rng is NULL", op);
    if ((unsigned)dtype >= TW_DTYPE_COUNT)
        return tw_error_set("%s: dtype %d is not a dtype", op, (int)dtype);
    if (!tw_dtype_is_float(dtype))
        return tw_error_set("%s: dtype %s is not a float type", op, tw_dtype_name(dtype));
    return check_shape(op, ndim, shape);
}

static int check_normal(const char *op, double mean, double stddev)
{
    if (!isfinite(mean))
        return tw_error_set("%s: mean %g is not finite", op, mean);
    if (!isfinite(stddev))
        return tw_error_set("%s: stddev %g is not finite", op, stddev);
    if (stddev < 0)
        return tw_error_set("%s: stddev %g is negative", op, stddev);
    return 0;
}

/* ---- draws ------------------------------------------------------------------ */
typedef enum { KIND_UNIFORM, KIND_NORMAL, KIND_TRUNCATED } draw_kind;

static double truncated_standard_normal(uint64_t seed, uint64_t position)
{
    for (uint32_t attempt = 0; attempt < TRUNCATED_MAX_ATTEMPTS; attempt++) {
        uint32_t w[4];
        double z0, z1;
        block(seed, position, attempt, STREAM_TRUNCATED, w);
        box_muller(w, &z0, &z1);
        if (fabs(z0) < 2.0)
            return z0;
        if (fabs(z1) < 2.0)
            return z1;
    }
    return 0.0; /* unreachable in practice: probability about 1e-171 */
}

static void fill_float32(float *out, int64_t n, uint64_t seed, uint64_t start, draw_kind kind, double a, double b)
{
    /* uniform: a = low, b = high; normal: a = mean, b = stddev */
    const float low = (float)a, high = (float)b;
    const float below_high = nextafterf(high, -INFINITY);
    const double span = b - a;
#pragma omp parallel for schedule(static) if (n >= RANDOM_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        uint32_t w[4];
        uint64_t position = start + (uint64_t)i;
        float v;
        switch (kind) {
        case KIND_UNIFORM: {
            block(seed, position, 0, STREAM_UNIFORM, w);
            v = (float)(a + span * (double)unit_float(w[0]));
            /* rounding to float32 may reach the bounds: keep [low, high) */
            if (v >= high)
                v = below_high;
            if (v < low)
                v = low;
            break;
        }
        case KIND_NORMAL: {
            double z0, z1;
            block(seed, position, 0, STREAM_NORMAL, w);
            box_muller(w, &z0, &z1);
            v = (float)(a + b * z0);
            break;
        }
        default:
            v = (float)(a + b * truncated_standard_normal(seed, position));
            break;
        }
        out[i] = v;
    }
}

static void fill_float64(double *out, int64_t n, uint64_t seed, uint64_t start, draw_kind kind, double a, double b)
{
    const double below_high = nextafter(b, -INFINITY);
    const double span = b - a;
#pragma omp parallel for schedule(static) if (n >= RANDOM_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        uint32_t w[4];
        uint64_t position = start + (uint64_t)i;
        double v;
        switch (kind) {
        case KIND_UNIFORM: {
            block(seed, position, 0, STREAM_UNIFORM, w);
            v = a + span * unit_double(w[0], w[1]);
            if (v >= b)
                v = below_high;
            if (v < a)
                v = a;
            break;
        }
        case KIND_NORMAL: {
            double z0, z1;
            block(seed, position, 0, STREAM_NORMAL, w);
            box_muller(w, &z0, &z1);
            v = a + b * z0;
            break;
        }
        default:
            v = a + b * truncated_standard_normal(seed, position);
            break;
        }
        out[i] = v;
    }
}

static tw_tensor *draw(const char *op, tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, draw_kind kind,
                       double a, double b)
{
    /* Drawn on the host, then placed: the values are the position's, on
     * every device. */
    tw_tensor *t = tw__tensor_new(dtype, ndim, shape, TW_CPU);
    if (!t)
        return NULL;
    int64_t n = t->numel;
    uint64_t start = reserve(rng, (uint64_t)n);
    if (dtype == TW_FLOAT32)
        fill_float32(tw__data(t), n, rng->seed, start, kind, a, b);
    else
        fill_float64(tw__data(t), n, rng->seed, start, kind, a, b);
    t = tw__host_to(t, tw_default_device());
    if (t && tw__tracer)
        tw__trace_random(t, op);
    return tw__track(t);
}

tw_tensor *tw_random_normal(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double mean, double stddev)
{
    static const char op[] = "random_normal";
    if (check_common(op, rng, dtype, ndim, shape) < 0 || check_normal(op, mean, stddev) < 0)
        return NULL;
    return draw(op, rng, dtype, ndim, shape, KIND_NORMAL, mean, stddev);
}

tw_tensor *tw_random_uniform(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double low, double high)
{
    static const char op[] = "random_uniform";
    if (check_common(op, rng, dtype, ndim, shape) < 0)
        return NULL;
    if (!isfinite(low) || !isfinite(high)) {
        tw_error_set("%s: bounds [%g, %g) are not finite", op, low, high);
        return NULL;
    }
    if (!(low < high)) {
        tw_error_set("%s: low %g is not less than high %g", op, low, high);
        return NULL;
    }
    if (dtype == TW_FLOAT32 && !((float)low < (float)high)) {
        tw_error_set("%s: low %g and high %g are equal in float32", op, low, high);
        return NULL;
    }
    return draw(op, rng, dtype, ndim, shape, KIND_UNIFORM, low, high);
}

tw_tensor *tw_random_truncated_normal(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double mean,
                                      double stddev)
{
    static const char op[] = "random_truncated_normal";
    if (check_common(op, rng, dtype, ndim, shape) < 0 || check_normal(op, mean, stddev) < 0)
        return NULL;
    return draw(op, rng, dtype, ndim, shape, KIND_TRUNCATED, mean, stddev);
}

/* An unbiased integer in [0, bound] (bound < 2^63) from one block: Lemire's
 * multiply-shift on a 64-bit word, retrying with the block's second word when
 * it lands in the biased sliver (and further blocks in the attempt word). */
static uint64_t bounded(uint64_t seed, uint64_t position, uint64_t bound)
{
    uint64_t range = bound + 1;
    uint64_t threshold = -range % range; /* 2^64 mod range */
    for (uint32_t attempt = 0;; attempt++) {
        uint32_t w[4];
        block(seed, position, attempt, STREAM_PERMUTATION, w);
        for (int k = 0; k < 2; k++) {
            uint64_t x = (uint64_t)w[2 * k] << 32 | w[2 * k + 1];
            unsigned __int128 m = (unsigned __int128)x * range;
            if ((uint64_t)m >= threshold)
                return (uint64_t)(m >> 64);
        }
    }
}

tw_tensor *tw_random_permutation(tw_rng *rng, int64_t n)
{
    static const char op[] = "random_permutation";
    if (!rng) {
        tw_error_set("%s: rng is NULL", op);
        return NULL;
    }
    if (n < 0) {
        tw_error_set("%s: n %lld is negative", op, (long long)n);
        return NULL;
    }
    tw_tensor *t = tw__tensor_new(TW_INT64, 1, &n, TW_CPU);
    if (!t)
        return NULL;
    int64_t *p = tw__data(t);
    for (int64_t i = 0; i < n; i++)
        p[i] = i;
    /* Fisher-Yates: swap k (k = 0, 1, ...) picks j in [0, i] for i = n-1-k
     * from position start + k. */
    uint64_t swaps = n > 1 ? (uint64_t)(n - 1) : 0;
    uint64_t start = reserve(rng, swaps);
    for (uint64_t k = 0; k < swaps; k++) {
        int64_t i = n - 1 - (int64_t)k;
        int64_t j = (int64_t)bounded(rng->seed, start + k, (uint64_t)i);
        int64_t tmp = p[i];
        p[i] = p[j];
        p[j] = tmp;
    }
    t = tw__host_to(t, tw_default_device());
    if (t && tw__tracer)
        tw__trace_random(t, op);
    return tw__track(t);
}
