/* scale: component `component` cast to float32 and multiplied by a factor
 * (uint8 pixels times 1/255 land in [0, 1]); the other components pass
 * through. The same values as tw_mul_scalar(tw_cast(x, TW_FLOAT32), factor);
 * contiguous uint8 tensors, the common case, take one vectorised loop. */
#include <stdlib.h>

#include "dataset_internal.h"

typedef struct {
    int component;
    double factor;
} scale_state;

typedef struct {
    tw_iterator base;
    tw_iterator *input;
} scale_iterator;

/* (float)v * factor in float32, as tw_cast then tw_mul_scalar compute it;
 * the compiler vectorises the loop (widen, convert, multiply), and the
 * clones use the widest vectors the CPU has. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void scale_pixels(const uint8_t *restrict src,
                                                                                         float *restrict dst, int64_t n,
                                                                                         float factor)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (float)src[i] * factor;
}

static tw_tensor *scale_uint8(const scale_state *s, tw_tensor *x)
{
    tw_scope_begin();
    tw_tensor *y = tw_tensor_ref(tw_tensor_empty_on(TW_CPU, TW_FLOAT32, tw_tensor_ndim(x), tw_tensor_shape(x)));
    tw_scope_end();
    if (!y)
        return NULL;
    scale_pixels(tw_tensor_data(x), tw_tensor_data(y), tw_tensor_numel(x), (float)s->factor);
    return y;
}

static int scale_next(tw_iterator *it, tw_element *out)
{
    scale_iterator *si = (scale_iterator *)it;
    const scale_state *s = it->ds->state;
    int rc = tw_iterator_next(si->input, out);
    if (rc <= 0)
        return rc;
    if (s->component >= out->n) {
        int n = out->n;
        tw_element_clear(out);
        return tw_error_set("scale: component %d does not exist; the elements have %d component%s", s->component, n,
                            n == 1 ? "" : "s");
    }
    tw_tensor *x = out->t[s->component], *y;
    if (tw_tensor_dtype(x) == TW_UINT8 && tw_tensor_device(x).kind == TW_DEVICE_CPU && tw_tensor_is_contiguous(x)) {
        y = scale_uint8(s, x);
    } else {
        tw_scope_begin();
        y = tw_tensor_ref(tw_mul_scalar(tw_cast(x, TW_FLOAT32), s->factor));
        tw_scope_end();
    }
    if (!y) {
        tw_element_clear(out);
        return -1;
    }
    tw_tensor_unref(x);
    out->t[s->component] = y;
    return 1;
}

static void scale_free(tw_iterator *it)
{
    scale_iterator *si = (scale_iterator *)it;
    tw_iterator_free(si->input);
    free(si);
}

static tw_iterator *scale_iter(tw_dataset *ds)
{
    scale_iterator *si = calloc(1, sizeof *si);
    if (!si) {
        tw_error_set("scale: out of memory");
        return NULL;
    }
    si->input = tw_dataset_iter(ds->input);
    if (!si->input) {
        free(si);
        return NULL;
    }
    tw__iterator_init(&si->base, ds, scale_next, scale_free);
    return &si->base;
}

static int64_t scale_cardinality(const tw_dataset *ds)
{
    return tw_dataset_cardinality(ds->input);
}

static void scale_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class scale_class = {
    .kind = "scale",
    .iter = scale_iter,
    .cardinality = scale_cardinality,
    .finalize = scale_finalize,
};

tw_dataset *tw_dataset_scale(tw_dataset *ds, int component, double scale)
{
    if (tw__dataset_check("scale", ds) < 0)
        return NULL;
    if (component < 0 || component >= TW_ELEMENT_MAX) {
        tw_error_set("scale: component %d is outside 0..%d", component, TW_ELEMENT_MAX - 1);
        tw_dataset_unref(ds);
        return NULL;
    }
    if (!(scale == scale) || scale > 3.4e38 || scale < -3.4e38) {
        tw_error_set("scale: the factor %g is not a finite float32", scale);
        tw_dataset_unref(ds);
        return NULL;
    }
    scale_state *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("scale: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    s->component = component;
    s->factor = scale;
    return tw__dataset_new(&scale_class, ds, s, "scale(%d, %g, %s)", component, scale, ds->name);
}
