/* See image_augment.h. */
#include <stdlib.h>
#include <string.h>

#include "image_augment.h"

const char *const tw__fill_modes[] = {"reflect", "wrap", "constant", "nearest", NULL};
const char *const tw__interpolations[] = {"nearest", "bilinear", NULL};
const char *const tw__channels_last[] = {"channels_last", NULL};

int tw__factor_range(const tw_param_value *v, const char *key, double min, double max, double *lower,
                     double *upper)
{
    if (v->n == 1) {
        *lower = -v->floats[0];
        *upper = v->floats[0];
        if (v->floats[0] < 0)
            return tw_error_set("%s: a single factor must not be negative, got %g", key, v->floats[0]);
    } else if (v->n == 2) {
        *lower = v->floats[0];
        *upper = v->floats[1];
    } else {
        return tw_error_set("%s: expected a number or a (lower, upper) pair, got %d numbers", key, v->n);
    }
    if (*lower > *upper)
        return tw_error_set("%s: lower %g is above upper %g", key, *lower, *upper);
    if (*lower < min || *upper > max)
        return tw_error_set("%s: expected values from %g to %g, got (%g, %g)", key, min, max, *lower, *upper);
    return 0;
}

int tw__image_augment_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                            int *nw)
{
    char buf[96];
    if (input->ndim != 4)
        return TW_LAYER_ERROR(self, "expected images of rank 4 (batch, height, width, channels), got %s",
                              tw_shape_format(input, buf, sizeof buf));
    return tw__same_shape_infer(self, input, output, w, nw);
}

tw_tensor *tw__uniform(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double low, double high)
{
    if (low == high) /* a range of one value (factor "0.25,0.25"): tw_random_uniform wants low < high */
        return tw_full(low, dtype, ndim, shape);
    return tw_random_uniform(rng, dtype, ndim, shape, low, high);
}

int tw__draw_uniform(tw_rng *rng, int64_t n, double low, double high, double *out)
{
    tw_tensor *u = tw__uniform(rng, TW_FLOAT64, 1, &n, low, high);
    if (!u)
        return -1;
    return tw_tensor_copy_to(u, out, sizeof(double) * (size_t)n); /* from whichever device it was drawn on */
}

int tw__choice_index(const char *const *list, const char *choice)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], choice))
            return i;
    return 0;
}

tw_tensor *tw__apply_transforms(tw_tensor *x, const double *transforms, const char *interpolation,
                                const char *fill_mode, double fill_value)
{
    int64_t shape[2] = {tw_tensor_dim(x, 0), 8};
    tw_tensor *t = tw_cast(tw_tensor_from_data(transforms, TW_FLOAT64, 2, shape), tw_tensor_dtype(x));
    return tw_image_transform(x, t, tw_tensor_dim(x, 1), tw_tensor_dim(x, 2),
                              (tw_image_interpolation)tw__choice_index(tw__interpolations, interpolation),
                              (tw_fill_mode)tw__choice_index(tw__fill_modes, fill_mode), fill_value);
}

tw_tensor *tw__hw_augment_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx, double offset,
                               bool same_draw, tw_hw_transform transform)
{
    if (tw_tensor_dtype(x) != self->dtype)
        x = tw_cast(x, self->dtype);
    if (!ctx->training)
        return tw_activation_apply("linear", x);
    tw_hw_augment_state *st = self->state;
    int64_t n = tw_tensor_dim(x, 0);
    size_t count = (size_t)(n ? n : 1);
    double h = (double)tw_tensor_dim(x, 1), w = (double)tw_tensor_dim(x, 2);
    double *dh = malloc(sizeof(double) * count), *dw = malloc(sizeof(double) * count);
    double *t = malloc(sizeof(double) * 8 * count);
    tw_rng *rng = tw__layer_rng(self, ctx, &st->rng);
    tw_tensor *y = NULL;
    if (!dh || !dw || !t) {
        TW_LAYER_ERROR(self, "out of memory for %lld transforms", (long long)n);
    } else if (!tw__draw_uniform(rng, n, offset + st->h_lower, offset + st->h_upper, dh) &&
               (same_draw || !tw__draw_uniform(rng, n, offset + st->w_lower, offset + st->w_upper, dw))) {
        for (int64_t i = 0; i < n; i++)
            transform(dh[i], same_draw ? dh[i] : dw[i], h, w, t + 8 * i);
        y = tw__apply_transforms(x, t, tw__param_choice(self, TW_HW_INTERPOLATION),
                                 tw__param_choice(self, TW_HW_FILL_MODE), tw__param_float(self, TW_HW_FILL_VALUE));
    }
    free(dh);
    free(dw);
    free(t);
    return y;
}

void tw__hw_augment_finalize(tw_layer *self)
{
    tw_hw_augment_state *st = self->state;
    tw_rng_free(st->rng);
}
