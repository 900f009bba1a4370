/* Keras' weight initializers, by name, with fans computed from the shape as
 * Keras computes them (the last two axes are in/out, the rest a receptive
 * field). The truncated-normal variants divide the standard deviation by
 * 0.87962566103423978, the stddev of a unit normal truncated at two sigmas,
 * as Keras does, so the variance comes out as intended. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"

const char *const tw_initializer_names[] = {
    "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
    "zeros", "ones", "random_normal", "random_uniform", "truncated_normal", "orthogonal", "variance_scaling",
    NULL,
};

#define TRUNCATED_STDDEV 0.87962566103423978

static void fans(const tw_shape *shape, double *fan_in, double *fan_out)
{
    int n = shape->ndim;
    if (n == 0) {
        *fan_in = *fan_out = 1;
    } else if (n == 1) {
        *fan_in = *fan_out = (double)shape->dims[0];
    } else {
        double receptive = 1;
        for (int i = 0; i < n - 2; i++)
            receptive *= (double)shape->dims[i];
        *fan_in = (double)shape->dims[n - 2] * receptive;
        *fan_out = (double)shape->dims[n - 1] * receptive;
    }
}

/* Orthonormal columns by modified Gram-Schmidt on a normal draw; the signs
 * come out as QR's with a positive diagonal of R, which is what Keras'
 * q * sign(diag(r)) gives. Its temporaries die with a scope of its own
 * (the caller may have one open, which would own them too). */
static tw_tensor *orthogonal(tw_rng *rng, tw_dtype dtype, const tw_shape *shape)
{
    int64_t cols = shape->ndim ? shape->dims[shape->ndim - 1] : 1;
    int64_t rows = cols ? tw_shape_numel(shape) / cols : 0;
    int64_t n = rows > cols ? rows : cols, m = rows > cols ? cols : rows;
    tw_scope_begin();
    tw_tensor *draw = tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(m, n), 0, 1); /* row j = column j of A */
    if (!draw)
        return tw__scope_return(NULL);
    double *a = malloc(sizeof(double) * (size_t)(n * m));
    tw_tensor_copy_to(draw, a, sizeof(double) * (size_t)(n * m));
    for (int64_t j = 0; j < m; j++) {
        double *q = a + j * n;
        for (int64_t k = 0; k < j; k++) {
            const double *p = a + k * n;
            double dot = 0;
            for (int64_t i = 0; i < n; i++)
                dot += p[i] * q[i];
            for (int64_t i = 0; i < n; i++)
                q[i] -= dot * p[i];
        }
        double norm = 0;
        for (int64_t i = 0; i < n; i++)
            norm += q[i] * q[i];
        norm = sqrt(norm);
        for (int64_t i = 0; i < n; i++)
            q[i] = norm > 0 ? q[i] / norm : 0;
    }
    /* a holds Q^T (m x n). The result is rows x cols: Q when rows >= cols. */
    double *out = malloc(sizeof(double) * (size_t)(rows * cols));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            out[r * cols + c] = rows >= cols ? a[c * n + r] : a[r * n + c];
    tw_tensor *t = tw_tensor_from_data(out, TW_FLOAT64, shape->ndim, shape->dims);
    free(a);
    free(out);
    return tw__scope_return(tw_cast(t, dtype));
}

tw_tensor *tw_initializer_run(const char *name, tw_rng *rng, tw_dtype dtype, const tw_shape *shape)
{
    char buf[96];
    for (int i = 0; i < shape->ndim; i++)
        if (shape->dims[i] < 0)
            return (tw_error_set("initializer %s: shape %s is not fully known", name,
                                 tw_shape_format(shape, buf, sizeof buf)),
                    NULL);
    int nd = shape->ndim;
    const int64_t *d = shape->dims;
    double fan_in, fan_out;
    fans(shape, &fan_in, &fan_out);
    double fan_avg = (fan_in + fan_out) / 2;
    if (!strcmp(name, "zeros"))
        return tw_zeros(dtype, nd, d);
    if (!strcmp(name, "ones"))
        return tw_ones(dtype, nd, d);
    if (!strcmp(name, "glorot_uniform"))
        return tw_random_uniform(rng, dtype, nd, d, -sqrt(3 / fan_avg), sqrt(3 / fan_avg));
    if (!strcmp(name, "glorot_normal"))
        return tw_random_truncated_normal(rng, dtype, nd, d, 0, sqrt(1 / fan_avg) / TRUNCATED_STDDEV);
    if (!strcmp(name, "he_uniform"))
        return tw_random_uniform(rng, dtype, nd, d, -sqrt(6 / fan_in), sqrt(6 / fan_in));
    if (!strcmp(name, "he_normal"))
        return tw_random_truncated_normal(rng, dtype, nd, d, 0, sqrt(2 / fan_in) / TRUNCATED_STDDEV);
    if (!strcmp(name, "lecun_uniform"))
        return tw_random_uniform(rng, dtype, nd, d, -sqrt(3 / fan_in), sqrt(3 / fan_in));
    if (!strcmp(name, "lecun_normal") || !strcmp(name, "variance_scaling"))
        return tw_random_truncated_normal(rng, dtype, nd, d, 0, sqrt(1 / fan_in) / TRUNCATED_STDDEV);
    if (!strcmp(name, "random_normal"))
        return tw_random_normal(rng, dtype, nd, d, 0, 0.05);
    if (!strcmp(name, "random_uniform"))
        return tw_random_uniform(rng, dtype, nd, d, -0.05, 0.05);
    if (!strcmp(name, "truncated_normal"))
        return tw_random_truncated_normal(rng, dtype, nd, d, 0, 0.05);
    if (!strcmp(name, "orthogonal"))
        return orthogonal(rng, dtype, shape);
    tw_error_set("unknown initializer \"%s\"", name);
    return NULL;
}
