/* IntegerLookup: integers to int64 indices through a vocabulary (Keras'
 * preprocessing layer, vocabulary inline in the config, output_mode "int").
 * Index 0 is the mask token's when there is one, then num_oov_indices OOV
 * indices (a value outside the vocabulary takes the first, or with several
 * its value modulo their count, as Keras does), then the vocabulary. The
 * lookup reads the values, so it is not differentiable and cannot be traced. */
#include <stdlib.h>
#include <string.h>

#include "lookup.h"

static int integer_lookup_configure(tw_layer *self)
{
    return lookup_configure(self, true, "-1");
}

/* The position of v in the vocabulary, or -1. */
static int64_t find(const lookup_state *st, int64_t v)
{
    int lo = 0, hi = st->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (st->values[st->order[mid]] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->n && st->values[st->order[lo]] == v ? st->order[lo] : -1;
}

static tw_tensor *integer_lookup_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    const lookup_state *st = self->state;
    tw_tensor *in = tw_cast(x, TW_INT64);
    int64_t n = in ? tw_tensor_numel(in) : 0;
    int64_t *values = malloc(sizeof *values * (n ? n : 1));
    if (!in || !values || tw_tensor_copy_to(tw_contiguous(in), values, sizeof *values * n)) {
        free(values);
        return NULL;
    }
    bool masked = st->mask_token != NULL;
    int64_t mask = masked ? strtoll(st->mask_token, NULL, 10) : 0;
    int64_t oov = tw__param_int(self, LOOKUP_NUM_OOV), first = lookup_first_index(self);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = values[i], at = find(st, v);
        if (masked && v == mask)
            values[i] = 0;
        else if (at >= 0)
            values[i] = first + at;
        else if (oov > 0)
            values[i] = (masked ? 1 : 0) + ((v % oov) + oov) % oov; /* floormod */
        else {
            free(values);
            TW_LAYER_ERROR(self, "%lld at position %lld is not in the vocabulary and num_oov_indices is 0",
                           (long long)v, (long long)i);
            return NULL;
        }
    }
    tw_tensor *y = tw_tensor_from_data(values, TW_INT64, tw_tensor_ndim(in), tw_tensor_shape(in));
    free(values);
    return y;
}

const tw_layer_class tw_layer_class_IntegerLookup = {
    .name = "IntegerLookup",
    .group = "Preprocessing",
    .summary = "Integers to vocabulary indices (mask and out-of-vocabulary indices first)",
    .params = lookup_params,
    .nparams = LOOKUP_NPARAMS,
    .state_size = sizeof(lookup_state),
    .configure = integer_lookup_configure,
    .infer = lookup_infer,
    .call = integer_lookup_call,
    .finalize = lookup_finalize,
    .clone_extra = lookup_clone_extra,
};
