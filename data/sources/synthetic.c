/* Synthetic sets for examples and tests. Each is drawn once, when it is
 * made, from a tw_rng seeded with `seed` (the same seed gives the same data)
 * and served as slices of in-memory tensors (tw_dataset_from_tensors).
 *
 *   linear:  x ~ N(0, 1), y = 3x + 2 + noise * N(0, 1); float32 scalars (x, y),
 *            the seeds' regression set.
 *   spirals: two interleaved spirals; element i has label i % 2 (so each
 *            label is half the set and any prefix is balanced) and lies at
 *            t = (i / 2 + 0.5) / m along its spiral (m points per label):
 *            radius t, angle 3 pi t + pi * label, plus N(0, noise^2) on each
 *            coordinate; (2,) float32 points, int64 labels.
 *   blobs:   `centers` centres uniform in [-10, 10]^dims (scikit-learn's
 *            default box); element i has label i % centers and features
 *            N(centre, stddev^2) per dimension; (dims,) float32, int64 labels. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>

#include "dataset_internal.h"

/* Name the set after what it is rather than the from_tensors it is served by. */
static tw_dataset *named(tw_dataset *ds, char *name)
{
    if (ds) {
        g_free(ds->name);
        ds->name = name;
    } else {
        g_free(name);
    }
    return ds;
}

/* Draw into a malloc'd float64 buffer. */
static double *draw(tw_rng *rng, bool normal, int64_t n, double a, double b)
{
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (!buf) {
        tw_error_set("synthetic: out of memory for %lld numbers", (long long)n);
        return NULL;
    }
    tw_scope_begin();
    tw_tensor *t = normal ? tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(n), a, b)
                          : tw_random_uniform(rng, TW_FLOAT64, TW_SHAPE(n), a, b);
    int rc = t ? tw_tensor_copy_to(t, buf, (size_t)n * sizeof *buf) : -1;
    tw_scope_end();
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static tw_dataset *serve(int64_t n, const float *features, int feature_dims, const void *labels, tw_dtype label_dtype)
{
    tw_scope_begin();
    tw_tensor *x = feature_dims > 0 ? tw_tensor_from_data(features, TW_FLOAT32, TW_SHAPE(n, feature_dims))
                                    : tw_tensor_from_data(features, TW_FLOAT32, TW_SHAPE(n));
    tw_tensor *y = tw_tensor_from_data(labels, label_dtype, TW_SHAPE(n));
    tw_dataset *ds = x && y ? tw_dataset_from_tensors(TW_TENSORS(x, y)) : NULL;
    tw_scope_end();
    return ds;
}

static int check_count(const char *op, int64_t n)
{
    if (n < 1 || n > ((int64_t)1 << 40))
        return tw_error_set("%s: n must be between 1 and 2^40, got %lld", op, (long long)n);
    return 0;
}

tw_dataset *tw_dataset_linear(int64_t n, double noise, uint64_t seed)
{
    if (check_count("linear", n) < 0)
        return NULL;
    if (!(noise >= 0 && isfinite(noise))) {
        tw_error_set("linear: noise must be a finite number >= 0, got %g", noise);
        return NULL;
    }
    tw_rng *rng = tw_rng_new(seed);
    if (!rng)
        return NULL;
    double *x = draw(rng, true, n, 0.0, 1.0);
    double *e = x ? draw(rng, true, n, 0.0, 1.0) : NULL;
    tw_rng_free(rng);
    float *xf = e ? malloc((size_t)n * sizeof *xf) : NULL;
    float *yf = xf ? malloc((size_t)n * sizeof *yf) : NULL;
    tw_dataset *ds = NULL;
    if (yf) {
        for (int64_t i = 0; i < n; i++) {
            xf[i] = (float)x[i];
            yf[i] = (float)(3.0 * x[i] + 2.0 + noise * e[i]);
        }
        ds = serve(n, xf, 0, yf, TW_FLOAT32);
    } else if (e) {
        tw_error_set("linear: out of memory for %lld elements", (long long)n);
    }
    free(x);
    free(e);
    free(xf);
    free(yf);
    return named(ds, g_strdup_printf("linear(%lld)", (long long)n));
}

tw_dataset *tw_dataset_spirals(int64_t n, double noise, uint64_t seed)
{
    if (check_count("spirals", n) < 0)
        return NULL;
    if (!(noise >= 0 && isfinite(noise))) {
        tw_error_set("spirals: noise must be a finite number >= 0, got %g", noise);
        return NULL;
    }
    tw_rng *rng = tw_rng_new(seed);
    if (!rng)
        return NULL;
    double *z = draw(rng, true, 2 * n, 0.0, 1.0);
    tw_rng_free(rng);
    float *points = z ? malloc((size_t)n * 2 * sizeof *points) : NULL;
    int64_t *labels = points ? malloc((size_t)n * sizeof *labels) : NULL;
    tw_dataset *ds = NULL;
    if (labels) {
        for (int64_t i = 0; i < n; i++) {
            int64_t label = i % 2;
            int64_t per_label = (n - label + 1) / 2; /* points with this label */
            double t = ((double)(i / 2) + 0.5) / (double)per_label;
            double angle = 3.0 * M_PI * t + M_PI * (double)label;
            points[2 * i] = (float)(t * cos(angle) + noise * z[2 * i]);
            points[2 * i + 1] = (float)(t * sin(angle) + noise * z[2 * i + 1]);
            labels[i] = label;
        }
        ds = serve(n, points, 2, labels, TW_INT64);
    } else if (z) {
        tw_error_set("spirals: out of memory for %lld elements", (long long)n);
    }
    free(z);
    free(points);
    free(labels);
    return named(ds, g_strdup_printf("spirals(%lld)", (long long)n));
}

tw_dataset *tw_dataset_blobs(int64_t n, int centers, int dims, double stddev, uint64_t seed)
{
    if (check_count("blobs", n) < 0)
        return NULL;
    if (centers < 1 || centers > 1000000) {
        tw_error_set("blobs: centers must be between 1 and 1000000, got %d", centers);
        return NULL;
    }
    if (dims < 1 || dims > 1000000 || n > ((int64_t)1 << 40) / dims) {
        tw_error_set("blobs: dims must be between 1 and 1000000 (and n * dims at most 2^40), got %d", dims);
        return NULL;
    }
    if (!(stddev >= 0 && isfinite(stddev))) {
        tw_error_set("blobs: stddev must be a finite number >= 0, got %g", stddev);
        return NULL;
    }
    tw_rng *rng = tw_rng_new(seed);
    if (!rng)
        return NULL;
    double *centre = draw(rng, false, (int64_t)centers * dims, -10.0, 10.0);
    double *z = centre ? draw(rng, true, n * dims, 0.0, 1.0) : NULL;
    tw_rng_free(rng);
    float *points = z ? malloc((size_t)(n * dims) * sizeof *points) : NULL;
    int64_t *labels = points ? malloc((size_t)n * sizeof *labels) : NULL;
    tw_dataset *ds = NULL;
    if (labels) {
        for (int64_t i = 0; i < n; i++) {
            int64_t label = i % centers;
            for (int d = 0; d < dims; d++)
                points[i * dims + d] = (float)(centre[label * dims + d] + stddev * z[i * dims + d]);
            labels[i] = label;
        }
        ds = serve(n, points, dims, labels, TW_INT64);
    } else if (z) {
        tw_error_set("blobs: out of memory for %lld elements", (long long)n);
    }
    free(centre);
    free(z);
    free(points);
    free(labels);
    return named(ds, g_strdup_printf("blobs(%lld, %d, %d)", (long long)n, centers, dims));
}
