/* See layer_common.h. */
#include <string.h>

#include <stdlib.h>

#include "layer_common.h"

int tw__same_shape_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                         int *nw)
{
    (void)self;
    (void)w;
    *output = *input;
    *nw = 0;
    return 0;
}

tw_shape tw__shape_of(const tw_tensor *x)
{
    tw_shape s = {tw_tensor_ndim(x)};
    memcpy(s.dims, tw_tensor_shape(x), sizeof(int64_t) * s.ndim);
    return s;
}

int tw__layer_axes(const tw_layer *self, const tw_param_value *axes, const tw_shape *input, bool allow_batch,
                   bool *is_axis)
{
    char buf[96];
    memset(is_axis, 0, sizeof(bool) * TW_MAX_DIMS);
    for (int i = 0; i < axes->n; i++) {
        int64_t a = axes->ints[i] < 0 ? axes->ints[i] + input->ndim : axes->ints[i];
        if (a < (allow_batch ? 0 : 1) || a >= input->ndim)
            return TW_LAYER_ERROR(self, "axis %lld is out of range for input %s", (long long)axes->ints[i],
                                  tw_shape_format(input, buf, sizeof buf));
        if (is_axis[a])
            return TW_LAYER_ERROR(self, "axis %lld is given twice", (long long)a);
        is_axis[a] = true;
    }
    return 0;
}

tw_tensor *tw__layer_weight_named(const tw_layer *self, const char *name)
{
    for (int i = 0; i < self->nweights; i++)
        if (!strcmp(self->specs[i].name, name))
            return self->weights[i];
    return NULL;
}

/* FNV-1a of the name: the same layer name gives the same draws. */
static uint64_t name_seed(const char *name)
{
    uint64_t h = 14695981039346656037ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

tw_rng *tw__layer_rng(const tw_layer *self, const tw_call_context *ctx, tw_rng **own)
{
    if (ctx->rng)
        return ctx->rng;
    if (!*own)
        *own = tw_rng_new(name_seed(self->name));
    return *own;
}

tw_tensor *tw__causal_mask_scores(tw_tensor *scores)
{
    if (!scores)
        return NULL;
    int nd = tw_tensor_ndim(scores);
    int64_t t = tw_tensor_dim(scores, nd - 2), s = tw_tensor_dim(scores, nd - 1);
    double *v = malloc(sizeof *v * (size_t)(t * s));
    if (!v) {
        tw_error_set("causal mask: out of memory for %lld x %lld steps", (long long)t, (long long)s);
        return NULL;
    }
    for (int64_t i = 0; i < t; i++)
        for (int64_t j = 0; j < s; j++)
            v[i * s + j] = j <= i ? 0 : -1e9;
    tw_tensor *mask = tw_tensor_from_data(v, TW_FLOAT64, 2, (int64_t[]){t, s});
    free(v);
    return tw_add(scores, tw_cast(mask, tw_tensor_dtype(scores)));
}
